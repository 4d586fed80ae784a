"""The JSBSim plane, its autopilot, the PFD and the circuit judge (pure: no DDS).

Physics against the Cessna 172R's published figures: Cessna Model 172R Pilot's Operating
Handbook, Section 1 (Specifications: maximum rate of climb at sea level 720 ft/min; stall
speed, flaps up, power off, 51 KCAS) and Section 4 (rotate 55 KIAS, Vy 79 KIAS).
"""

import json
import math

import pytest

from sim_autopilot.core import flight_plan as fp
from sim_autopilot.core.autopilot import Autopilot, FlightState, Limits, Setpoints
from sim_core.errors import ConfigError
from sim_core.geodesy import GeoOrigin, course_deviation_m
from sim_core.kinds import vehicle_file
from sim_core.scenario import load_scenario
from sim_core.units import KNOT_MPS
from sim_core.validate import FieldError
from sim_dynamics.core.pfd import FlightDisplay
from sim_dynamics.core.plane import FT, AircraftParams, EffectorCommand, FlightCommand, Plane
from sim_report.core.plane import PlaneJudge, PlaneSample

DT = 0.008                       # 125 Hz, the graph's rate
ORIGIN = GeoOrigin(29.6073, -95.1588, 10.0)
POH_CLIMB_FPM = 720.0
POH_STALL_KCAS = 51.0
G = 9.80665


def c172():
    return AircraftParams.from_yaml(vehicle_file('plane', 'c172r'))


def plane(alt_m=0.0, heading=0.0, speed_mps=0.0, origin=ORIGIN):
    p = Plane(c172(), origin, DT)
    p.reset((0.0, 0.0, alt_m), heading, speed_mps)
    return p


def state(pl) -> FlightState:
    a, s, f = pl.air_data(), pl.sample(0), pl.fdm
    ve, vn, vu = s.v_enu
    return FlightState(pl.t, a.lat_deg, a.lon_deg, a.h_sl_ft * FT,
                       a.h_sl_ft * FT - pl.origin.alt_m, a.vc_kts, vu, a.roll_rad, a.pitch_rad,
                       math.degrees(a.heading_true_rad) % 360.0,
                       math.degrees(math.atan2(ve, vn)) % 360.0, math.hypot(ve, vn),
                       f['velocities/p-rad_sec'], f['velocities/q-rad_sec'],
                       f['velocities/r-rad_sec'])


def autopilot(pl):
    a = pl.params
    return Autopilot(Limits(a.rotate_kts, a.climb_kts, a.cruise_kts, a.approach_kts,
                            a.max_bank_deg), pl.origin.alt_m)


def fly(pl, ap, seconds, each=None):
    for _ in range(int(round(seconds / DT))):
        s = state(pl)
        o = ap.update(s, DT)
        pl.apply_flight(pl.check_flight(FlightCommand(
            (o.power,), o.roll, o.pitch, o.yaw, 0.0, o.flap, 0.0, 1.0, o.wheel_steer,
            o.wheel_brake)))
        pl.step()
        if each:
            each(s)


def test_trimmed_cruise_at_100_kt_holds_altitude_hands_off():
    pl = plane(1000.0, 90.0, 100.0 * KNOT_MPS)
    a0 = pl.air_data()
    assert a0.vc_kts == pytest.approx(100.0, abs=0.5)
    hs = []
    for _ in range(int(60.0 / DT)):
        pl.step()               # no command: the trim's throttle and pitch trim hold
        hs.append(pl.air_data().h_sl_ft)
    assert max(abs(h - a0.h_sl_ft) for h in hs) < 50.0
    assert pl.air_data().vc_kts == pytest.approx(100.0, abs=3.0)
    # the ENU state agrees with JSBSim's geodetic position and speed
    s = pl.sample(0)
    drop = (s.p_enu[0] ** 2 + s.p_enu[1] ** 2) / (2.0 * 6.371e6)    # the tangent plane
    assert s.p_enu[2] == pytest.approx(pl.air_data().h_sl_ft * FT - ORIGIN.alt_m - drop,
                                       abs=0.2)
    assert s.p_enu[0] > 1500.0 and abs(s.p_enu[1]) < 50.0        # 60 s east at ~52 m/s
    assert math.hypot(*s.v_enu[:2]) == pytest.approx(pl.air_data().vtrue_kts * KNOT_MPS,
                                                     rel=0.02)


