"""Graph descriptions: the single source of truth for launch files and the pip-only runner.

A graph is data: launch arguments and nodes (executable, module, parameter file, parameters,
remappings, condition). ``launch/<graph>.launch.py`` turns it into launch_ros actions
(sim_launch.launch_builder); ``aerosim launch <graph>`` starts it as processes (sim_launch.runner).
No rclpy, no launch import here.
"""

from dataclasses import dataclass, field, replace
from typing import Callable, Optional, Tuple, Union

from sim_core.errors import ConfigError
from sim_core.fleet import UDP_PORTS_PER_VEHICLE, fleet_size, member_name, offset_port
from sim_core.kinds import info
from sim_core.members import Member, world_members
from sim_core.paths import resolve_config_path, resolve_package_path
from sim_core.scenario import load_scenario


@dataclass(frozen=True)
class LaunchArg:
    """A launch argument: name, default (string, as on a command line), description, choices."""

    name: str
    default: str
    description: str
    choices: Tuple[str, ...] = ()


@dataclass(frozen=True)
class Arg:
    """Reference to a launch argument's value inside a node's parameters or remappings.

    kind: the parameter type the node declares ('str', 'float', 'int', 'bool'); the argument
    string is converted to it, so `time_scale:=0` reaches a DOUBLE parameter as 0.0.
    """

    name: str
    kind: str = 'str'


@dataclass(frozen=True)
class ConfigFile:
    """A file in the package's config/ folder (resolved to share/aerosim/config when installed)."""

    relpath: str


@dataclass(frozen=True)
class PackageFile:
    """A package file named by a launch argument (rviz configs).

    The argument holds a path, or a name in the package's `folder` (share/aerosim/<folder>
    when installed).
    """

    arg: str
    folder: str


@dataclass(frozen=True)
class Computed:
    """A parameter value computed from the launch argument values (strings by name).

    fn returns the value, or None to leave the parameter out (the node's YAML or default
    holds). Both launch paths resolve it the same way (resolve() runs at launch time).
    """

    fn: Callable[[dict], object]


@dataclass(frozen=True)
class PerVehicle:
    """A parameter value of the node of vehicle i of n: fn(argument values, i, n).

    i = 0, n = 1 for the one vehicle of a graph that is not a fleet. None leaves it out.
    """

    fn: Callable[[dict, int, int], object]


@dataclass(frozen=True)
class PerMember:
    """A parameter value of the node of one vehicle of a world: fn(argument values, member).

    member: a sim_core.members.Member (its name, kind, controller, MAVLink instance `link`).
    None leaves the parameter out.
    """

    fn: Callable[[dict, Member], object]


Value = Union[str, int, float, bool, Arg, ConfigFile, PackageFile, Computed, PerVehicle,
              PerMember]

# NodeSpec.fleet: how a node is started when the graph flies several vehicles (vehicles:=N)
EACH = 'each'      # one node per vehicle, in its namespace <namespace><i>
ONE = 'one'        # one node for all, in the root namespace, told vehicles and vehicle_prefix
# A world (Graph.world): one node per vehicle whose (kind, controller) is in NodeSpec.members,
# in the vehicle's namespace /<name> (sim_core.members: quad0, plane0, boat0)
MEMBER = 'member'


@dataclass(frozen=True)
class NodeSpec:
    """One node of a graph.

    executable: console script (ros2 run aerosim <executable>); module: the same entry point as
    a Python module (the runner runs ``python -m module``). params_file: launch argument(s)
    holding the node's YAML (keyed ``/**/<name>:`` or ``/**/*:``, any namespace), several
    are applied in order. parameters: overrides applied after the files. condition: (launch
    arg, value) the node needs, e.g. ('fc', 'builtin'). use_sim_time: False for the time
    source itself and for nodes that need no ROS clock (the built-in FC runs on the HIL
    sensor time, like PX4; flight_report reads the stamps of what it judges).
    supervisor: the graph ends when this node exits, with its exit code (launch_ros: Shutdown
    on exit; the runner: the supervisor process). rename: False for a process that composes
    several nodes (a `__node` remap would give them all the same name); name then only labels
    the process. condition may also be a tuple of (arg, value) pairs that must all hold;
    any_condition: pairs of which one must hold. module None: not a Python node of ours (rviz2):
    the runner starts the executable if it is installed and says so if not. arguments: command
    line arguments before --ros-args. stop_grace_s: wall time the node may take to end after
    SIGINT before it is escalated to SIGTERM (nodes that write files at the end); 0 = the
    launcher's default (5 s, launch's sigterm_timeout). fleet: EACH or ONE in a graph of
    several vehicles (see there); '' = one node in the root namespace; MEMBER in a world: a
    node per vehicle whose (kind value, controller) is one of `members`.
    """

    name: str
    executable: str
    module: Optional[str]
    params_file: Union[None, str, Tuple[str, ...]] = None
    parameters: Tuple[Tuple[str, Value], ...] = ()
    remappings: Tuple[Tuple[str, Value], ...] = ()
    condition: Union[None, Tuple[str, str], Tuple[Tuple[str, str], ...]] = None
    use_sim_time: bool = True
    package: str = 'aerosim'
    supervisor: bool = False
    rename: bool = True
    any_condition: Tuple[Tuple[str, str], ...] = ()
    arguments: Tuple[Value, ...] = ()
    stop_grace_s: float = 0.0
    fleet: str = ''
    members: Tuple[Tuple[str, str], ...] = ()


