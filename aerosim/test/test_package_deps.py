"""Every third-party import of the package is declared: package.xml, rosdep, requirements.txt.

A ROS user gets the package's dependencies from package.xml (`rosdep install`); the pip-only
path from requirements.txt. An import missing from either breaks one of them at run time
(`ModuleNotFoundError` in a node), so each is checked here against the imports themselves.
"""

import ast
import functools
import importlib.metadata
import os
from pathlib import Path
import re
import sys
import xml.etree.ElementTree as ET

import yaml

from conftest import PKG_DIR, REPO_DIR

# rosdep keys whose distribution name differs from the key's convention (python3-<name>)
ALIASES = {'pillow': 'python3-pil', 'pyyaml': 'python3-yaml'}
# '-pip' keys that ros/rosdistro's rosdep/python.yaml defines (read 2026-11-24); the others
# this package uses are defined in the repository's rosdep/aerosim.yaml
UPSTREAM_PIP_KEYS = {'python3-pymavlink-pip', 'python3-rosbags-pip', 'python3-ahrs-pip',
                     'python3-filterpy-pip'}
OUR_MODULES = {p.name for p in PKG_DIR.iterdir() if (p / '__init__.py').exists()}
# ROS packages whose Python module has another name (a ROS install has them; the pip wheels
# do not): ros2/geometry2's tf2_ros_py installs the module tf2_ros, while the key tf2_ros
# is the C++ package
ROS_MODULE_PACKAGES = {'tf2_ros': 'tf2_ros_py'}


def imports(files):
    """Top-level names of the absolute imports in files, minus the stdlib and our own."""
    found = {}
    for f in files:
        for node in ast.walk(ast.parse(f.read_text(), str(f))):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            for name in names:
                top = name.split('.')[0]
                if top not in sys.stdlib_module_names and top not in OUR_MODULES:
                    found.setdefault(top, f.relative_to(PKG_DIR))
    return found


def package_keys():
    root = ET.parse(PKG_DIR / 'package.xml').getroot()
    return ({e.text.strip() for e in root.iter('exec_depend')},
            {e.text.strip() for e in root.iter('test_depend')})


@functools.cache
def distributions():
    return importlib.metadata.packages_distributions()


def ros_package(dist: str):
    """The ROS package a distribution is, or None.

    The ROS 2 wheels on PyPI are named ros-<package> (ros-rclpy); a ROS install's Python
    packages (launch, launch_ros, tf2_ros_py) keep their package name and are registered in
    the ament index of a prefix in AMENT_PREFIX_PATH (share/ament_index/resource_index/
    packages/<name>, as ament_index_python reads it).
    """
    if dist.startswith('ros-'):
        return dist[4:].replace('-', '_')
    name = dist.replace('-', '_')
    for prefix in filter(None, os.environ.get('AMENT_PREFIX_PATH', '').split(os.pathsep)):
        if (Path(prefix) / 'share' / 'ament_index' / 'resource_index' / 'packages' /
                name).exists():
            return name
    return None


def expected_key(module: str):
    """(rosdep keys that declare module, distribution or None for a ROS package)."""
    dists = distributions().get(module)
    if (REPO_DIR / module / 'package.xml').exists():
        return {module}, None                       # our message package
    if not dists:                                   # not here: a ROS install's package
        return {ROS_MODULE_PACKAGES.get(module, module)}, None
    ros = [r for r in map(ros_package, dists) if r]
    if ros:
        return {ros[0]}, None
    dist = re.sub(r'[-_.]+', '-', dists[0]).lower()
    return {ALIASES.get(dist, f'python3-{dist}'), f'python3-{dist}-pip'}, dist


def package_files():
    return [f for f in PKG_DIR.rglob('*.py')
            if f.parts[len(PKG_DIR.parts)] not in ('test', 'build') and f.name != 'setup.py']


def test_every_import_of_the_package_is_an_exec_depend():
    exec_keys, _ = package_keys()
    missing = {}
    for module, where in imports(package_files()).items():
        keys, _ = expected_key(module)
        if not keys & exec_keys:
            missing[module] = (sorted(keys), str(where))
    assert not missing, f'imports not declared in package.xml (module: keys, a file): {missing}'


def test_every_import_of_the_tests_is_declared():
    exec_keys, test_keys = package_keys()
    local = {f.stem for f in (PKG_DIR / 'test').glob('*.py')}
    missing = {m: str(w) for m, w in imports((PKG_DIR / 'test').glob('*.py')).items()
               if m not in local and not expected_key(m)[0] & (exec_keys | test_keys)}
    assert not missing, f'test imports not in package.xml: {missing}'


def test_every_pip_key_resolves_and_every_library_is_pinned():
    exec_keys, test_keys = package_keys()
    ours = yaml.safe_load((REPO_DIR / 'rosdep' / 'aerosim.yaml').read_text())
    pip_keys = {k for k in exec_keys | test_keys if k.endswith('-pip')}
    assert pip_keys - UPSTREAM_PIP_KEYS == set(ours), 'rosdep/aerosim.yaml vs package.xml'
    for key, rule in ours.items():                  # our rules install what the key names
        (pkg,) = rule['*']['pip']['packages']
        assert key == f'python3-{pkg.lower()}-pip', (key, pkg)
    pinned = {re.sub(r'[-_.]+', '-', line.split('==')[0]).lower()
              for line in (REPO_DIR / 'requirements.txt').read_text().splitlines()
              if '==' in line and not line.startswith('#')}
    libs = {expected_key(m)[1] for m in imports(package_files())} - {None}
    assert libs <= pinned, f'imported but not pinned in requirements.txt: {libs - pinned}'


def test_a_ros_install_s_python_packages_are_ros_keys(tmp_path, monkeypatch):
    """On a ROS install launch, launch_ros, tf2_ros_py are distributions named as the package.

    They are registered in the ament index of a prefix (ament_index_python's layout); the
    pip wheels are ros-<package>; tf2_ros's module is the package tf2_ros_py's.
    """
    index = tmp_path / 'share' / 'ament_index' / 'resource_index' / 'packages'
    index.mkdir(parents=True)
    for name in ('launch', 'launch_ros', 'tf2_ros_py'):
        (index / name).touch()
    monkeypatch.setenv('AMENT_PREFIX_PATH', f'/nonexistent{os.pathsep}{tmp_path}')
    assert ros_package('launch') == 'launch'
    assert ros_package('launch-ros') == 'launch_ros'        # a normalised metadata name
    assert ros_package('tf2_ros_py') == 'tf2_ros_py'
    assert ros_package('ros-rclpy') == 'rclpy'
    assert ros_package('numpy') is None and ros_package('pymavlink') is None
    if 'tf2_ros' not in distributions():                    # the pip-only machine
        assert expected_key('tf2_ros') == ({'tf2_ros_py'}, None)
    assert expected_key('numpy')[1] == 'numpy'
