"""The USV swarm simulation (sim_dynamics.core.usv_swarm) in sim time.

Control modes with the init's PID gains, tasks, health and attack, collisions and map bounds.
"""

import math
from pathlib import Path

import numpy as np
import pymap3d
import pytest

from sim_core.validate import FieldError
from sim_dynamics.core.swarm_config import load_swarm_config
from sim_dynamics.core.swarm_orders import Motion, Order, Task
from sim_dynamics.core.usv_swarm import SwarmParams, SwarmSim, TypeTable, wrap_180
from usv_bridge.core import protocol as P

CONFIG = Path(__file__).resolve().parent.parent / 'config'
TYPES = TypeTable.from_yaml(CONFIG / 'usv_types.yaml')
LAT0, LON0 = 10.5, 134.5
DT = 0.05


def geo(n, e):
    lat, lon, _ = pymap3d.ned2geodetic(n, e, 0.0, LAT0, LON0, 0.0)
    return float(lon), float(lat)


def make(boats, obstacles=(), half_deg=0.05, **top):
    """A config with boats [(id, n, e, heading_deg, team, type, extra...)] around (LAT0, LON0)."""
    obj = {'time_scale': 1, 'wave_degree': 0, 'weather': 0, 'hour': 13,
           'x_leftTop_longtitude': LON0 - half_deg, 'y_leftTop_latitude': LAT0 + half_deg,
           'x_rightBottom_longtitude': LON0 + half_deg, 'y_rightBottom_latitude': LAT0 - half_deg,
           'boats': [], 'obstacles': [], 'map_max_distance': 2000,
           'task_area_center_longtitude': LON0, 'task_area_center_latitude': LAT0,
           'task_area_radius': 5000, 'gas_p': 0.1, 'gas_i': 0.001, 'gas_d': 0.5,
           'steering_p': 0.15, 'steering_i': 0.001, 'steering_d': 0.13}
    obj.update(top)
    for b in boats:
        bid, n, e, hdg = b[:4]
        team = b[4] if len(b) > 4 else 0
        btype = b[5] if len(b) > 5 else 1
        lon, lat = geo(n, e)
        obj['boats'].append({'id': bid, 'type': btype, 'team': team, 'x_longtitude': lon,
                             'y_latitude': lat, 'startAngle': hdg, 'health': 100,
                             'gas_outputRate': 100, 'attack_radius': 100, 'attack': 20})
    for oid, otype, n, e in obstacles:
        lon, lat = geo(n, e)
        obj['obstacles'].append({'id': oid, 'type': otype, 'x_longtitude': lon,
                                 'y_latitude': lat, 'startAngle': 0})
    cfg = P.parse_init(obj, TYPES.boats, TYPES.obstacles)
    return SwarmSim(cfg, TYPES, SwarmParams())


def cmd(sim, *fields):
    """A command 22 as the UI sends it (the bridge's mapping onto an Order)."""
    return sim.command(P.parse_command22([22, *fields], sim.cfg))


def run(sim, seconds, each=None):
    for _ in range(int(round(seconds / DT))):
        sim.step(DT)
        if each:
            each()


def test_heading_speed_mode_reaches_its_targets_with_the_inits_pid():
    sim = make([(1, 0, 0, 0, 0, 1), (2, 0, 300, 0, 0, 2)])
    cmd(sim, 1, 0, 0, 0, 0, 3, 2.0, 90, 0, 0)         # WAM-V: east at 2 m/s
    cmd(sim, 2, 0, 0, 0, 0, 3, 1.5, 225, 0, 0)        # Otter: south-west at 1.5 m/s
    run(sim, 60.0)
    b = sim.boats
    assert math.degrees(b.psi[0]) == pytest.approx(90.0, abs=2.0)
    assert math.degrees(b.psi[1]) % 360 == pytest.approx(225.0, abs=2.0)
    assert b.u[0] == pytest.approx(2.0, abs=0.2) and b.u[1] == pytest.approx(1.5, abs=0.2)
    c = sim.columns()
    assert list(c['control_mode']) == [3, 3]
    assert c['control_a'][0] == pytest.approx(90.0) and c['control_b'][1] == pytest.approx(1.5)
    # the heading response is damped: the overshoot stays under 10 degrees
    sim = make([(1, 0, 0, 0)])
    cmd(sim, 1, 0, 0, 0, 0, 3, 2.0, 90, 0, 0)
    peak = []
    run(sim, 60.0, lambda: peak.append(math.degrees(sim.boats.psi[0])))
    assert max(peak) < 100.0