# Nodes that write their results after SIGINT (summary plots, bags): time for it.
WRITER_GRACE_S = 20.0
# A plant (a model and its bridges in one process) stops its bridges' reader threads, then the
# model, each bridge logging its figures: a fleet of two real PX4s under a load average of 15
# took 5.6-6.4 s, past launch's 5 s
PLANT_GRACE_S = 15.0


@dataclass(frozen=True)
class Graph:
    """A named graph: its launch arguments and nodes, all under the `namespace` argument.

    world: the vehicles of the scenario, any mix of kinds (sim_core.members), each in its own
    namespace; the graph has no `namespace` argument, its other nodes run in the root
    namespace (no __ns remap: the world's process names its nodes' namespaces).
    """

    name: str
    description: str
    args: Tuple[LaunchArg, ...]
    nodes: Tuple[NodeSpec, ...]
    extra: dict = field(default_factory=dict)
    world: bool = False

    def arg(self, name: str) -> LaunchArg:
        """Return the launch argument called name."""
        for a in self.args:
            if a.name == name:
                return a
        raise KeyError(f'graph {self.name} has no launch argument {name!r}')


COMMON_ARGS = (
    LaunchArg('namespace', 'quad', 'Vehicle namespace for every node and relative topic'),
    LaunchArg('use_sim_time', 'true', 'Nodes other than the time source follow /clock',
              ('true', 'false')),
    LaunchArg('log_level', 'info', 'Log level of every node',
              ('debug', 'info', 'warn', 'error', 'fatal')),
    LaunchArg('scenario', 'default',
              'Scenario YAML: a path, or a name in config/scenarios (origin, vehicle, mission)'),
)

SIM_ARGS = (
    LaunchArg('rate_hz', '250.0', 'Integration rate [Hz], 10..1000, a whole number of '
              'microseconds per step (not 300)'),
    LaunchArg('time_scale', '1.0', 'Sim seconds per wall second; 0 = as fast as possible'),
    LaunchArg('lockstep', 'false', 'Each step waits for the effector command answering the last',
              ('true', 'false')),
    LaunchArg('realtime_priority', '-1',
              'SCHED_FIFO priority 1..99 of the threads that step the simulation and close the '
              'HIL loop, against late steps on a loaded machine (needs CAP_SYS_NICE or ulimit '
              "-r); 0 = normal scheduling; -1 = as the FC: the bridge's receive thread takes "
              "the FC process's real-time priority when it runs on this machine with real-time "
              'threads (PX4 SITL started as root), the others normal scheduling'),
    LaunchArg('seed', '0', 'Sensor noise seed'),
    LaunchArg('gps', 'true', 'GNSS on/off', ('true', 'false')),
    LaunchArg('mag', 'true', 'Magnetometer on/off', ('true', 'false')),
    LaunchArg('baro', 'true', 'Barometer on/off', ('true', 'false')),
    LaunchArg('camera', 'true', 'Camera (CPU-rendered) on/off', ('true', 'false')),
    LaunchArg('dynamics_params', 'dynamics_node.yaml',
              'dynamics_node parameter YAML (path, or name in config/)'),
    LaunchArg('sensors_params', 'sensors_node.yaml',
              'sensors_node parameter YAML (path, or name in config/)'),
    LaunchArg('camera_params', 'camera_node.yaml',
              'camera_node parameter YAML (path, or name in config/)'),
)

# A time source whose odom a report judges: its clock waits for the report to read (it must
# see the run from t = 0; as fast as possible a short hop was over before DDS matched it)
READ_BY_REPORT = ('wait_for_readers', Computed(lambda v: 1 if v.get('report') == 'true' else 0))

DYNAMICS = NodeSpec(
    name='dynamics_node', executable='dynamics_node', module='sim_dynamics.dynamics_node',
    params_file='dynamics_params', use_sim_time=False,
    parameters=(('scenario_file', Arg('scenario')), ('rate_hz', Arg('rate_hz', 'float')),
                ('time_scale', Arg('time_scale', 'float')), ('lockstep', Arg('lockstep', 'bool')),
                ('realtime_priority', Arg('realtime_priority', 'int')), READ_BY_REPORT))

SENSORS = NodeSpec(
    name='sensors_node', executable='sensors_node', module='sim_sensors.sensors_node',
    params_file='sensors_params',
    parameters=(('scenario_file', Arg('scenario')), ('seed', Arg('seed', 'int')),
                ('gnss_enabled', Arg('gps', 'bool')), ('mag_enabled', Arg('mag', 'bool')),
                ('baro_enabled', Arg('baro', 'bool'))))

CAMERA = NodeSpec(
    name='camera_node', executable='camera_node', module='sim_sensors.camera_node',
    params_file='camera_params', condition=('camera', 'true'),
    parameters=(('scenario_file', Arg('scenario')),))


def view_args(rviz_config: str, title: str):
    """Launch arguments of the viewers and the run summary (every graph)."""
    return (
        LaunchArg('rviz', 'false', 'Start rviz2 (where installed) with rviz_config',
                  ('true', 'false')),
        LaunchArg('rviz_config', rviz_config, 'rviz2 config (path, or name in rviz/)'),
        LaunchArg('foxglove', 'false', 'Serve the topics to Foxglove over WebSocket '
                  '(foxglove-sdk; ws://127.0.0.1:<foxglove_port>)', ('true', 'false')),
        LaunchArg('foxglove_port', '8765', 'Foxglove WebSocket port'),
        LaunchArg('summary', 'true', 'Write a run summary (JSON + PNG) to output_dir at the end',
                  ('true', 'false')),
        LaunchArg('output_dir', 'aerosim_runs', 'Folder for summaries and reports'),
        LaunchArg('title', title, 'Summary file prefix and plot title'),
    )


