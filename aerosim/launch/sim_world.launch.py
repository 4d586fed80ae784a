"""ros2 launch aerosim sim_world.launch.py: one world of any mix of kinds (graph 'sim_world').

The scenario's vehicles (default harbour_ops: two quads with built-in FCs, the C172 with its
autopilot, a boat following waypoints) on one clock in one process (world_plant), a built-in
FC per vehicle that has one, and with report:=true the world's judge. The graph is described
once in sim_launch/graphs/; `aerosim launch sim_world` starts the same graph without
launch_ros.
"""

from sim_launch.graphs import get_graph
from sim_launch.launch_builder import launch_description


def generate_launch_description():
    """Return the launch description of graph sim_world."""
    return launch_description(get_graph('sim_world'))
