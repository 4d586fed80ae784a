"""ros2 launch aerosim sim_imc.launch.py: a USV as an IMC system for DUNE/Neptus (graph 'sim_imc').

usv_node (boat dynamics, the sim clock) and imc_bridge (IMC over UDP). The graph is described
once in sim_launch/graphs/; `aerosim launch sim_imc` starts the same graph without launch_ros.
"""

from sim_launch.graphs import get_graph
from sim_launch.launch_builder import launch_description


def generate_launch_description():
    """Return the launch description of graph sim_imc."""
    return launch_description(get_graph('sim_imc'))
