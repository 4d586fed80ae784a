"""The package layering, enforced: every first-party import runs down the layers, never up.

    0 foundation       sim_core (frames, clock, geodesy, links, scenario, validation)
    1 models           sim_dynamics.core, sim_sensors.core, sim_bag.core, sim_autopilot.core
                       (the plane's autopilot and flight plans)
    2 protocol / view  mavlink_bridge.core, mavlink_bridge.fc (the FC's pure parts),
                       imc_bridge.core, usv_bridge.core, sim_viz.core
    3 report cores     sim_report.core (judges on ground truth, plots with the views' palette)
    4 pure harness     mavlink_bridge.fc.offline (model + sensors + FC + judge, one process),
                       sim_world.core (any mix of kinds stepped), kinds (each kind's folder:
                       its entry, model, judge, view, controllers; kinds.entry)
    5 ROS runtime      sim_ros (node bases, parameters, QoS, conversions, main())
    6 nodes            every other module: the nodes and their ROS-side helpers (a kind's
                       ros.py: its interfaces in the world's process)
    7 launcher         sim_launch, launch/*.launch.py

Rules: (1) an import goes to a layer at or below its own; (2) within layers 0-5 a module
imports only its own top-level package from its own layer (no sideways imports between
cores); (3) nothing imports a node module (a process's main), except a composition named in
COMPOSITIONS with its reason; (4) a first-party import inside a function says why, on its line
or the line above (`# deferred: <reason>`); (5) layers 0-4 import no rclpy. A relative import
(a kind's folder: `from .model import ...`) is checked as the absolute one it stands for.
"""

import ast
from fnmatch import fnmatch
from pathlib import Path
import re

from conftest import PKG_DIR

FIRST_PARTY = ('sim_core', 'sim_ros', 'sim_launch', 'sim_report', 'sim_bag', 'sim_viz',
               'sim_dynamics', 'sim_sensors', 'mavlink_bridge', 'imc_bridge', 'usv_bridge',
               'sim_autopilot', 'sim_world', 'kinds')
# most specific prefix first (a prefix may be a pattern: kinds.*.ros, any kind's ros module)
LAYERS = (
    ('mavlink_bridge.fc.offline', 4), ('mavlink_bridge.fc.fc_node', 6), ('sim_world.core', 4),
    ('kinds.*.ros', 6), ('kinds', 4),
    ('sim_core', 0),
    ('sim_dynamics.core', 1), ('sim_sensors.core', 1), ('sim_bag.core', 1),
    ('sim_autopilot.core', 1),
    ('mavlink_bridge.core', 2), ('mavlink_bridge.fc', 2), ('imc_bridge.core', 2),
    ('usv_bridge.core', 2), ('sim_viz.core', 2),
    ('sim_report.core', 3),
    ('sim_ros', 5),
    ('sim_launch', 7), ('launch', 7),
)
NODES, PURE, RUNTIME = 6, 4, 5
NODE_MODULES = {
    'sim_dynamics.usv_swarm_node', 'sim_sensors.sensors_node', 'sim_sensors.camera_node',
    'mavlink_bridge.mavlink_bridge_node', 'mavlink_bridge.fc.fc_node',
    'imc_bridge.imc_bridge_node', 'usv_bridge.usv_bridge_node', 'sim_bag.recorder',
    'sim_bag.player', 'sim_viz.viz_node', 'sim_viz.foxglove_node', 'sim_report.monitor',
    'sim_world.world_node', 'sim_world.world_plant',
}
COMPOSITIONS = {
    # module -> (node modules it may import, why)
    'sim_world.world_plant': ({'sim_world.world_node', 'mavlink_bridge.mavlink_bridge_node',
                               'sim_sensors.sensors_node'},
                              "the world, its MAVLink vehicles' bridges and the other "
                              "vehicles' sensors composed in one process: each lockstep step "
                              'is a function call, not two DDS hops'),
    'sim_launch.cli': ({'sim_bag.recorder', 'sim_bag.player'},
                       '`aerosim record` and `aerosim play` run the node in the CLI process'),
}


def layer(module: str) -> int:
    for prefix, n in LAYERS:
        if fnmatch(module, prefix) or fnmatch(module, prefix + '.*'):
            return n
    return NODES


def module_name(path: Path) -> str:
    rel = path.relative_to(PKG_DIR).with_suffix('')
    if rel.parts[0] == 'launch':
        return 'launch.' + rel.name.replace('.launch', '')
    parts = rel.parts[:-1] if rel.name == '__init__' else rel.parts
    return '.'.join(parts)


def sources():
    for path in sorted(PKG_DIR.rglob('*.py')):
        top = path.relative_to(PKG_DIR).parts[0]
        if top in FIRST_PARTY or top == 'launch':
            yield module_name(path), path


def first_party_imports(path: Path, module: str = ''):
    """(imported module, line number, inside a function?, the source line) of a file.

    module: the file's module name (default: from its path in the package).
    """
    text = path.read_text()
    lines = text.splitlines()
    tree = ast.parse(text)
    in_function = set()
    for fn in ast.walk(tree):
        if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            in_function.update(id(n) for n in ast.walk(fn) if n is not fn)
    here = (module or module_name(path)).split('.')
    package = here if path.name == '__init__.py' else here[:-1]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and (node.module or node.level):
            # a relative import as the absolute one it stands for (`from .model import x` in
            # kinds.rover: kinds.rover.model)
            base = package[:len(package) - node.level + 1] if node.level else []
            module = '.'.join(base + ([node.module] if node.module else []))
            # `from pkg import mod` imports pkg.mod when mod is a module of pkg
            names = [module + '.' + a.name
                     if (PKG_DIR / module.replace('.', '/') / f'{a.name}.py').exists()
                     else module for a in node.names]
        else:
            continue
        for name in names:
            if name.split('.')[0] in FIRST_PARTY:
                yield name, node.lineno, id(node) in in_function, lines[node.lineno - 1]


