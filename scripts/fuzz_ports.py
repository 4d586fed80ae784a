#!/usr/bin/env python3
r"""Garbage, bare connects, resets and strangers at every port of a graph, and what it counted.

Two runs:

  live    against a graph you launched (a flight in progress): each port named gets malformed
          frames (aerosim/test/fuzzing.py's generators, each refused by the protocol's own
          library), strangers speaking with the peer's ids from another address, and on TCP
          bare connects, resets, garbage connections and strangers with the FC's ids. Ports
          are fuzzed one after the other; for each, what was sent and what the bridges
          counted on /diagnostics (the rejected_<kind> that grew meanwhile, per status) are
          printed, and whether every input was exactly one reject. Run it in the graph's
          ROS_DOMAIN_ID, after `source env.sh`:

            python scripts/fuzz_ports.py live --mavlink-udp 127.0.0.1:24560 \\
                --fc-udp 127.0.0.1:24561 [--mavlink-tcp H:P] [--mission H:P] [--imc H:P] \\
                [--usv-udp H:P] [--usv-tcp H:P] [--n 3000] [--connections 40]

  paused  the long run of the test suite's smoke run (aerosim/test/test_fuzz.py) with more
          inputs, each bridge alone with its simulation paused: every input rejected exactly
          once, nothing published, the sim not stepped, warnings rate-limited, no traceback.

            python scripts/fuzz_ports.py paused [--n 100000] [--file-n 5000]

docs/hardening.md has the figures of a run and how to read them.
"""

import argparse
from collections import Counter
import os
from pathlib import Path
import random
import socket
import struct
import subprocess
import sys
import threading
import time

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / 'aerosim' / 'test'))
from mavlink_bridge.core.mav import mavlink, new_mav, pack  # noqa: E402

from fuzzing import ImcInputs, MavlinkInputs, UsvInputs, udp_stats  # noqa: E402 (with its test)

SETTLE_S = 3.0          # no count changed for this long (3 /diagnostics periods): all counted
MAX_WAIT_S = 60.0       # the longest wait for the counts to settle [s]


class Counts:
    """The /diagnostics port statuses (their rejected_<kind> and refused_clients), live."""

    COUNTED = ('rejected', 'refused_clients')

    def __init__(self):
        """A node in this environment's ROS domain, spun on a thread of its own."""
        from diagnostic_msgs.msg import DiagnosticArray
        import rclpy
        from rclpy.executors import SingleThreadedExecutor
        rclpy.init()
        self.node = rclpy.create_node('fuzz_ports')
        self.latest = {}            # status name -> {key: int}
        self.lock = threading.Lock()
        self.node.create_subscription(DiagnosticArray, '/diagnostics', self._on_diag, 100)
        self.ex = SingleThreadedExecutor()
        self.ex.add_node(self.node)
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._spin)
        self.thread.start()

    def _spin(self):
        while not self.stop.is_set():
            self.ex.spin_once(timeout_sec=0.1)

    def _on_diag(self, msg):
        for st in msg.status:
            vals = {kv.key: kv.value for kv in st.values}
            if 'rejected' not in vals:
                continue            # not a port's status
            counts = {k: int(v) for k, v in vals.items()
                      if k.startswith(self.COUNTED) and not k.endswith('_per_s')}
            with self.lock:
                self.latest[f'{st.name} [{st.hardware_id}]'] = counts

    def snapshot(self) -> dict:
        """{status: {key: count}} now."""
        with self.lock:
            return {k: dict(v) for k, v in self.latest.items()}

    def settled(self) -> dict:
        """The counts once none changed for SETTLE_S (at most MAX_WAIT_S)."""
        last, since = self.snapshot(), time.monotonic()
        deadline = since + MAX_WAIT_S
        while time.monotonic() < deadline:
            time.sleep(0.2)
            now = self.snapshot()
            if now != last:
                last, since = now, time.monotonic()
            elif time.monotonic() - since >= SETTLE_S:
                break
        return last

    def close(self):
        """Stop spinning; the node and its context gone."""
        import rclpy
        self.stop.set()
        self.thread.join()
        self.ex.shutdown(timeout_sec=1.0)
        self.node.destroy_node()
        rclpy.try_shutdown()


def grew(before: dict, after: dict) -> dict:
    """{status: {key: increase}} of the counts that grew."""
    out = {}
    for name, counts in after.items():
        d = {k: v - before.get(name, {}).get(k, 0) for k, v in counts.items()}
        d = {k: v for k, v in d.items() if v}
        if d:
            out[name] = d
    return out


