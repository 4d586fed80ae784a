"""A quad on the deck of a moving boat (issue: air and sea in one world), pure and in a graph.

The deck's geometry and contact (sim_core.deck, sim_world.core.decks), the downward sensors
(sim_sensors.core.landing_target) and their MAVLink bytes as PX4's SimulatorMavlink takes them,
the built-in FC's target tracker, the judge of a deck landing, and the deck_landing scenario
flown by the built-in FC in sim_world to a judged touchdown on the moving deck.
"""

from dataclasses import replace
import json
import math
import sys

import numpy as np
import pytest
from sim_world.core.decks import TOUCHDOWN
from sim_world.core.world import WATER, World, open_water

from kinds.entry import make_controller, make_model
from mavlink_bridge.core import hil
from mavlink_bridge.core.mav import mavlink
from mavlink_bridge.fc.precland import TargetTracker
from sim_core.deck import DeckSpec, on_deck, pad_pose
from sim_core.errors import ConfigError
from sim_core.members import world_members
from sim_core.scenario import load_scenario, scenario_from_dict
from sim_dynamics.core.usv import BoatType
from sim_report.core.mission import MissionJudge
from sim_sensors.core.landing_target import DownwardSensors, TargetConfig

from conftest import DEADLINE_SCALE, PKG_DIR, finished, free_ports

DT = 0.004
G = 9.80665
PY = sys.executable


def deck_world(sea_state=0, speed=2.0):
    sc = load_scenario('deck_landing')
    sc = replace(sc, environment=replace(sc.environment, sea_state=sea_state))
    ms = world_members(sc)
    ms = (replace(ms[0], cruise_speed_mps=speed),) + ms[1:]
    return World.build(ms, make_model, make_controller, open_water)


def run(w, seconds, t_ns=0):
    events = []
    for _ in range(int(round(seconds / DT))):
        events += w.step(DT, t_ns) + w.deck_events
        t_ns += int(DT * 1e9)
    return events, t_ns


def test_deck_spec_loads_and_refuses_garbage_naming_the_field():
    d = BoatType.from_yaml(
        load_scenario('deck_landing').fleet[0].vehicle_file).deck
    assert d == DeckSpec(pad_flu_m=(-2.5, 0.0, 1.2), size_m=(2.4, 2.2), friction=0.6,
                         beacon=True)
    for bad, field in (({'size_m': [2, 2]}, 'pad_flu_m'), ({'pad_flu_m': [0, 0, -1],
                                                             'size_m': [2, 2]}, 'pad_flu_m[2]'),
                       ({'pad_flu_m': [0, 0, 1], 'size_m': [2, 'x']}, 'size_m[1]'),
                       ({'pad_flu_m': [0, 0, 1], 'size_m': [2, 2], 'grip': 1}, 'grip'),
                       ({'pad_flu_m': [0, 0, 1], 'size_m': [2, 2], 'beacon': 'yes'}, 'beacon')):
        with pytest.raises(ConfigError, match=field.replace('[', r'\[').replace(']', r'\]')):
            DeckSpec.from_dict(bad)


@pytest.mark.parametrize('sea_state', [0, 3])
def test_a_quad_resting_on_the_deck_rides_with_the_boat_through_its_heave(sea_state):
    """Idle on the pad: no event for 20 s, its height the deck's (heave), its IMU the deck's."""
    w = deck_world(sea_state)
    z, az, pad = [], [], []
    t = 0
    for _ in range(int(20.0 / DT)):
        assert not w.step(DT, t) and not w.deck_events
        t += int(DT * 1e9)
        q, b = w.samples[1], w.samples[0]
        pose = pad_pose(w.decks.decks[0], b.p_enu, b.v_enu, b.q_enu_flu, b.w_flu)
        pad.append(float(np.linalg.norm(on_deck(pose, q.p_enu))))
        z.append(float(q.p_enu[2]))
        az.append(float(q.a_enu[2]))
    assert w.decks.on_deck_of(1) == 'boat0'
    assert max(pad) < 0.1                                   # held at its spot, no sinking
    assert np.asarray(w.samples[1].v_enu) == pytest.approx(pose.v_enu, abs=0.05)  # carried
    assert float(np.mean(np.asarray(w.samples[0].v_enu)[0:2])) != 0.0
    if sea_state == 0:
        assert max(z) - min(z) < 1e-9 and max(map(abs, az)) < 1e-9
    else:   # SS 3: 0.875 m waves, the hull heaves +-0.44 m (a_z ~ +-1.6 m/s^2), and pitches
        # +-2.9 deg: the pad, 2.5 m aft, rises and falls another +-0.13 m
        assert 0.8 < max(z) - min(z) < 1.3 and 1.0 < max(az) < 2.5


