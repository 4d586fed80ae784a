"""Many vehicles in one simulation: the fleet's scenario, links, lockstep, collisions, judge.

The graph tests fly sim_quad_hil with three built-in FCs (scenario `fleet`: three different
missions), and kill one FC in flight: the vehicle is reported, the others fly on.
"""

import json
import os
import re
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

from sim_core.clock import FleetGate
from sim_core.errors import ConfigError
from sim_core.fleet import (
    FLEET_SPACING_M,
    fleet_size,
    member_ports,
    member_scenarios,
    offset_port,
)
from sim_core.scenario import load_scenario, scenario_from_dict
from sim_core.separation import SEPARATION_M, closest_pair, planned_path
from sim_dynamics.core.collision import (
    GROUND_IMPACT_MPS,
    RESTITUTION,
    body_radius,
    contact,
    contacts,
    ground_impact,
)
from sim_launch.graphs import get_graph, resolve
from sim_report.core.fleet import FleetJudge
from sim_report.core.mission import item_points

from conftest import DEADLINE_SCALE, finished, free_ports, wait_line

BASE = {'origin': {'lat_deg': 47.397742, 'lon_deg': 8.545594, 'alt_m': 488.0},
        'vehicle': {'params': 'iris'},
        'mission': [{'command': 'takeoff', 'alt_m': 5.0},
                    {'command': 'waypoint', 'lat_deg': 47.398, 'lon_deg': 8.5456, 'alt_m': 5.0},
                    {'command': 'land', 'lat_deg': 47.397742, 'lon_deg': 8.545594}]}


def scenario(vehicles):
    return scenario_from_dict(dict(BASE, vehicles=vehicles))


# --- the scenario's vehicles: list ---------------------------------------------------------------
@pytest.mark.parametrize('vehicles, field', [
    ('quad0', 'scenario: vehicles: must be a list'),
    ([], 'scenario: vehicles: must have at least 1 item'),
    ([{'initial_position_enu': [0, 0, 0]}] * 33, 'scenario: vehicles: must have at most 32'),
    ([{'initial_position_enu': [0, 0, 0]}, 'x'], 'vehicles[1]:'),
    ([{'initial_position_enu': [0, 0, 0]}, {'initial_yaw_deg': 10}],
     'vehicles[1].initial_position_enu: required'),
    ([{'initial_position_enu': [0, 0, -1]}], 'vehicles[0].initial_position_enu[2]'),
    ([{'initial_position_enu': [0, 0]}], 'vehicles[0].initial_position_enu'),
    ([{'initial_position_enu': [0, 0, 0], 'speed': 3}], 'vehicles[0].speed: unknown key'),
    ([{'initial_position_enu': [0, 0, 0], 'kind': 'submarine'}], 'vehicles[0].kind'),
    ([{'initial_position_enu': [0, 0, 0], 'kind': 'boat'}], 'vehicles[0].params: required'),
    ([{'initial_position_enu': [0, 0, 0], 'params': 7}], 'vehicles[0].params'),
    ([{'initial_position_enu': [0, 0, 0], 'initial_yaw_deg': 'north'}],
     'vehicles[0].initial_yaw_deg'),
    ([{'initial_position_enu': [0, 0, 0]},
      {'initial_position_enu': [5, 0, 0], 'mission': [{'command': 'fly'}]}],
     'vehicles[1].mission[0].command'),
    ([{'initial_position_enu': [0, 0, 0]},
      {'initial_position_enu': [5, 0, 0], 'mission': [{'command': 'waypoint', 'alt_m': 3}]}],
     'vehicles[1].mission[0].lat_deg'),
])
def test_bad_vehicle_lists_are_refused_with_the_field_named(vehicles, field):
    with pytest.raises(ConfigError, match=re.escape(field)):
        scenario(vehicles)


