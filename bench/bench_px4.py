"""Lockstep with a real PX4 v1.16 SITL against PX4's own in-process simulator (SIH), one run.

Usage: python bench/bench_px4.py [--px4 <PX4-Autopilot>/build/px4_sitl_default] [--runs 3]
           [--sih-speed 10 40] [--step-cost-us N] [--aerosim-args name:=value ...]

No PX4 binary or build recipe is part of aerosim: given the path of a PX4 SITL build, the bench
starts it (instance 0, a fresh temporary rootfs per flight), else it measures the stand-in only.

With --px4, each run, back to back:
1. aerosim + PX4: airframe 10016 (none_iris) in lockstep with the graph as shipped,
   `aerosim launch sim_quad_hil fc:=px4 report:=true time_scale:=0` (sensor topics on; nobody
   subscribes to them but the report's odometry); the in-flight real-time factor (liftoff to
   landing, from the summary) and the step split the bridge logs at exit
   (mavlink_bridge/core/step_split.py): ours (PX4's answer in -> the next HIL_SENSOR to
   send()), send (the syscall), PX4's side (HIL_SENSOR sent -> PX4's answer in our socket,
   kernel-stamped: its whole work and the way back), waited (the answer in our socket until we
   read it), after (our topics after the send, while PX4 works).
2. SIH: airframe 10040 (sihsim_quadx: IMU and lockstep at 250 Hz, as aerosim's),
   PX4_SIM_SPEED_FACTOR 10; the same mission uploaded on PX4's onboard API link (14580 ->
   14540) with aerosim's mission server, armed and started as a ground station would; its
   in-flight RTF: PX4's time (ATTITUDE.time_boot_ms) over wall time between takeoff and landing
   (EXTENDED_SYS_STATE.landed_state). The ratio aerosim / SIH x10 is the headline figure.
Then once: aerosim + PX4 with every topic recorded (`aerosim record`, as `ros2 bag record -a`:
every sensor topic subscribed), and SIH at the other speed factors (how close to SIH at its
fastest).

Always: the PX4 stand-in (aerosim/test/px4_sitl.py, what CI has) given PX4's measured cost
(--realtime: SCHED_FIFO 99 as PX4 run as root; --step-cost-us: PX4's answer time as measured,
STEP_COST_US), flying the same graph: the figure that stands for the real one where no PX4 is
built; with --px4 its ratio to the real runs of this run.
"""

import argparse
import json
import os
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time

os.environ['MAVLINK20'] = '1'

from mavlink_bridge.core.autostart import STARTED, AutoStart  # noqa: E402
from mavlink_bridge.core.mav import mavlink, new_mav, pack  # noqa: E402
from mavlink_bridge.core.mission import DONE, MissionServer, items_from_scenario  # noqa: E402
from sim_core.scenario import load_scenario  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
PX4_STANDIN = os.path.join(HERE, '..', 'aerosim', 'test', 'px4_sitl.py')
# The stand-in's answer time [µs]: PX4 v1.16's measured on the project's VM (PX4's side of the
# split, 53-56 µs, 2026-11-25). The stand-in then runs its Python FC core (~140 µs, at normal
# priority as PX4's load is not: px4_sitl._fifo) before it reads the next step, which bounds
# it below the real PX4: in-flight RTF 13.3-13.6 against the real 14.7-15.2 (0.9x) there.
STEP_COST_US = 50.0
SPLIT = re.compile(r'per step: ours (\d+) µs .*?send (\d+) µs, the FC\'s side (\d+) µs .*?'
                   r'waited (\d+) µs \(topics after the send (\d+) µs')
SPLIT_KEYS = ('ours', 'send', 'fc_side', 'waited', 'after')


def start_px4(build: str, airframe: int, env_extra=None):
    """PX4 SITL instance 0 in a fresh rootfs: (process, rootfs, log path)."""
    rootfs = tempfile.mkdtemp(prefix='bench_px4_')
    log = os.path.join(rootfs, 'px4.log')
    env = dict(os.environ, PX4_SYS_AUTOSTART=str(airframe), **(env_extra or {}))
    with open(log, 'w') as out:
        p = subprocess.Popen([os.path.join(build, 'bin', 'px4'), '-d', '-w', rootfs, '-i', '0',
                              os.path.join(os.path.abspath(build), 'etc')], cwd=build,
                             env=env, stdout=out, stderr=subprocess.STDOUT,
                             start_new_session=True)
    return p, rootfs, log