# --- what is sent --------------------------------------------------------------------------
class WithStrangers:
    """A generator of malformed inputs, with a share of strangers speaking with a peer's ids."""

    def __init__(self, inputs, strangers, share: float, seed: int):
        """inputs: a fuzzing.py generator; strangers: functions making one frame each."""
        self.inputs, self.strangers, self.share = inputs, strangers, share
        self.rng = random.Random(seed)

    def one(self):
        """(datagram, family)."""
        if self.strangers and self.rng.random() < self.share:
            return self.rng.choice(self.strangers)(), 'stranger_with_peer_ids'
        return self.inputs.one()


def fc_impostor(fc_ids):
    """Frames speaking as the FC (its ids) from elsewhere: full throttle, an FC HEARTBEAT."""
    mav = new_mav(*fc_ids)
    return [lambda: pack(mav, mav.hil_actuator_controls_encode(
                random.getrandbits(40), [1.0] * 16, 129, 1)),
            lambda: pack(mav, mav.heartbeat_encode(mavlink.MAV_TYPE_QUADROTOR,
                                                   mavlink.MAV_AUTOPILOT_PX4, 129, 0, 4))]


def sim_impostor(sim_ids):
    """Frames speaking as the simulator (its ids) to an FC: sensors, a mission."""
    mav = new_mav(*sim_ids)
    return [lambda: pack(mav, mav.hil_sensor_encode(
                random.getrandbits(40), 0.0, 0.0, -9.81, 0, 0, 0, 0.2, 0, 0.4, 1013.0, 0.0,
                0.0, 20.0, 0x1FFF, 0)),
            lambda: pack(mav, mav.mission_count_encode(1, 1, 3, 0))]


def imc_impostor(peer_id, our_id):
    """Control inputs with the peer's (DUNE's) id from elsewhere: throttle, a heading."""
    import imcpy

    def make(cls, **fields):
        def one():
            m = cls()
            for k, v in fields.items():
                setattr(m, k, v)
            m.src, m.src_ent, m.dst, m.dst_ent, m.timestamp = peer_id, 0, our_id, 0xFF, 1.0
            return m.serialize()
        return one
    return [make(imcpy.SetThrusterActuation, id=0, value=1.0),
            make(imcpy.DesiredHeading, value=1.0)]


