"""The boat's controller in the world's process: a line-of-sight waypoint follower (pure).

BoatWaypoints: a line-of-sight waypoint follower over the member's mission items with a
position, driving BoatModel's heading and speed holds at 10 Hz. Each leg runs from the last
waypoint (the start for the first) to the next: the course is the leg's, corrected by the
cross-track error e over a look-ahead distance D (sim_autopilot.core.guidance.line_of_sight:
course = leg - atan(e / D), D = LOOKAHEAD_LENGTHS hull lengths, at least MIN_LOOKAHEAD_M); the
speed is CRUISE_FRACTION of the boat's top speed (or the vehicle's cruise_speed_mps), slowing
to ARRIVE_GAIN x the distance (at least MIN_SPEED_MPS) on the last leg. A waypoint is reached
within its acceptance radius (at least half the hull), or passed: beyond the end of its leg
(not the last: the turn circle may hold the boat out of a small radius). A waypoint with
hold_s: stopped there (holds released, throttle and rudder 0) that long before the next. Done
at the last waypoint: holds released, throttle and rudder 0.

It reports ``done`` and ``item``: the index of the mission item it steers to (len(mission)
when done), as every in-process controller (sim_world.core.world.Controller).
"""

import math
from typing import List, NamedTuple, Optional, Tuple

from sim_autopilot.core.guidance import line_of_sight
from sim_core.members import Member

from .model import BoatModel

BOAT_RATE_HZ = 10.0
NS_PER_S = 1_000_000_000
CRUISE_FRACTION = 0.7           # a boat's cruise speed / its top speed [-]
LOOKAHEAD_LENGTHS = 3.0         # line-of-sight look-ahead distance [hull lengths]
MIN_LOOKAHEAD_M = 5.0
ARRIVE_GAIN = 0.25              # last leg: speed per metre to go [1/s]
MIN_SPEED_MPS = 0.3             # last leg: the slowest approach [m/s]


class _Waypoint(NamedTuple):
    item: int                       # in the mission
    e: float                        # ENU [m]
    n: float
    radius: float                   # acceptance [m]
    hold_s: float = 0.0             # stopped there this long [s] before the next


class BoatWaypoints:
    """A line-of-sight waypoint follower driving a boat's holds (module docstring)."""

    def __init__(self, member: Member, model: BoatModel, rate_hz: float = BOAT_RATE_HZ,
                 cruise_mps: Optional[float] = None):
        """The positions of member's mission for model.

        cruise_mps [m/s]: default CRUISE_FRACTION of the boat's top speed.
        """
        sc = member.scenario
        self.model = model
        self.rate_hz = float(rate_hz)
        if cruise_mps is None and member.cruise_speed_mps > 0.0:
            cruise_mps = member.cruise_speed_mps        # the scenario's cruise_speed_mps
        self.cruise_mps = (CRUISE_FRACTION * model.top_speed_mps if cruise_mps is None
                           else float(cruise_mps))
        self.lookahead_m = max(MIN_LOOKAHEAD_M,
                               LOOKAHEAD_LENGTHS * float(model.boat_type.length_m))
        self.start = (float(sc.initial_position_enu[0]), float(sc.initial_position_enu[1]))
        self.mission_len = len(sc.mission)
        wps = []
        for i, it in enumerate(sc.mission):
            if it.command in ('waypoint', 'land'):
                e, n, _ = sc.origin.geodetic_to_enu(it.lat_deg, it.lon_deg, sc.origin.alt_m)
            elif it.command == 'rtl':
                e, n = self.start
            else:                   # takeoff: nothing for a boat
                continue
            wps.append(_Waypoint(i, float(e), float(n),
                                 max(float(it.acceptance_radius_m), model.radius_m),
                                 float(it.hold_s)))
        self.waypoints = tuple(wps)
        self.log: List[Tuple[float, str]] = []
        self.reset()

    def reset(self) -> None:
        """To the first waypoint, from the start."""
        self._k = 0
        self._prev = self.start
        self._hold_until_ns: Optional[int] = None
        self.log = []

    @property
    def done(self) -> bool:
        """The last waypoint reached (or none to reach)."""
        return self._k >= len(self.waypoints)

    @property
    def item(self) -> int:
        """The mission item steered to (len(mission) when done)."""
        return self.waypoints[self._k].item if not self.done else self.mission_len

    def update(self, t_ns: int) -> None:
        """Steer for the waypoint ahead: set the heading and speed holds."""
        if self.done:
            return
        if self._hold_until_ns is not None:
            if t_ns < self._hold_until_ns:
                return
            self._hold_until_ns = None
            self.log.append((t_ns * 1e-9, 'hold over: under way'))
        p = self.model.sample(t_ns).p_enu
        x, y = float(p[0]), float(p[1])
        wp = self.waypoints[self._k]
        last = self._k == len(self.waypoints) - 1
        step = line_of_sight(self._prev, (wp.e, wp.n), wp.radius, x, y, last, self.lookahead_m)
        if step.reached:
            self.log.append((t_ns * 1e-9, f'waypoint {wp.item} reached ({step.reached})'))
            self._prev = (wp.e, wp.n)
            self._k += 1
            if self.done:
                self.model.release()
                self.model.command(0.0, 0.0)
                self.log.append((t_ns * 1e-9, 'mission complete'))
                return
            if wp.hold_s > 0.0:             # stopped (throttle and rudder 0) for hold_s
                self.model.release()
                self.model.command(0.0, 0.0)
                self._hold_until_ns = t_ns + int(round(wp.hold_s * NS_PER_S))
                self.log.append((t_ns * 1e-9, f'holding {wp.hold_s:g} s'))
                return
            self.update(t_ns)
            return
        speed = self.cruise_mps
        if last:
            speed = min(speed, max(MIN_SPEED_MPS, ARRIVE_GAIN * step.dist))
        self.model.holds(math.degrees(step.course) % 360.0, speed)
