"""The multirotor graphs.

sim_quad (dynamics, sensors, camera) and sim_quad_hil (a flight controller over MAVLink HIL:
built-in, PX4 SITL or external; one quad or a fleet).
"""

from dataclasses import replace

from sim_launch.graphs.language import (
    EACH,
    ONE,
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
    READ_BY_REPORT,
    SENSORS,
    SIM_ARGS,
    plant,
    view_args,
    view_nodes,
)

DYNAMICS = NodeSpec(
    name='dynamics_node', executable='dynamics_node', module='sim_dynamics.dynamics_node',
    params_file='dynamics_params', use_sim_time=False,
    parameters=(('scenario_file', Arg('scenario')), ('rate_hz', Arg('rate_hz', 'float')),
                ('time_scale', Arg('time_scale', 'float')), ('lockstep', Arg('lockstep', 'bool')),
                ('realtime_priority', Arg('realtime_priority', 'int')), READ_BY_REPORT))

CAMERA = NodeSpec(
    name='camera_node', executable='camera_node', module='sim_sensors.camera_node',
    params_file='camera_params', condition=('camera', 'true'),
    parameters=(('scenario_file', Arg('scenario')),))

SIM_QUAD = Graph(
    name='sim_quad',
    description='Multirotor dynamics (sim clock) and sensors: IMU, magnetometer, barometer, '
                'GNSS, camera',
    args=COMMON_ARGS + SIM_ARGS + view_args('aerosim.rviz', 'sim_quad'),
    nodes=(DYNAMICS, SENSORS, CAMERA)
    + view_nodes('vehicle', (('scenario_file', Arg('scenario')),)),
)

FLIGHT_REPORT = NodeSpec(
    name='flight_report', executable='flight_report', module='sim_report.flight_report',
    condition=('report', 'true'), supervisor=True, use_sim_time=False,   # stamps only
    fleet=ONE,
    stop_grace_s=WRITER_GRACE_S,
    parameters=(('scenario_file', Arg('scenario')), ('output_dir', Arg('output_dir')),
                ('title', 'sim_quad_hil')))

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

