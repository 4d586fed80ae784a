"""AUV benchmark: the LAUV model's steps per second and the sim_auv graph's real-time factor.

1. The model (sim_dynamics.core.auv.Auv, RK4 at 100 Hz) against the peer measured in the same
   run: the same equations integrated as DUNE's VSIM integrates them (explicit Euler at its
   100 Hz). Steps per second of each, and each one's error on a 60 s run (a dive at full
   elevator, then level at 1.25 m/s: position and pitch against RK4 at 1 kHz).
2. The graph: `sim_auv report:=true time_scale:=0` (the dive plan, built-in controller) against
   the same world carrying a WAM-V on waypoints over the same 290 m (sim_world, one boat): wall
   time of the whole run, sim time, real-time factor, and the ratio.
Usage: python bench/bench_auv.py [runs, default 2]
"""

import json
import math
import os
from pathlib import Path
import subprocess
import sys
import tempfile
import time

import yaml

from kinds.auv.controllers import thrust_for_speed
from sim_dynamics.core.auv import Auv, AuvType

ROOT = Path(__file__).resolve().parent.parent / 'aerosim'
BASE_DOMAIN = int(os.environ.get('AEROSIM_BENCH_DOMAIN', '170'))


def euler_step(a: Auv, dt: float) -> None:
    """VSIM's explicit Euler step of the same equations (Object::update)."""
    p_dot, q_dot, nu_dot = a._deriv(a.q, a.nu, a.p[2])
    a.p = [x + dt * d for x, d in zip(a.p, p_dot)]
    q = [x + dt * d for x, d in zip(a.q, q_dot)]
    n = math.sqrt(sum(x * x for x in q))
    a.q = [x / n for x in q]
    a.nu = [x + dt * d for x, d in zip(a.nu, nu_dot)]


def manoeuvre(t: AuvType, step, dt: float, seconds: float = 60.0) -> Auv:
    """Full elevator down for 5 s, then level fins at the 1.25 m/s actuation."""
    a = Auv(t)
    a.reset(p_ned=(0.0, 0.0, 2.0), nu=(1.25, 0.0, 0.0, 0.0, 0.0, 0.0))
    act = thrust_for_speed(t, 1.25)
    for k in range(int(round(seconds / dt))):
        fins = [0.0, 0.3, 0.3, 0.0] if k * dt < 5.0 else [0.0] * 4
        a.command(act, fins)
        step(a, dt)
    return a


def model_bench(t: AuvType) -> dict:
    ref = manoeuvre(t, Auv.step, 0.001)
    out = {}
    for name, step in (('rk4', Auv.step), ('euler (VSIM)', euler_step)):
        t0 = time.perf_counter()
        a = manoeuvre(t, step, 0.01)
        wall = time.perf_counter() - t0
        out[name] = {'steps_per_s': round(6000 / wall),
                     'position_error_m': round(math.dist(a.p, ref.p), 6),
                     'pitch_error_deg': round(abs(math.degrees(a.euler()[1]
                                                               - ref.euler()[1])), 6)}
    return out


def run_graph(graph: str, out: str, domain: int, *args: str) -> dict:
    env = dict(os.environ, ROS_DOMAIN_ID=str(domain))
    t0 = time.monotonic()
    p = subprocess.run([sys.executable, '-m', 'sim_launch.cli', 'launch', graph,
                        'report:=true', 'time_scale:=0', f'output_dir:={out}', *args],
                       env=env, capture_output=True, text=True, timeout=1800)
    wall = time.monotonic() - t0
    path = Path(out) / 'latest' / 'summary.json'          # this run's folder
    if p.returncode != 0 or not path.exists():
        raise RuntimeError(f'{graph}: exit {p.returncode}\n{p.stdout[-3000:]}')
    s = json.loads(path.read_text())
    return {'wall_s': round(wall, 2), 'sim_s': s['sim_time_s'],
            'rtf': round(s['sim_time_s'] / wall, 2), 'result': s['result']}


def boat_scenario(out: str) -> str:
    """The dive plan's points for a WAM-V on waypoints, alone in a world."""
    d = yaml.safe_load((ROOT / 'config' / 'scenarios' / 'dive.yaml').read_text())
    mission = [{k: v for k, v in it.items() if k not in ('depth_m', 'hold_s')}
               for it in d['mission']]
    s = dict(d, name='dive_boat', vehicle={'kind': 'boat', 'params': 'wamv',
                                           'initial_position_enu': [0.0, 0.0, 0.0],
                                           'initial_yaw_deg': 0.0},
             mission=mission)
    path = Path(out) / 'dive_boat.yaml'
    path.write_text(yaml.safe_dump(s))
    return str(path)


def main():
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 2
    t = AuvType.from_yaml(ROOT / 'kinds' / 'auv' / 'params' / 'lauv.yaml')
    m = model_bench(t)
    r = m['rk4']['steps_per_s'] / m['euler (VSIM)']['steps_per_s']
    print(f'model: {json.dumps(m)}; RK4 / Euler steps per second {r:.2f}x; a 100 Hz model '
          f'runs {m["rk4"]["steps_per_s"] / 100:.0f}x real time on one core')
    for k in range(runs):
        with tempfile.TemporaryDirectory() as out:
            auv = run_graph('sim_auv', out, BASE_DOMAIN + 2 * k)
            boat = run_graph('sim_world', out, BASE_DOMAIN + 2 * k + 1,
                             f'scenario:={boat_scenario(out)}')
        print(f'run {k + 1}: sim_auv {json.dumps(auv)}; the same world with a WAM-V on the '
              f'same points {json.dumps(boat)}; RTF ratio {auv["rtf"] / boat["rtf"]:.2f}x')


if __name__ == '__main__':
    main()
