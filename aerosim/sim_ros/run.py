"""The common main() of aerosim nodes: init, spin, clean shutdown, clear configuration errors."""

import os
import signal
import sys
import time

import rclpy
from rclpy.exceptions import InvalidParameterTypeException, InvalidParameterValueException
from rclpy.executors import ExternalShutdownException, SingleThreadedExecutor

from sim_core.errors import ConfigError
from sim_core.paramfiles import check_nodes, files_in_args


def make_executor(default: str = 'single'):
    """The executor of an aerosim node: 'single' (rclpy's SingleThreadedExecutor) or 'events'.

    'events' is rclpy's experimental C++ EventsExecutor (Kilted): much less CPU per callback,
    used by default only by passive subscribers (flight_report); with it the nodes that step
    the lockstep loop ran no faster and the runner's SIGINT did not stop them.
    AEROSIM_EXECUTOR=single|events overrides the default for every node.
    """
    kind = os.environ.get('AEROSIM_EXECUTOR', default)
    if kind not in ('single', 'events'):
        raise ConfigError(f"AEROSIM_EXECUTOR: 'single' or 'events', got {kind!r}")
    if kind == 'single':
        return SingleThreadedExecutor()
    from rclpy.experimental import EventsExecutor
    return EventsExecutor()


def spin(nodes) -> None:
    """The default body of a process: spin its node (or tuple of nodes) on make_executor()."""
    executor = make_executor()
    for node in nodes if isinstance(nodes, tuple) else (nodes,):
        executor.add_node(node)
    executor.spin()


def until_stopped(node):
    """Spin node until SIGINT/SIGTERM, leaving the ROS context valid for a final write.

    Python handlers replace rclpy's (which shut the context down at once): a node that writes
    or logs something at the end (summary_node, recorder) still can. Returns the executor.
    """
    stop = []
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.append(1))
    executor = make_executor()
    executor.add_node(node)
    while not stop and executor.context.ok():
        executor.spin_once(timeout_sec=0.1)
    return executor


def until_judged(nodes) -> int:
    """Spin nodes until SIGINT/SIGTERM or until the judge of one of them ends the run.

    The judged node has a `judge` (sim_world.judge_io.RunJudge): its `finished` is the exit
    code once judged (None before), its `stop()` writes the summary of a stopped run.
    Python handlers replace rclpy's, so after a signal the context is still valid: the judge
    writes its summary (result stopped) and logs it before the nodes are destroyed. Returns
    the judge's exit code (0 when stopped by a signal: the user ended a run that was not
    judged to an end).
    """
    nodes = nodes if isinstance(nodes, tuple) else (nodes,)
    judged = [n for n in nodes if hasattr(n, 'judge')]
    if len(judged) != 1:
        raise TypeError(f'until_judged: one node with a judge expected, got {len(judged)}')
    judge = judged[0].judge
    stop = []
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.append(1))
    executor = make_executor()
    for n in nodes:
        executor.add_node(n)
    while not stop and executor.context.ok() and judge.finished is None:
        executor.spin_once(timeout_sec=0.1)
    if judge.finished is not None:
        return judge.finished
    judge.stop()
    return 0


def until_finished(node) -> int:
    """Spin node until it sets node.finished (an exit code) or the context ends; the code.

    For the report nodes that end a run (flight_report, plane_report). A passive subscriber:
    rclpy's C++ events executor takes ~2.5x less CPU per message than the Python one, CPU the
    lockstep loop needs on a small machine (in-flight RTF 2.6 -> 3.2 on 2 cores). One executor
    for the whole run (rclpy.spin_once re-adds the node per call).
    """
    executor = make_executor(default='events')
    executor.add_node(node)
    while executor.context.ok() and node.finished is None:
        executor.spin_once(timeout_sec=0.2)
    return node.finished or 0


