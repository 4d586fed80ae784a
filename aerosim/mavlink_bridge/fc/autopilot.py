"""The built-in flight controller's logic: estimation, mission execution, control (pure).

Fed with decoded MAVLink messages (HIL_SENSOR, HIL_GPS, HOME_POSITION, mission items) and
answers each HIL_SENSOR with motor throttles. Mission execution (NED around home):
  wait for the mission, GPS, and a settled attitude (fc.preflight: what fails is said, as PX4
  says it, from 3 s of sensor frames on) -> arm -> items in order:
  NAV_TAKEOFF climb above the current position; NAV_WAYPOINT fly straight to it, reached within
  the acceptance radius (param2, at least accept_radius_m) and 1 m vertically, hold param1 s;
  NAV_LAND fly over the point, descend, detect the landing, disarm; NAV_RETURN_TO_LAUNCH climb
  to rtl_alt_m, fly home, land. Progress is reported in `events`.

Precision landing (NAV_LAND param2 1 opportunistic, 2 required: PX4's land_precision): on the
way to the land point, and hovering over it, the FC looks for the landing target
(LANDING_TARGET, mavlink_bridge.fc.precland.TargetTracker). Once it has one it tracks it: the
horizontal setpoint is the target's position, with the target's velocity fed forward (a
moving deck), and it descends while within max(prec_radius_m, prec_radius_frac x height) of
it (else holds its height), at land_speed, land_speed_near below land_slow_alt_m over the
target. The landing is detected as PX4's land detector does, relative to the target: no
movement against it while the thrust needed is well below hover, for 1 s; then disarm.
Target lost: the last track is flown on (its velocity); over prec_commit_alt_m, lost for
prec_lost_s, the FC lands where it is. Required and no target at the land point: it hovers
there (a boat to meet may be late) up to prec_search_s, then lands there (PX4's fallback);
opportunistic: lands there at once.
"""

from dataclasses import dataclass
import math
from typing import Any, List, Optional, Tuple

import numpy as np
import pymap3d

from mavlink_bridge.core.mav import mavlink
from mavlink_bridge.fc.control import Controller, Gains
from mavlink_bridge.fc.estimator import Estimator, hil_frame, take_hil_gps, take_home_position
from mavlink_bridge.fc.precland import TargetTracker
from mavlink_bridge.fc.preflight import NO_MISSION, Preflight

WAIT, TAKEOFF, WAYPOINT, LAND, LANDED, DONE = 'wait', 'takeoff', 'waypoint', 'land', 'landed', \
    'done'
PRECLAND = 'precland'
PRECISION_REQUIRED = 2          # NAV_LAND param2 (PX4's land_precision): 1 opportunistic


@dataclass
class NavConfig:
    """Mission-execution settings."""

    accept_radius_m: float = 1.0
    accept_alt_m: float = 0.5       # m on the estimate: margin for its error (judge: 1 m truth)
    land_speed: float = 0.7         # m/s
    land_speed_near: float = 0.4    # m/s below land_slow_alt_m
    land_slow_alt_m: float = 3.0
    rtl_alt_m: float = 15.0
    settle_s: float = 2.0           # s on the ground with the checks passed before arming
    auto_arm: bool = True           # arm and start once ready; False: wait for start()
    prec_radius_m: float = 0.3      # precision landing: descend within this of the target
    prec_radius_frac: float = 0.1   # ... or within this fraction of the height over it
    prec_commit_alt_m: float = 1.5  # below this over the target, a lost target is flown on
    prec_lost_s: float = 5.0        # lost this long above prec_commit_alt_m: land where it is
    prec_search_s: float = 120.0    # required, no target at the land point: hover this long
    # PX4 v1.16's precision landing, as its stand-in flies it (navigator/precland.cpp, the land
    # detector): no target velocity fed forward (False); within prec_radius_m for prec_dwell_s
    # before the descent starts, then descending whatever the error (HorizontalApproach ->
    # DescendAboveTarget); the landing detected on the ground speed below land_xy_vel_max
    # (LNDMC_XY_VEL_MAX), not on the speed against the target
    prec_velocity_ff: bool = True
    prec_dwell_s: float = 0.0
    land_xy_vel_max: float = math.inf


LANDING_COMMANDS = (mavlink.MAV_CMD_NAV_LAND, mavlink.MAV_CMD_NAV_RETURN_TO_LAUNCH)
FLOWN = (mavlink.MAV_CMD_NAV_TAKEOFF, mavlink.MAV_CMD_NAV_WAYPOINT) + LANDING_COMMANDS


