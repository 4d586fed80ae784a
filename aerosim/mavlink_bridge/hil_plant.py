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

A fleet (vehicles:=N, N >= 2) composes one dynamics_node stepping the N quads and one bridge
per vehicle, /quad0/mavlink_bridge ... each with the links of its instance
(sim_core.fleet.member_ports: its own FC, UDP ports + 2 i, PX4 TCP 4560 + i) and its vehicle's
start and mission. Lockstep waits for every vehicle's FC (sim_core.clock.FleetGate). The
process then runs in the root namespace: the nodes name their own.
"""

import time

from rclpy.parameter import Parameter

from mavlink_bridge.core.bridge import BridgeConfig
from mavlink_bridge.mavlink_bridge_node import MavlinkBridge
from sim_core.fleet import member_ports
from sim_dynamics.dynamics_node import DynamicsNode
from sim_ros.run import run_node


def attach_bridge(model, sink: str, member: int = 0, **node_kw) -> MavlinkBridge:
    """A bridge for vehicle member of the model node: its states in, its answers out.

    sink: the model's method taking the answers (command, stamp_ns[, member]); node_kw: the
    bridge node's namespace and parameter_overrides (a fleet's vehicle).
    """
    bridge = MavlinkBridge(direct_state=True, **node_kw)
    model.add_state_listener(bridge.on_state, member)
    fn = getattr(model, sink)
    bridge.command_sink = fn if not node_kw else (lambda cmd, t_ns: fn(cmd, t_ns, member))
    return bridge


def _link_base(node) -> dict:
    """Vehicle 0's link parameters as the process was given them (-p), else the defaults.

    They are the bridge's, not the node's: rclpy keeps every override of the process, declared
    or not, and the launch arguments own these (no YAML sets them).
    """
    base = BridgeConfig()
    given = node._parameter_overrides    # noqa: SLF001 (rclpy keeps no public accessor)
    return {k: given[k].value if k in given else getattr(base, k)
            for k in ('bind', 'fc_address', 'tcp_bind', 'mission_link', 'mission_bind',
                      'fc_system_id')}


def compose_with(make_model, sink: str):
    """A time-source model node and its bridge(s), connected; returns (bridge, ..., model).

    make_model() builds the model node with direct commands; sink: its method taking the
    bridge's answers. A fleet's model (vehicles) gets one bridge per vehicle, each in the
    vehicle's namespace with the links of its instance (member_ports from vehicle 0's). run_node
    destroys them in this order: the bridges first, which stop and join their reader threads;
    they call into the model node (each answer steps it), so none may still be inside it
    while its publishers are destroyed and rclpy shuts down.
    """
    model = make_model()
    bridges = []
    try:
        if getattr(model, 'fleet', False):
            base = _link_base(model)
            for i, v in enumerate(model.vehicles):
                # no polling for the FC's answer: N readers and N FCs share the cores
                over = dict(member_ports(i, **base), vehicles=len(model.vehicles),
                            vehicle_index=i, spin_wait_us=0)
                bridges.append(attach_bridge(
                    model, sink, i, namespace='/' + v.name,
                    parameter_overrides=[Parameter(k, value=x) for k, x in over.items()]))
            if model.fleet_start_timeout_s > 0.0:
                # the vehicles start together: time begins once every FC is ready to fly its
                # mission (FcSession.waiting_for)
                model.hold_start(lambda: _not_ready(model, bridges), model.fleet_start_timeout_s)
        else:
            bridges.append(attach_bridge(model, sink))
    except BaseException:
        for n in bridges + [model]:
            n.destroy_node()
        raise
    return tuple(bridges) + (model,)


def _not_ready(model, bridges) -> list:
    """The vehicles of a fleet whose FC is not ready to fly its mission yet (hold_start)."""
    now = time.monotonic()
    out = []
    for v, b in zip(model.vehicles, bridges):
        if b.core.flight_controller() is None:
            out.append(f'/{v.name} (its FC not heard)')
        else:
            why = b.core.waiting_for(now)
            if why:
                out.append(f'/{v.name} (waiting for {why})')
    return out


def compose():
    """dynamics_node and its bridge(s) (one per vehicle); returns (bridge, ..., dynamics)."""
    return compose_with(lambda: DynamicsNode(direct_commands=True), 'apply_command')


def main(args=None):
    """Run hil_plant."""
    run_node(compose, 'hil_plant', args)


if __name__ == '__main__':
    main()
