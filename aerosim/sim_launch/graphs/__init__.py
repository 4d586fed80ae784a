"""Graph descriptions: the single source of truth for launch files and the pip-only runner.

A graph is data: launch arguments and nodes (executable, module, parameter file, parameters,
remappings, condition). ``launch/<graph>.launch.py`` turns it into launch_ros actions
(sim_launch.launch_builder); ``aerosim launch <graph>`` starts it as processes (sim_launch.runner).
No rclpy, no launch import here.

    language   the graph language: LaunchArg, Arg and the other parameter values, NodeSpec,
               Graph, with_defaults, convert
    parts      what several families share: common arguments, the sensor suite, the viewers
               and run summary, the MAVLink HIL link (bridge, built-in FC, plant)
    quad       sim_quad, sim_quad_hil
    plane      sim_plane, sim_plane_hil
    boats      sim_imc, sim_usv_swarm
    world      sim_world, sim_auv
    resolve    GRAPHS, get_graph, resolve: a graph and argument values to the nodes to start

Every name is importable from here, as ``from sim_launch.graphs import get_graph, resolve``.
"""

from sim_launch.graphs.boats import (
    IMC_ARGS,
    IMC_BRIDGE,
    IMC_PARAMS_ARG,
    SIM_IMC,
    SIM_USV_SWARM,
    SWARM_ARGS,
    USV,
    USV_BRIDGE,
    USV_SWARM,
)
from sim_launch.graphs.language import (
    EACH,
    MEMBER,
    ONE,
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
    PerVehicle,
    Value,
    convert,
    members_of,
    parse_value,
    with_defaults,
)
from sim_launch.graphs.parts import (
    BUILTIN_FC,
    COMMON_ARGS,
    HIL_ARGS,
    HIL_LINK_PARAMS,
    MAVLINK_BRIDGE,
    READ_BY_REPORT,
    REALTIME_ARG,
    SEED_PARAM,
    SENSORS,
    SIM_ARGS,
    SUITE_PARAMS,
    plant,
    view_args,
    view_nodes,
)
from sim_launch.graphs.plane import (
    AUTOPILOT,
    PLANE,
    PLANE_ARGS,
    PLANE_PLANT,
    PLANE_REPORT,
    PLANE_SIM_ARGS,
    SIM_PLANE,
    SIM_PLANE_HIL,
)
from sim_launch.graphs.quad import (
    CAMERA,
    DYNAMICS,
    FLIGHT_REPORT,
    HIL_PLANT,
    SIM_QUAD,
    SIM_QUAD_HIL,
)
from sim_launch.graphs.resolve import (
    GRAPHS,
    ResolvedNode,
    get_graph,
    holds,
    resolve,
    resolve_args,
    vehicle_count,
    world_of,
)
from sim_launch.graphs.world import (
    SIM_AUV,
    SIM_WORLD,
    WORLD_ARGS,
    WORLD_FC,
    WORLD_IMC,
    WORLD_PLANT,
    WORLD_REPORT,
)

__all__ = [
    # the language
    'Arg', 'Computed', 'ConfigFile', 'convert', 'EACH', 'Graph', 'LaunchArg', 'MEMBER',
    'members_of', 'NodeSpec', 'ONE', 'PackageFile', 'parse_value', 'PerMember', 'PerVehicle',
    'PLANT_GRACE_S', 'Value', 'with_defaults', 'WRITER_GRACE_S',
    # shared parts
    'BUILTIN_FC', 'COMMON_ARGS', 'HIL_ARGS', 'HIL_LINK_PARAMS', 'MAVLINK_BRIDGE', 'plant',
    'READ_BY_REPORT', 'REALTIME_ARG', 'SEED_PARAM', 'SENSORS', 'SIM_ARGS', 'SUITE_PARAMS',
    'view_args', 'view_nodes',
    # the families
    'CAMERA', 'DYNAMICS', 'FLIGHT_REPORT', 'HIL_PLANT', 'SIM_QUAD', 'SIM_QUAD_HIL',
    'AUTOPILOT', 'PLANE', 'PLANE_ARGS', 'PLANE_PLANT', 'PLANE_REPORT', 'PLANE_SIM_ARGS',
    'SIM_PLANE', 'SIM_PLANE_HIL',
    'IMC_ARGS', 'IMC_BRIDGE', 'IMC_PARAMS_ARG', 'SIM_IMC', 'SIM_USV_SWARM', 'SWARM_ARGS', 'USV',
    'USV_BRIDGE', 'USV_SWARM',
    'SIM_AUV', 'SIM_WORLD', 'WORLD_ARGS', 'WORLD_FC', 'WORLD_IMC', 'WORLD_PLANT',
    'WORLD_REPORT',
    # the resolver
    'get_graph', 'GRAPHS', 'holds', 'resolve', 'resolve_args', 'ResolvedNode', 'vehicle_count',
    'world_of',
]
