"""Start a graph's nodes in a test the way `aerosim launch <graph>` starts them.

One helper for every graph test, so what a test runs and what a user launches cannot drift:
the nodes come from the graph description (``sim_launch.graphs.resolve(get_graph(name),
overrides)``) and each is started with the pip runner's own command line
(``sim_launch.runner.node_command``): the same module, node name, namespace, log level,
parameter files (config/*.yaml), launch-argument parameters and remappings. A test changes
what a user could change on the command line (launch arguments, ``overrides``) and, where it
needs more, single parameters of single nodes (``params``, applied last, as ``-p``).

    from graph_start import start

    def test_something(procs):
        nodes = start(procs, 'sim_imc',
                      {'imc_bind': f'127.0.0.1:{port}', 'time_scale': 10.0},
                      nodes=('usv_node', 'imc_bridge'),
                      params={'imc_bridge': {'timestamps': 'sim', 'announce_hosts': ''}})
        bridge = nodes['imc_bridge']            # a Popen, its output in bridge.lines

The processes are the ``procs`` fixture's (test/conftest.py: Procs.start): in the test's ROS
domain, their output read all the time, all stopped at teardown.
"""

import dataclasses
from typing import Dict, Iterable, List, Mapping, Optional, Union

from sim_launch.graphs import Graph, ResolvedNode, get_graph, resolve
from sim_launch.runner import node_command


def _arg_text(value) -> str:
    """A launch argument value as on a command line (True -> 'true', 10.0 -> '10.0')."""
    if isinstance(value, bool):
        return 'true' if value else 'false'
    return str(value)


def _key(r: ResolvedNode, names: List[str]) -> str:
    """The name a started node is known by: its node name, or ns/name if several share it.

    (A fleet or a world starts one node per vehicle: 'quad0/builtin_fc', 'quad1/builtin_fc'.)
    """
    return r.name if names.count(r.name) == 1 else f'{r.namespace.strip("/")}/{r.name}'


def commands(graph: Union[str, Graph], overrides: Optional[Mapping] = None,
             nodes: Optional[Iterable[str]] = None,
             params: Optional[Mapping[str, Mapping]] = None) -> Dict[str, List[str]]:
    """The command lines start() runs: {node key: argv}. See start() for the arguments."""
    g = get_graph(graph) if isinstance(graph, str) else graph
    resolved = resolve(g, {k: _arg_text(v) for k, v in (overrides or {}).items()})
    names = [r.name for r in resolved]
    keyed = {_key(r, names): r for r in resolved}
    wanted = list(keyed) if nodes is None else list(nodes)
    unknown = [n for n in wanted if n not in keyed]
    unknown += [n for n in (params or {}) if n not in wanted]
    if unknown:
        raise ValueError(f'graph {g.name}: no node {", ".join(unknown)} started with these '
                         f'arguments; it starts {", ".join(keyed)}')
    out = {}
    for name in wanted:
        r = keyed[name]
        extra = dict((params or {}).get(name, {}))
        if extra:
            merged = {**r.parameters, **extra}
            r = dataclasses.replace(r, parameters={k: v for k, v in merged.items()
                                                   if v is not None})
        out[name] = node_command(r)
    return out


def start(procs, graph: Union[str, Graph], overrides: Optional[Mapping] = None,
          nodes: Optional[Iterable[str]] = None,
          params: Optional[Mapping[str, Mapping]] = None) -> dict:
    """Start nodes of a graph as `aerosim launch` would; return {node key: Popen}.

    procs: the test's ``procs`` fixture. graph: a graph name ('sim_imc') or a Graph.
    overrides: launch arguments {name: value}, as ``name:=value`` on a command line (values
    are turned to text: True -> 'true'); unknown names and bad choices raise, as for a user.
    nodes: the node names to start, in this order (the graph's order when None: every node
    the graph starts with these arguments, its conditions applied); a node of a fleet or a
    world that several vehicles have is named 'namespace/name' ('quad1/builtin_fc').
    params: {node key: {parameter: value}} set after the graph's parameters and files, as
    Python values of the parameter's type (3.0, True, [0.0, 1.0, 0.0], 'text'; a list is an
    array parameter, a str always a string); None removes a parameter the graph sets (the
    node's YAML or default holds). Unknown node names in nodes or params raise ValueError.

    The processes start in the given order without waiting for each other (a node's
    subscriptions and services come up on their own time: wait on what the test needs).
    """
    return {name: procs.start(cmd) for name, cmd in
            commands(graph, overrides, nodes, params).items()}
