"""The IMC bridge's node, and the USV swarm's graph.

The IMC bridge serves a world's vehicle flown over IMC (sim_launch.graphs.world: sim_imc,
sim_auv, sim_world). sim_usv_swarm (a swarm of up to 10,000 USVs behind the USV UI protocol)
is the one graph that is not the world: its time source (usv_swarm_node) steps every boat
with numpy arrays, shares the world's Stepper and writes its summary the one way
(sim_report.core.output).
"""

from sim_launch.graphs.language import Arg, Graph, LaunchArg, NodeSpec, with_defaults
from sim_launch.graphs.parts import COMMON_ARGS, view_args, view_nodes

# The IMC bridge's parameter file (sim_imc, and a world's vehicles flown over IMC)
IMC_PARAMS_ARG = LaunchArg('imc_params', 'imc_bridge.yaml', 'imc_bridge parameter YAML (path, '
                           'or name in config/)')

IMC_BRIDGE = NodeSpec(
    name='imc_bridge', executable='imc_bridge_node', module='imc_bridge.imc_bridge_node',
    params_file='imc_params',
    parameters=(('scenario_file', Arg('scenario')), ('bind', Arg('imc_bind')),
                ('peers', Arg('imc_peers'))))

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
                ('state_rate_hz', Arg('state_rate_hz', 'float')),
                ('summary', Arg('summary', 'bool')), ('output_dir', Arg('output_dir')),
                ('title', Arg('title'))))

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
    summary='a USV swarm (up to 10,000 boats) behind the USV UI protocol (seed 004)',
    args=with_defaults(COMMON_ARGS[:3], namespace='swarm') + SWARM_ARGS
    + view_args('aerosim_swarm.rviz', 'sim_usv_swarm'),
    nodes=(USV_SWARM, USV_BRIDGE) + view_nodes('swarm', (('sim_config', Arg('sim_config')),)),
)