def test_rudder_throttle_mode_is_open_loop_and_turns_to_starboard():
    sim = make([(1, 0, 0, 0)])
    cmd(sim, 1, 0, 0, 0, 0, 2, 100, 20, 0, 0)
    run(sim, 40.0)
    b = sim.boats
    assert b.throttle[0] == pytest.approx(1.0) and b.r[0] > 0.02           # starboard turn
    assert math.degrees(b.rudder[0]) == pytest.approx(20.0)
    c = sim.columns()
    assert (c['control_mode'][0], c['control_a'][0], c['control_b'][0]) == (2, 20.0, 100.0)
    # full throttle with the rudder amidships: the boat type's top speed (VRX's recipe)
    cmd(sim, 1, 0, 0, 0, 0, 2, 100, 0, 0, 0)
    run(sim, 60.0)
    assert b.u[0] == pytest.approx(TYPES.boats[1].top_speed_mps, rel=0.02)
    cmd(sim, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0)                                  # mode 0: coast
    run(sim, 60.0)
    assert b.u[0] < 0.3 and sim.columns()['control_mode'][0] == 0


def test_waypoint_speed_mode_visits_each_waypoint_within_5_m_then_stops():
    sim = make([(1, 0, 0, 0)])
    pts = [(0.0, 150.0, 2.0), (120.0, 150.0, 1.5), (120.0, -50.0, 2.2)]
    wire = []
    for n, e, v in pts:
        wire += [*geo(n, e), v]
    cmd(sim, 1, 0, 0, 4, 0, 1, 0, 0, 1, len(pts), *wire)
    best = [1e9] * len(pts)
    speeds = []

    def watch():
        for k, (n, e, _) in enumerate(pts):
            best[k] = min(best[k], math.hypot(sim.boats.n[0] - n, sim.boats.e[0] - e))
        speeds.append((int(sim.wp_k[0]), sim.boats.u[0]))
    run(sim, 330.0, watch)
    assert max(best) < 5.0
    assert sim.take_events()[-1] == 'boat 1: route 4 done'
    assert sim.boats.u[0] < 0.2                                   # stopped after the last
    # each leg at its own speed (after the turn onto the leg)
    leg2 = [u for k, u in speeds if k == 1]
    assert np.median(leg2) == pytest.approx(1.5, abs=0.2)


def test_waypoint_time_mode_arrives_on_time():
    sim = make([(1, 0, 0, 90)])
    cmd(sim, 1, 0, 0, 1, 0, 4, 0, 0, 1, 2, *geo(0, 200), 150.0, *geo(0, 400), 250.0)
    arrivals = {}

    def watch():
        for k, e in ((0, 200.0), (1, 400.0)):
            if k not in arrivals and math.hypot(sim.boats.n[0], sim.boats.e[0] - e) < 5.0:
                arrivals[k] = sim.t
    run(sim, 300.0, watch)
    assert arrivals[0] == pytest.approx(150.0, abs=5.0)
    assert arrivals[1] == pytest.approx(250.0, abs=5.0)


def test_waypoint_variable_speed_changes_speed_live_and_keeps_the_route():
    sim = make([(1, 0, 0, 90)])
    cmd(sim, 1, 0, 0, 1, 0, 5, 1.0, 0, 1, 1, *geo(0, 2000), 0.0)
    run(sim, 60.0)
    assert sim.boats.u[0] == pytest.approx(1.0, abs=0.2)
    cmd(sim, 1, 0, 0, 1, 0, 5, 2.0, 0, 0, 0)           # changed = 0: the speed only
    run(sim, 40.0)
    assert sim.boats.u[0] == pytest.approx(2.0, abs=0.2)
    assert sim.wp[0, 1] == pytest.approx(2000.0, abs=1.0)          # same waypoint
    assert math.degrees(sim.boats.psi[0]) == pytest.approx(90.0, abs=2.0)


