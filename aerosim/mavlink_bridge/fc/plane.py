"""The built-in flight controller of a fixed-wing aircraft (pure, no rclpy).

The same MAVLink face as the multirotor's (fc.autopilot.MulticopterFc): it downloads the mission,
estimates the state from HIL_SENSOR / HIL_GPS and answers each HIL_SENSOR with the 16
HIL_ACTUATOR_CONTROLS of a PX4 plane (mixer.fixed_wing_servos: airframe 1030's outputs). Inside:
- estimation: fc.estimator (Mahony attitude, Kalman position/velocity), with the flight
  path's own acceleration taken out of the attitude filter's gravity reference: the GNSS
  velocity's derivative (low-passed, ACCEL_TAU_S), rotated into the body (ArduPilot's DCM
  does the same). Uncorrected, the takeoff run's acceleration reads as nose up and a
  coordinated turn's centripetal pull as wings level. Airspeed: the pitot's differential
  pressure
  (HIL_SENSOR diff_pressure, hPa: calibrated airspeed sqrt(2 qc / rho0));
- guidance and control: sim_autopilot.core (AeroSim's autopilot: takeoff roll, rotation,
  climb, legs with cross-track correction, holds, approach, flare, rollout), flying the
  mission turned into a flight plan (flight_plan.from_mission: alt above home, waypoints
  within max(param2, 150 m) or abeam, land). In the rollout, where the autopilot brakes, the
  FC disarms (PX4's land detector does so after a touchdown): the bridge's fixed-wing mixer
  sets the wheel brakes of a disarmed aircraft;
- arming: fc.preflight's checks (the airspeed among them) passed for settle_s and a mission;
  what fails is said as PX4 says it, from 3 s of sensor frames on.
"""

import math
from typing import Any, List, Optional

import numpy as np

from mavlink_bridge.core.mav import mavlink
from mavlink_bridge.core.mixer import fixed_wing_servos
from mavlink_bridge.fc.estimator import Estimator, hil_frame, take_hil_gps, take_home_position
from mavlink_bridge.fc.preflight import NO_MISSION, Preflight
from sim_autopilot.core import flight_plan as fp
from sim_autopilot.core.autopilot import Autopilot, FlightState, Limits
from sim_core.geodesy import GeoOrigin
from sim_core.scenario import MissionItem
from sim_core.units import KNOT_MPS

WAIT, FLYING, DONE = 'wait', 'flying', 'done'
RHO0 = 1.225                    # sea-level standard air density [kg/m^3]
ACCEL_TAU_S = 0.5               # low-pass time constant of the GNSS acceleration [s]
RTL = mavlink.MAV_CMD_NAV_RETURN_TO_LAUNCH           # no position: home
COMMANDS = {mavlink.MAV_CMD_NAV_TAKEOFF: 'takeoff', mavlink.MAV_CMD_NAV_WAYPOINT: 'waypoint',
            mavlink.MAV_CMD_NAV_LAND: 'land', mavlink.MAV_CMD_NAV_RETURN_TO_LAUNCH: 'rtl'}


def calibrated_airspeed_kts(diff_pressure_pa: float) -> float:
    """Calibrated airspeed [kt] of a pitot differential pressure [Pa] (incompressible)."""
    return math.sqrt(2.0 * max(0.0, diff_pressure_pa) / RHO0) / KNOT_MPS