def view_nodes(mode: str, source: Tuple[Tuple[str, Value], ...], summary_condition=()):
    """viz_node (rviz or foxglove), rviz2, foxglove_node and summary_node of a graph.

    mode: 'vehicle' or 'swarm'; source: the parameters naming the scenario / init file.
    """
    return (
        NodeSpec(name='viz_node', executable='viz_node', module='sim_viz.viz_node',
                 parameters=(('mode', mode),) + source, fleet=ONE,
                 any_condition=(('rviz', 'true'), ('foxglove', 'true'))),
        NodeSpec(name='rviz2', executable='rviz2', module=None, package='rviz2',
                 arguments=('-d', PackageFile('rviz_config', 'rviz')), condition=('rviz', 'true')),
        NodeSpec(name='foxglove_node', executable='foxglove_node',
                 module='sim_viz.foxglove_node', condition=('foxglove', 'true'),
                 parameters=(('port', Arg('foxglove_port', 'int')),)),
        NodeSpec(name='summary_node', executable='summary_node', module='sim_report.summary_node',
                 condition=(('summary', 'true'),) + summary_condition,
                 stop_grace_s=WRITER_GRACE_S, fleet=ONE,
                 parameters=(('mode', mode), ('output_dir', Arg('output_dir')),
                             ('title', Arg('title'))) + source),
    )


SIM_QUAD = Graph(
    name='sim_quad',
    description='Multirotor dynamics (sim clock) and sensors: IMU, magnetometer, barometer, '
                'GNSS, camera',
    args=COMMON_ARGS + SIM_ARGS + view_args('aerosim.rviz', 'sim_quad'),
    nodes=(DYNAMICS, SENSORS, CAMERA)
    + view_nodes('vehicle', (('scenario_file', Arg('scenario')),)),
)


def with_defaults(args, **defaults):
    """The launch arguments args with some defaults replaced."""
    return tuple(LaunchArg(a.name, defaults.get(a.name, a.default), a.description, a.choices)
                 for a in args)


HIL_ARGS = (
    LaunchArg('fc', 'builtin', 'Flight controller: builtin (started here), px4 (a PX4 SITL '
              'instance you start: TCP 4560 + px4_instance, the mission on its MAVLink '
              'instance link) or external (another autopilot: transport and ports as given)',
              ('builtin', 'px4', 'external')),
    LaunchArg('px4_instance', '0', 'fc:=px4: the PX4 SITL instance (px4 -i N): TCP 4560 + N, '
              'MAVLink onboard payload link 14280 + N (we bind 14030 + N), system id N + 1'),
    LaunchArg('autostart', 'true', 'fc:=px4/external: arm the FC and start its mission once it '
              'accepted the mission and reports ready', ('true', 'false')),
    LaunchArg('transport', 'udp', 'MAVLink transport of the bridge: udp, or tcp (a TCP server '
              'PX4 SITL connects to; always tcp with fc:=px4)', ('udp', 'tcp')),
    LaunchArg('bind', '127.0.0.1:14560', 'Bridge UDP address host:port'),
    LaunchArg('fc_address', '127.0.0.1:14561',
              "Flight controller UDP address host:port; the FC's frames are taken from this "
              "address and port only ('' = the FC known by its ids, replies to its sender)"),
    LaunchArg('tcp_bind', '', "Bridge TCP server address host:port; '' = 127.0.0.1:4560 "
              '(+ px4_instance with fc:=px4)'),
    LaunchArg('mission_link', '', "UDP host:port of the FC's MAVLink instance that takes the "
              "mission and arming commands; '' = the HIL link, or with fc:=px4 PX4's onboard "
              'payload link 127.0.0.1:(14280 + px4_instance)'),
    LaunchArg('mission_bind', '', "Our UDP host:port on the mission link; '' = an ephemeral "
              'port, or with fc:=px4 127.0.0.1:(14030 + px4_instance), where PX4 sends'),
    LaunchArg('px4_params', '', 'fc:=px4: PX4 parameters set over MAVLink before the mission '
              "(and kept by PX4): a QGroundControl .params file, a path or a name in config/px4; "
              "'' = none"),
    LaunchArg('sensor_topics', 'true', 'Also publish the ROS sensor topics (composition:=plant: '
              'hil_plant, from the samples sent to the FC; split: sensors_node)',
              ('true', 'false')),
    LaunchArg('report', 'false', 'Judge the mission on ground truth, write a summary and plot, '
              'and end the run when the mission is done', ('true', 'false')),
    LaunchArg('mavlink_params', 'mavlink_bridge.yaml',
              'mavlink_bridge parameter YAML (path, or name in config/)'),
    LaunchArg('fc_params', 'builtin_fc.yaml', 'builtin_fc parameter YAML (path, or name in '
              'config/)'),
    LaunchArg('composition', 'plant',
              'plant: dynamics_node and mavlink_bridge in one process (hil_plant), the lockstep '
              'loop without middleware hops; split: separate processes over topics (e.g. the '
              'bridge on another host)', ('plant', 'split')),
)


