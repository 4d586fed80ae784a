"""ros2 launch aerosim sim_auv.launch.py: an AUV in a world of water (graph 'sim_auv').

The scenario's AUV (default dive: a LAUV dives to 5 m, runs a 200 m leg at depth and surfaces
for a GPS fix) with its built-in controller in the world's process (world_plant), or flown by
DUNE over IMC (a scenario whose AUV has controller: imc, and config/dune/aerosim-lauv.ini);
with report:=true its judge. The graph is described once in sim_launch/graphs/; `aerosim
launch sim_auv` starts the same graph without launch_ros.
"""

from sim_launch.graphs import get_graph
from sim_launch.launch_builder import launch_description


def generate_launch_description():
    """Return the launch description of graph sim_auv."""
    return launch_description(get_graph('sim_auv'))
