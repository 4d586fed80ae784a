"""sim_world: one world of any mix of kinds, launched as a user does (`aerosim launch`).

The graph's expansion per vehicle (a built-in FC per vehicle that has one, on its bridge's
ports), the world plant's links per MAVLink instance, harbour_ops flown to the end with every
vehicle judged in one summary, and a collision course between two kinds reported on
/sim/collisions and in the summary, which ends the run with a non-zero exit code.
"""

import math
import sys
import textwrap
import time

import pytest

from sim_core.members import world_members
from sim_core.scenario import load_scenario
from sim_launch.graphs import get_graph, resolve

from conftest import DEADLINE_SCALE, finished, free_ports, probe_node, spin_until

PY = sys.executable


# --- the graph, resolved -------------------------------------------------------------------------
def test_the_world_graph_starts_one_plant_and_an_fc_per_builtin_vehicle_on_its_ports():
    nodes = resolve(get_graph('sim_world'), {'bind': '127.0.0.1:15000',
                                            'fc_address': '127.0.0.1:15001',
                                            'summary': 'false'})
    assert [(n.name, n.namespace) for n in nodes] == [
        ('world_plant', ''), ('builtin_fc', '/quad0'), ('builtin_fc', '/quad1')]
    plant, fc0, fc1 = nodes
    assert not plant.rename and plant.parameters['vehicles'] == 0
    # FC of MAVLink instance k: the ports + 2 k of its bridge's link, system id k + 1
    assert (fc0.parameters['bind'], fc0.parameters['sim_address']) == ('127.0.0.1:15001',
                                                                       '127.0.0.1:15000')
    assert (fc1.parameters['bind'], fc1.parameters['sim_address']) == ('127.0.0.1:15003',
                                                                       '127.0.0.1:15002')
    assert fc0.parameters['system_id'] == 1 and fc1.parameters['system_id'] == 2
    assert fc0.parameters['vehicle'] == fc1.parameters['vehicle'] == 'multirotor'
    assert not fc0.essential and plant.essential       # a vehicle's FC dying: the world goes on


def test_a_builtin_plane_gets_a_plane_fc_and_in_process_controllers_none(tmp_path):
    sc = tmp_path / 'mixed.yaml'
    sc.write_text(MIXED)
    nodes = resolve(get_graph('sim_world'), {'scenario': str(sc), 'summary': 'false'})
    fcs = {n.namespace: n.parameters for n in nodes if n.name == 'builtin_fc'}
    # boat0 (waypoints) and plane0 (autopilot) fly in-process; quad0 px4: PX4 is started by you
    assert set(fcs) == {'/plane1', '/quad1'}
    members = {m.name: m for m in world_members(load_scenario(sc))}
    assert [members[n].link for n in ('quad0', 'plane1', 'quad1')] == [0, 1, 2]
    assert fcs['/plane1']['vehicle'] == 'plane' and fcs['/plane1']['system_id'] == 2
    assert fcs['/plane1']['bind'] == '127.0.0.1:14563'
    assert fcs['/quad1']['vehicle'] == 'multirotor' and fcs['/quad1']['system_id'] == 3


def test_each_mavlink_vehicle_gets_the_links_of_its_instance_and_its_controller(tmp_path):
    from sim_world.core.links import LinkBase, member_links
    sc = tmp_path / 'mixed.yaml'
    sc.write_text(MIXED)
    m = {m.name: m for m in world_members(load_scenario(sc))}
    base = LinkBase('127.0.0.1:15000', '127.0.0.1:15001', '127.0.0.1:4560', 'udp', True)
    px4 = member_links(m['quad0'], base)
    assert px4['transport'] == 'tcp' and px4['tcp_bind'] == '127.0.0.1:4560'
    assert (px4['mission_link'], px4['mission_bind']) == ('127.0.0.1:14280', '127.0.0.1:14030')
    assert px4['fc_system_id'] == 1 and px4['autostart'] is True
    plane = member_links(m['plane1'], base)
    assert (plane['bind'], plane['fc_address']) == ('127.0.0.1:15002', '127.0.0.1:15003')
    assert plane['transport'] == 'udp' and plane['mission_link'] == ''
    assert plane['fc_system_id'] == 2 and plane['autostart'] is False   # built-in: starts itself
    quad = member_links(m['quad1'], base)
    assert quad['fc_address'] == '127.0.0.1:15005' and quad['fc_system_id'] == 3


