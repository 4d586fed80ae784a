"""The built-in AUV controller: depth, pitch, heading and speed loops over a waypoint plan.

The embedded default of an AUV (as the built-in FC is for a quad), run by the world in its own
process on truth, at PILOT_RATE_HZ (pure, no rclpy). The plan is the member's mission: each
`waypoint` item a point (lat/lon) at a depth (`depth_m`, alt_m -depth); a waypoint at depth 0
with `hold_s` is a surfacing: the AUV rises on its way there, stops on arrival (thruster and
fins 0), floats up on its reserve buoyancy and, once at the surface (its axis shallower than
SURFACE_DEPTH_M: the hull and GPS antenna out of the water), stays hold_s seconds, as a LAUV
surfaces for a GPS fix. A hold at depth: stopped there (it rises slowly meanwhile).

It flies on its own sensors (sim_sensors.core.underwater, seeded by the member's index), not
on truth: AuvNavigator takes the depth sensor, the AHRS, GNSS fixes while at the surface and
dead-reckons on the DVL under water (bottom lock within its range of the scenario's seabed,
environment.water_depth_m; else water track, blind to the current); the first fix after a
dive logs how far off the dead reckoning was.

Loops (DUNE's LAUV structure: an outer depth loop commanding pitch, an inner pitch loop on
the elevators, a heading loop on the rudders, speed on the thruster):
    horizontal   line of sight along the leg from the last waypoint (the start for the first):
                 course = leg - atan(cross-track / LOOKAHEAD_M); a waypoint is reached
                 within its acceptance radius (at least the vehicle's length) or passed
                 (beyond the end of its leg, not the last)
    depth        pitch_d = clamp(K_Z (z - z_d) + K_ZI int(z - z_d), +-MAX_PITCH) (nose up
                 when too deep; z down); the error integrated only within INTEGRATE_WITHIN_M
                 of the depth (no wind-up on the way down: 0.9 m overshoot with it, 0.15 m
                 without, at 5 m)
    pitch        elevator = -(K_THETA (pitch_d - pitch) - K_Q q) s (positive elevator pitches
                 the nose down: the lift of the tail fins is up)
    heading      yaw rate_d = clamp(K_PSI wrap(course - psi), +-MAX_YAW_RATE),
                 rudder = -K_R (rate_d - r) s (positive rudder turns the bow to port)
    speed        thruster = feed-forward (the actuation whose thrust equals the hull's drag at
                 the speed, from the AUV type's thruster law) + K_U (u_d - u) + K_UI int
    s = (cruise / U)^2 clamped to [0.25, 4]: the fins' force grows with U^2
"""

import math
from typing import List, NamedTuple, Optional, Tuple

import numpy as np

from sim_autopilot.core.guidance import line_of_sight
from sim_core.members import Member
from sim_core.units import clamp, wrap_pi
from sim_dynamics.core.auv import ELEVATOR, RUDDER, AuvType
from sim_sensors.core.underwater import (
    UnderwaterParams,
    UnderwaterReadings,
    UnderwaterSensors,
    rotation,
)

from .model import AuvModel

PILOT_RATE_HZ = 50.0
NS_PER_S = 1_000_000_000
LOOKAHEAD_M = 12.0
K_Z, K_ZI = 0.2, 0.02                   # rad/m, rad/(m s)
INTEGRATE_WITHIN_M = 1.0                # the depth error integrated only this close [m]
MAX_PITCH = math.radians(20.0)
K_THETA, K_Q = 1.2, 0.3                 # rad/rad, rad/(rad/s)
K_PSI, MAX_YAW_RATE = 0.6, math.radians(12.0)
K_R = 2.0                               # rad/(rad/s)
K_U, K_UI = 0.2, 0.02                   # 1/(m/s), 1/m
SURFACE_DEPTH_M = 0.3                   # at the surface: the axis shallower than this [m]


class _Waypoint(NamedTuple):
    item: int                       # in the mission
    e: float                        # ENU [m]
    n: float
    depth: float                    # [m], 0 = at the surface
    radius: float                   # acceptance [m]
    hold_s: float                   # stopped there this long [s] before the next


def thrust_for_speed(t: AuvType, speed: float) -> float:
    """The thruster actuation [0, 1] whose thrust equals the hull's drag at speed [m/s]."""
    u = max(0.0, speed)
    drag = -(t.linear_drag[0] * u + t.quadratic_drag[0] * u * u)
    k1, k2 = t.thruster_k1, t.thruster_k2
    n = (k2 * u + math.sqrt((k2 * u) ** 2 + 4.0 * k1 * drag)) / (2.0 * k1)
    return min(1.0, n * 60.0 / t.max_rpm)


