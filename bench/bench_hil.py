"""Closed-loop HIL benchmark: real-time factor of sim_quad_hil in lockstep, as fast as possible.

1. The whole graph (dynamics, MAVLink bridge, built-in FC over UDP, flight_report; sensor
   topics off) flies a scenario's mission; the real-time factor is sim time / wall time of the
   flight, from flight_report's summary: from liftoff to the end (the free-run before the FC
   connects runs much faster and is left out).
2. The floor: the same model, sensors, MAVLink framing and FC in one process, no ROS, no
   sockets (mavlink_bridge.fc.offline), steps per second.
Usage: python bench/bench_hil.py [scenario]   (default: default)
"""

import json
import os
import subprocess
import sys
import tempfile
import time

from mavlink_bridge.fc.offline import fly
from sim_core.scenario import load_scenario


def main():
    scenario = sys.argv[1] if len(sys.argv) > 1 else 'default'
    sc = load_scenario(scenario)
    t0 = time.perf_counter()
    _, judge, steps = fly(sc)
    wall = time.perf_counter() - t0
    print(f'offline loop (1 process, no ROS): {steps} steps in {wall:.2f} s = '
          f'{steps / wall:.0f} steps/s = RTF {steps * 0.004 / wall:.2f} at 250 Hz '
          f'(mission {"complete" if judge.done else "INCOMPLETE"})')
    with tempfile.TemporaryDirectory() as out:
        env = dict(os.environ, ROS_DOMAIN_ID=os.environ.get('ROS_DOMAIN_ID', '91'))
        t0 = time.perf_counter()
        p = subprocess.run([sys.executable, '-m', 'sim_core.cli', 'launch', 'sim_quad_hil',
                            'report:=true', 'time_scale:=0', 'sensor_topics:=false',
                            f'scenario:={scenario}', f'output_dir:={out}'], env=env,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=1200)
        wall = time.perf_counter() - t0
        try:
            s = json.load(open(os.path.join(out, 'sim_quad_hil_summary.json')))
        except OSError:
            print(p.stdout.decode()[-3000:])
            raise
    print(f'graph sim_quad_hil (4 processes, DDS + UDP, lockstep): mission {s["result"]}, '
          f'{s["sim_time_s"]} s sim; in flight (lockstep) RTF {s["flight_real_time_factor"]} '
          f'({s["flight_real_time_factor"] * 250:.0f} steps/s); whole run incl. the free-run '
          f'before the FC connects RTF {s["real_time_factor"]}, {wall:.0f} s wall incl. start-up')


if __name__ == '__main__':
    main()
