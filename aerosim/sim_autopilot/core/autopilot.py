"""Fixed-wing autopilot of AeroSim's AutopilotCommand (pure, no rclpy).

Takes the aircraft's state (``FlightState``: what VehicleState and PrimaryFlightDisplayData
carry) each step and returns AeroSim's FlightControlCommand values (``plane.FlightCommand``
fields: power, roll/pitch/yaw -1..1, flaps, steering, brakes).

Modes, as AutopilotCommand selects them (seed 002):
- flight plan (``use_manual_setpoints`` false): RUN flies the plan's steps in order (takeoff,
  go_to_waypoint, land) until each step's completion criterion holds; PAUSE holds the
  heading, altitude and speed of the moment; STOP ends the plan (holds, as PAUSE) and the
  next RUN starts it from its first step;
- manual setpoints: ``altitude_setpoint_ft`` always; ``airspeed_hold`` with
  ``airspeed_setpoint_kts``; ``heading_hold`` with ``heading_setpoint_deg`` or
  ``heading_set_by_waypoint`` (toward target_wp_*); ``attitude_hold`` holds the roll and
  pitch of the moment it is set (altitude and speed holds off).

The loops (every step):
- lateral: the leg's course corrected by the cross-track error (intercept up to 45 deg), or
  the heading setpoint -> bank angle (``max_bank_deg``) -> aileron with roll-rate damping;
- vertical: within ALT_CAPTURE_M of the target altitude, an altitude hold (climb rate from
  the altitude error, pitch from the climb rate error) with the throttle holding airspeed;
  farther, a flight level change (climb: full throttle, pitch holds the climb speed; descent:
  reduced throttle, pitch holds the airspeed);
- on the runway: full power, nose wheel and rudder hold the runway heading, rotation at the
  takeoff speed to ROTATE_PITCH_DEG; airborne above CLIMB_OUT_AGL_M the climb mode takes over;
- land: the approach line from the previous step's point to the landing point, on a glide
  path from the previous step's altitude to the runway at the point (GLIDE_SLOPE_DEG if it has
  none, at most GLIDE_SLOPE_MAX_DEG) at the approach speed with flaps; below FLARE_AGL_M the
  flare: idle power, a sink rate falling with the height to FLARE_TD_SINK_MPS at touchdown,
  wings level on the line; on the wheels the rollout: idle, nose wheel and rudder on the line,
  brakes below BRAKE_BELOW_KTS, until at rest. Heights are above the runway: the height the
  aircraft stood at before its takeoff run (its gear), 0 for an airborne start.
"""

import math
from typing import List, Optional, Tuple

from sim_autopilot.core.flight_io import (
    FlightState,
    Limits,
    Output,
    Setpoints,
    Status,
    check_setpoints,
    flight_state,
)
from sim_core.geodesy import bearing_deg, course_deviation_m, distance_m
from sim_core.units import FT_M, clamp, wrap_180

# The interface types live in flight_io; callers import them from here too.
__all__ = ['Autopilot', 'FlightState', 'Limits', 'Output', 'Setpoints', 'Status',
           'check_setpoints', 'flight_state']

ALT_CAPTURE_M = 25.0            # altitude error below which the altitude hold flies [m]
ROTATE_PITCH_DEG = 8.0          # pitch at rotation [deg]
CLIMB_OUT_AGL_M = 15.0          # height above which the takeoff climbs as a level change [m]
INTERCEPT_MAX_DEG = 45.0        # largest intercept angle onto a leg [deg]
INTERCEPT_DEG_PER_M = 0.15      # intercept angle per metre of cross-track error [deg/m]
VS_GAIN = 0.2                   # climb rate per metre of altitude error [1/s]
VS_MAX_MPS = 3.5                # climb/descent rate limit of the altitude hold [m/s]
PITCH_LIMITS_DEG = (-12.0, 15.0)
DESCENT_THROTTLE = 0.25
FLARE_AGL_M = 5.0               # land: height above the runway where the flare begins [m]
FLARE_TD_SINK_MPS = 0.3         # land: the flare's sink rate at touchdown [m/s]
GLIDE_SLOPE_DEG = 3.0           # land: approach path angle without an approach fix [deg]
GLIDE_SLOPE_MAX_DEG = 6.0       # land: steepest approach path flown [deg]
TOUCHDOWN_M = 0.3               # land: on the wheels below this height [m]
BRAKE_BELOW_KTS = 50.0          # land: wheel brakes in the rollout below this airspeed [kt]