MIXED = textwrap.dedent("""\
    name: mixed
    origin: {lat_deg: 41.185242, lon_deg: -8.706139, alt_m: 0.0}
    vehicle: {kind: multirotor, params: iris}
    vehicles:
      - {kind: multirotor, controller: px4, initial_position_enu: [0.0, 0.0, 0.0]}
      - {kind: boat, params: wamv, initial_position_enu: [0.0, 50.0, 0.0]}
      - {kind: plane, controller: autopilot, params: c172r,
         initial_position_enu: [0.0, -900.0, 300.0]}
      - {kind: plane, controller: builtin, params: c172r,
         initial_position_enu: [0.0, -1200.0, 300.0]}
      - {kind: multirotor, controller: builtin, initial_position_enu: [10.0, 0.0, 0.0]}
    mission: []
    """)


# --- launched ------------------------------------------------------------------------------------
def launch_world(procs, tmp_path, *args):
    port = free_ports(8)
    return procs.start([PY, '-m', 'sim_launch.cli', 'launch', 'sim_world', 'time_scale:=0',
                        'sensor_topics:=false', f'bind:=127.0.0.1:{port}',
                        f'fc_address:=127.0.0.1:{port + 1}', f'output_dir:={tmp_path}', *args])


@pytest.mark.graph
def test_harbour_ops_flies_every_vehicle_on_one_clock(procs, ros_context, tmp_path):
    """The README's command: every vehicle on one clock, each judged complete in one summary.

    While it flies: every vehicle's odom on one clock, the quads' built-in FCs served in
    lockstep, each bridge its own MAVLink system, every vehicle drawn by its kind (viz_node,
    started for Foxglove). Then the report: 4/4 complete, exit 0.
    """
    import json

    from nav_msgs.msg import Odometry
    from rosgraph_msgs.msg import Clock
    from visualization_msgs.msg import MarkerArray

    from aerosim_msgs.msg import MavlinkLinkStatus
    from sim_ros import qos
    run = launch_world(procs, tmp_path, 'report:=true', 'foxglove:=true',
                       f'foxglove_port:={free_ports(1)}')
    names = [m.name for m in world_members(load_scenario('harbour_ops'))]
    assert names == ['quad0', 'quad1', 'plane0', 'boat0']
    node, ex = probe_node(ros_context, 'world_probe')
    odom = {n: [] for n in names}
    status = {n: [] for n in ('quad0', 'quad1')}
    clock = []
    for n in names:
        node.create_subscription(Odometry, f'/{n}/odom', odom[n].append, qos.SENSOR_SUB)
    for n in status:
        node.create_subscription(MavlinkLinkStatus, f'/{n}/mavlink/status', status[n].append,
                                 qos.LATCHED)
    node.create_subscription(Clock, '/clock', clock.append, qos.CLOCK)
    markers = []
    node.create_subscription(MarkerArray, '/markers', markers.append, 10)

    def t(msg):
        return msg.header.stamp.sec + msg.header.stamp.nanosec * 1e-9

    def flown():        # /clock is its own topic: under load it may come after the odom
        assert run.poll() is None, ''.join(run.lines)[-3000:]
        return all(odom[n] and t(odom[n][-1]) > 20.0 for n in names) and \
            bool(clock) and clock[-1].clock.sec >= 20
    try:
        assert spin_until(node, ex, flown, 120.0), {n: len(v) for n, v in odom.items()}
        # one clock: every vehicle's latest state within a few odometry periods of the others
        last = [t(odom[n][-1]) for n in names]
        assert max(last) - min(last) < 1.0, last
        assert clock and clock[-1].clock.sec >= 20
        # the quads climbed (their FCs fly them), the plane flew on at cruise, the boat moved
        q0 = odom['quad0'][-1].pose.pose.position
        assert q0.z > 2.0 or abs(q0.y) > 5.0
        p0 = odom['plane0'][-1]
        assert p0.pose.pose.position.z > 200.0 and p0.twist.twist.linear.x > 30.0
        b0, b_start = odom['boat0'][-1].pose.pose.position, odom['boat0'][0].pose.pose.position
        assert abs(b0.y - b_start.y) + abs(b0.x - b_start.x) > 5.0
        for n in status:
            s = status[n][-1]
            assert s.actuator_messages > 1000 and s.mission_state == 'done', (n, s)
            assert [p.system_id for p in s.peers if p.system_id != 51] == [int(n[-1]) + 1]
        # each vehicle drawn in its namespace by its kind's body: rotor discs for the quads
        assert markers, 'no markers from viz_node'
        body = {}
        for arr in markers[-40:]:                   # one MarkerArray per vehicle: the latest
            for k in arr.markers:
                body[k.ns] = [x.type for x in arr.markers if x.ns == k.ns]
        assert {f'{n}/vehicle' for n in names} <= set(body), sorted(body)
        assert body['quad0/vehicle'].count(3) == 4            # Marker.CYLINDER: 4 rotors
        assert body['plane0/vehicle'] != body['quad0/vehicle'] != body['boat0/vehicle']
    finally:
        node.destroy_node()
    rc = finished(run, 600.0 * DEADLINE_SCALE)
    out = procs.output(run)
    assert rc == 0, out[-4000:]
    assert "every vehicle's controller heard" in out and 'Traceback' not in out
    s = json.loads((tmp_path / 'latest' / 'summary.json').read_text())
    assert s['result'] == 'complete' and s['vehicles_complete'] == 4, s
    assert {n: (v['kind'], v['result']) for n, v in s['vehicles'].items()} == {
        'quad0': ('multirotor', 'complete'), 'quad1': ('multirotor', 'complete'),
        'plane0': ('plane', 'complete'), 'boat0': ('boat', 'complete')}
    assert all(v['items_reached'] == v['items'] > 0 for v in s['vehicles'].values())
    assert (tmp_path / 'latest' / 'plot.png').stat().st_size > 10_000


