"""World benchmark: harbour_ops in one world (sim_world) against its vehicles in worlds apart.

1. `sim_world scenario:=harbour_ops report:=true time_scale:=0`: two quads with built-in FCs,
   the C172 with its autopilot, a WAM-V on waypoints, one clock. Wall time of the whole run
   (process start to exit: start-up, the hold for the FCs, flight, report), sim time, the
   real-time factor, and the throughput: the vehicles' mission seconds (each vehicle's sim
   time until its last item) per wall second.
2. The peer, measured in the same run: the same quads and plane in the graphs that were
   single-kind graphs before and are now presets of the same world, side by side (each its own
   domain and ports): `sim_quad_hil` flying the two quads (a `vehicles:` list of the same two
   entries) and `sim_plane` flying the same circuit with the same autopilot. The boat has no
   preset with a waypoint controller (`sim_imc`'s boat is DUNE's), so it is left out of the
   peer: the world carries it on top. Ratios: the world's wall time against the slower of the
   two, and the throughputs.
Usage: python bench/bench_world.py [runs, default 2]
"""

import json
import os
from pathlib import Path
import subprocess
import sys
import tempfile
import time

import yaml

BASE_DOMAIN = int(os.environ.get('AEROSIM_BENCH_DOMAIN', '160'))
SCENARIOS = Path(__file__).resolve().parent.parent / 'aerosim' / 'config' / 'scenarios'


def run(graph: str, out: str, domain: int, *args: str) -> subprocess.Popen:
    """Start graph with report:=true as fast as possible, writing to out."""
    env = dict(os.environ, ROS_DOMAIN_ID=str(domain))
    return subprocess.Popen([sys.executable, '-m', 'sim_launch.cli', 'launch', graph,
                             'report:=true', 'time_scale:=0', f'output_dir:={out}', *args],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)


def finish(p: subprocess.Popen, t0: float, path: str) -> dict:
    """Wait for the run; its summary with the process's wall time (wall_s).

    path: the run's output_dir; the summary is its latest run's (<path>/latest/summary.json).
    """
    path = os.path.join(path, 'latest', 'summary.json')
    log = p.communicate(timeout=1800)[0].decode('utf-8', 'replace')
    wall = time.monotonic() - t0
    if p.returncode != 0 or not os.path.exists(path):
        raise RuntimeError(f'{path}: exit {p.returncode}\n{log[-3000:]}')
    with open(path) as fh:
        s = json.load(fh)
    s['wall_s'] = wall
    return s


def split(out: str):
    """harbour_ops's quads as a fleet scenario and its plane as a plane scenario (paths)."""
    d = yaml.safe_load((SCENARIOS / 'harbour_ops.yaml').read_text())
    quads = [v for v in d['vehicles'] if v['kind'] == 'multirotor']
    (plane,) = [v for v in d['vehicles'] if v['kind'] == 'plane']
    qd = dict(d, name='harbour_quads', vehicles=quads)
    pd = {k: v for k, v in d.items() if k != 'vehicles'}
    pd.update(name='harbour_plane', mission=plane['mission'], vehicle={
        'kind': 'plane', 'params': plane['params'],
        'initial_position_enu': plane['initial_position_enu'],
        'initial_yaw_deg': plane['initial_yaw_deg'],
        'initial_speed_mps': plane['initial_speed_mps']})
    paths = []
    for name, x in (('quads', qd), ('plane', pd)):
        path = os.path.join(out, f'{name}.yaml')
        with open(path, 'w') as fh:
            yaml.safe_dump(x, fh)
        paths.append(path)
    return paths


def mission_s(v: dict) -> float:
    """A vehicle's mission seconds: the sim time of its last item reached."""
    r = v.get('reached_at_s') or []
    return float(r[-1]) if r else float(v.get('sim_time_s', 0.0))


def world() -> dict:
    """One harbour_ops run in sim_world."""
    with tempfile.TemporaryDirectory() as out:
        t0 = time.monotonic()
        # the quads' links off the default ports (a PX4 SITL may hold 14560): 25570..25573
        s = finish(run('sim_world', out, BASE_DOMAIN, 'scenario:=harbour_ops',
                       'sensor_topics:=false', 'bind:=127.0.0.1:25570',
                       'fc_address:=127.0.0.1:25571'),
                   t0, out)
    if s['result'] != 'complete':
        raise RuntimeError(f'sim_world: {s["result"]}')
    s['mission_s'] = sum(mission_s(v) for v in s['vehicles'].values())
    return s


def peers() -> dict:
    """The quads (sim_quad_hil) and the plane (sim_plane) side by side."""
    with tempfile.TemporaryDirectory() as out:
        quads, plane = split(out)
        qo, po = os.path.join(out, 'q'), os.path.join(out, 'p')
        t0 = time.monotonic()
        pq = run('sim_quad_hil', qo, BASE_DOMAIN + 1, f'scenario:={quads}',
                 'sensor_topics:=false', 'bind:=127.0.0.1:25560', 'fc_address:=127.0.0.1:25561')
        pp = run('sim_plane', po, BASE_DOMAIN + 2, f'scenario:={plane}', 'summary:=false')
        q = finish(pq, t0, qo)
        p = finish(pp, t0, po)
    if q['result'] != 'complete' or p['result'] != 'complete':
        raise RuntimeError(f'peers: quads {q["result"]}, plane {p["result"]}')
    flown = sum(mission_s(v) for v in q['vehicles'].values()) + float(p['sim_time_s'])
    return {'wall_s': max(q['wall_s'], p['wall_s']), 'quads_wall_s': q['wall_s'],
            'plane_wall_s': p['wall_s'], 'mission_s': flown}


def main():
    """Print the figures."""
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 2
    print('harbour_ops, as fast as possible (time_scale:=0, lockstep, built-in FCs):')
    for k in range(runs):
        w = world()
        p = peers()
        print(f'  run {k + 1}: sim_world (2 quads, plane, boat) {w["sim_time_s"]:.1f} s sim in '
              f'{w["wall_s"]:.1f} s wall (report\'s RTF {w["real_time_factor"]}), '
              f'{w["mission_s"] / w["wall_s"]:.2f} mission-s/s; the presets side by side '
              f'(2 quads + plane, no boat) {p["wall_s"]:.1f} s wall (quads '
              f'{p["quads_wall_s"]:.1f}, plane {p["plane_wall_s"]:.1f}), '
              f'{p["mission_s"] / p["wall_s"]:.2f} mission-s/s; world/peers wall '
              f'{w["wall_s"] / p["wall_s"]:.2f}x, throughput '
              f'{(w["mission_s"] / w["wall_s"]) / (p["mission_s"] / p["wall_s"]):.2f}x',
              flush=True)


if __name__ == '__main__':
    main()
