"""Parts the graphs share: common arguments, the sensor suite's, the viewers and the summary."""

from typing import Tuple

from sim_launch.graphs.language import Arg, LaunchArg, NodeSpec, PackageFile, Value

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

# The sensor suite's parameters from the launch arguments (sensors_node, and the bridges that
# sample the suite themselves)
SEED_PARAM = ('seed', Arg('seed', 'int'))
SUITE_PARAMS = (SEED_PARAM, ('gnss_enabled', Arg('gps', 'bool')),
                ('mag_enabled', Arg('mag', 'bool')), ('baro_enabled', Arg('baro', 'bool')))


def view_args(rviz_config: str, title: str):
    """Launch arguments of the viewers and the run summary (every graph)."""
    return (
        LaunchArg('rviz', 'false', 'Start rviz2 (where installed) with rviz_config',
                  ('true', 'false')),
        LaunchArg('rviz_config', rviz_config, 'rviz2 config (path, or name in rviz/)'),
        LaunchArg('foxglove', 'false', 'Serve the topics to Foxglove over WebSocket '
                  '(foxglove-sdk; ws://127.0.0.1:<foxglove_port>)', ('true', 'false')),
        LaunchArg('foxglove_port', '8765', 'Foxglove WebSocket port'),
        LaunchArg('summary', 'true', 'Write the run summary (summary.json and plot.png) at the '
                  'end, verdict or not (a run stopped before its end says stopped)',
                  ('true', 'false')),
        LaunchArg('output_dir', 'aerosim_runs', 'Folder of the runs: each run writes into '
                  '<output_dir>/<title>-<scenario>-<UTC time>/, and <output_dir>/latest links '
                  'the last'),
        LaunchArg('title', title, "The run folder's name's first part and the plot's title"),
    )


# The world of the launch arguments, as the nodes that derive its vehicles read it
WORLD_SOURCE = (('scenario_file', Arg('scenario')), ('vehicles', Arg('vehicles', 'int')),
                ('vehicle_namespace', Arg('namespace')), ('controller', Arg('controller')))


def view_nodes(mode: str = 'vehicle', source: Tuple[Tuple[str, Value], ...] = WORLD_SOURCE):
    """viz_node (rviz or foxglove), rviz2 and foxglove_node of a graph.

    mode: 'vehicle' (a world's vehicles) or 'swarm'; source: the parameters naming the
    scenario (and the world's vehicles) or the swarm's init file.
    """
    return (
        NodeSpec(name='viz_node', executable='viz_node', module='sim_viz.viz_node',
                 parameters=(('mode', mode),) + source,
                 any_condition=(('rviz', 'true'), ('foxglove', 'true'))),
        NodeSpec(name='rviz2', executable='rviz2', module=None, package='rviz2',
                 arguments=('-d', PackageFile('rviz_config', 'rviz')), condition=('rviz', 'true')),
        NodeSpec(name='foxglove_node', executable='foxglove_node',
                 module='sim_viz.foxglove_node', condition=('foxglove', 'true'),
                 parameters=(('port', Arg('foxglove_port', 'int')),)),
    )
