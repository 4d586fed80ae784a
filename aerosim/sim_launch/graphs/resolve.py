"""The resolver: a graph and launch argument values to the nodes to start (ResolvedNode).

GRAPHS names every graph; resolve() applies the argument values (a preset's taken back to the
world's names), the node conditions and a world's vehicles, the same for launch_ros
(sim_launch.launch_builder) and the pip-only runner (sim_launch.runner). No rclpy, no launch
import.
"""

from dataclasses import dataclass, replace
from typing import Tuple

from sim_core.members import Member
from sim_core.paths import resolve_config_path, resolve_package_path
from sim_launch.graphs.boats import SIM_USV_SWARM
from sim_launch.graphs.language import (
    MEMBER,
    Arg,
    Computed,
    ConfigFile,
    Graph,
    NodeSpec,
    PackageFile,
    PerMember,
    convert,
    members_of,
)
from sim_launch.graphs.presets import PRESETS
from sim_launch.graphs.world import SIM_WORLD

GRAPHS = {g.name: g for g in (SIM_WORLD,) + PRESETS + (SIM_USV_SWARM,)}


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
    essential: bool = True       # False: the graph goes on if it dies (a vehicle's own FC)


def holds(spec: NodeSpec, values: dict) -> bool:
    """True if the node's conditions hold for the argument values."""
    cond = spec.condition or ()
    if cond and isinstance(cond[0], str):
        cond = (cond,)
    if any(values[a] != v for a, v in cond):
        return False
    return not spec.any_condition or any(values[a] == v for a, v in spec.any_condition)


def resolve_args(graph: Graph, overrides: dict) -> dict:
    """Merge overrides into the graph's defaults; reject unknown arguments and bad choices.

    The values come back under the world's names (a preset's renamed arguments taken back,
    its fixed ones added).
    """
    values = {a.name: a.default for a in graph.args}
    for k, v in overrides.items():
        if k not in values:
            hint = ''
            world = dict(graph.renamed).get(k) or (k in dict(graph.fixed) and 'fixed')
            if world == 'fixed':
                hint = f' ({graph.name} sets it: {k}:={dict(graph.fixed)[k]}; sim_world ' \
                    'offers it)'
            elif world:
                hint = f' (here it is {world})'
            raise KeyError(f'graph {graph.name} has no launch argument {k!r}{hint}; known: '
                           f'{", ".join(values)}')
        choices = graph.arg(k).choices
        if choices and v not in choices:
            raise ValueError(f'launch argument {k}: {v!r} is not one of {", ".join(choices)}')
        values[k] = str(v)
    for world, shown in graph.renamed:
        values[world] = values.pop(shown)
    values.update(graph.fixed)
    return values


def world_of(graph: Graph, values: dict) -> Tuple[Member, ...]:
    """The vehicles of a world graph (values in the world's names); () for others."""
    return members_of(values) if graph.world else ()


def resolve(graph: Graph, overrides: dict = None) -> Tuple[ResolvedNode, ...]:
    """Return the graph's nodes with launch arguments substituted (conditions applied).

    A world starts the nodes marked MEMBER once per vehicle they serve, in its namespace, and
    the others once in the root namespace. ConfigError for a scenario that cannot fly.
    """
    values = resolve_args(graph, overrides or {})
    members = world_of(graph, values)
    ns = values.get('namespace', '').strip('/')
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
        if isinstance(v, PerMember):
            return v.fn(values, member)
        return v

    out = []
    for spec in graph.nodes:
        if not holds(spec, values):
            continue
        if spec.fleet == MEMBER:
            for member in members:
                if spec.members is not None and spec.members(member):
                    # one vehicle's node: the others fly on without it (launch_ros does too)
                    out.append(replace(_resolved(spec, values, sub, '/' + member.name),
                                       essential=spec.supervisor))
            member = None
        elif graph.world:
            out.append(_resolved(spec, values, sub, ''))
        else:
            out.append(_resolved(spec, values, sub, '/' + ns if ns else '/'))
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
