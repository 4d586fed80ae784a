"""ros2 launch aerosim sim_plane.launch.py: JSBSim plane + autopilot + sensors (graph 'sim_plane').

The graph is described once in sim_launch/graphs/; `aerosim launch sim_plane` starts the same
graph without launch_ros. Arguments: `ros2 launch aerosim sim_plane.launch.py --show-args`.
"""

from sim_launch.graphs import get_graph
from sim_launch.launch_builder import launch_description


def generate_launch_description():
    """Return the launch description of graph sim_plane."""
    return launch_description(get_graph('sim_plane'))
