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

The model node is a Plant (sim_ros.plant): the composition takes its vehicles, each one's
answer and its state listeners through that typed contract only. A fleet (vehicles:=N,
N >= 2) composes one dynamics_node stepping the N quads and one bridge per vehicle,
/quad0/mavlink_bridge ... each with the links of its instance (sim_core.fleet.member_ports:
its own FC, UDP ports + 2 i, PX4 TCP 4560 + i) and its vehicle's start and mission. Lockstep
waits for every vehicle's FC (sim_core.clock.FleetGate). The process then runs in the root
namespace: the nodes name their own.
"""

import inspect
import time
from typing import Callable, List, Tuple

from rclpy.parameter import Parameter

from mavlink_bridge.mavlink_bridge_node import MavlinkBridge
from sim_core.fleet import member_ports
from sim_dynamics.dynamics_node import DynamicsNode
from sim_ros.plant import Plant, PlantMember
from sim_ros.run import run_node

# The link parameters of a fleet's vehicle 0 that member_ports moves for vehicle i: its own
# parameters (every one is a bridge parameter, BridgeConfig's field of that name).
LINK_PARAMETERS = tuple(p for p in inspect.signature(member_ports).parameters if p != 'i')


def attach_bridge(plant: Plant, member: PlantMember, **node_kw) -> MavlinkBridge:
    """A bridge for one vehicle of the plant: its states in, its answers out.

    node_kw: the bridge node's namespace and parameter_overrides (a fleet's vehicle).
    """
    bridge = MavlinkBridge(direct_state=True, **node_kw)
    plant.add_state_listener(bridge.on_state, member.index)
    bridge.command_sink = member.answer
    return bridge


def link_parameters(bridge: MavlinkBridge) -> dict:
    """The link parameters of a bridge as it declared them (vehicle 0's: the launch's)."""
    return {k: getattr(bridge.cfg, k) for k in LINK_PARAMETERS}


def compose_with(make_plant: Callable[[], Plant]) -> Tuple:
    """A time-source model node and its bridge(s), connected; returns (bridge, ..., plant).

    make_plant() builds the model node with direct commands (a sim_ros.plant.Plant). Each of
    its members flown over MAVLink (link >= 0) gets a bridge whose answers go to the member's
    own answer (a quad's throttles, a plane's surfaces). A fleet's bridges live in their
    vehicles' namespaces, each with the links of its instance: vehicle 0's bridge is built
    first with the process's parameters (the launch's -p, the YAML), and the others' links are
    moved from the ones it declared (sim_core.fleet.member_ports). run_node destroys them in
    this order: the bridges first, which stop and join their reader threads; they call into
    the model node (each answer steps it), so none may still be inside it while its
    publishers are destroyed and rclpy shuts down.
    """
    plant = make_plant()
    if not isinstance(plant, Plant):
        plant.destroy_node()
        raise TypeError(f'{type(plant).__name__} is not a sim_ros.plant.Plant')
    members = plant.plant_members()
    flown = [m for m in members if m.link >= 0]
    bridges: List[MavlinkBridge] = []
    try:
        if plant.fleet:
            base: dict = {}
            for m in sorted(flown, key=lambda m: m.link):
                # no polling for the FC's answer: N readers and N FCs share the cores
                over = {'vehicles': len(members), 'vehicle_index': m.index, 'spin_wait_us': 0}
                if bridges:
                    over.update(member_ports(m.link, **base))
                bridges.append(attach_bridge(
                    plant, m, namespace='/' + m.name,
                    parameter_overrides=[Parameter(k, value=x) for k, x in over.items()]))
                if len(bridges) == 1:
                    base = _instance_zero(bridges[0], m)
            if plant.fleet_start_timeout_s > 0.0:
                # the vehicles start together: time begins once every FC is ready to fly its
                # mission (FcSession.waiting_for)
                flown_by = list(zip(sorted(flown, key=lambda m: m.link), bridges))
                plant.hold_start(lambda: not_ready(flown_by), plant.fleet_start_timeout_s)
        else:
            bridges.extend(attach_bridge(plant, m) for m in flown)
    except BaseException:
        for n in bridges + [plant]:
            n.destroy_node()
        raise
    return tuple(bridges) + (plant,)


def _instance_zero(bridge: MavlinkBridge, member: PlantMember) -> dict:
    """The links of MAVLink instance 0 from its bridge (built with the process's parameters).

    Instance 0's links are the launch's as given: member_ports(0) changes none of them.
    """
    base = link_parameters(bridge)
    if member.link != 0 or member_ports(0, **base) != base:
        raise RuntimeError(f'{member.name}: MAVLink instance {member.link} built first, its '
                           'links are not the launch arguments')
    return base


def not_ready(flown_by) -> list:
    """The vehicles whose FC is not ready to fly its mission yet (hold_start).

    flown_by: (member, its bridge) pairs, a member having a name (a fleet's or a world's).
    """
    now = time.monotonic()
    out = []
    for m, b in flown_by:
        if b.core.flight_controller() is None:
            out.append(f'/{m.name} (its FC not heard)')
        else:
            why = b.core.waiting_for(now)
            if why:
                out.append(f'/{m.name} (waiting for {why})')
    return out


def compose():
    """dynamics_node and its bridge(s) (one per vehicle); returns (bridge, ..., dynamics)."""
    return compose_with(lambda: DynamicsNode(direct_commands=True))


def main(args=None):
    """Run hil_plant."""
    run_node(compose, 'hil_plant', args)


if __name__ == '__main__':
    main()
