"""ros2 launch aerosim sim_quad.launch.py: multirotor dynamics + sensors (graph 'sim_quad').

The graph is described once in sim_launch/graphs/; `aerosim launch sim_quad` starts the same
graph without launch_ros. Arguments: `ros2 launch aerosim sim_quad.launch.py --show-args`.
"""

from sim_launch.graphs import get_graph
from sim_launch.launch_builder import launch_description


def generate_launch_description():
    """Return the launch description of graph sim_quad."""
    return launch_description(get_graph('sim_quad'))
