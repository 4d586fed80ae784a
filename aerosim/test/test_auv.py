"""The AUV kind, pure (no ROS): the LAUV model, its file, its controller, judge and fins.

The 6-DOF model's physics, its parameter file, its built-in controller and judge in a world,
its effector command over a link.

Physics tests check the equations against what they must give: the float depth from the
buoyancy, the steady speed where thrust meets drag, the fins' senses, the righting moment of
the buoyancy above the centre of gravity, the current carrying a stopped vehicle.
"""

import math
from pathlib import Path

import pytest
from sim_world.core.world import World

from kinds.auv.controllers import AuvPilot, thrust_for_speed
from kinds.auv.judge import DEPTH_TOLERANCE_M, AuvJudge
from kinds.auv.model import AuvModel
from kinds.entry import make_controller, make_model
from sim_core.errors import ConfigError
from sim_core.frames import euler_ned_to_quat
from sim_core.geodesy import GeoOrigin
from sim_core.kinds import vehicle_file
from sim_core.members import world_members
from sim_core.scenario import load_scenario, scenario_from_dict
from sim_dynamics.core.auv import Auv, AuvType, fin_table

ORIGIN = GeoOrigin(41.185242, -8.706139, 0.0)
LAUV = vehicle_file('auv', 'lauv')
DT = 0.01


def lauv():
    return AuvType.from_yaml(LAUV)


def run(a: Auv, seconds: float):
    for _ in range(int(round(seconds / DT))):
        a.step(DT)


def test_a_stopped_lauv_floats_up_and_rests_with_the_hull_just_out_of_the_water():
    t = lauv()
    a = Auv(t)
    a.reset(p_ned=(0.0, 0.0, 3.0))
    run(a, 1.0)
    assert a.velocity_ned()[2] < -0.01                      # rising: reserve buoyancy 1.96 N
    run(a, 120.0)
    # at rest where buoyancy = weight: the submerged fraction of the hull's height is W / B
    w, b = t.mass_kg * 9.80665, t.mass_kg * 9.80665 + t.reserve_buoyancy_n
    float_depth = (w / b - 0.5) * t.diameter_m
    assert a.depth == pytest.approx(float_depth, abs=0.005)
    assert 0.06 < a.depth < 0.075                            # 1.6 cm of a 15 cm hull out
    assert all(abs(x) < math.radians(0.5) for x in a.euler()[:2])


@pytest.mark.parametrize('speed', [0.8, 1.25, 1.6])
def test_at_the_actuation_whose_thrust_meets_the_drag_the_lauv_runs_at_that_speed(speed):
    """VSIM's thruster law T = (k1 n - k2 U)|n| against X_u u + X_uu u|u|: a 3 % check."""
    t = lauv()
    a = Auv(t)
    a.reset(p_ned=(0.0, 0.0, 20.0))
    a.command(thrust_for_speed(t, speed))
    run(a, 60.0)
    assert a.speed() == pytest.approx(speed, rel=0.03)
    # in equilibrium with the surge drag, but for the small other surge forces (the free AUV
    # pitches a few degrees: weight less buoyancy along x, Kirchhoff's terms)
    assert a.thrust_n == pytest.approx(-(t.linear_drag[0] * a.nu[0]
                                         + t.quadratic_drag[0] * a.nu[0] ** 2), rel=0.1)


def test_the_fins_senses_are_dunes_elevators_pitch_the_nose_down_rudders_turn_to_port():
    """VSIM's fins: a positive elevator lifts the tail, a positive rudder pushes it to starboard.

    Elevators are fins 1 and 2, rudders 0 and 3; the two rudders' roll moments cancel.
    """
    t = lauv()
    for fins, axis, sign in (([0.0, 0.2, 0.2, 0.0], 4, -1.0), ([0.2, 0.0, 0.0, 0.2], 5, -1.0),
                             ([0.0, -0.2, -0.2, 0.0], 4, 1.0)):
        a = Auv(t)
        a.reset(p_ned=(0.0, 0.0, 20.0), nu=(1.25, 0.0, 0.0, 0.0, 0.0, 0.0))
        a.command(thrust_for_speed(t, 1.25), fins)
        run(a, 0.5)
        assert sign * a.nu[axis] > 0.02, (fins, a.nu)      # q (pitch) or r (yaw) rate
        assert abs(a.euler()[0]) < math.radians(1.0)        # no roll from the rudders
    # the moment of one fin is r x F: 0.455 m x 4.82 N x (0.2 / 0.4363) at 1 m/s
    a = Auv(t)
    a.reset(p_ned=(0.0, 0.0, 20.0), nu=(1.0, 0.0, 0.0, 0.0, 0.0, 0.0))
    a.command(0.0, [0.0, 0.2, 0.0, 0.0])
    a.step(1e-4)
    assert a.nu_dot[4] * t.inertia_kgm2[1] == pytest.approx(-0.455 * 4.82 * 0.2 / 0.4363,
                                                            rel=0.05)


