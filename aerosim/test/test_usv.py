"""Physics of the vectorized boat model (sim_dynamics.core.usv): no ROS."""

import math

import numpy as np
import pytest

from sim_core.errors import ConfigError
from sim_core.paths import resolve_config_path
from sim_dynamics.core.usv import BoatSwarm, BoatType

DT = 0.05


def boat_type(name):
    return BoatType.from_yaml(resolve_config_path(f'boats/{name}.yaml'))


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
    from dataclasses import replace
    t = replace(boat_type('wamv'), drag_quadratic=0.0)     # linear drag: a first-order system
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
    ({'top_speed_mps': 'fast'}, 'top_speed_mps: must be a finite number'),
    ({'rudder_max_deg': 120}, 'rudder_max_deg: must be <= 90'),
    ({'colour': 'red'}, 'unknown field'),
])
def test_bad_boat_file_names_the_field(tmp_path, edit, match):
    import yaml
    raw = yaml.safe_load(resolve_config_path('boats/wamv.yaml').read_text())
    raw.update(edit)
    p = tmp_path / 'b.yaml'
    p.write_text(yaml.safe_dump(raw))
    with pytest.raises(ConfigError, match=match):
        BoatType.from_yaml(p)
