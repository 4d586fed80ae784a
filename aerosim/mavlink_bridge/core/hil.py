"""HIL message contents from simulator values: units and frames per the MAVLink common set.

Pure functions (no sockets, no rclpy); each returns a pymavlink message object. Frames: the
simulator is ENU/FLU inside, MAVLink is NED/FRD; conversions via sim_core.frames.
"""

import math
from typing import Optional

from mavlink_bridge.core.mav import ACCEL, ARMED_GUIDED, BARO, DIFF_PRESS, GYRO, MAG, mavlink
from sim_core.clock import SimState
from sim_core.frames import enu_to_ned, flu_to_frd, q_enu_flu_to_ned_frd

GAUSS_PER_TESLA = 1.0e4
PA_PER_HPA = 100.0
KELVIN = 273.15
UINT16_MAX = 65535


def heartbeat(mav, state: SimState):
    """HEARTBEAT of the simulator: GENERIC, autopilot INVALID; status and mode from the state.

    RUNNING: ACTIVE, SAFETY_ARMED|GUIDED_ENABLED (136); PAUSED: STANDBY, GUIDED_ENABLED (8,
    unarmed); STOPPED: POWEROFF, 0.
    """
    if state == SimState.RUNNING:
        status, mode = mavlink.MAV_STATE_ACTIVE, ARMED_GUIDED
    elif state == SimState.PAUSED:
        status, mode = mavlink.MAV_STATE_STANDBY, mavlink.MAV_MODE_FLAG_GUIDED_ENABLED
    else:
        status, mode = mavlink.MAV_STATE_POWEROFF, 0
    return mav.heartbeat_encode(mavlink.MAV_TYPE_GENERIC, mavlink.MAV_AUTOPILOT_INVALID,
                                mode, 0, status)


def int16(x: float) -> int:
    """Round and saturate to an int16 field."""
    return max(-32768, min(32767, int(round(x))))


def deg_e7(deg: float) -> int:
    """Degrees -> degE7 integer (rounded)."""
    return int(round(deg * 1e7))


def home_position(mav, origin, time_usec: int = 0):
    """HOME_POSITION at the scenario origin: lat/lon degE7, altitude mm MSL, local x/y/z = 0.

    q is the identity (surface normal = local down); approach vector 0.
    """
    return mav.home_position_encode(deg_e7(origin.lat_deg), deg_e7(origin.lon_deg),
                                    int(round(origin.alt_m * 1000.0)), 0.0, 0.0, 0.0,
                                    [1.0, 0.0, 0.0, 0.0], 0.0, 0.0, 0.0, time_usec)


class HilSensorEncoder:
    """HIL_SENSOR from SensorSuite samples; remembers the last mag/baro values.

    Fields not updated in a message repeat their last value; fields_updated flags only the
    groups with a new sample: ACCEL|GYRO always, MAG and BARO when those sensors sampled,
    DIFF_PRESS (0x400, hPa) with each airspeed sample (planes).
    """

    def __init__(self):
        """Start with no mag/baro sample."""
        self.mag_frd_gauss = (0.0, 0.0, 0.0)
        self.abs_pressure_hpa = 0.0
        self.pressure_alt_m = 0.0
        self.temperature_c = 0.0
        self.diff_pressure_hpa = 0.0

    def encode(self, mav, sample, time_usec: int):
        """Return HIL_SENSOR for a sample that has an IMU value (body FRD, gauss, hPa, degC)."""
        f_flu, w_flu = sample.imu
        # FLU -> FRD (y and z negated), as floats: this runs at the IMU rate
        fx, fy, fz = float(f_flu[0]), float(f_flu[1]), float(f_flu[2])
        wx, wy, wz = float(w_flu[0]), float(w_flu[1]), float(w_flu[2])
        fields = ACCEL | GYRO
        if sample.mag_new:
            b = sample.mag
            self.mag_frd_gauss = (float(b[0]) * GAUSS_PER_TESLA, -float(b[1]) * GAUSS_PER_TESLA,
                                  -float(b[2]) * GAUSS_PER_TESLA)
            fields |= MAG
        if sample.baro is not None:
            p_pa, t_k, alt = sample.baro
            self.abs_pressure_hpa = p_pa / PA_PER_HPA
            self.pressure_alt_m = alt
            self.temperature_c = t_k - KELVIN
            fields |= BARO
        if sample.airspeed is not None:
            # PX4 SimulatorMavlink: differential_pressure_pa = diff_pressure * 100 (hPa)
            self.diff_pressure_hpa = sample.airspeed[0] / PA_PER_HPA
            fields |= DIFF_PRESS
        m = self.mag_frd_gauss
        return mav.hil_sensor_encode(
            time_usec, fx, -fy, -fz, wx, -wy, -wz, m[0], m[1], m[2], self.abs_pressure_hpa,
            self.diff_pressure_hpa, self.pressure_alt_m, self.temperature_c, fields, 0)


