"""Graph descriptions: the single source of truth for launch files and the pip-only runner.

A graph is data: launch arguments and nodes (executable, module, parameter file, parameters,
remappings, condition). ``launch/<graph>.launch.py`` turns it into launch_ros actions
(sim_launch.launch_builder); ``aerosim launch <graph>`` starts it as processes (sim_launch.runner).
No rclpy, no launch import here.

    language   the graph language: LaunchArg, Arg and the other parameter values, NodeSpec,
               Graph, with_defaults, convert
    parts      what the graphs share: common arguments, the sensor suite's, the viewers
    world      sim_world: the simulator (any mix of kinds on one clock, one judge)
    presets    sim_quad, sim_quad_hil, sim_plane, sim_plane_hil, sim_imc, sim_auv: the world
               with other defaults
    boats      the IMC bridge's node; sim_usv_swarm (the 10,000-boat swarm: its own graph)
    resolve    GRAPHS, get_graph, resolve: a graph and argument values to the nodes to start

Every name is importable from here, as ``from sim_launch.graphs import get_graph, resolve``.
"""

from sim_launch.graphs.boats import (
    IMC_BRIDGE,
    IMC_PARAMS_ARG,
    SIM_USV_SWARM,
    SWARM_ARGS,
    USV_BRIDGE,
    USV_SWARM,
)
from sim_launch.graphs.language import (
    MEMBER,
    PLANT_GRACE_S,
    WRITER_GRACE_S,
    Arg,
    Computed,
    ConfigFile,
    Graph,
    LaunchArg,
    NodeSpec,
    PackageFile,
    PerMember,
    Value,
    convert,
    members_of,
    parse_value,
    with_defaults,
)
from sim_launch.graphs.parts import (
    COMMON_ARGS,
    REALTIME_ARG,
    SEED_PARAM,
    SUITE_PARAMS,
    WORLD_SOURCE,
    view_args,
    view_nodes,
)
from sim_launch.graphs.presets import (
    PRESETS,
    SIM_AUV,
    SIM_IMC,
    SIM_PLANE,
    SIM_PLANE_HIL,
    SIM_QUAD,
    SIM_QUAD_HIL,
    preset,
)
from sim_launch.graphs.resolve import (
    GRAPHS,
    ResolvedNode,
    get_graph,
    holds,
    resolve,
    resolve_args,
    world_of,
)
from sim_launch.graphs.world import (
    SIM_WORLD,
    WORLD_ARGS,
    WORLD_BRIDGE,
    WORLD_CAMERA,
    WORLD_FC,
    WORLD_IMC,
    WORLD_NODE,
    WORLD_PARAMS,
    WORLD_PLANT,
    WORLD_SENSORS,
)

__all__ = [
    # the language
    'Arg', 'Computed', 'ConfigFile', 'convert', 'Graph', 'LaunchArg', 'MEMBER', 'members_of',
    'NodeSpec', 'PackageFile', 'parse_value', 'PerMember', 'PLANT_GRACE_S', 'Value',
    'with_defaults', 'WRITER_GRACE_S',
    # shared parts
    'COMMON_ARGS', 'REALTIME_ARG', 'SEED_PARAM', 'SUITE_PARAMS', 'view_args', 'view_nodes',
    'WORLD_SOURCE',
    # the world and its presets
    'SIM_WORLD', 'WORLD_ARGS', 'WORLD_BRIDGE', 'WORLD_CAMERA', 'WORLD_FC', 'WORLD_IMC',
    'WORLD_NODE', 'WORLD_PARAMS', 'WORLD_PLANT', 'WORLD_SENSORS',
    'PRESETS', 'preset', 'SIM_AUV', 'SIM_IMC', 'SIM_PLANE', 'SIM_PLANE_HIL', 'SIM_QUAD',
    'SIM_QUAD_HIL',
    # the swarm
    'IMC_BRIDGE', 'IMC_PARAMS_ARG', 'SIM_USV_SWARM', 'SWARM_ARGS', 'USV_BRIDGE', 'USV_SWARM',
    # the resolver
    'get_graph', 'GRAPHS', 'holds', 'resolve', 'resolve_args', 'ResolvedNode', 'world_of',
]
