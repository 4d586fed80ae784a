"""The composed HIL plant's links: the FC pinned by fc_address, a fleet's ports, the Plant type.

A stranger with the FC's ids on another port does not drive the quad; a fleet plant moves
each bridge's links from vehicle 0's; compose_with takes only a sim_ros.plant.Plant.
"""

import sys
import time

from hil_helpers import Peer

from mavlink_bridge.core.mav import mavlink

from conftest import DEADLINE_SCALE, free_ports
from graph_start import start


def test_a_stranger_with_the_fcs_ids_on_another_port_does_not_drive_the_quad(procs,
                                                                              ros_context):
    """fc_address pins the FC, address and port: the FC's ids from elsewhere are refused.

    The quad on the ground, real time, over real UDP. The FC (at fc_address) answers every
    HIL_SENSOR with the motors off; a stranger on another port of the same host sends the
    FC's ids (1:1) and full throttle right after each answer. The quad stays on the ground,
    each of the stranger's frames is counted (rejected_peer) and the warning is rate-limited.
    Then the FC gives full throttle while the stranger says off: the quad climbs.
    """
    from diagnostic_msgs.msg import DiagnosticArray

    from conftest import port_counts, probe_node, spin_until

    node, ex = probe_node(ros_context, 'pin_probe')
    diags = []
    node.create_subscription(DiagnosticArray, '/diagnostics', diags.append, 50)
    port = free_ports(3)
    fc, stranger = Peer(port + 1, port), Peer(port + 2, port)      # both 1:1
    plant = start(procs, 'sim_quad_hil', {
        'lockstep': False, 'time_scale': 1.0, 'summary': False, 'sensor_topics': False,
        'fleet_start_timeout_s': 0.0,
        'bind': f'127.0.0.1:{port}', 'fc_address': f'127.0.0.1:{port + 1}'},
        nodes=('world_plant',), params={'world_plant': {'warn_period_s': 0.5}})['world_plant']
    off, full = [0.0] * 16, [1.0] * 4 + [0.0] * 12
    fc.send(fc.mav.heartbeat_encode(mavlink.MAV_TYPE_QUADROTOR, mavlink.MAV_AUTOPILOT_PX4,
                                    0, 0, 3))
    alts, sent, t_start = {}, 0, time.monotonic()

    def fly(fc_controls, stranger_controls, sim_s):
        """Answer every HIL_SENSOR for sim_s [s] of sim time; the altitudes [m] meanwhile."""
        nonlocal sent
        t0, got = None, []
        for m in fc.recv(30.0 * sim_s * DEADLINE_SCALE):
            if m.get_type() == 'HIL_STATE_QUATERNION':
                got.append(m.alt * 1e-3)
            if m.get_type() != 'HIL_SENSOR':
                continue
            t0 = m.time_usec if t0 is None else t0
            fc.send(fc.mav.hil_actuator_controls_encode(m.time_usec, fc_controls, 129, 1))
            stranger.send(stranger.mav.hil_actuator_controls_encode(
                m.time_usec, stranger_controls, 129, 1))
            sent += 1
            if m.time_usec - t0 >= sim_s * 1e6:
                return got
        raise AssertionError(f'the plant stopped sending sensors: {procs.output(plant)[-2000:]}')

    alts['ground'] = fly(off, full, 3.0)
    climbed = max(alts['ground']) - alts['ground'][0]
    assert climbed < 0.05, f'the stranger drove the motors: the quad rose {climbed:.2f} m'
    alts['fc'] = fly(full, off, 2.0)
    assert max(alts['fc']) - alts['ground'][0] > 1.0, 'the FC no longer drives the motors'
    wall_s = time.monotonic() - t_start
    assert spin_until(node, ex, lambda: port_counts(diags, 'MAVLink').get('rejected_peer')
                      == str(sent), 15.0), (sent, port_counts(diags, 'MAVLink'))
    out = procs.output(plant)
    why = (f'HIL_ACTUATOR_CONTROLS from 1:1 at 127.0.0.1:{port + 2}, but the flight '
           f'controller (1:1) is at 127.0.0.1:{port + 1} (fc_address)')
    warned = [x for x in out.splitlines() if why in x]
    assert warned and 'rejected from 127.0.0.1' in warned[0], out[-3000:]
    assert len(warned) <= wall_s / 0.5 + 2, (len(warned), wall_s)     # rate-limited
    assert 'Traceback' not in out
    node.destroy_node()


