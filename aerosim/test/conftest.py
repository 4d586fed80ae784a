"""Shared test fixtures: unique ROS domains, node processes, waiting on topics."""

import fcntl
import itertools
import os
from pathlib import Path
import random
import signal
import socket
import subprocess
import sys
import tempfile
import time

import pytest

PKG_DIR = Path(__file__).resolve().parent.parent
REPO_DIR = PKG_DIR.parent
_domain_ids = itertools.count(int(os.environ.get('AEROSIM_TEST_DOMAIN_BASE', '40')) +
                              (os.getpid() % 20) * 5)
MAX_TEST_DOMAIN = 229             # domains 1..229 (DDS ports below 64900)
_DOMAIN_LOCKS = Path(tempfile.gettempdir()) / 'aerosim-test-domains'


def claim_domain_id():
    """(ROS_DOMAIN_ID, lock file) of a domain no other test holds, in this run or beside it.

    DDS traffic stays separate; closing the file releases the domain.
    """
    _DOMAIN_LOCKS.mkdir(exist_ok=True)
    for _ in range(400):
        d = 1 + next(_domain_ids) % MAX_TEST_DOMAIN
        f = open(_DOMAIN_LOCKS / f'{d}.lock', 'w')
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return d, f
        except OSError:
            f.close()
    raise RuntimeError('every ROS domain id is held by a running test')


GRAPH_FIXTURES = frozenset({'procs', 'ros_context', 'domain_id'})

# The pure tests (no graph) that take more than ~2 s each: a test function (every one of its
# parametrizations) or function[id] -> its wall time [s], measured with
# `python -m pytest -p no:cacheprovider -q -m "not graph" --durations=0` on the 2-core
# development machine (2026-11-27, load average ~2; the whole pure run took 135 s). Marked
# slow: `bash scripts/test.sh --fast` leaves them out. A test keeps its name when it moves to
# another file; test_markers checks every name here is a test that exists.
SLOW_TESTS = {
    'test_the_builtin_plane_fc_flies_the_circuit_through_mavlink_framing': 16.4,
    'test_mypy_clean_on_the_pure_layers': 10.3,
    'test_the_builtin_controller_navigates_on_its_sensors_and_a_fix_corrects_it': 5.4,
    'test_the_builtin_controller_dives_runs_the_leg_at_depth_surfaces_and_is_judged_complete':
        5.3,
    'test_coverage_guided_fuzzing_of_the_decoders': 10.1,   # 4 decoders: 5.0, 2.0, 1.6, 1.5
    'test_builtin_fc_flies_the_default_mission': 4.6,
    'test_attack_closes_in_deals_damage_per_second_and_kills': 3.7,
    'test_fuzz_config_files_raise_only_config_errors': 3.6,
    'test_bad_px4_arguments_are_a_clear_error[args1]': 3.6,
    'test_the_circuit_is_flown_to_the_end_and_judged_on_ground_truth': 3.5,
    'test_a_runtime_error_from_a_ctrl_c_mid_take_is_a_clean_stop_and_any_other_is_not': 3.1,
    'test_escort_formation_and_ring_hold_their_stations_round_a_moving_target': 2.5,
    'test_the_boat_follows_three_waypoints_and_stops_at_the_last': 2.2,
    'test_takeoff_altitude_is_true_whenever_the_fc_joins': 2.2,
    'test_stubborn_processes_are_escalated_to_sigkill': 2.2,
    'test_every_aerosim_command_shown_is_one_the_cli_takes': 8.3,   # resolves ~40 launches
}

# Test modules that build or install the package (they need the build tools and take
# minutes): the module -> what it builds.
INSTALL_MODULES = {
    'test_colcon.py': 'colcon build and colcon test of the tracked sources in a temporary '
                      'workspace, under the distro pytest of .venv/distro-pytest',
}

# `bash scripts/test.sh --fast`: the inner loop (pure and fast, about a minute).
FAST_SELECTION = 'not graph and not slow and not install'


def pytest_configure(config):
    """Register the graph, slow and install markers."""
    config.addinivalue_line('markers', 'graph: starts ROS 2 nodes or DDS participants (the '
                            'pure tests alone: -m "not graph"); set by conftest for every '
                            'test using procs, ros_context or domain_id')
    config.addinivalue_line('markers', "slow: a pure test taking more than ~2 s (conftest's "
                            'SLOW_TESTS, with the measured times); -m "not slow" leaves them out')
    config.addinivalue_line('markers', 'install: builds or installs the package (colcon build '
                            "in a temporary workspace; conftest's INSTALL_MODULES)")