def test_starts_too_close_and_impossible_counts_are_refused():
    sc = scenario([{'initial_position_enu': [0, 0, 0]}, {'initial_position_enu': [1.0, 1.0, 0]}])
    with pytest.raises(ConfigError, match=r'vehicles\[1\].initial_position_enu: 1.41 m from '
                       r'vehicles\[0\]'):
        member_scenarios(sc, 2)
    assert fleet_size(sc, 0) == 2 and fleet_size(sc, 1) == 1
    with pytest.raises(ConfigError, match='vehicles: 3 requested, but scenario .* lists 2'):
        fleet_size(sc, 3)
    with pytest.raises(ConfigError, match='vehicles: 1..32'):
        fleet_size(load_scenario('default'), 33)
    assert fleet_size(load_scenario('default'), 0) == 1


def test_copies_start_apart_and_fly_the_mission_moved_with_them():
    """Copies move start and mission together, and keep apart (sim_core.separation).

    The layout is the first of COPY_LAYOUTS whose planned paths keep SEPARATION_M apart: for
    the default mission not 5 m east (its legs run east and west: two real PX4s collided).
    """
    sc = load_scenario('default')
    members = member_scenarios(sc, 3)
    base = item_points(sc)
    start = np.asarray(sc.initial_position_enu)
    offsets = [np.asarray(m.initial_position_enu) - start for m in members]
    assert np.allclose(offsets[0], 0.0)
    assert not np.allclose(offsets[1], [FLEET_SPACING_M, 0.0, 0.0])
    for i, m in enumerate(members):
        assert np.allclose(offsets[i], i * offsets[1])          # evenly spaced
        for p, q in zip(base[1:], item_points(m)[1:]):   # every item moved with the start
            assert np.allclose((q - p)[:2], offsets[i][:2], atol=1e-6)
    assert members[0].mission == sc.mission          # vehicle 0 flies the scenario unchanged
    worst = closest_pair([planned_path(m, 'multirotor') for m in members])
    assert worst is not None and worst[2].distance_m >= SEPARATION_M


def test_the_fleet_scenario_gives_each_vehicle_its_own_start_and_mission():
    sc = load_scenario('fleet')
    m = member_scenarios(sc, fleet_size(sc, 0))
    assert [len(x.mission) for x in m] == [4, 3, 5]
    assert [x.initial_position_enu[0] for x in m] == [-10.0, 0.0, 10.0]
    assert m[2].initial_yaw_deg == 90.0 and m[0].initial_yaw_deg == 0.0


# --- links ---------------------------------------------------------------------------------------
def test_each_vehicle_gets_the_links_of_its_instance():
    p = member_ports(2, '127.0.0.1:14560', '127.0.0.1:14561', '127.0.0.1:4560',
                     '127.0.0.1:14280', '127.0.0.1:14030', 1)
    assert p == {'bind': '127.0.0.1:14564', 'fc_address': '127.0.0.1:14565',
                 'tcp_bind': '127.0.0.1:4562', 'mission_link': '127.0.0.1:14282',
                 'mission_bind': '127.0.0.1:14032', 'fc_system_id': 3, 'system_id': 53}
    assert offset_port('', 3) == '' and member_ports(1, '', '', '', '', '', 0)['fc_system_id'] == 0
    with pytest.raises(ConfigError, match='outside 1..65535'):
        offset_port('127.0.0.1:65535', 2)


