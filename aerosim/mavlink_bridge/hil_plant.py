"""hil_plant: dynamics_node and mavlink_bridge composed in one process (executable hil_plant).

The HIL loop in lockstep is serial: step, sensors to the FC, wait for its answer, step. Over
topics every step crosses the middleware twice (vehicle_state, effector_command), which costs
more than the model itself. Composed, the bridge takes each step's state by a direct call
(before the topics are published, so the FC computes while they go out) and hands the answer
straight to the dynamics node: the loop is the model, the sensors and the two UDP datagrams.
This is how Gazebo and jMAVSim host their MAVLink HIL interface, inside the physics process.

Both nodes keep their names, parameters (each its own YAML section) and topics: vehicle_state,
odom, /clock, effector_command and the sensors are still published for the tools, /sim/*
services are served. Start it without a node-name remap (it would rename both nodes).
"""

from mavlink_bridge.mavlink_bridge_node import MavlinkBridge
from sim_dynamics.dynamics_node import DynamicsNode
from sim_ros.run import run_node


def compose_with(make_model, sink: str):
    """A time-source model node and the bridge, connected; returns (bridge, model).

    make_model() builds the model node with direct commands; sink: its method taking the
    bridge's answers (command, stamp_ns). run_node destroys them in this order: the bridge
    first, which stops and joins its reader threads; they call into the model node (each
    answer steps it), so none may still be inside it while its publishers are destroyed and
    rclpy shuts down.
    """
    model = make_model()
    try:
        bridge = MavlinkBridge(direct_state=True)
    except BaseException:
        model.destroy_node()
        raise
    model.state_listeners.append(bridge.on_state)
    bridge.command_sink = getattr(model, sink)
    return bridge, model


def compose():
    """dynamics_node and the bridge; returns (bridge, dynamics)."""
    return compose_with(lambda: DynamicsNode(direct_commands=True), 'apply_command')


def main(args=None):
    """Run hil_plant."""
    run_node(compose, 'hil_plant', args)


if __name__ == '__main__':
    main()
