"""The controllers a world runs in its own process, on truth (pure, no rclpy).

A vehicle flown over MAVLink (a quad's built-in FC or PX4, a plane's PX4) gets its command
from its bridge; the world node sets it on the model. The controllers here need no link: the
world (sim_world.core.world) updates each at its own rate, before the models step, and each
reads its model's state and commands it through the kind's own methods.

- PlaneAutopilot: sim_autopilot.core's Autopilot flying the member's mission as a flight plan
  (flight_plan.from_mission), fed the state as autopilot_node feeds it (autopilot.flight_state
  of the true VehicleSample and JSBSim's calibrated airspeed, the PFD's), its output set as a
  FlightCommand (PlaneModel.apply_flight). With autostart (the world's, handed over by
  sim_world.plane_io) RUN at its first update, as autopilot_node's autostart at the first
  state; without, the plan stays loaded, stopped, until an autopilot_command RUNs it. At
  JSBSim's rate (125 Hz), as autopilot_node answers each state.
- BoatWaypoints: a line-of-sight waypoint follower over the member's mission items with a
  position, driving BoatModel's heading and speed holds at 10 Hz. Each leg runs from the last
  waypoint (the start for the first) to the next: the course is the leg's, corrected by the
  cross-track error e over a look-ahead distance D (course = leg - atan(e / D), D =
  LOOKAHEAD_LENGTHS hull lengths, at least MIN_LOOKAHEAD_M); the speed is CRUISE_FRACTION of
  the boat's top speed (or the vehicle's cruise_speed_mps), slowing to ARRIVE_GAIN x the
  distance (at least MIN_SPEED_MPS) on the last leg. A waypoint is reached within its
  acceptance radius (at least half the hull),
  or passed: beyond the end of its leg (not the last: the turn circle may hold the boat out
  of a small radius). A waypoint with hold_s: stopped there (holds released, throttle and
  rudder 0) that long before the next. Done at the last waypoint: holds released, throttle
  and rudder 0.

Each reports ``done`` and ``item``: the index of the mission item it flies (len(mission)
when done).
"""

import math
from typing import List, NamedTuple, Optional, Protocol, Tuple

from sim_autopilot.core import flight_plan as fp
from sim_autopilot.core.autopilot import Autopilot, Limits, flight_state
from sim_core.members import Member
from sim_dynamics.core.members import JSBSIM_DT_S, BoatModel, PlaneModel
from sim_dynamics.core.plane import FlightCommand

BOAT_RATE_HZ = 10.0
NS_PER_S = 1_000_000_000
CRUISE_FRACTION = 0.7           # a boat's cruise speed / its top speed [-]
LOOKAHEAD_LENGTHS = 3.0         # line-of-sight look-ahead distance [hull lengths]
MIN_LOOKAHEAD_M = 5.0
ARRIVE_GAIN = 0.25              # last leg: speed per metre to go [1/s]
MIN_SPEED_MPS = 0.3             # last leg: the slowest approach [m/s]


class Controller(Protocol):
    """An in-process controller of one vehicle (the world updates it at rate_hz)."""

    rate_hz: float                  # updates per second of sim time [Hz]
    log: List[Tuple[float, str]]    # (sim time [s], text) for the node's log; it clears them

    @property
    def done(self) -> bool:
        """Its mission is complete."""

    @property
    def item(self) -> int:
        """The index of the mission item it flies (len(mission) when done)."""

    def reset(self) -> None:
        """Back to the mission's start (the model is reset by the world)."""

    def update(self, t_ns: int) -> None:
        """Read the model's state at sim time t_ns [ns] and set its command."""


def flight_command(out) -> FlightCommand:
    """An autopilot Output as the FlightCommand it stands for (autopilot_node's message)."""
    return FlightCommand((float(out.power),), float(out.roll), float(out.pitch),
                         float(out.yaw), 0.0, float(out.flap), 0.0, 1.0,
                         float(out.wheel_steer), float(out.wheel_brake))