def test_full_power_climb_at_vy_matches_the_published_climb_rate():
    pl = plane(10.0, 0.0, 79.0 * KNOT_MPS)
    ap = autopilot(pl)
    ap.set_manual(Setpoints(True, False, 8000.0, True, 79.0, True, False, 0.0))
    hs = []
    fly(pl, ap, 90.0, lambda s: hs.append((s.t, s.alt_msl_m, s.airspeed_kts)))
    (t1, h1, _), (t2, h2, v2) = hs[int(30 / DT)], hs[-1]
    fpm = (h2 - h1) / (t2 - t1) / FT * 60.0
    assert v2 == pytest.approx(79.0, abs=2.0)
    # JSBSim's c172r climbs ~835 ft/min at 2436 lb near sea level: +16 % on the POH's 720
    assert POH_CLIMB_FPM * 0.8 < fpm < POH_CLIMB_FPM * 1.2, fpm


def test_power_off_stall_speed_matches_the_published_figure():
    pl = plane(1000.0, 0.0, 80.0 * KNOT_MPS)
    f = pl.fdm
    h0, i_err, vmin = pl.air_data().h_sl_ft, 0.0, 1e9
    for _ in range(int(40.0 / DT)):
        a = pl.air_data()
        err = (h0 - a.h_sl_ft) * FT
        i_err += err * DT
        # idle power, pull to hold the altitude until the wing stalls
        pitch = max(-1.0, min(1.0, 0.05 * err + 0.01 * i_err - 0.5 * f['velocities/q-rad_sec']))
        pl.apply_flight(FlightCommand((0.0,), -0.5 * a.roll_rad, pitch))
        pl.step()
        if abs(a.h_sl_ft - h0) < 100.0:
            vmin = min(vmin, a.vc_kts)
    assert pl.air_data().alpha_deg > 15.0                 # stalled: beyond the lift peak
    assert POH_STALL_KCAS * 0.85 < vmin < POH_STALL_KCAS * 1.15, vmin


def test_a_30_degree_bank_turns_at_g_tan_phi_over_v():
    pl = plane(1000.0, 0.0, 100.0 * KNOT_MPS)
    f = pl.fdm
    a0 = pl.air_data()
    h0, th0, i_pitch, i_roll = a0.h_sl_ft, a0.pitch_rad, 0.0, 0.0
    rates = []
    for k in range(int(40.0 / DT)):
        a = pl.air_data()
        # bank 30 deg (PI + roll damping); pitch up for the load factor, near level
        th_sp = th0 + math.radians(3.0) + 0.003 * (h0 - a.h_sl_ft) * FT - 0.02 * a.h_dot_fps * FT
        i_pitch += (th_sp - a.pitch_rad) * DT
        i_roll += (math.radians(30.0) - a.roll_rad) * DT
        roll = 1.5 * (math.radians(30.0) - a.roll_rad) + 0.5 * i_roll \
            - 0.3 * f['velocities/p-rad_sec']
        pitch = 2.0 * (th_sp - a.pitch_rad) + 0.6 * i_pitch - 0.3 * f['velocities/q-rad_sec']
        pl.apply_flight(FlightCommand((1.0,), max(-1.0, min(1.0, roll)),
                                      max(-1.0, min(1.0, pitch))))
        h_before = math.degrees(a.heading_true_rad)
        pl.step()
        if k * DT > 15.0:       # settled in the turn
            a2 = pl.air_data()
            d = (math.degrees(a2.heading_true_rad) - h_before + 180.0) % 360.0 - 180.0
            rates.append((d / DT, a2.roll_rad, a2.vtrue_kts * KNOT_MPS))
    assert abs(pl.air_data().h_sl_ft - h0) < 150.0           # a level turn, near enough
    mean = lambda xs: sum(xs) / len(xs)     # noqa: E731
    rate = mean([r for r, _, _ in rates])
    phi, v = mean([p for _, p, _ in rates]), mean([v for _, _, v in rates])
    assert math.degrees(phi) == pytest.approx(30.0, abs=1.0)
    assert math.radians(rate) == pytest.approx(G * math.tan(phi) / v, rel=0.10)