def test_the_layer_table_covers_every_package():
    mods = dict(sources())
    assert len(mods) > 80
    assert {m.split('.')[0] for m in mods} == set(FIRST_PARTY) | {'launch'}
    assert NODE_MODULES <= set(mods)
    # every module with a process main() that starts a node is known as a node module
    mains = {m for m, p in mods.items()
             if 'def main(' in p.read_text() and 'run_node(' in p.read_text()}
    assert mains <= NODE_MODULES, mains - NODE_MODULES


def upward(items):
    """Rule 1: imports of a higher layer."""
    bad = []
    for mod, path in items:
        me = layer(mod)
        for name, line, _, _ in first_party_imports(path, mod):
            if layer(name) > me:
                bad.append(f'{path.name}:{line}: {mod} (layer {me}) imports {name} '
                           f'(layer {layer(name)})')
    return bad


def sideways(items):
    """Rule 2: imports of another package's module of the same layer, in layers 0-5."""
    bad = []
    for mod, path in items:
        me = layer(mod)
        for name, line, _, _ in first_party_imports(path, mod):
            if me <= RUNTIME and layer(name) == me and name.split('.')[0] != mod.split('.')[0]:
                bad.append(f'{path.name}:{line}: {mod} imports {name} sideways (layer {me})')
    return bad


def into_nodes(items):
    """Rule 3: imports of a node module, other than the listed compositions."""
    bad = []
    for mod, path in items:
        allowed = COMPOSITIONS.get(mod, (set(), ''))[0]
        for name, line, _, _ in first_party_imports(path, mod):
            if name in NODE_MODULES and name not in allowed:
                bad.append(f'{path.name}:{line}: {mod} imports the node module {name}')
    return bad


def unexplained_deferred(items):
    """Rule 4: first-party imports inside a function without `# deferred: <reason>`."""
    bad = []
    for mod, path in items:
        lines = path.read_text().splitlines()
        for name, line, inside, src in first_party_imports(path, mod):
            above = lines[line - 2] if line >= 2 else ''
            if inside and '# deferred:' not in src and '# deferred:' not in above:
                bad.append(f'{path.name}:{line}: {mod} imports {name} in a function')
    return bad


def impure(items):
    """Rule 5: rclpy imported by a module of layers 0-4."""
    return [f'{path.name}: {mod}' for mod, path in items
            if layer(mod) <= PURE and re.search(r'^\s*(import rclpy|from rclpy)',
                                                 path.read_text(), re.M)]


def test_imports_run_down_the_layers():
    assert upward(sources()) == []


def test_pure_and_runtime_layers_import_nothing_sideways():
    assert sideways(sources()) == []


def test_nothing_imports_a_node_module():
    assert into_nodes(sources()) == []


def test_first_party_imports_inside_functions_say_why():
    assert unexplained_deferred(sources()) == []


def test_pure_layers_import_no_rclpy():
    assert impure(sources()) == []


def test_the_rules_catch_what_they_name(tmp_path):
    """Each rule fails on the import it forbids (the test of the test)."""
    assert layer('sim_core.frames') < layer('sim_dynamics.core.usv') < layer('sim_ros.run')
    assert layer('mavlink_bridge.fc.autopilot') == 2 and layer('mavlink_bridge.fc.fc_node') == 6
    assert layer('sim_dynamics.dynamics_node') == 6 and layer('launch.sim_quad') == 7
    assert layer('kinds.entry') == layer('kinds.rover.model') == 4
    assert layer('kinds.rover.ros') == 6 and layer('kinds.rover.rosy') == 4

    def item(mod, text):
        path = tmp_path / f'm{len(list(tmp_path.iterdir()))}.py'      # one file per case
        path.write_text(text)
        return [(mod, path)]
    up = item('sim_core.frames', 'from sim_dynamics.core import usv\n')
    side = item('sim_dynamics.core.usv', 'from sim_sensors.core.noise import NoisyChannel\n')
    node = item('sim_viz.viz_node', 'from sim_dynamics.usv_swarm_node import helper\n')
    deferred = item('sim_viz.viz_node', 'def f():\n    from sim_core import frames\n')
    reason = item('sim_viz.viz_node',
                  'def f():\n    from sim_core import frames  # deferred: a reason\n')
    rcl = item('sim_dynamics.core.usv', 'import rclpy\n')
    # a relative import in a kind's folder is the absolute one it stands for
    rel_up = item('kinds.rover.model', 'from .ros import Io\n')
    rel_down = item('kinds.rover.ros', 'from .model import RoverModel\n')
    rel_side = item('kinds.rover.view', 'from .model import x\nfrom ..entry import View\n')
    assert [n for n, *_ in first_party_imports(rel_side[0][1], 'kinds.rover.view')] == [
        'kinds.rover.model', 'kinds.entry']
    assert upward(rel_up) and not upward(rel_down) and not upward(rel_side)
    assert upward(up) and not upward(side) and not upward(node)
    assert sideways(side) and not sideways(up)
    assert into_nodes(node) and not into_nodes(side)
    assert unexplained_deferred(deferred) and not unexplained_deferred(reason)
    assert impure(rcl) and not impure(side)
