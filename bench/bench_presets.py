"""The presets against the code they replaced, same run: each case alternately on both trees.

Usage: python bench/bench_presets.py --baseline <checkout> [--runs 2] [--px4 <build folder>]
           [--cases demo fleet4 harbour_ops px4] [--out <folder>]

--baseline: another aerosim checkout, set up (`bash scripts/setup.sh` there: its env.sh), e.g.
the single-kind graphs of d4be382 (`git worktree add /tmp/base d4be382`). Each case runs
`aerosim launch ...` as a user would, as fast as possible with report:=true, once on the
baseline, once on this tree, `--runs` times, alternating (so both see the same load), and the
table gives each side's medians and the ratio this tree / baseline:

- demo: `sim_quad_hil scenario:=short_hop` (the built-in FC; scripts/demo.sh's graph);
- fleet4: `sim_quad_hil vehicles:=4` (four built-in FCs);
- harbour_ops: `sim_world scenario:=harbour_ops` (two quads, a plane, a boat);
- px4: `sim_quad_hil fc:=px4 px4_instance:=7` with a real PX4 SITL (airframe 10016, a fresh
  rootfs per flight, started before the graph and killed, its whole process group, the moment
  the run's summary exists: a PX4 left without its simulator spins a core at SCHED_FIFO 99).

Figures: wall (the launcher's start to its exit), the summary's real_time_factor (sim time
over the judge's wall time, clock start to verdict) and flight_real_time_factor (liftoff to
the end: what the loop costs, where the two trees' start-up holds differ), and the verdict.
The MAVLink ports are off the defaults (24600.., PX4's instance 7) and ROS_DOMAIN_ID is 214:
run it on a machine where no other aerosim uses them.
"""

import argparse
import glob
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
PORTS = ['bind:=127.0.0.1:24600', 'fc_address:=127.0.0.1:24601']
CASES = {
    'demo': ['sim_quad_hil', 'scenario:=short_hop'] + PORTS,
    'fleet4': ['sim_quad_hil', 'vehicles:=4'] + PORTS,
    'harbour_ops': ['sim_world', 'scenario:=harbour_ops'] + PORTS,
    'px4': ['sim_quad_hil', 'fc:=px4', 'px4_instance:=7'],
}
COMMON = ['report:=true', 'time_scale:=0']
TIMEOUT_S = 1800.0


def summary_of(out: str):
    """The run's summary: <out>/latest/summary.json (per-run folders) or <out>/*_summary.json."""
    found = glob.glob(os.path.join(out, 'latest', 'summary.json')) or \
        glob.glob(os.path.join(out, '*_summary.json'))
    if not found:
        return None
    try:
        with open(found[0], encoding='utf-8') as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def run_once(tree: str, case: str, out: str, px4: str) -> dict:
    """One launch of case on tree (a checkout with env.sh): its figures."""
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    args = CASES[case] + COMMON + [f'output_dir:={out}']
    cmd = f'source {tree}/env.sh && exec aerosim launch ' + ' '.join(args)
    env = dict(os.environ, ROS_DOMAIN_ID='214')
    fc = None
    if case == 'px4':
        rootfs = os.path.join(out, 'rootfs')
        os.makedirs(rootfs)
        fc = subprocess.Popen(['./bin/px4', '-d', '-w', rootfs, '-i', '7', f'{px4}/etc'],
                              cwd=px4, env=dict(env, PX4_SYS_AUTOSTART='10016'),
                              stdout=open(os.path.join(out, 'px4.log'), 'wb'),
                              stderr=subprocess.STDOUT, start_new_session=True)
    t0 = time.monotonic()
    with open(os.path.join(out, 'run.log'), 'wb') as log:
        sim = subprocess.Popen(['bash', '-c', cmd], env=env, stdout=log,
                               stderr=subprocess.STDOUT, start_new_session=True)
        summary = None
        while sim.poll() is None and time.monotonic() - t0 < TIMEOUT_S:
            summary = summary or summary_of(out)
            if summary and fc is not None and fc.poll() is None:
                os.killpg(fc.pid, signal.SIGKILL)       # before the graph stops
            time.sleep(0.2)
        if sim.poll() is None:
            os.killpg(sim.pid, signal.SIGINT)
        rc = sim.wait()
    wall = time.monotonic() - t0
    if fc is not None and fc.poll() is None:
        os.killpg(fc.pid, signal.SIGKILL)
    if fc is not None:
        fc.wait()
    s = summary_of(out) or {}
    return {'rc': rc, 'wall_s': round(wall, 1), 'result': s.get('result', 'none'),
            'rtf': s.get('real_time_factor'), 'flight_rtf': s.get('flight_real_time_factor'),
            'sim_s': s.get('sim_time_s')}


def median(xs):
    xs = [x for x in xs if isinstance(x, (int, float))]
    return round(statistics.median(xs), 2) if xs else None


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--baseline', help='the other checkout (with env.sh); none: nothing to do')
    ap.add_argument('--runs', type=int, default=2)
    ap.add_argument('--px4', help='PX4 build folder (build/px4_sitl_default) for case px4')
    ap.add_argument('--cases', nargs='+', default=['demo', 'fleet4', 'harbour_ops', 'px4'],
                    choices=sorted(CASES))
    ap.add_argument('--out', default='/tmp/bench_presets')
    a = ap.parse_args()
    if not a.baseline:      # bench/run.sh runs every bench without arguments
        print('bench_presets: skipped (give --baseline <another checkout, set up>)')
        return 0
    cases = [c for c in a.cases if c != 'px4' or a.px4]
    if 'px4' in a.cases and not a.px4:
        print('px4: skipped (no --px4 build folder)')
    trees = {'baseline': os.path.abspath(a.baseline), 'this': ROOT}
    rows = {}
    for case in cases:
        for k in range(a.runs):
            for side, tree in trees.items():
                r = run_once(tree, case, os.path.join(a.out, f'{case}_{side}_{k}'), a.px4)
                rows.setdefault((case, side), []).append(r)
                print(f'{case} {side} run {k + 1}: {r}', flush=True)
    print('\n| case | side | verdicts | wall s | RTF | in-flight RTF |')
    print('|---|---|---|---|---|---|')
    for case in cases:
        med = {}
        for side in trees:
            rs = rows[(case, side)]
            med[side] = {f: median([r[f] for r in rs]) for f in ('wall_s', 'rtf', 'flight_rtf')}
            print(f'| {case} | {side} | {", ".join(r["result"] for r in rs)} | '
                  f'{med[side]["wall_s"]} | {med[side]["rtf"]} | {med[side]["flight_rtf"]} |')
        b, t = med['baseline'], med['this']
        ratio = {f: (round(t[f] / b[f], 2) if t[f] and b[f] else None)
                 for f in ('wall_s', 'rtf', 'flight_rtf')}
        print(f'| {case} | this / baseline | | {ratio["wall_s"]} | {ratio["rtf"]} | '
              f'{ratio["flight_rtf"]} |')
    return 0


if __name__ == '__main__':
    sys.exit(main())
