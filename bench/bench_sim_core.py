"""Benchmark: multirotor model steps per second vs RotorPy, and camera frames per second.

Both multirotor models are stepped at 250 Hz (4 ms) from hover in the same process, one after
the other, best of several repeats. RotorPy's ``Multirotor.step`` integrates with
scipy.integrate.solve_ivp (RK45); aerosim's uses fixed-step RK4 on plain floats.
"""

import platform
import time

import numpy as np

DT = 0.004


def best_rate(fn, n, repeats=5):
    """Best steps/s of fn() called n times, over repeats."""
    best = 0.0
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        best = max(best, n / (time.perf_counter() - t0))
    return best


def aerosim_rate():
    from sim_core.kinds import vehicle_file
    from sim_dynamics.core.multirotor import Multirotor, MultirotorParams
    p = MultirotorParams.from_yaml(vehicle_file('multirotor', 'iris'))
    m = Multirotor(p)
    m.reset(p_enu=(0.0, 0.0, 10.0), omega=[p.hover_omega()] * 4)
    thr = [p.hover_throttle()] * 4
    rate = best_rate(lambda: m.step(DT, thr), 5000)
    assert abs(m.state().p_enu[2] - 10.0) < 0.05
    return rate


def rotorpy_rate(aero):
    from rotorpy.vehicles.hummingbird_params import quad_params
    from rotorpy.vehicles.multirotor import Multirotor
    np.random.seed(0)
    m = Multirotor(quad_params, aero=aero)
    state = dict(m.initial_state)
    hover = np.sqrt(quad_params['mass'] * 9.81 / (4 * quad_params['k_eta']))
    state['rotor_speeds'] = np.full(4, hover)
    control = {'cmd_motor_speeds': np.full(4, hover)}
    holder = {'s': state}

    def step():
        holder['s'] = m.step(holder['s'], control, DT)
    return best_rate(step, 500, repeats=3)


def camera_fps():
    from sim_core.scenario import load_scenario
    from sim_sensors.core.camera import CameraParams, PinholeCamera, encode
    cam = PinholeCamera(CameraParams(), load_scenario('default').objects)
    q = np.array([1.0, 0.0, 0.0, 0.0])
    pose = {'k': 0}

    def render():
        pose['k'] += 1
        cam.render((0.0, 0.1 * pose['k'], 10.0), q)

    def render_jpeg():
        pose['k'] += 1
        encode(cam.render((0.0, 0.1 * pose['k'], 10.0), q), 'jpeg', 80)
    return best_rate(render, 30, 3), best_rate(render_jpeg, 30, 3)


def main():
    print(f'machine: {platform.machine()}, Python {platform.python_version()}, '
          f'numpy {np.__version__}')
    ours = aerosim_rate()
    print(f'aerosim Multirotor.step (iris, RK4 @ 250 Hz):        {ours:10.0f} steps/s  '
          f'(RTF {ours * DT:7.1f} for one vehicle)')
    for aero in (True, False):
        theirs = rotorpy_rate(aero)
        print(f'RotorPy Multirotor.step (hummingbird, aero={str(aero):5s}): {theirs:10.0f} steps/s'
              f'  -> aerosim is {ours / theirs:5.1f}x')
    r, rj = camera_fps()
    print(f'camera 640x480 render:          {r:6.1f} fps (one core)')
    print(f'camera 640x480 render + JPEG:   {rj:6.1f} fps (one core)')


if __name__ == '__main__':
    main()
