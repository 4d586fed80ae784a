"""Real-time scheduling for the threads that close a HIL loop (Linux SCHED_FIFO; no rclpy).

On a loaded machine the loop's threads wait behind other processes for their time slice, and
steps run late. Under SCHED_FIFO they run as soon as their socket or pacing deadline wakes
them (other processes keep what the loop leaves, and the kernel's RT throttling at least 5 %).
Only threads that block on every step get it: a FIFO thread that never blocks (stepping as fast
as possible) would take its core.

A flight controller on the same machine may run real-time threads of its own: PX4 SITL started
as root creates its work queues and simulator threads SCHED_FIFO (up to 99;
platforms/posix/src/px4/common/tasks.cpp falls back to normal threads on EPERM). Each of our
HIL_SENSOR wakes them, and a woken FIFO thread preempts a normal one on its core at once: the
lockstep thread is pushed off its core several times per step (measured with PX4 v1.16: the
loop ran at 0.55 of its speed). peer_fifo_priority() finds the peer's process behind a loopback
address (/proc/net, /proc/<pid>/fd) and its highest real-time priority, so that the lockstep
thread can run at the same one: FIFO threads of equal priority do not preempt each other.
"""

from dataclasses import dataclass
import os
import socket
import sys
import threading
from typing import List, Optional, Tuple

from sim_core.config import Param
from sim_core.link import is_loopback

MAX_PRIORITY = 99
AS_PEER = -1        # realtime_priority: as the peer's process (peer_fifo_priority)
POLICY_FIFO, POLICY_RR = 1, 2   # proc(5) stat field 41
HOW_TO_PERMIT = ('needs CAP_SYS_NICE (root; docker --cap-add=SYS_NICE; setcap cap_sys_nice) '
                 'or an rtprio limit (ulimit -r, /etc/security/limits.conf)')


@dataclass(frozen=True)
class RealtimeConfig:
    """The realtime_priority parameter of a node whose thread closes a HIL loop."""

    realtime_priority: int = AS_PEER


def realtime_table(follows: str = '') -> dict:
    """RealtimeConfig's table; follows: what -1 follows in this node ('': nothing)."""
    minus_one = (f'-1 = as {follows} (sim_core.realtime.peer_fifo_priority): its highest '
                 'real-time priority when it runs on this machine with real-time threads, '
                 'else normal scheduling' if follows else
                 '-1 = normal scheduling here (nothing to follow)')
    return {'realtime_priority': Param(
        'SCHED_FIFO priority [1..99] of the thread closing the HIL loop, against late steps '
        f'on a loaded machine; 0 = normal scheduling; {minus_one}. Needs CAP_SYS_NICE or an '
        'rtprio limit (ulimit -r)', AS_PEER, MAX_PRIORITY)}


def set_thread_priority(priority: int) -> str:
    """Run the calling thread under SCHED_FIFO at priority 1..99, or normally (0).

    Returns '' if done, else why not (the thread keeps its scheduling).
    """
    if not 0 <= priority <= MAX_PRIORITY:
        return f'priority must be in [0, {MAX_PRIORITY}], got {priority}'
    if not hasattr(os, 'sched_setscheduler'):
        return 'SCHED_FIFO is not available on this system'
    policy = os.SCHED_FIFO if priority > 0 else os.SCHED_OTHER
    try:
        os.sched_setscheduler(0, policy, os.sched_param(priority))   # 0: the calling thread
    except PermissionError:
        return f'SCHED_FIFO {priority} not permitted: {HOW_TO_PERMIT}'
    except OSError as exc:
        return f'SCHED_FIFO {priority} refused: {exc}'
    return ''


def thread_priority() -> int:
    """SCHED_FIFO priority of the calling thread (0: normal scheduling)."""
    if os.sched_getscheduler(0) != os.SCHED_FIFO:
        return 0
    return os.sched_getparam(0).sched_priority


def fifo_permitted() -> str:
    """'' if this process may use SCHED_FIFO, else why not (probed on a throwaway thread)."""
    why = []
    t = threading.Thread(target=lambda: why.append(set_thread_priority(1)))
    t.start()
    t.join()
    return why[0]