def test_the_autopilot_holds_settle_on_altitude_heading_and_speed():
    pl = plane(300.0, 0.0, 100.0 * KNOT_MPS)
    ap = autopilot(pl)
    target_ft = (ORIGIN.alt_m + 300.0) / FT + 500.0
    ap.set_manual(Setpoints(True, False, target_ft, True, 90.0, True, False, 90.0))
    tail = []
    fly(pl, ap, 150.0, lambda s: tail.append(s) if s.t > 120.0 else None)
    assert tail
    assert max(abs(s.alt_msl_m / FT - target_ft) for s in tail) < 50.0
    assert max(abs((s.heading_deg - 90.0 + 180.0) % 360.0 - 180.0) for s in tail) < 2.0
    assert max(abs(s.airspeed_kts - 90.0) for s in tail) < 3.0
    st = ap.status()
    assert st.mode == 'manual' and st.target_altitude_ft == target_ft


def test_attitude_hold_keeps_the_roll_and_pitch_of_the_moment():
    pl = plane(500.0, 0.0, 100.0 * KNOT_MPS)
    ap = autopilot(pl)
    fly(pl, ap, 1.0)
    s0 = state(pl)
    ap.set_manual(Setpoints(False, True))
    fly(pl, ap, 20.0)
    s = state(pl)
    assert ap.mode == 'attitude'
    assert abs(math.degrees(s.roll - s0.roll)) < 2.0
    assert abs(math.degrees(s.pitch - s0.pitch)) < 2.0


def test_pfd_fields_are_jsbsims_properties_in_aerosims_units():
    pl = plane(800.0, 45.0, 95.0 * KNOT_MPS)
    for _ in range(200):
        pl.apply_flight(FlightCommand((0.7,), 0.2, 0.05))
        pl.step()
    f = pl.fdm
    d = FlightDisplay().update(pl.air_data(), 3000.0, False, math.nan, math.nan)
    assert d.airspeed_kts == f['velocities/vc-kts']
    assert d.true_airspeed_kts == f['velocities/vtrue-kts']
    assert d.altitude_ft == f['position/h-sl-ft']            # standard setting 29.92
    assert d.target_altitude_ft == 3000.0
    assert d.altimeter_pressure_setting_inhg == 29.92
    assert d.vertical_speed_fpm == pytest.approx(f['velocities/h-dot-fps'] * 60.0)
    assert d.pitch_deg == pytest.approx(math.degrees(f['attitude/pitch-rad']))
    assert d.roll_deg == pytest.approx(math.degrees(f['attitude/roll-rad']))
    assert d.side_slip_fps2 == f['accelerations/vdot-ft_sec2']
    assert d.heading_deg == pytest.approx(math.degrees(f['attitude/heading-true-rad']) % 360)
    assert (d.hsi_course_select_heading_deg, d.hsi_course_deviation_deg, d.hsi_mode) == \
        (0.0, 0.0, 0)
    # a higher altimeter setting reads higher, 1000 ft per inHg
    d2 = FlightDisplay(30.92).update(pl.air_data(), 0.0, False, math.nan, math.nan)
    assert d2.altitude_ft == pytest.approx(f['position/h-sl-ft'] + 1000.0)


def test_pfd_hsi_course_and_deviation_toward_the_active_leg():
    disp = FlightDisplay()
    pl = plane(300.0, 0.0, 100.0 * KNOT_MPS)
    a = pl.air_data()
    disp.update(a, 0.0, False, math.nan, math.nan)        # no target: the course starts here
    north, _, _ = ORIGIN.enu_to_geodetic(0.0, 5000.0, 0.0)
    d = disp.update(a._replace(lon_deg=a.lon_deg + 0.01), 0.0, True, north, a.lon_deg)
    assert d.hsi_course_select_heading_deg == pytest.approx(0.0, abs=0.1)
    # ~967 m east of a northbound course: right of it, 12 deg per 5 NM
    off = course_deviation_m(a.lat_deg, a.lon_deg, north, a.lon_deg, a.lat_deg,
                             a.lon_deg + 0.01)
    assert off == pytest.approx(967.0, rel=0.01)
    assert d.hsi_course_deviation_deg == pytest.approx(off * 12.0 / 5.0 / 1852.0)


