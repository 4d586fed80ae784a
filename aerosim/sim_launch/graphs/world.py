"""The world graphs.

sim_world (any mix of kinds on one clock, each vehicle with its controller) and sim_auv (the
same world for an AUV: its built-in controller, or DUNE's LAUV over IMC).
"""

from dataclasses import replace

from sim_core.fleet import UDP_PORTS_PER_VEHICLE, offset_port
from sim_core.kinds import info
from sim_core.members import Member
from sim_launch.graphs.boats import IMC_BRIDGE, IMC_PARAMS_ARG
from sim_launch.graphs.language import (
    MEMBER,
    PLANT_GRACE_S,
    WRITER_GRACE_S,
    Arg,
    Graph,
    LaunchArg,
    NodeSpec,
    PerMember,
    members_of,
    with_defaults,
)
from sim_launch.graphs.parts import (
    BUILTIN_FC,
    COMMON_ARGS,
    READ_BY_REPORT,
    REALTIME_ARG,
    SUITE_PARAMS,
    view_args,
    view_nodes,
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
    REALTIME_ARG,
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
    IMC_PARAMS_ARG,
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
    return sum(1 for m in members_of(values)[:member.index] if m.controller == 'imc')


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
