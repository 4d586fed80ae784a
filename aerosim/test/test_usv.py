"""Physics of the vectorized boat model and its speed/heading holds (sim_dynamics.core): no ROS."""

import math

import numpy as np
import pytest

from sim_core.errors import ConfigError
from sim_core.kinds import vehicle_file
from sim_dynamics.core.usv import BoatSwarm, BoatType, boat_state_ned, rudder_aerosim_starboard
from sim_dynamics.core.usv_control import HeadingSpeedControl

DT = 0.05


def boat_type(name):
    return BoatType.from_yaml(vehicle_file('boat', name))


def run(swarm, seconds):
    for _ in range(int(round(seconds / DT))):
        swarm.step(DT)


@pytest.mark.parametrize('name', ['wamv', 'otter'])
def test_full_throttle_reaches_the_top_speed_and_thrust_balances_drag(name):
    t = boat_type(name)
    s = BoatSwarm([t])
    s.command(1.0, 0.0)
    run(s, 120.0)
    assert s.u[0] == pytest.approx(t.top_speed_mps, rel=1e-3)
    # at the top speed the thrust equals the drag: no acceleration left
    assert abs(s.u_dot[0]) < 1e-3
    assert s.n[0] > 0.5 * t.top_speed_mps * 120.0 and abs(s.e[0]) < 1e-6   # north, straight


def test_surge_step_response_time_constant_is_mass_over_linear_drag():
    t = boat_type('wamv').model_copy(update={'drag_quadratic': 0.0})    # linear: first order
    s = BoatSwarm([t])
    s.gas_rate[:] = 1e3                      # a throttle step, not a ramp
    s.command(1.0, 0.0)
    tau = t.mass_kg * (1 + t.added_mass_ratio) / t.drag_linear
    run(s, tau)
    assert s.u[0] / t.top_speed_mps == pytest.approx(1 - math.exp(-1), abs=0.01)
    run(s, 9 * tau)
    assert s.u[0] / t.top_speed_mps == pytest.approx(1.0, abs=1e-3)


def test_steady_turn_matches_nomoto_gain_and_time_constant():
    t = boat_type('otter')
    s = BoatSwarm([t])
    s.command(1.0, 0.0)
    run(s, 60.0)                              # at top speed
    s.rudder_rate[:] = 1e3                    # rudder step
    s.command(1.0, math.radians(10.0))
    r_ss = t.nomoto_K * math.radians(10.0)    # u = U_top: K (u / U_top) delta
    s.step(DT)
    run(s, t.nomoto_T - DT)
    assert s.r[0] / r_ss == pytest.approx(1 - math.exp(-1), abs=0.05)
    run(s, 10 * t.nomoto_T)
    assert s.r[0] == pytest.approx(r_ss, rel=0.02)
    assert s.v[0] < 0.0                       # drifts outward (to port) in a starboard turn


def test_rudder_and_throttle_limits_and_rates():
    s = BoatSwarm([boat_type('wamv')])
    s.command(5.0, math.radians(80.0))        # clipped to 1 and to 30 deg
    assert s.throttle_cmd[0] == 1.0 and math.degrees(s.rudder_cmd[0]) == pytest.approx(30.0)
    s.step(0.5)
    assert math.degrees(s.rudder[0]) == pytest.approx(15.0)    # 30 deg/s
    assert s.throttle[0] == pytest.approx(0.5)                  # gas_outputRate 100 %/s
    with pytest.raises(ValueError):
        s.command(float('nan'), 0.0)
    assert s.throttle_cmd[0] == 1.0                             # unchanged by the reject


def test_current_and_wind_drift_a_boat_at_rest_and_sea_state_bounds():
    t = boat_type('otter')
    s = BoatSwarm([t])
    s.set_environment(current_ne=(0.2, -0.1), wind_ne=(0.0, 10.0), sea_state=5)
    run(s, 10.0)
    assert s.n[0] == pytest.approx(2.0, abs=1e-6)
    assert s.e[0] == pytest.approx((-0.1 + t.windage * 10.0) * 10.0, abs=1e-6)
    assert 0 < np.max(np.abs(s.roll)) <= math.radians(25.0)
    with pytest.raises(ConfigError):
        s.set_environment(sea_state=10)


def test_many_boats_step_together_like_one():
    types = [boat_type('wamv'), boat_type('otter')] * 50
    many = BoatSwarm(types)
    rng = np.random.default_rng(3)
    thr, rud = rng.uniform(-1, 1, 100), rng.uniform(-0.5, 0.5, 100)
    many.command(thr, rud)
    run(many, 20.0)
    for i in (0, 1, 57):
        one = BoatSwarm([types[i]])
        one.command(thr[i], rud[i])
        run(one, 20.0)
        assert (one.n[0], one.e[0], one.psi[0]) == pytest.approx(
            (many.n[i], many.e[i], many.psi[i]), abs=1e-9)


def test_inactive_boat_stops():
    s = BoatSwarm([boat_type('wamv')] * 2)
    s.command(1.0, 0.0)
    run(s, 30.0)
    s.active[1] = False
    run(s, 60.0)
    assert s.u[1] < 0.05 and s.u[0] > 2.0


@pytest.mark.parametrize('edit,match', [
    ({'mass_kg': -1}, 'mass_kg: must be > 0'),
    ({'top_speed_mps': 'fast'}, 'top_speed_mps: must be a number'),
    ({'rudder_max_deg': 120}, 'rudder_max_deg: must be <= 90'),
    ({'colour': 'red'}, 'colour: unknown key'),
])
def test_bad_boat_file_names_the_field(tmp_path, edit, match):
    import yaml
    raw = yaml.safe_load(vehicle_file('boat', 'wamv').read_text())
    raw.update(edit)
    p = tmp_path / 'b.yaml'
    p.write_text(yaml.safe_dump(raw))
    with pytest.raises(ConfigError, match=match):
        BoatType.from_yaml(p)


