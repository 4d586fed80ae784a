"""Every parameter YAML in config/ applies under the namespace its graph runs the node in.

rcl matches a file's section against the node's fully qualified name (/usv/imc_bridge): a file
keyed `imc_bridge:` was silently ignored in sim_imc, and its values equalled the code
defaults, so nothing noticed. Here each file gets one value changed away from the default,
each graph is launched with the changed files, and every node is asked (ListParameters,
GetParameters: what `ros2 param get` does) for every value its files hold: each must be
the file's, or the launch argument's where the graph sets that parameter.
"""

import sys
import time

import pytest
from test_params_live import WORLD, world_nodes
import yaml

from sim_core.paramfiles import flatten, key_matches, sections
from sim_core.paths import resolve_config_path
from sim_launch.graphs import GRAPHS, get_graph, members_of, resolve, resolve_args

from conftest import DEADLINE_SCALE, call_service, free_ports, probe_node

PY = sys.executable

# file -> (parameter, a value that is not the default): proves the file, not the code, speaks
CHANGES = {
    'builtin_fc.yaml': ('cruise_speed', 4.5),
    'camera_node.yaml': ('jpeg_quality', 70),
    'imc_bridge.yaml': ('system_id', 0x3F05),
    'imc_bridge_auv.yaml': ('system_id', 0x3F07),
    'mavlink_bridge.yaml': ('heartbeat_rate_hz', 2.0),
    'sensors_node.yaml': ('noise_scale', 0.5),
    'usv_bridge.yaml': ('window', 150),
    'usv_swarm_node.yaml': ('waypoint_radius_m', 4.0),
    'world_node.yaml': ('status_period_s', 2.0),
}


def params_yamls():
    """The config/ YAML files that hold ROS parameters."""
    root = resolve_config_path('world_node.yaml').parent
    out = []
    for p in sorted(root.glob('*.yaml')):
        doc = yaml.safe_load(p.read_text())
        if sections(doc):
            out.append(p.name)
    return out


def test_every_params_yaml_is_used_by_a_graph_and_changed_here():
    used = set()
    for g in GRAPHS.values():
        for a in g.args:
            if a.name.endswith('_params'):
                used.add(a.default)
    assert set(params_yamls()) == set(CHANGES), 'a new parameter file needs a CHANGES entry'
    assert set(CHANGES) <= used, f'not the default of any *_params launch argument: ' \
                                 f'{set(CHANGES) - used}'


def changed_copies(tmp_path):
    """{file name: path of a copy with its CHANGES value}, each value checked to differ."""
    out = {}
    for name, (param, value) in CHANGES.items():
        doc = yaml.safe_load(resolve_config_path(name).read_text())
        secs = list(_section_dicts(doc))
        assert any(param in s for s in secs), f'{name} has no {param}'
        for s in secs:
            if param in s:
                assert s[param] != value, f'{name}: {param} is already {value}'
                s[param] = value
        p = tmp_path / name
        p.write_text(yaml.safe_dump(doc))
        out[name] = p
    return out


def _section_dicts(doc):
    """The ros__parameters dicts of a loaded file (mutable, in place)."""
    found = []

    def walk(d):
        if isinstance(d, dict):
            for k, v in d.items():
                if k == 'ros__parameters' and isinstance(v, dict):
                    found.append(v)
                else:
                    walk(v)
    walk(doc)
    return found


# graph -> launch arguments: small, quiet runs that start every node a parameter file serves
GRAPH_RUNS = {
    'sim_quad': ['camera:=true', 'summary:=false'],
    'sim_quad_hil': ['summary:=false'],
    'sim_plane_hil': ['summary:=false'],
    'sim_imc': ['summary:=false'],
    'sim_auv': ['summary:=false', 'scenario:=dive_dune'],
    'sim_usv_swarm': ['summary:=false'],
}


def _ports(graph):
    a = free_ports(3)
    b, c = a + 1, a + 2
    if graph in ('sim_quad_hil', 'sim_plane_hil'):
        return [f'bind:=127.0.0.1:{a}', f'fc_address:=127.0.0.1:{b}',
                f'tcp_bind:=127.0.0.1:{c}']
    if graph in ('sim_imc', 'sim_auv'):
        return [f'imc_bind:=127.0.0.1:{a}', f'imc_peers:=127.0.0.1:{b}']
    if graph == 'sim_usv_swarm':
        return [f'ui_bind:=127.0.0.1:{a}', f'ui_address:=127.0.0.1:{b}']
    return []


