"""Deck-landing benchmark: touchdown error on a moving deck, and the mixed graph's speed.

1. Accuracy (in one process, the same parts as the graph): the deck_landing scenario's
   world (sim_world.core.world.World: the deck USV on its waypoint controller, the quad
   carried by its deck until it lifts off) with the built-in FC's core (mavlink_bridge.fc.
   autopilot) fed through real MAVLink frames (HIL_SENSOR, HIL_GPS, LANDING_TARGET,
   DISTANCE_SENSOR: the bridge's encoders; its mission as MISSION_ITEM_INT), sensors from the
   bridge's suites (SensorSuite, DownwardSensors) seeded per run, the judge of the report
   (MissionJudge with the world's deck events). Boat speeds 0, 1, 2, 3 m/s, calm (sea state
   0) and sea state 3, `--runs` seeds each (sensor noise and wave phases). The quad meets the
   boat ahead on its course (where it will be at t = 60 s), or over the pad of a boat at rest.
   Printed: landings judged on the pad (within 0.5 m, under 1 m/s, on the deck 10 s later)
   out of the runs, the touchdown error (median, max), the hardest touchdown.
2. Speed (processes, DDS, lockstep over UDP): `sim_world scenario:=deck_landing report:=true
   time_scale:=0` against the peer measured in the same run, the same quad mission in
   `sim_quad_hil` alone (from the ground, landing on the ground at the meeting point): the
   real-time factors and their ratio (what the boat, the deck and the world cost).
Usage: python bench/bench_deck.py [--runs N] [--graph-runs M] [--jobs J]
"""

import argparse
from concurrent.futures import ProcessPoolExecutor
import json
import math
import os
from pathlib import Path
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np
import yaml

SCENARIOS = Path(__file__).resolve().parent.parent / 'aerosim' / 'config' / 'scenarios'
DT = 0.004                  # s: the world's 250 Hz, the FC's HIL_SENSOR rate
MEET_T_S = 60.0             # s: where the boat will be then is the quad's meeting point
MAX_SIM_S = 300.0


def scenario(speed: float, sea_state: int, seed: int):
    """deck_landing with the boat at speed [m/s], the waves of sea_state, wave_seed seed."""
    from sim_core.scenario import scenario_from_dict
    d = yaml.safe_load((SCENARIOS / 'deck_landing.yaml').read_text())
    o = d['origin']
    from sim_core.geodesy import GeoOrigin
    origin = GeoOrigin(o['lat_deg'], o['lon_deg'], o['alt_m'])
    d['environment'].update(sea_state=sea_state, wave_seed=seed)
    boat, quad = d['vehicles']
    if speed > 0.0:
        boat['cruise_speed_mps'] = speed
        lat, lon, _ = origin.enu_to_geodetic(0.0, 5000.0, 0.0)     # a straight course north
        boat['mission'] = [{'command': 'waypoint', 'lat_deg': lat, 'lon_deg': lon}]
    else:
        boat.pop('mission')
    lat, lon, _ = origin.enu_to_geodetic(0.0, speed * MEET_T_S - 2.5, 0.0)
    quad['mission'][-1].update(lat_deg=lat, lon_deg=lon)
    return scenario_from_dict(d, SCENARIOS)


