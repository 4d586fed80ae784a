"""plane_plant: plane_node and mavlink_bridge composed in one process (executable plane_plant).

The fixed-wing twin of hil_plant: each JSBSim step's state goes to the bridge by a direct
call (HIL_SENSOR, HIL_GPS to the FC before the topics go out), and the FC's
HIL_ACTUATOR_CONTROLS, through the fixed-wing mixer, come straight back as surface angles and
throttle (plane_node.apply_effectors). Both nodes keep their names, parameters and topics;
start it without a node-name remap.
"""

from mavlink_bridge.mavlink_bridge_node import MavlinkBridge
from sim_dynamics.plane_node import PlaneNode
from sim_ros.run import run_node


def compose():
    """Create the two nodes and connect them; returns (bridge, plane) (destroyed in order)."""
    plane = PlaneNode(direct_commands=True)
    try:
        bridge = MavlinkBridge(direct_state=True)
    except BaseException:
        plane.destroy_node()
        raise
    plane.state_listeners.append(bridge.on_state)
    bridge.command_sink = plane.apply_effectors
    return bridge, plane


def main(args=None):
    """Run plane_plant."""
    run_node(compose, 'plane_plant', args)


if __name__ == '__main__':
    main()
