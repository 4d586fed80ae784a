"""USV swarm benchmark: physics step cost for N boats, the full swarm step, and the graph.

1. Physics (BoatSwarm.step + PidControl.update): aerosim's array step vs the same equations
   stepped boat by boat (one object per boat, the way per-vehicle simulators such as
   Fossen's PythonVehicleSimulator step a fleet), measured in this run; ns per boat-step and
   the ratio. The two agree to 1e-9 m after 10 s (checked here).
2. SwarmSim.step (guidance, tasks, damage, collisions) with every boat commanded, and the
   command-21 encoding (columns + JSON) for N = 10 .. 10,000: the real-time rate a 50 Hz step
   plus 10 Hz command 21 allows.
3. The sim_usv_swarm graph (usv_swarm_node + usv_bridge processes, real TCP) with 1,000 and
   10,000 boats at time scale 1: command 21 messages per wall second at the UI and sim time
   vs wall time; the command path: a burst of one command 22 per boat (commands applied per
   wall second, from the first sent to the last answer) and the latency from one command 22
   to the first 21 that shows it (median of 20, against the state period 100 ms).
"""

import json
import math
import os
from pathlib import Path
import signal
import socket
import subprocess
import sys
import threading
import time

import numpy as np
import pymap3d

ROOT = Path(__file__).resolve().parent.parent / 'aerosim'
sys.path.insert(0, str(ROOT))

from sim_dynamics.core.usv import SPEED_LOSS_PER_SEA_STATE, BoatSwarm  # noqa: E402
from sim_dynamics.core.usv_control import PidControl  # noqa: E402
from sim_dynamics.core.usv_swarm import SwarmParams, SwarmSim, TypeTable  # noqa: E402
from usv_bridge.core import protocol as P  # noqa: E402

CONFIG = ROOT / 'config'
TYPES = TypeTable.from_yaml(CONFIG / 'usv_types.yaml')
DT = 0.02
GAS, STEER = (0.1, 0.001, 0.5), (0.15, 0.001, 0.13)


class ScalarBoat:
    """One boat, one object, scalar math: the peer (same equations as BoatSwarm + PidControl)."""

    def __init__(self, t, heading_sp, speed_sp):
        self.m = t.mass_kg * (1 + t.added_mass_ratio)
        self.t = t
        self.t_max = t.max_thrust_n
        self.rmax = math.radians(t.rudder_max_deg)
        self.rrate = math.radians(t.rudder_rate_dps)
        self.n = self.e = self.psi = self.u = self.v = self.r = 0.0
        self.u_dot = 0.0
        self.thr = self.rud = 0.0
        self.i_s = self.i_h = 0.0
        self.hsp, self.usp = heading_sp, speed_sp

    def step(self, dt):
        """Advance this boat by dt [s]."""
        t = self.t
        # PID (PidControl)
        err = self.usp - self.u
        thrust = (t.drag_linear * self.usp + t.drag_quadratic * abs(self.usp) * self.usp)
        trim = min(max(thrust / self.t_max, -1.0), 1.0)
        thr = trim + GAS[0] * err + GAS[1] * self.i_s - GAS[2] * self.u_dot
        if 0.0 < thr < 1.0:
            self.i_s += err * dt
        thr_cmd = min(max(thr, 0.0), 1.0)
        h = math.degrees(math.atan2(math.sin(self.hsp - self.psi), math.cos(self.hsp - self.psi)))
        out = STEER[0] * h + STEER[1] * self.i_h - STEER[2] * math.degrees(self.r)
        if abs(out) < 1.0:
            self.i_h += h * dt
        rud_cmd = min(max(out, -1.0), 1.0) * self.rmax
        rud_cmd = min(max(rud_cmd, -self.rmax), self.rmax)
        # model (BoatSwarm.step)
        self.thr += min(max(thr_cmd - self.thr, -dt), dt)
        self.rud += min(max(rud_cmd - self.rud, -self.rrate * dt), self.rrate * dt)
        f = self.t_max * (self.thr if self.thr >= 0 else t.reverse_thrust_ratio * self.thr)
        u, v, r = self.u, self.v, self.r
        self.u_dot = (f - t.drag_linear * u - t.drag_quadratic * abs(u) * u) / self.m
        auth = max(u / t.top_speed_mps, 0.5 * abs(self.thr))
        r_dot = (t.nomoto_K * auth * self.rud - r - t.nomoto_alpha * r ** 3) / t.nomoto_T
        v_dot = (-t.sway_gain * u * r - v) / t.sway_tau_s
        self.u, self.v, self.r = u + self.u_dot * dt, v + v_dot * dt, r + r_dot * dt
        c, s = math.cos(self.psi), math.sin(self.psi)
        self.n += (self.u * c - self.v * s) * dt
        self.e += (self.u * s + self.v * c) * dt
        self.psi = math.atan2(math.sin(self.psi + self.r * dt), math.cos(self.psi + self.r * dt))


