"""The world graph: the one simulator, and every graph that is a preset of it.

sim_world flies any mix of kinds on one clock (sim_world.world_node), each vehicle with its
controller: in the world's step (a plane's autopilot, a boat's waypoints, an AUV's pilot),
over MAVLink (a built-in FC process, PX4 SITL, another FC), over IMC (DUNE) or any ROS node
on its effector_command topic (controller topic). The presets (sim_quad, sim_quad_hil,
sim_plane, sim_plane_hil, sim_imc, sim_auv: sim_launch.graphs.presets) are this graph with
other argument defaults.

Processes (composition): plant (default) runs the world, every MAVLink vehicle's bridge and
the sensor topics of the others in one process (world_plant: no middleware hop in the
lockstep loop); split runs the world alone (world_node) and each bridge and sensor suite as
its own process over the vehicle_state / effector_command topics (a bridge on another host).
The built-in FCs, the IMC bridges and the cameras are their own processes either way. The
run's judge is in the world's process (it sees every step): report:=true ends the run with
its verdict; the summary goes to <output_dir>/<title>-<scenario>-<time>/.
"""

from sim_world.core.links import member_links

from kinds.entry import IMC, PROCESS, entry
from sim_core.fleet import UDP_PORTS_PER_VEHICLE, offset_port
from sim_core.kinds import KINDS, info
from sim_core.members import Member
from sim_launch.graphs.boats import IMC_BRIDGE, IMC_PARAMS_ARG
from sim_launch.graphs.language import (
    MEMBER,
    PLANT_GRACE_S,
    Arg,
    Graph,
    LaunchArg,
    NodeSpec,
    PerMember,
    members_of,
)
from sim_launch.graphs.parts import REALTIME_ARG, SUITE_PARAMS, view_args, view_nodes

# every controller some kind has, for the `controller` argument's choices ('' = the scenario's)
CONTROLLERS = tuple(dict.fromkeys(c for k in KINDS.values() for c in k.controllers))