def test_the_world_is_a_plant_by_its_class_a_node_without_the_contract_is_not():
    """world_plant attaches bridges to a sim_ros.plant.Plant: its members' answers only."""
    from sim_world.world_node import WorldNode

    from sim_ros.plant import Plant

    class NotAPlant:
        fleet, fleet_start_timeout_s = False, 0.0

        def add_state_listener(self, fn, member=0):
            raise AssertionError('reached into a node that is not a Plant')

        def hold_start(self, missing, timeout_s):
            raise AssertionError('reached into a node that is not a Plant')

        def destroy_node(self):
            pass
    assert all(callable(getattr(WorldNode, k, None)) for k in (
        'plant_members', 'add_state_listener', 'hold_start', 'destroy_node'))
    assert not isinstance(NotAPlant(), Plant)


def test_a_fleet_plant_moves_each_bridges_links_from_those_vehicle_0_was_given(procs, ros_context,
                                                                               tmp_path):
    """world_plant vehicles:=2 with the links in a params file: each bridge's are its instance's.

    The world node declares the links of MAVLink instance 0 as the process was given them
    (here the YAML's /**/world_node section, as a user running world_plant by hand would);
    vehicle 0's bridge gets those, vehicle 1's are moved from them (sim_core.fleet.member_ports:
    UDP ports + 2, the FC's system id + 1: 1 and 2 for built-in FCs). Its parameters say
    the ports it uses. (hil_plant read the dynamics node's overrides through
    rclpy's private _parameter_overrides: a YAML for the bridge was not among them, and every
    bridge got the default ports.)
    """
    from rcl_interfaces.srv import GetParameters

    from conftest import call_service, probe_node, spin_until

    port = free_ports(4)
    yaml_file = tmp_path / 'links.yaml'
    yaml_file.write_text(
        '/**/world_node:\n  ros__parameters:\n'
        f"    bind: '127.0.0.1:{port}'\n    fc_address: '127.0.0.1:{port + 1}'\n")
    plant = procs.start([sys.executable, '-m', 'sim_world.world_plant', '--ros-args',
                         '-p', 'scenario_file:=fleet', '-p', 'vehicles:=2',
                         '-p', 'vehicle_namespace:=quad', '-p', 'summary:=false',
                         '-p', 'fleet_start_timeout_s:=0.0', '-p', 'sensor_topics:=false',
                         '--params-file', str(yaml_file)])
    node, ex = probe_node(ros_context, 'links_probe')
    names = ['bind', 'fc_address', 'fc_system_id', 'vehicle_index']
    got = {}
    for ns in ('/quad0', '/quad1'):
        cli = node.create_client(GetParameters, f'{ns}/mavlink_bridge/get_parameters')
        assert spin_until(node, ex, cli.service_is_ready, 60.0), procs.output(plant)[-3000:]
        values = call_service(ex, cli, GetParameters.Request(names=names), ns).values
        got[ns] = [v.string_value or v.integer_value for v in values]
    assert got == {'/quad0': [f'127.0.0.1:{port}', f'127.0.0.1:{port + 1}', 1, 0],
                   '/quad1': [f'127.0.0.1:{port + 2}', f'127.0.0.1:{port + 3}', 2, 1]}, got
    out = procs.output(plant)
    assert f'127.0.0.1:{port + 2}' in out and 'Traceback' not in out, out[-3000:]
    node.destroy_node()
