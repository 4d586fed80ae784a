"""The pip-only runner: prefixes output, forwards Ctrl-C, exits non-zero when a node dies."""

import io
import json
import os
import signal
import subprocess
import sys
import time

from sim_launch.runner import Runner

PY = sys.executable


def alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # a zombie is not alive for our purposes only if reaped; check /proc state
    with open(f'/proc/{pid}/stat') as f:
        return f.read().split()[2] != 'Z'


def test_prefixes_output_and_supervisor_exit_ends_graph():
    out = io.StringIO()
    r = Runner(out)
    sleeper = r.start('sleeper', [PY, '-c', 'import time; print("up", flush=True); '
                                            'time.sleep(3600)'])
    r.start('boss', [PY, '-c', 'import time; time.sleep(0.5); print("done", flush=True)'],
            supervisor=True)
    t0 = time.monotonic()
    assert r.wait() == 0
    assert time.monotonic() - t0 < 600      # the sleeper was stopped, not waited for
    text = out.getvalue()
    assert '[sleeper] up' in text and '[boss] done' in text
    assert 'boss finished (exit code 0)' in text
    assert sleeper.popen.returncode is not None      # stopped and reaped


def test_a_dying_node_stops_the_graph_with_nonzero_exit():
    out = io.StringIO()
    r = Runner(out)
    sleeper = r.start('sleeper', [PY, '-c', 'import time; time.sleep(60)'])
    r.start('crasher', [PY, '-c', 'import sys, time; time.sleep(0.3); sys.exit(3)'])
    assert r.wait() == 3
    assert 'node crasher died (exit code 3)' in out.getvalue()
    assert sleeper.popen.returncode is not None


def test_stubborn_processes_are_escalated_to_sigkill(monkeypatch):
    import sim_launch.runner as runner_mod
    monkeypatch.setattr(runner_mod, 'STOP_GRACE_S', 0.5)
    out = io.StringIO()
    r = Runner(out)
    stubborn = r.start('stubborn', [PY, '-c', 'import signal, time\n'
                                               'signal.signal(signal.SIGINT, signal.SIG_IGN)\n'
                                               'signal.signal(signal.SIGTERM, signal.SIG_IGN)\n'
                                               'print("ready", flush=True)\n'
                                               'time.sleep(60)'])
    r.start('crasher', [PY, '-c', 'import time; time.sleep(1.0); raise SystemExit(1)'])
    assert r.wait() == 1
    assert stubborn.popen.returncode == -signal.SIGKILL


# sim_quad in two processes: the world (world_node) and the quad's sensors (/quad/sensors_node)
SPLIT_QUAD = [PY, '-m', 'sim_launch.cli', 'launch', 'sim_quad', 'camera:=false',
              'summary:=false', 'composition:=split']
SPLIT_NODES = ('world_node', '/quad/sensors_node')      # as the runner names them


def test_cli_ctrl_c_stops_the_real_graph_cleanly(procs):
    p = procs.start(SPLIT_QUAD)
    lines = p.lines

    def started():
        return {name for name in SPLIT_NODES
                if any(line.startswith(f'[{name}] [INFO]') for line in lines)}
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline and len(started()) < 2:
        time.sleep(0.05)
    assert started() == set(SPLIT_NODES), ''.join(lines)
    children = [int(line.split('pid ')[1].rstrip(')\n')) for line in list(lines)
                if '(pid ' in line]
    assert len(children) == 2
    os.killpg(p.pid, signal.SIGINT)       # what a terminal's Ctrl-C does
    rc = p.wait(30)
    rest = procs.text(p)
    assert rc == 0, rest
    assert 'stop requested' in rest
    for pid in children:
        assert not alive(pid)