@pytest.mark.graph
def test_world_node_alone_takes_each_vehicle_s_commands_on_its_topics(procs, ros_context,
                                                                     tmp_path):
    """world_node run alone: a quad's bridge elsewhere, a boat driven over IMC (topics)."""
    from nav_msgs.msg import Odometry

    from aerosim_msgs.msg import AircraftEffectorCommand
    from sim_ros import qos
    sc = tmp_path / 'topics.yaml'
    sc.write_text(textwrap.dedent("""\
        name: topics
        origin: {lat_deg: 41.185242, lon_deg: -8.706139, alt_m: 0.0}
        vehicle: {kind: multirotor, params: iris}
        vehicles:
          - {kind: multirotor, controller: external, initial_position_enu: [0.0, 0.0, 0.0]}
          - {kind: boat, controller: imc, params: wamv, initial_position_enu: [0.0, 30.0, 0.0]}
        """))
    p = procs.node('sim_world.world_node', None, {'scenario_file': str(sc), 'lockstep': False},
                   ns='/')
    node, ex = probe_node(ros_context, 'world_topics_probe')
    odom = {'quad0': [], 'boat0': []}
    for n in odom:
        node.create_subscription(Odometry, f'/{n}/odom', odom[n].append, qos.SENSOR_SUB)
    quad = node.create_publisher(AircraftEffectorCommand, '/quad0/effector_command', qos.COMMAND)
    boat = node.create_publisher(AircraftEffectorCommand, '/boat0/effector_command', qos.COMMAND)
    try:
        assert spin_until(node, ex, lambda: all(odom.values()), 60.0), ''.join(p.lines)
        z0, y0 = odom['quad0'][-1].pose.pose.position.z, odom['boat0'][-1].pose.pose.position.y
        assert z0 < 0.1 and y0 == pytest.approx(30.0, abs=0.1)      # at rest without commands

        def driven():
            quad.publish(AircraftEffectorCommand(throttle_cmd=[0.9] * 4))
            boat.publish(AircraftEffectorCommand(throttle_cmd=[1.0], rudder_cmd_angle_rad=[0.0]))
            return odom['quad0'][-1].pose.pose.position.z > 2.0 and \
                odom['boat0'][-1].pose.pose.position.y > 32.0
        assert spin_until(node, ex, driven, 60.0), (odom['quad0'][-1].pose.pose.position,
                                                    odom['boat0'][-1].pose.pose.position)
        # a wrong command is refused and counted, not applied
        quad.publish(AircraftEffectorCommand(throttle_cmd=[0.5] * 3))
        assert spin_until(node, ex, lambda: any('4 motors' in line for line in p.lines),
                          30.0), ''.join(p.lines)[-3000:]
    finally:
        node.destroy_node()
    assert 'Traceback' not in procs.output(p)