def stop(p, rootfs=None, sig=signal.SIGKILL):
    """Signal a process group (PX4 ignores SIGTERM while it waits for its simulator)."""
    try:
        os.killpg(p.pid, sig)
    except ProcessLookupError:
        pass
    try:
        p.wait(30)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        p.wait(30)
    if rootfs:
        shutil.rmtree(rootfs, ignore_errors=True)


def fly_graph(extra, instance: int = 0, record: bool = False) -> dict:
    """sim_quad_hil fc:=px4 against whatever PX4 listens for instance: summary and split."""
    out = tempfile.mkdtemp(prefix='bench_out_')
    rec = None
    if record:
        rec = subprocess.Popen([sys.executable, '-m', 'sim_launch.cli', 'record', '-o',
                                os.path.join(out, 'bag')], stdout=subprocess.DEVNULL,
                               stderr=subprocess.STDOUT, start_new_session=True)
    try:
        r = subprocess.run([sys.executable, '-m', 'sim_launch.cli', 'launch', 'sim_quad_hil',
                            'fc:=px4', f'px4_instance:={instance}', 'report:=true',
                            'time_scale:=0', f'output_dir:={out}', *extra],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                           timeout=900)
        try:
            with open(os.path.join(out, 'latest', 'summary.json')) as f:
                s = json.load(f)
        except OSError:
            print(r.stdout[-3000:])
            raise
    finally:
        if rec is not None:
            stop(rec, sig=signal.SIGINT)
        shutil.rmtree(out, ignore_errors=True)
    m = SPLIT.search(r.stdout)
    split = dict(zip(SPLIT_KEYS, map(int, m.groups()))) if m else {}
    fifo = re.search(r'MAVLink receive thread: (SCHED_FIFO priority \d+)', r.stdout)
    return {'result': s['result'], 'rtf': s['flight_real_time_factor'], **split,
            'sched': fifo.group(1) if fifo else 'normal scheduling'}


def with_px4(build: str, extra, record: bool = False) -> dict:
    """Real PX4 (airframe 10016) + the graph."""
    px4, rootfs, _ = start_px4(build, 10016)
    try:
        return fly_graph(extra, record=record)
    finally:
        stop(px4, rootfs)