def test_a_quad_dropped_on_the_deck_touches_down_at_its_fall_speed_one_missing_it_ditches():
    w = deck_world(0)
    _, t = run(w, 10.0)
    q = w.model('quad0')
    b, s = w.samples[0], w.samples[1]
    w.decks.resting.clear()
    q.carry(None)
    q.model.set_rigid([s.p_enu[0], s.p_enu[1], s.p_enu[2] + 2.0], b.v_enu, s.q_enu_flu,
                      [0, 0, 0])
    w.bodies[1].airborne = True
    w.resample(t)
    events, t = run(w, 2.0, t)
    td = [e for e in events if getattr(e, 'what', '') == TOUCHDOWN]
    assert len(td) == 1 and td[0].deck == 'boat0'
    assert td[0].normal_speed == pytest.approx(math.sqrt(2 * G * 2.0), rel=0.03)
    assert w.decks.on_deck_of(1) == 'boat0'
    # now 5 m to port of the deck: into the water, a water impact
    w.decks.resting.clear()
    q.carry(None)
    s = w.samples[1]
    q.model.set_rigid([s.p_enu[0] - 5.0, s.p_enu[1], s.p_enu[2] + 2.0], b.v_enu,
                      s.q_enu_flu, [0, 0, 0])
    w.resample(t)
    events, t = run(w, 2.0, t)
    assert [e.other for e in events if hasattr(e, 'other')] == [WATER]
    assert w.decks.on_deck_of(1) is None


def test_the_downward_sensors_see_the_beacon_in_the_image_frame_and_range_to_the_deck():
    deck = DeckSpec(pad_flu_m=(0.0, 0.0, 1.0), size_m=(2.0, 2.0))
    level = (1.0, 0.0, 0.0, 0.0)                   # facing east (ENU yaw 0)
    pose = pad_pose(deck, (0.0, 0.0, 0.0), (0.0, 0.0, 0.0), level, (0.0, 0.0, 0.0))
    cfg = replace(TargetConfig(), landing_target_noise_tan=0.0, landing_target_noise_m=0.0,
                  rangefinder_noise_m=0.0)
    sens = DownwardSensors(cfg, np.random.default_rng(1))
    # the quad 2 m west and 1 m south of the pad, 4 m above the deck, nose east: the beacon
    # is 2 m ahead (image up: tan_y < 0) and 1 m left... (north = left of an east heading)
    r = sens.target(50_000_000, (-2.0, -1.0, 5.0), level, [(deck, pose)])
    assert r.tan_y == pytest.approx(-2.0 / 4.0) and r.tan_x == pytest.approx(-1.0 / 4.0)
    assert r.distance_m == pytest.approx(math.sqrt(4 + 1 + 16))
    assert sens.range(50_000_000, (-0.5, 0.5, 5.0), level, [(deck, pose)]).distance_m == \
        pytest.approx(4.0)                         # over the deck: to the deck
    assert sens.range(100_000_000, (-5.0, 0.5, 5.0), level, [(deck, pose)]).distance_m == \
        pytest.approx(5.0)                         # beside it: to the water
    assert sens.target(100_000_000, (-20.0, 0.0, 5.0), level, [(deck, pose)]) is None  # FOV
    assert sens.target(150_000_000, (0.0, 0.0, 0.5), level, [(deck, pose)]) is None   # below


def test_landing_target_and_distance_sensor_bytes_are_what_px4s_simulator_takes():
    mav = mavlink.MAVLink(None, 51, 1)
    from sim_sensors.core.landing_target import RangeReading, TargetReading
    m = hil.landing_target(mav, TargetReading(0, 0.1, -0.2, 5.0, 0), 123_456)
    m2 = mav.decode(bytearray(m.pack(mav)))
    assert (m2.position_valid, m2.frame) == (0, mavlink.MAV_FRAME_BODY_FRD)
    assert (m2.angle_x, m2.angle_y, m2.time_usec) == (pytest.approx(0.1), pytest.approx(-0.2),
                                                      123_456)
    d = mav.decode(bytearray(hil.distance_sensor(mav, RangeReading(0, 3.456, 0.05, 40.0),
                                                 2_000_000).pack(mav)))
    assert (d.current_distance, d.min_distance, d.max_distance) == (346, 5, 4000)   # cm
    assert d.orientation == mavlink.MAV_SENSOR_ROTATION_PITCH_270 == 25
    assert d.signal_quality == 100 and d.time_boot_ms == 2000