WORLD_ARGS = (
    LaunchArg('namespace', '', "Vehicle names: '' = each kind's prefix and count (quad0, "
              'plane0, boat0); a name: that name for a world of one vehicle, <name><i> for '
              'vehicle i of several (its topics, nodes and frames live under /<name>/)'),
    LaunchArg('use_sim_time', 'true', 'Nodes other than the time source follow /clock',
              ('true', 'false')),
    LaunchArg('log_level', 'info', 'Log level of every node',
              ('debug', 'info', 'warn', 'error', 'fatal')),
    LaunchArg('scenario', 'harbour_ops',
              'Scenario YAML: a path, or a name in config/scenarios (origin, vehicles, '
              'missions, environment)'),
    LaunchArg('vehicles', '0', "Vehicles in the world, 1..32; 0 = the scenario's vehicles: list "
              '(any mix of kinds, each with its controller), or its one vehicle; N: as many '
              "copies of a scenario's one vehicle"),
    LaunchArg('controller', '', "Every vehicle's controller, overriding the scenario's ('' = "
              "each its own): builtin (a built-in FC over MAVLink, or an AUV's pilot), px4 "
              "(PX4 SITL you start), external (another MAVLink FC), autopilot (a plane's, in "
              "the step), waypoint (a waypoint follower in the step), imc (DUNE), topic (any ROS "
              'node publishing effector_command); refused for a kind it cannot fly',
              ('',) + CONTROLLERS),
    LaunchArg('rate_hz', '250.0', 'Integration rate [Hz] of every vehicle, 10..1000, a whole '
              'number of microseconds per step (not 300)'),
    LaunchArg('time_scale', '1.0', 'Sim seconds per wall second; 0 = as fast as possible'),
    LaunchArg('lockstep', 'true', 'Each step waits for the answers of the vehicles controlled '
              'from outside the step (MAVLink flight controllers, controller topic); the '
              'in-process controllers answer inside the step', ('true', 'false')),
    REALTIME_ARG,
    LaunchArg('seed', '0', 'Sensor noise seed'),
    LaunchArg('gps', 'true', 'GNSS on/off', ('true', 'false')),
    LaunchArg('mag', 'true', 'Magnetometer on/off', ('true', 'false')),
    LaunchArg('baro', 'true', 'Barometer on/off', ('true', 'false')),
    LaunchArg('sensor_topics', 'true', 'Publish the ROS sensor topics of every vehicle that '
              'carries the sensor suite (a MAVLink vehicle: the samples its bridge sends)',
              ('true', 'false')),
    LaunchArg('camera', 'false', 'A camera (CPU-rendered, camera_node) on every vehicle',
              ('true', 'false')),
    LaunchArg('px4_instance', '0', 'The PX4 SITL instance N of the first MAVLink vehicle flown '
              'by px4 (px4 -i N: TCP 4560 + N, MAVLink onboard payload link 14280 + N, we bind '
              '14030 + N, system id N + 1); the MAVLink vehicle k: N + k'),
    LaunchArg('autostart', 'true', 'Start the mission at start: PX4 and external FCs are armed '
              "and started once they accepted it and report ready; a plane's autopilot RUNs "
              'its flight plan', ('true', 'false')),
    LaunchArg('transport', 'udp', 'MAVLink transport of the bridges of built-in and external '
              'FCs: udp, or tcp (a TCP server on tcp_bind); PX4 is always tcp', ('udp', 'tcp')),
    LaunchArg('bind', '127.0.0.1:14560', 'Bridge UDP address host:port of the first MAVLink '
              'vehicle (vehicle k: port + 2 k)'),
    LaunchArg('fc_address', '127.0.0.1:14561',
              "Flight controller UDP address host:port of the first MAVLink vehicle (vehicle k: "
              "port + 2 k); the FC's frames are taken from this address and port only ('' = "
              'the FC known by its ids, replies to its sender)'),
    LaunchArg('tcp_bind', '', "Bridge TCP server address host:port of the first MAVLink "
              "vehicle (vehicle k: port + k); '' = 127.0.0.1:4560 (+ px4_instance with px4)"),
    LaunchArg('mission_link', '', "UDP host:port of the FC's MAVLink instance that takes the "
              "mission and arming commands; '' = the HIL link, or with px4 PX4's onboard "
              'payload link 127.0.0.1:(14280 + px4_instance)'),
    LaunchArg('mission_bind', '', "Our UDP host:port on the mission link; '' = an ephemeral "
              'port, or with px4 127.0.0.1:(14030 + px4_instance), where PX4 sends'),
    LaunchArg('px4_params', '', 'PX4 parameters set over MAVLink before the mission (a '
              "QGroundControl .params file, a path or a name in config/px4); '' = by vehicle: "
              "a plane's c172r, a deck landing's deck_landing, none for a quad"),
    LaunchArg('fleet_start_timeout_s', '60.0', "Sim time stays at 0 until every MAVLink "
              "vehicle's FC is ready to fly its mission, at most this long [s] (wall); 0 = "
              'start at once'),
    LaunchArg('imc_bind', '127.0.0.1:6003', 'IMC UDP address host:port of the first vehicle '
              'flown by imc (DUNE); the k-th: port + k'),
    LaunchArg('imc_peers', '127.0.0.1:6002', "IMC peers host:port of the vehicles flown by imc, "
              "comma-separated (DUNE's IMC port is 6002); '' = none"),
    IMC_PARAMS_ARG,
    LaunchArg('composition', 'plant',
              'plant: the world, its MAVLink bridges and sensor topics in one process '
              '(world_plant): the lockstep loop without middleware hops; split: the world '
              '(world_node), each bridge and sensor suite its own process over topics (e.g. a '
              'bridge on another host)', ('plant', 'split')),
    LaunchArg('world_params', 'world_node.yaml',
              'world_node parameter YAML (path, or name in config/)'),
    LaunchArg('sensors_params', 'sensors_node.yaml',
              'Sensor suite parameter YAML (path, or name in config/)'),
    LaunchArg('mavlink_params', 'mavlink_bridge.yaml',
              'mavlink_bridge parameter YAML (path, or name in config/)'),
    LaunchArg('fc_params', 'builtin_fc.yaml', 'builtin_fc parameter YAML (path, or name in '
              'config/)'),
    LaunchArg('camera_params', 'camera_node.yaml',
              'camera_node parameter YAML (path, or name in config/)'),
    LaunchArg('report', 'false', 'Judge every vehicle by its kind and end the run with the '
              'verdict when all are over (exit code 0 only if every mission is complete)',
              ('true', 'false')),
)


def _way(m: Member):
    """How member's controller runs (its kind's ControllerWay)."""
    return entry(m.kind).controllers[m.controller]


