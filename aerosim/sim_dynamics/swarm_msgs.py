"""Orders of the swarm as aerosim_msgs/BoatCommand and back (messages only, no node).

Shared by usv_bridge and usv_swarm_node.
BoatCommand keeps command 22's two dual fields (throttle_or_speed, rudder_or_heading, their
meaning set by control_mode) so that a real boat's driver reads what the UI sent.
"""

from aerosim_msgs.msg import BoatCommand
from sim_dynamics.core.swarm_orders import Motion, Order, Task, Waypoint


def order_to_msg(o: Order, msg: BoatCommand = None) -> BoatCommand:
    """The order as a BoatCommand (header left to the caller)."""
    m = msg or BoatCommand()
    m.boat_id, m.task, m.target_id, m.route_id = o.boat_id, int(o.task), o.target_id, o.route_id
    m.control_mode = int(o.motion)
    if o.motion == Motion.RUDDER_THROTTLE:
        m.throttle_or_speed, m.rudder_or_heading = float(o.throttle_pct), float(o.rudder_deg)
    else:
        m.throttle_or_speed = float(o.speed_mps)
        m.rudder_or_heading = float(o.heading_deg)
    m.waypoints_changed = bool(o.route_changed)
    m.waypoint_lon_deg = [float(w.lon_deg) for w in o.waypoints]
    m.waypoint_lat_deg = [float(w.lat_deg) for w in o.waypoints]
    m.waypoint_value = [float(w.value) for w in o.waypoints]
    return m


def order_from_msg(m: BoatCommand) -> Order:
    """The Order of a BoatCommand; ValueError if its codes or waypoint arrays are wrong."""
    n = len(m.waypoint_lon_deg)
    if not len(m.waypoint_lat_deg) == len(m.waypoint_value) == n:
        raise ValueError('waypoint arrays of different lengths')
    motion, task = Motion(m.control_mode), Task(m.task)
    manual = motion == Motion.RUDDER_THROTTLE
    return Order(
        boat_id=m.boat_id, task=task, target_id=m.target_id, route_id=m.route_id,
        motion=motion, throttle_pct=m.throttle_or_speed if manual else 0.0,
        rudder_deg=m.rudder_or_heading if manual else 0.0,
        heading_deg=0.0 if manual else m.rudder_or_heading,
        speed_mps=0.0 if manual else m.throttle_or_speed,
        route_changed=m.waypoints_changed,
        waypoints=tuple(Waypoint(lat_deg=m.waypoint_lat_deg[k], lon_deg=m.waypoint_lon_deg[k],
                                 value=m.waypoint_value[k]) for k in range(n)))
