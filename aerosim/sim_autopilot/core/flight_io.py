"""The fixed-wing autopilot's interface: state in, setpoints, command out, status (pure).

``FlightState`` is what the autopilot reads each step (what VehicleState and
PrimaryFlightDisplayData carry; ``flight_state`` makes it from a VehicleSample), ``Limits``
the aircraft's speeds, ``Setpoints`` AutopilotCommand's manual setpoints (``check_setpoints``
validates them), ``Output`` AeroSim's FlightControlCommand values and ``Status`` what the
autopilot flies now. The autopilot itself (its loops and the plan sequencer) is
sim_autopilot.core.autopilot, which re-exports every name here.
"""

from dataclasses import dataclass
import math
from typing import NamedTuple, Optional

from sim_core.frames import VehicleSample, q_enu_flu_to_ned_frd, quat_to_euler_ned
from sim_core.geodesy import GeoOrigin
from sim_core.units import KNOT_MPS
from sim_core.validate import number


class FlightState(NamedTuple):
    """The aircraft's state for one step (SI units, angles in radians unless named)."""

    t: float                    # sim time [s]
    lat_deg: float
    lon_deg: float
    alt_msl_m: float            # altitude above mean sea level [m]
    agl_m: float                # height above the field [m]
    airspeed_kts: float         # calibrated airspeed [kt]
    climb_mps: float            # vertical speed, up [m/s]
    roll: float                 # [rad], positive right wing down
    pitch: float                # [rad], positive nose up
    heading_deg: float          # true heading [deg], 0 = north, clockwise
    track_deg: float            # course over ground [deg]
    ground_speed_mps: float
    p: float                    # roll rate [rad/s], FRD
    q: float                    # pitch rate [rad/s], FRD
    r: float                    # yaw rate [rad/s], FRD


def flight_state(s: VehicleSample, origin: GeoOrigin,
                 airspeed_kts: Optional[float] = None) -> FlightState:
    """The FlightState of a vehicle's true state (ENU/FLU) and its airspeed [kt].

    airspeed_kts: the calibrated airspeed (the PFD's, JSBSim's vc-kts); None = the ground
    speed. Heights are from the scenario origin (its altitude is the field's). What
    autopilot_node feeds from VehicleState and what a world's in-process autopilot feeds
    from the model (kinds/plane/controllers.py, PlaneAutopilot).
    """
    p, v, w = s.p_enu, s.v_enu, s.w_flu
    lat, lon, _ = origin.enu_to_geodetic(p[0], p[1], p[2])
    roll, pitch, yaw = quat_to_euler_ned(q_enu_flu_to_ned_frd(tuple(s.q_enu_flu)))
    gs = math.hypot(v[0], v[1])
    if airspeed_kts is None:
        airspeed_kts = gs / KNOT_MPS
    return FlightState(s.t_ns * 1e-9, lat, lon, origin.alt_m + p[2], p[2], airspeed_kts,
                       v[2], roll, pitch, math.degrees(yaw) % 360.0,
                       math.degrees(math.atan2(v[0], v[1])) % 360.0, gs, w[0], -w[1], -w[2])


@dataclass(frozen=True)
class Limits:
    """The aircraft's speeds [kt] and bank limit [deg] (AircraftParams fields)."""

    rotate_kts: float = 55.0
    climb_kts: float = 79.0
    cruise_kts: float = 100.0
    approach_kts: float = 65.0
    max_bank_deg: float = 25.0


class Setpoints(NamedTuple):
    """AutopilotCommand's setpoints (validated by check_setpoints)."""

    use_manual_setpoints: bool = False
    attitude_hold: bool = False
    altitude_setpoint_ft: float = 0.0
    airspeed_hold: bool = False
    airspeed_setpoint_kts: float = 0.0
    heading_hold: bool = False
    heading_set_by_waypoint: bool = False
    heading_setpoint_deg: float = 0.0
    target_wp_latitude_deg: float = 0.0
    target_wp_longitude_deg: float = 0.0


def check_setpoints(s: Setpoints) -> Setpoints:
    """Validate AutopilotCommand's numbers; FieldError names the field."""
    return s._replace(
        altitude_setpoint_ft=number(s.altitude_setpoint_ft, 'altitude_setpoint_ft',
                                    -1000.0, 60000.0),
        airspeed_setpoint_kts=number(s.airspeed_setpoint_kts, 'airspeed_setpoint_kts',
                                     0.0, 400.0),
        heading_setpoint_deg=number(s.heading_setpoint_deg, 'heading_setpoint_deg',
                                    -360.0, 360.0),
        target_wp_latitude_deg=number(s.target_wp_latitude_deg, 'target_wp_latitude_deg',
                                      -90.0, 90.0),
        target_wp_longitude_deg=number(s.target_wp_longitude_deg, 'target_wp_longitude_deg',
                                       -180.0, 180.0))


class Output(NamedTuple):
    """One step's FlightControlCommand values."""

    power: float
    roll: float
    pitch: float
    yaw: float
    flap: float
    wheel_steer: float
    wheel_brake: float


class Status(NamedTuple):
    """What the autopilot flies now: for the PFD, the trajectory and the logs."""

    mode: str                   # 'plan', 'paused', 'stopped', 'manual', 'attitude', 'done'
    step: int                   # the plan step flown (-1: none)
    phase: str                  # 'takeoff roll', 'climb', 'cruise', 'approach', ...
    target_altitude_ft: float
    target_airspeed_kts: float
    target_heading_deg: float
    target_wp_active: bool
    target_wp_lat_deg: float
    target_wp_lon_deg: float
