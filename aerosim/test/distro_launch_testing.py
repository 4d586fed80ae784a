"""Stand-in for the pytest plugin a ROS 2 distro installs with launch_testing.

On a ROS install, `launch_testing` registers `launch_testing.pytest.hooks` as a pytest11
plugin, so every pytest run loads it, `colcon test` of our package included. Its hooks, as
ros2/launch's launch_testing/launch_testing/pytest/hooks.py has them (master, also Jazzy and
Kilted), are reproduced here where they touch a package without launch tests:

- `pytest_pycollect_makemodule(path, parent)`: the legacy `path` argument, which pytest 8.1+
  no longer offers (PluginValidationError at start, ros2/launch#979: why the distro's pytest
  7.4, not ours, must run the tests there). It imports every collected test module itself
  (`find_launch_test_entrypoint`: import_path(path, root=None)) to look for
  `generate_test_description`, then returns `pytest.Module.from_parent(parent, path=path)`;
- `pytest_addoption`: `--launch-args`; `pytest_configure`: the `launch_test` marker.

A module with `generate_test_description` (a launch test) is not modelled: it is refused.
"""

import pathlib

import pytest


def pytest_pycollect_makemodule(path, parent):
    """Import the module (as launch_testing does) and collect it as a plain pytest module."""
    from _pytest.pathlib import import_path
    module = import_path(path, root=None)
    if getattr(module, 'generate_test_description', None) is not None:
        raise NotImplementedError(f'{path}: launch tests are not modelled by this stand-in')
    path = pathlib.Path(path)
    if path.name == '__init__.py':
        return pytest.Package.from_parent(parent, path=path)
    return pytest.Module.from_parent(parent=parent, path=path)


def pytest_addoption(parser):
    """--launch-args, as launch_testing adds it."""
    parser.addoption('--launch-args', action='append', nargs='*', default=[],
                     help='One or more Launch test arguments')


def pytest_configure(config):
    """The launch_test marker, as launch_testing declares it."""
    config.addinivalue_line(
        'markers',
        'launch_test: mark a generate_test_description function as a launch test entrypoint')
