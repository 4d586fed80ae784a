"""Multirotor physics: hover, free fall, yaw torque, motor lag, ground contact, energy."""

import math
from pathlib import Path

import numpy as np
import pytest

from sim_core.errors import ConfigError
from sim_dynamics.core.multirotor import GRAVITY, Multirotor, MultirotorParams

VEHICLES = Path(__file__).resolve().parent.parent / 'kinds' / 'multirotor' / 'params'
DT = 0.004


def load(name='iris', **override):
    import yaml
    d = yaml.safe_load((VEHICLES / f'{name}.yaml').read_text())
    d.update(override)
    return MultirotorParams.from_dict(d)


@pytest.mark.parametrize('name', ['iris', 'jmavsim_quad'])
def test_shipped_parameter_sets_load_with_sources(name):
    p = MultirotorParams.from_yaml(VEHICLES / f'{name}.yaml')
    assert p.source
    assert len(p.rotors) == 4
    assert 0.3 < p.hover_throttle() < 0.9
    # PX4 Quad X order: 0 front-right CCW, 1 rear-left CCW, 2 front-left CW, 3 rear-right CW
    pos = [r.position for r in p.rotors]
    assert pos[0][0] > 0 > pos[0][1] and pos[1][0] < 0 < pos[1][1]
    assert pos[2][0] > 0 and pos[2][1] > 0 and pos[3][0] < 0 and pos[3][1] < 0
    assert [r.direction for r in p.rotors] == [1, 1, -1, -1]


def test_masses_match_the_sources():
    assert load('iris').mass == 1.5
    assert load('jmavsim_quad').mass == 0.8


@pytest.mark.parametrize('name', ['iris', 'jmavsim_quad'])
def test_hover_at_analytic_throttle_holds_altitude(name):
    p = load(name)
    m = Multirotor(p)
    m.reset(p_enu=(0.0, 0.0, 10.0), omega=[p.hover_omega()] * 4)
    h = p.hover_throttle()
    # thrust at the hover throttle balances the weight exactly
    assert math.isclose(len(p.rotors) * p.k_f * p.throttle_to_omega(h) ** 2, p.weight,
                        rel_tol=1e-12)
    for _ in range(int(10.0 / DT)):
        m.step(DT, [h] * 4)
    s = m.state()
    assert abs(s.p_enu[2] - 10.0) < 0.01
    assert np.linalg.norm(s.p_enu[:2]) < 0.01
    assert np.linalg.norm(s.w_flu) < 1e-6


def test_free_fall_matches_g_and_conserves_energy():
    p = load('iris', drag_linear=[0, 0, 0], drag_quadratic=[0, 0, 0])
    m = Multirotor(p)
    m.reset(p_enu=(0.0, 0.0, 100.0))
    t = 2.0
    for _ in range(int(t / DT)):
        m.step(DT, [0.0] * 4)
    s = m.state()
    assert math.isclose(s.p_enu[2], 100.0 - 0.5 * GRAVITY * t * t, abs_tol=1e-9)
    assert math.isclose(s.v_enu[2], -GRAVITY * t, abs_tol=1e-9)
    assert math.isclose(s.a_enu[2], -GRAVITY, abs_tol=1e-12)
    energy = 0.5 * p.mass * np.dot(s.v_enu, s.v_enu) + p.mass * GRAVITY * s.p_enu[2]
    assert math.isclose(energy, p.mass * GRAVITY * 100.0, rel_tol=1e-12)


def test_drag_gives_terminal_velocity():
    p = load('jmavsim_quad')      # quadratic drag 0.01 N/(m/s)^2 on z
    m = Multirotor(p)
    m.reset(p_enu=(0.0, 0.0, 5000.0))
    for _ in range(int(40.0 / DT)):
        m.step(DT, [0.0] * 4)
    v_term = math.sqrt(p.weight / p.drag_quadratic[2])
    assert math.isclose(-m.state().v_enu[2], v_term, rel_tol=1e-3)


def test_pure_yaw_torque_gives_analytic_yaw_acceleration():
    p = load('jmavsim_quad', drag_angular=[0, 0, 0])    # symmetric arms
    m = Multirotor(p)
    # CCW rotors faster, CW rotors slower: no roll/pitch torque (symmetric pairs), net yaw torque
    o_ccw, o_cw = 800.0, 700.0
    omega = [o_ccw, o_ccw, o_cw, o_cw]
    m.reset(p_enu=(0.0, 0.0, 50.0), omega=omega)
    thr = [p.omega_to_throttle(o) for o in omega]
    m.set_throttles(thr)
    tau_z = -p.k_m * (2 * o_ccw ** 2 - 2 * o_cw ** 2)       # CCW rotors push the body CW
    expected = tau_z / p.inertia[2]
    assert math.isclose(m.acceleration[5], expected, rel_tol=1e-12)
    assert expected < 0
    m.step(DT, thr)
    t = DT
    for _ in range(24):
        m.step(DT, thr)
        t += DT
    s = m.state()
    assert math.isclose(s.w_flu[2], expected * t, rel_tol=1e-3)
    assert abs(s.w_flu[0]) < 1e-9 and abs(s.w_flu[1]) < 1e-9