def test_escort_formation_and_ring_hold_their_stations_round_a_moving_target():
    sim = make([(1, 0, 0, 90), (2, -60, -40, 90), (3, 60, -60, 90), (4, 0, -150, 90),
                (5, 100, 100, 90)])
    cmd(sim, 1, 0, 0, 0, 0, 3, 1.0, 90, 0, 0)         # the target goes east at 1 m/s
    cmd(sim, 2, 1, 1, 0, 0, 0, 0, 0, 0, 0)            # escort: starboard (south) at 30 m
    cmd(sim, 3, 6, 1, 0, 0, 0, 0, 0, 0, 0)            # formation rank 0: behind/starboard
    cmd(sim, 4, 6, 1, 0, 0, 0, 0, 0, 0, 0)            # formation rank 1: behind/port
    cmd(sim, 5, 5, 1, 0, 0, 0, 0, 0, 0, 0)            # ring guard at 60 m
    ring = []
    run(sim, 200.0)
    run(sim, 100.0, lambda: ring.append(math.hypot(sim.boats.n[4] - sim.boats.n[0],
                                                   sim.boats.e[4] - sim.boats.e[0])))
    b = sim.boats

    def rel(i):
        return b.n[i] - b.n[0], b.e[i] - b.e[0]
    assert rel(1) == pytest.approx((-30.0, 0.0), abs=5.0)
    assert rel(2) == pytest.approx((-25.0, -25.0), abs=5.0)
    assert rel(3) == pytest.approx((25.0, -25.0), abs=5.0)
    # the ring guard holds its 60 m circle (a point chased ahead on it cut inside: ~53 m)
    assert np.mean(ring) == pytest.approx(60.0, abs=3.0) and 50.0 < min(ring) < max(ring) < 70.0
    # the ring guard goes round: its bearing from the target sweeps more than a full turn
    assert sim.collisions == {'obstacle': 0, 'bounds': 0, 'boat': 0}


def test_defender_stays_between_the_target_and_the_threat():
    sim = make([(1, 0, 0, 0, 0), (2, 0, 40, 0, 0), (9, 400, 0, 180, 1)])
    cmd(sim, 2, 2, 1, 0, 0, 0, 0, 0, 0, 0)
    run(sim, 200.0)
    b = sim.boats
    assert (b.n[1], b.e[1]) == pytest.approx((50.0, 0.0), abs=6.0)   # 50 m toward the threat


def test_attack_closes_in_deals_damage_per_second_and_kills():
    sim = make([(1, 0, 0, 90, 0), (9, 300, 0, 180, 1)])
    cmd(sim, 1, 0, 0, 0, 0, 3, 0.5, 90, 0, 0)
    cmd(sim, 9, 3, 1, 0, 0, 0, 0, 0, 0, 0)
    first = []
    run(sim, 400.0, lambda: first.append(sim.t) if sim.health[0] < 100 and not first else None)
    assert first, 'the attacker never came within attack_radius'
    assert sim.health[0] == 0.0 and sim.status[0] == 0 and sim.status[1] == 1
    assert 'boat 1: health 0, out of action' in sim.take_events()
    assert not sim.boats.active[0]
    # 100 health at 20 per second: dead 5 s after the first hit
    # (then it coasts to a stop with no thrust)
    run(sim, 120.0)
    assert sim.boats.u[0] < 0.05
    with pytest.raises(ValueError, match='out of action'):
        cmd(sim, 1, 0, 0, 0, 0, 3, 1.0, 0, 0, 0)


def test_attack_damage_rate_and_practice_mode():
    sim = make([(1, 0, 0, 0, 0), (9, 50, 0, 180, 1)])           # already within 100 m
    cmd(sim, 9, 3, 1, 0, 0, 0, 0, 0, 0, 0)
    run(sim, 2.0)
    assert sim.health[0] == pytest.approx(100.0 - 20.0 * 2.0, abs=0.5)
    sim.reset()
    sim.damage_enabled = False                                   # practice session
    cmd(sim, 9, 3, 1, 0, 0, 0, 0, 0, 0, 0)
    run(sim, 10.0)
    assert sim.health[0] == 100.0


