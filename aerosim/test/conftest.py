"""Shared test fixtures: unique ROS domains, node processes, waiting on topics."""

import itertools
import os
from pathlib import Path
import signal
import subprocess
import sys
import time

import pytest

PKG_DIR = Path(__file__).resolve().parent.parent
REPO_DIR = PKG_DIR.parent
_domain_ids = itertools.count(int(os.environ.get('AEROSIM_TEST_DOMAIN_BASE', '40')) +
                              (os.getpid() % 20) * 5)


def next_domain_id() -> int:
    """A ROS_DOMAIN_ID no other test of this run uses (DDS traffic stays separate)."""
    return next(_domain_ids) % 230


@pytest.fixture
def domain_id():
    """A unique ROS_DOMAIN_ID for this test."""
    return next_domain_id()


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

    def start(self, args, **popen_kw):
        p = subprocess.Popen(args, env=self.env(), stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, start_new_session=True, **popen_kw)
        self.items.append(p)
        return p

    def node(self, module, name, params=None, ns='/quad'):
        """Start a node module; name None: no node-name remap (a process of several nodes)."""
        args = [sys.executable, '-m', module, '--ros-args', '-r', f'__ns:={ns}']
        if name is not None:
            args += ['-r', f'__node:={name}']
        for k, v in (params or {}).items():
            v = ('true' if v else 'false') if isinstance(v, bool) else v
            args += ['-p', f'{k}:={v}']
        return self.start(args)

    def stop(self):
        for p in self.items:
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGINT)
        deadline = time.monotonic() + 5.0
        for p in self.items:
            try:
                p.wait(max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait()

    def output(self, p):
        """Stop p if needed and return its combined output."""
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGINT)
            try:
                p.wait(5.0)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
        return p.stdout.read().decode('utf-8', 'replace')


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


def spin_until(node, executor, predicate, timeout_s):
    """Spin executor until predicate() holds or timeout_s wall seconds pass; return it."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if predicate():
            return True
        executor.spin_once(timeout_sec=0.05)
    return predicate()