def udp_phase(addr, inputs, n: int, rate: float):
    """Send n inputs to addr from an ephemeral port, paced at rate/s and on the queue."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    port = addr[1]
    stats = udp_stats(port) if addr[0] == '127.0.0.1' else None
    drops0 = stats[1] if stats else 0
    fams = Counter()
    t0 = time.monotonic()
    for k in range(n):
        data, fam = inputs.one()
        fams[fam] += 1
        sock.sendto(data, addr)
        while time.monotonic() - t0 < (k + 1) / rate:
            time.sleep(0.0005)
        if stats and k % 20 == 19:
            while (udp_stats(port) or (0, 0))[0] > 128 * 1024:
                time.sleep(0.001)
    wall = time.monotonic() - t0
    sock.close()
    drops = (udp_stats(port) or (0, drops0))[1] - drops0 if stats else 0
    return fams, drops, wall


def _ended(sock, wait_s: float) -> bool:
    """True if the server ended sock (EOF or reset) within wait_s; what it sent is dropped."""
    sock.settimeout(wait_s)
    deadline = time.monotonic() + wait_s
    try:
        while time.monotonic() < deadline:
            if not sock.recv(65536):
                return True
    except (ConnectionResetError, BrokenPipeError):
        return True
    except socket.timeout:
        pass
    return False


def mavlink_tcp_phase(addr, connections: int, fc_ids, seed: int):
    """Connections at the FC's TCP port: bare, reset, garbage, a stranger with the FC's ids.

    Returns (kinds sent, how many the server closed within 10 s).
    """
    rng = random.Random(seed)
    garbage = MavlinkInputs(seed=seed)
    fc = new_mav(*fc_ids)
    kinds, closed = Counter(), 0
    for k in range(connections):
        kind = ('bare', 'reset', 'garbage', 'fc_ids')[k % 4]
        kinds[kind] += 1
        s = socket.create_connection(addr, timeout=5.0)
        try:
            if kind == 'reset':
                s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack('ii', 1, 0))
                closed += 1             # ours, at once: the server sees a connection and a reset
                continue
            try:
                if kind == 'garbage':
                    s.sendall(b''.join(garbage.one()[0] for _ in range(rng.randint(1, 20))))
                elif kind == 'fc_ids':
                    s.sendall(pack(fc, fc.heartbeat_encode(0, mavlink.MAV_AUTOPILOT_PX4, 0, 0, 0))
                              + b''.join(pack(fc, fc.hil_actuator_controls_encode(
                                  10_000_000 + 4000 * i, [1.0] * 16, 129, 1))
                                  for i in range(47)))
            except OSError:
                pass                    # already closed: the server did not wait for it
            closed += _ended(s, 10.0)
        finally:
            s.close()
        time.sleep(0.05)
    return kinds, closed


def usv_tcp_phase(addr, connections: int, seed: int):
    """Connections at the USV UI's TCP port: bare, reset, garbage lines then close, half-close.

    Returns (kinds sent, lines of garbage sent, the refusal lines received).
    """
    gen = UsvInputs(seed=seed)
    kinds, lines, refusals = Counter(), 0, 0
    for k in range(connections):
        kind = ('bare', 'reset', 'garbage', 'half')[k % 4]
        kinds[kind] += 1
        s = socket.create_connection(addr, timeout=5.0)
        try:
            if kind == 'reset':
                s.sendall(b'[26, ')         # a line begun
                s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack('ii', 1, 0))
                continue
            if kind == 'garbage':
                batch = [gen.one()[0].replace(b'\n', b' ') for _ in range(20)]
                batch = [b for b in batch if len(b) < 60000 and b.strip()]
                lines += len(batch)
                try:
                    s.sendall(b'\n'.join(batch) + b'\n')
                except OSError:
                    pass
            if kind == 'half':
                s.shutdown(socket.SHUT_WR)
            s.settimeout(2.0)
            try:
                first = s.recv(4096)
                refusals += b'"refused"' in first
            except OSError:
                pass
        finally:
            s.close()
        time.sleep(0.05)
    return kinds, lines, refusals


def endpoint(text: str):
    """'host:port' -> (host, port)."""
    host, _, port = text.rpartition(':')
    return host, int(port)


def show(port: str, sent: str, before: dict, after: dict, expected=None) -> None:
    """Print what was sent at port and what grew on /diagnostics meanwhile."""
    g = grew(before, after)
    print(f'\nPORT {port}: sent {sent}')
    if not g:
        print('  counted: nothing on /diagnostics (is the graph in this ROS_DOMAIN_ID?)')
    for name, d in g.items():
        kinds = ', '.join(f'{k[len("rejected_"):]} {v}' for k, v in sorted(d.items())
                          if k.startswith('rejected_'))
        extra = f', refused_clients {d["refused_clients"]}' if 'refused_clients' in d else ''
        print(f'  counted by {name}: rejected {d.get("rejected", 0)} ({kinds}){extra}')
    if expected is not None:
        total = sum(d.get('rejected', 0) for d in g.values())
        print(f'  every input one reject: {"yes" if total == expected else "NO"} '
              f'({total} of {expected})')


def live(a) -> int:
    """Fuzz the ports named in a, one after the other; 0."""
    counts = Counts()
    deadline = time.monotonic() + 20.0      # the first statuses in (discovery takes seconds)
    while not counts.snapshot() and time.monotonic() < deadline:
        time.sleep(0.2)
    if not counts.snapshot():
        print('no port status on /diagnostics: is the graph running in this ROS_DOMAIN_ID?')
    fc_ids = tuple(int(x) for x in a.fc_ids.split(':'))
    sim_ids = tuple(int(x) for x in a.sim_ids.split(':'))
    udp = [('MAVLink HIL (UDP)', a.mavlink_udp,
            lambda: WithStrangers(MavlinkInputs(seed=a.seed), fc_impostor(fc_ids), 0.1, a.seed)),
           ('MAVLink mission link (UDP)', a.mission,
            lambda: WithStrangers(MavlinkInputs(seed=a.seed + 1), fc_impostor(fc_ids), 0.1,
                                  a.seed)),
           ('built-in FC (UDP)', a.fc_udp,
            lambda: WithStrangers(MavlinkInputs(seed=a.seed + 2), sim_impostor(sim_ids), 0.1,
                                  a.seed)),
           ('IMC (UDP)', a.imc,
            lambda: WithStrangers(ImcInputs(seed=a.seed + 3), imc_impostor(0x3F02, 0x3F01),
                                  0.1, a.seed)),
           ('USV UI (UDP)', a.usv_udp, lambda: UsvInputs(seed=a.seed + 4))]
    for label, where, make in udp:
        if not where:
            continue
        before = counts.settled()
        fams, drops, wall = udp_phase(endpoint(where), make(), a.n, a.rate)
        after = counts.settled()
        show(f'{label} {where}', f'{a.n} datagrams in {wall:.1f} s (' + ', '.join(
            f'{k} {v}' for k, v in sorted(fams.items())) + f'), kernel drops {drops}',
             before, after, a.n - drops)
    if a.mavlink_tcp:
        before = counts.settled()
        kinds, closed = mavlink_tcp_phase(endpoint(a.mavlink_tcp), a.connections, fc_ids, a.seed)
        after = counts.settled()
        show(f'MAVLink HIL (TCP) {a.mavlink_tcp}', f'{a.connections} connections (' + ', '.join(
            f'{k} {v}' for k, v in sorted(kinds.items())) + f'); {closed} closed by the server '
             'or reset by us', before, after, a.connections)
    if a.usv_tcp:
        before = counts.settled()
        kinds, lines, refusals = usv_tcp_phase(endpoint(a.usv_tcp), a.connections, a.seed)
        after = counts.settled()
        show(f'USV UI (TCP) {a.usv_tcp}', f'{a.connections} connections (' + ', '.join(
            f'{k} {v}' for k, v in sorted(kinds.items())) + f'), {lines} garbage lines; '
             f'{refusals} got the refusal line (a UI was connected)', before, after)
    counts.close()
    return 0


def paused(a) -> int:
    """Run test_fuzz.py with the long counts; its status."""
    env = dict(os.environ, AEROSIM_FUZZ_N=str(a.n), AEROSIM_FUZZ_FILE_N=str(a.file_n))
    cmd = [sys.executable, '-m', 'pytest', '-p', 'no:cacheprovider', '-q', '-s',
           '-k', 'fuzz_mavlink or fuzz_imc or fuzz_usv or raise_only', 'test/test_fuzz.py']
    r = subprocess.run(cmd, cwd=ROOT / 'aerosim', env=env, stdout=subprocess.PIPE, text=True)
    print('\n'.join(line for line in r.stdout.splitlines()
                    if line.startswith('FUZZ') or 'passed' in line or 'failed' in line
                    or line.startswith('E ')))
    return r.returncode


def main():
    """Parse the arguments and run."""
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog=__doc__.split('\n', 2)[2])
    sub = ap.add_subparsers(dest='run', required=True)
    lv = sub.add_parser('live', help='the ports of a running graph')
    for name, what in (('mavlink-udp', "the MAVLink bridge's HIL port (its bind)"),
                       ('mavlink-tcp', "the MAVLink bridge's TCP server (tcp_bind)"),
                       ('mission', "the bridge's mission link port (mission_bind)"),
                       ('fc-udp', "the built-in FC's port (its bind = fc_address)"),
                       ('imc', "the IMC bridge's port (imc_bind)"),
                       ('usv-udp', "the USV UI bridge's UDP port (ui_bind)"),
                       ('usv-tcp', "the USV UI bridge's TCP server")):
        lv.add_argument(f'--{name}', default='', metavar='HOST:PORT', help=what)
    lv.add_argument('--n', type=int, default=3000, help='datagrams per UDP port')
    lv.add_argument('--rate', type=float, default=500.0, help='datagrams per second at most')
    lv.add_argument('--connections', type=int, default=40, help='connections per TCP port')
    lv.add_argument('--fc-ids', default='1:1', help="the FC's sysid:compid (strangers use them)")
    lv.add_argument('--sim-ids', default='51:1', help="the bridge's sysid:compid (to the FC)")
    lv.add_argument('--seed', type=int, default=46)
    pa = sub.add_parser('paused', help='the long run of test_fuzz.py')
    pa.add_argument('--n', type=int, default=100_000, help='inputs per port')
    pa.add_argument('--file-n', type=int, default=5_000, help='mutants per config file')
    a = ap.parse_args()
    sys.exit(live(a) if a.run == 'live' else paused(a))


if __name__ == '__main__':
    main()