def test_obstacle_collision_stops_the_boat_without_passing_through():
    sim = make([(1, 0, 0, 0)], obstacles=[(500, 102, 100.0, 0.0)])     # rock, 15 m
    cmd(sim, 1, 0, 0, 0, 0, 3, 2.0, 0, 0, 0)
    track = []
    run(sim, 120.0, lambda: track.append(sim.boats.n[0]))
    assert sim.collisions['obstacle'] == 1
    assert max(track) < 100.0 - 15.0 - 2.45 + 0.1              # never inside the hull + rock
    assert sim.boats.u[0] == 0.0               # pinned: its command still pushes it on
    assert any('collision (obstacle)' in e for e in sim.take_events())
    # moving away is allowed
    cmd(sim, 1, 0, 0, 0, 0, 3, 2.0, 180, 0, 0)
    run(sim, 60.0)
    assert sim.boats.n[0] < 70.0 and sim.collisions['obstacle'] == 1


def test_map_bounds_and_boat_collisions():
    sim = make([(1, 0, 0, 90), (2, 0, 60, 270)], half_deg=0.002)      # ~220 m map
    cmd(sim, 1, 0, 0, 0, 0, 3, 2.0, 90, 0, 0)
    cmd(sim, 2, 0, 0, 0, 0, 3, 2.0, 270, 0, 0)                        # head-on
    run(sim, 40.0)
    assert sim.collisions['boat'] == 2                   # one contact each; both stop
    assert sim.boats.u[0] == 0.0 and sim.boats.u[1] == 0.0
    gap = sim.boats.e[1] - sim.boats.e[0]
    assert gap >= TYPES.boats[1].length_m - 0.01 and gap < 10.0
    cmd(sim, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0)                            # 2 stops pushing
    cmd(sim, 1, 0, 0, 0, 0, 3, 2.0, 0, 0, 0)                          # 1 turns north, leaves
    run(sim, 200.0)
    north_edge = pymap3d.geodetic2ned(LAT0 + 0.002, LON0, 0, LAT0, LON0, 0)[0]
    assert sim.collisions == {'obstacle': 0, 'bounds': 1, 'boat': 2}
    assert north_edge - 2.5 < sim.boats.n[0] + 2.45 <= north_edge + 0.1


def test_start_overlaps_are_refused_by_name():
    with pytest.raises(FieldError, match=r'boats\[0\]: starts inside obstacle 500'):
        make([(1, 0, 0, 0)], obstacles=[(500, 103, 20.0, 0.0)])
    with pytest.raises(FieldError, match=r'boats\[1\]: starts 3.0 m from boats\[0\]'):
        make([(1, 0, 0, 0), (2, 3, 0, 0)])


def test_reset_restores_the_init_state_and_sea_state_moves_roll():
    sim = make([(1, 0, 0, 45)], wave_degree=4, weather=5)
    cmd(sim, 1, 0, 0, 0, 0, 3, 2.0, 90, 0, 0)
    rolls = []
    run(sim, 30.0, lambda: rolls.append(sim.boats.roll[0]))
    assert max(rolls) > math.radians(5.0) and max(np.abs(rolls)) <= math.radians(25.0)
    sim.reset()
    assert (sim.boats.n[0], sim.boats.e[0], sim.boats.u[0]) == pytest.approx((0, 0, 0),
                                                                            abs=1e-6)
    assert math.degrees(sim.boats.psi[0]) == pytest.approx(45.0) and sim.mode[0] == 0
    # weather 5 (Beaufort): a 9.35 m/s wind from the north drifts a stopped boat south
    run(sim, 60.0)
    assert sim.boats.n[0] < -5.0


def test_columns_follow_the_seed_units():
    sim = make([(1, 0, 0, 270), (2, 100, 0, 10)])
    c = sim.columns()
    assert c['yaw_deg'][0] == pytest.approx(-90.0) and c['yaw_deg'][1] == pytest.approx(10.0)
    assert (c['lon_deg'][0], c['lat_deg'][0]) == pytest.approx((LON0, LAT0), abs=1e-9)
    lon, lat = geo(100.0, 0.0)
    assert (c['lon_deg'][1], c['lat_deg'][1]) == pytest.approx((lon, lat), abs=1e-9)
    assert list(c['status']) == [1, 1] and list(c['health']) == [100.0, 100.0]
    assert set(c) == {name for name, _ in P.CMD21_COLUMNS}