def collision_course(tmp_path, separation_m=None):
    """Two quads flying head-on through one point at one height, and a boat nearby."""
    from sim_core.geodesy import GeoOrigin
    o = GeoOrigin(41.185242, -8.706139, 0.0)

    def ll(e, n):
        lat, lon, _ = o.enu_to_geodetic(e, n, 0.0)
        return f'lat_deg: {float(lat):.8f}, lon_deg: {float(lon):.8f}'
    sc = tmp_path / 'head_on.yaml'
    sc.write_text(textwrap.dedent(f"""\
        name: head_on
        origin: {{lat_deg: 41.185242, lon_deg: -8.706139, alt_m: 0.0}}
        vehicle: {{kind: multirotor, params: iris}}
        {'' if separation_m is None else f'separation_m: {separation_m}'}
        vehicles:
          - kind: multirotor
            initial_position_enu: [-20.0, 0.0, 0.0]
            mission:
              - {{command: takeoff, alt_m: 10.0}}
              - {{command: waypoint, {ll(20.0, 0.0)}, alt_m: 10.0}}
              - {{command: land, {ll(20.0, 0.0)}}}
          - kind: multirotor
            initial_position_enu: [20.0, 0.0, 0.0]
            mission:
              - {{command: takeoff, alt_m: 10.0}}
              - {{command: waypoint, {ll(-20.0, 0.0)}, alt_m: 10.0}}
              - {{command: land, {ll(-20.0, 0.0)}}}
          - kind: boat
            params: wamv
            initial_position_enu: [0.0, 40.0, 0.0]
            mission:
              - {{command: waypoint, {ll(0.0, 60.0)}, acceptance_radius_m: 5.0}}
        """))
    return sc


def test_a_collision_course_is_refused_unless_the_scenario_stages_it(tmp_path):
    from sim_core.errors import ConfigError
    with pytest.raises(ConfigError, match=r'vehicles\[0\] and vehicles\[1\]: their planned '
                       r'paths come within 0.00 m'):
        world_members(load_scenario(collision_course(tmp_path)))
    staged = world_members(load_scenario(collision_course(tmp_path, 0)))
    assert [m.name for m in staged] == ['quad0', 'quad1', 'boat0']


@pytest.mark.graph
def test_vehicles_that_collide_are_reported_collided_and_the_run_fails(procs, tmp_path):
    """Two quads head-on (a staged collision course): /sim/collisions, both collided, exit 1.

    The boat of the same world is judged by its own judge and completes.
    """
    import json
    sc = collision_course(tmp_path, 0)
    run = launch_world(procs, tmp_path, f'scenario:={sc}', 'report:=true')
    rc = finished(run, 300.0 * DEADLINE_SCALE)
    out = procs.output(run)
    assert rc == 1, out[-4000:]
    assert 'collision at t = ' in out and '/quad0 and /quad1' in out, out[-4000:]
    s = json.loads((tmp_path / 'latest' / 'summary.json').read_text())
    v = s['vehicles']
    assert s['result'] != 'complete' and sorted(s['collided']) == ['quad0', 'quad1'], s
    assert v['quad0']['result'] == v['quad1']['result'] == 'collided'
    assert v['quad0']['collisions'][0]['with'] == 'quad1'
    assert v['boat0']['result'] == 'complete'
    assert 'Traceback' not in out