def test_ctrl_c_while_the_nodes_start_stops_them_though_the_runner_ran_as_a_background_job(
        procs):
    """A shell starts a background job with SIGINT ignored, and exec keeps it ignored.

    The runner's children inherited that: a SIGINT forwarded while a node still imported
    (before rclpy.init installs its handler) was lost, and the node ran on until SIGTERM.
    """
    p = procs.start(SPLIT_QUAD,
                    preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN))
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and \
            sum('(pid ' in line for line in list(p.lines)) < 2:
        time.sleep(0.01)
    time.sleep(0.3)                       # the nodes are importing, rclpy not yet initialised
    os.killpg(p.pid, signal.SIGINT)
    rc = p.wait(60)
    out = procs.text(p)
    assert rc == 0, out[-3000:]
    assert 'escalating' not in out, out[-3000:]
    assert out.count('s after SIGINT') == 2, out[-3000:]


def test_a_node_of_the_real_graph_killed_ends_the_run_nonzero_without_leftovers(procs):
    """SIGKILL mid-run: the runner says so; an essential node's death stops the rest, non-zero.

    A world's vehicle's own node (here the quad's sensors) is not essential: its death is
    reported and the world flies on (sim_launch.graphs.resolve: a vehicle's node); the
    viewer's viz_node is, and ends the run.
    """
    from conftest import free_ports
    p = procs.start(SPLIT_QUAD + ['foxglove:=true', f'foxglove_port:={free_ports()}'])
    lines = p.lines

    def pids():                                         # [runner] started NAME (pid N)
        return {line.split(' started ')[1].split(' (pid ')[0]:
                int(line.split('(pid ')[1].rstrip(')\n'))
                for line in list(lines) if ' started ' in line and '(pid ' in line}
    deadline = time.monotonic() + 90
    sensors, viz = SPLIT_NODES[1], 'viz_node'
    while time.monotonic() < deadline and not all(name in pids() and any(
            line.startswith(f'[{name}] [INFO]') for line in list(lines))
            for name in (sensors, viz)):
        time.sleep(0.05)
    named = {k: v for k, v in pids().items() if k in SPLIT_NODES + (viz,)}
    assert set(named) == set(SPLIT_NODES + (viz,)), ''.join(lines)
    os.kill(named[sensors], signal.SIGKILL)
    gone = f'node {sensors} died (exit code {-signal.SIGKILL}); the graph goes on without it'
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and not any(gone in line for line in list(lines)):
        time.sleep(0.05)
    assert any(gone in line for line in list(lines)) and p.poll() is None, ''.join(lines)
    os.kill(named[viz], signal.SIGKILL)
    rc = p.wait(30)
    rest = procs.text(p)
    assert rc != 0, rest
    assert f'node {viz} died (exit code {-signal.SIGKILL}): stopping the graph' in rest, rest
    for pid in pids().values():
        assert not alive(pid), f'process {pid} outlived the graph'


def test_cli_rejects_unknown_graph_and_bad_arguments():
    r = subprocess.run([PY, '-m', 'sim_launch.cli', 'launch', 'nope'], capture_output=True,
                       text=True)
    assert r.returncode == 2 and 'unknown graph' in r.stderr
    r = subprocess.run([PY, '-m', 'sim_launch.cli', 'launch', 'sim_quad', 'gps:=maybe'],
                       capture_output=True, text=True)
    assert r.returncode == 2 and 'not one of' in r.stderr


VALUES = ['2024', 'true', 'yes', '', 'a:b c', "it's", '[ab]', '1e3', '~', 'null', '0x1F',
          3.0, 0.0, 1e-05, -2.5, float('inf'), 7, 0, -3, True, False,
          ['a', '1', 'true'], [1.0, 2.5], [1, 2], [True, False]]


def launch_ros_value(v):
    """The value a node gets from launch_ros for a Python value in Node(parameters=[{...}]).

    launch_ros (utilities/normalize_parameters.py) turns a str into the substitution text
    yaml.dump(value); evaluate_parameters.py yaml.safe_loads it back; bool/int/float and
    uniform lists keep their type (a list of ints or floats becomes floats there only when mixed).
    """
    import yaml
    if isinstance(v, str):
        return yaml.safe_load(yaml.dump(v))
    return list(v) if isinstance(v, (list, tuple)) else v