@pytest.mark.parametrize('text, message', [
    ('{not json', 'Expecting property name'),
    ('[26, 2]', 'must be a JSON object, got list'),
    ('"text"', 'must be a JSON object, got str'),
    (b'\xff\xfe', 'not UTF-8'),
    ('{"time_scale": 1}', 'wave_degree: missing'),
    ('{"time_scale": NaN}', 'not a JSON number'),
])
def test_bad_sim_config_file_is_a_clear_error(tmp_path, text, message):
    from sim_core.errors import ConfigError
    path = tmp_path / 'bad.json'
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    with pytest.raises(ConfigError) as e:
        load_swarm_config(str(path), TYPES.boats, TYPES.obstacles, 100)
    assert str(path) in str(e.value) and message in str(e.value)


@pytest.mark.parametrize('text, message', [
    (': [', 'cannot read type table'),
    ('boat_types: {1: wamv}\n', 'expected exactly boat_types and obstacle_types'),
    ('boat_types: {1: 7}\nobstacle_types: {}\n', 'expected integer code: boat file name'),
    ('boat_types: {1: nosuchboat}\nobstacle_types: {}\n', 'cannot read boat type'),
    ('boat_types: {1: wamv}\nobstacle_types: {101: {radius_m: -3}}\n', 'radius_m > 0'),
    ('boat_types: {}\nobstacle_types: {}\n', 'at least one'),
])
def test_bad_type_table_is_a_clear_error(tmp_path, text, message):
    from sim_core.errors import ConfigError
    path = tmp_path / 'types.yaml'
    path.write_text(text)
    with pytest.raises(ConfigError, match=message):
        TypeTable.from_yaml(path)


def test_orders_are_the_swarms_own_types_and_speeds_above_top_are_clamped():
    sim = make([(1, 0, 0, 0), (2, 100, 0, 0)])
    top = float(sim.boats.u_top[0])
    text = sim.command(Order(boat_id=1, motion=Motion.HEADING_SPEED, heading_deg=90.0,
                             speed_mps=top + 20.0))
    assert f'clamped from {top + 20.0:g} m/s' in text
    run(sim, 60.0)
    c = sim.columns()
    # 21 reports what the boat is told: the top speed, not the speed asked for
    assert c['control_mode'][0] == 3 and c['control_b'][0] == pytest.approx(top)
    assert c['control_a'][0] == pytest.approx(90.0)
    assert sim.boats.u[0] == pytest.approx(top, abs=0.3)
    # refused orders name the field and change nothing
    for bad, kind in ((Order(boat_id=9), 'unknown_id'),
                      (Order(boat_id=1, task=Task.ESCORT, target_id=1), 'value'),
                      (Order(boat_id=1, motion=Motion.RUDDER_THROTTLE, rudder_deg=31.0),
                       'value'),
                      (Order(boat_id=1, motion=Motion.WAYPOINT_SPEED), 'value')):
        with pytest.raises(FieldError) as e:
            sim.command(bad)
        assert e.value.kind == kind
    assert sim.columns()['control_b'][0] == pytest.approx(top)


def test_after_a_reset_no_setpoint_is_reported():
    sim = make([(1, 0, 0, 0)])
    cmd(sim, 1, 0, 0, 0, 0, 3, 2.0, 90, 0, 0)
    run(sim, 5.0)
    assert sim.columns()['control_b'][0] == 2.0
    sim.reset()                      # a session end (26:0) or restart
    c = sim.columns()
    assert (c['control_mode'][0], c['control_a'][0], c['control_b'][0]) == (0, 0.0, 0.0)


def test_wrap_180():
    assert wrap_180(180.0) == -180.0 and wrap_180(-180.0) == -180.0
    assert wrap_180(359.0) == pytest.approx(-1.0) and wrap_180(540.5) == pytest.approx(-179.5)