def test_the_circuit_is_flown_to_the_end_and_judged_on_ground_truth():
    sc = load_scenario('circuit')
    pl = Plane(c172(), sc.origin, DT)
    assert pl.reset(sc.initial_position_enu, sc.initial_yaw_deg) == 'ground'
    ap = autopilot(pl)
    ap.load_plan(fp.from_mission(sc.mission, sc.origin.alt_m, sc.initial_yaw_deg, 55.0))
    ap.run(state(pl))
    judge = PlaneJudge(sc)
    phases = set()

    def each(s):
        phases.add(ap.status().phase)
        if int(s.t / DT) % 25 == 0:
            e, n, u = sc.origin.geodetic_to_enu(s.lat_deg, s.lon_deg, s.alt_msl_m)
            judge.add(PlaneSample(s.t, (float(e), float(n), float(u)), s.airspeed_kts,
                                  math.degrees(s.roll), math.degrees(s.pitch), s.heading_deg))
    fly(pl, ap, 480.0, each)
    assert ap.mode == 'done', ap.status()
    assert [k for k, _, _ in ap.legs_done()] == list(range(6))
    assert {'takeoff roll', 'rotate', 'climb', 'cruise', 'approach', 'flare', 'rollout',
            'at rest'} <= phases
    s = judge.summary()
    assert s['result'] == 'complete' and s['items_flown'] == 6, s
    assert all(abs(leg['altitude_error_m']) < 20.0 for leg in s['legs']), s['legs']
    assert s['max_bank_deg'] < 30.0
    # the legs between the crosswind turn and the approach fix at the cruise speed
    t2, t4 = judge.flown[2][1], judge.flown[4][1]
    cruise = [x.airspeed_kts for x in judge.samples if t2 + 20.0 < x.t < t4 - 20.0]
    assert 95.0 < sum(cruise) / len(cruise) < 105.0
    # the landing: on the point, on the centerline, gently, stopped on the runway
    td = s['landing']
    assert td['verdict'] == 'landed', td
    assert -20.0 < td['touchdown_along_m'] < 150.0 and abs(td['touchdown_across_m']) < 5.0, td
    assert td['touchdown_sink_mps'] < 1.0 and td['max_rollout_across_m'] < 5.0, td
    assert 55.0 < td['touchdown_airspeed_kts'] < 70.0, td      # the approach's 65 kt, flared
    assert 100.0 < td['rollout_m'] < 700.0, td


@pytest.mark.parametrize('cmd,field', [
    (EffectorCommand(throttle=[float('nan')]), 'throttle_cmd[0]'),
    (EffectorCommand(throttle=[0.5, 0.5]), 'throttle_cmd: 2 values'),
    (EffectorCommand(aileron_rad=[0.1, 0.1, 0.1]), 'aileron_cmd_angle_rad: 3 values'),
    (EffectorCommand(aileron_rad=[math.radians(16.0)]), 'aileron_cmd_angle_rad[0]'),
    (EffectorCommand(elevator_rad=[math.radians(-29.0)]), 'elevator_cmd_angle_rad[0]'),
    (EffectorCommand(rudder_rad=[float('inf')]), 'rudder_cmd_angle_rad[0]'),
    (EffectorCommand(flap_rad=[-0.1]), 'flap_cmd_angle_rad[0]'),
    (EffectorCommand(wheel_brake=[0.0, 1.0]), 'wheel_brake_cmd: 2 values'),
    (EffectorCommand(wheel_steer_rad=[0.5]), 'wheel_steer_cmd_angle_rad[0]'),
])
def test_garbage_effector_commands_are_refused_with_the_field_named(cmd, field):
    pl = plane(500.0)
    before = pl.fdm['fcs/elevator-cmd-norm'], pl.fdm['fcs/throttle-cmd-norm[0]']
    with pytest.raises(FieldError, match=field.replace('[', r'\[').replace(']', r'\]')):
        pl.check_effectors(cmd)
    assert (pl.fdm['fcs/elevator-cmd-norm'], pl.fdm['fcs/throttle-cmd-norm[0]']) == before


