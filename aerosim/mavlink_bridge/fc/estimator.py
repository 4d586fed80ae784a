"""State estimation of the built-in flight controller (pure, no rclpy).

Attitude: Mahony complementary filter (the ahrs.filters.Mahony algorithm, in scalar form in
fc.mahony; initial attitude from ahrs' e-compass) on gyro, accelerometer and magnetometer with
gyro-bias estimation. ahrs works with a z-up world (ENU, north on +y), so
the HIL_SENSOR values (FRD) enter converted to FLU and the quaternion comes out ENU<-FLU.
Position/velocity: a linear Kalman filter (filterpy) on the local NED frame around home:
predicted with the accelerometer rotated to NED plus gravity, corrected by GPS position and
velocity and by barometric altitude (height 0 = the mean pressure altitude on the ground before
takeoff, see baro()); the barometer leads the height, as in PX4 (GNSS height de-weighted).
"""

import math
from typing import NamedTuple, Optional, Tuple

from ahrs.common.orientation import ecompass
from filterpy.kalman import KalmanFilter
import numpy as np
import pymap3d
from transforms3d import quaternions as tq

from mavlink_bridge.fc.mahony import MahonyFilter
from sim_core.frames import flu_to_frd, frd_to_flu, q_enu_flu_to_ned_frd, quat_to_euler_ned
from sim_core.units import clamp

GRAVITY = 9.80665
MAG_FIELDS, BARO_ALT_FIELD, DIFF_PRESS_FIELD = 0x1C0, 0x800, 0x400   # HIL_SENSOR fields_updated
# GNSS height noise multiplier in the position filter [-] (the barometer leads the height).
GPS_HEIGHT_DEWEIGHT = 4.0


class Estimator:
    """Attitude (Mahony) + position/velocity (Kalman filter) from HIL sensor messages."""

    def __init__(self, accel_noise: float = 0.5, baro_std_m: float = 0.5,
                 k_p: float = 0.1, k_i: float = 0.02):
        """accel_noise: process noise [m/s^2]; baro_std_m: baro altitude noise [m]."""
        self._mahony = MahonyFilter(k_p, k_i)
        self.q_enu = np.array([1.0, 0.0, 0.0, 0.0])
        self.q = q_enu_flu_to_ned_frd(self.q_enu)      # NED<-FRD
        self.R = np.eye(3)                             # body FRD -> NED
        self.euler = (0.0, 0.0, 0.0)
        self.rates = np.zeros(3)                        # body FRD [rad/s], bias-corrected
        kf = KalmanFilter(dim_x=6, dim_z=6)
        kf.P *= 10.0
        self.kf = kf
        self._accel_noise = accel_noise
        self._baro_R = np.array([[baro_std_m ** 2]])
        self._H_gps = np.eye(6)
        self._H_baro = np.array([[0.0, 0.0, 1.0, 0.0, 0.0, 0.0]])
        self._dt = None
        self.home = None            # (lat deg, lon deg, alt m MSL)
        self._baro0: Optional[float] = None     # pressure altitude of height 0 [m]
        self._baro_sum = 0.0
        self._baro_n = 0
        self.baro_reference_fixed = False
        self.gps_ok = False
        self.t_us = 0               # time of the last IMU sample taken [µs]
        self.attitude_ok = False
        self._samples = 0
        self._mag = None
        self._initialized = False

    @property
    def position(self):
        """Local NED position [m] from home."""
        return self.kf.x[0:3, 0]

    @property
    def velocity(self):
        """NED velocity [m/s]."""
        return self.kf.x[3:6, 0]

    def set_home(self, lat_deg, lon_deg, alt_m):
        """Home: the origin of the local NED frame (HOME_POSITION, or the first GPS fix)."""
        self.home = (lat_deg, lon_deg, alt_m)

    def _matrices(self, dt):
        if dt == self._dt:
            return
        self._dt = dt
        eye = np.eye(3)
        self.kf.F = np.block([[eye, dt * eye], [np.zeros((3, 3)), eye]])
        self.kf.B = np.vstack([0.5 * dt * dt * eye, dt * eye])
        g = np.vstack([0.5 * dt * dt * eye, dt * eye])
        self.kf.Q = g @ g.T * self._accel_noise ** 2

    def imu(self, t_us: int, acc_frd, gyr_frd, mag_frd_gauss=None, gravity_frd=None):
        """Propagate attitude and position with one IMU sample at time t_us [µs].

        gravity_frd: the accelerometer's reading with the flight path's own acceleration
        taken out (a fixed-wing FC removes the centripetal w x v of a turn), for the attitude
        filter's gravity reference; None = the reading itself (a multirotor's).
        """
        gyr = frd_to_flu(gyr_frd)
        acc = frd_to_flu(acc_frd)
        acc_att = acc if gravity_frd is None else frd_to_flu(gravity_frd)
        if mag_frd_gauss is not None:
            self._mag = frd_to_flu(mag_frd_gauss)
        mag = self._mag
        if not self._initialized:
            # initial attitude from the e-compass, at the first sample with a magnetometer value
            if mag is not None and np.linalg.norm(acc) > 1.0:
                self.q_enu = ecompass(acc, mag, frame='ENU', representation='quaternion')
                self._initialized = True
            self.t_us = t_us
            return
        if t_us <= self.t_us:
            return
        dt = (t_us - self.t_us) * 1e-6
        self.t_us = t_us
        self.q_enu = self._mahony.update(self.q_enu, gyr, acc_att, mag, dt)
        self.q = q_enu_flu_to_ned_frd(self.q_enu)
        self.R = tq.quat2mat(self.q)
        self.euler = quat_to_euler_ned(self.q)
        self.rates = flu_to_frd(gyr - np.asarray(self._mahony.b))
        self._samples += 1
        self.attitude_ok = self._samples > 250
        a_ned = self.R @ np.asarray(acc_frd, dtype=float) + np.array([0.0, 0.0, GRAVITY])
        self._matrices(dt)
        self.kf.predict(u=a_ned.reshape(3, 1))

    def baro(self, pressure_alt_m: float):
        """Correct the altitude with a barometer sample [m pressure altitude].

        The FC starts on the ground: until fix_baro_reference() (at arming) height 0 is the
        mean pressure altitude of the samples so far, whatever the GNSS height error is. One
        sample as the reference would offset the whole flight by its noise (0.6 m 1-sigma at
        50 Hz: a 3 m takeoff ended at 1.5 m in 1 run of 20).
        """
        if not self.baro_reference_fixed:
            self._baro_sum += pressure_alt_m
            self._baro_n += 1
            self._baro0 = self._baro_sum / self._baro_n
            if self._baro_n == 1:
                return
        assert self._baro0 is not None      # fixed by fix_baro_reference() or set above
        self.kf.update(np.array([[-(pressure_alt_m - self._baro0)]]), R=self._baro_R,
                       H=self._H_baro)

    def gps(self, lat_deg, lon_deg, alt_m, vel_ned, eph_m, epv_m):
        """Correct position and velocity with a GPS fix (deg, m MSL, m/s NED, m 1-sigma)."""
        if self.home is None:
            self.set_home(lat_deg, lon_deg, alt_m)
        n, e, d = pymap3d.geodetic2ned(lat_deg, lon_deg, alt_m, *self.home)
        z = np.array([[n], [e], [d], [vel_ned[0]], [vel_ned[1]], [vel_ned[2]]])
        eph, epv = max(eph_m, 0.1), max(epv_m, 0.1)
        # Height follows the barometer (PX4's default height reference): a GNSS height error
        # is slow (Gauss-Markov), so its weight is cut to keep it from biasing the altitude.
        R = np.diag([eph ** 2, eph ** 2, (GPS_HEIGHT_DEWEIGHT * epv) ** 2, 0.1 ** 2, 0.1 ** 2,
                     0.15 ** 2])
        if not self.gps_ok:     # first fix: jump to it (the height stays the barometer's)
            z = z.astype(float)
            if self._baro0 is not None:
                z[2, 0] = self.kf.x[2, 0]
            self.kf.x = z
            self.gps_ok = True
            return
        self.kf.update(z, R=R, H=self._H_gps)

    def fix_baro_reference(self):
        """Freeze height 0 (leaving the ground): later samples only correct the altitude."""
        self.baro_reference_fixed = self._baro0 is not None

    @property
    def yaw(self) -> float:
        """Heading [rad], NED (0 = north)."""
        return self.euler[2]

    def tilt_deg(self) -> float:
        """Angle between body z and the vertical [deg]."""
        return math.degrees(math.acos(clamp(self.R[2, 2], -1.0, 1.0)))