def test_the_buoyancy_above_the_centre_of_gravity_rights_a_rolled_lauv():
    a = Auv(lauv())
    a.reset(p_ned=(0.0, 0.0, 10.0), q=euler_ned_to_quat(math.radians(30.0), 0.0, 0.0))
    run(a, 0.3)
    assert a.nu[3] < -0.1                                   # rolling back
    run(a, 15.0)
    assert abs(a.euler()[0]) < math.radians(1.0)


def test_the_current_carries_a_stopped_lauv():
    # neutrally buoyant (a LAUV rises and glides on its reserve buoyancy)
    a = Auv(lauv().model_copy(update={'reserve_buoyancy_n': 0.0}), current_ned=(0.0, -0.3, 0.0))
    a.reset(p_ned=(0.0, 0.0, 10.0))
    run(a, 30.0)
    v = a.velocity_ned()
    assert v[1] == pytest.approx(-0.3, abs=0.01) and abs(v[0]) < 0.01
    assert a.p[1] == pytest.approx(-9.0, abs=0.1)


def _write(tmp_path: Path, text: str) -> Path:
    p = tmp_path / 'bad.yaml'
    p.write_text(text)
    return p


@pytest.mark.parametrize('change, named', [
    (('mass_kg: 18.0', 'mass_kg: -1'), 'mass_kg'),
    (('mass_kg: 18.0', 'mass_kg: .nan'), 'mass_kg'),
    (('max_rpm: 2500.0', ''), 'max_rpm: required'),
    (('linear_drag: [-2.4,', 'linear_drag: [2.4,'), 'diagonal damping'),
    (('surface: elevator, position_m: [-0.455, 0.08', 'surface: wing, position_m: [-0.455, 0.08'),
     'surface'),
    (('{servo: 3,', '{servo: 2,'), 'two fins with one servo id'),
    (('body_lift: [-20.6,', 'body_lift: [-20.6, 1.0,'), 'body_lift'),
    (('name: lauv', 'name: lauv\ncolour: red'), 'colour: unknown key'),
])
def test_a_bad_auv_file_is_refused_naming_the_field(tmp_path, change, named):
    text = LAUV.read_text()
    assert change[0] in text
    with pytest.raises(ConfigError, match=named):
        AuvType.from_yaml(_write(tmp_path, text.replace(change[0], change[1], 1)))


def test_fin_table_reads_an_auvs_fins_and_a_boat_has_none():
    assert fin_table(LAUV) == ((0, 'rudder'), (1, 'elevator'), (2, 'elevator'), (3, 'rudder'))
    boat = vehicle_file('boat', 'wamv')
    assert fin_table(boat) == ()


def _scenario(mission, **vehicle):
    return scenario_from_dict({
        'name': 'auv_test',
        'origin': {'lat_deg': ORIGIN.lat_deg, 'lon_deg': ORIGIN.lon_deg, 'alt_m': 0.0},
        'vehicle': {'kind': 'auv', 'params': 'lauv', 'initial_position_enu': [0, 0, 0],
                    **vehicle},
        'environment': {'surface': 'water'}, 'mission': mission})


def _wp(e, n, **kw):
    lat, lon, _ = ORIGIN.enu_to_geodetic(e, n, 0.0)
    return {'command': 'waypoint', 'lat_deg': lat, 'lon_deg': lon, **kw}