def _px4(values) -> Optional[int]:
    """The PX4 SITL instance number with fc:=px4, else None (ValueError if not a number)."""
    if values['fc'] != 'px4':
        return None
    return convert(Arg('px4_instance', 'int'), values['px4_instance'])


def _or_px4(arg: str, base: int, fallback: str = ''):
    """The argument's value; if empty: 127.0.0.1:(base + instance) with fc:=px4, else fallback."""
    def fn(values):
        n = _px4(values)
        return values[arg] or (f'127.0.0.1:{base + n}' if n is not None else fallback)
    return Computed(fn)


HIL_LINK_PARAMS = (
    ('transport', Computed(lambda v: 'tcp' if v['fc'] == 'px4' else v['transport'])),
    ('tcp_bind', _or_px4('tcp_bind', 4560, '127.0.0.1:4560')),
    ('mission_link', _or_px4('mission_link', 14280)),
    ('mission_bind', _or_px4('mission_bind', 14030)),
    # PX4 instance N has system id N + 1 (rcS: MAV_SYS_ID); others: the YAML's fc_system_id
    ('fc_system_id', Computed(lambda v: None if _px4(v) is None else _px4(v) + 1)),
    ('autostart', Computed(lambda v: v['fc'] != 'builtin' and v['autostart'] == 'true')),
    ('fc_param_file', Computed(lambda v: v['px4_params'] if v['fc'] == 'px4' else None)),
)

SUITE_PARAMS = (('seed', Arg('seed', 'int')), ('gnss_enabled', Arg('gps', 'bool')),
                ('mag_enabled', Arg('mag', 'bool')), ('baro_enabled', Arg('baro', 'bool')))

MAVLINK_BRIDGE = NodeSpec(
    name='mavlink_bridge', executable='mavlink_bridge_node',
    module='mavlink_bridge.mavlink_bridge_node', params_file=('sensors_params', 'mavlink_params'),
    parameters=(('scenario_file', Arg('scenario')),) + SUITE_PARAMS + (
        ('bind', Arg('bind')), ('fc_address', Arg('fc_address'))) + HIL_LINK_PARAMS + (
        ('realtime_priority', Arg('realtime_priority', 'int')),))


def _vehicle_port(arg: str, per_vehicle: int):
    """The address of launch argument arg for vehicle i: its port + per_vehicle x i."""
    return PerVehicle(lambda v, i, n: offset_port(v[arg], per_vehicle * i))


BUILTIN_FC = NodeSpec(
    name='builtin_fc', executable='builtin_fc', module='mavlink_bridge.fc.fc_node',
    params_file='fc_params', condition=('fc', 'builtin'), use_sim_time=False, fleet=EACH,
    # vehicle i of a fleet: the UDP ports of its bridge link (sim_core.fleet.member_ports)
    # and system id i + 1, as PX4 instance i
    parameters=(('bind', _vehicle_port('fc_address', 2)),
                ('sim_address', _vehicle_port('bind', 2)),
                ('system_id', PerVehicle(lambda v, i, n: i + 1 if i else None)),
                # N FCs and the plant on a few cores: polling for frames steals the CPU the
                # others compute with (N = 2: in-flight RTF 2.4 polling, 4.2 not)
                ('spin_wait_us', PerVehicle(lambda v, i, n: 0 if n > 1 else None)),
                ('realtime_priority', Arg('realtime_priority', 'int'))))

FLIGHT_REPORT = NodeSpec(
    name='flight_report', executable='flight_report', module='sim_report.flight_report',
    condition=('report', 'true'), supervisor=True, use_sim_time=False,   # stamps only
    fleet=ONE,
    stop_grace_s=WRITER_GRACE_S,
    parameters=(('scenario_file', Arg('scenario')), ('output_dir', Arg('output_dir')),
                ('title', 'sim_quad_hil')))


def plant(name: str, model: NodeSpec, params_file, **kw) -> NodeSpec:
    """The composition of a model node and the bridge in one process (composition:=plant).

    Its parameters are both nodes' (rcl gives every -p to every node of the process); the
    bridge publishes the sensor topics from the samples it sends (no sensors_node).
    """
    return NodeSpec(
        name=name, executable=name, module=f'mavlink_bridge.{name}', params_file=params_file,
        use_sim_time=False, rename=False, condition=('composition', 'plant'),
        stop_grace_s=PLANT_GRACE_S, parameters=model.parameters + tuple(
            p for p in MAVLINK_BRIDGE.parameters if p not in model.parameters)
        + (('sensor_topics', Arg('sensor_topics', 'bool')),), **kw)


HIL_PLANT = plant('hil_plant', DYNAMICS, ('dynamics_params',) + MAVLINK_BRIDGE.params_file,
                  fleet=ONE)

