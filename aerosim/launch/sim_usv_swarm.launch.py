"""ros2 launch aerosim sim_usv_swarm.launch.py: a USV swarm for the USV UI (graph 'sim_usv_swarm').

usv_swarm_node (N boats, the sim clock) and usv_bridge (the UI protocol, seed 004, over UDP or
TCP). The graph is described once in sim_launch/graphs/; `aerosim launch sim_usv_swarm` starts
the same graph without launch_ros.
"""

from sim_launch.graphs import get_graph
from sim_launch.launch_builder import launch_description


def generate_launch_description():
    """Return the launch description of graph sim_usv_swarm."""
    return launch_description(get_graph('sim_usv_swarm'))