def test_a_mission_item_takes_a_depth_and_refuses_it_with_an_altitude_or_negative():
    sc = _scenario([_wp(0, 50, depth_m=5.0)])
    assert sc.mission[0].alt_m == -5.0
    with pytest.raises(ConfigError, match='alt_m or depth_m'):
        _scenario([_wp(0, 50, depth_m=5.0, alt_m=-5.0)])
    with pytest.raises(ConfigError, match=r'depth_m'):
        _scenario([_wp(0, 50, depth_m=-2.0)])


def test_the_builtin_controller_dives_runs_the_leg_at_depth_surfaces_and_is_judged_complete():
    """The shipped dive plan in a world, judged on truth: every item within 1 m of its depth."""
    sc = load_scenario('dive')
    ms = world_members(sc)
    w = World.build(ms, make_model, make_controller)
    pilot, model = w.controller('auv0'), w.model('auv0')
    assert isinstance(pilot, AuvPilot) and isinstance(model, AuvModel)
    judge = AuvJudge(ms[0].scenario)
    t_ns, lines = 0, []
    while not (judge.over and pilot.done) and t_ns < 600e9:
        w.step(0.004, t_ns)
        t_ns += 4_000_000
        s = w.samples[0]
        judge.feed(t_ns * 1e-9, s.p_enu, s.v_enu)
        lines += [text for _, text in pilot.log]
        pilot.log.clear()
    s = judge.summary()
    assert s['result'] == 'complete' and pilot.done, (s, lines)
    assert all(abs(d - 5.0) <= DEPTH_TOLERANCE_M for d in s['depth_at_reach_m'][:2])
    assert s['depth_rms_error_at_depth_m'] < 0.3 and s['max_depth_m'] < 6.0
    assert any('at the surface: holding 20 s' in x for x in lines), lines
    # ~280 m at 1.25 m/s, the floating up and the 20 s hold
    assert 220.0 < t_ns * 1e-9 < 320.0


def test_the_judge_wants_the_depth_and_the_hold_at_the_surface():
    sc = _scenario([_wp(0, 20, depth_m=5.0, acceptance_radius_m=3.0),
                    _wp(0, 40, depth_m=0.0, hold_s=10.0, acceptance_radius_m=3.0)])
    j = AuvJudge(sc)
    j.feed(1.0, (0.0, 20.0, -3.5), (0, 0, 0))               # over it, 1.5 m too shallow
    assert j.reached_at_s == []
    j.feed(2.0, (0.0, 20.0, -4.2), (0, 0, 0))
    assert j.reached_at_s == [2.0]
    j.feed(3.0, (0.0, 40.0, -0.5), (0, 0, 0))               # there, not yet up
    assert len(j.reached_at_s) == 1
    j.feed(4.0, (0.0, 40.0, -0.07), (0, 0, 0))              # surfaced: reached, holding
    assert j.reached_at_s == [2.0, 4.0] and not j.done
    j.feed(9.0, (0.0, 40.0, -1.0), (0, 0, 0))               # dived again: the hold restarts
    j.feed(10.0, (0.0, 40.0, -0.07), (0, 0, 0))
    j.feed(19.0, (0.0, 40.0, -0.07), (0, 0, 0))
    assert not j.done
    j.feed(20.0, (0.0, 40.0, -0.07), (0, 0, 0))
    assert j.done and j.summary()['result'] == 'complete'
    deep = AuvJudge(sc)
    deep.feed(1.0, (0.0, 5.0, -101.0), (0, 0, 0))            # beyond its rated 100 m
    assert deep.over and deep.summary()['result'] == 'crushed'


def test_an_auv_over_a_link_takes_its_fins_by_role_and_refuses_guidance():
    from sim_core.validate import FieldError
    model = make_model(world_members(load_scenario('dive'))[0])
    model.effector([0.4], [0.1, 0.2], [0.3, -0.3])
    assert model.auv.thrust_act == 0.4
    assert model.auv.fin_cmd == pytest.approx([0.1, 0.3, -0.3, 0.2])   # fins 0, 3 rudders
    model.effector([], [], [0.05])                           # the first elevator fin only
    assert model.auv.fin_cmd == pytest.approx([0.1, 0.05, -0.3, 0.2])
    for bad in (([1.5], [], []), ([], [0.1, 0.1, 0.1], []), ([float('nan')], [], [])):
        with pytest.raises(FieldError):
            model.effector(*bad)
    with pytest.raises(FieldError, match='actuator'):
        model.holds(90.0, 1.0)
    assert model.auv.fin_cmd == pytest.approx([0.1, 0.05, -0.3, 0.2])  # nothing changed


