"""Launch files vs graph descriptions, argument resolution, the runner's command lines.

launch/launch_ros are not installable here: the launch files are loaded with test doubles that
record what they declare, and that record is compared with the graph description.
"""

import importlib.util
from pathlib import Path
import sys
import types

import pytest

from sim_launch.graphs import GRAPHS, get_graph, resolve
from sim_launch.runner import node_command

from graph_start import commands

LAUNCH_DIR = Path(__file__).resolve().parent.parent / 'launch'


class Recorder:
    def __init__(self, *args, **kwargs):
        self.args, self.kwargs = args, kwargs


class FakeContext:
    def __init__(self, values):
        self.values = values


class FakeLaunchConfiguration(Recorder):
    def perform(self, context):
        return context.values[self.args[0]]


@pytest.fixture
def fake_launch(monkeypatch):
    mods = {
        'launch': types.ModuleType('launch'),
        'launch.actions': types.ModuleType('launch.actions'),
        'launch.substitutions': types.ModuleType('launch.substitutions'),
        'launch_ros': types.ModuleType('launch_ros'),
        'launch_ros.actions': types.ModuleType('launch_ros.actions'),
    }
    mods['launch'].LaunchDescription = type('LaunchDescription', (Recorder,), {})
    mods['launch.actions'].DeclareLaunchArgument = type('DeclareLaunchArgument', (Recorder,), {})
    mods['launch.actions'].OpaqueFunction = type('OpaqueFunction', (Recorder,), {})
    mods['launch.actions'].Shutdown = type('Shutdown', (Recorder,), {})
    mods['launch.substitutions'].LaunchConfiguration = FakeLaunchConfiguration
    mods['launch_ros.actions'].Node = type('Node', (Recorder,), {})
    for name, mod in mods.items():
        monkeypatch.setitem(sys.modules, name, mod)
    return mods


