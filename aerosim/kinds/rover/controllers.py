"""The rover's controller in the world's process: a line-of-sight waypoint follower (pure).

RoverWaypoints drives the member's mission, its `waypoint` items only (another item is refused
with its index: a rover has no takeoff or landing), at RATE_HZ of sim time. Each leg runs from
the last waypoint (the start for the first) to the next: the course is the leg's, corrected by
the cross-track error over a look-ahead distance (sim_autopilot.core.guidance.line_of_sight,
as a boat's); the yaw rate asked for is K_HEADING x the heading error, within the rover's
turn-rate limit, and the steering angle that gives it at the speed asked for (a bicycle:
delta = atan(r L / v)). The speed is CRUISE_FRACTION of its top speed (or the vehicle's
cruise_speed_mps), slower while the heading is far off (x cos of the error, at least
TURN_SPEED_FRACTION) and on the last leg (ARRIVE_GAIN x the distance, at least
MIN_SPEED_MPS). A waypoint is reached within its acceptance radius (at least half the rover's
length) or passed (beyond the end of its leg, not the last); with hold_s the rover stops
there that long. Done at the last waypoint: throttle and steering 0.

It reports ``done`` and ``item`` (the mission item it drives to; len(mission) when done), as
every in-process controller (sim_world.core.world.Controller).
"""

import math
from typing import List, NamedTuple, Optional, Tuple

from sim_autopilot.core.guidance import line_of_sight
from sim_core.errors import ConfigError
from sim_core.members import Member
from sim_core.units import clamp, wrap_pi

from .model import RoverModel

RATE_HZ = 20.0
NS_PER_S = 1_000_000_000
CRUISE_FRACTION = 0.7           # cruise speed / its top speed [-]
LOOKAHEAD_WHEELBASES = 4.0      # line-of-sight look-ahead [wheelbases]
MIN_LOOKAHEAD_M = 2.0
K_HEADING = 1.5                 # yaw rate asked per radian of heading error [1/s]
TURN_SPEED_FRACTION = 0.3       # the slowest, heading far off [-]
ARRIVE_GAIN = 0.5               # last leg: speed per metre to go [1/s]
MIN_SPEED_MPS = 0.3             # last leg: the slowest approach [m/s]


class _Waypoint(NamedTuple):
    item: int                       # in the mission
    e: float                        # ENU [m]
    n: float
    radius: float                   # acceptance [m]
    hold_s: float = 0.0             # stopped there this long [s] before the next


class RoverWaypoints:
    """A line-of-sight waypoint follower driving a rover (module docstring)."""

    def __init__(self, member: Member, model: RoverModel, rate_hz: float = RATE_HZ,
                 cruise_mps: Optional[float] = None):
        """The waypoints of member's mission for model; ConfigError for another item.

        cruise_mps [m/s]: default the vehicle's cruise_speed_mps, else CRUISE_FRACTION of
        the rover's top speed.
        """
        sc = member.scenario
        p = model.params
        self.model = model
        self.rate_hz = float(rate_hz)
        if cruise_mps is None and member.cruise_speed_mps > 0.0:
            cruise_mps = member.cruise_speed_mps
        self.cruise_mps = min(p.top_speed_mps, CRUISE_FRACTION * p.top_speed_mps
                              if cruise_mps is None else float(cruise_mps))
        self.lookahead_m = max(MIN_LOOKAHEAD_M, LOOKAHEAD_WHEELBASES * p.wheelbase_m)
        self.start = (float(sc.initial_position_enu[0]), float(sc.initial_position_enu[1]))
        self.mission_len = len(sc.mission)
        wps = []
        for i, it in enumerate(sc.mission):
            if it.command != 'waypoint':
                raise ConfigError(f'{member.name}: mission[{i}] {it.command}: a rover drives '
                                  'to waypoint items only')
            e, n, _ = sc.origin.geodetic_to_enu(it.lat_deg, it.lon_deg, sc.origin.alt_m)
            wps.append(_Waypoint(i, float(e), float(n),
                                 max(float(it.acceptance_radius_m), 0.5 * p.length_m),
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
        """The mission item driven to (len(mission) when done)."""
        return self.waypoints[self._k].item if not self.done else self.mission_len

    def _stop(self) -> None:
        self.model.drive(0.0, 0.0)

    def update(self, t_ns: int) -> None:
        """Steer for the waypoint ahead: set the throttle and the steering angle."""
        if self.done:
            return
        t = t_ns / NS_PER_S
        if self._hold_until_ns is not None:
            if t_ns < self._hold_until_ns:
                return
            self._hold_until_ns = None
            self.log.append((t, 'hold over: driving on'))
        m, p = self.model, self.model.params
        wp = self.waypoints[self._k]
        last = self._k == len(self.waypoints) - 1
        step = line_of_sight(self._prev, (wp.e, wp.n), wp.radius, m.e, m.n, last,
                             self.lookahead_m)
        if step.reached:
            self.log.append((t, f'waypoint {wp.item} reached ({step.reached})'))
            self._prev = (wp.e, wp.n)
            self._k += 1
            if self.done:
                self._stop()
                self.log.append((t, 'mission complete'))
                return
            if wp.hold_s > 0.0:
                self._stop()
                self._hold_until_ns = t_ns + int(round(wp.hold_s * NS_PER_S))
                self.log.append((t, f'holding {wp.hold_s:g} s'))
                return
            self.update(t_ns)
            return
        error = wrap_pi(math.pi / 2.0 - step.course - m.psi)    # the course as an ENU yaw
        rate = clamp(K_HEADING * error, -p.max_turn_rate_rps, p.max_turn_rate_rps)
        speed = self.cruise_mps * max(TURN_SPEED_FRACTION, math.cos(error))
        if last:
            speed = min(speed, max(MIN_SPEED_MPS, ARRIVE_GAIN * step.dist))
        steer = math.atan(rate * p.wheelbase_m / max(speed, MIN_SPEED_MPS))
        m.drive(speed / p.top_speed_mps, steer)
