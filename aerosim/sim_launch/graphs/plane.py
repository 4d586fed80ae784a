"""The fixed-wing graphs.

sim_plane (JSBSim Cessna 172R, AeroSim autopilot) and sim_plane_hil (the same aircraft with a
flight controller over MAVLink HIL: built-in or PX4 SITL).
"""

from dataclasses import replace

from sim_launch.graphs.language import (
    WRITER_GRACE_S,
    Arg,
    Graph,
    LaunchArg,
    NodeSpec,
    with_defaults,
)
from sim_launch.graphs.parts import (
    BUILTIN_FC,
    COMMON_ARGS,
    HIL_ARGS,
    MAVLINK_BRIDGE,
    REALTIME_ARG,
    SEED_PARAM,
    SENSORS,
    SIM_ARGS,
    plant,
    view_args,
    view_nodes,
)

PLANE_SIM_ARGS = (
    LaunchArg('rate_hz', '125.0', 'Integration rate [Hz] (JSBSim steps at it; a whole number of '
              'microseconds per step), 10..1000'),
    LaunchArg('time_scale', '1.0', 'Sim seconds per wall second; 0 = as fast as possible'),
    LaunchArg('lockstep', 'true', 'Each step waits for the command answering the last (the '
              "autopilot's, or the flight controller's)", ('true', 'false')),
    REALTIME_ARG,
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
    # the plane's suite: every sensor on (its own switch: sensors), the noise seed
    nodes=(PLANE, AUTOPILOT, replace(SENSORS, condition=('sensors', 'true'),
                                     parameters=(('scenario_file', Arg('scenario')),
                                                 SEED_PARAM)),
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
           replace(SENSORS, condition=(('sensor_topics', 'true'), ('composition', 'split'))),
           replace(MAVLINK_BRIDGE, condition=('composition', 'split')), PLANE_PLANT,
           replace(BUILTIN_FC, parameters=BUILTIN_FC.parameters + (('vehicle', 'plane'),)),
           PLANE_REPORT)
    + view_nodes('vehicle', (('scenario_file', Arg('scenario')),), (('report', 'false'),)),
)

