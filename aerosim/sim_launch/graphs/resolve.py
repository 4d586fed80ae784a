"""The resolver: a graph and launch argument values to the nodes to start (ResolvedNode).

GRAPHS names every graph; resolve() applies the argument values, the node conditions and a
fleet's or world's vehicles, the same for launch_ros (sim_launch.launch_builder) and the
pip-only runner (sim_launch.runner). No rclpy, no launch import.
"""

from dataclasses import dataclass, replace
from typing import Tuple

from sim_core.errors import ConfigError
from sim_core.fleet import fleet_size, member_name
from sim_core.members import Member
from sim_core.paths import resolve_config_path, resolve_package_path
from sim_core.scenario import load_scenario
from sim_launch.graphs.boats import SIM_IMC, SIM_USV_SWARM
from sim_launch.graphs.language import (
    EACH,
    MEMBER,
    ONE,
    Arg,
    Computed,
    ConfigFile,
    Graph,
    NodeSpec,
    PackageFile,
    PerMember,
    PerVehicle,
    convert,
    members_of,
)
from sim_launch.graphs.plane import SIM_PLANE, SIM_PLANE_HIL
from sim_launch.graphs.quad import SIM_QUAD, SIM_QUAD_HIL
from sim_launch.graphs.world import SIM_AUV, SIM_WORLD

GRAPHS = {g.name: g for g in (SIM_QUAD, SIM_QUAD_HIL, SIM_PLANE, SIM_PLANE_HIL, SIM_IMC,
                              SIM_USV_SWARM, SIM_WORLD, SIM_AUV)}


def get_graph(name: str) -> Graph:
    """Return the graph called name."""
    try:
        return GRAPHS[name]
    except KeyError:
        raise KeyError(f'unknown graph {name!r}; known: {", ".join(sorted(GRAPHS))}') from None


@dataclass(frozen=True)
class ResolvedNode:
    """A node with every launch argument substituted: what launch_ros and the runner start."""

    name: str
    package: str
    executable: str
    module: str
    namespace: str
    params_files: Tuple[str, ...]
    parameters: dict
    remappings: Tuple[Tuple[str, str], ...]
    log_level: str
    supervisor: bool = False
    rename: bool = True
    arguments: Tuple[str, ...] = ()
    stop_grace_s: float = 0.0
    essential: bool = True       # False: the graph goes on if it dies (a fleet's FCs)


def holds(spec: NodeSpec, values: dict) -> bool:
    """True if the node's conditions hold for the argument values."""
    cond = spec.condition or ()
    if cond and isinstance(cond[0], str):
        cond = (cond,)
    if any(values[a] != v for a, v in cond):
        return False
    return not spec.any_condition or any(values[a] == v for a, v in spec.any_condition)


def resolve_args(graph: Graph, overrides: dict) -> dict:
    """Merge overrides into the graph's defaults; reject unknown arguments and bad choices."""
    values = {a.name: a.default for a in graph.args}
    for k, v in overrides.items():
        if k not in values:
            raise KeyError(f'graph {graph.name} has no launch argument {k!r}; known: '
                           f'{", ".join(values)}')
        choices = graph.arg(k).choices
        if choices and v not in choices:
            raise ValueError(f'launch argument {k}: {v!r} is not one of {", ".join(choices)}')
        values[k] = str(v)
    return values


def vehicle_count(graph: Graph, values: dict) -> int:
    """How many vehicles the graph flies (its `vehicles` argument and the scenario); ConfigError.

    1 for graphs without the argument.
    """
    if 'vehicles' not in values:
        return 1
    n = fleet_size(load_scenario(values['scenario']), convert(Arg('vehicles', 'int'),
                                                              values['vehicles']))
    if n > 1 and values.get('composition', 'plant') != 'plant':
        raise ConfigError(f'vehicles: {n} vehicles need composition:=plant (one process steps '
                          'them all); composition:=split runs one vehicle')
    return n


def world_of(graph: Graph, values: dict) -> Tuple[Member, ...]:
    """The vehicles of a world graph (its scenario and `vehicles` argument); () for others."""
    return members_of(values) if graph.world else ()


def resolve(graph: Graph, overrides: dict = None) -> Tuple[ResolvedNode, ...]:
    """Return the graph's nodes with launch arguments substituted (conditions applied).

    A graph flying several vehicles starts the nodes marked EACH once per vehicle, in its
    namespace, and those marked ONE once in the root namespace, told the count and prefix.
    A world starts the nodes marked MEMBER once per vehicle they serve (kind, controller), in
    its namespace, and the others once in the root namespace.
    """
    values = resolve_args(graph, overrides or {})
    members = world_of(graph, values)
    n = len(members) if graph.world else vehicle_count(graph, values)
    ns = values.get('namespace', '').strip('/')
    index = 0
    member = None

    def sub(v):
        if isinstance(v, Arg):
            return convert(v, values[v.name])
        if isinstance(v, ConfigFile):
            return str(resolve_config_path(v.relpath))
        if isinstance(v, PackageFile):
            return str(resolve_package_path(values[v.arg], v.folder))
        if isinstance(v, Computed):
            return v.fn(values)
        if isinstance(v, PerVehicle):
            return v.fn(values, index, n)
        if isinstance(v, PerMember):
            return v.fn(values, member)
        return v

    out = []
    for spec in graph.nodes:
        if not holds(spec, values):
            continue
        if graph.world:
            if spec.fleet != MEMBER:
                out.append(_resolved(spec, values, sub, ''))
                continue
            for member in members:
                if (member.kind.value, member.controller) in spec.members:
                    # one vehicle's node: the others fly on without it (launch_ros does too)
                    out.append(replace(_resolved(spec, values, sub, '/' + member.name),
                                       essential=spec.supervisor))
            member = None
            continue
        if n == 1:
            out.append(_resolved(spec, values, sub, '/' + ns if ns else '/'))
            continue
        if spec.fleet == EACH:
            for index in range(n):
                # one vehicle's node: the others fly on without it (launch_ros does too)
                out.append(replace(_resolved(spec, values, sub, '/' + member_name(ns, index)),
                                   essential=spec.supervisor))
            index = 0
        elif spec.fleet == ONE:
            # no namespace: the process's nodes are in the root namespace or name their own
            out.append(_resolved(replace(spec, parameters=spec.parameters + (
                ('vehicles', n), ('vehicle_prefix', ns or 'vehicle'))), values, sub, ''))
        else:
            out.append(_resolved(spec, values, sub, ''))
    return tuple(out)


def _resolved(spec: NodeSpec, values: dict, sub, namespace: str) -> ResolvedNode:
    """One node of spec in namespace, its values substituted by sub."""
    pf = spec.params_file
    pf = () if pf is None else ((pf,) if isinstance(pf, str) else pf)
    files = tuple(str(resolve_config_path(values[a])) for a in pf)
    params = {'use_sim_time': convert(Arg('use_sim_time', 'bool'), values['use_sim_time'])
              if spec.use_sim_time else False}
    params.update({k: x for k, x in ((k, sub(v)) for k, v in spec.parameters) if x is not None})
    return ResolvedNode(
        name=spec.name, package=spec.package, executable=spec.executable,
        module=spec.module, namespace=namespace, params_files=files,
        parameters=params, remappings=tuple((a, str(sub(b))) for a, b in spec.remappings),
        log_level=values['log_level'], supervisor=spec.supervisor, rename=spec.rename,
        arguments=tuple(str(sub(a)) for a in spec.arguments),
        stop_grace_s=spec.stop_grace_s)