def _hex_address(text: str) -> Tuple[str, int]:
    """'0100007F:11D0' of /proc/net/{tcp,udp} -> ('127.0.0.1', 4560) (IPv4, host byte order)."""
    host, port = text.split(':')
    return socket.inet_ntoa(int(host, 16).to_bytes(4, sys.byteorder)), int(port, 16)


def socket_inodes(address: Tuple[str, int], proto: str, net: str = '/proc/net') -> set:
    """Inodes of the IPv4 sockets of proto ('tcp' or 'udp') bound to address (host, port).

    A socket bound to 0.0.0.0 at the port counts too (it receives what goes to host). TCP:
    the connected socket whose local end is address (a client's, for its ephemeral port).
    """
    host, port = address
    found = set()
    try:
        with open(f'{net}/{proto}') as f:
            next(f)                               # the header
            for line in f:
                cols = line.split()
                if len(cols) < 10:
                    continue
                lhost, lport = _hex_address(cols[1])
                if lport == port and lhost in (host, '0.0.0.0') and cols[9] != '0':
                    found.add(cols[9])
    except (OSError, ValueError, StopIteration):
        pass
    return found


def socket_owner(inodes: set, proc: str = '/proc') -> Optional[int]:
    """PID of a process other than ours holding one of the socket inodes, if we may see it."""
    if not inodes:
        return None
    wanted = {f'socket:[{i}]' for i in inodes}
    me = os.getpid()
    for name in os.listdir(proc):
        if not name.isdigit() or int(name) == me:
            continue
        try:
            for fd in os.listdir(f'{proc}/{name}/fd'):
                if os.readlink(f'{proc}/{name}/fd/{fd}') in wanted:
                    return int(name)
        except OSError:                          # gone, or not ours to look into
            continue
    return None


def fifo_threads(pid: int, proc: str = '/proc') -> List[Tuple[int, int]]:
    """(tid, priority) of each SCHED_FIFO/SCHED_RR thread of pid (a thread gone is skipped)."""
    got: List[Tuple[int, int]] = []
    try:
        tids = os.listdir(f'{proc}/{pid}/task')
    except OSError:
        return got
    for tid in tids:
        try:
            with open(f'{proc}/{pid}/task/{tid}/stat') as f:
                fields = f.read().rsplit(')', 1)[1].split()
            # proc(5): field 40 rt_priority, 41 policy; fields[0] is field 3
            if int(fields[41 - 3]) in (POLICY_FIFO, POLICY_RR):
                got.append((int(tid), int(fields[40 - 3])))
        except (OSError, ValueError, IndexError):
            continue
    return got


def process_fifo_priority(pid: int, proc: str = '/proc') -> int:
    """The highest SCHED_FIFO/SCHED_RR priority among the threads of pid (0: none)."""
    return max((p for _, p in fifo_threads(pid, proc)), default=0)


def process_name(pid: int, proc: str = '/proc') -> str:
    """The command name of pid ('px4'), or '?'."""
    try:
        with open(f'{proc}/{pid}/comm') as f:
            return f.read().strip()
    except OSError:
        return '?'


def peer_fifo_priority(address: Tuple[str, int], proto: str) -> Tuple[Optional[int], int]:
    """(pid, highest real-time priority of its threads) of the peer process at address.

    address: the peer's (host, port) as our socket sees it; proto 'tcp' or 'udp'. Only a
    loopback peer is looked for (a remote one is another machine's business): (None, 0) if it
    is remote or its process cannot be seen (another PID namespace, another user's without
    root), else (pid, 0..99).
    """
    host = address[0]
    if not is_loopback(host) or ':' in host:        # /proc/net/{tcp,udp}: IPv4 only
        return None, 0
    pid = socket_owner(socket_inodes(('127.0.0.1' if host == 'localhost' else host,
                                      address[1]), proto))
    return (pid, process_fifo_priority(pid)) if pid is not None else (None, 0)
