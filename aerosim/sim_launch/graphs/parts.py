"""Parts several graph families share.

Common launch arguments, the sensor suite, the viewers and run summary, and the MAVLink HIL
link (bridge, built-in FC, plant composition).
"""

from typing import Optional, Tuple

from sim_core.fleet import offset_port
from sim_launch.graphs.language import (
    EACH,
    ONE,
    PLANT_GRACE_S,
    WRITER_GRACE_S,
    Arg,
    Computed,
    LaunchArg,
    NodeSpec,
    PackageFile,
    PerVehicle,
    Value,
    convert,
)

COMMON_ARGS = (
    LaunchArg('namespace', 'quad', 'Vehicle namespace for every node and relative topic'),
    LaunchArg('use_sim_time', 'true', 'Nodes other than the time source follow /clock',
              ('true', 'false')),
    LaunchArg('log_level', 'info', 'Log level of every node',
              ('debug', 'info', 'warn', 'error', 'fatal')),
    LaunchArg('scenario', 'default',
              'Scenario YAML: a path, or a name in config/scenarios (origin, vehicle, mission)'),
)

# The real-time priority of the threads that step a simulation (every graph that steps one)
REALTIME_ARG = LaunchArg(
    'realtime_priority', '-1',
    'SCHED_FIFO priority 1..99 of the threads that step the simulation and close the '
    'HIL loop, against late steps on a loaded machine (needs CAP_SYS_NICE or ulimit '
    "-r); 0 = normal scheduling; -1 = as the FC: the bridge's receive thread takes "
    "the FC process's real-time priority when it runs on this machine with real-time "
    'threads (PX4 SITL started as root), the others normal scheduling')

SIM_ARGS = (
    LaunchArg('rate_hz', '250.0', 'Integration rate [Hz], 10..1000, a whole number of '
              'microseconds per step (not 300)'),
    LaunchArg('time_scale', '1.0', 'Sim seconds per wall second; 0 = as fast as possible'),
    LaunchArg('lockstep', 'false', 'Each step waits for the effector command answering the last',
              ('true', 'false')),
    REALTIME_ARG,
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

# The sensor suite's parameters from the launch arguments (sensors_node, and the bridges that
# sample the suite themselves)
SEED_PARAM = ('seed', Arg('seed', 'int'))
SUITE_PARAMS = (SEED_PARAM, ('gnss_enabled', Arg('gps', 'bool')),
                ('mag_enabled', Arg('mag', 'bool')), ('baro_enabled', Arg('baro', 'bool')))

SENSORS = NodeSpec(
    name='sensors_node', executable='sensors_node', module='sim_sensors.sensors_node',
    params_file='sensors_params', parameters=(('scenario_file', Arg('scenario')),) + SUITE_PARAMS)


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