def check_params_files(nodes, argv, composable=()) -> None:
    """Warn about the --params-file files that do not apply to the process's node(s).

    rcl ignores a file whose sections do not match the node's fully qualified name, and the
    parameters a node does not declare, without a word: each node says so in its log (see
    sim_core.paramfiles). A file that cannot be read was refused by rcl before this.
    """
    import yaml
    files = []
    for path in files_in_args(argv):
        try:
            with open(path, encoding='utf-8') as f:
                files.append((path, yaml.safe_load(f)))
        except (OSError, yaml.YAMLError):
            continue
    nodes = nodes if isinstance(nodes, tuple) else (nodes,)
    # a file for a node this process composes only when needed (a world's MAVLink bridges)
    # is not a mistake when none was composed this time
    present = {n.get_name() for n in nodes}
    files = [(path, doc) for path, doc in files
             if not (isinstance(doc, dict) and doc and all(
                 str(k).rsplit('/', 1)[-1] in composable and
                 str(k).rsplit('/', 1)[-1] not in present for k in doc))]
    if not files:
        return
    for line in check_nodes(files, [(n.get_fully_qualified_name(),
                                     n.list_parameters([], 0).names) for n in nodes]):
        nodes[0].get_logger().warning(line)


def ignore_late_interrupts() -> None:
    """From here on SIGINT does nothing: the process is already stopping.

    rclpy's handler shuts the context down at once and the executor returns; Python's own
    KeyboardInterrupt for the same Ctrl-C may be raised a few bytecodes later, inside the
    cleanup, and print a traceback. A late one landing on this very call is swallowed too.
    SIGTERM still ends a cleanup that hangs.
    """
    for _ in range(3):
        try:
            signal.signal(signal.SIGINT, lambda *_: None)
            return
        except KeyboardInterrupt:
            continue


def _stopping(wait_s: float = 2.0, ok=rclpy.ok) -> bool:
    """Whether the ROS context is going down (a signal arrived), waiting up to wait_s for it.

    rclpy's signal handler shuts the context down from its own thread, while Python raises the
    KeyboardInterrupt of the same SIGINT in the main thread at once. Raised inside rclpy's C++
    conversion of a message being taken, pybind11 reports it as 'RuntimeError: Unable to convert
    call argument' while rclpy.ok() may still be True for a moment on a busy machine (seen in
    CI). A RuntimeError in normal running leaves the context up and is raised after wait_s.
    """
    deadline = time.monotonic() + wait_s
    while ok():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


def run_node(node_cls, name: str, args=None, body=spin, composable=()) -> None:
    """Create node_cls() and run body(node) (default: spin) until it returns or Ctrl-C/SIGTERM.

    node_cls may return a tuple of nodes (several nodes composed in one process); composable:
    names of nodes it composes only when needed (a parameter file for them alone is not
    reported as unused when none was).

    A ConfigError (bad parameter or file), or rclpy refusing a parameter override (type,
    range), is logged as fatal and exits with code 2. Errors
    raised by rclpy while the context is already shutting down (a signal arrived mid-callback)
    are part of a normal stop, not failures. A body returning an int makes it the exit code.
    """
    rclpy.init(args=args)
    node = None
    code = None
    try:
        node = node_cls()
        check_params_files(node, sys.argv if args is None else args, composable)
        code = body(node)
    except (ConfigError, InvalidParameterTypeException, InvalidParameterValueException) as exc:
        # rclpy refuses a parameter override of the wrong type or out of its declared range
        # while the node declares it: the same clear error as our own checks, no traceback
        rclpy.logging.get_logger(name).fatal(f'configuration error: {exc}')
        raise SystemExit(2) from exc
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    except RuntimeError:
        if not _stopping():
            raise
    finally:
        ignore_late_interrupts()
        for n in node if isinstance(node, tuple) else (node,):
            if n is not None:
                n.destroy_node()
        rclpy.try_shutdown()
    if code:
        raise SystemExit(code)