def _builtin_fc(m: Member) -> bool:
    way = _way(m)
    return m.over_mavlink and way.runs == PROCESS and way.what == 'builtin_fc'


def _suite_of_its_own(m: Member) -> bool:
    """A vehicle with the sensor suite and no MAVLink bridge (whose bridge publishes it)."""
    return info(m.kind).sensors and not m.over_mavlink


# The world's own parameters, from the launch arguments (world_node and world_plant)
WORLD_PARAMS = (
    ('scenario_file', Arg('scenario')), ('vehicles', Arg('vehicles', 'int')),
    ('vehicle_namespace', Arg('namespace')), ('controller', Arg('controller')),
    ('rate_hz', Arg('rate_hz', 'float')), ('time_scale', Arg('time_scale', 'float')),
    ('lockstep', Arg('lockstep', 'bool')),
    ('fleet_start_timeout_s', Arg('fleet_start_timeout_s', 'float')),
    ('realtime_priority', Arg('realtime_priority', 'int')),
    ('wait_for_readers', 0),
    ('bind', Arg('bind')), ('fc_address', Arg('fc_address')),
    ('transport', Arg('transport')), ('tcp_bind', Arg('tcp_bind')),
    ('px4_instance', Arg('px4_instance', 'int')), ('mission_link', Arg('mission_link')),
    ('mission_bind', Arg('mission_bind')), ('px4_params', Arg('px4_params')),
    ('autostart', Arg('autostart', 'bool')),
    ('sensor_topics', Arg('sensor_topics', 'bool')),
    ('report', Arg('report', 'bool')), ('summary', Arg('summary', 'bool')),
    ('output_dir', Arg('output_dir')), ('title', Arg('title'))) + SUITE_PARAMS

WORLD_PLANT = NodeSpec(
    name='world_plant', executable='world_plant', module='sim_world.world_plant',
    params_file=('world_params', 'sensors_params', 'mavlink_params'), use_sim_time=False,
    rename=False, stop_grace_s=PLANT_GRACE_S, supervisor=True,
    condition=('composition', 'plant'), parameters=WORLD_PARAMS)

WORLD_NODE = NodeSpec(
    name='world_node', executable='world_node', module='sim_world.world_node',
    params_file='world_params', use_sim_time=False, rename=False,
    stop_grace_s=PLANT_GRACE_S, supervisor=True, condition=('composition', 'split'),
    parameters=WORLD_PARAMS)


def _link_param(name: str):
    """One link parameter of a MAVLink vehicle's bridge (sim_world.core.links.member_links)."""
    return PerMember(lambda v, m: member_links(m, _link_base(v))[name])


def _link_base(v: dict):
    from sim_world.core.links import LinkBase  # deferred: only when a graph is resolved
    return LinkBase(bind=v['bind'], fc_address=v['fc_address'], tcp_bind=v['tcp_bind'],
                    transport=v['transport'], autostart=v['autostart'] == 'true',
                    px4_instance=int(v['px4_instance']), mission_link=v['mission_link'],
                    mission_bind=v['mission_bind'], px4_params=v['px4_params'])


# composition:=split: each MAVLink vehicle's bridge, its own process in /<name>
WORLD_BRIDGE = NodeSpec(
    name='mavlink_bridge', executable='mavlink_bridge_node',
    module='mavlink_bridge.mavlink_bridge_node', params_file=('sensors_params', 'mavlink_params'),
    condition=('composition', 'split'), fleet=MEMBER, members=lambda m: m.over_mavlink,
    parameters=(('scenario_file', Arg('scenario')), ('vehicles', Arg('vehicles', 'int')),
                ('vehicle_index', PerMember(lambda v, m: m.index)),
                ('sensor_topics', Arg('sensor_topics', 'bool')),
                ('realtime_priority', Arg('realtime_priority', 'int'))) + SUITE_PARAMS + tuple(
        (k, _link_param(k)) for k in ('bind', 'fc_address', 'tcp_bind', 'mission_link',
                                      'mission_bind', 'fc_system_id', 'system_id', 'transport',
                                      'autostart', 'fc_param_file')))