class AuvNavigator:
    """The pilot's own navigation: GNSS fixes at the surface, dead reckoning under water.

    Depth from the depth sensor, attitude and rates from the AHRS, the position from each GNSS
    fix while at the surface, else integrated from the DVL's body velocity turned by the AHRS
    attitude (over the seabed with bottom lock; through the water without: the current is
    then unseen and the estimate drifts with it). ``corrections``: (sim time [s], the jump [m])
    of the first fix after a dive, the dead reckoning's error then.
    """

    def __init__(self, start_ne: Tuple[float, float]):
        """Starting at start_ne (north, east [m]), level, at rest, at the surface."""
        self.ne = (float(start_ne[0]), float(start_ne[1]))
        self.depth = 0.0
        self.euler = (0.0, 0.0, 0.0)
        self.pqr = (0.0, 0.0, 0.0)
        self.uvw = (0.0, 0.0, 0.0)
        self.corrections: List[Tuple[float, float]] = []
        self._dived = False

    def update(self, r: UnderwaterReadings, dt: float, t_s: float) -> None:
        """Take the readings of one instant, dt [s] after the last."""
        if r.euler is not None:
            self.euler, self.pqr = r.euler, r.pqr or self.pqr
        if r.depth_m is not None:
            self.depth = r.depth_m
        if r.dvl_uvw is not None:
            self.uvw = r.dvl_uvw
        if r.gnss_ne is not None:
            if self._dived:
                self.corrections.append((t_s, math.dist(self.ne, r.gnss_ne)))
                self._dived = False
            self.ne = r.gnss_ne
            return
        if r.gnss_lost:
            self._dived = True
        v = rotation(self.euler) @ np.asarray(self.uvw)
        self.ne = (self.ne[0] + float(v[0]) * dt, self.ne[1] + float(v[1]) * dt)


