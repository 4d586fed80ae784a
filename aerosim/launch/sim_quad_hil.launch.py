"""ros2 launch aerosim sim_quad_hil.launch.py: quad HIL (graph 'sim_quad_hil').

Dynamics, sensors, the MAVLink HIL bridge and, with fc:=builtin (default), the built-in flight
controller; fc:=px4 for PX4 SITL v1.16, fc:=external for another autopilot. The graph is
described once in sim_launch/graphs/; `aerosim launch sim_quad_hil` starts the same graph
without launch_ros.
"""

from sim_launch.graphs import get_graph
from sim_launch.launch_builder import launch_description


def generate_launch_description():
    """Return the launch description of graph sim_quad_hil."""
    return launch_description(get_graph('sim_quad_hil'))
