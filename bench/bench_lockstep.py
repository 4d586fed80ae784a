"""Lockstep cost: the simulator's own share of a lockstep step, against a zero-cost FC.

1. The floor: model, sensors, MAVLink framing and the built-in FC's core in one process, no
   ROS, no sockets (mavlink_bridge.fc.offline): µs per step.
2. The simulator alone: the graph as shipped (`sim_quad_hil fc:=external time_scale:=0`:
   world_plant publishing the sensor topics too, its judge writing the summary at the end;
   and with sensor_topics:=false; the clock starts at once, fleet_start_timeout_s:=0, as the
   peer takes no mission) against a zero-cost peer, a
   process that answers each HIL_SENSOR at once with one HIL_ACTUATOR_CONTROLS stamped with
   the frame's time_usec (as PX4 does), slightly above hover throttle; it sleeps on its
   socket as PX4 does (so each sensor datagram wakes it). Over a 10 s window: the loop's
   period (wall time per step) and world_plant's CPU time per step (user + system, all its
   threads, from /proc; it includes the bridge's polling for the answer); at the end, the
   bridge's own work per answer (its log line at exit: decode, mix, integrate, sensors,
   HIL_SENSOR out, topics).
3. The graph with the built-in FC (`sim_quad_hil time_scale:=0 report:=true`, sensor topics
   off, as bench_hil): the in-flight real-time factor, and the FC's own work per answer (its
   log line at exit).
The PX4 stand-in (aerosim/test/px4_sitl.py) flies in bench_px4.py, calibrated to a real PX4's
cost and measured against it and against PX4's SIH.
Every per-step figure is also given as a ratio to the floor measured in the same run.
Usage: python bench/bench_lockstep.py
"""

import json
import multiprocessing as mp
import os
import re
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time

from mavlink_bridge.fc.offline import fly
from sim_core.scenario import load_scenario
from sim_dynamics.core.multirotor import MultirotorParams

STEP_S = 0.004
HIL_SENSOR_ID = 107
WINDOW_S = 10.0


def zero_cost_peer(bind_port: int, sim_port: int, throttle: float, count, ready):
    """Answer every HIL_SENSOR datagram at once (runs in its own process)."""
    os.environ['MAVLINK20'] = '1'
    from pymavlink.dialects.v20 import common as mavlink
    mav = mavlink.MAVLink(None, srcSystem=1, srcComponent=1)
    controls = [throttle] * 4 + [0.0] * 12
    mode = mavlink.MAV_MODE_FLAG_HIL_ENABLED | mavlink.MAV_MODE_FLAG_SAFETY_ARMED
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(('127.0.0.1', bind_port))
    dst = ('127.0.0.1', sim_port)
    ready.set()
    n = 0
    while True:
        data = s.recv(65536)
        # MAVLink 2 frame whose first message is HIL_SENSOR (id in bytes 7..9, payload at 10)
        if len(data) >= 18 and data[0] == 0xFD and data[7] == HIL_SENSOR_ID and data[8] == 0:
            t_us = struct.unpack_from('<Q', data, 10)[0]
            s.sendto(mav.hil_actuator_controls_encode(t_us, controls, mode, 1).pack(mav), dst)
            mav.seq = (mav.seq + 1) % 256
            n += 1
            if n % 64 == 0:
                count.value = n