def test_the_auvs_sensors_gnss_only_at_the_surface_dvl_over_the_seabed_within_range():
    import numpy as np

    from sim_sensors.core.underwater import UnderwaterParams, UnderwaterSensors
    p = UnderwaterParams(depth_std_m=0.0, gnss_std_m=0.0, dvl_std_mps=0.0, ahrs_std_rad=0.0,
                         ahrs_rate_std_rps=0.0)
    s = UnderwaterSensors(p, np.random.default_rng(0), water_depth_m=20.0)
    nu = (1.2, 0.0, 0.0, 0.0, 0.0, 0.0)
    r = s.sample(0, (10.0, 5.0, 0.1), (0.0, 0.0, 0.0), nu, (0.0, 0.3, 0.0))
    assert r.gnss_ne == (10.0, 5.0) and r.depth_m == pytest.approx(0.1)
    assert r.dvl_bottom and r.dvl_uvw == pytest.approx((1.2, 0.3, 0.0))   # over ground
    r = s.sample(1_000_000_000, (10.0, 5.0, 0.25), (0.0, 0.0, math.pi / 2), nu,
                 (0.0, 0.3, 0.0))
    assert r.gnss_ne is None and r.gnss_lost                 # 5 cm too deep: no fix
    assert r.dvl_uvw == pytest.approx((1.5, 0.0, 0.0))       # heading east: the current ahead
    assert r.euler == pytest.approx((0.0, 0.0, math.pi / 2))
    deep = UnderwaterSensors(p, np.random.default_rng(0), water_depth_m=50.0)
    r = deep.sample(0, (0.0, 0.0, 5.0), (0.0, 0.0, 0.0), nu, (0.0, 0.3, 0.0))
    assert not r.dvl_bottom and r.dvl_uvw == pytest.approx((1.2, 0.0, 0.0))  # water track
    assert UnderwaterSensors(p, np.random.default_rng(0)).bottom_lock(5.0) is False
    # the noise: same seed, same stream; its spread as declared
    a, b = (UnderwaterSensors(UnderwaterParams(), np.random.default_rng(3)) for _ in range(2))
    da = [a.sample(k * 100_000_000, (0, 0, 5.0), (0, 0, 0), nu).depth_m for k in range(2000)]
    db = [b.sample(k * 100_000_000, (0, 0, 5.0), (0, 0, 0), nu).depth_m for k in range(2000)]
    assert da == db and np.std(da) == pytest.approx(0.05, rel=0.1)
    with pytest.raises(ConfigError, match='gnss_rate_hz'):
        UnderwaterParams(gnss_rate_hz=0.0)


def test_the_builtin_controller_navigates_on_its_sensors_and_a_fix_corrects_it():
    """Under water it dead-reckons on the DVL; the first fix after the dive says how far off."""
    sc = load_scenario('dive')
    ms = world_members(sc)
    w = World.build(ms, make_model, make_controller)
    pilot, model = w.controller('auv0'), w.model('auv0')
    t_ns, worst = 0, 0.0
    while not pilot.done and t_ns < 600e9:
        w.step(0.004, t_ns)
        t_ns += 4_000_000
        if model.auv.depth > 0.5:
            worst = max(worst, math.dist(pilot.nav.ne, model.auv.p[:2]))
    assert pilot.done and 0.0 < worst < 3.0, worst          # bottom lock at 5 m over 20 m
    (t_fix, jump), = pilot.nav.corrections
    assert 150.0 < t_fix < 300.0 and jump < 5.0


def test_an_environment_water_depth_is_checked():
    d = {'name': 'x', 'origin': {'lat_deg': 41.0, 'lon_deg': -8.0, 'alt_m': 0.0},
         'vehicle': {'kind': 'auv', 'params': 'lauv'}}
    assert scenario_from_dict(dict(d, environment={'water_depth_m': 20})).environment \
        .water_depth_m == 20.0
    for bad in (-1.0, 'deep', float('inf'), True):
        with pytest.raises(ConfigError, match='water_depth_m'):
            scenario_from_dict(dict(d, environment={'water_depth_m': bad}))