def hil_gps(mav, fix, utc_usec: int):
    """HIL_GPS from a GnssFix: degE7, alt mm MSL, eph/epv cm, velocities cm/s NED, cog cdeg."""
    vn, ve, vd = fix.vel_ned
    speed = math.hypot(vn, ve)
    cog = int(round(fix.course_deg * 100.0)) % 36000 if speed > 0.05 else UINT16_MAX
    return mav.hil_gps_encode(
        utc_usec, fix.fix_type, deg_e7(fix.lat_deg), deg_e7(fix.lon_deg),
        int(round(fix.alt_m * 1000.0)), min(UINT16_MAX - 1, int(round(fix.eph_m * 100.0))),
        min(UINT16_MAX - 1, int(round(fix.epv_m * 100.0))),
        min(UINT16_MAX - 1, int(round(speed * 100.0))), int16(vn * 100.0), int16(ve * 100.0),
        int16(vd * 100.0), cog, fix.satellites, 0, 0)


def hil_state_quaternion(mav, time_usec, origin, p_enu, v_enu, q_enu_flu, a_enu, w_flu, gravity):
    """HIL_STATE_QUATERNION ground truth: q NED<-FRD, body rates FRD, degE7/mm, cm/s, mG."""
    q = q_enu_flu_to_ned_frd(q_enu_flu)
    w = flu_to_frd(w_flu)
    lat, lon, alt = origin.enu_to_geodetic(*p_enu)
    v = enu_to_ned(v_enu)
    a = enu_to_ned(a_enu)
    speed_cm = min(UINT16_MAX, int(round(math.sqrt(float(v @ v)) * 100.0)))
    cm = v * 100.0                     # cm/s
    mg = a / gravity * 1000.0          # milli-g
    return mav.hil_state_quaternion_encode(
        time_usec, [float(x) for x in q], float(w[0]), float(w[1]), float(w[2]),
        deg_e7(lat), deg_e7(lon), int(round(alt * 1000.0)), int16(cm[0]), int16(cm[1]),
        int16(cm[2]), speed_cm, speed_cm, int16(mg[0]), int16(mg[1]), int16(mg[2]))


RANGEFINDER_ID = 0          # DISTANCE_SENSOR id of the downward range finder
BEACON_SIZE_RAD = 0.05      # LANDING_TARGET size_x/size_y: the beacon's image size [rad]


def landing_target(mav, reading, time_usec: int):
    """LANDING_TARGET of a landing-target sample (sim_sensors.core.landing_target).

    As PX4's SimulatorMavlink::handle_message_landing_target takes it on the simulator link
    (-> irlock_report): position_valid 0 (PX4 drops a 1 there), angle_x / angle_y the image
    tangents (IrlockReport's pos_x / pos_y: x right, y down the image, its top at the nose),
    frame MAV_FRAME_BODY_FRD, type LIGHT_BEACON; distance [m] (PX4 ignores it and uses its
    range finder; the built-in FC uses it). target_num: the deck's index.
    """
    return mav.landing_target_encode(
        time_usec, int(reading.deck) & 0xFF, mavlink.MAV_FRAME_BODY_FRD, float(reading.tan_x),
        float(reading.tan_y), float(reading.distance_m), BEACON_SIZE_RAD, BEACON_SIZE_RAD,
        type=mavlink.LANDING_TARGET_TYPE_LIGHT_BEACON, position_valid=0)


def distance_sensor(mav, reading, time_usec: int):
    """DISTANCE_SENSOR of a downward range-finder sample: cm, orientation PITCH_270 (down).

    As SimulatorMavlink::publish_distance_topic takes it: distances in cm, PITCH_270 ->
    ROTATION_DOWNWARD_FACING, signal_quality 100 (MAVLink 1 would mean invalid there),
    type LASER, covariance 255 (unknown; EKF2 uses EKF2_RNG_NOISE).
    """
    return mav.distance_sensor_encode(
        time_usec // 1000 & 0xFFFFFFFF, int(round(reading.min_m * 100.0)),
        min(UINT16_MAX, int(round(reading.max_m * 100.0))),
        min(UINT16_MAX, int(round(reading.distance_m * 100.0))),
        mavlink.MAV_DISTANCE_SENSOR_LASER, RANGEFINDER_ID, mavlink.MAV_SENSOR_ROTATION_PITCH_270,
        255, signal_quality=100)


def answered_sensor_ns(time_usec: int, last_sensor_ns: Optional[int]) -> Optional[int]:
    """Sim time [ns] of the HIL_SENSOR an HIL_ACTUATOR_CONTROLS answers (None: none sent yet).

    A lockstep FC (PX4, the built-in FC) stamps its answer with the time_usec of the sensor
    frame it just processed. An FC still working through a backlog (sensors free-ran before it
    connected) answers old frames: their stamps do not release the awaited step, so the FC
    catches up instead of flying on stale sensors. time_usec 0 or not one of ours (an FC on its
    own clock): the answer is taken as the answer to the latest frame.
    """
    if last_sensor_ns is None:
        return None
    t_ns = int(time_usec) * 1000
    return t_ns if 0 < t_ns <= last_sensor_ns else last_sensor_ns