@pytest.mark.parametrize('cmd,field', [
    (FlightCommand(power=[1.2]), 'power_cmd[0]'),
    (FlightCommand(power=[0.5, 0.5]), 'power_cmd: 2 values'),
    (FlightCommand(roll=float('nan')), 'roll_cmd'),
    (FlightCommand(pitch=-1.5), 'pitch_cmd'),
    (FlightCommand(wheel_brake=2.0), 'wheel_brake_cmd'),
])
def test_garbage_flight_commands_are_refused_with_the_field_named(cmd, field):
    with pytest.raises(FieldError, match=field.replace('[', r'\[').replace(']', r'\]')):
        plane(500.0).check_flight(cmd)


def test_surface_angles_reach_jsbsims_surfaces_in_their_own_signs():
    pl = plane(1000.0, 0.0, 100.0 * KNOT_MPS)
    pl.apply_effectors(pl.check_effectors(EffectorCommand(
        aileron_rad=[math.radians(10.0), math.radians(-10.0)], elevator_rad=[math.radians(-5)],
        rudder_rad=[math.radians(4.0)], flap_rad=[math.radians(10.0)])))
    for _ in range(300):
        pl.step()
    s = pl.surfaces()
    assert math.degrees(s.aileron_left_rad) == pytest.approx(10.0, abs=0.1)
    assert math.degrees(s.aileron_right_rad) == pytest.approx(-10.0, abs=0.1)
    assert math.degrees(s.elevator_rad) == pytest.approx(-5.0, abs=0.1)
    assert math.degrees(s.rudder_rad) == pytest.approx(4.0, abs=0.1)
    assert math.degrees(s.flap_rad) == pytest.approx(10.0, abs=0.1)
    # left aileron trailing edge down rolls right; elevator trailing edge up pitches up
    assert pl.air_data().roll_rad > math.radians(20.0)


def test_flight_plans_in_aerosims_json_parse_and_refuse_bad_fields():
    text = json.dumps([
        {'step': 0, 'command': 'takeoff', 'takeoff_speed_kts': 59.0, 'target_altitude_ft': 500,
         'throttle': 1.0, 'heading_deg': 0, 'completion_criteria': ['altitude_ft', '>=', 500]},
        {'step': 1, 'command': 'go_to_waypoint',
         'waypoint': {'latitude_deg': 29.635359, 'longitude_deg': -95.199791,
                      'altitude_ft': 500.0}, 'completion_criteria': ['distance_ft', '<', 500]},
        {'step': 8, 'command': 'land', 'completion_criteria': ['altitude_ft', '<=', 30.0]}])
    plan = fp.parse_plan(text)
    assert [s.command for s in plan] == ['takeoff', 'go_to_waypoint', 'land']
    assert plan[1].done({'distance_ft': 499.0}) and not plan[1].done({'distance_ft': 501.0})
    assert fp.parse_plan(fp.to_json(plan)) == plan
    for bad, field in (('[', 'not JSON'), ('[]', 'list of 1..'),
                       ('[{"command": "loop"}]', r'flight_plan\[0\].command'),
                       ('[{"command": "go_to_waypoint", "waypoint": {"latitude_deg": 91, '
                        '"longitude_deg": 0, "altitude_ft": 0}}]', 'waypoint.latitude_deg'),
                       ('[{"command": "land", "completion_criteria": ["x", "<", 1]}]',
                        r'completion_criteria\[0\]')):
        with pytest.raises(ConfigError, match=field):
            fp.parse_plan(bad)


def test_bad_aircraft_and_scenario_fields_are_named(tmp_path):
    f = tmp_path / 'bad.yaml'
    f.write_text('name: x\njsbsim_model: c172r\nelevator_deg: [5, 23]\n')
    with pytest.raises(ConfigError, match='elevator_deg'):
        AircraftParams.from_yaml(f)
    f.write_text('name: x\njsbsim_model: no_such_plane\nelevator_deg: [-28, 23]\n'
                 'aileron_deg: [-20, 15]\nrudder_deg: 16\nflap_deg: 30\nsteer_deg: 10\n'
                 'rotate_kts: 55\nclimb_kts: 79\ncruise_kts: 100\napproach_kts: 65\n'
                 'max_bank_deg: 25\n')
    with pytest.raises(ConfigError, match='cannot load'):
        Plane(AircraftParams.from_yaml(f), ORIGIN, DT)
    s = tmp_path / 's.yaml'
    s.write_text('origin: {lat_deg: 0, lon_deg: 0}\nvehicle: {kind: plane, params: c172r}\n'
                 'environment: {turbulence: stormy}\n')
    with pytest.raises(ConfigError, match='environment.turbulence'):
        load_scenario(s)


