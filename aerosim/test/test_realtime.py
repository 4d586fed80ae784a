"""realtime_priority: SCHED_FIFO for the threads that close the HIL loop, and for them only.

Whether this machine permits SCHED_FIFO decides which of two outcomes is checked; both are
checked where possible (as root, a child demoted to nobody cannot).
"""

import os
import socket
import subprocess
import sys
import threading
import time

from aerosim_msgs.srv import SetTimeScale
from sim_core.realtime import fifo_permitted, fifo_threads, set_thread_priority, thread_priority

from conftest import free_ports, output_lines, probe_node, spin_until
from graph_start import start


def in_thread(fn):
    """Run fn in a fresh thread (its scheduling dies with it); return its result."""
    out = []
    t = threading.Thread(target=lambda: out.append(fn()))
    t.start()
    t.join()
    return out[0]


def test_set_thread_priority_changes_the_calling_thread_only():
    def body():
        why = set_thread_priority(5)
        got = thread_priority()
        back = set_thread_priority(0)
        return why, got, back, thread_priority()
    why, got, back, after = in_thread(body)
    if why:
        assert 'not permitted' in why and 'CAP_SYS_NICE' in why and got == 0
    else:
        assert got == 5 and back == '' and after == 0
    assert thread_priority() == 0                       # the test's own thread untouched
    assert 'must be in [0, 99]' in set_thread_priority(100)


def test_an_unprivileged_user_is_told_how_to_permit_it():
    if os.geteuid() != 0:
        why = in_thread(lambda: set_thread_priority(5))
        assert why == '' or 'ulimit -r' in why
        return
    # import first: the interpreter's files may not be readable by nobody
    code = ('import os; '
            'from sim_core.realtime import set_thread_priority as s, thread_priority as p; '
            'os.setgid(65534); os.setuid(65534); print(repr(s(5)), p())')
    out = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True,
                         timeout=30, env=dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path)))
    assert out.returncode == 0, out.stderr
    assert 'not permitted' in out.stdout and 'ulimit -r' in out.stdout
    assert out.stdout.strip().endswith(' 0')


def test_world_plant_and_builtin_fc_run_their_loop_threads_under_fifo(procs, ros_context):
    """sim_quad_hil realtime_priority:=7: the world's process (world_plant) and the FC's."""
    port = free_ports(2)
    nodes = start(procs, 'sim_quad_hil', {
        'time_scale': 1.0, 'realtime_priority': 7, 'sensor_topics': False, 'summary': False,
        'bind': f'127.0.0.1:{port}', 'fc_address': f'127.0.0.1:{port + 1}'})
    plant, fc = nodes['world_plant'], nodes['builtin_fc']
    plant_out, fc_out = output_lines(plant), output_lines(fc)
    deadline = time.monotonic() + 60.0
    while time.monotonic() < deadline and not (
            any('first HIL_ACTUATOR_CONTROLS' in x for x in plant_out)
            and any('FC loop' in x for x in fc_out)):
        time.sleep(0.2)
    assert any('first HIL_ACTUATOR_CONTROLS' in x for x in plant_out), ''.join(plant_out)
    if fifo_permitted() == '':
        # the plant: the executor thread (paced stepping) and the MAVLink receive thread
        # (answers step the simulation); DDS and other threads keep normal scheduling
        assert sorted(p for _, p in fifo_threads(plant.pid)) == [7, 7], ''.join(plant_out)
        assert [p for _, p in fifo_threads(fc.pid)] == [7]
        assert plant.pid in (t for t, _ in fifo_threads(plant.pid))     # the main thread
        assert any('stepping thread: SCHED_FIFO priority 7' in x for x in plant_out)
        assert any('MAVLink receive thread: SCHED_FIFO priority 7' in x for x in plant_out)
        assert any('FC loop: SCHED_FIFO priority 7' in x for x in fc_out)
        # as fast as possible the stepping never blocks: normal scheduling again
        node, ex = probe_node(ros_context, 'probe')
        client = node.create_client(SetTimeScale, '/sim/set_time_scale')
        assert client.wait_for_service(timeout_sec=10.0)
        fut = client.call_async(SetTimeScale.Request(time_scale=0.0))
        assert spin_until(node, ex, fut.done, 10.0) and fut.result().success
        assert spin_until(node, ex, lambda: plant.pid not in (
            t for t, _ in fifo_threads(plant.pid)), 5.0)
        assert [p for _, p in fifo_threads(plant.pid)] == [7]    # the receive thread
    else:
        assert fifo_threads(plant.pid) == [] and fifo_threads(fc.pid) == []
        assert sum('not permitted' in x for x in plant_out) == 2
        assert any('not permitted' in x for x in fc_out)
    assert plant.poll() is None and fc.poll() is None