SIM_QUAD_HIL = Graph(
    name='sim_quad_hil',
    description='Quad HIL: dynamics + MAVLink HIL bridge + flight controller (built-in or '
                'external PX4), sensors on MAVLink and ROS topics',
    args=COMMON_ARGS + with_defaults(SIM_ARGS, lockstep='true', camera='false') + HIL_ARGS
    + (LaunchArg('vehicles', '0', 'Quads in one simulation clock, 1..32; 0 = as many as the '
                 "scenario's vehicles: list (1 without one). 2 or more: vehicle i in namespace "
                 '<namespace><i> with its own bridge link and FC: built-in FC i on UDP ports '
                 '+ 2 i, or PX4 SITL instance px4_instance + i (TCP 4560 + i, system id + i)'),)
    + view_args('aerosim.rviz', 'sim_quad_hil'),
    nodes=(replace(DYNAMICS, condition=('composition', 'split')),
           replace(SENSORS, condition=(('sensor_topics', 'true'), ('composition', 'split'))),
           replace(CAMERA, fleet=EACH),
           replace(MAVLINK_BRIDGE, condition=('composition', 'split')), HIL_PLANT, BUILTIN_FC,
           FLIGHT_REPORT)
    # report:=true: flight_report writes the summary (and ends the run)
    + view_nodes('vehicle', (('scenario_file', Arg('scenario')),), (('report', 'false'),)),
)

PLANE_SIM_ARGS = (
    LaunchArg('rate_hz', '125.0', 'Integration rate [Hz] (JSBSim steps at it; a whole number of '
              'microseconds per step), 10..1000'),
    LaunchArg('time_scale', '1.0', 'Sim seconds per wall second; 0 = as fast as possible'),
    LaunchArg('lockstep', 'true', 'Each step waits for the command answering the last (the '
              "autopilot's, or the flight controller's)", ('true', 'false')),
    LaunchArg('realtime_priority', '-1', SIM_ARGS[3].description),
    LaunchArg('seed', '0', 'Sensor noise seed'),
    LaunchArg('sensors_params', 'sensors_node.yaml',
              'sensors_node parameter YAML (path, or name in config/)'),
)

PLANE_ARGS = PLANE_SIM_ARGS + (
    LaunchArg('autostart', 'true', "The autopilot RUNs the scenario's mission as its flight plan "
              'at start', ('true', 'false')),
    LaunchArg('sensors', 'true', 'Sensor suite on the plane (IMU, magnetometer, barometer, '
              'GNSS, airspeed)', ('true', 'false')),
    LaunchArg('report', 'false', 'Judge the circuit on ground truth, write a summary and plot, '
              'and end the run when it is flown', ('true', 'false')),
)

PLANE = NodeSpec(
    name='plane_node', executable='plane_node', module='sim_dynamics.plane_node',
    use_sim_time=False,
    parameters=(('scenario_file', Arg('scenario')), ('rate_hz', Arg('rate_hz', 'float')),
                ('time_scale', Arg('time_scale', 'float')), ('lockstep', Arg('lockstep', 'bool')),
                ('realtime_priority', Arg('realtime_priority', 'int'))))

AUTOPILOT = NodeSpec(
    name='autopilot_node', executable='autopilot_node', module='sim_autopilot.autopilot_node',
    parameters=(('scenario_file', Arg('scenario')), ('autostart', Arg('autostart', 'bool'))))

PLANE_REPORT = NodeSpec(
    name='plane_report', executable='plane_report', module='sim_report.plane_report',
    condition=('report', 'true'), supervisor=True, use_sim_time=False,   # stamps only
    stop_grace_s=WRITER_GRACE_S,
    parameters=(('scenario_file', Arg('scenario')), ('output_dir', Arg('output_dir')),
                ('title', Arg('title'))))

SIM_PLANE = Graph(
    name='sim_plane',
    description='Fixed-wing aircraft (JSBSim Cessna 172R, sim clock), AeroSim autopilot '
                '(flight plan, holds), PFD, trajectory and effector topics, sensors',
    args=with_defaults(COMMON_ARGS, namespace='plane', scenario='circuit') + PLANE_ARGS
    + view_args('aerosim_plane.rviz', 'sim_plane'),
    nodes=(PLANE, AUTOPILOT, replace(SENSORS, condition=('sensors', 'true'),
                                     parameters=(('scenario_file', Arg('scenario')),
                                                 ('seed', Arg('seed', 'int')))),
           PLANE_REPORT)
    + view_nodes('vehicle', (('scenario_file', Arg('scenario')),), (('report', 'false'),)),
)

PLANE_PLANT = plant('plane_plant', PLANE, MAVLINK_BRIDGE.params_file)

SIM_PLANE_HIL = Graph(
    name='sim_plane_hil',
    description='Plane HIL: JSBSim Cessna 172R + MAVLink HIL bridge (fixed-wing mixer, PX4 '
                'SITL plane outputs, pitot in HIL_SENSOR) + flight controller (built-in, or '
                'PX4)',
    args=with_defaults(COMMON_ARGS, namespace='plane', scenario='circuit') + PLANE_SIM_ARGS
    + tuple(a for a in SIM_ARGS if a.name in ('gps', 'mag', 'baro'))
    + with_defaults(HIL_ARGS, px4_params='c172r')
    + view_args('aerosim_plane.rviz', 'sim_plane_hil'),
    nodes=(replace(PLANE, condition=('composition', 'split')),
           replace(SENSORS, condition=(('sensor_topics', 'true'), ('composition', 'split')),
                   parameters=(('scenario_file', Arg('scenario')),) + SUITE_PARAMS),
           replace(MAVLINK_BRIDGE, condition=('composition', 'split')), PLANE_PLANT,
           replace(BUILTIN_FC, parameters=BUILTIN_FC.parameters + (('vehicle', 'plane'),)),
           PLANE_REPORT)
    + view_nodes('vehicle', (('scenario_file', Arg('scenario')),), (('report', 'false'),)),
)