def load_launch_file(path):
    spec = importlib.util.spec_from_file_location(path.stem.replace('.', '_'), path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.generate_launch_description()


def test_every_graph_has_a_launch_file_and_every_launch_file_a_graph():
    files = {p.name[:-len('.launch.py')] for p in LAUNCH_DIR.glob('*.launch.py')}
    assert files == set(GRAPHS)


@pytest.mark.parametrize('graph_name', sorted(GRAPHS))
def test_launch_file_declares_exactly_the_description(fake_launch, graph_name):
    graph = get_graph(graph_name)
    ld = load_launch_file(LAUNCH_DIR / f'{graph_name}.launch.py')
    actions = ld.args[0]
    declared = [a for a in actions if type(a).__name__ == 'DeclareLaunchArgument']
    assert [a.args[0] for a in declared] == [a.name for a in graph.args]
    for a, spec in zip(declared, graph.args):
        assert a.kwargs['default_value'] == spec.default
        assert a.kwargs['description']
        assert a.kwargs.get('choices') == (list(spec.choices) if spec.choices else None)
    (opaque,) = [a for a in actions if type(a).__name__ == 'OpaqueFunction']
    ctx = FakeContext({a.name: a.default for a in graph.args})
    nodes = opaque.kwargs['function'](ctx)
    expected = resolve(graph)
    assert [n.kwargs['name'] for n in nodes] == [r.name if r.rename else None for r in expected]
    for n, r in zip(nodes, expected):
        assert n.kwargs['package'] == 'aerosim'      # viewers are off by default
        assert n.kwargs['executable'] == r.executable
        # '' (a process whose nodes name their namespaces): launch_ros gets None, no __ns
        assert n.kwargs['namespace'] == (r.namespace or None)
        assert n.kwargs['parameters'] == [*r.params_files, r.parameters]
        assert n.kwargs['remappings'] == list(r.remappings)
        assert all(Path(f).is_file() for f in r.params_files)


def test_a_preset_is_the_world_composed_in_one_unrenamed_process(fake_launch):
    graph = get_graph('sim_quad_hil')
    nodes = resolve(graph)
    # no sensors_node: the bridge in world_plant publishes the sensor topics of its samples
    assert [n.name for n in nodes] == ['world_plant', 'builtin_fc']
    plant = nodes[0]
    assert plant.module == 'sim_world.world_plant' and not plant.rename and plant.supervisor
    assert [Path(f).name for f in plant.params_files] == [
        'world_node.yaml', 'sensors_node.yaml', 'mavlink_bridge.yaml']
    assert plant.parameters['controller'] == 'builtin'            # the preset's fc
    assert plant.parameters['vehicle_namespace'] == 'quad'
    assert plant.parameters['lockstep'] is True and plant.parameters['sensor_topics'] is True
    split = {n.name: n for n in resolve(graph, {'composition': 'split'})}
    assert set(split) == {'world_node', 'mavlink_bridge', 'builtin_fc'}
    # the world node takes what the composed process takes; the bridge its vehicle's links
    assert split['world_node'].parameters == plant.parameters
    assert split['world_node'].supervisor and not split['mavlink_bridge'].supervisor
    bridge = split['mavlink_bridge']
    assert bridge.namespace == '/quad' and bridge.parameters['vehicle_index'] == 0
    assert bridge.parameters['bind'] == '127.0.0.1:14560'
    assert bridge.parameters['fc_system_id'] == 1 and bridge.parameters['transport'] == 'udp'
    assert bridge.parameters['autostart'] is False           # the built-in FC starts itself
    assert [Path(f).name for f in bridge.params_files] == ['sensors_node.yaml',
                                                           'mavlink_bridge.yaml']
    off = resolve(graph, {'sensor_topics': 'false'})
    assert off[0].parameters['sensor_topics'] is False
    cmd = node_command(plant, python='python3')
    assert not any(a.startswith(('__node:=', '__ns:=')) for a in cmd)
    ld = load_launch_file(LAUNCH_DIR / 'sim_quad_hil.launch.py')
    (opaque,) = [a for a in ld.args[0] if type(a).__name__ == 'OpaqueFunction']
    actions = opaque.kwargs['function'](FakeContext({a.name: a.default for a in graph.args}))
    (node,) = [n for n in actions if n.kwargs['executable'] == 'world_plant']
    assert node.kwargs['name'] is None      # launch_ros then adds no __node remap
    assert node.kwargs['namespace'] is None
    assert type(node.kwargs['on_exit']).__name__ == 'Shutdown'


def test_px4_and_a_fleet_get_each_vehicle_s_instance_links(fake_launch):
    graph = get_graph('sim_quad_hil')
    nodes = {n.namespace: n for n in resolve(graph, {
        'fc': 'px4', 'px4_instance': '5', 'vehicles': '2', 'composition': 'split'})
        if n.name == 'mavlink_bridge'}
    for k, ns in enumerate(('/quad0', '/quad1')):
        p = nodes[ns].parameters
        assert p['tcp_bind'] == f'127.0.0.1:{4565 + k}' and p['transport'] == 'tcp'
        assert p['mission_link'] == f'127.0.0.1:{14285 + k}'
        assert p['mission_bind'] == f'127.0.0.1:{14035 + k}'
        assert p['fc_system_id'] == 6 + k and p['system_id'] == 51 + k
        assert p['autostart'] is True
    fleet = {n.namespace: n for n in resolve(graph, {'vehicles': '3'})
             if n.name == 'builtin_fc'}
    assert set(fleet) == {'/quad0', '/quad1', '/quad2'}
    assert fleet['/quad2'].parameters['bind'] == '127.0.0.1:14565'
    assert fleet['/quad2'].parameters['sim_address'] == '127.0.0.1:14564'
    assert fleet['/quad2'].parameters['system_id'] == 3


def test_the_conditions_supervisor_and_the_fc_s_ports(fake_launch):
    graph = get_graph('sim_quad_hil')
    names = [n.name for n in resolve(graph, {'composition': 'split', 'summary': 'false'})]
    assert names == ['world_node', 'mavlink_bridge', 'builtin_fc']
    ext = {n.name: n for n in resolve(graph, {'fc': 'external', 'report': 'true',
                                              'sensor_topics': 'false',
                                              'composition': 'split'})}
    assert set(ext) == {'world_node', 'mavlink_bridge'}
    assert ext['world_node'].parameters['report'] is True
    assert ext['world_node'].parameters['lockstep'] is True        # HIL default
    ld = load_launch_file(LAUNCH_DIR / 'sim_quad_hil.launch.py')
    (opaque,) = [a for a in ld.args[0] if type(a).__name__ == 'OpaqueFunction']
    values = {a.name: a.default for a in graph.args}
    values['composition'] = 'split'
    nodes = {n.kwargs['executable']: n for n in opaque.kwargs['function'](FakeContext(values))}
    assert type(nodes['world_node'].kwargs['on_exit']).__name__ == 'Shutdown'
    assert 'on_exit' not in nodes['mavlink_bridge_node'].kwargs
    fc = nodes['builtin_fc'].kwargs['parameters'][-1]
    assert fc['bind'] == '127.0.0.1:14561' and fc['sim_address'] == '127.0.0.1:14560'


def test_resolution_types_parameters_and_applies_overrides():
    nodes = {n.name: n for n in resolve(get_graph('sim_quad'),
                                        {'time_scale': '0', 'gps': 'false', 'namespace': 'uav1'})}
    world, cam = nodes['world_plant'], nodes['camera_node']
    assert world.parameters['time_scale'] == 0.0
    assert isinstance(world.parameters['time_scale'], float)
    assert world.parameters['use_sim_time'] is False        # the time source
    assert world.parameters['gnss_enabled'] is False
    assert world.parameters['seed'] == 0 and isinstance(world.parameters['seed'], int)
    assert world.parameters['vehicle_namespace'] == 'uav1' and world.namespace == ''
    assert world.parameters['controller'] == 'topic'        # sim_quad: any ROS node flies it
    assert cam.parameters['use_sim_time'] is True and cam.namespace == '/uav1'


@pytest.mark.parametrize('overrides,match', [
    ({'nope': '1'}, 'no launch argument'),
    ({'gps': 'maybe'}, 'not one of'),
    ({'time_scale': 'fast'}, 'expected float'),
    ({'seed': '1.5'}, 'expected int'),
    ({'controller': 'builtin'}, 'sim_quad sets it: controller:=topic; sim_world offers it'),
    ({'vehicles': '40'}, 'vehicles: 1..32'),
])
def test_bad_launch_arguments_are_rejected(overrides, match):
    from sim_core.errors import ConfigError
    with pytest.raises((KeyError, ValueError, ConfigError), match=match):
        resolve(get_graph('sim_quad'), overrides)


def test_a_preset_shows_the_world_s_argument_by_the_name_its_users_know():
    g = get_graph('sim_quad_hil')
    assert [a.name for a in g.args if a.name in ('fc', 'controller')] == ['fc']
    assert g.arg('fc').choices == ('builtin', 'px4', 'external')
    with pytest.raises(KeyError, match='here it is fc'):
        resolve(g, {'controller': 'px4'})
    with pytest.raises(ValueError, match='not one of builtin, px4, external'):
        resolve(g, {'fc': 'waypoint'})
    assert resolve(g, {'fc': 'px4'})[0].parameters['controller'] == 'px4'


def test_runner_command_matches_resolution(tmp_path):
    sc = tmp_path / 'my scenario.yaml'
    sc.write_text((Path(__file__).resolve().parents[1] / 'config' / 'scenarios'
                   / 'default.yaml').read_text())
    world = resolve(get_graph('sim_quad'), {'scenario': str(sc)})[0]
    cmd = node_command(world, python='python3')
    assert cmd[:4] == ['python3', '-m', 'sim_world.world_plant', '--ros-args']
    assert not any(a.startswith(('__node:=', '__ns:=')) for a in cmd)
    assert cmd[cmd.index('--params-file') + 1].endswith('config/world_node.yaml')
    assert f"scenario_file:='{sc}'" in cmd
    assert 'use_sim_time:=false' in cmd and 'time_scale:=1.0' in cmd


def test_graph_tests_start_the_runner_s_command_lines():
    """test/graph_start (how the graph tests start nodes) runs what `aerosim launch` runs.

    A test's per-node parameters replace the graph's (None drops one); naming a node the graph
    does not start is an error; a world's nodes of several vehicles are named by their
    vehicle's namespace.
    """
    args = {'imc_bind': '127.0.0.1:65001', 'time_scale': 10.0}
    resolved = resolve(get_graph('sim_imc'), {'imc_bind': '127.0.0.1:65001',
                                              'time_scale': '10.0'})
    assert commands('sim_imc', args) == {r.name: node_command(r) for r in resolved}
    cmd = commands('sim_imc', args, nodes=('imc_bridge',), params={'imc_bridge': {
        'bind': '127.0.0.1:65003', 'peers': None, 'topside_position_enu': [0.0, 1.5, 0.0]}})
    cmd = cmd['imc_bridge']
    assert "bind:='127.0.0.1:65003'" in cmd and "bind:='127.0.0.1:65001'" not in cmd
    assert not [a for a in cmd if a.startswith('peers:=')]
    assert 'topside_position_enu:=[0.0, 1.5, 0.0]' in cmd and '__ns:=/usv' in cmd
    with pytest.raises(ValueError, match='no node camera_node'):
        commands('sim_imc', nodes=('camera_node',))
    with pytest.raises(ValueError, match='no node usv_node'):
        commands('sim_imc', nodes=('imc_bridge',), params={'usv_node': {'rate_hz': 10.0}})
    fleet = commands('sim_quad_hil', {'vehicles': 2})
    assert {'world_plant', 'quad0/builtin_fc', 'quad1/builtin_fc'} <= set(fleet)


@pytest.mark.parametrize('graph_name', sorted(GRAPHS))
def test_viewers_are_declared_for_every_graph(fake_launch, graph_name):
    import yaml

    from sim_launch.graphs import members_of, resolve_args
    graph = get_graph(graph_name)
    base = {n.name for n in resolve(graph)}
    assert not base & {'viz_node', 'rviz2', 'foxglove_node', 'summary_node'}
    fox = {n.name: n for n in resolve(graph, {'foxglove': 'true', 'foxglove_port': '9000'})}
    assert set(fox) - base == {'viz_node', 'foxglove_node'}
    assert fox['foxglove_node'].parameters['port'] == 9000
    mode = 'swarm' if graph_name == 'sim_usv_swarm' else 'vehicle'
    assert fox['viz_node'].parameters['mode'] == mode
    rv = {n.name: n for n in resolve(graph, {'rviz': 'true'})}
    assert set(rv) - base == {'viz_node', 'rviz2'}
    rviz = rv['rviz2']
    assert rviz.package == 'rviz2' and rviz.module is None and rviz.arguments[0] == '-d'
    assert node_command(rviz)[:3] == ['rviz2', '-d', rviz.arguments[1]]
    # the config: fixed frame map; every topic it shows is one the graph publishes: a world's
    # vehicle's /<name>/..., its markers there for a world of one vehicle, else on /markers
    cfg = yaml.safe_load(Path(rviz.arguments[1]).read_text())
    assert cfg['Visualization Manager']['Global Options']['Fixed Frame'] == 'map'
    if graph.world:
        members = members_of(resolve_args(graph, {}))
        published = {f'/{m.name}/{t}' for m in members
                     for t in ('odom', 'path', 'camera/image_raw')}
        markers = f'/{members[0].name}/markers' if len(members) == 1 else '/markers'
    else:
        published = {f'{rviz.namespace}/{t}' for t in ('odom', 'path')}
        markers = f'{rviz.namespace}/markers'
    topics = {d['Topic']['Value'] for d in cfg['Visualization Manager']['Displays']
              if 'Topic' in d}
    assert topics and topics <= published | {markers}, topics - published
    assert markers in topics
    # launch_ros gets the same rviz2 node
    ld = load_launch_file(LAUNCH_DIR / f'{graph_name}.launch.py')
    (opaque,) = [a for a in ld.args[0] if type(a).__name__ == 'OpaqueFunction']
    values = {a.name: a.default for a in graph.args}
    values.update(rviz='true')
    (node,) = [n for n in opaque.kwargs['function'](FakeContext(values))
               if n.kwargs['executable'] == 'rviz2']
    assert node.kwargs['package'] == 'rviz2'
    assert node.kwargs['arguments'][:2] == ['-d', rviz.arguments[1]]


@pytest.mark.parametrize('graph_name,overrides', [
    ('sim_quad', {}), ('sim_quad', {'composition': 'split'}), ('sim_quad_hil', {}),
    ('sim_quad_hil', {'composition': 'split'}), ('sim_quad_hil', {'fc': 'external'}),
    ('sim_quad_hil', {'fc': 'px4'}), ('sim_plane', {}), ('sim_plane_hil', {}), ('sim_imc', {}),
    ('sim_auv', {}), ('sim_world', {}), ('sim_world', {'composition': 'split'}),
    ('sim_usv_swarm', {})])
def test_no_parameter_file_value_is_dead_when_launched(graph_name, overrides):
    """A value the graph sets from a launch argument is not in the node's parameter file.

    The graph's parameters beat the files (launch_ros and the runner alike), so a file value
    of such a parameter would never apply: the launch argument owns it, the file says so in
    a comment.
    """
    import yaml
    for r in resolve(get_graph(graph_name), overrides):
        for f in r.params_files:
            sections = yaml.safe_load(open(f)) or {}
            keys = {k for s in sections.values() for k in (s or {}).get('ros__parameters', {})}
            dead = keys & set(r.parameters) - {'use_sim_time'}
            assert not dead, f'{f}: {sorted(dead)} set by {graph_name} {overrides} anyway'


def test_every_console_script_restores_sigint_and_runs_its_graph_node_s_module():
    """setup.py's node scripts are sim_launch.entry's, each the module the graphs run."""
    import re

    from sim_launch import entry
    setup = (Path(__file__).resolve().parents[1] / 'setup.py').read_text()
    scripts = dict(re.findall(r"'(\w+) = ([\w.]+:\w+)'", setup))
    assert scripts.pop('aerosim') == 'sim_launch.cli:main'
    assert scripts == {n: f'sim_launch.entry:{n}' for n in entry.NODES}
    for graph in GRAPHS.values():
        for n in graph.nodes:
            if n.module is not None:
                assert entry.NODES[n.executable] == n.module, n
    for module in entry.NODES.values():
        assert importlib.util.find_spec(module) is not None, module
    with pytest.raises(AttributeError):
        entry.no_such_node  # noqa: B018
