"""The built-in flight controller's logic: estimation, mission execution, control (pure).

Fed with decoded MAVLink messages (HIL_SENSOR, HIL_GPS, HOME_POSITION, mission items) and
answers each HIL_SENSOR with motor throttles. Mission execution (NED around home):
  wait for the mission, GPS, and a settled attitude -> arm -> items in order:
  NAV_TAKEOFF climb above the current position; NAV_WAYPOINT fly straight to it, reached within
  the acceptance radius (param2, at least accept_radius_m) and 1 m vertically, hold param1 s;
  NAV_LAND fly over the point, descend, detect the landing, disarm; NAV_RETURN_TO_LAUNCH climb
  to rtl_alt_m, fly home, land. Progress is reported in `events`.
"""

from dataclasses import dataclass
import math
from typing import Any, List, Optional, Tuple

import numpy as np
import pymap3d

from mavlink_bridge.core.mav import mavlink
from mavlink_bridge.fc.control import Controller, Gains
from mavlink_bridge.fc.estimator import Estimator, hil_frame, take_hil_gps, take_home_position

WAIT, TAKEOFF, WAYPOINT, LAND, LANDED, DONE = 'wait', 'takeoff', 'waypoint', 'land', 'landed', \
    'done'


@dataclass
class NavConfig:
    """Mission-execution settings."""

    accept_radius_m: float = 1.0
    accept_alt_m: float = 0.5       # m on the estimate: margin for its error (judge: 1 m truth)
    land_speed: float = 0.7         # m/s
    land_speed_near: float = 0.4    # m/s below land_slow_alt_m
    land_slow_alt_m: float = 3.0
    rtl_alt_m: float = 15.0
    settle_s: float = 2.0           # s on the ground with GPS and attitude before arming
    auto_arm: bool = True           # arm and start once ready; False: wait for start()


LANDING_COMMANDS = (mavlink.MAV_CMD_NAV_LAND, mavlink.MAV_CMD_NAV_RETURN_TO_LAUNCH)


class Autopilot:
    """Estimator + navigator + controller."""

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
        self.rejected = 0        # HIL_SENSOR frames refused (non-finite values)
        self._out = [0.0, 0.0, 0.0, 0.0]

    # --- inputs --------------------------------------------------------------------------------
    def set_mission(self, items):
        """MISSION_ITEM_INT messages, in order."""
        self.items = list(items)

    def home_position(self, msg):
        """HOME_POSITION: origin of the local frame (before the first GPS fix)."""
        take_home_position(self.est, msg)

    def hil_gps(self, msg):
        """HIL_GPS: position and velocity correction."""
        take_hil_gps(self.est, msg)

    def hil_sensor(self, msg):
        """HIL_SENSOR: propagate, run the mission and the controller; returns 4 throttles.

        A frame with a non-finite value among those used is refused (counted in rejected)
        and the last output held: one NaN in the filters would corrupt them for good.
        """
        fr = hil_frame(msg)
        if fr is None:
            self.rejected += 1
            return list(self._out)
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
        """GPS and attitude good for settle_s: what a pre-flight check would ask."""
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

    def _navigate(self, t):
        est, nav = self.est, self.nav
        if self.phase == WAIT:
            ok = est.gps_ok and est.attitude_ok
            if not ok:
                self._ready_since = None
                return
            if self._ready_since is None:
                self._ready_since = t
            if nav.auto_arm and self.items and t - self._ready_since >= nav.settle_s:
                self._arm(t)
            return
        if self.phase in (DONE, LANDED):
            return
        pos = est.position
        err = self.sp - pos
        if self.phase == LAND:
            self.sp[0:2] = self._land_xy
            speed = float(np.linalg.norm(est.velocity))
            # PX4's land detector: no movement while the thrust needed is well below hover
            # (the ground carries the weight); no altitude test, an estimate may be off.
            if speed < 0.2 and self.ctl.thrust < 0.8 * self.ctl.g.hover_thrust:
                if self._landed_since is None:
                    self._landed_since = t
                elif t - self._landed_since > 1.0:
                    self.armed = False
                    self.phase = LANDED
                    self.reached.append((self.index, t))
                    self._say(t, f'item {self.index}: landed at N {pos[0]:.2f} E {pos[1]:.2f}; '
                                 'disarmed')
                    self._next_item(t)
            else:
                self._landed_since = None
            return
        it = self.items[self.index]
        radius = max(nav.accept_radius_m, float(it.param2) if self.phase == WAYPOINT else 0.0)
        close = (math.hypot(err[0], err[1]) <= radius and abs(err[2]) <= nav.accept_alt_m)
        if self.phase == TAKEOFF:
            close = abs(err[2]) <= nav.accept_alt_m * 0.5
        if not close:
            return
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