IMC_ARGS = (
    LaunchArg('imc_bind', '127.0.0.1:6003', 'Our IMC UDP address host:port'),
    LaunchArg('imc_peers', '127.0.0.1:6002',
              "IMC peers host:port, comma-separated (DUNE's IMC port is 6002); '' = none"),
    LaunchArg('usv_params', 'usv_node.yaml', 'usv_node parameter YAML (path, or name in '
              'config/)'),
    LaunchArg('imc_params', 'imc_bridge.yaml', 'imc_bridge parameter YAML (path, or name in '
              'config/)'),
)

USV = NodeSpec(
    name='usv_node', executable='usv_node', module='sim_dynamics.usv_node',
    params_file='usv_params', use_sim_time=False,
    parameters=(('scenario_file', Arg('scenario')), ('rate_hz', Arg('rate_hz', 'float')),
                ('time_scale', Arg('time_scale', 'float'))))

IMC_BRIDGE = NodeSpec(
    name='imc_bridge', executable='imc_bridge_node', module='imc_bridge.imc_bridge_node',
    params_file='imc_params',
    parameters=(('scenario_file', Arg('scenario')), ('bind', Arg('imc_bind')),
                ('peers', Arg('imc_peers'))))

SIM_IMC = Graph(
    name='sim_imc',
    description='A surface vessel (USV model, sim clock) as an IMC system on UDP for LSTS '
                'DUNE and Neptus: SimulatedState, EstimatedState, Announce, Heartbeat out; '
                'leak, acoustic, dynamics-parameter simulation and actuation in',
    args=with_defaults(COMMON_ARGS, namespace='usv', scenario='harbour') + (
        LaunchArg('rate_hz', '50.0', 'Integration rate [Hz], 10..1000, a whole number of '
                  'microseconds per step (not 300)'),
        LaunchArg('time_scale', '1.0', 'Sim seconds per wall second; 0 = as fast as possible'),
    ) + IMC_ARGS + view_args('aerosim_usv.rviz', 'sim_imc'),
    nodes=(USV, IMC_BRIDGE) + view_nodes('vehicle', (('scenario_file', Arg('scenario')),)),
)

SWARM_ARGS = (
    LaunchArg('rate_hz', '50.0', 'Integration rate [Hz], 10..1000, a whole number of '
              'microseconds per step (not 300)'),
    LaunchArg('time_scale', '1.0', 'Sim seconds per wall second until an init sets it'),
    LaunchArg('session', '0', "Session at start: 0 wait for the UI's command 26, 1 practice, "
              '2 simulation', ('0', '1', '2')),
    LaunchArg('sim_config', 'SimConfig.json', 'Init object in force until the UI sends one '
              '(path, or name in config/)'),
    LaunchArg('state_rate_hz', '10.0', 'SwarmState rate [Hz] (sim, from each session start): '
              'the bridge sends a command 21 for each'),
    LaunchArg('transport', 'udp', 'USV UI transport: udp (one JSON per datagram) or tcp '
              '(server, one JSON per line)', ('udp', 'tcp')),
    LaunchArg('ui_bind', '127.0.0.1:9921', 'Our USV UI address host:port (UDP, or the TCP '
              'server)'),
    LaunchArg('ui_address', '127.0.0.1:9922', "The UI's UDP address host:port ('' = the last "
              'sender)'),
    LaunchArg('swarm_params', 'usv_swarm_node.yaml', 'usv_swarm_node parameter YAML (path, or '
              'name in config/)'),
    LaunchArg('bridge_params', 'usv_bridge.yaml', 'usv_bridge parameter YAML (path, or name '
              'in config/)'),
)

USV_SWARM = NodeSpec(
    name='usv_swarm_node', executable='usv_swarm_node', module='sim_dynamics.usv_swarm_node',
    params_file='swarm_params', use_sim_time=False,
    parameters=(('sim_config', Arg('sim_config')), ('rate_hz', Arg('rate_hz', 'float')),
                ('time_scale', Arg('time_scale', 'float')), ('session', Arg('session', 'int')),
                ('state_rate_hz', Arg('state_rate_hz', 'float'))))

USV_BRIDGE = NodeSpec(
    name='usv_bridge', executable='usv_bridge_node', module='usv_bridge.usv_bridge_node',
    params_file='bridge_params',
    parameters=(('sim_config', Arg('sim_config')), ('transport', Arg('transport')),
                ('bind', Arg('ui_bind')), ('tcp_bind', Arg('ui_bind')),
                ('ui_address', Arg('ui_address'))))

SIM_USV_SWARM = Graph(
    name='sim_usv_swarm',
    description='A USV swarm (N boats, sim clock) behind the USV UI protocol (seed 004): '
                'init, commands 22 and 26 in, command 21 out, over UDP JSON (or TCP)',
    args=with_defaults(COMMON_ARGS[:3], namespace='swarm') + SWARM_ARGS
    + view_args('aerosim_swarm.rviz', 'sim_usv_swarm'),
    nodes=(USV_SWARM, USV_BRIDGE) + view_nodes('swarm', (('sim_config', Arg('sim_config')),)),
)