# composition:=split: the sensor topics of each vehicle with the suite and no bridge
WORLD_SENSORS = NodeSpec(
    name='sensors_node', executable='sensors_node', module='sim_sensors.sensors_node',
    params_file='sensors_params', fleet=MEMBER, members=_suite_of_its_own,
    condition=(('composition', 'split'), ('sensor_topics', 'true')),
    parameters=(('scenario_file', Arg('scenario')), ('vehicles', Arg('vehicles', 'int')),
                ('vehicle_index', PerMember(lambda v, m: m.index))) + SUITE_PARAMS)


def _member_port(arg: str):
    """The address of launch argument arg for the world vehicle of MAVLink instance k.

    Its port + 2 k, as sim_core.fleet.member_ports moves its bridge's.
    """
    return PerMember(lambda v, m: offset_port(v[arg], UDP_PORTS_PER_VEHICLE * m.link))


WORLD_FC = NodeSpec(
    name='builtin_fc', executable='builtin_fc', module='mavlink_bridge.fc.fc_node',
    params_file='fc_params', use_sim_time=False, fleet=MEMBER, members=_builtin_fc,
    # the FC of link k: the UDP ports of its bridge's link and system id k + 1, as PX4
    # instance k; the airframe of its vehicle
    parameters=(('bind', _member_port('fc_address')), ('sim_address', _member_port('bind')),
                ('system_id', PerMember(lambda v, m: m.link + 1)),
                ('vehicle', PerMember(lambda v, m: m.kind)),
                # several processes and the world's on a few cores: no polling for frames
                # unless it is the one FC of the world
                ('spin_wait_us', PerMember(lambda v, m: 0 if _mavlink_count(v) > 1 else None)),
                ('realtime_priority', Arg('realtime_priority', 'int'))))


def _mavlink_count(values: dict) -> int:
    return sum(1 for m in members_of(values) if m.over_mavlink)


def _imc_index(values: dict, member: Member) -> int:
    """The count of vehicles flown over IMC before member in its world (0 for the first)."""
    return sum(1 for m in members_of(values)[:member.index] if _way(m).link == IMC)


WORLD_IMC = NodeSpec(
    name=IMC_BRIDGE.name, executable=IMC_BRIDGE.executable, module=IMC_BRIDGE.module,
    params_file='imc_params', fleet=MEMBER, members=lambda m: _way(m).link == IMC,
    # the k-th vehicle flown by imc: imc_bind's port + k, IMC id 0x3F01 + k and its own name
    # (the first keeps imc_params' own: the shipped DUNE ini's aerosim-usv, or in sim_auv
    # imc_bridge_auv.yaml's aerosim-auv); its kind's IMC system type; its vehicle file (an
    # AUV's fins); its boat's hold gains: the parameters of /<name>/usv_node in the world
    parameters=(('scenario_file', Arg('scenario')),
                ('bind', PerMember(lambda v, m: offset_port(v['imc_bind'], _imc_index(v, m)))),
                ('peers', Arg('imc_peers')),
                ('system_id', PerMember(lambda v, m: 0x3F01 + _imc_index(v, m)
                                        if _imc_index(v, m) else None)),
                ('system_name', PerMember(lambda v, m: f'aerosim-{m.name}'
                                          if _imc_index(v, m) else None)),
                ('system_type', PerMember(lambda v, m: info(m.kind).imc_type)),
                ('vehicle_file', PerMember(lambda v, m: str(m.scenario.vehicle_file))),
                ('vehicle_node', PerMember(lambda v, m: f'/{m.name}/usv_node'))))

WORLD_CAMERA = NodeSpec(
    name='camera_node', executable='camera_node', module='sim_sensors.camera_node',
    params_file='camera_params', condition=('camera', 'true'), fleet=MEMBER,
    members=lambda m: True,
    parameters=(('scenario_file', Arg('scenario')),))

SIM_WORLD = Graph(
    name='sim_world',
    description='The simulator: one world of any mix of kinds on one clock (quads, planes, '
                'boats, AUVs), each vehicle in its namespace with its controller (in the '
                'step, over MAVLink, over IMC, or any ROS node), contacts between any two, '
                'one judge; every other graph is a preset of it',
    args=WORLD_ARGS + view_args('aerosim_world.rviz', 'sim_world'),
    summary='the simulator: any mix of quads, planes, boats, AUVs, each with its controller',
    nodes=(WORLD_PLANT, WORLD_NODE, WORLD_BRIDGE, WORLD_SENSORS, WORLD_FC, WORLD_IMC,
           WORLD_CAMERA) + view_nodes(),
    world=True,
)