def test_one_renderer_gives_nodes_the_values_launch_ros_gives():
    """`-p k:=<ros_value(v)>` as rcl parses it == what launch_ros passes, for every kind."""
    import rclpy
    from rclpy.context import Context

    from sim_launch.runner import ros_value
    args = ['--ros-args']
    for k, v in enumerate(VALUES):
        args += ['-p', f'p{k}:={ros_value(v)}']
    ctx = Context()
    rclpy.init(args=args, context=ctx)
    try:
        node = rclpy.create_node('renderer_probe', context=ctx,
                                 automatically_declare_parameters_from_overrides=True)
        for k, v in enumerate(VALUES):
            got = node.get_parameter(f'p{k}').value
            got = list(got) if isinstance(got, (list, tuple)) or hasattr(got, 'tolist') else got
            want = launch_ros_value(v)
            assert got == want and [type(x) for x in (got if isinstance(got, list) else [got])] \
                == [type(x) for x in (want if isinstance(want, list) else [want])], (v, got)
        node.destroy_node()
    finally:
        rclpy.shutdown(context=ctx)


def _our_node_classes():
    """Every rclpy Node subclass defined in the package's modules."""
    import importlib
    import inspect
    import pkgutil

    from rclpy.node import Node

    from conftest import PKG_DIR
    found = {}
    for pkg in ('sim_ros', 'sim_report', 'sim_dynamics', 'sim_sensors', 'sim_viz', 'sim_bag',
                'mavlink_bridge', 'imc_bridge', 'usv_bridge', 'sim_world'):
        for info in pkgutil.walk_packages([str(PKG_DIR / pkg)], prefix=f'{pkg}.'):
            if '.core' in info.name or info.name.endswith('.__main__'):
                continue
            mod = importlib.import_module(info.name)
            for _, cls in inspect.getmembers(mod, inspect.isclass):
                if issubclass(cls, Node) and cls is not Node and cls.__module__ == mod.__name__:
                    found[f'{cls.__module__}.{cls.__name__}'] = cls
    return found


def test_every_node_is_destroyed_cleanly_half_built(tmp_path, monkeypatch):
    """A node whose __init__ raised is destroyed without raising and without acting.

    rclpy's context shutdown destroys every node it made, also one whose __init__ raised (a
    parameter of the wrong type): destroy_node() must then neither raise nor act (write a
    summary, send a POWEROFF, stop a server that never started).
    """
    import rclpy
    from rclpy.context import Context
    from rclpy.node import Node
    monkeypatch.chdir(tmp_path)
    classes = _our_node_classes()
    assert len(classes) >= 15, sorted(classes)     # every node, not a few found by chance
    ctx = Context()
    rclpy.init(args=[], context=ctx)
    try:
        for k, (_name, cls) in enumerate(sorted(classes.items())):
            half = cls.__new__(cls)
            Node.__init__(half, f'half_built_{k}', context=ctx)   # the subclass never ran
            half.destroy_node()
    finally:
        rclpy.shutdown(context=ctx)
    assert not list(tmp_path.rglob('*')), 'a half-built node wrote files'


def test_ctrl_c_on_the_hil_graph_ends_every_node_within_its_grace(procs, tmp_path):
    """Ctrl-C mid-flight: no node is escalated to SIGTERM, the summary is written, exit 0.

    The world's process writes the summary and its plot after SIGINT (its judge; preloaded
    matplotlib, a grace declared in the graph, as launch's sigterm_timeout); before, the
    summary's node took 6 s and was escalated at 5 s.
    """
    from conftest import free_ports, wait_line
    port = free_ports(2)
    p = procs.start([PY, '-m', 'sim_launch.cli', 'launch', 'sim_quad_hil',
                     f'output_dir:={tmp_path}',
                     f'bind:=127.0.0.1:{port}', f'fc_address:=127.0.0.1:{port + 1}',
                     'sensor_topics:=false'])
    assert wait_line(p.lines, 'mission: accepted', 120.0, (p,)), ''.join(p.lines)[-3000:]
    time.sleep(2.0)                          # flying
    os.killpg(p.pid, signal.SIGINT)
    rc = p.wait(60)
    out = procs.text(p)
    assert rc == 0, out[-3000:]
    assert 'escalating' not in out, out[-3000:]
    assert (tmp_path / 'latest' / 'summary.json').exists(), out[-3000:]
    assert json.loads((tmp_path / 'latest' / 'summary.json').read_text())['result'] == \
        'stopped', out[-3000:]


