"""world_plant: a world and the MAVLink bridges of its vehicles in one process (sim_world).

The world node (sim_world.world_node) steps every vehicle of the scenario on one clock; each
vehicle flown over MAVLink (a quad's built-in FC, PX4 or an external FC; a plane's built-in
FC or PX4) gets a bridge (mavlink_bridge) in its namespace, composed as hil_plant composes a
fleet's: the bridge takes its vehicle's state by a direct call each step and its answer
steps the world (the member's answer: a quad's motor throttles, a plane's surfaces through
the fixed-wing mixer), with no middleware hop in the lockstep loop. The in-process
controllers (a plane's autopilot, a boat's waypoints) need no bridge.

Links: the vehicle of MAVLink instance k gets the links of instance k
(sim_core.fleet.member_ports from the world node's link parameters: UDP ports + 2 k, TCP
+ k) and system id k + 1 for its FC; a PX4-flown vehicle the links PX4 SITL instance k uses
(TCP tcp_bind's port + k, default 4560 + k; its onboard payload link px4_mission_link + k,
default 14280 + k, which we answer from px4_mission_bind + k, 14030 + k; the parameters
px4_params names). The clock stays at t = 0 until every bridge's FC is ready to fly its mission
(SimTimeNode.hold_start, at most fleet_start_timeout_s). Start it without a node-name remap
and without a namespace: the nodes name their own.
"""

from typing import Dict, List, Tuple

from rclpy.parameter import Parameter

from mavlink_bridge.hil_plant import attach_bridge, not_ready
from mavlink_bridge.mavlink_bridge_node import MavlinkBridge
from sim_core.fleet import member_ports
from sim_core.kinds import VehicleKind
from sim_core.members import Member
from sim_ros.run import run_node
from sim_world.world_node import LinkBase, WorldNode

# PX4 parameters set before the mission, per kind (config/px4): the C172 airframe's
PX4_PARAMS = {VehicleKind.PLANE: 'c172r'}


def px4_params(member: Member) -> str:
    """The PX4 parameter file (config/px4) a PX4-flown member needs, '' if none.

    A plane: its airframe's (c172r); a quad whose mission lands on a deck: deck_landing
    (LNDMC_XY_VEL_MAX over the boat's speed, LTEST_MODE 0, PLD_HACC_RAD, PLD_SRCH_TOUT).
    """
    if any(it.deck for it in member.scenario.mission):
        return 'deck_landing'
    return PX4_PARAMS.get(member.kind, '')


def member_links(member: Member, base: LinkBase) -> Dict[str, object]:
    """The bridge parameters of a world's MAVLink vehicle: its instance's links, its FC's id.

    base: the links of instance 0 (the world node's parameters, i.e. the launch's). UDP to a
    built-in or external FC: the ports + 2 k (transport as given); PX4: TCP and its instance's
    mission link. The FC of instance k has system id k + 1 (PX4 SITL's rcS, and the graph's
    built-in FCs). Autostart (arm, start the mission) for PX4 and external FCs only: the
    built-in FC starts its mission itself.
    """
    k = member.link
    px4 = member.controller == 'px4'
    ports = member_ports(k, bind=base.bind, fc_address=base.fc_address,
                         tcp_bind=base.tcp_bind,
                         mission_link=base.px4_mission_link if px4 else '',
                         mission_bind=base.px4_mission_bind if px4 else '', fc_system_id=1)
    over: Dict[str, object] = dict(ports, spin_wait_us=0)
    if px4:
        over.update(transport='tcp', fc_param_file=px4_params(member))
    else:
        over['transport'] = base.transport
    over['autostart'] = base.autostart and member.controller != 'builtin'
    return over


def compose() -> Tuple:
    """The world node and a bridge per MAVLink vehicle; returns (bridge, ..., world).

    run_node destroys them in this order: the bridges first (they stop and join their reader
    threads, which call into the world), then the world.
    """
    world = WorldNode(direct_commands=True)
    members = world.plant_members()
    bridges: List[MavlinkBridge] = []
    flown: List[Tuple[Member, MavlinkBridge]] = []
    try:
        for pm in sorted((m for m in members if m.link >= 0), key=lambda m: m.link):
            member = world.members[pm.index]
            over = dict(member_links(member, world.link_base), vehicles=len(members),
                        vehicle_index=pm.index)
            bridge = attach_bridge(world, pm, namespace='/' + pm.name, parameter_overrides=[
                Parameter(k, value=x) for k, x in over.items()])
            if world.world.decks.decks:     # its landing-target sensor and range finder
                bridge.decks = world.deck_poses
            bridges.append(bridge)
            flown.append((member, bridge))
        if flown and world.fleet_start_timeout_s > 0.0:
            # the vehicles start together: time begins once every FC is ready to fly its
            # mission (FcSession.waiting_for)
            world.hold_start(lambda: not_ready(flown), world.fleet_start_timeout_s)
    except BaseException:
        for n in bridges + [world]:
            n.destroy_node()
        raise
    return tuple(bridges) + (world,)


def main(args=None):
    """Run world_plant."""
    run_node(compose, 'world_plant', args, composable=('mavlink_bridge',))


if __name__ == '__main__':
    main()
