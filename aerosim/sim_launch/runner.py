"""pip-only launcher: starts a graph description as one process per node.

Forwards Ctrl-C (SIGINT) and SIGTERM to every node, prefixes each output line with the node's
name, and exits non-zero if a node dies. An optional *supervisor* process (e.g. the monitor of
`--sim-seconds`) ends the graph when it exits: its exit code becomes the runner's.
"""

from dataclasses import dataclass
import os
import signal
import subprocess
import sys
import threading
import time
from typing import List, Optional, Sequence

from sim_launch.entry import restore_sigint
from sim_launch.graphs import ResolvedNode

STOP_GRACE_S = 5.0


def ros_value(v) -> str:
    """Render a parameter value for `-p name:=value` (rcl parses it as a YAML scalar or list).

    The node gets the type the value has here, as under launch_ros (which writes a Python str
    through yaml.dump, a quoted scalar when it would read as something else): a string is
    always single-quoted (`title:=2024` stays the STRING '2024', a regex like [ab] is not a
    list), a list is a flow sequence of rendered items.
    """
    if isinstance(v, bool):
        return 'true' if v else 'false'
    if isinstance(v, str):
        return "'" + v.replace("'", "''") + "'"
    if isinstance(v, (list, tuple)):
        return '[' + ', '.join(ros_value(x) for x in v) + ']'
    return repr(v)


def node_command(r: ResolvedNode, python: str = sys.executable) -> List[str]:
    """The command line that starts a resolved node (the same arguments launch_ros passes).

    A node that is not a Python module of ours (rviz2) runs as its executable.
    """
    head = [python, '-m', r.module] if r.module else [r.executable]
    cmd = head + list(r.arguments) + ['--ros-args']
    if r.rename:
        cmd += ['-r', f'__node:={r.name}']
    if r.namespace:
        # none for the process of a fleet's nodes: a global __ns remap would override the
        # namespace each of its nodes names itself (rcl applies it to every node)
        cmd += ['-r', f'__ns:={r.namespace}']
    cmd += ['--log-level', r.log_level]
    for f in r.params_files:
        cmd += ['--params-file', f]
    for k, v in r.parameters.items():
        cmd += ['-p', f'{k}:={ros_value(v)}']
    for a, b in r.remappings:
        cmd += ['-r', f'{a}:={b}']
    return cmd


@dataclass
class Proc:
    """A started process and its output prefix.

    grace_s: wall time it gets after SIGINT (and again after SIGTERM) before the next signal.
    """

    name: str
    popen: subprocess.Popen
    supervisor: bool = False
    thread: threading.Thread = None
    grace_s: float = STOP_GRACE_S
    essential: bool = True           # the graph stops when it dies
    reported: bool = False           # its end was logged (a non-essential one)