def test_the_graph_starts_one_fc_per_vehicle_on_the_ports_its_bridge_uses():
    nodes = resolve(get_graph('sim_quad_hil'), {'vehicles': '3', 'report': 'true',
                                                'bind': '127.0.0.1:20000',
                                                'fc_address': '127.0.0.1:20001'})
    fcs = [n for n in nodes if n.name == 'builtin_fc']
    assert [n.namespace for n in fcs] == ['/quad0', '/quad1', '/quad2']
    plant = next(n for n in nodes if n.name == 'world_plant')
    assert plant.namespace == '' and plant.parameters['vehicles'] == 3 and plant.supervisor
    assert plant.parameters['report'] is True
    for i, fc in enumerate(fcs):
        # the plant gives bridge i member_ports(i, ...) from its own bind/fc_address
        ports = member_ports(i, plant.parameters['bind'], plant.parameters['fc_address'],
                             '', '', '', 1)
        assert fc.parameters['bind'] == ports['fc_address']
        assert fc.parameters['sim_address'] == ports['bind']
        assert fc.parameters['system_id'] == ports['fc_system_id']
        assert not fc.essential          # one FC dying does not stop the others
        assert fc.parameters['spin_wait_us'] == 0        # N FCs: none polls a core away
    px4 = resolve(get_graph('sim_quad_hil'), {'vehicles': '2', 'fc': 'px4', 'px4_instance': '1'})
    plant = next(n for n in px4 if n.name == 'world_plant')
    assert plant.parameters['px4_instance'] == 1     # vehicle i: PX4 instance 1 + i
    assert plant.parameters['controller'] == 'px4'
    assert not [n for n in px4 if n.name == 'builtin_fc']
    single = resolve(get_graph('sim_quad_hil'), {})
    assert {n.namespace for n in single} == {'', '/quad'}       # one vehicle: /quad as before
    assert 'spin_wait_us' not in next(n for n in single if n.name == 'builtin_fc').parameters


@pytest.mark.parametrize('overrides, message', [
    ({'vehicles': '40'}, 'vehicles: 1..32'),
    ({'vehicles': 'three'}, 'launch argument vehicles: expected int'),
    ({'vehicles': '4', 'scenario': 'fleet'}, 'vehicles: 4 requested, but scenario fleet lists 3'),
])
def test_impossible_fleets_are_refused_by_the_launcher(overrides, message, tmp_path):
    with pytest.raises((ConfigError, ValueError), match=re.escape(message)):
        resolve(get_graph('sim_quad_hil'), overrides)
    args = [f'{k}:={v}' for k, v in overrides.items()]
    p = subprocess.run([sys.executable, '-m', 'sim_launch.cli', 'launch', 'sim_quad_hil', *args],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=60,
                       cwd=tmp_path)
    assert p.returncode == 2 and message in p.stdout.decode(), p.stdout.decode()[-2000:]


# --- lockstep over several controllers -----------------------------------------------------------
def test_lockstep_waits_for_every_vehicle_and_gives_up_a_silent_one_alone():
    g = FleetGate(timeout_s=0.5, max_timeouts=3, members=3)
    g.published(0, 0.0)
    for i in range(3):
        g.answered(-1, i)                  # every FC engaged (an answer to an older frame)
    wall = 0.0
    g.published(4_000_000, wall)
    assert not g.answered(4_000_000, 0) and not g.may_step(wall + 0.1)
    assert not g.answered(4_000_000, 2)
    assert g.answered(4_000_000, 1)        # the last one: the step goes
    assert g.may_step(wall + 0.1)
    # vehicle 1's FC goes silent: each step waits timeout_s for it, then continues
    t = 8_000_000
    for _ in range(3):
        g.published(t, wall)
        g.answered(t, 0)
        assert not g.answered(t, 2)
        assert not g.may_step(wall + 0.4)
        assert g.may_step(wall + 0.5)      # timed out: counted on vehicle 1 alone
        wall += 0.5
        t += 4_000_000
    assert [x.timeouts for x in g.gates] == [0, 3, 0]
    assert g.newly_lost() == [1] and g.newly_lost() == []
    # the others keep lockstep and are no longer held up by it
    g.published(t, wall)
    assert not g.answered(t, 0)
    assert g.answered(t, 2) and g.active
    assert g.may_step(wall)
    # its next answer engages it again
    g.published(t + 4_000_000, wall)
    g.answered(t, 1)
    assert g.gates[1].active


def test_one_member_gate_is_a_lockstep_gate():
    g = FleetGate(timeout_s=0.5, max_timeouts=2)
    g.published(0, 0.0)
    assert not g.answered(5)                         # engages, not the awaited stamp
    g.published(10, 0.0)
    assert not g.may_step(0.1) and g.answered(10) and g.may_step(0.1)
    g.published(20, 1.0)
    assert g.may_step(1.5) and g.timeouts == 1