def test_the_fcs_tracker_estimates_a_deck_moving_at_2_mps_from_the_beacon_alone():
    tr = TargetTracker()
    R = np.eye(3)                                  # level, nose north (FRD = NED)
    rng = np.random.default_rng(3)
    for k in range(200):                           # 10 s at 20 Hz
        t = k * 0.05
        tgt = np.array([2.0 * t, 0.0, 8.0])        # north at 2 m/s, 8 m under the origin
        f, r, d = tgt                              # the vehicle hovers at the origin
        tr.measure(t, r / d + rng.normal(0, 0.003), -f / d + rng.normal(0, 0.003),
                   float(np.linalg.norm(tgt)), np.zeros(3), R)
    assert tr.valid(t)
    assert tr.velocity() == pytest.approx([2.0, 0.0], abs=0.15)
    assert tr.position(t) == pytest.approx([2.0 * t, 0.0], abs=0.3)
    assert not tr.measure(t, math.nan, 0.0, 1.0, np.zeros(3), R)


def test_the_judge_takes_a_touchdown_on_the_pad_and_refuses_a_wide_or_hard_one():
    def judge():
        j = MissionJudge(world_members(load_scenario('deck_landing'))[1].scenario)
        j.reached = [1.0, 2.0]                     # takeoff, waypoint: the landing is next
        return j
    ok = judge()
    ok.deck_event(50.0, 'boat0', TOUCHDOWN, 0.4, (0.2, -0.2))
    ok.add(59.0, (0, 0, 1.2), 2.0)
    assert not ok.done
    ok.add(60.1, (0, 0, 1.2), 2.0)
    assert ok.done and ok.summary(1.0)['deck_landing']['pad_error_m'] == pytest.approx(0.283,
                                                                                       abs=1e-3)
    wide = judge()
    wide.deck_event(50.0, 'boat0', TOUCHDOWN, 0.4, (0.6, 0.0))
    wide.add(61.0, (0, 0, 1.2), 2.0)
    assert not wide.done and wide.over and 'from the pad' in wide.deck_failed
    hard = judge()
    hard.deck_event(50.0, 'boat0', TOUCHDOWN, 1.3, (0.0, 0.0))
    assert hard.over and 'm/s toward the deck' in hard.deck_failed
    gone = judge()                                 # a lift-off cancels the touchdown
    gone.deck_event(50.0, 'boat0', TOUCHDOWN, 0.3, (0.0, 0.0))
    gone.deck_event(51.0, 'boat0', 'liftoff', 0.0, (0.0, 0.0))
    gone.add(61.0, (0, 0, 5.0), 2.0)
    assert not gone.done and not gone.over


def test_a_scenario_says_which_deck_and_an_on_key_is_refused_clearly():
    base = {'name': 't', 'origin': {'lat_deg': 41.0, 'lon_deg': -8.0},
            'vehicle': {'kind': 'multirotor', 'params': 'iris'}}
    with pytest.raises(ConfigError, match='YAML reads it as true'):
        scenario_from_dict({**base, 'mission': [
            {'command': 'land', True: 'boat0', 'lat_deg': 41.0, 'lon_deg': -8.0}]})
    with pytest.raises(ConfigError, match='only a land item lands on a deck'):
        scenario_from_dict({**base, 'mission': [
            {'command': 'waypoint', 'deck': 'boat0', 'lat_deg': 41.0, 'lon_deg': -8.0}]})


def test_a_world_refuses_a_start_or_a_landing_on_what_has_no_deck_naming_it():
    sc = load_scenario('deck_landing')
    boat, quad = sc.fleet
    for fleet, text in (((boat, replace(quad, start_on='boat7')), "no vehicle 'boat7'"),
                        ((replace(boat, vehicle_file=boat.vehicle_file.with_name('wamv.yaml')),
                          quad), 'boat0 has no deck')):
        with pytest.raises(ValueError, match=text):
            World.build(world_members(replace(sc, fleet=fleet)), make_model, make_controller,
                        open_water)
    far = replace(quad, initial_position_enu=(0.0, 5.0, 1.2))      # 7.5 m from the pad
    with pytest.raises(ValueError, match='not over the deck of boat0'):
        World.build(world_members(replace(sc, fleet=(boat, far))), make_model,
                    make_controller, open_water)