def cpu_s(pid: int) -> float:
    """User + system CPU time of a process, all its threads [s]."""
    with open(f'/proc/{pid}/stat') as f:
        fields = f.read().rsplit(')', 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf('SC_CLK_TCK')


def against_zero_cost_peer(*args: str) -> dict:
    """world_plant's CPU and wall time per step against the zero-cost peer."""
    sc = load_scenario('default')
    hover = MultirotorParams.from_yaml(str(sc.vehicle_file)).hover_throttle()
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as a, \
            socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as b:
        a.bind(('127.0.0.1', 0))
        b.bind(('127.0.0.1', 0))
        sim_port, fc_port = a.getsockname()[1], b.getsockname()[1]
    ctx = mp.get_context('spawn')
    count, ready = ctx.Value('q', 0, lock=False), ctx.Event()
    peer = ctx.Process(target=zero_cost_peer, args=(fc_port, sim_port, 1.02 * hover, count,
                                                    ready), daemon=True)
    peer.start()
    ready.wait(30)
    out = tempfile.TemporaryFile(mode='w+', encoding='utf-8')
    p = subprocess.Popen([sys.executable, '-m', 'sim_launch.cli', 'launch', 'sim_quad_hil',
                          'fc:=external', 'autostart:=false', 'time_scale:=0',
                          'fleet_start_timeout_s:=0',
                          f'bind:=127.0.0.1:{sim_port}', f'fc_address:=127.0.0.1:{fc_port}',
                          *args], stdout=out, stderr=subprocess.STDOUT,
                         start_new_session=True)
    try:
        deadline = time.monotonic() + 120
        while count.value < 2000 and time.monotonic() < deadline:
            time.sleep(0.1)
        out.seek(0)
        pid = int(re.search(r'started world_plant \(pid (\d+)\)', out.read()).group(1))
        c0, n0, w0 = cpu_s(pid), count.value, time.monotonic()
        time.sleep(WINDOW_S)
        c1, n1, w1 = cpu_s(pid), count.value, time.monotonic()
    finally:
        os.killpg(p.pid, signal.SIGINT)
        p.wait(60)
        peer.kill()
    out.seek(0)
    work = re.search(r'FC answers taken: (\d+) µs of work per answer', out.read())
    steps = n1 - n0
    return {'cpu_us': 1e6 * (c1 - c0) / steps, 'wall_us': 1e6 * (w1 - w0) / steps,
            'rtf': steps * STEP_S / (w1 - w0), 'work_us': int(work.group(1)) if work else None}


def run_graph(*args: str) -> tuple:
    """sim_quad_hil with report:=true: (summary, output)."""
    with tempfile.TemporaryDirectory() as d:
        p = subprocess.run([sys.executable, '-m', 'sim_launch.cli', 'launch', 'sim_quad_hil',
                            'report:=true', 'sensor_topics:=false', 'time_scale:=0',
                            f'output_dir:={d}', *args],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                           timeout=1200)
        try:
            with open(os.path.join(d, 'latest', 'summary.json')) as f:
                return json.load(f), p.stdout
        except OSError:
            print(p.stdout[-3000:])
            raise


def main():
    sc = load_scenario('default')
    t0 = time.perf_counter()
    _, judge, steps = fly(sc)
    floor_us = 1e6 * (time.perf_counter() - t0) / steps
    print(f'offline floor (model + sensors + MAVLink framing + FC core, 1 process, no ROS, no '
          f'sockets): {floor_us:.0f} µs per step (RTF {STEP_S * 1e6 / floor_us:.1f}; mission '
          f'{"complete" if judge.done else "INCOMPLETE"})', flush=True)
    for what, args in (('as shipped (sensor topics on)', ()),
                       ('sensor_topics:=false', ('sensor_topics:=false',))):
        r = against_zero_cost_peer(*args)
        print(f'simulator vs zero-cost peer, {what}: the bridge\'s work {r["work_us"]} µs per '
              f'step ({r["work_us"] / floor_us:.2f}x the floor); loop period {r["wall_us"]:.0f} '
              f'µs (RTF {r["rtf"]:.1f}); world_plant CPU {r["cpu_us"]:.0f} µs per step',
              flush=True)
    s, log = run_graph()
    m = re.search(r'answered (\d+) HIL_SENSOR: (\d+) µs of work per answer.*?CPU (\d+) µs',
                  log)
    fc = (f"; the FC's own work {m.group(2)} µs per answer ({int(m.group(2)) / floor_us:.2f}x "
          f'the floor; loop thread CPU with polling {m.group(3)} µs)') if m else ''
    rtf = s['flight_real_time_factor']
    print(f'graph with the built-in FC (plant + FC over UDP, lockstep): mission {s["result"]}, '
          f'in flight RTF {rtf} ({1e6 * STEP_S / rtf:.0f} µs per step, '
          f'{1e6 * STEP_S / rtf / floor_us:.2f}x the floor){fc}', flush=True)


if __name__ == '__main__':
    main()