# --- collisions ----------------------------------------------------------------------------------
def test_a_head_on_contact_conserves_momentum_and_reverses_the_closing_speed():
    m1, m2, r = 1.5, 3.0, 0.4
    c = contact(0, 1, (0.0, 0.0, 5.0), (2.0, 0.0, 0.0), m1, r, (0.7, 0.0, 5.0),
                (-1.0, 0.0, 0.0), m2, r)
    assert c is not None and c.closing_speed == pytest.approx(3.0)
    v1 = np.array([2.0, 0, 0]) + c.dv_i
    v2 = np.array([-1.0, 0, 0]) + c.dv_j
    assert m1 * v1 + m2 * v2 == pytest.approx(m1 * np.array([2.0, 0, 0])
                                              + m2 * np.array([-1.0, 0, 0]))
    assert (v2 - v1)[0] == pytest.approx(RESTITUTION * 3.0)       # separating at e x closing
    p1 = np.array([0.0, 0, 5]) + c.dp_i
    p2 = np.array([0.7, 0, 5]) + c.dp_j
    assert np.linalg.norm(p2 - p1) == pytest.approx(2 * r)          # pushed apart to touching
    assert abs(c.dp_i[0]) == pytest.approx(2 * abs(c.dp_j[0]))     # the lighter one moves more
    # apart, or already separating: no impulse
    assert contact(0, 1, (0, 0, 5), (0, 0, 0), m1, r, (0.9, 0, 5), (0, 0, 0), m2, r) is None
    sep = contact(0, 1, (0, 0, 5), (-1, 0, 0), m1, r, (0.7, 0, 5), (1, 0, 0), m2, r)
    assert sep.dv_i == (0.0, 0.0, 0.0) and sep.closing_speed == 0.0
    assert len(contacts([(0, 0, 5), (0.5, 0, 5), (10, 0, 5)], [(0, 0, 0)] * 3, [1.5] * 3,
                        [r] * 3)) == 1


def test_two_flying_quads_bounce_off_each_other_in_the_model():
    from sim_core.kinds import vehicle_file
    from sim_dynamics.core.multirotor import Multirotor, MultirotorParams
    params = MultirotorParams.from_yaml(vehicle_file('multirotor', 'iris'))
    r = body_radius([x.position for x in params.rotors])
    assert 0.3 < r < 0.5                              # iris: 0.25 m arms, 10-inch props
    a, b = Multirotor(params), Multirotor(params)
    a.reset(p_enu=(0.0, 0.0, 10.0), v_enu=(3.0, 0.0, 0.0))
    b.reset(p_enu=(3.0, 0.0, 10.0), v_enu=(-3.0, 0.0, 0.0))
    hover = [params.hover_throttle()] * 4
    touched = []
    for _ in range(250):                               # 1 s at 250 Hz
        a.step(0.004, hover)
        b.step(0.004, hover)
        for c in contacts([a.raw[0:3], b.raw[0:3]], [a.raw[3:6], b.raw[3:6]],
                          [params.mass] * 2, [r, r]):
            a.push(c.dp_i, c.dv_i)
            b.push(c.dp_j, c.dv_j)
            touched.append(c.closing_speed)
    assert touched and touched[0] > 4.0                # they met at about 6 m/s minus drag
    assert a.raw[3] < 0.0 < b.raw[3]                   # and bounced back
    assert b.raw[0] - a.raw[0] >= 2 * r - 1e-9


def test_only_a_hard_touchdown_is_a_ground_collision():
    assert ground_impact(True, True, -(GROUND_IMPACT_MPS + 1.0)) == GROUND_IMPACT_MPS + 1.0
    assert ground_impact(True, True, -0.7) is None              # a landing
    assert ground_impact(False, True, -5.0) is None             # was on the ground already