WORLD_ARGS = (
    LaunchArg('vehicles', '0', "Vehicles in the world, 1..32; 0 = the scenario's vehicles: list "
              '(any mix of kinds, each with its controller), or its one vehicle; N: as many '
              "copies of a scenario's one vehicle (sim_core.members)"),
    LaunchArg('rate_hz', '250.0', 'Integration rate [Hz] of every vehicle, 10..1000, a whole '
              'number of microseconds per step (not 300)'),
    LaunchArg('time_scale', '1.0', 'Sim seconds per wall second; 0 = as fast as possible'),
    LaunchArg('lockstep', 'true', "Each step waits for the answers of the MAVLink-controlled "
              "vehicles' flight controllers (the in-process controllers answer inside the "
              'step)', ('true', 'false')),
    LaunchArg('realtime_priority', '-1', SIM_ARGS[3].description),
    LaunchArg('seed', '0', 'Sensor noise seed'),
    LaunchArg('gps', 'true', "GNSS on/off (the MAVLink vehicles' sensors)", ('true', 'false')),
    LaunchArg('mag', 'true', 'Magnetometer on/off', ('true', 'false')),
    LaunchArg('baro', 'true', 'Barometer on/off', ('true', 'false')),
    LaunchArg('bind', '127.0.0.1:14560', 'Bridge UDP address host:port of the first MAVLink '
              'vehicle (link 0); link k: port + 2 k'),
    LaunchArg('fc_address', '127.0.0.1:14561',
              "Flight controller UDP address host:port of link 0 (link k: port + 2 k); the "
              "FC's frames are taken from this address and port only"),
    LaunchArg('transport', 'udp', 'MAVLink transport of the bridges of built-in and external '
              'FCs: udp, or tcp (a TCP server on tcp_bind + k); PX4 is always tcp',
              ('udp', 'tcp')),
    LaunchArg('tcp_bind', '127.0.0.1:4560', 'Bridge TCP server address host:port of link 0 '
              '(link k: port + k): PX4 SITL instance k connects there'),
    LaunchArg('px4_mission_link', '127.0.0.1:14280', "PX4 SITL instance 0's onboard payload "
              'link host:port (mission, parameters, arming; instance k: port + k)'),
    LaunchArg('px4_mission_bind', '127.0.0.1:14030', 'Our address on the payload link of PX4 '
              'instance 0, where PX4 sends (instance k: port + k)'),
    LaunchArg('autostart', 'true', 'PX4 and external FCs: arm and start the mission once the FC '
              'accepted it and reports ready', ('true', 'false')),
    LaunchArg('fleet_start_timeout_s', '60.0', "Sim time stays at 0 until every MAVLink "
              "vehicle's FC is ready to fly its mission, at most this long [s] (wall); 0 = "
              'start at once'),
    LaunchArg('sensor_topics', 'true', 'Also publish the ROS sensor topics of the samples the '
              'bridges send', ('true', 'false')),
    LaunchArg('report', 'false', 'Judge every vehicle by its kind (one summary, one plot), and '
              'end the run when all are done or one collided (exit code 1 unless all are '
              'complete)', ('true', 'false')),
    LaunchArg('sensors_params', 'sensors_node.yaml',
              'Sensor suite parameter YAML (path, or name in config/)'),
    LaunchArg('mavlink_params', 'mavlink_bridge.yaml',
              'mavlink_bridge parameter YAML (path, or name in config/)'),
    LaunchArg('fc_params', 'builtin_fc.yaml', 'builtin_fc parameter YAML (path, or name in '
              'config/)'),
    LaunchArg('imc_bind', '127.0.0.1:6003', 'IMC UDP address host:port of the first boat '
              'flown by imc (DUNE); the k-th: port + k'),
    LaunchArg('imc_peers', '127.0.0.1:6002', "IMC peers host:port of the boats flown by imc, "
              "comma-separated (DUNE's IMC port is 6002); '' = none"),
    IMC_ARGS[3],
)

WORLD_PLANT = NodeSpec(
    name='world_plant', executable='world_plant', module='sim_world.world_plant',
    params_file=('sensors_params', 'mavlink_params'), use_sim_time=False, rename=False,
    stop_grace_s=PLANT_GRACE_S,
    parameters=(('scenario_file', Arg('scenario')), ('vehicles', Arg('vehicles', 'int')),
                ('rate_hz', Arg('rate_hz', 'float')), ('time_scale', Arg('time_scale', 'float')),
                ('lockstep', Arg('lockstep', 'bool')),
                ('fleet_start_timeout_s', Arg('fleet_start_timeout_s', 'float')),
                ('realtime_priority', Arg('realtime_priority', 'int')),
                READ_BY_REPORT) + SUITE_PARAMS + (
        ('bind', Arg('bind')), ('fc_address', Arg('fc_address')),
        ('transport', Arg('transport')), ('tcp_bind', Arg('tcp_bind')),
        ('px4_mission_link', Arg('px4_mission_link')),
        ('px4_mission_bind', Arg('px4_mission_bind')),
        ('autostart', Arg('autostart', 'bool')),
        ('sensor_topics', Arg('sensor_topics', 'bool'))))


def _member_port(arg: str):
    """The address of launch argument arg for the world vehicle of MAVLink instance k.

    Its port + 2 k, as sim_core.fleet.member_ports moves its bridge's (world_plant).
    """
    return PerMember(lambda v, m: offset_port(v[arg], UDP_PORTS_PER_VEHICLE * m.link))