def pytest_collection_modifyitems(items):
    """Mark graph tests (a ROS domain), slow tests (SLOW_TESTS), install tests (their module)."""
    for item in items:
        if GRAPH_FIXTURES & set(getattr(item, 'fixturenames', ())):
            item.add_marker(pytest.mark.graph)
        if item.name in SLOW_TESTS or getattr(item, 'originalname', None) in SLOW_TESTS:
            item.add_marker(pytest.mark.slow)
        if item.path.name in INSTALL_MODULES:
            item.add_marker(pytest.mark.install)


@pytest.fixture
def domain_id():
    """A ROS_DOMAIN_ID held by this test alone."""
    d, lock = claim_domain_id()
    yield d
    lock.close()


# Wall time processes get to end after SIGINT before they are killed [s]: a runner stops its
# nodes within 2 x 5 s (SIGINT, SIGTERM), or 20 s for the nodes writing a summary.
STOP_WAIT_S = 30.0


def _descendants(pid: int) -> list:
    """Pids of every process below pid now (from /proc)."""
    children: dict = {}
    for d in os.listdir('/proc'):
        if not d.isdigit():
            continue
        try:
            with open(f'/proc/{d}/stat') as f:
                ppid = int(f.read().rsplit(')', 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        children.setdefault(ppid, []).append(int(d))
    out, todo = [], [pid]
    while todo:
        for c in children.get(todo.pop(), ()):
            out.append(c)
            todo.append(c)
    return out


def _signal_group(pid: int, sig) -> None:
    """Signal the process group led by pid (each started process leads its own); gone: fine."""
    try:
        os.killpg(pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


class Procs:
    """Processes started by a test; all are stopped (SIGINT, then SIGKILL) at teardown."""

    def __init__(self, domain_id):
        self.domain_id = domain_id
        self.items = []

    def env(self, **extra):
        env = os.environ.copy()
        env['ROS_DOMAIN_ID'] = str(self.domain_id)
        env.update({k: str(v) for k, v in extra.items()})
        return env

    def start(self, args, env=None, **popen_kw):
        """Start args in its own process group; env: extra environment variables.

        Its output (stdout and stderr) is read all the time into p.lines, so a node that logs a
        lot never blocks on a full pipe; read it with output_lines(p), text(p) or output(p).
        """
        import threading
        p = subprocess.Popen(args, env=self.env(**(env or {})), stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, start_new_session=True, **popen_kw)
        p.lines = []

        def drain():
            for line in iter(p.stdout.readline, b''):
                p.lines.append(line.decode('utf-8', 'replace'))
        p.reader = threading.Thread(target=drain, daemon=True)
        p.reader.start()
        self.items.append(p)
        return p

    def node(self, module, name, params=None, ns='/quad'):
        """Start a node module; name None: no node-name remap (a process of several nodes)."""
        args = [sys.executable, '-m', module, '--ros-args', '-r', f'__ns:={ns}']
        if name is not None:
            args += ['-r', f'__node:={name}']
        for k, v in (params or {}).items():
            v = ('true' if v else 'false') if isinstance(v, bool) else v
            args += ['-p', f'{k}:={v}' if v != '' else f"{k}:=''"]   # rcl: '' not empty
        return self.start(args)

    def stop(self):
        """SIGINT every process; whatever is left after STOP_WAIT_S, and below it, is killed."""
        self._stop(self.items)

    def _stop(self, items):
        # `aerosim launch` starts each node in a session of its own: a signal to the
        # runner's group does not reach them, and a runner killed before it stopped its
        # nodes (a node hanging in DDS shutdown) leaves them orphaned, spinning a core for
        # the rest of the run. The runner escalates by itself (SIGTERM, SIGKILL after its
        # grace periods); it gets the time for it, then everything below it is killed.
        below = [c for p in items if p.poll() is None for c in _descendants(p.pid)]
        for p in items:
            if p.poll() is None:
                _signal_group(p.pid, signal.SIGINT)
        deadline = time.monotonic() + STOP_WAIT_S
        for p in items:
            try:
                p.wait(max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                _signal_group(p.pid, signal.SIGKILL)
                p.wait()
        for pid in below:
            _signal_group(pid, signal.SIGKILL)

    def output(self, p):
        """Stop p if needed and return its combined output."""
        if p.poll() is None:
            self._stop([p])
        return self.text(p)

    @staticmethod
    def text(p):
        """All the output of p, which has ended (or will: waits for it)."""
        p.wait()
        p.reader.join(10.0)
        return ''.join(p.lines)


@pytest.fixture
def procs(domain_id):
    """Start processes in this test's ROS domain; stopped at teardown."""
    ps = Procs(domain_id)
    yield ps
    ps.stop()


@pytest.fixture
def ros_context(domain_id):
    """An rclpy context in this test's domain; yields (rclpy, context)."""
    import rclpy
    ctx = rclpy.Context()
    rclpy.init(context=ctx, domain_id=domain_id)
    yield rclpy, ctx
    rclpy.try_shutdown(context=ctx)


class UdpPeer:
    """A UDP endpoint the test plays against a bridge (real sockets on 127.0.0.1)."""

    def __init__(self, port, bridge_port, poll_s=0.1):
        """Bind 127.0.0.1:port; the bridge listens on bridge_port."""
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        # room for seconds of 100 Hz telemetry while the test does something else
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 22)
        self.sock.bind(('127.0.0.1', port))
        self.sock.settimeout(poll_s)
        self.poll_s = poll_s
        self.bridge = ('127.0.0.1', bridge_port)

    def raw(self, data):
        """Send bytes as they are."""
        self.sock.sendto(data, self.bridge)

    def drain(self):
        """Drop what is queued on the socket (the next datagram received is fresh)."""
        self.sock.setblocking(False)
        try:
            while True:
                self.sock.recv(65535)
        except BlockingIOError:
            pass
        finally:
            self.sock.settimeout(self.poll_s)

    def datagrams(self, timeout_s):
        """Yield each datagram received within timeout_s wall seconds."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            try:
                data, _ = self.sock.recvfrom(65535)
            except socket.timeout:
                continue
            yield data


def probe_node(ros_context, name, namespace='/'):
    """A test node in the test's ROS context and an executor for it: (node, executor)."""
    from rclpy.executors import SingleThreadedExecutor
    rclpy, ctx = ros_context
    node = rclpy.create_node(name, namespace=namespace, context=ctx)
    ex = SingleThreadedExecutor(context=ctx)
    ex.add_node(node)
    return node, ex


def port_counts(diags, name):
    """The values of the newest DiagnosticStatus whose name contains name ({} if none)."""
    for arr in reversed(diags):
        for st in arr.status:
            if name in st.name:
                return {kv.key: kv.value for kv in st.values}
    return {}


# Deadlines are generous: a condition that holds ends the wait at once, and a loaded machine
# (CI with other jobs, both cores busy) may take several times as long as a quiet one.
DEADLINE_SCALE = float(os.environ.get('AEROSIM_TEST_DEADLINE_SCALE', '3'))


def spin_until(node, executor, predicate, timeout_s):
    """Spin executor until predicate() holds or the deadline passes; return predicate().

    The deadline is timeout_s x DEADLINE_SCALE wall seconds.
    """
    deadline = time.monotonic() + timeout_s * DEADLINE_SCALE
    while time.monotonic() < deadline:
        if predicate():
            return True
        executor.spin_once(timeout_sec=0.05)
    return predicate()


def spin_for(node, executor, seconds):
    """Spin executor for seconds of wall time (callbacks keep coming in meanwhile)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        executor.spin_once(timeout_sec=min(0.05, max(0.0, deadline - time.monotonic())))


def _free_everywhere(port: int, holders: list) -> bool:
    """Bind port on 127.0.0.1 for UDP and TCP (kept open in holders); False if either is taken."""
    for kind in (socket.SOCK_DGRAM, socket.SOCK_STREAM):
        s = socket.socket(socket.AF_INET, kind)
        try:
            s.bind(('127.0.0.1', port))
        except OSError:
            s.close()
            return False
        holders.append(s)
    return True


# Test ports come from above every port RTPS can use in the test domains: Fast DDS puts domain
# d on 7400 + 250 d + (0..249) (PB 7400, DG 250; multicast d0/d2, unicast d1/d3 + 2 x the
# participant id), and the OS's ephemeral range (32768-60999) lies inside that span. A port a
# finished participant held still gets its peers' datagrams until their lease ends; handed to
# a bridge or a stand-in peer, that stray RTPS would be counted as garbage the test did not send.
_PORTS_FROM = 7400 + 250 * (MAX_TEST_DOMAIN + 1)
_PORTS_TO = 65535
_port_rng = random.Random(os.getpid() ^ time.monotonic_ns())


def free_ports(n: int = 1) -> int:
    """The first of n consecutive ports free on 127.0.0.1 for both UDP and TCP right now.

    Drawn from 64900-65535: no test domain's RTPS port (see above) and no OS ephemeral port;
    the block is checked whole. Tests hand these to the nodes they start, so suites running
    side by side never share a port.
    """
    for _ in range(400):
        base = _port_rng.randint(_PORTS_FROM, _PORTS_TO - n + 1)
        holders: list = []
        try:
            if all(_free_everywhere(base + k, holders) for k in range(n)):
                return base
        finally:
            for h in holders:
                h.close()
    raise RuntimeError(f'no block of {n} free ports found in {_PORTS_FROM}-{_PORTS_TO}')


def tcp_client(port: int, io_timeout_s: float, wait_s: float = 30.0) -> socket.socket:
    """A TCP connection to the server a node is starting on 127.0.0.1:port.

    Retries for up to wait_s while the node comes up (a graph start on a busy machine takes
    seconds); io_timeout_s is the connected socket's timeout.
    """
    deadline = time.monotonic() + wait_s
    while True:
        try:
            return socket.create_connection(('127.0.0.1', port), timeout=io_timeout_s)
        except OSError:
            if time.monotonic() > deadline:
                raise AssertionError(f'no TCP server on 127.0.0.1:{port} after {wait_s:g} s') \
                    from None
            time.sleep(0.2)


def call_service(ex, client, request, what):
    """The service's answer: a request whose answer does not come in 5 s is sent again.

    A client whose reply reader the server has not discovered yet loses the reply (DDS): the
    first call right after service_is_ready() can go unanswered.
    """
    deadline = time.monotonic() + 60 * DEADLINE_SCALE
    while time.monotonic() < deadline:
        fut = client.call_async(request)
        ex.spin_until_future_complete(fut, timeout_sec=5.0)
        if fut.result() is not None:
            return fut.result()
        client.remove_pending_request(fut)
    raise AssertionError(f'{what}: no answer')


def wait_line(lines, text, timeout_s, procs_alive=()):
    """Wait until a line containing text is in lines (a process's output, read all the time).

    True if it came within timeout_s wall seconds; a process of procs_alive dying meanwhile
    fails at once.
    """
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if any(text in line for line in lines):
            return True
        for p in procs_alive:
            assert p.poll() is None, f'a process died waiting for {text!r}'
        time.sleep(0.1)
    return False


def finished(p, timeout_s):
    """P's exit code once it ended, or None if it still runs after timeout_s wall seconds."""
    deadline = time.monotonic() + timeout_s
    while p.poll() is None and time.monotonic() < deadline:
        time.sleep(0.2)
    return p.poll()


def output_lines(p):
    """The list of p's output lines, growing while p runs (read from a thread)."""
    import threading
    if hasattr(p, 'lines'):          # started by Procs: already read all the time
        return p.lines
    out = []

    def read():
        for line in iter(p.stdout.readline, b''):
            out.append(line.decode(errors='replace'))
    threading.Thread(target=read, daemon=True).start()
    return out


def mavsdk_gcs(port, timeout_s):
    """MAVSDK as a ground station on UDP 127.0.0.1:port: (mavsdk, the one system it hears).

    Waits at most timeout_s for the system. Keep the mavsdk object alive while using it.
    """
    from mavsdk import ComponentType, Configuration, Mavsdk
    m = Mavsdk(Configuration.create_with_component_type(ComponentType.GROUND_STATION))
    m.add_any_connection(f'udpin://127.0.0.1:{port}')
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline and not m.get_systems():
        time.sleep(0.2)
    (system,) = m.get_systems()
    return m, system