def test_the_fleet_judge_ends_a_vehicle_whose_fc_is_lost_and_waits_for_the_others():
    sc = load_scenario('fleet')
    j = FleetJudge(['quad0', 'quad1'], member_scenarios(sc, 2))
    assert j.fc_lost(1, 12.0) and not j.fc_lost(1, 13.0)
    assert not j.over and j.members[1].over
    j.contact(3.0, 'quad0', 'ground', 6.0)     # a hard ground impact: noted, not a collision
    assert j.members[0].collisions == [{'t_s': 3.0, 'with': 'ground', 'speed_mps': 6.0}]
    assert not j.members[0].over
    for k in range(80):                                  # quad0 down after the impact
        j.add(0, 3.0 + 0.1 * k, (-10.0, 0.0, 0.0), 0.0)
    assert j.members[0].result == 'crashed' and j.over and not j.done
    s = j.summary(1.0)
    assert s['vehicles']['quad1']['result'] == 'fc_lost'
    assert s['vehicles']['quad1']['fc_lost_at_s'] == 12.0
    assert s['result'] == 'incomplete' and s['vehicles_collided'] == 0


def test_two_vehicles_that_touch_have_collided_and_the_fleet_is_not_complete():
    """A contact between two vehicles ends both (issue 39: the report said complete)."""
    sc = load_scenario('fleet')
    j = FleetJudge(['quad0', 'quad1'], member_scenarios(sc, 2))
    j.add(0, 1.0, (0.0, 0.0, 10.0), 0.0)
    j.add(1, 1.0, (0.5, 0.0, 10.0), 0.0)
    j.contact(1.0, 'quad0', 'quad1', 2.3)      # a Collision message: noted for both
    assert [m.result for m in j.members] == ['collided', 'collided'] and j.over and not j.done
    s = j.summary(1.0)
    assert s['result'] == 'incomplete' and s['vehicles_collided'] == 2
    assert s['vehicles']['quad0']['collisions'] == [{'t_s': 1.0, 'with': 'quad1',
                                                     'speed_mps': 2.3}]
    assert s['closest_approach']['vehicles'] == ['quad0', 'quad1']
    assert s['closest_approach']['distance_m'] == pytest.approx(0.5)


def fleet_node(ros_context, **params):
    """The world node in this process and the test's context: the fleet scenario's 2 quads.

    Their built-in FCs' bridges would be world_plant's (direct commands); none here.
    """
    from rclpy.parameter import Parameter
    from sim_world.world_node import WorldNode
    _, ctx = ros_context
    over = [Parameter('scenario_file', value='fleet'), Parameter('vehicles', value=2),
            Parameter('summary', value=False)] + [
        Parameter(k, value=v) for k, v in params.items()]
    return WorldNode(direct_commands=True, context=ctx, parameter_overrides=over)


@pytest.mark.graph
def test_a_fleet_clock_waits_for_every_controller_then_starts_without_the_missing(
        ros_context):
    node = fleet_node(ros_context, time_scale=0.0)
    missing = ['/quad0', '/quad1']
    try:
        node.hold_start(lambda: list(missing), 0.6)
        node.advance()
        assert node.clock.steps == 0                      # nobody heard: time stays at 0
        missing.remove('/quad0')
        time.sleep(0.1)
        node.advance()
        assert node.clock.steps == 0                      # /quad1 still missing
        time.sleep(0.6)                                   # its timeout passes
        node.advance()
        assert node.clock.steps > 0 and node.message == 'started without /quad1'
        node2 = fleet_node(ros_context, time_scale=0.0)
        heard = []
        node2.hold_start(lambda: [] if heard else ['/quad1'], 60.0)
        node2.advance()
        assert node2.clock.steps == 0
        heard.append(1)
        time.sleep(0.06)                                  # the next check is 50 ms on
        node2.advance()
        assert node2.clock.steps > 0 and 'every controller heard' in node2.message
        node2.destroy_node()
    finally:
        node.destroy_node()