class _Pi:
    """A PI controller with output limits and conditional integration (anti-windup)."""

    def __init__(self, kp, ki, lo, hi):
        self.kp, self.ki, self.lo, self.hi = kp, ki, lo, hi
        self.i = 0.0

    def reset(self, i=0.0):
        self.i = i

    def __call__(self, err, dt, ff=0.0):
        u = ff + self.kp * err + self.i
        d = self.ki * err
        if self.lo < u < self.hi or (u >= self.hi and d < 0.0) or (u <= self.lo and d > 0.0):
            self.i += d * dt
        return clamp(ff + self.kp * err + self.i, self.lo, self.hi)


class Autopilot:
    """The holds and the flight plan sequencer of a fixed-wing aircraft."""

    def __init__(self, limits: Optional[Limits] = None, field_alt_m: float = 0.0):
        """Fly an aircraft of these limits (None: Limits' defaults) from a runway at field_alt_m.

        field_alt_m: the runway's altitude MSL [m].
        """
        self.lim = Limits() if limits is None else limits
        self.field_alt_m = field_alt_m
        self.plan: Tuple = ()
        self.step = -1
        self.mode = 'stopped'
        self.setpoints = Setpoints()
        self.log: List[Tuple[float, str]] = []      # (t, text) lines for the node to log
        self._hold: Optional[Tuple[float, float, float]] = None   # heading, alt ft, kts
        self._att: Optional[Tuple[float, float]] = None           # roll, pitch [rad]
        self._prev_wp: Optional[Tuple[float, float]] = None
        self._prev_alt_m = math.nan     # the previous step's altitude MSL [m]
        self._ground_agl = 0.0          # agl_m standing on the runway (the gear's height)
        self._phase = 'idle'
        self._flc: Optional[str] = None
        self._airborne = False
        self._legs_done: List[Tuple[int, float, str]] = []       # (step, t, how)
        # inner loops: roll -> aileron, pitch -> elevator; outer: speed, climb rate
        self._pitch = _Pi(2.0, 0.6, -1.0, 1.0)
        self._roll = _Pi(1.2, 0.05, -1.0, 1.0)
        self._thr = _Pi(0.05, 0.02, 0.0, 1.0)
        self._vs = _Pi(0.035, 0.006, math.radians(PITCH_LIMITS_DEG[0]),
                       math.radians(PITCH_LIMITS_DEG[1]))
        self._spd_pitch = _Pi(-0.01, -0.002, math.radians(-5.0), math.radians(PITCH_LIMITS_DEG[1]))
        self._flare = _Pi(0.12, 0.1, math.radians(-5.0), math.radians(12.0))
        self._status = self._make_status(None)

    # --- commands -----------------------------------------------------------------------
    def load_plan(self, plan) -> None:
        """A new plan (parsed): stopped at its first step until RUN."""
        self.plan = tuple(plan)
        self.step = -1
        self.mode = 'stopped'
        self._prev_wp = None
        self._legs_done = []

    def run(self, s: Optional[FlightState] = None) -> None:
        """RUN: fly the plan (from its first step after STOP or a new plan)."""
        if not self.plan:
            return
        if self.step < 0 or self.mode == 'done':
            self.step = 0
            self._legs_done = []
            self._prev_wp = (s.lat_deg, s.lon_deg) if s else None
        self.mode = 'plan'
        self.setpoints = self.setpoints._replace(use_manual_setpoints=False)

    def pause(self) -> None:
        """PAUSE: hold the heading, altitude and speed of the next step."""
        if self.mode == 'plan':
            self.mode = 'paused'
            self._hold = None

    def stop(self) -> None:
        """STOP: end the plan (hold as PAUSE); the next RUN starts it over."""
        if self.mode in ('plan', 'paused', 'done'):
            self.mode = 'stopped'
            self.step = -1
            self._hold = None

    def set_manual(self, sp: Setpoints) -> None:
        """Fly AutopilotCommand's manual setpoints (checked); the plan keeps its place."""
        if sp.attitude_hold and not self.setpoints.attitude_hold:
            self._att = None
        self.setpoints = sp
        self.mode = 'attitude' if sp.attitude_hold else 'manual'

    # --- the loop -----------------------------------------------------------------------
    def update(self, s: FlightState, dt: float) -> Output:
        """One step: the FlightControlCommand for state s, dt [s] after the last."""
        if s.agl_m > CLIMB_OUT_AGL_M and s.airspeed_kts > self.lim.rotate_kts:
            self._airborne = True
        elif not self._airborne and s.agl_m < CLIMB_OUT_AGL_M and s.airspeed_kts < 20.0:
            self._ground_agl = s.agl_m          # standing (or rolling slowly) on the runway
        if self.mode == 'plan':
            out = self._fly_plan(s, dt)
        elif self.mode in ('manual', 'attitude'):
            out = self._fly_manual(s, dt)
        else:
            out = self._fly_hold(s, dt)
        return out

    def status(self) -> Status:
        """What the last update flew."""
        return self._status

    def legs_done(self):
        """(step, sim time [s], how) of each completed plan step."""
        return list(self._legs_done)

    def _make_status(self, target, alt_ft=math.nan, kts=math.nan, hdg=math.nan):
        return Status(self.mode, self.step, self._phase, alt_ft, kts, hdg, target is not None,
                      target[0] if target else math.nan, target[1] if target else math.nan)

    def _say(self, t, text):
        self.log.append((t, text))

    # --- plan -----------------------------------------------------------------------------
    def _fly_plan(self, s: FlightState, dt: float) -> Output:
        st = self.plan[self.step]
        if self._prev_wp is None:
            self._prev_wp = (s.lat_deg, s.lon_deg)
        if st.command == 'takeoff':
            out = self._takeoff(s, dt, st)
            values = {'altitude_ft': s.alt_msl_m / FT_M, 'airspeed_kts': s.airspeed_kts}
            how = 'altitude reached'
        elif st.command == 'go_to_waypoint':
            out, values, how = self._waypoint(s, dt, st)
        else:
            out, values, how = self._land(s, dt, st)
        landing = st.command == 'land'
        if st.done(values) and not (landing and self._phase != 'at rest'):
            self._legs_done.append((self.step, s.t, how))
            self._say(s.t, f'step {self.step} ({st.command}) complete: {how}')
            if st.has_waypoint:
                self._prev_wp = (st.lat_deg, st.lon_deg)
            self._prev_alt_m = st.altitude_ft * FT_M
            self.step += 1
            if self.step >= len(self.plan):
                self.mode = 'done'
                self._hold = None
                self._say(s.t, 'flight plan complete')
        return out

    def _takeoff(self, s, dt, st) -> Output:
        hdg = s.heading_deg if math.isnan(st.heading_deg) else st.heading_deg
        spd = self.lim.climb_kts if math.isnan(st.airspeed_kts) else st.airspeed_kts
        if not self._airborne:
            err = wrap_180(hdg - s.heading_deg)
            steer = clamp(0.08 * err - 0.5 * s.r, -1.0, 1.0)
            if s.airspeed_kts < st.takeoff_speed_kts:
                self._phase = 'takeoff roll'
                pitch_sp = 0.0
            else:
                self._phase = 'rotate'
                pitch_sp = math.radians(ROTATE_PITCH_DEG)
            self._vs.reset(pitch_sp)
            self._spd_pitch.reset(pitch_sp)
            self._status = self._make_status(None, st.altitude_ft, spd, hdg)
            return Output(st.throttle, self._roll_loop(s, 0.0, dt),
                          self._pitch_loop(s, pitch_sp, dt), steer, 0.0, steer, 0.0)
        self._phase = 'climb'
        out = self._fly(s, dt, hdg, st.altitude_ft * FT_M, spd, track=False, thr_max=st.throttle)
        self._status = self._make_status(None, st.altitude_ft, spd, hdg)
        return out

    def _waypoint(self, s, dt, st):
        spd = self.lim.cruise_kts if math.isnan(st.airspeed_kts) else st.airspeed_kts
        course, dist, along = self._leg(s, st)
        out = self._fly(s, dt, course, st.altitude_ft * FT_M, spd, track=True)
        self._status = self._make_status((st.lat_deg, st.lon_deg), st.altitude_ft, spd, course)
        values = {'distance_ft': dist / FT_M, 'altitude_ft': s.alt_msl_m / FT_M,
                  'airspeed_kts': s.airspeed_kts}
        if along <= 0.0 and not st.done(values):
            # passed abeam (the turn circle holds it out of reach): the leg is flown
            values['distance_ft'] = -1.0 if st.criterion[1] in ('<', '<=') else 1e9
            return out, values, f'passed abeam at {dist:.0f} m'
        return out, values, f'within {dist:.0f} m'

    def _leg(self, s, st):
        """(course to fly [deg], distance to the waypoint [m], distance left along the leg)."""
        lat0, lon0 = self._prev_wp
        dist = distance_m(s.lat_deg, s.lon_deg, st.lat_deg, st.lon_deg)
        to_wp = bearing_deg(s.lat_deg, s.lon_deg, st.lat_deg, st.lon_deg)
        leg_len = distance_m(lat0, lon0, st.lat_deg, st.lon_deg)
        if leg_len < 50.0:
            return to_wp, dist, dist
        leg = bearing_deg(lat0, lon0, st.lat_deg, st.lon_deg)
        xt = course_deviation_m(lat0, lon0, st.lat_deg, st.lon_deg, s.lat_deg, s.lon_deg)
        along = dist * math.cos(math.radians(to_wp - leg))
        if along < 300.0:       # close in: straight at it (a leg's last metres)
            course = to_wp
        else:
            course = leg - clamp(INTERCEPT_DEG_PER_M * xt, -INTERCEPT_MAX_DEG,
                                  INTERCEPT_MAX_DEG)
        return course % 360.0, dist, along

    def _land(self, s, dt, st):
        """Approach on the glide path, flare, touchdown and rollout to rest (module docstring)."""
        lat, lon = ((st.lat_deg, st.lon_deg) if st.has_waypoint else self._prev_wp)
        field = self.field_alt_m
        lat0, lon0 = self._prev_wp
        dist = distance_m(s.lat_deg, s.lon_deg, lat, lon)
        values = {'altitude_ft': s.alt_msl_m / FT_M, 'distance_ft': dist / FT_M,
                  'airspeed_kts': s.airspeed_kts}
        leg_len = distance_m(lat0, lon0, lat, lon)
        if leg_len > 50.0:
            course = bearing_deg(lat0, lon0, lat, lon)
            xt = course_deviation_m(lat0, lon0, lat, lon, s.lat_deg, s.lon_deg)
            to_go = leg_len - distance_m(lat0, lon0, s.lat_deg, s.lon_deg) * math.cos(
                math.radians(bearing_deg(lat0, lon0, s.lat_deg, s.lon_deg) - course))
        else:                   # no approach leg: straight at the point
            course, xt, to_go = bearing_deg(s.lat_deg, s.lon_deg, lat, lon), 0.0, dist
        slope = math.radians(GLIDE_SLOPE_DEG)
        if math.isfinite(self._prev_alt_m) and leg_len > 50.0:
            slope = clamp(math.atan2(self._prev_alt_m - field, leg_len), math.radians(1.0),
                           math.radians(GLIDE_SLOPE_MAX_DEG))
        h = s.agl_m - self._ground_agl            # height of the gear above the runway
        line = (course - clamp(INTERCEPT_DEG_PER_M * xt, -INTERCEPT_MAX_DEG,
                                INTERCEPT_MAX_DEG)) % 360.0
        if h < TOUCHDOWN_M and self._phase in ('flare', 'rollout', 'at rest'):
            self._airborne = False
            self._phase = 'at rest' if s.ground_speed_mps < 1.0 else 'rollout'
            err = wrap_180(line - s.heading_deg)
            steer = clamp(0.08 * err - 0.5 * s.r, -1.0, 1.0)
            brake = 1.0 if s.airspeed_kts < BRAKE_BELOW_KTS else 0.0
            self._status = self._make_status((lat, lon), field / FT_M, 0.0, course)
            return Output(0.0, self._roll_loop(s, 0.0, dt), self._pitch_loop(s, 0.0, dt),
                          steer, 1.0, steer, brake), values, \
                f'landed {dist:.0f} m from the point'
        if h < FLARE_AGL_M and self._phase in ('approach', 'flare'):
            self._phase = 'flare'
            tau = FLARE_AGL_M / max(s.ground_speed_mps * math.tan(slope), 0.5)
            vs_sp = -(max(h, 0.0) + FLARE_TD_SINK_MPS * tau) / tau
            if self._flc != 'flare':
                self._flare.reset(s.pitch)
                self._flc = 'flare'
            pitch_sp = self._flare(vs_sp - s.climb_mps, dt)
            self._status = self._make_status((lat, lon), field / FT_M, self.lim.approach_kts, line)
            return Output(0.0, self._roll_loop(s, 0.0, dt), self._pitch_loop(s, pitch_sp, dt),
                          0.0, 1.0, 0.0, 0.0), values, 'landed'
        self._phase = 'approach'
        path_alt = field + self._ground_agl + max(to_go, 0.0) * math.tan(slope)
        out = self._fly(s, dt, line, path_alt, self.lim.approach_kts, track=True, flaps=1.0,
                        hold_only=True, vs_ff=-s.ground_speed_mps * math.tan(slope))
        self._status = self._make_status((lat, lon), path_alt / FT_M, self.lim.approach_kts,
                                         line)
        return out, values, 'landed'

    # --- holds ----------------------------------------------------------------------------
    def _fly_hold(self, s, dt) -> Output:
        if self._hold is None:
            self._hold = (s.heading_deg, s.alt_msl_m, max(s.airspeed_kts, self.lim.climb_kts))
            self._phase = 'hold'
        hdg, alt, kts = self._hold
        self._status = self._make_status(None, alt / FT_M, kts, hdg)
        if not self._airborne:
            return Output(0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0)
        return self._fly(s, dt, hdg, alt, kts, track=False)

    def _fly_manual(self, s, dt) -> Output:
        sp = self.setpoints
        if sp.attitude_hold:
            if self._att is None:
                self._att = (s.roll, s.pitch)
                self._pitch.reset()
            self._phase = 'attitude hold'
            self._status = self._make_status(None, sp.altitude_setpoint_ft, math.nan,
                                             s.heading_deg)
            thr = self._thr.i if self._thr.i else 0.6
            return Output(thr, self._roll_loop(s, self._att[0], dt),
                          self._pitch_loop(s, self._att[1], dt), 0.0, 0.0, 0.0, 0.0)
        if self._hold is None:
            self._hold = (s.heading_deg, s.alt_msl_m, s.airspeed_kts)
        target = None
        hdg = self._hold[0]
        if sp.heading_hold:
            if sp.heading_set_by_waypoint:
                target = (sp.target_wp_latitude_deg, sp.target_wp_longitude_deg)
                hdg = bearing_deg(s.lat_deg, s.lon_deg, *target)
            else:
                hdg = sp.heading_setpoint_deg % 360.0
        kts = sp.airspeed_setpoint_kts if sp.airspeed_hold else self._hold[2]
        self._phase = 'manual'
        self._status = self._make_status(target, sp.altitude_setpoint_ft, kts, hdg)
        return self._fly(s, dt, hdg, sp.altitude_setpoint_ft * FT_M, kts,
                         track=target is not None)

    def _fly(self, s, dt, course_deg, alt_m, kts, track, thr_max=1.0, flaps=0.0,
             hold_only=False, vs_ff=0.0) -> Output:
        """Lateral and vertical holds toward a course/heading, an altitude and an airspeed."""
        actual = s.track_deg if track and s.ground_speed_mps > 10.0 else s.heading_deg
        err = wrap_180(course_deg - actual)
        bank = math.radians(clamp(1.0 * err, -self.lim.max_bank_deg, self.lim.max_bank_deg))
        aileron = self._roll_loop(s, bank, dt)
        h_err = alt_m - s.alt_msl_m
        mode = 'hold' if hold_only or abs(h_err) < ALT_CAPTURE_M else (
            'climb' if h_err > 0 else 'descend')
        if self._flc == 'hold' and mode != 'hold' and abs(h_err) < 2.0 * ALT_CAPTURE_M:
            mode = 'hold'           # hysteresis: stay captured
        if mode != self._flc:
            # bumpless: each outer loop starts from the pitch now
            self._vs.reset(s.pitch)
            self._spd_pitch.reset(s.pitch)
            if mode == 'hold' and self._thr.i == 0.0:
                self._thr.reset(0.6)
            self._flc = mode
        if mode == 'hold':
            vs_sp = clamp(vs_ff + VS_GAIN * h_err, -VS_MAX_MPS, VS_MAX_MPS)
            pitch_sp = self._vs(vs_sp - s.climb_mps, dt)
            thr = self._thr(kts - s.airspeed_kts, dt, ff=0.02 * vs_sp)
            thr = min(thr, thr_max)
            if self._phase not in ('approach',):
                self._phase = 'cruise'
        elif mode == 'climb':
            thr = thr_max
            pitch_sp = self._spd_pitch(kts - s.airspeed_kts, dt)
            self._thr.reset(0.75)
            self._phase = 'climb'
        else:
            thr = DESCENT_THROTTLE
            pitch_sp = self._spd_pitch(kts - s.airspeed_kts, dt)
            self._thr.reset(0.5)
            self._phase = 'descent'
        # a bank needs more lift: pitch up by the load factor's share
        pitch_sp += math.radians(4.0) * (1.0 / max(math.cos(s.roll), 0.5) - 1.0)
        return Output(thr, aileron, self._pitch_loop(s, pitch_sp, dt), 0.0, flaps, 0.0, 0.0)

    def _roll_loop(self, s, roll_sp, dt):
        return self._roll(roll_sp - s.roll, dt, ff=-0.15 * s.p)

    def _pitch_loop(self, s, pitch_sp, dt):
        return self._pitch(pitch_sp - s.pitch, dt, ff=-0.3 * s.q)