@pytest.mark.graph
def test_dune_steers_a_boat_of_a_world_while_the_plane_flies_over(procs, ros_context, tmp_path):
    """A boat flown by imc in a world: its imc_bridge in /boat0, driven by the DUNE stand-in.

    The stand-in (test/dune_peer.py: DUNE's discovery, transports, sensor simulators and ASV
    controllers, the shipped ini's rates) steers the boat to a waypoint about 127 deg to
    starboard with actuator commands; the C172 flies its circuit in the same world meanwhile.
    """
    from nav_msgs.msg import Odometry

    from sim_ros import qos

    from dune_peer import DunePeer
    sc = tmp_path / 'dune_world.yaml'
    sc.write_text(textwrap.dedent("""\
        name: dune_world
        origin: {lat_deg: 41.185242, lon_deg: -8.706139, alt_m: 0.0}
        vehicle: {kind: boat, params: wamv}
        vehicles:
          - {kind: plane, controller: autopilot, params: c172r,
             initial_position_enu: [0.0, -1000.0, 300.0],
             mission: [{command: waypoint, lat_deg: 41.1942463, lon_deg: -8.7061390,
                        alt_m: 300.0, acceptance_radius_m: 150.0}]}
          - {kind: boat, controller: imc, params: wamv, initial_position_enu: [0.0, 0.0, 0.0]}
        mission: []
        """))
    bport = free_ports(3)
    uport, dport = bport + 1, bport + 2
    imc = tmp_path / 'imc.yaml'
    imc.write_text(f'/**/imc_bridge:\n  ros__parameters:\n    discovery_ports: "{dport}"\n')
    waypoint = (-30.0, 40.0)                 # north, east [m]: behind the boat to the south-east
    peer = DunePeer(uport, dport, [waypoint])
    try:
        run = launch_world(procs, tmp_path, f'scenario:={sc}', 'time_scale:=4',
                           f'imc_bind:=127.0.0.1:{bport}', f'imc_peers:=127.0.0.1:{uport}',
                           f'imc_params:={imc}', 'summary:=false')
        node, ex = probe_node(ros_context, 'dune_world_probe')
        odom = {'plane0': [], 'boat0': []}
        for n in odom:
            node.create_subscription(Odometry, f'/{n}/odom', odom[n].append, qos.SENSOR_SUB)
        deadline = time.monotonic() + 90.0 * DEADLINE_SCALE
        while not peer.arrived and time.monotonic() < deadline and run.poll() is None:
            peer.poll(0.2)
            ex.spin_once(timeout_sec=0.0)
        out = procs.output(run)
        assert peer.arrived, (peer.states[-1].x if peer.states else None,
                              peer.states[-1].y if peer.states else None, out[-3000:])
        assert peer.nodes[0x3F01] == {('127.0.0.1', bport)}      # discovered as DUNE does
        assert peer.rudders[0][1] < 0.0 and peer.sent['SetServoPosition'] > 5
        last = peer.states[-1]                  # DUNE's view at arrival: our SimulatedState
        assert math.hypot(last.x - waypoint[0], last.y - waypoint[1]) < 6.0, (last.x, last.y)
        assert spin_until(node, ex, lambda: odom['boat0'] and odom['plane0'], 30.0)
        # the world's truth a little later: there, or coasting on past it (DUNE ends a Goto
        # seconds before the point and stops commanding: 4 m with the real DUNE)
        b = odom['boat0'][-1].pose.pose.position
        assert math.hypot(b.y - waypoint[0], b.x - waypoint[1]) < 15.0, (b.x, b.y)
        p = odom['plane0'][-1].pose.pose.position
        assert p.z > 200.0 and p.y > -1000.0 + 100.0                 # flying north meanwhile
        node.destroy_node()
    finally:
        peer.close()
    assert 'Traceback' not in procs.output(run)