@pytest.mark.graph
def test_deck_landing_the_built_in_fc_lands_on_the_moving_deck(procs, tmp_path):
    """The issue's command: sim_world scenario:=deck_landing report:=true time_scale:=0."""
    port = free_ports(4)
    run = procs.start([PY, '-m', 'sim_launch.cli', 'launch', 'sim_world', 'time_scale:=0',
                       'scenario:=deck_landing', 'report:=true', 'sensor_topics:=false',
                       f'bind:=127.0.0.1:{port}', f'fc_address:=127.0.0.1:{port + 1}',
                       f'output_dir:={tmp_path}'])
    rc = finished(run, 900.0 * DEADLINE_SCALE)
    out = procs.output(run)
    assert rc == 0, out[-4000:]
    s = json.loads((tmp_path / 'latest' / 'summary.json').read_text())
    q = s['vehicles']['quad0']
    assert s['result'] == 'complete' and q['result'] == 'complete', s
    td = q['details']['deck_landing']
    assert td['deck'] == 'boat0' and td['pad_error_m'] <= 0.5
    assert td['hardest_touchdown_mps'] < 1.0 and td['on_deck_after_s'] == 10.0
    assert 'landing target in sight' in out and 'precision landing' in out


@pytest.mark.graph
def test_the_px4_path_lands_on_the_deck_with_the_px4_stand_in(procs, tmp_path):
    """A PX4-flown quad (the stand-in: PX4 v1.16's precision-landing chain from its source).

    The boat at rest (PX4 v1.16's precland does not track a moving target: no velocity
    feed-forward, so on a deck at 2 m/s it trails the pad; module docstring of px4_sitl).
    Over the simulator link: LANDING_TARGET (position_valid 0) and DISTANCE_SENSOR (down)
    taken, landing_target_estimator started; config/px4/deck_landing.params set first.
    """
    import yaml
    d = yaml.safe_load(open(load_scenario('deck_landing').path))
    boat, quad = d['vehicles']
    boat.pop('mission')
    quad['controller'] = 'px4'
    o = load_scenario('deck_landing').origin
    lat, lon, _ = o.enu_to_geodetic(0.0, -2.5, 0.0)          # the pad of the boat at rest
    quad['mission'][-1].update(lat_deg=lat, lon_deg=lon)
    sc = tmp_path / 'deck_px4.yaml'
    sc.write_text(yaml.safe_dump(d))
    tcp = free_ports(1)
    mav, remote = free_ports(1), free_ports(1)
    peer = procs.start([PY, str(PKG_DIR / 'test' / 'px4_sitl.py'), '--sim-port', str(tcp),
                        '--mavlink-port', str(mav), '--mavlink-remote', str(remote),
                        '--landing-target-estimator'], cwd=str(PKG_DIR))
    run = procs.start([PY, '-m', 'sim_launch.cli', 'launch', 'sim_world', 'time_scale:=0',
                       f'scenario:={sc}', 'report:=true', 'sensor_topics:=false',
                       f'tcp_bind:=127.0.0.1:{tcp}', f'mission_link:=127.0.0.1:{mav}',
                       f'mission_bind:=127.0.0.1:{remote}', f'output_dir:={tmp_path}'])
    rc = finished(run, 900.0 * DEADLINE_SCALE)
    out = procs.output(run)
    assert rc == 0, out[-4000:]
    said = procs.output(peer)
    s = json.loads((tmp_path / 'latest' / 'summary.json').read_text())
    td = s['vehicles']['quad0']['details']['deck_landing']
    assert s['result'] == 'complete' and td['pad_error_m'] <= 0.5, s
    counts = {k: int(v) for k, v in
              (x.split('=') for x in said.split('PX4SITL hil_sensor=')[1].split()[1:]
               if '=' in x)}
    assert counts['param_sets'] == 4 and counts['irlock'] > 100, counts
    assert counts['distance_sensor'] > 100 and counts['irlock_unused'] == 0, counts
    assert 'landing target in sight' in said and 'landed on the target' in said


def test_a_boat_waits_hold_s_at_a_waypoint_then_steams_on():
    """deck_landing_px4's boat: stopped on its start for 15 s (the quad's takeoff), then north."""
    sc = load_scenario('deck_landing_px4')
    w = World.build(world_members(sc), make_model, make_controller, open_water)
    _, t = run(w, 14.0)
    assert float(np.linalg.norm(np.asarray(w.samples[0].p_enu[0:2]))) < 0.05
    _, t = run(w, 16.0, t)
    assert float(w.samples[0].p_enu[1]) > 15.0 and float(w.samples[0].v_enu[1]) > 1.8