def fly(speed: float, sea_state: int, seed: int) -> dict:
    """One landing in one process (module docstring, 1); its judged figures."""
    from sim_world.core.world import World, open_water

    from kinds.entry import make_controller, make_model
    from mavlink_bridge.core import hil
    from mavlink_bridge.core.mav import new_mav, pack
    from mavlink_bridge.core.mission import items_from_scenario
    from mavlink_bridge.fc.autopilot import MulticopterFc
    from sim_core.members import world_members
    from sim_report.core.mission import MissionJudge
    from sim_sensors.core.landing_target import DownwardSensors, TargetConfig
    from sim_sensors.core.suite import SensorSuite, SuiteConfig

    ms = world_members(scenario(speed, sea_state, seed))
    world = World.build(ms, make_model, make_controller, open_water)
    q = world.index('quad0')
    sc = ms[q].scenario
    sim, rx = new_mav(51, 25), new_mav(1, 1)

    def wire(msg):
        return rx.decode(bytearray(pack(sim, msg)))

    suite = SensorSuite(SuiteConfig(seed=seed), sc)
    down = DownwardSensors(TargetConfig(), np.random.default_rng([seed, 0x1A4D]))
    enc = hil.HilSensorEncoder()
    ap = MulticopterFc()
    ap.set_mission([wire(sim.mission_item_int_encode(
        1, 1, it.seq, it.frame, it.command, 0, 1, it.param1, it.param2, it.param3, it.param4,
        it.x, it.y, it.z)) for it in items_from_scenario(sc.mission)])
    ap.home_position(wire(hil.home_position(sim, sc.origin)))
    judge = MissionJudge(sc)
    model = world.model('quad0')
    t_ns, step = 0, int(DT * 1e9)
    touchdowns, water = 0, False
    while t_ns < MAX_SIM_S * 1e9 and not judge.over:
        world.step(DT, t_ns)
        t_ns += step
        for e in world.deck_events:
            if e.vehicle == 'quad0':
                touchdowns += e.what == 'touchdown'
                judge.deck_event(t_ns * 1e-9, e.deck, e.what, e.normal_speed, e.pad_xy)
        s = world.samples[q]
        if not world.decks.on_deck_of(q) and float(s.p_enu[2]) <= 0.0 and t_ns > 5e9:
            water = True
            break
        decks = [(world.decks.decks[k], p) for k, p in world.decks.poses.items()]
        smp = suite.sample(t_ns, *s[1:])
        for fix in smp.gnss:
            ap.hil_gps(wire(hil.hil_gps(sim, fix, 0)))
        # the range finder draws its noise first, as the bridge does (the same streams); the
        # built-in FC does not read DISTANCE_SENSOR
        down.range(t_ns, s.p_enu, s.q_enu_flu, decks)
        if smp.imu is not None:
            model.set_throttles(ap.hil_sensor(wire(enc.encode(sim, smp, t_ns // 1000))))
        tgt = down.target(t_ns, s.p_enu, s.q_enu_flu, decks)
        if tgt is not None:
            ap.landing_target(wire(hil.landing_target(sim, tgt, t_ns // 1000)))
        if (t_ns // step) % 10 == 0:
            thr = model.throttles
            judge.add(t_ns * 1e-9, s.p_enu, math.sqrt(sum(float(v) ** 2 for v in s.v_enu)),
                      not any(x > 0.0 for x in thr))
    td = judge.deck_landing or {}
    return {'speed': speed, 'sea_state': sea_state, 'seed': seed, 'done': judge.done,
            'water': water, 'failed': judge.deck_failed, 'touchdowns': touchdowns,
            'pad_error_m': td.get('pad_error_m'), 'hardest_mps': td.get('hardest_touchdown_mps'),
            'sim_s': round(t_ns * 1e-9, 2)}


def accuracy(runs: int, jobs: int) -> list:
    cases = [(v, ss, seed) for ss in (0, 3) for v in (0.0, 1.0, 2.0, 3.0)
             for seed in range(1, runs + 1)]
    t0 = time.monotonic()
    with ProcessPoolExecutor(jobs) as ex:
        out = list(ex.map(fly, *zip(*cases)))
    print(f'{len(cases)} landings in one process each, {jobs} at a time: '
          f'{time.monotonic() - t0:.0f} s wall')
    print('boat  sea   landed on the pad   touchdown error [m]    hardest    sim')
    print('[m/s] state  (0.5 m, 1 m/s, 10 s)  median    max        [m/s]      [s]')
    for ss in (0, 3):
        for v in (0.0, 1.0, 2.0, 3.0):
            rs = [r for r in out if r['speed'] == v and r['sea_state'] == ss]
            errs = [r['pad_error_m'] for r in rs if r['pad_error_m'] is not None]
            hard = [r['hardest_mps'] for r in rs if r['hardest_mps'] is not None]
            ok = sum(r['done'] for r in rs)
            print(f'{v:4.1f}  {ss:4d}   {ok:3d}/{len(rs):<3d}'
                  f'{"(" + str(sum(r["water"] for r in rs)) + " in the water)":>16}'
                  f'  {statistics.median(errs) if errs else math.nan:6.2f}  '
                  f'{max(errs) if errs else math.nan:6.2f}     '
                  f'{max(hard) if hard else math.nan:5.2f}   '
                  f'{statistics.median(r["sim_s"] for r in rs):6.1f}')
    for r in out:
        if not r['done']:
            print(f'  not landed: speed {r["speed"]}, sea state {r["sea_state"]}, seed '
                  f'{r["seed"]}: {r["failed"] or ("in the water" if r["water"] else "")} '
                  f'(pad error {r["pad_error_m"]}, {r["touchdowns"]} touchdowns)')
    return out


def graph(name: str, out: str, domain: int, *args: str) -> dict:
    """Run a graph with report:=true as fast as possible; its summary and wall time."""
    env = dict(os.environ, ROS_DOMAIN_ID=str(domain))
    t0 = time.monotonic()
    p = subprocess.run([sys.executable, '-m', 'sim_launch.cli', 'launch', name, 'report:=true',
                        'time_scale:=0', f'output_dir:={out}', 'sensor_topics:=false', *args],
                       env=env, capture_output=True, text=True, timeout=1800)
    wall = time.monotonic() - t0
    path = Path(out) / 'latest' / 'summary.json'        # the run's own folder
    if p.returncode != 0 or not path.exists():
        raise RuntimeError(f'{name}: exit {p.returncode}\n{p.stdout[-3000:]}')
    s = json.loads(path.read_text())
    s['wall_s'] = wall
    return s


def peer_scenario(path: Path) -> None:
    """The deck_landing quad's mission alone, from the ground, landing at the meeting point."""
    d = yaml.safe_load((SCENARIOS / 'deck_landing.yaml').read_text())
    quad = d['vehicles'][1]
    land = dict(quad['mission'][-1])
    land.pop('deck')
    d.pop('vehicles')
    d.pop('separation_m')
    d['environment'].pop('surface')
    d['vehicle'].update(initial_position_enu=[0.0, -2.5, 0.0])
    d['mission'] = quad['mission'][:-1] + [land]
    d['name'] = 'deck_landing_quad_alone'
    path.write_text(yaml.safe_dump(d))


def speed(runs: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        peer = Path(tmp) / 'peer.yaml'
        peer_scenario(peer)
        rows = []
        for k in range(runs):
            w = graph('sim_world', f'{tmp}/w{k}', 170 + k, 'scenario:=deck_landing')
            p = graph('sim_quad_hil', f'{tmp}/p{k}', 180 + k, f'scenario:={peer}')
            rows.append((w, p))
            wq = w['vehicles']['quad0']['details']['deck_landing']
            print(f'run {k + 1}: sim_world deck_landing {w["result"]}, touchdown '
                  f'{wq["pad_error_m"]:.2f} m from the pad, {w["sim_time_s"]:.1f} s sim in '
                  f'{w["wall_s"]:.1f} s wall (RTF {w["sim_time_s"] / w["wall_s"]:.2f}); peer '
                  f'sim_quad_hil {p["result"]}, {p["sim_time_s"]:.1f} s sim in '
                  f'{p["wall_s"]:.1f} s wall (RTF {p["sim_time_s"] / p["wall_s"]:.2f})')
        rw = [w['sim_time_s'] / w['wall_s'] for w, _ in rows]
        rp = [p['sim_time_s'] / p['wall_s'] for _, p in rows]
        print(f'real-time factor (process start to exit): sim_world deck_landing '
              f'{min(rw):.2f}-{max(rw):.2f}, sim_quad_hil the quad alone {min(rp):.2f}-'
              f'{max(rp):.2f}: ratio {statistics.median(rw) / statistics.median(rp):.2f}')


def main():
    a = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    a.add_argument('--runs', type=int, default=10, help='seeds per speed and sea state')
    a.add_argument('--graph-runs', type=int, default=2)
    a.add_argument('--jobs', type=int, default=2)
    a.add_argument('--no-accuracy', action='store_true')
    args = a.parse_args()
    if not args.no_accuracy:
        accuracy(args.runs, args.jobs)
    if args.graph_runs:
        speed(args.graph_runs)


if __name__ == '__main__':
    main()