# --- the HIL messages both built-in FCs take (MAVLink units -> SI) -------------------------
class HilFrame(NamedTuple):
    """What an FC uses of one HIL_SENSOR.

    FRD accel [m/s^2] and rates [rad/s]; the groups the frame updated, else None: mag [gauss],
    pressure altitude [m], differential pressure [hPa].
    """

    time_usec: int
    acc: Tuple[float, float, float]
    gyr: Tuple[float, float, float]
    mag: Optional[Tuple[float, float, float]]
    pressure_alt: Optional[float]
    diff_pressure_hpa: Optional[float]


def hil_frame(msg, pitot: bool = False) -> Optional[HilFrame]:
    """HIL_SENSOR's used fields (by fields_updated); None if one of them is not finite.

    One NaN in the filters would corrupt them for good: the caller refuses such a frame.
    pitot: the differential pressure is used (a plane), so it is checked too.
    """
    f = msg.fields_updated
    acc = (msg.xacc, msg.yacc, msg.zacc)
    gyr = (msg.xgyro, msg.ygyro, msg.zgyro)
    mag = (msg.xmag, msg.ymag, msg.zmag) if f & MAG_FIELDS else None
    alt = msg.pressure_alt if f & BARO_ALT_FIELD else None
    dp = msg.diff_pressure if pitot and f & DIFF_PRESS_FIELD else None
    used = acc + gyr + (mag or ()) + tuple(x for x in (alt, dp) if x is not None)
    if not all(math.isfinite(v) for v in used):
        return None
    return HilFrame(msg.time_usec, acc, gyr, mag, alt, dp)


def take_home_position(est: Estimator, msg) -> None:
    """HOME_POSITION (degE7, mm): the local frame's origin, unless one is set."""
    if est.home is None:
        est.set_home(msg.latitude * 1e-7, msg.longitude * 1e-7, msg.altitude * 1e-3)


def take_hil_gps(est: Estimator, msg) -> bool:
    """HIL_GPS (degE7, mm, cm/s, cm) into the estimator if it has a 3D fix; whether it did."""
    if msg.fix_type < 3:
        return False
    est.gps(msg.lat * 1e-7, msg.lon * 1e-7, msg.alt * 1e-3,
            (msg.vn * 0.01, msg.ve * 0.01, msg.vd * 0.01), msg.eph * 0.01, msg.epv * 0.01)
    return True