def expected_values(graph, overrides):
    """{node fqn: ({parameter: value} it must declare, {parameter: value} if it declares)}.

    In file order then the graph's arguments. A section keyed with the node's name must be
    the node's; a '/**:' section is for whichever node declares it. The world's process
    (world_plant, world_node) holds several nodes (test_params_live.world_nodes): the graph's
    arguments are the world node's, or any of them it declares; the process gives its
    vehicles' nodes (a bridge, sensors, a boat's usv_node) their own values of those (a
    vehicle's links, its index), so for them only the files' values are expected, as the
    process's arguments leave them.
    """
    g = get_graph(graph)
    out = {}
    for r in resolve(g, overrides):
        if r.module in WORLD:
            fqns = world_nodes(r, members_of(resolve_args(g, overrides)))
        else:
            fqns = [f'{r.namespace.rstrip("/")}/{r.name}']
        for fqn in fqns:
            own = fqn == fqns[0]                # the process's own node (the world node)
            vals, must = {}, set()
            for f in r.params_files:
                for key, params in sections(yaml.safe_load(open(f).read())).items():
                    if key_matches(key, fqn):
                        flat = flatten(params)
                        vals.update(flat)
                        if '*' not in key.rsplit('/', 1)[-1]:
                            must |= set(flat)
            if own:
                vals.update(r.parameters)
                must |= set(r.parameters) if r.module not in WORLD else set()
            else:
                vals = {k: v for k, v in vals.items() if k not in r.parameters}
            out[fqn] = ({k: v for k, v in vals.items() if k in must},
                        {k: v for k, v in vals.items() if k not in must})
    return out


def _same(a, b):
    if isinstance(a, (list, tuple)) or isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, float) or isinstance(b, float):
        return abs(float(a) - float(b)) <= 1e-9 * max(1.0, abs(float(a)))
    return a == b


@pytest.mark.parametrize('graph', sorted(GRAPH_RUNS))
def test_each_params_file_applies_in_its_graphs_namespace(graph, tmp_path, procs,
                                                        ros_context):
    from rcl_interfaces.srv import GetParameters, ListParameters
    from rclpy.parameter import parameter_value_to_python
    copies = changed_copies(tmp_path)
    g = get_graph(graph)
    file_args = [f'{a.name}:={copies[a.default]}' for a in g.args
                 if a.name.endswith('_params') and a.default in copies]
    args = GRAPH_RUNS[graph] + _ports(graph) + file_args
    overrides = dict(a.split(':=', 1) for a in args)
    expected = expected_values(graph, overrides)
    used = {x for r in resolve(g, overrides) for x in r.params_files}
    changed = {(n, CHANGES[f][0]) for n in expected for f in CHANGES if str(copies[f]) in used}
    p = procs.start([PY, '-m', 'sim_launch.cli', 'launch', graph] + args)
    node, ex = probe_node(ros_context, 'params_probe')
    try:
        reported = {}
        deadline = time.monotonic() + 60 * DEADLINE_SCALE
        for fqn, (must, maybe) in expected.items():
            lst = node.create_client(ListParameters, f'{fqn}/list_parameters')
            get = node.create_client(GetParameters, f'{fqn}/get_parameters')
            while not (lst.service_is_ready() and get.service_is_ready()):
                assert time.monotonic() < deadline and p.poll() is None, \
                    f'{fqn}: no parameter services\n' + ''.join(p.lines[-40:])
                ex.spin_once(timeout_sec=0.1)
            declared = set(call_service(ex, lst, ListParameters.Request(),
                                 f'{fqn} ListParameters').result.names)
            missing = sorted(set(must) - declared)
            assert not missing, f'{fqn} does not declare {missing} (its file or the graph ' \
                                'sets them)'
            want = dict(must, **{k: v for k, v in maybe.items() if k in declared})
            expected[fqn] = want
            names = sorted(want)
            values = call_service(ex, get, GetParameters.Request(names=names),
                           f'{fqn} GetParameters').values
            reported[fqn] = {n: parameter_value_to_python(v) for n, v in zip(names, values)}
        for fqn, want in expected.items():
            wrong = {n: (reported[fqn][n], v) for n, v in want.items()
                     if not _same(reported[fqn][n], v)}
            assert not wrong, f'{fqn}: (reported, expected) {wrong}'
        checked = [(fqn, param) for fqn, param in changed if param in expected[fqn]]
        assert checked, 'no changed value reached a node of this graph'
        for fqn, param in checked:
            assert _same(reported[fqn][param], expected[fqn][param])
        log = ''.join(p.lines)
        assert 'no section applies' not in log and 'has no parameter' not in log, log
    finally:
        node.destroy_node()


def test_a_file_keyed_for_no_namespace_is_reported_not_silently_ignored(tmp_path, procs):
    """The old `imc_bridge:` key under /usv, and a misspelt parameter: the node says so."""
    only_old = tmp_path / 'imc_only_old.yaml'
    only_old.write_text('imc_bridge:\n  ros__parameters:\n    system_id: 16133\n')
    typo = tmp_path / 'imc_typo.yaml'
    typo.write_text('/**/imc_bridge:\n  ros__parameters:\n    sytem_id: 1\n')
    a = free_ports(2)
    b = a + 1
    p = procs.start([PY, '-m', 'imc_bridge.imc_bridge_node', '--ros-args', '-r', '__ns:=/usv',
                     '--params-file', str(only_old), '--params-file', str(typo),
                     '-p', f'bind:=127.0.0.1:{a}', '-p', f'peers:=127.0.0.1:{b}'])
    want = (f'parameter file {only_old}: no section applies to /usv/imc_bridge',
            "key it '/**/imc_bridge:'",
            f'parameter file {typo}: /usv/imc_bridge has no parameter sytem_id')
    deadline = time.monotonic() + 30 * DEADLINE_SCALE
    while time.monotonic() < deadline and not all(w in ''.join(p.lines) for w in want):
        assert p.poll() is None, ''.join(p.lines)
        time.sleep(0.1)
    out = procs.output(p)
    for w in want:
        assert w in out, out