def test_turbulence_shakes_the_plane_and_the_holds_ride_it_out():
    """MIL-F-8785C turbulence (scenario environment.turbulence): more with each intensity."""
    spread = {}
    for turb in ('none', 'light', 'moderate'):
        pl = Plane(c172(), ORIGIN, DT, (0.0, 0.0, 0.0), turb)
        pl.reset((0.0, 0.0, 600.0), 0.0, 100.0 * KNOT_MPS)
        ap = autopilot(pl)
        target_ft = (ORIGIN.alt_m + 600.0) / FT
        ap.set_manual(Setpoints(True, False, target_ft, True, 100.0, True, False, 0.0))
        st = []
        fly(pl, ap, 90.0, st.append)
        vs = [s.climb_mps for s in st[len(st) // 4:]]
        spread[turb] = math.sqrt(sum(v * v for v in vs) / len(vs))
        assert max(abs(s.alt_msl_m / FT - target_ft) for s in st[len(st) // 4:]) < 100.0
    assert spread['none'] < 0.1 < spread['light'] < spread['moderate'], spread


def test_flight_plan_run_pause_stop_as_aerosims_autopilotcommand():
    """RUN flies the plan, PAUSE holds where it is, RUN resumes, STOP then RUN restarts."""
    sc = load_scenario('circuit')
    pl = Plane(c172(), sc.origin, DT)
    pl.reset((0.0, 0.0, 305.0), 40.0, 100.0 * KNOT_MPS)     # airborne, at circuit height
    ap = autopilot(pl)
    plan = fp.from_mission(sc.mission[1:], sc.origin.alt_m, 40.0, 55.0)    # the 5 waypoints
    ap.load_plan(plan)
    assert ap.mode == 'stopped' and ap.step == -1
    ap.run(state(pl))
    fly(pl, ap, 5.0)
    assert (ap.mode, ap.step) == ('plan', 0) and ap.status().target_wp_active
    ap.pause()
    fly(pl, ap, 1.0)
    s0 = state(pl)
    fly(pl, ap, 30.0)
    s1 = state(pl)
    assert ap.mode == 'paused' and not ap.status().target_wp_active
    assert abs((s1.heading_deg - s0.heading_deg + 180.0) % 360.0 - 180.0) < 3.0   # holds
    assert abs(s1.alt_msl_m - s0.alt_msl_m) < 15.0
    ap.run(state(pl))
    assert (ap.mode, ap.step) == ('plan', 0)                # resumes its step
    fly(pl, ap, 60.0)
    assert ap.step >= 1
    ap.stop()
    assert (ap.mode, ap.step) == ('stopped', -1)
    ap.run(state(pl))
    assert (ap.mode, ap.step) == ('plan', 0)                # from the first step again
    ap.pause()
    ap.stop()
    assert ap.mode == 'stopped'


def test_a_state_running_away_stops_the_model_with_a_clear_error_not_garbage():
    """A speed no C172 reaches stops the model with ModelDiverged.

    JSBSim diverged (full surfaces and throttle on the ground: positions ~1e18 m), and the
    HIL_SENSOR pack raised OverflowError in plane_plant.
    """
    from sim_core.errors import ModelDiverged
    pl = plane(alt_m=1000.0, speed_mps=50.0)
    for _ in range(10):
        pl.step()                                  # a normal flight steps on
    f = pl.fdm
    f['ic/h-sl-ft'] = f['position/h-sl-ft']
    f['ic/vc-kts'] = 5000.0                        # a state no aircraft model should reach
    f.run_ic()
    with pytest.raises(ModelDiverged, match='ran away'):
        pl.step()