@pytest.mark.graph
def test_the_fleet_node_resolves_contacts_and_reports_them_on_sim_collisions(ros_context):
    """Contacts in the node: two quads bounce off each other, then both hit the ground.

    The fleet scenario's first two, set on a collision course 5 m up with the motors off;
    each contact is one Collision message on /sim/collisions.
    """
    from aerosim_msgs.msg import Collision

    from conftest import probe_node, spin_for
    node = fleet_node(ros_context, start_paused=True)
    probe, ex = probe_node(ros_context, 'collision_probe')
    got = []
    probe.create_subscription(Collision, '/sim/collisions', got.append, 100)
    try:
        a, b = node.world.bodies
        assert [a.member.name, b.member.name] == ['quad0', 'quad1']
        a.model.model.reset(p_enu=(-0.5, 0.0, 5.0), v_enu=(2.0, 0.0, 0.0))
        b.model.model.reset(p_enu=(0.3, 0.0, 5.0), v_enu=(-2.0, 0.0, 0.0))
        node.world.resample(node.clock.t_ns)
        a.airborne = b.airborne = True
        spin_for(probe, ex, 1.0)                   # the subscription matched
        assert node.step(400) == (True, 'stepped 400')   # 1.6 s: the fall from 5 m takes ~1 s
        assert spin_for(probe, ex, 2.0) is None and len(got) == 3, got
        touch = got[0]
        assert (touch.vehicle, touch.other) == ('quad0', 'quad1')
        assert touch.closing_speed == pytest.approx(4.0, abs=0.2)
        assert -0.2 < touch.position.x < 0.0 and touch.position.z > 4.5
        assert a.model.model.raw[3] < 0.0 < b.model.model.raw[3]   # they bounced apart
        assert sorted((m.vehicle, m.other) for m in got[1:]) == [('quad0', 'ground'),
                                                                  ('quad1', 'ground')]
        assert all(m.closing_speed > 9.0 for m in got[1:])   # ~sqrt(2 g 5 m) = 9.9 m/s
        assert node.collisions == 3
    finally:
        probe.destroy_node()
        node.destroy_node()


# --- the graph -----------------------------------------------------------------------------------
def launch_fleet(procs, tmp_path, *extra):
    port = free_ports(6)
    return procs.start([sys.executable, '-m', 'sim_launch.cli', 'launch', 'sim_quad_hil',
                        'scenario:=fleet', 'report:=true', 'time_scale:=0',
                        'sensor_topics:=false', f'bind:=127.0.0.1:{port}',
                        f'fc_address:=127.0.0.1:{port + 1}', f'output_dir:={tmp_path}', *extra])


@pytest.mark.graph
def test_three_builtin_fcs_fly_three_missions_in_one_simulation(procs, tmp_path):
    p = launch_fleet(procs, tmp_path)
    rc = finished(p, 150.0 * DEADLINE_SCALE)
    out = ''.join(p.lines)
    assert rc == 0, out[-5000:]
    s = json.loads((tmp_path / 'latest' / 'summary.json').read_text())
    assert s['result'] == 'complete' and s['vehicles_complete'] == 3
    v = s['vehicles']
    assert [v[f'quad{i}']['items_reached'] for i in range(3)] == [4, 3, 5]
    for i in range(3):
        assert v[f'quad{i}']['result'] == 'complete' and v[f'quad{i}']['collisions'] == []
        assert v[f'quad{i}']['details']['landing_error_m'] < 1.5
        assert f'serving flight controller {i + 1}:1' in out     # FC i is system i + 1
    assert s['lockstep_timeouts'] == 0                      # every step answered by all three
    assert (tmp_path / 'latest' / 'plot.png').stat().st_size > 10_000
    # one clock: the three missions end at different sim times of the same run
    ends = [v[f'quad{i}']['reached_at_s'][-1] for i in range(3)]
    assert len(set(ends)) == 3 and max(ends) <= s['sim_time_s'] + 1e-6