class MulticopterFc:
    """The built-in multirotor FC: estimator + navigator + controller.

    fc.plane.PlaneFc is the fixed wing's; sim_autopilot.core.autopilot.Autopilot the plane's
    AeroSim autopilot that PlaneFc flies with.
    """

    def __init__(self, gains: Optional[Gains] = None, nav: Optional[NavConfig] = None):
        """gains: control gains; nav: mission-execution settings."""
        self.est = Estimator()
        self.ctl = Controller(gains)
        self.nav = nav or NavConfig()
        self.items: List[Any] = []          # MISSION_ITEM_INT messages of the mission
        self.index = -1
        self.phase = WAIT
        self.armed = False
        self.events: List[str] = []
        self.reached: List[Tuple[int, float]] = []        # (item index, sim time s)
        self.sp = np.zeros(3)    # position setpoint NED
        self.yaw_sp = 0.0
        self._hold_until = None
        self._ready_since: Optional[float] = None
        self._landed_since = None
        self._last_us: Optional[int] = None
        self._land_xy = None
        self.tracker = TargetTracker()
        self._precision = 0      # the land item's param2
        self._search_since: Optional[float] = None
        self._close_since: Optional[float] = None       # within prec_radius_m since [s]
        self._descending = False                        # the dwell done (prec_dwell_s > 0)
        self.rejected = 0        # HIL_SENSOR frames refused (non-finite values)
        self._out = [0.0, 0.0, 0.0, 0.0]
        self.preflight = Preflight(say=self.nav.auto_arm)

    # --- inputs --------------------------------------------------------------------------------
    def set_mission(self, items):
        """MISSION_ITEM_INT messages, in order."""
        self.items = list(items)

    def home_position(self, msg):
        """HOME_POSITION: origin of the local frame (before the first GPS fix)."""
        take_home_position(self.est, msg)

    def hil_gps(self, msg):
        """HIL_GPS: position and velocity correction."""
        self.preflight.gps(msg.fix_type)
        take_hil_gps(self.est, msg)

    def landing_target(self, msg):
        """LANDING_TARGET (image tangents, distance [m]) with the estimate of this moment."""
        if self._last_us is None:
            return
        self.tracker.measure(self._last_us * 1e-6, float(msg.angle_x), float(msg.angle_y),
                             float(msg.distance), self.est.position, self.est.R)

    def hil_sensor(self, msg):
        """HIL_SENSOR: propagate, run the mission and the controller; returns 4 throttles.

        A frame with a non-finite value among those used is refused (counted in rejected)
        and the last output held: one NaN in the filters would corrupt them for good.
        """
        fr = hil_frame(msg)
        if fr is None:
            self.rejected += 1
            return list(self._out)
        self.preflight.frame(fr.time_usec * 1e-6, fr)
        self.est.imu(fr.time_usec, fr.acc, fr.gyr, fr.mag)
        if fr.pressure_alt is not None:
            self.est.baro(fr.pressure_alt)
        dt = 0.004 if self._last_us is None else max(1e-4, (msg.time_usec - self._last_us) * 1e-6)
        self._last_us = msg.time_usec
        t = msg.time_usec * 1e-6
        self._navigate(t)
        if not self.armed:
            self._out = [0.0, 0.0, 0.0, 0.0]
            return list(self._out)
        est = self.est
        if self.phase == PRECLAND:
            vel_sp = self._precland_setpoint(t)
        else:
            vel_sp = self.ctl.velocity_setpoint(est.position, self.sp)
        if self.phase == LAND:
            alt = -est.position[2]
            vel_sp[2] = self.nav.land_speed if alt > self.nav.land_slow_alt_m else \
                self.nav.land_speed_near
        out = self.ctl.step(dt, est.velocity, vel_sp, self.yaw_sp, est.R, est.rates)
        self._out = [float(x) for x in out]
        return list(self._out)

    @property
    def ready(self) -> bool:
        """The pre-flight checks (fc.preflight) but the mission's passed for settle_s."""
        return self._ready_since is not None and \
            self._last_us is not None and \
            self._last_us * 1e-6 - self._ready_since >= self.nav.settle_s

    def start(self) -> bool:
        """Arm and start the mission (auto_arm False); False if not ready or nothing to fly."""
        if self.phase != WAIT or not self.items or not self.ready or self._last_us is None:
            return False
        self._arm(self._last_us * 1e-6)
        return True

    def _arm(self, t):
        self.armed = True
        self.preflight.passed()
        self.est.fix_baro_reference()
        self.ctl.reset()
        self.yaw_sp = self.est.yaw
        self._say(t, f'armed; {len(self.items)} mission items')
        self._next_item(t)

    # --- mission execution ---------------------------------------------------------------------
    def _item_ned(self, it):
        h = self.est.home
        n, e, _ = pymap3d.geodetic2ned(it.x * 1e-7, it.y * 1e-7, h[2], *h)
        return np.array([n, e, -float(it.z)])

    def _say(self, t, text):
        self.events.append(f'[t={t:7.2f} s] {text}')

    def _next_item(self, t):
        self.index += 1
        if self.index >= len(self.items):
            self.phase = DONE
            self._say(t, 'mission complete')
            return
        it = self.items[self.index]
        pos = self.est.position
        if it.command == mavlink.MAV_CMD_NAV_TAKEOFF:
            self.phase = TAKEOFF
            self.sp = np.array([pos[0], pos[1], -float(it.z)])
        elif it.command == mavlink.MAV_CMD_NAV_WAYPOINT:
            self.phase = WAYPOINT
            self.sp = self._item_ned(it)
        elif it.command == mavlink.MAV_CMD_NAV_LAND:
            self._precision = int(it.param2) if int(it.param2) in (1, 2) else 0
            self._search_since = None
            self.phase = WAYPOINT if it.x or it.y else LAND
            tgt = self._item_ned(it) if (it.x or it.y) else pos.copy()
            self._land_xy = tgt[0:2]
            self.sp = np.array([tgt[0], tgt[1], pos[2]])
        elif it.command == mavlink.MAV_CMD_NAV_RETURN_TO_LAUNCH:
            self.phase = WAYPOINT
            self._land_xy = np.zeros(2)
            self.sp = np.array([0.0, 0.0, min(pos[2], -self.nav.rtl_alt_m)])
        else:
            self._say(t, f'item {self.index}: command {it.command} not supported, skipped')
            return self._next_item(t)
        self._hold_until = None
        self._say(t, f'item {self.index}: {self._name(it.command)} to N {self.sp[0]:.1f} '
                     f'E {self.sp[1]:.1f} alt {-self.sp[2]:.1f} m')

    @staticmethod
    def _name(cmd):
        e = mavlink.enums['MAV_CMD'].get(cmd)
        return e.name.replace('MAV_CMD_NAV_', '') if e else str(cmd)

    def _precland_setpoint(self, t):
        """Velocity setpoint over the target: its position and velocity, the descent."""
        est, nav, tr = self.est, self.nav, self.tracker
        pos = est.position
        tgt, vt = tr.position(t), tr.velocity()
        sp = np.array([tgt[0], tgt[1], pos[2]])
        ff = np.array([vt[0], vt[1], 0.0]) if nav.prec_velocity_ff else None
        vel_sp = self.ctl.velocity_setpoint(pos, sp, ff)
        h = self._height_over_target()
        err = math.hypot(tgt[0] - pos[0], tgt[1] - pos[1])
        close = err <= max(nav.prec_radius_m, nav.prec_radius_frac * h)
        if nav.prec_dwell_s > 0.0:          # PX4: the dwell, then descend for good
            if not close:
                self._close_since = None
            elif self._close_since is None:
                self._close_since = t
            if self._close_since is not None and t - self._close_since >= nav.prec_dwell_s:
                self._descending = True
            go = self._descending
        else:
            go = close or h < nav.prec_commit_alt_m
        vel_sp[2] = (nav.land_speed if h > nav.land_slow_alt_m else nav.land_speed_near) \
            if go else 0.0
        return vel_sp

    def _height_over_target(self) -> float:
        tr = self.tracker.track
        return 0.0 if tr is None else float(tr.down - self.est.position[2])

    def _precland(self, t):
        """The precision landing's progress: target lost, landed on it."""
        est, nav, tr = self.est, self.nav, self.tracker
        h = self._height_over_target()
        if not tr.valid(t) and h > nav.prec_commit_alt_m and \
                t - (tr.track.t if tr.track else t) > nav.prec_lost_s:
            self._say(t, f'item {self.index}: landing target lost for {nav.prec_lost_s:g} s at '
                         f'{h:.1f} m over it: landing here')
            self._land_xy = est.position[0:2].copy()
            self.phase = LAND
            return
        vt = tr.velocity()
        if nav.land_xy_vel_max < math.inf:      # PX4's land detector: ground speed
            v = est.velocity
            still = math.hypot(v[0], v[1]) < nav.land_xy_vel_max and abs(v[2]) < 0.3
        else:                                   # relative to the target (a moving deck)
            rel = est.velocity - np.array([vt[0], vt[1], 0.0])
            still = float(np.linalg.norm(rel)) < 0.3
        p = tr.position(t)
        self._land_detector(t, still and h < nav.prec_commit_alt_m,
                            lambda: f'on the target (N {p[0]:.2f} E {p[1]:.2f}, moving '
                                    f'{np.linalg.norm(vt):.1f} m/s)')

    def _land_detector(self, t, still: bool, where):
        """PX4's land detector: landed after 1 s still with the thrust well below hover.

        The ground carries the weight: disarm, the item reached, the next. where(): where it
        landed, for the log.
        """
        if not (still and self.ctl.thrust < 0.8 * self.ctl.g.hover_thrust):
            self._landed_since = None
        elif self._landed_since is None:
            self._landed_since = t
        elif t - self._landed_since > 1.0:
            self.armed = False
            self.phase = LANDED
            self.reached.append((self.index, t))
            self._say(t, f'item {self.index}: landed {where()}; disarmed')
            self._next_item(t)

    def _navigate(self, t):
        est, nav = self.est, self.nav
        if self.phase == WAIT:
            failing = self.preflight.update(t, est.attitude_ok,
                                            any(it.command in FLOWN for it in self.items))
            ok = not [f for f in failing if f != NO_MISSION]     # the mission: below
            if not ok:
                self._ready_since = None
                return
            if self._ready_since is None:
                self._ready_since = t
            if nav.auto_arm and not failing and t - self._ready_since >= nav.settle_s:
                self._arm(t)
            return
        if self.phase in (DONE, LANDED):
            return
        if self.phase == PRECLAND:
            return self._precland(t)
        if self._precision and self.items[self.index].command == mavlink.MAV_CMD_NAV_LAND \
                and self.tracker.valid(t):
            self.phase = PRECLAND
            self._landed_since = self._close_since = None
            self._descending = False
            p = self.tracker.position(t)
            self._say(t, f'item {self.index}: landing target in sight at N {p[0]:.1f} '
                         f'E {p[1]:.1f}, moving {np.linalg.norm(self.tracker.velocity()):.1f} '
                         'm/s: precision landing')
            return
        pos = est.position
        err = self.sp - pos
        if self.phase == LAND:
            self.sp[0:2] = self._land_xy
            # no movement; no altitude test, an estimate may be off
            self._land_detector(t, float(np.linalg.norm(est.velocity)) < 0.2,
                                lambda: f'at N {pos[0]:.2f} E {pos[1]:.2f}')
            return
        it = self.items[self.index]
        radius = max(nav.accept_radius_m, float(it.param2) if self.phase == WAYPOINT else 0.0)
        close = (math.hypot(err[0], err[1]) <= radius and abs(err[2]) <= nav.accept_alt_m)
        if self.phase == TAKEOFF:
            close = abs(err[2]) <= nav.accept_alt_m * 0.5
        if not close:
            return
        if it.command == mavlink.MAV_CMD_NAV_LAND and self._precision == PRECISION_REQUIRED:
            if self._search_since is None:
                self._search_since = t
                self._say(t, f'item {self.index}: over the land point, no landing target: '
                             'hovering, looking for it')
            if t - self._search_since < nav.prec_search_s:
                return
            self._say(t, f'item {self.index}: no landing target for {nav.prec_search_s:g} s: '
                         'landing here')
        if it.command in LANDING_COMMANDS:   # over the landing point: descend
            self.phase = LAND
            self._landed_since = None
            self._say(t, f'item {self.index}: over the landing point, descending')
            return
        hold = float(it.param1) if self.phase == WAYPOINT else 0.0
        if self._hold_until is None:
            self._hold_until = t + hold
        if t >= self._hold_until:
            self.reached.append((self.index, t))
            self._say(t, f'item {self.index}: reached ({math.hypot(err[0], err[1]):.2f} m)')
            self._next_item(t)
