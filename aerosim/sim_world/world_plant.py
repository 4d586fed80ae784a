"""world_plant: the world, its MAVLink bridges and its sensor topics in one process.

The world node (sim_world.world_node) steps every vehicle of the scenario on one clock; each
vehicle flown over MAVLink (a quad's built-in FC, PX4 or an external FC; a plane's built-in
FC or PX4) gets a bridge (mavlink_bridge) in its namespace: the bridge takes its vehicle's
state by a direct call each step (before the topics go out, so the FC computes meanwhile)
and its answer steps the world (the member's answer: a quad's motor throttles, a plane's
surfaces through the fixed-wing mixer), with no middleware hop in the lockstep loop. This is
how Gazebo and jMAVSim host their MAVLink HIL interface, inside the physics process. The
bridge publishes the ROS sensor topics of the samples it sends; every other vehicle that
carries the sensor suite gets a sensors_node of the same process, fed the same way
(sensor_topics). The in-process controllers (a plane's autopilot, a boat's waypoints) need
no bridge.

Links: the vehicle of MAVLink instance k gets the links of instance k
(sim_world.core.links.member_links: UDP ports + 2 k, TCP + k, its FC's system id k + 1; a
PX4-flown vehicle the links of PX4 SITL instance px4_instance + k). The clock stays at t = 0
until every bridge's FC is ready to fly its mission (SimTimeNode.hold_start, at most
fleet_start_timeout_s). Start it without a node-name remap and without a namespace: the
nodes name their own.
"""

import time
from typing import List, Tuple

from rclpy.node import Node
from rclpy.parameter import Parameter

from mavlink_bridge.mavlink_bridge_node import MavlinkBridge
from sim_core.kinds import info
from sim_core.members import Member
from sim_ros.plant import Plant, PlantMember
from sim_ros.run import run_node, until_judged
from sim_sensors.sensors_node import SensorsNode
from sim_world.core.links import member_links
from sim_world.world_node import WorldNode


def attach_bridge(plant: Plant, member: PlantMember, **node_kw) -> MavlinkBridge:
    """A bridge for one vehicle of the plant: its states in, its answers out.

    node_kw: the bridge node's namespace and parameter_overrides.
    """
    bridge = MavlinkBridge(direct_state=True, **node_kw)
    plant.add_state_listener(bridge.on_state, member.index)
    bridge.command_sink = member.answer
    return bridge


def not_ready(flown_by) -> list:
    """The vehicles whose FC is not ready to fly its mission yet (hold_start).

    flown_by: (member, its bridge) pairs.
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


def _overrides(over: dict) -> list:
    return [Parameter(k, value=x) for k, x in over.items()]


def compose() -> Tuple:
    """The world, a bridge per MAVLink vehicle, sensors for the others; returns them all.

    The order is the order run_node destroys them in: the bridges and sensors first (the
    bridges stop and join their reader threads, which call into the world), then the world
    and its vehicles' own nodes.
    """
    world = WorldNode(direct_commands=True)
    members = world.plant_members()
    parts: List[Node] = []
    flown: List[Tuple[Member, MavlinkBridge]] = []
    try:
        for pm in sorted((m for m in members if m.link >= 0), key=lambda m: m.link):
            member = world.members[pm.index]
            over = dict(member_links(member, world.link_base), vehicles=len(members),
                        vehicle_index=pm.index, spin_wait_us=0 if len(members) > 1 else None,
                        sensor_topics=world.wcfg.sensor_topics)
            bridge = attach_bridge(world, pm, namespace='/' + pm.name, parameter_overrides=(
                _overrides({k: x for k, x in over.items() if x is not None})))
            if world.world.decks.decks:     # its landing-target sensor and range finder
                bridge.decks = world.deck_poses
            parts.append(bridge)
            flown.append((member, bridge))
        if world.wcfg.sensor_topics:
            for m in world.members:
                if info(m.kind).sensors and not m.over_mavlink:
                    sensors = SensorsNode(direct_state=True, namespace='/' + m.name,
                                          parameter_overrides=_overrides({
                                              'vehicle_index': m.index}))
                    world.add_state_listener(sensors.on_state, m.index)
                    parts.append(sensors)
        if flown and world.fleet_start_timeout_s > 0.0:
            # the vehicles start together: time begins once every FC is ready to fly its
            # mission (FcSession.waiting_for)
            world.hold_start(lambda: not_ready(flown), world.fleet_start_timeout_s)
    except BaseException:
        for n in parts + list(world.nodes()):
            n.destroy_node()
        raise
    return tuple(parts) + world.nodes()


def main(args=None):
    """Run world_plant: until its judge ends the run (report:=true), or Ctrl-C."""
    run_node(compose, 'world_plant', args, body=until_judged,
             composable=('mavlink_bridge', 'sensors_node'))


if __name__ == '__main__':
    main()