def physics(n, rng):
    types = [TYPES.boats[1 + (i % 2)] for i in range(n)]
    b = BoatSwarm(types)
    assert SPEED_LOSS_PER_SEA_STATE * b.sea_state == 0.0
    c = PidControl(b, GAS, STEER)
    hsp = rng.uniform(-math.pi, math.pi, n)
    usp = rng.uniform(0.5, 2.0, n)
    c.hold_heading(hsp)
    c.hold_speed(usp)
    steps = max(20, min(2000, 2_000_000 // n))
    t0 = time.perf_counter()
    for _ in range(steps):
        c.update(DT)
        b.step(DT)
    vec = (time.perf_counter() - t0) / steps
    peers = [ScalarBoat(t, h, u) for t, h, u in zip(types, hsp, usp)]
    psteps = max(3, min(500, 200_000 // n))
    t0 = time.perf_counter()
    for _ in range(psteps):
        for p in peers:
            p.step(DT)
    scalar = (time.perf_counter() - t0) / psteps
    return vec, scalar


def agreement():
    """Both implementations, 10 s from rest: the largest position difference [m]."""
    rng = np.random.default_rng(3)
    types = [TYPES.boats[1 + (i % 2)] for i in range(20)]
    b = BoatSwarm(types)
    c = PidControl(b, GAS, STEER)
    hsp, usp = rng.uniform(-3, 3, 20), rng.uniform(0.5, 2.0, 20)
    c.hold_heading(hsp)
    c.hold_speed(usp)
    peers = [ScalarBoat(t, h, u) for t, h, u in zip(types, hsp, usp)]
    for _ in range(500):
        c.update(DT)
        b.step(DT)
        for p in peers:
            p.step(DT)
    return max(max(abs(p.n - b.n[i]), abs(p.e - b.e[i])) for i, p in enumerate(peers))


def swarm_config(n, time_scale=1.0, spacing=20.0):
    side = math.ceil(math.sqrt(n))
    half = 0.5 * side * spacing + 2000.0
    lat0, lon0 = 10.5, 134.5
    dlat = math.degrees(half / 6.37e6)
    dlon = dlat / math.cos(math.radians(lat0))
    boats = []
    for i in range(n):
        nn, ee = (i // side - side / 2) * spacing, (i % side - side / 2) * spacing
        lat, lon, _ = pymap3d.ned2geodetic(nn, ee, 0, lat0, lon0, 0)
        boats.append({'id': i + 1, 'type': 1 + i % 2, 'team': i % 2, 'x_longtitude': lon,
                      'y_latitude': lat, 'startAngle': 0, 'health': 100, 'gas_outputRate': 100,
                      'attack_radius': 100, 'attack': 20})
    return {'time_scale': time_scale, 'wave_degree': 2, 'weather': 2, 'hour': 13,
            'x_leftTop_longtitude': lon0 - dlon, 'y_leftTop_latitude': lat0 + dlat,
            'x_rightBottom_longtitude': lon0 + dlon, 'y_rightBottom_latitude': lat0 - dlat,
            'boats': boats, 'obstacles': [], 'map_max_distance': 2000,
            'task_area_center_longtitude': lon0, 'task_area_center_latitude': lat0,
            'task_area_radius': 5000, 'gas_p': 0.1, 'gas_i': 0.001, 'gas_d': 0.5,
            'steering_p': 0.15, 'steering_i': 0.001, 'steering_d': 0.13}


def full_step(n):
    obj = swarm_config(n)
    cfg = P.parse_init(obj, TYPES.boats, TYPES.obstacles)
    sim = SwarmSim(cfg, TYPES, SwarmParams())
    ids = cfg.boat_index()
    for i in range(n):              # every boat: heading/speed, a tenth on escort tasks
        if i % 10 == 9:
            sim.command(P.parse_command22([22, i + 1, 1, i, 0, 0, 0, 0, 0, 0, 0], cfg, ids))
        else:
            sim.command(P.parse_command22([22, i + 1, 0, 0, 0, 0, 3, 1.5, (i * 37) % 360, 0,
                                           0], cfg, ids))
    steps = max(10, min(500, 200_000 // n))
    t0 = time.perf_counter()
    for _ in range(steps):
        sim.step(DT)
    step = (time.perf_counter() - t0) / steps
    reps = max(3, min(50, 20_000 // n))
    t0 = time.perf_counter()
    for _ in range(reps):
        data = P.encode_21(sim.columns(), '2026-11-23-13-00-00-000')
    out21 = (time.perf_counter() - t0) / reps
    return step, out21, len(data)


def graph(n=1000, wall_s=10.0):
    """The sim_usv_swarm graph with n boats at 1x over TCP: 21 rate, sim/wall, command path.

    TCP: an init of 1,000 boats is ~240 kB, more than one UDP datagram. Returns None if the
    graph did not come up.
    """
    env = dict(os.environ, ROS_DOMAIN_ID=str(90 + os.getpid() % 50))
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        port = s.getsockname()[1]
    cmd = [sys.executable, '-m', 'sim_launch.cli', 'launch', 'sim_usv_swarm', 'transport:=tcp',
           f'ui_bind:=127.0.0.1:{port}', 'summary:=false']
    p = subprocess.Popen(cmd, env=env, cwd=ROOT, stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        deadline = time.monotonic() + 30.0
        while True:
            try:
                sock = socket.create_connection(('127.0.0.1', port), timeout=60.0)
                break
            except OSError:
                if time.monotonic() > deadline:
                    return None
                time.sleep(0.2)
        f = sock.makefile('rb')

        def reply(to):
            while True:
                m = json.loads(f.readline())
                if isinstance(m, dict) and m.get('reply') == to:
                    return m
        sock.sendall(json.dumps(swarm_config(n)).encode() + b'\n')
        if not reply('init').get('ok'):
            return None
        sock.sendall(b'[26, 2]\n')
        reply(26)
        # a burst: one command 22 per boat, back to back (written from another thread while
        # this one reads the answers and the 21s)
        data = b''.join(json.dumps([22, i + 1, 0, 0, 0, 0, 3, 1.5, (i * 37) % 360, 0, 0])
                        .encode() + b'\n' for i in range(n))
        t0 = time.monotonic()
        threading.Thread(target=sock.sendall, args=(data,), daemon=True).start()
        applied = 0
        while applied < n:
            m = json.loads(f.readline())
            applied += isinstance(m, dict) and m.get('reply') == 22 and m['ok']
        burst = n / (time.monotonic() - t0)
        # 21 rate and sim/wall
        stamps, t_first = [], None
        while True:
            arr = json.loads(f.readline())
            if not isinstance(arr, list):
                continue
            now = time.monotonic()
            t_first = t_first or now
            stamps.append((now, P.parse_timestamp(arr[-1])))
            if now - t_first > wall_s:
                break
        wall = stamps[-1][0] - stamps[0][0]
        sim = (stamps[-1][1] - stamps[0][1]).total_seconds()
        # latency: one command, until the first 21 that shows it (boat 1's heading)
        lat = []
        for k in range(20):
            heading = float(100 + k)
            t0 = time.monotonic()
            sock.sendall(json.dumps([22, 1, 0, 0, 0, 0, 3, 1.5, heading, 0, 0]).encode() +
                         b'\n')
            while True:
                arr = json.loads(f.readline())
                if isinstance(arr, list) and arr[2 + 17] == heading:     # boat 1 control_a
                    lat.append(time.monotonic() - t0)
                    break
        sock.close()
        return (len(stamps) - 1) / wall, sim / wall, len(stamps), burst, float(np.median(lat))
    finally:
        os.killpg(p.pid, signal.SIGINT)
        try:
            p.wait(20)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)


def main():
    rng = np.random.default_rng(0)
    print(f'agreement array vs per-boat loop after 10 s: {agreement():.2e} m')
    print('physics step (model + PID), 50 Hz step; peer: the same equations boat by boat')
    print(f'{"N":>7} {"step us":>10} {"ns/boat":>8} {"max Hz":>9} {"peer us":>11} {"ratio":>7}')
    for n in (10, 100, 1000, 10000):
        vec, scalar = physics(n, rng)
        print(f'{n:>7} {vec * 1e6:>10.1f} {vec / n * 1e9:>8.0f} {1 / vec:>9.0f} '
              f'{scalar * 1e6:>11.0f} {scalar / vec:>6.1f}x')
    print('full swarm step (guidance, tasks, collisions) + command 21 (columns + JSON)')
    print(f'{"N":>7} {"step ms":>8} {"21 ms":>7} {"bytes":>9} '
          f'{"RT factor at 50 Hz + 21 at 10 Hz":>34}')
    for n in (10, 100, 1000, 10000):
        step, out21, size = full_step(n)
        per_sim_s = 50 * step + 10 * out21
        print(f'{n:>7} {step * 1e3:>8.2f} {out21 * 1e3:>7.2f} {size:>9} '
              f'{1 / per_sim_s:>33.1f}x')
    print('graph sim_usv_swarm over TCP at 1x: 21 per wall s (target 10), sim/wall; a burst of '
          'one 22 per boat (applied per wall s); latency 22 -> first 21 showing it (median of '
          '20; ratio to the 100 ms state period)')
    for n in (1000, 10000):
        g = graph(n)
        if g is None:
            print(f'{n:>7} boats: the graph did not come up')
            continue
        rate, rtf, count, burst, lat = g
        print(f'{n:>7} boats: 21 {rate:5.1f}/s, sim/wall {rtf:.3f} ({count} states); burst '
              f'{burst:7.0f} commands/s; latency {lat * 1e3:6.1f} ms ({lat / 0.1:.1f}x the '
              'state period)')


if __name__ == '__main__':
    main()