WORLD_FC = replace(
    BUILTIN_FC, condition=None, fleet=MEMBER,
    members=(('multirotor', 'builtin'), ('plane', 'builtin')),
    # the FC of link k: the UDP ports of its bridge's link and system id k + 1, as PX4
    # instance k; the airframe of its vehicle
    parameters=(('bind', _member_port('fc_address')), ('sim_address', _member_port('bind')),
                ('system_id', PerMember(lambda v, m: m.link + 1 if m.link else None)),
                ('vehicle', PerMember(lambda v, m: m.kind.value)),
                # several processes and the world's on a few cores: no polling for frames
                ('spin_wait_us', 0),
                ('realtime_priority', Arg('realtime_priority', 'int'))))


def _imc_index(values: dict, member: Member) -> int:
    """The count of vehicles flown by imc before member in its world (0 for the first)."""
    return sum(1 for m in _world_members(values)[:member.index] if m.controller == 'imc')


WORLD_IMC = replace(
    IMC_BRIDGE, fleet=MEMBER, members=(('boat', 'imc'), ('auv', 'imc')),
    # the k-th vehicle flown by imc: imc_bind's port + k, IMC id 0x3F01 + k and its own name
    # (the first keeps imc_params' own: the shipped DUNE ini's aerosim-usv, or in sim_auv
    # imc_bridge_auv.yaml's aerosim-auv); its kind's IMC system type; its vehicle file (an
    # AUV's fins)
    parameters=(('scenario_file', Arg('scenario')),
                ('bind', PerMember(lambda v, m: offset_port(v['imc_bind'], _imc_index(v, m)))),
                ('peers', Arg('imc_peers')),
                ('system_id', PerMember(lambda v, m: 0x3F01 + _imc_index(v, m)
                                        if _imc_index(v, m) else None)),
                ('system_name', PerMember(lambda v, m: f'aerosim-{m.name}'
                                          if _imc_index(v, m) else None)),
                ('system_type', PerMember(lambda v, m: info(m.kind).imc_type)),
                ('vehicle_file', PerMember(lambda v, m: str(m.scenario.vehicle_file))),
                # its DynamicsSimParam gains: the world node's (it has none: refused, counted)
                ('vehicle_node', '/world_node')))

WORLD_REPORT = NodeSpec(
    name='world_report', executable='world_report', module='sim_report.world_report',
    condition=('report', 'true'), supervisor=True, use_sim_time=False,   # stamps only
    stop_grace_s=WRITER_GRACE_S,
    parameters=(('scenario_file', Arg('scenario')), ('vehicles', Arg('vehicles', 'int')),
                ('output_dir', Arg('output_dir')), ('title', Arg('title'))))

SIM_WORLD = Graph(
    name='sim_world',
    description='One world of any mix of kinds on one clock: quads (built-in FC, PX4, '
                'external), planes (autopilot, built-in FC, PX4) and boats (waypoints, DUNE '
                'over IMC), each in its namespace with its controller; contacts between any '
                'two, judged per vehicle in one summary',
    args=with_defaults(COMMON_ARGS[1:], scenario='harbour_ops') + WORLD_ARGS
    + view_args('aerosim_world.rviz', 'sim_world'),
    nodes=(WORLD_PLANT, WORLD_FC, WORLD_IMC, WORLD_REPORT)
    + view_nodes('vehicle', (('scenario_file', Arg('scenario')),
                             ('vehicles', Arg('vehicles', 'int'))), (('report', 'false'),)),
    world=True,
)

SIM_AUV = replace(
    SIM_WORLD, name='sim_auv',
    description="An AUV (a LAUV, 6-DOF, VSIM's coefficients) in a world of water: its "
                'built-in controller dives, runs its legs at depth and surfaces (the scenario '
                "dive), or DUNE's LAUV drives it over IMC (controller: imc; DUNE's sensor "
                'simulators fed by our SimulatedState); judged with its depths',
    args=tuple(replace(a, default='dive') if a.name == 'scenario' else
               replace(a, default='imc_bridge_auv.yaml') if a.name == 'imc_params' else
               replace(a, default='sim_auv') if a.name == 'title' else a
               for a in SIM_WORLD.args))

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


def parse_value(text: str):
    """Parse a launch-argument string the way ROS parses `-p name:=value` (YAML scalars)."""
    import yaml
    try:
        v = yaml.safe_load(text)
    except yaml.YAMLError:
        return text
    return v if isinstance(v, (str, int, float, bool)) else text


def convert(arg: Arg, text: str):
    """Convert a launch-argument string to the parameter type arg.kind; clear error if it can't."""
    v = parse_value(text)
    try:
        if arg.kind == 'str':
            return str(text)
        if arg.kind == 'bool':
            if not isinstance(v, bool):
                raise ValueError
            return v
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            raise ValueError
        if arg.kind == 'int':
            if v != int(v):
                raise ValueError
            return int(v)
        return float(v)
    except ValueError:
        raise ValueError(
            f'launch argument {arg.name}: expected {arg.kind}, got {text!r}') from None


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


def _world_members(values: dict) -> Tuple[Member, ...]:
    """The vehicles of a world of these argument values (its scenario, `vehicles`)."""
    return world_members(load_scenario(values['scenario']),
                         convert(Arg('vehicles', 'int'), values.get('vehicles', '0')))


def world_of(graph: Graph, values: dict) -> Tuple[Member, ...]:
    """The vehicles of a world graph (its scenario and `vehicles` argument); () for others."""
    return _world_members(values) if graph.world else ()


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