class Runner:
    """Starts processes, relays their output, and stops them all together."""

    def __init__(self, out=None):
        """out: stream for prefixed output (default stdout)."""
        self.out = out or sys.stdout
        self.procs: List[Proc] = []
        self._lock = threading.Lock()
        self._stop_requested = False

    def log(self, text: str) -> None:
        """Print a runner line."""
        with self._lock:
            self.out.write(f'[aerosim] {text}\n')
            self.out.flush()

    def _relay(self, p: Proc) -> None:
        prefix = f'[{p.name}] '
        for raw in iter(p.popen.stdout.readline, b''):
            line = raw.decode('utf-8', 'replace').rstrip('\n')
            with self._lock:
                self.out.write(prefix + line + '\n')
                self.out.flush()

    def start(self, name: str, cmd: Sequence[str], supervisor: bool = False,
              env: Optional[dict] = None, grace_s: Optional[float] = None,
              essential: bool = True) -> Proc:
        """Start one process in its own process group (signals are forwarded explicitly).

        grace_s: how long it may take to stop after SIGINT before SIGTERM (then SIGKILL);
        at least STOP_GRACE_S. essential False: its death is logged and the graph goes on
        (a fleet's flight controllers: the other vehicles fly on, as under launch_ros).
        """
        if threading.current_thread() is threading.main_thread():
            # started as a shell's background job: SIGINT ignored, and an ignored signal stays
            # ignored across exec. A node would then lose the SIGINT forwarded to it before
            # rclpy.init installs its handler (its imports: 5 s on a busy machine)
            restore_sigint()
        popen = subprocess.Popen(list(cmd), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                 stdin=subprocess.DEVNULL, start_new_session=True,
                                 env=env if env is not None else os.environ.copy())
        p = Proc(name, popen, supervisor,
                 grace_s=STOP_GRACE_S if grace_s is None else max(grace_s, STOP_GRACE_S),
                 essential=essential)
        p.thread = threading.Thread(target=self._relay, args=(p,), daemon=True)
        p.thread.start()
        self.procs.append(p)
        self.log(f'started {name} (pid {popen.pid})')
        return p

    @staticmethod
    def _signal(p: Proc, sig) -> None:
        try:
            os.killpg(p.popen.pid, sig)
        except ProcessLookupError:
            pass

    def stop(self) -> None:
        """SIGINT every live process; one alive after its grace gets SIGTERM, then SIGKILL."""
        signals = (signal.SIGINT, signal.SIGTERM, signal.SIGKILL)
        now = time.monotonic()
        stage = {}
        for p in self.procs:
            if p.popen.poll() is None:
                self._signal(p, signal.SIGINT)
                stage[id(p)] = (0, now + p.grace_s)
        t0 = now
        while stage:                       # the processes signalled and not yet seen ended
            now = time.monotonic()
            for p in self.procs:
                if id(p) not in stage:
                    continue
                k, deadline = stage[id(p)]
                if p.popen.poll() is not None:
                    del stage[id(p)]
                    self.log(f'{p.name} stopped {now - t0:.1f} s after SIGINT'
                             + ('' if k == 0 else f' (after {signals[k].name})'))
                elif k < 2 and now >= deadline:
                    self.log(f'{p.name} still alive {p.grace_s:g} s after '
                             f'{signals[k].name}; escalating to {signals[k + 1].name}')
                    self._signal(p, signals[k + 1])
                    stage[id(p)] = (k + 1, now + p.grace_s)
            time.sleep(0.05)
        for p in self.procs:
            p.popen.wait()
            if p.thread:
                p.thread.join(timeout=1.0)

    def wait(self) -> int:
        """Block until the graph ends; return the exit code for the runner.

        Ends on: Ctrl-C/SIGTERM (0), the supervisor exiting (its code), any other essential
        process exiting (1, reported as a node death). A non-essential one is reported once.
        """
        def on_signal(signum, frame):
            self._stop_requested = True
        old_int = signal.signal(signal.SIGINT, on_signal)
        old_term = signal.signal(signal.SIGTERM, on_signal)
        code = 0
        try:
            while True:
                if self._stop_requested:
                    self.log('stop requested: stopping all nodes')
                    code = 0
                    break
                ended = [p for p in self.procs if p.popen.poll() is not None]
                for p in ended:
                    if not (p.essential or p.supervisor or p.reported):
                        p.reported = True
                        self.log(f'node {p.name} died (exit code {p.popen.returncode}); the '
                                 'graph goes on without it')
                ended = [p for p in ended if p.essential or p.supervisor]
                if ended:
                    p = ended[0]
                    rc = p.popen.returncode
                    if p.supervisor:
                        self.log(f'{p.name} finished (exit code {rc}): stopping the graph')
                        code = rc
                    else:
                        self.log(f'node {p.name} died (exit code {rc}): stopping the graph')
                        code = rc if rc not in (0, None) and rc > 0 else 1
                    break
                time.sleep(0.05)
        finally:
            self.stop()
            signal.signal(signal.SIGINT, old_int)
            signal.signal(signal.SIGTERM, old_term)
        return code
