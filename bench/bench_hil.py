"""Closed-loop HIL benchmark: real-time factor of sim_quad_hil in lockstep, and pacing.

1. The floor: the same model, sensors, MAVLink framing and FC in one process, no ROS, no
   sockets (mavlink_bridge.fc.offline), steps per second.
2. The graph as shipped (composition:=plant: the world and the bridge in one process,
   world_plant, built-in FC over UDP, the judge in the world's process; sensor topics off),
   lockstep as fast as possible: the in-flight real-time factor from the run's summary, from
   liftoff to the end (the start before the FC flies is left out).
3. The peer in the same run: the same graph with composition:=split (the world, world_node,
   and the bridge in separate processes over DDS topics).
4. Real-time mode (time_scale:=1, lockstep): the share of steps that ran late, over several
   runs on the quiet machine; then with one core kept busy by another process (a busy loop),
   with normal scheduling and with realtime_priority:=50 (SCHED_FIFO, where permitted).
Usage: python bench/bench_hil.py [scenario] [real-time runs]   (default: default 5)
"""

import contextlib
import json
import os
import subprocess
import sys
import tempfile
import time

from mavlink_bridge.fc.offline import fly
from sim_core.realtime import fifo_permitted
from sim_core.scenario import load_scenario

STEP_S = 0.004
RT_PRIORITY = 'realtime_priority:=50'


def run_graph(scenario: str, *args: str) -> dict:
    """Run sim_quad_hil with report:=true and the given launch arguments; its summary."""
    with tempfile.TemporaryDirectory() as out:
        env = dict(os.environ, ROS_DOMAIN_ID=os.environ.get('ROS_DOMAIN_ID', '91'))
        t0 = time.perf_counter()
        p = subprocess.run([sys.executable, '-m', 'sim_launch.cli', 'launch', 'sim_quad_hil',
                            'report:=true', 'sensor_topics:=false', f'scenario:={scenario}',
                            f'output_dir:={out}', *args], env=env,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=1200)
        try:
            s = json.load(open(os.path.join(out, 'latest', 'summary.json')))
        except OSError:
            print(p.stdout.decode()[-3000:])
            raise
    s['wall_incl_startup_s'] = time.perf_counter() - t0
    return s


@contextlib.contextmanager
def busy_core():
    """Another process keeping one core busy (a pure-Python busy loop) while the block runs."""
    p = subprocess.Popen([sys.executable, '-c', 'while True: pass'])
    try:
        yield
    finally:
        p.kill()
        p.wait()


def real_time_runs(scenario: str, runs: int, *args: str) -> str:
    """Late-step shares [%] of runs real-time flights (whole run, and from liftoff)."""
    shares = []
    for _ in range(runs):
        s = run_graph(scenario, 'time_scale:=1', *args)
        assert s['lockstep_timeouts'] == 0 and s['result'] == 'complete', s
        shares.append(f'{100 * s["late_step_share"]:.2f} % '
                      f'({100 * (s.get("flight_late_step_share") or 0.0):.2f} % in flight)')
    return ', '.join(shares)


def main():
    scenario = sys.argv[1] if len(sys.argv) > 1 else 'default'
    runs = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    sc = load_scenario(scenario)
    t0 = time.perf_counter()
    _, judge, steps = fly(sc)
    wall = time.perf_counter() - t0
    floor = steps / wall
    print(f'offline loop (1 process, no ROS, no sockets): {steps} steps in {wall:.2f} s = '
          f'{floor:.0f} steps/s = RTF {floor * STEP_S:.2f} at 250 Hz '
          f'(mission {"complete" if judge.done else "INCOMPLETE"})')
    rtf = {}
    for comp, what in (('plant', 'world+bridge in 1 process, FC over UDP'),
                       ('split', 'world and bridge over DDS topics, FC over UDP')):
        s = run_graph(scenario, 'time_scale:=0', f'composition:={comp}')
        rtf[comp] = s['flight_real_time_factor']
        print(f'graph sim_quad_hil composition:={comp} ({what}), lockstep as fast as possible: '
              f'mission {s["result"]}, {s["sim_time_s"]} s sim; in flight RTF {rtf[comp]} '
              f'({rtf[comp] / STEP_S:.0f} steps/s, {rtf[comp] / STEP_S / floor:.2f}x the '
              f'offline floor); whole run incl. the free-run RTF {s["real_time_factor"]}, '
              f'{s["wall_incl_startup_s"]:.0f} s wall incl. start-up')
    print(f'composition plant vs split: {rtf["plant"] / rtf["split"]:.2f}x the in-flight RTF')
    print(f'real time (time_scale:=1, lockstep, plant), late steps of {runs} runs, quiet '
          f'machine: {real_time_runs(scenario, runs)}', flush=True)
    with busy_core():
        print(f'real time, one core busy elsewhere: '
              f'{real_time_runs(scenario, 2)}', flush=True)
        why = fifo_permitted()
        if why:
            print(f'real time, one core busy, {RT_PRIORITY}: not measured ({why})')
        else:
            print(f'real time, one core busy, {RT_PRIORITY}: '
                  f'{real_time_runs(scenario, 2, RT_PRIORITY)}', flush=True)


if __name__ == '__main__':
    main()