def with_standin(extra, step_cost_us: float) -> dict:
    """The PX4 stand-in, as PX4 run as root, answering in PX4's measured time (instance 7)."""
    n = 7
    peer = subprocess.Popen([sys.executable, PX4_STANDIN, '--sim-port', str(4560 + n),
                             '--mavlink-port', str(14280 + n), '--mavlink-remote',
                             str(14030 + n), '--sysid', str(n + 1), '--realtime',
                             '--step-cost-us', str(step_cost_us)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
    try:
        return fly_graph(extra, instance=n)
    finally:
        peer.kill()
        peer.wait()


def sih(build: str, speed: float) -> dict:
    """PX4's SIH quad at a speed factor, the default mission flown: its in-flight RTF."""
    px4, rootfs, log = start_px4(build, 10040, {'PX4_SIM_SPEED_FACTOR': str(speed)})
    sc = load_scenario('default')
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.bind(('127.0.0.1', 14540))             # where PX4's onboard API link sends
    sock.settimeout(0.2)
    px4_addr = ('127.0.0.1', 14580)
    gcs, rx = new_mav(255, 190), new_mav(255, 190)
    mission = MissionServer(items_from_scenario(sc.mission), 1.5, 5)
    auto = AutoStart((1, 1), len(mission.items), timeout_s=120.0)
    t_air = t_ground = boot_s = None
    started = False
    deadline = time.monotonic() + 600
    tail = ''
    try:
        while time.monotonic() < deadline:
            out = []
            now = time.monotonic()
            try:
                data, _ = sock.recvfrom(65536)
            except socket.timeout:
                data = b''
            for m in rx.parse_buffer(data) or []:
                t = m.get_type()
                if t == 'HEARTBEAT' and m.get_srcSystem() == 1 and m.get_srcComponent() == 1:
                    auto.heartbeat(m)
                    if not started:
                        started = True
                        out += mission.start(gcs, 1, 1, now)
                elif t in ('MISSION_REQUEST', 'MISSION_REQUEST_INT'):
                    out += mission.on_request(gcs, m, now)
                elif t == 'MISSION_ACK':
                    if mission.on_ack(m) and mission.state == DONE:
                        auto.mission_accepted(now)
                elif t == 'COMMAND_ACK':
                    auto.command_ack(m, now)
                elif t == 'ATTITUDE':
                    boot_s = m.time_boot_ms * 1e-3
                elif t == 'EXTENDED_SYS_STATE' and boot_s is not None:
                    if m.landed_state == mavlink.MAV_LANDED_STATE_IN_AIR and t_air is None:
                        t_air = (boot_s, now)
                    if t_air and m.landed_state == mavlink.MAV_LANDED_STATE_ON_GROUND:
                        t_ground = (boot_s, now)
            out += mission.poll(now)
            out += auto.poll(gcs, now) if auto.state != STARTED else []
            for msg in out:
                sock.sendto(pack(gcs, msg), px4_addr)
            if t_ground:
                break
    finally:
        stop(px4, rootfs=None)
        sock.close()
        if os.path.exists(log):
            with open(log) as f:
                tail = f.read()[-2000:]
        shutil.rmtree(rootfs, ignore_errors=True)
    if not (t_air and t_ground):
        return {'result': 'incomplete', 'rtf': None, 'log': tail}
    return {'result': 'complete',
            'rtf': round((t_ground[0] - t_air[0]) / (t_ground[1] - t_air[1]), 2)}


def split_text(r: dict) -> str:
    """The bridge's step split as one phrase."""
    if 'ours' not in r:
        return 'no split logged'
    return (f'ours {r["ours"]} + send {r["send"]} + PX4\'s side {r["fc_side"]} + waited '
            f'{r["waited"]} µs (topics after the send {r["after"]} µs, within PX4\'s side and '
            'the wait)')


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--px4', help='PX4 build folder (build/px4_sitl_default); none = the '
                    'stand-in only')
    ap.add_argument('--runs', type=int, default=3)
    ap.add_argument('--sih-speed', type=float, nargs='+', default=[10.0, 40.0])
    ap.add_argument('--step-cost-us', type=float, default=STEP_COST_US,
                    help="the stand-in's answer time [µs]")
    ap.add_argument('--aerosim-args', nargs='*', default=[])
    a = ap.parse_args()
    extra = list(a.aerosim_args)
    real = []
    if a.px4:
        for k in range(a.runs):
            r = with_px4(a.px4, extra)
            s = sih(a.px4, a.sih_speed[0])
            ratio = round(r['rtf'] / s['rtf'], 2) if r['rtf'] and s['rtf'] else None
            real.append(r['rtf'])
            print(f'run {k + 1}: aerosim + PX4 {r["result"]}, in-flight RTF {r["rtf"]} '
                  f'(receive thread {r["sched"]}); SIH x{a.sih_speed[0]:g} {s["result"]}, RTF '
                  f'{s["rtf"]}; ratio {ratio}. Step: {split_text(r)}', flush=True)
        r = with_px4(a.px4, extra, record=True)
        print(f'aerosim + PX4 with every topic recorded (aerosim record): {r["result"]}, '
              f'in-flight RTF {r["rtf"]}. Step: {split_text(r)}', flush=True)
        for speed in a.sih_speed[1:]:
            s = sih(a.px4, speed)
            print(f'SIH x{speed:g}: {s["result"]}, in-flight RTF {s["rtf"]}', flush=True)
    r = with_standin(extra, a.step_cost_us)
    vs = (f'; {r["rtf"] / statistics.mean(real):.2f}x the real PX4\'s mean RTF of this run'
          if real and r['rtf'] else '')
    print(f'PX4 stand-in (SCHED_FIFO 99, answer time {a.step_cost_us:g} µs): {r["result"]}, '
          f'in-flight RTF {r["rtf"]}{vs}. Step: {split_text(r)}', flush=True)


if __name__ == '__main__':
    main()