def sigint_ignored(pid: int) -> bool:
    """Process pid ignores SIGINT (its SigIgn mask in /proc)."""
    with open(f'/proc/{pid}/status') as f:
        mask = next(int(line.split()[1], 16) for line in f if line.startswith('SigIgn:'))
    return bool(mask & (1 << (signal.SIGINT - 1)))


def test_a_console_script_started_with_sigint_ignored_stops_on_sigint_while_importing(procs):
    """ros2 launch run as a background job: its nodes' scripts restore SIGINT first."""
    p = procs.start([PY, '-c', 'from sim_launch.entry import world_node; world_node()',
                     '--ros-args', '-p', 'time_scale:=0.0', '-p', 'scenario_file:=default'],
                    preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN))
    # the script gives SIGINT back as its first statement (sim_launch.entry); a SIGINT before
    # that, while the interpreter itself starts, is ignored as the launcher asked: wait for it
    # (0.1 s was not enough with two test suites and a build on the machine)
    deadline = time.monotonic() + 30.0
    while sigint_ignored(p.pid) and time.monotonic() < deadline and p.poll() is None:
        time.sleep(0.005)
    assert not sigint_ignored(p.pid), 'the script never gave SIGINT back'
    p.send_signal(signal.SIGINT)          # importing numba, rclpy: no rclpy handler yet
    rc = p.wait(30)                       # before: ran on, until SIGTERM
    assert rc == 0 and 'Traceback' not in procs.text(p), procs.text(p)[-2000:]


_RACE = """
import os, signal, sys
sys.path.insert(0, {root!r})
from rclpy.node import Node
from sim_ros.run import run_node


def body(node):
    try:
        if {signal_first}:
            os.kill(os.getpid(), signal.SIGINT)  # rclpy shuts the context down from its thread
    except KeyboardInterrupt:
        pass
    # what pybind11 raises when the KeyboardInterrupt of that SIGINT lands inside rclpy's C++
    # conversion of a message being taken (seen in CI): the context may still be up here
    raise RuntimeError("Unable to convert call argument '0' to Python object")


run_node(lambda: Node('racer'), 'racer', body=body)
"""


def test_a_runtime_error_from_a_ctrl_c_mid_take_is_a_clean_stop_and_any_other_is_not():
    """SIGINT raised inside rclpy's take of a message is a clean stop; a RuntimeError is not.

    rclpy's signal handler shuts the context down from its own thread a moment after Python
    raises KeyboardInterrupt in the main thread: the node must wait for that before judging
    the error, and still report a RuntimeError that no signal explains.
    """
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = {**os.environ, 'ROS_DOMAIN_ID': '93'}
    for signal_first, clean in ((True, True), (False, False)):
        p = subprocess.run([PY, '-c', _RACE.format(root=root, signal_first=signal_first)],
                           capture_output=True, text=True, timeout=60, env=env)
        assert (p.returncode == 0) is clean, (signal_first, p.returncode, p.stderr[-2000:])
        assert ('Traceback' in p.stderr) is not clean, (signal_first, p.stderr[-2000:])


def test_a_context_going_down_late_still_counts_as_stopping():
    """The context of a Ctrl-C'd node may go down a moment after the error (a loaded machine)."""
    from sim_ros.run import _stopping
    polls = iter([True] * 10 + [False])
    assert _stopping(wait_s=5.0, ok=lambda: next(polls))          # down after ~0.2 s
    t0 = time.monotonic()
    assert not _stopping(wait_s=0.3, ok=lambda: True)             # never down: a real error
    assert time.monotonic() - t0 >= 0.3
