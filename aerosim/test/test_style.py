"""Style checks: ruff (flake8, pep257, quotes, import order, blank lines), message comments.

The layering and the purity of the cores: test_layers.
"""

from pathlib import Path
import re
import shutil
import subprocess
import sys

import pytest

from conftest import PKG_DIR, REPO_DIR

MSG_DIR = REPO_DIR / 'aerosim_msgs'


def test_ruff_clean():
    ruff = Path(sys.executable).parent / 'ruff'
    if not ruff.exists():
        ruff = shutil.which('ruff')
    if ruff is None:        # a ROS install's colcon test: ruff is a pip-only tool of ours
        pytest.skip('ruff (requirements.txt, pip-only path) is not installed here')
    r = subprocess.run([str(ruff), 'check', '--no-cache', str(REPO_DIR)], capture_output=True,
                       text=True, cwd=REPO_DIR)
    assert r.returncode == 0, r.stdout + r.stderr


def test_mypy_clean_on_the_pure_layers():
    """The pure layers (0-4 of test_layers' table) type-check clean (../mypy.ini)."""
    from test_layers import PURE, layer, sources
    try:
        import mypy  # noqa: F401
    except ImportError:     # a ROS install's colcon test: mypy is a pip-only tool of ours
        pytest.skip('mypy (requirements.txt, pip-only path) is not installed here')
    files = [str(path) for mod, path in sources() if layer(mod) <= PURE]
    assert len(files) > 50
    r = subprocess.run([sys.executable, '-m', 'mypy', '--config-file',
                        str(REPO_DIR / 'mypy.ini'), '--no-incremental', *files],
                       capture_output=True, text=True, cwd=REPO_DIR)
    assert r.returncode == 0, r.stdout + r.stderr


ELEMENT_TYPES = {'MavlinkPeer.msg', 'SwarmInput.msg', 'SwarmInputResult.msg'}


def test_every_message_has_header_and_commented_fields():
    msgs = sorted((MSG_DIR / 'msg').glob('*.msg'))
    assert len(msgs) >= 16
    for path in msgs:
        fields = []
        for line in path.read_text().splitlines():
            body = line.split('#', 1)[0].strip()
            if not body or '=' in body:       # comment, blank or constant
                continue
            fields.append((body, line))
        if path.name in ELEMENT_TYPES:   # only used as array elements of a stamped message
            assert any(f'aerosim_msgs/{path.stem}[]' in m.read_text() for m in msgs), path.name
        else:
            assert fields[0][0] == 'std_msgs/Header header', path.name
        for body, line in fields:
            assert '#' in line and len(line.split('#', 1)[1].strip()) > 3, \
                f'{path.name}: field without a unit/frame comment: {body}'


def test_every_message_and_service_is_built():
    cmake = (MSG_DIR / 'CMakeLists.txt').read_text()
    for path in list((MSG_DIR / 'msg').glob('*.msg')) + list((MSG_DIR / 'srv').glob('*.srv')):
        assert f'"{path.parent.name}/{path.name}"' in cmake, path.name


def test_every_node_has_console_script_and_main():
    from sim_launch.entry import NODES
    setup = (PKG_DIR / 'setup.py').read_text()
    for node in PKG_DIR.glob('*/*_node.py'):
        if node.parent.name == 'sim_ros':    # port_node, sim_time_node: node base classes
            continue
        # the script runs sim_launch.entry's, which restores SIGINT and runs the module's main
        assert f'{node.stem} = sim_launch.entry:{node.stem}' in setup, node
        assert NODES[node.stem] == f'{node.parent.name}.{node.stem}', node
        assert re.search(r'^def main\(', node.read_text(), re.M), node
