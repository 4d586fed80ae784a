"""plane_plant: plane_node and mavlink_bridge composed in one process (executable plane_plant).

The fixed-wing twin of hil_plant: each JSBSim step's state goes to the bridge by a direct
call (HIL_SENSOR, HIL_GPS to the FC before the topics go out), and the FC's
HIL_ACTUATOR_CONTROLS, through the fixed-wing mixer, come straight back as surface angles and
throttle (its member's answer: plane_node.apply_effectors). Both nodes keep their names,
parameters and topics; start it without a node-name remap.
"""

from mavlink_bridge.hil_plant import compose_with
from sim_dynamics.plane_node import PlaneNode
from sim_ros.run import run_node


def compose():
    """plane_node and the bridge, connected as hil_plant's; returns (bridge, plane)."""
    return compose_with(lambda: PlaneNode(direct_commands=True))


def main(args=None):
    """Run plane_plant."""
    run_node(compose, 'plane_plant', args)


if __name__ == '__main__':
    main()
