"""`colcon test` of the package as a ROS user runs it: the distro's pytest and its plugins.

On a ROS 2 install, `colcon test` runs `python3 -m pytest` with the distro's pytest (7.4 on
Ubuntu 24.04, Jazzy and Kilted) and every pytest11 plugin of the distro, launch_testing's
among them (its `pytest_pycollect_makemodule(path, parent)` hook is refused by pytest 9: the
reason our pinned pytest must not be the one there). This test copies the tracked sources as a
workspace has them (no env.sh, no .venv), builds the package with `colcon build`, and runs
`colcon test` with pytest 7.4.4 (.venv/distro-pytest, from scripts/setup.sh), on a selection
that covers pure tests, the pip-layout tests (they must skip, with their reason) and graph
tests; then `colcon test-result` must be clean.

ROS's own launch_testing plugin is not on PyPI, so the pip-only machine runs this without it.
Where it exists (a ROS install, or ros2/launch's launch, launch_testing, launch_xml and
launch_yaml installed in a prefix on PYTHONPATH, that prefix in AMENT_PREFIX_PATH, as
docs/tests.md shows), pytest loads it through its pytest11 entry point and this test checks it
was loaded: the whole suite under it is run by hand before a release (docs/tests.md).
"""

import importlib.util
import os
from pathlib import Path
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET

import pytest

from conftest import REPO_DIR

DISTRO_PYTEST = REPO_DIR / '.venv' / 'distro-pytest'
SELECTION = ['test/test_package_deps.py', 'test/test_frames.py', 'test/test_env.py',
             'test/test_style.py', 'test/test_runner.py::test_one_renderer_gives_nodes_the_'
             'values_launch_ros_gives', 'test/test_params_live.py::test_time_scale_set_as_a_'
             'parameter_paces_the_simulation']


def colcon(args, env, cwd, timeout_s=600):
    return subprocess.run([sys.executable, '-m', 'colcon'] + args, env=env, cwd=cwd,
                          capture_output=True, text=True, timeout=timeout_s)


@pytest.mark.skipif(not DISTRO_PYTEST.exists(), reason='pytest 7.4.4 for this check is '
                    'installed by scripts/setup.sh (pip-only path)')
@pytest.mark.skipif(not (REPO_DIR / '.git').exists(), reason='copies the tracked files of a '
                    'git checkout')
def test_colcon_test_passes_with_the_distro_pytest_and_plugins(tmp_path, domain_id):
    src = tmp_path / 'ws' / 'src' / 'aerosim'
    files = subprocess.run(['git', 'ls-files'], cwd=REPO_DIR, capture_output=True, text=True,
                           check=True).stdout.split()
    for f in files:                       # the clone a ROS user has: tracked files only
        (src / f).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(REPO_DIR / f, src / f)
    ws = tmp_path / 'ws'
    env = dict(os.environ, ROS_DOMAIN_ID=str(domain_id),
               PYTHONPATH=os.pathsep.join([str(DISTRO_PYTEST),
                                           os.environ.get('PYTHONPATH', '')]))
    env.pop('PYTEST_ADDOPTS', None)
    env.pop('PYTEST_PLUGINS', None)
    b = colcon(['build', '--packages-select', 'aerosim'], env, ws)
    assert b.returncode == 0, b.stdout[-3000:] + b.stderr[-3000:]
    t = colcon(['test', '--packages-select', 'aerosim', '--event-handlers', 'console_direct+',
                '--pytest-args'] + SELECTION, env, ws)
    out = t.stdout + t.stderr
    assert 'pytest-7.4.4' in out or 'pytest 7.4.4' in out, out[-3000:]   # the distro's
    if importlib.util.find_spec('launch_testing') is not None:           # ROS's plugin here
        assert 'launch-testing-' in out, out[-3000:]
    assert t.returncode == 0, out[-5000:]
    r = colcon(['test-result', '--verbose'], env, ws)
    assert r.returncode == 0, r.stdout[-3000:]
    suite = ET.parse(ws / 'build' / 'aerosim' / 'pytest.xml').getroot()
    suite = suite if suite.tag == 'testsuite' else suite.find('testsuite')
    counts = {k: int(suite.get(k)) for k in ('tests', 'failures', 'errors', 'skipped')}
    assert counts['failures'] == counts['errors'] == 0, counts
    assert counts['tests'] >= 15, counts
    # the pip-layout tests skip with their reason (no env.sh in a workspace clone)
    reasons = [s.get('message', '') for s in suite.iter('skipped')]
    assert any('env.sh' in m for m in reasons), reasons
    assert Path(ws / 'install' / 'aerosim').is_dir()

