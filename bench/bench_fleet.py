"""Fleet benchmark: N quads with built-in FCs in one simulation clock (sim_quad_hil vehicles:=N).

1. As fast as possible (time_scale:=0, lockstep): the real-time factor of the fleet flying the
   default mission (N copies placed apart by sim_core.fleet: 40 m east since 2026-11-27),
   for N = 1, 2, 4, 8, from the run's summary (the judge in the world's process)
   (in flight: from the first liftoff to the end). Its throughput is N x RTF vehicle-seconds
   per wall second.
2. The peer: the same N vehicles as N independent single-vehicle graphs run side by side (each
   its own clock, domain and ports), as one would without a fleet (and as N separate
   jMAVSim/SIH simulators run); their summed throughput, same machine, same run.
3. Real time (time_scale:=1): the largest N whose flight keeps real time (in-flight RTF >= 0.97
   and fewer than 1 % late steps), trying N = 1, 2, 3, ... until one does not.
Usage: python bench/bench_fleet.py [max N for real time, default 8]
"""

import json
import os
import subprocess
import sys
import tempfile

BASE_DOMAIN = int(os.environ.get('AEROSIM_BENCH_DOMAIN', '150'))


def launch(out: str, domain: int, *args: str) -> subprocess.Popen:
    """Start sim_quad_hil with report:=true writing to out."""
    env = dict(os.environ, ROS_DOMAIN_ID=str(domain))
    return subprocess.Popen([sys.executable, '-m', 'sim_launch.cli', 'launch', 'sim_quad_hil',
                             'report:=true', 'sensor_topics:=false', f'output_dir:={out}',
                             *args], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT)


def summary(p: subprocess.Popen, out: str) -> dict:
    """Wait for the run and read its summary."""
    log = p.communicate(timeout=1800)[0].decode('utf-8', 'replace')
    path = os.path.join(out, 'latest', 'summary.json')
    if p.returncode != 0 or not os.path.exists(path):
        raise RuntimeError(log[-3000:])
    with open(path) as fh:
        return json.load(fh)


def fleet(n: int, time_scale: float) -> dict:
    """One graph, n vehicles."""
    with tempfile.TemporaryDirectory() as out:
        return summary(launch(out, BASE_DOMAIN, f'vehicles:={n}', f'time_scale:={time_scale:g}'),
                       out)


def independent(n: int) -> list:
    """Run n single-vehicle graphs at once, each its own domain and ports; their summaries."""
    dirs = [tempfile.TemporaryDirectory() for _ in range(n)]
    procs = [launch(d.name, BASE_DOMAIN + 1 + i, 'time_scale:=0',
                    f'bind:=127.0.0.1:{24560 + 10 * i}', f'fc_address:=127.0.0.1:{24561 + 10 * i}')
             for i, d in enumerate(dirs)]
    try:
        return [summary(p, d.name) for p, d in zip(procs, dirs)]
    finally:
        for d in dirs:
            d.cleanup()


def main():
    """Print the figures."""
    max_rt = int(sys.argv[1]) if len(sys.argv) > 1 else 8
    print('as fast as possible (time_scale:=0, lockstep, built-in FCs, default mission):')
    for n in (1, 2, 4, 8):
        s = fleet(n, 0.0)
        rtf = s['flight_real_time_factor'] or s['real_time_factor']
        line = (f'  N={n}: {s["vehicles_complete"] if n > 1 else int(s["result"] == "complete")}'
                f'/{n} missions complete, in-flight RTF {rtf:.2f}, throughput '
                f'{n * rtf:.2f} vehicle-s/s')
        if n in (2, 4):
            runs = independent(n)
            rtfs = [r['flight_real_time_factor'] or r['real_time_factor'] for r in runs]
            line += (f'; {n} independent graphs side by side: RTF {min(rtfs):.2f}..'
                     f'{max(rtfs):.2f}, throughput {sum(rtfs):.2f} vehicle-s/s '
                     f'(fleet/independent {n * rtf / sum(rtfs):.2f}x)')
        print(line, flush=True)
    print('real time (time_scale:=1): in-flight RTF >= 0.97 and < 1 % late steps')
    largest = 0
    for n in range(1, max_rt + 1):
        s = fleet(n, 1.0)
        rtf = s['flight_real_time_factor']
        late = s.get('flight_late_step_share', s.get('late_step_share')) or 0.0
        ok = rtf is not None and rtf >= 0.97 and late < 0.01
        print(f'  N={n}: in-flight RTF {rtf}, late steps {100 * late:.2f} %, '
              f'{"holds" if ok else "does not hold"} real time', flush=True)
        if not ok:
            break
        largest = n
    print(f'largest N holding real time on this machine: {largest}')


if __name__ == '__main__':
    main()