@pytest.mark.graph
def test_a_late_flight_controller_holds_the_fleet_at_t0_and_all_start_together(procs,
                                                                             tmp_path):
    """A fleet's clock starts when its last FC is heard: the vehicles take off together.

    Two copies of the default mission, FCs started by the test, the second 4 s late: sim time
    waits for it (without the hold the first would have flown ~20 s of sim alone).
    """
    port = free_ports(4)
    run = procs.start([sys.executable, '-m', 'sim_launch.cli', 'launch', 'sim_quad_hil',
                       'vehicles:=2', 'fc:=external', 'report:=true', 'time_scale:=0',
                       'sensor_topics:=false', f'bind:=127.0.0.1:{port}',
                       f'fc_address:=127.0.0.1:{port + 1}', f'output_dir:={tmp_path}'])
    fcs = []
    for i in range(2):
        fcs.append(procs.node('mavlink_bridge.fc.fc_node', 'builtin_fc', {
            'bind': f'127.0.0.1:{port + 1 + 2 * i}', 'sim_address': f'127.0.0.1:{port + 2 * i}',
            'system_id': i + 1}, ns=f'/quad{i}'))
        if i == 0:
            assert wait_line(run.lines, 'serving flight controller 1:1', 60.0 * DEADLINE_SCALE,
                             [run]), ''.join(run.lines)[-3000:]
            time.sleep(4.0)
    rc = finished(run, 150.0 * DEADLINE_SCALE)
    out = ''.join(run.lines)
    assert rc == 0, out[-4000:]
    waited = float(re.search(r'controller heard after ([0-9.]+) s', out).group(1))
    assert waited >= 4.0
    s = json.loads((tmp_path / 'latest' / 'summary.json').read_text())
    v = s['vehicles']
    assert v['quad0']['result'] == v['quad1']['result'] == 'complete'
    # the same mission, the same start: the takeoffs end within a second of sim time
    assert abs(v['quad0']['reached_at_s'][0] - v['quad1']['reached_at_s'][0]) < 1.0


@pytest.mark.graph
def test_a_vehicle_whose_fc_dies_is_reported_and_the_others_fly_on(procs, tmp_path):
    p = launch_fleet(procs, tmp_path)
    assert wait_line(p.lines, 'truth: quad1 item 1 (waypoint) reached', 120.0 * DEADLINE_SCALE,
                     [p]), ''.join(p.lines)[-4000:]
    pid = next(int(m.group(1)) for line in p.lines
               for m in [re.search(r'started /quad1/builtin_fc \(pid (\d+)\)', line)] if m)
    os.kill(pid, signal.SIGKILL)
    rc = finished(p, 200.0 * DEADLINE_SCALE)
    out = ''.join(p.lines)
    assert rc == 1, out[-5000:]                 # not every mission complete: exit code 1
    assert 'node /quad1/builtin_fc died (exit code -9); the graph goes on' in out
    assert '/quad1: its controller is silent' in out          # lockstep gave it up alone
    s = json.loads((tmp_path / 'latest' / 'summary.json').read_text())
    v = s['vehicles']
    # killed in flight, its quad falls: the ground may come before the peer timeout (3 s of
    # wall and sim), whichever is first ends it, with its reason (as test_one_simulator's
    # single quad)
    q1 = v['quad1']
    if q1['result'] == 'fc_lost':
        assert 'quad1: its flight controller is gone' in out and q1['fc_lost_at_s'] > 0.0
        ended = q1['fc_lost_at_s']
    else:
        assert q1['result'] == 'collided', q1
        hit = re.search(r'collision at t = ([\d.]+) s: /quad1 and the ground', out)
        assert hit, out[-5000:]
        ended = float(hit.group(1))
    assert v['quad0']['result'] == 'complete' and v['quad2']['result'] == 'complete'
    assert s['vehicles_complete'] == 2
    # the others flew on after the loss
    assert max(v['quad0']['reached_at_s'][-1], v['quad2']['reached_at_s'][-1]) > ended