class PlaneAutopilot:
    """AeroSim's autopilot flying a plane member's mission on truth (module docstring)."""

    def __init__(self, member: Member, model: PlaneModel, rate_hz: float = 1.0 / JSBSIM_DT_S,
                 autostart: bool = True):
        """The plan of member's mission for model's aircraft; rate_hz [Hz] of its updates.

        autostart: RUN the plan at the first update (False: loaded, stopped).
        """
        sc = member.scenario
        a = model.params
        self.model = model
        self.rate_hz = float(rate_hz)
        self.autostart = autostart
        self.origin = sc.origin
        self.limits = Limits(a.rotate_kts, a.climb_kts, a.cruise_kts, a.approach_kts,
                             a.max_bank_deg)
        self.plan = fp.from_mission(sc.mission, sc.origin.alt_m, sc.initial_yaw_deg,
                                    a.rotate_kts) if sc.mission else ()
        self.log: List[Tuple[float, str]] = []      # (t [s], text): the autopilot's lines
        self.reset()

    def reset(self) -> None:
        """A fresh autopilot with the plan loaded (RUN at the next update with autostart)."""
        self.ap = Autopilot(self.limits, self.origin.alt_m)
        if self.plan:
            self.ap.load_plan(self.plan)
        self._last_t: Optional[float] = None
        self.log = []

    @property
    def done(self) -> bool:
        """The plan is complete (a plane without a mission has nothing to do)."""
        return not self.plan or self.ap.mode == 'done'

    @property
    def item(self) -> int:
        """The plan step flown: mission item i is step i (from_mission maps them 1:1)."""
        return max(self.ap.step, 0)

    def update(self, t_ns: int) -> None:
        """One autopilot step on the model's state at t_ns; its FlightCommand applied."""
        m = self.model
        s = flight_state(m.sample(t_ns), self.origin, m.air_data().vc_kts)
        if self._last_t is None and self.plan:
            if self.autostart:
                self.ap.run(s)
                self.log.append((s.t, f'flight plan RUN: {len(self.plan)} steps'))
            else:
                self.log.append((s.t, f'flight plan of {len(self.plan)} steps loaded, '
                                      'stopped (autostart off): RUN it on autopilot_command'))
        dt = 0.0 if self._last_t is None else max(0.0, s.t - self._last_t)
        self._last_t = s.t
        m.apply_flight(flight_command(self.ap.update(s, dt)))
        self.log.extend(self.ap.log)
        self.ap.log.clear()


class LegStep(NamedTuple):
    """One line-of-sight step along a leg (line_of_sight)."""

    reached: str            # how the leg's end was reached ('within 3.2 m', 'passed at ...'),
    #                         '' if not yet
    course: float           # the course to steer [rad] (compass: 0 north, clockwise)
    dist: float             # to the leg's end [m]


def line_of_sight(prev: Tuple[float, float], end: Tuple[float, float], radius: float,
                  x: float, y: float, last: bool, lookahead_m: float) -> LegStep:
    """A step along the leg prev -> end (ENU east, north [m]) from (x, y).

    The end is reached within radius, or passed (beyond the leg's end, unless it is the last
    leg). Else the course is the leg's, corrected by the cross-track error e over the
    look-ahead: course = leg - atan(e / lookahead_m) (straight at the end for a leg of no
    length).
    """
    te, tn = end[0] - prev[0], end[1] - prev[1]
    leg = math.hypot(te, tn)
    dist = math.hypot(end[0] - x, end[1] - y)
    along = ((x - prev[0]) * te + (y - prev[1]) * tn) / leg if leg > 1e-6 else 0.0
    if dist <= radius:
        return LegStep(f'within {dist:.1f} m', 0.0, dist)
    if not last and leg > 1e-6 and along >= leg:
        return LegStep(f'passed at {dist:.1f} m', 0.0, dist)
    if leg > 1e-6:
        cross = ((x - prev[0]) * tn - (y - prev[1]) * te) / leg      # right of it
        return LegStep('', math.atan2(te, tn) - math.atan2(cross, lookahead_m), dist)
    return LegStep('', math.atan2(end[0] - x, end[1] - y), dist)


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