class PlaneFc:
    """Estimator + AeroSim's autopilot behind the fixed-wing MAVLink HIL interface."""

    def __init__(self, limits: Optional[Limits] = None, settle_s: float = 2.0,
                 auto_arm: bool = True):
        """The FC with its parameters.

        limits: the aircraft's speeds and bank; settle_s: ready this long before arming;
        auto_arm: arm once ready (False: wait for start(), as PX4 waits for its commander).
        """
        self.est = Estimator()
        self.auto_arm = auto_arm
        self.limits = limits or Limits()
        self.settle_s = settle_s
        self.ap: Optional[Autopilot] = None
        self.items: List[Any] = []
        self.phase = WAIT
        self.armed = False
        self.events: List[str] = []
        self.rejected = 0
        self.airspeed_kts = 0.0
        self._ready_since: Optional[float] = None
        self._last_us: Optional[int] = None
        self._origin: Optional[GeoOrigin] = None
        self._out = fixed_wing_servos(0.0, 0.0, 0.0, 0.0, 0.0)
        self._gps_v = None              # (time [s], NED velocity) of the last fix
        self.accel_ned = np.zeros(3)    # the flight path's acceleration (GNSS, low-passed)
        self.preflight = Preflight(airspeed=True, say=auto_arm)

    # --- inputs -----------------------------------------------------------------------------
    def set_mission(self, items):
        """MISSION_ITEM_INT messages, in order."""
        self.items = list(items)

    def home_position(self, msg):
        """HOME_POSITION: origin of the local frame (the field)."""
        take_home_position(self.est, msg)

    def hil_gps(self, msg):
        """HIL_GPS: position and velocity correction; the flight path's acceleration."""
        self.preflight.gps(msg.fix_type)
        if not take_hil_gps(self.est, msg):
            return
        t, v = msg.time_usec * 1e-6, np.array([msg.vn, msg.ve, msg.vd]) * 0.01
        if self._gps_v is not None and t > self._gps_v[0]:
            dt = t - self._gps_v[0]
            a = min(1.0, dt / ACCEL_TAU_S)
            self.accel_ned += a * ((v - self._gps_v[1]) / dt - self.accel_ned)
        self._gps_v = (t, v)

    @property
    def ready(self) -> bool:
        """The pre-flight checks (fc.preflight) but the mission's passed for settle_s."""
        return self._ready_since is not None and self._last_us is not None and \
            self._last_us * 1e-6 - self._ready_since >= self.settle_s

    def hil_sensor(self, msg) -> list:
        """HIL_SENSOR: estimate, fly; returns the 16 controls (a non-finite frame: refused)."""
        fr = hil_frame(msg, pitot=True)
        if fr is None:
            self.rejected += 1
            return list(self._out)
        est = self.est
        self.preflight.frame(fr.time_usec * 1e-6, fr)
        # the flight path's acceleration (body FRD) out of the gravity reference
        est.imu(fr.time_usec, fr.acc, fr.gyr, fr.mag,
                gravity_frd=np.asarray(fr.acc, dtype=float) - est.R.T @ self.accel_ned)
        if fr.pressure_alt is not None:
            est.baro(fr.pressure_alt)
        if fr.diff_pressure_hpa is not None:
            self.airspeed_kts = calibrated_airspeed_kts(fr.diff_pressure_hpa * 100.0)
        dt = 0.004 if self._last_us is None else max(1e-4, (msg.time_usec - self._last_us) * 1e-6)
        self._last_us = msg.time_usec
        t = msg.time_usec * 1e-6
        if self.phase == WAIT:
            self._wait(t)
        if not self.armed or self.ap is None:
            self._out = fixed_wing_servos(0.0, 0.0, 0.0, 0.0, 0.0)
            return list(self._out)
        o = self.ap.update(self.state(t), dt)
        if o.wheel_brake > 0.0:
            # landed and slow: disarmed, as PX4's land detector disarms after the touchdown;
            # the mixer sets the wheel brakes of a disarmed aircraft
            self.armed = False
            self.events.append(f'[t={t:7.2f} s] landed: disarmed at '
                               f'{self.airspeed_kts:.0f} kt (wheel brakes)')
        for tt, text in self.ap.log:
            self.events.append(f'[t={tt:7.2f} s] {text}')
        self.ap.log.clear()
        if self.ap.mode == 'done' and self.phase != DONE:
            self.phase = DONE
            self.events.append(f'[t={t:7.2f} s] mission complete')
        self._out = fixed_wing_servos(o.power, o.roll, o.pitch, o.yaw, o.flap, o.wheel_steer)
        return list(self._out)

    def state(self, t: float) -> FlightState:
        """The autopilot's FlightState from the estimate."""
        est = self.est
        n, e, d = (float(x) for x in est.position)
        vn, ve, vd = (float(x) for x in est.velocity)
        assert self._origin is not None
        lat, lon, _ = self._origin.enu_to_geodetic(e, n, -d)
        roll, pitch, yaw = est.euler
        p, q, r = (float(x) for x in est.rates)
        return FlightState(t, lat, lon, self._origin.alt_m - d, -d, self.airspeed_kts, -vd,
                           roll, pitch, math.degrees(yaw) % 360.0,
                           math.degrees(math.atan2(ve, vn)) % 360.0, math.hypot(vn, ve),
                           p, q, r)

    def _wait(self, t: float) -> None:
        est = self.est
        failing = self.preflight.update(t, est.attitude_ok,
                                        any(it.command in COMMANDS for it in self.items))
        if [f for f in failing if f != NO_MISSION] or est.home is None:
            self._ready_since = None
            return
        if self._ready_since is None:
            self._ready_since = t
        if self.ready and self.auto_arm and not failing:
            self._arm(t)

    def start(self) -> bool:
        """Arm and fly the mission now (auto_arm False); False if not ready or no mission."""
        if self.phase != WAIT or not self.ready or not self.items or self._last_us is None:
            return False
        self._arm(self._last_us * 1e-6)
        return True

    def _arm(self, t: float) -> None:
        est = self.est
        assert est.home is not None         # _wait() checked
        lat, lon, alt = (float(x) for x in est.home)
        self._origin = GeoOrigin(lat, lon, alt)
        self.preflight.passed()
        mission = [MissionItem(COMMANDS[it.command], lat if it.command == RTL else it.x * 1e-7,
                               lon if it.command == RTL else it.y * 1e-7, float(it.z),
                               float(it.param1), max(0.1, float(it.param2)))
                   for it in self.items if it.command in COMMANDS]
        skipped = len(self.items) - len(mission)
        plan = fp.from_mission(mission, alt, math.degrees(est.yaw) % 360.0,
                               self.limits.rotate_kts)
        self.ap = Autopilot(self.limits, alt)
        self.ap.load_plan(plan)
        est.fix_baro_reference()
        self.ap.run(self.state(t))
        self.armed = True
        self.phase = FLYING
        self.events.append(f'[t={t:7.2f} s] armed; {len(plan)} plan steps from '
                           f'{len(self.items)} mission items'
                           + (f' ({skipped} of unsupported commands skipped)' if skipped else '')
                           + f'; runway heading {math.degrees(est.yaw) % 360.0:.0f} deg')