def test_motor_lag_time_constant_from_step_response():
    p = load('iris')
    m = Multirotor(p)
    m.reset(p_enu=(0.0, 0.0, 100.0))
    target = p.throttle_to_omega(0.5)
    dt = 0.0005
    t, trace = 0.0, []
    while t < 5 * p.tau_up:
        m.step(dt, [0.5] * 4)
        t += dt
        trace.append((t, m.state().omega[0]))
    # time at which the response crosses 63.2 % of the step = the time constant
    t63 = next(tt for tt, o in trace if o >= (1 - math.exp(-1)) * target)
    assert abs(t63 - p.tau_up) <= dt + 1e-9
    # spin-down uses tau_down
    m.reset(p_enu=(0.0, 0.0, 100.0), omega=[target] * 4)
    t = 0.0
    while t < p.tau_down - 1e-12:
        m.step(dt, [0.0] * 4)
        t += dt
    assert math.isclose(m.state().omega[0], target * math.exp(-1), rel_tol=0.01)


def test_rests_on_ground_at_start_without_sinking_or_drifting():
    m = Multirotor(load('iris'))
    for _ in range(int(5.0 / DT)):
        m.step(DT, [0.2] * 4)      # spinning but below hover: stays down
    s = m.state()
    assert s.on_ground
    assert s.p_enu[2] == 0.0 and np.allclose(s.v_enu, 0.0) and np.allclose(s.a_enu, 0.0)
    assert np.allclose(s.q_enu_flu, [1, 0, 0, 0])


def test_dropped_vehicle_lands_without_bounce_or_explosion():
    m = Multirotor(load('iris'))
    m.reset(p_enu=(0.0, 0.0, 2.0))
    heights = []
    for _ in range(int(3.0 / DT)):
        m.step(DT, [0.0] * 4)
        heights.append(m.state().p_enu[2])
    assert min(heights) >= 0.0
    landed = heights.index(0.0)
    assert max(heights[landed:]) == 0.0          # never leaves the ground again
    s = m.state()
    assert np.allclose(s.v_enu, 0.0) and np.all(np.isfinite(s.q_enu_flu))


def test_takes_off_above_hover_throttle_and_quaternion_stays_unit():
    p = load('jmavsim_quad')
    m = Multirotor(p)
    h = p.hover_throttle()
    thr = [h + 0.05, h + 0.05, h + 0.04, h + 0.04]     # climbs and yaws
    for _ in range(int(3.0 / DT)):
        m.step(DT, thr)
        assert abs(np.linalg.norm(m.state().q_enu_flu) - 1.0) < 1e-12
    s = m.state()
    assert s.p_enu[2] > 1.0
    assert s.w_flu[2] < -0.1


def test_wind_pushes_a_hovering_vehicle_downwind():
    p = load('iris')
    m = Multirotor(p, wind_enu=(3.0, 0.0, 0.0))
    m.reset(p_enu=(0.0, 0.0, 20.0), omega=[p.hover_omega()] * 4)
    for _ in range(int(2.0 / DT)):
        m.step(DT, [p.hover_throttle()] * 4)
    assert m.state().v_enu[0] > 0.5


@pytest.mark.parametrize('field,value,match', [
    ('mass', -1.0, 'mass'),
    ('mass', 'heavy', 'mass'),
    ('inertia', [0.1, 0.1], 'inertia'),
    ('inertia', [0.1, 0.0, 0.1], 'inertia'),
    ('k_f', float('nan'), 'k_f'),
    ('rotors', [], 'rotors'),
    ('throttle_curve', 'cubic', 'throttle_curve'),
    ('tau_up', 0.0, 'tau_up'),
    ('mass', 100.0, 'weight'),
])
def test_bad_parameters_are_rejected_naming_the_field(field, value, match):
    with pytest.raises(ConfigError, match=match):
        load('iris', **{field: value})


def test_bad_rotor_direction_is_rejected():
    with pytest.raises(ConfigError, match=r'rotors\[1\]\.direction'):
        load('iris', rotors=[{'position': [0, 0, 0], 'direction': 'ccw'},
                             {'position': [0, 0, 0], 'direction': 'up'}])
