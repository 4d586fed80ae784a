"""Orders for one boat of the swarm: a task and a motion mode with its setpoints (pure).

The tasks and motion modes are those the USV UI gives in its command 22 (seed 004), and their
numbers are the seed's codes; the UI bridge (usv_bridge.core.protocol) maps the wire's
positional fields onto an Order. SwarmSim takes Orders, nothing of the wire.
"""

from dataclasses import dataclass
from enum import IntEnum
from typing import Dict, Tuple

from sim_core.validate import FieldError, number

MAX_SPEED_MPS = 100.0
RUDDER_LIMIT_DEG = 30.0
MAX_WAYPOINTS = 1000


class Task(IntEnum):
    """What the boat does (22 para2)."""

    NONE = 0
    ESCORT = 1          # a slot beside the target
    DEFEND = 2          # between the target and the nearest opponent
    ATTACK = 3          # close in on the target; damage within attack radius
    MANUAL = 4          # single-boat control: the motion mode applies
    RING = 5            # circle round the target
    FORMATION = 6       # wedge slots behind the target (the leader)


TASKS_WITH_TARGET = (Task.ESCORT, Task.DEFEND, Task.ATTACK, Task.RING, Task.FORMATION)


class Motion(IntEnum):
    """How the boat is steered (22 para6)."""

    NONE = 0                        # throttle and rudder 0
    WAYPOINT_SPEED = 1              # each waypoint at its leg speed
    RUDDER_THROTTLE = 2             # direct
    HEADING_SPEED = 3               # PID holds
    WAYPOINT_TIME = 4               # arrive at each waypoint at its time
    WAYPOINT_VARIABLE_SPEED = 5     # the waypoints at one live speed


WAYPOINT_MOTIONS = (Motion.WAYPOINT_SPEED, Motion.WAYPOINT_TIME,
                    Motion.WAYPOINT_VARIABLE_SPEED)


@dataclass(frozen=True)
class Waypoint:
    """A route point, WGS-84 [deg].

    value: leg speed [m/s] (WAYPOINT_SPEED) or arrival time [s after the order]
    (WAYPOINT_TIME); unused with WAYPOINT_VARIABLE_SPEED.
    """

    lat_deg: float
    lon_deg: float
    value: float = 0.0


@dataclass(frozen=True)
class Order:
    """One boat's order (units: degrees compass, m/s, %, s)."""

    boat_id: int
    task: Task = Task.NONE
    target_id: int = 0                  # the target boat of TASKS_WITH_TARGET
    route_id: int = 0                   # the UI's route number (echoed)
    motion: Motion = Motion.NONE
    throttle_pct: float = 0.0           # RUDDER_THROTTLE: [0, 100] %
    rudder_deg: float = 0.0             # RUDDER_THROTTLE: [-30, 30] deg, + = bow to starboard
    heading_deg: float = 0.0            # HEADING_SPEED: compass [0, 360) deg
    speed_mps: float = 0.0              # HEADING_SPEED, WAYPOINT_VARIABLE_SPEED, task cruise
    route_changed: bool = True          # waypoint motions: a new route (False: keep it)
    waypoints: Tuple[Waypoint, ...] = ()


def check_order(o: Order, ids: Dict[int, int], inside=None) -> Order:
    """Check an order against its ranges and the running swarm; FieldError names the field.

    ids: boat id -> index of the running swarm; inside(lon, lat): whether a point is on the map.
    """
    if o.boat_id not in ids:
        raise FieldError('unknown_id', f'boat_id: no boat {o.boat_id} in the running swarm')
    task, motion = Task(o.task), Motion(o.motion)
    if task in TASKS_WITH_TARGET:
        if o.target_id not in ids:
            raise FieldError('unknown_id', f'target_id: task {task.name} needs a target boat; '
                             f'no boat {o.target_id}')
        if o.target_id == o.boat_id:
            raise FieldError('value', f'target_id: boat {o.boat_id} cannot target itself')
    if motion == Motion.RUDDER_THROTTLE:
        number(o.throttle_pct, 'throttle_pct', 0.0, 100.0)
        number(o.rudder_deg, 'rudder_deg', -RUDDER_LIMIT_DEG, RUDDER_LIMIT_DEG)
    if motion in (Motion.HEADING_SPEED, Motion.WAYPOINT_VARIABLE_SPEED) or \
            task in TASKS_WITH_TARGET:
        number(o.speed_mps, 'speed_mps', 0.0, MAX_SPEED_MPS)
    if motion == Motion.HEADING_SPEED:
        number(o.heading_deg, 'heading_deg', 0.0, 360.0)
        if o.heading_deg == 360.0:
            raise FieldError('value', 'heading_deg: must be in [0, 360), got 360')
    if len(o.waypoints) > MAX_WAYPOINTS:
        raise FieldError('value', f'waypoints: at most {MAX_WAYPOINTS}, got {len(o.waypoints)}')
    last_t = 0.0
    for k, w in enumerate(o.waypoints):
        lon = number(w.lon_deg, f'waypoints[{k}].lon_deg')
        lat = number(w.lat_deg, f'waypoints[{k}].lat_deg')
        if inside is not None and not inside(lon, lat):
            raise FieldError('value', f'waypoints[{k}]: ({lon:.8f}, {lat:.8f}) is outside '
                             'the map')
        if motion == Motion.WAYPOINT_TIME:
            last_t = number(w.value, f'waypoints[{k}].time_s', last_t, 1e7, lo_open=True)
        elif motion == Motion.WAYPOINT_SPEED:
            number(w.value, f'waypoints[{k}].speed_mps', 0.0, MAX_SPEED_MPS)
    if motion in (Motion.WAYPOINT_SPEED, Motion.WAYPOINT_TIME) and o.route_changed \
            and not o.waypoints:
        raise FieldError('value', f'waypoints: motion {motion.name} with a new route needs '
                         'waypoints')
    return o