# --- the FC's scheduling, found from its socket (realtime_priority -1) ----------------------

PEER = """
import os, socket, sys, threading, time
proto, port, prio = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
if proto == 'udp':
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(('127.0.0.1', port))
else:
    s = socket.create_connection(('127.0.0.1', port))
done = threading.Event()
def worker():
    if prio:
        try:
            os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(prio))
        except PermissionError:
            pass
    done.wait()
threading.Thread(target=worker, daemon=True).start()
print('ready', s.getsockname()[1], flush=True)
sys.stdin.read()
"""


def start_peer(proto: str, port: int, prio: int):
    """A process with a socket and a thread at SCHED_FIFO prio (if permitted).

    The socket: UDP bound to port, or TCP connected to it. Returns (process, its local port).
    """
    p = subprocess.Popen([sys.executable, '-c', PEER, proto, str(port), str(prio)],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    line = p.stdout.readline().split()
    assert line and line[0] == 'ready', line
    time.sleep(0.2)                       # the worker thread took its scheduling
    return p, int(line[1])


def test_peer_fifo_priority_finds_the_process_behind_a_udp_port():
    from sim_core.realtime import peer_fifo_priority
    port = free_ports(1)
    want = 42 if fifo_permitted() == '' else 0
    p, _ = start_peer('udp', port, 42)
    try:
        assert peer_fifo_priority(('127.0.0.1', port), 'udp') == (p.pid, want)
        # another port: nobody; a remote address: not looked for
        assert peer_fifo_priority(('127.0.0.1', port + 1), 'udp') == (None, 0)
        assert peer_fifo_priority(('10.1.2.3', port), 'udp') == (None, 0)
    finally:
        p.kill()
        p.wait()


def test_peer_fifo_priority_finds_a_tcp_client_by_its_end_of_the_connection():
    """PX4 connects to the simulator's TCP server: the accepted socket's peer address."""
    from sim_core.realtime import peer_fifo_priority, process_name
    with socket.socket() as srv:
        srv.bind(('127.0.0.1', 0))
        srv.listen(1)
        p, _ = start_peer('tcp', srv.getsockname()[1], 0)
        try:
            conn, addr = srv.accept()
            with conn:
                # normal threads: found, priority 0 (our own end is not taken for it)
                assert peer_fifo_priority(addr, 'tcp') == (p.pid, 0)
                assert process_name(p.pid).startswith('python')
        finally:
            p.kill()
            p.wait()


def test_process_fifo_priority_reads_every_thread(tmp_path):
    """/proc/<pid>/task/*/stat: the highest SCHED_FIFO or RR priority; 0 without any."""
    from sim_core.realtime import process_fifo_priority
    task = tmp_path / '9' / 'task'
    fields = ['S'] + ['0'] * 37 + ['0', '0']      # stat fields 3 .. 41
    for tid, prio, policy in (('9', 0, 0), ('10', 99, 1), ('11', 50, 2)):
        (task / tid).mkdir(parents=True)
        f = list(fields)
        f[40 - 3], f[41 - 3] = str(prio), str(policy)
        (task / tid / 'stat').write_text(f'{tid} (px4 worker) ' + ' '.join(f))
    assert process_fifo_priority(9, proc=str(tmp_path)) == 99
    (task / '10' / 'stat').write_text('10 (sim_rcv) garbage')       # unreadable: skipped
    assert process_fifo_priority(9, proc=str(tmp_path)) == 50
    assert process_fifo_priority(12345678, proc=str(tmp_path)) == 0