class AuvPilot:
    """The built-in AUV controller (module docstring); the world updates it at rate_hz."""

    def __init__(self, member: Member, model: AuvModel, rate_hz: float = PILOT_RATE_HZ):
        """The waypoints of member's mission for model; cruise: its cruise_speed_mps."""
        sc = member.scenario
        t = model.auv_type
        self.model = model
        self.rate_hz = float(rate_hz)
        self.cruise_mps = member.cruise_speed_mps or t.cruise_speed_mps
        self.thrust_ff = thrust_for_speed(t, self.cruise_mps)   # the cruise's actuation
        self.start = (float(sc.initial_position_enu[0]), float(sc.initial_position_enu[1]))
        self.mission_len = len(sc.mission)
        wps = []
        for i, it in enumerate(sc.mission):
            if it.command != 'waypoint':
                raise ValueError(f'mission[{i}]: an AUV follows waypoint items only, got '
                                 f'{it.command}')
            e, n, _ = sc.origin.geodetic_to_enu(it.lat_deg, it.lon_deg, sc.origin.alt_m)
            wps.append(_Waypoint(i, float(e), float(n), max(0.0, -float(it.alt_m)),
                                 max(float(it.acceptance_radius_m), float(t.length_m)),
                                 float(it.hold_s)))
        self.waypoints = tuple(wps)
        self.water_depth_m = float(sc.environment.water_depth_m)
        self.seed = int(member.index)       # the noise of member k's sensors: seed k
        self._rudders = [k for k, f in enumerate(t.fins) if f.surface == RUDDER]
        self._elevators = [k for k, f in enumerate(t.fins) if f.surface == ELEVATOR]
        self.log: List[Tuple[float, str]] = []
        self.reset()

    def reset(self) -> None:
        """To the first waypoint, from the start, the integrators empty."""
        self._k = 0
        self._prev = self.start
        self._hold_until_ns: Optional[int] = None
        self._surfacing = False
        self._hold_s = 0.0
        self._last_ns: Optional[int] = None
        self._zi = 0.0
        self._ui = 0.0
        self.log = []
        self.sensors = UnderwaterSensors(UnderwaterParams(), np.random.default_rng(self.seed),
                                         self.water_depth_m)
        self.nav = AuvNavigator((self.start[1], self.start[0]))

    @property
    def done(self) -> bool:
        """The last waypoint reached and its hold over (or nothing to do)."""
        return self._k >= len(self.waypoints) and self._hold_until_ns is None \
            and not self._surfacing

    @property
    def item(self) -> int:
        """The mission item steered to (len(mission) when done)."""
        return self.waypoints[self._k].item if self._k < len(self.waypoints) \
            else self.mission_len

    def _stop(self) -> None:
        self.model.command(0.0, [0.0] * len(self.model.auv_type.fins))

    def update(self, t_ns: int) -> None:
        """Steer for the waypoint ahead at its depth: set the thruster and the fins."""
        dt = 0.0 if self._last_ns is None else (t_ns - self._last_ns) / NS_PER_S
        self._last_ns = t_ns
        a = self.model.auv
        fixes = len(self.nav.corrections)
        self.nav.update(self.sensors.sample(t_ns, a.p, a.euler(), a.nu, a.current), dt,
                        t_ns * 1e-9)
        if len(self.nav.corrections) > fixes:
            self.log.append((t_ns * 1e-9, f'GNSS fix after the dive: the dead reckoning was '
                                          f'{self.nav.corrections[-1][1]:.2f} m off'))
        if self._surfacing:
            if self.nav.depth > SURFACE_DEPTH_M:
                return
            self._surfacing = False
            self._hold_until_ns = t_ns + int(round(self._hold_s * NS_PER_S))
            self.log.append((t_ns * 1e-9, f'at the surface: holding {self._hold_s:g} s'))
        if self._hold_until_ns is not None:
            if t_ns < self._hold_until_ns:
                return
            self._hold_until_ns = None
            self.log.append((t_ns * 1e-9, 'hold over: ' + ('plan complete' if self.done
                                                           else 'under way')))
        if self._k >= len(self.waypoints):
            return
        y, x = self.nav.ne                  # north, east [m]: the pilot's estimate
        wp = self.waypoints[self._k]
        last = self._k == len(self.waypoints) - 1
        step = line_of_sight(self._prev, (wp.e, wp.n), wp.radius, x, y, last, LOOKAHEAD_M)
        if step.reached:
            self.log.append((t_ns * 1e-9, f'waypoint {wp.item} reached ({step.reached}) at '
                             f'depth {self.nav.depth:.2f} m'))
            self._prev = (wp.e, wp.n)
            self._k += 1
            if wp.hold_s > 0.0 or self._k >= len(self.waypoints):
                self._stop()
            if wp.hold_s > 0.0 and wp.depth <= 0.0:      # float up, then hold
                self._surfacing, self._hold_s = True, wp.hold_s
                self.log.append((t_ns * 1e-9, 'stopped: floating up to the surface'))
                return
            if wp.hold_s > 0.0:
                self._hold_until_ns = t_ns + int(round(wp.hold_s * NS_PER_S))
                self.log.append((t_ns * 1e-9, f'stopped at {self.nav.depth:.1f} m: holding '
                                 f'{wp.hold_s:g} s'))
            if self.done:
                self.log.append((t_ns * 1e-9, 'plan complete'))
            return
        self._steer(step.course, wp.depth, dt)

    def _steer(self, course: float, depth_d: float, dt: float) -> None:
        t, nav = self.model.auv_type, self.nav
        roll, pitch, psi = nav.euler
        u, q, r = nav.uvw[0], nav.pqr[1], nav.pqr[2]
        ez = nav.depth - depth_d
        if abs(ez) < INTEGRATE_WITHIN_M:        # no wind-up on the way down or up
            self._zi = clamp(self._zi + ez * dt, -50.0, 50.0)
        pitch_d = clamp(K_Z * ez + K_ZI * self._zi, -MAX_PITCH, MAX_PITCH)
        s = clamp((self.cruise_mps / max(0.1, math.hypot(*nav.uvw))) ** 2, 0.25, 4.0)
        elevator = -(K_THETA * (pitch_d - pitch) - K_Q * q) * s
        rate_d = clamp(K_PSI * wrap_pi(course - psi), -MAX_YAW_RATE, MAX_YAW_RATE)
        rudder = -K_R * (rate_d - r) * s
        eu = self.cruise_mps - u
        self._ui = clamp(self._ui + eu * dt, -10.0, 10.0)
        act = self.thrust_ff + K_U * eu + K_UI * self._ui
        fins: List[Optional[float]] = [None] * len(t.fins)
        for k in self._rudders:
            fins[k] = rudder
        for k in self._elevators:
            fins[k] = elevator
        self.model.command(act, fins)