# --- speed and heading holds (sim_dynamics.core.usv_control) ------------------------------------


def run_held(swarm, control, seconds):
    for _ in range(int(round(seconds / DT))):
        control.update(DT)
        swarm.step(DT)


@pytest.mark.parametrize('gain', [0.2, 0.5, 1.0])
def test_speed_hold_error_decays_with_time_constant_one_over_tas2acc_gain(gain):
    # The gain is DUNE's tas2acc_pgain: acceleration per m/s of speed error. With the drag
    # cancelled, a small setpoint step decays as exp(-gain t).
    s = BoatSwarm([boat_type('wamv')])
    c = HeadingSpeedControl(s, speed_gain=gain, speed_i_gain=0.0)
    c.hold_speed(1.0)
    run_held(s, c, 60.0)
    assert s.u[0] == pytest.approx(1.0, abs=1e-3)
    c.hold_speed(1.2)
    t0, target = s.t, 1.0 + 0.2 * (1.0 - math.exp(-1.0))
    while s.u[0] < target:
        run_held(s, c, DT)
        assert s.t - t0 < 30.0
    assert s.t - t0 == pytest.approx(1.0 / gain, rel=0.08)


@pytest.mark.parametrize('name', ['wamv', 'otter'])
@pytest.mark.parametrize('heading_deg,speed', [(90.0, 1.5), (-135.0, 1.0), (200.0, 0.8)])
def test_heading_and_speed_holds_reach_their_setpoints_in_current_wind_and_waves(
        name, heading_deg, speed):
    t = boat_type(name)
    s = BoatSwarm([t])
    s.set_environment(current_ne=(0.3, -0.2), wind_ne=(0.0, 5.0), sea_state=4)
    c = HeadingSpeedControl(s)
    c.hold_speed(min(speed, 0.8 * t.top_speed_mps))
    c.hold_heading(math.radians(heading_deg))
    run_held(s, c, 120.0)
    err = (math.degrees(s.psi[0]) - heading_deg + 180.0) % 360.0 - 180.0
    assert abs(err) < 2.0                                   # the bound
    assert s.u[0] == pytest.approx(min(speed, 0.8 * t.top_speed_mps), abs=0.2)
    assert abs(s.r[0]) < 1e-3                               # settled, not oscillating


def test_astern_hold_and_release_back_to_manual():
    s = BoatSwarm([boat_type('wamv')])
    c = HeadingSpeedControl(s)
    c.hold_speed(-0.5)
    run_held(s, c, 60.0)
    assert s.u[0] == pytest.approx(-0.5, abs=0.02) and s.throttle[0] < 0.0
    c.release()
    s.command(0.0, 0.0)
    run_held(s, c, 60.0)
    assert abs(s.u[0]) < 0.05 and s.throttle_cmd[0] == 0.0   # the manual command rules again


def test_holds_are_per_boat_and_reject_nan():
    s = BoatSwarm([boat_type('wamv')] * 3)
    c = HeadingSpeedControl(s)
    c.hold_speed(1.0, idx=1)
    with pytest.raises(ValueError):
        c.hold_heading(float('nan'), idx=0)
    run_held(s, c, 60.0)
    assert s.u[1] == pytest.approx(1.0, abs=0.01)
    assert s.u[0] == 0.0 and s.u[2] == 0.0 and not c.heading_hold.any()


def test_positive_aerosim_rudder_turns_the_bow_to_port():
    s = BoatSwarm([boat_type('wamv')])
    s.command(0.5, rudder_aerosim_starboard(math.radians(10.0)))   # AeroSim: trailing edge to port
    run(s, 20.0)
    assert s.r[0] < 0.0 and s.psi[0] < 0.0                      # NED yaw decreasing: to port
    assert rudder_aerosim_starboard(rudder_aerosim_starboard(0.3)) == 0.3


def test_body_rates_are_the_derivatives_of_the_wave_attitude_and_heading():
    # p, q, r of the state must be what a gyro sees: the Euler angle rates of the reported
    # attitude (DUNE's AHRS simulator passes p, q, r on as AngularVelocity). Differentiate the
    # reported attitude and compare with the Euler rates of the reported body rates (ZYX).
    s = BoatSwarm([boat_type('wamv')])
    s.set_environment(sea_state=4)
    s.command(0.6, math.radians(15.0))            # turning: psi' != 0 couples into q and r
    dt = 0.002
    for _ in range(500):
        s.step(dt)
    errors, p_all = [], []
    for _ in range(1500):                          # 3 s, about one wave period
        _p, _v, (phi0, th0, psi0), w0, _a = boat_state_ned(s)
        s.step(dt)
        _p, _v, (phi1, th1, psi1), w1, _a = boat_state_ned(s)
        p, q, r = (w0 + w1) / 2.0
        phi, th = (phi0 + phi1) / 2.0, (th0 + th1) / 2.0
        dphi = p + (q * math.sin(phi) + r * math.cos(phi)) * math.tan(th)
        dth = q * math.cos(phi) - r * math.sin(phi)
        dpsi = (q * math.sin(phi) + r * math.cos(phi)) / math.cos(th)
        errors.append(((phi1 - phi0) / dt - dphi, (th1 - th0) / dt - dth,
                       math.remainder(psi1 - psi0, 2 * math.pi) / dt - dpsi))
        p_all.append(p)
    err = np.sqrt(np.mean(np.square(errors), axis=0))
    p_rms = float(np.sqrt(np.mean(np.square(p_all))))
    assert np.all(err < 2e-3), err
    assert p_rms > 50 * err[0] and p_rms > 0.02, p_rms      # the waves do roll the boat
