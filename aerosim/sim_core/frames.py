"""Frame conventions and conversions (pure, no rclpy).

ROS topics use REP-103: world ENU (x east, y north, z up) and body FLU (x forward, y left,
z up). MAVLink and IMC use world NED and body FRD. Quaternions are (w, x, y, z) and rotate
vectors from the body frame into the world frame (``q_enu_flu``).
"""

import math
from typing import NamedTuple, Sequence

import numpy as np
from transforms3d import quaternions as tq

from sim_core.units import clamp
from sim_core.units import wrap_pi as wrap_pi  # re-exported: its home is sim_core.units


class VehicleSample(NamedTuple):
    """One vehicle's true state at one step, in the ROS frames: the named type end to end.

    Made by the model's node (DynamicsNode.state_arrays, for in-process listeners) or from
    the topic (sim_ros.convert.vehicle_state_arrays); taken by SensorSuite.sample, the HIL
    bridge, the IMC kinematics and VehicleStatePublisher. A tuple in this order, so
    ``suite.sample(*s)`` works. Suffixes name frames: ``_enu`` world, ``_flu`` body.
    """

    t_ns: int                       # sim time [ns]
    p_enu: Sequence[float]          # position from the scenario origin [m]
    v_enu: Sequence[float]          # velocity over ground [m/s]
    q_enu_flu: Sequence[float]      # attitude (w, x, y, z): rotates FLU vectors into ENU
    a_enu: Sequence[float]          # kinematic acceleration (no gravity) [m/s^2]
    w_flu: Sequence[float]          # angular velocity [rad/s]


# ENU <-> NED swaps x/y and negates z; FLU <-> FRD negates y and z. Both are involutions.
_ENU_NED = np.array([[0.0, 1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, -1.0]])
_FLU_FRD = np.diag([1.0, -1.0, -1.0])
# Rotation quaternion equivalents of the matrices above: q_NED_ENU and q_FRD_FLU.
_Q_NED_ENU = tq.mat2quat(_ENU_NED)
_Q_FLU_FRD = tq.mat2quat(_FLU_FRD)


def enu_to_ned(v_enu):
    """Convert a world vector from ENU to NED; shape (3,) -> (3,)."""
    x, y, z = v_enu
    return np.array([y, x, -z], dtype=float)


def ned_to_enu(v_ned):
    """Convert a world vector from NED to ENU; shape (3,) -> (3,)."""
    n, e, d = v_ned
    return np.array([e, n, -d], dtype=float)


def flu_to_frd(v_flu):
    """Convert a body vector from FLU to FRD; shape (3,) -> (3,)."""
    x, y, z = v_flu
    return np.array([x, -y, -z], dtype=float)


def frd_to_flu(v_frd):
    """Convert a body vector from FRD to FLU; shape (3,) -> (3,)."""
    return flu_to_frd(v_frd)


def q_enu_flu_to_ned_frd(q_enu_flu):
    """Convert an attitude q_ENU<-FLU (w, x, y, z) into q_NED<-FRD (w, x, y, z), w >= 0."""
    q = tq.qmult(tq.qmult(_Q_NED_ENU, q_enu_flu), _Q_FLU_FRD)
    q = q / np.linalg.norm(q)
    return q if q[0] >= 0.0 else -q


def q_ned_frd_to_enu_flu(q_ned_frd):
    """Convert an attitude q_NED<-FRD (w, x, y, z) into q_ENU<-FLU (w, x, y, z), w >= 0."""
    q = tq.qmult(tq.qmult(_Q_NED_ENU, q_ned_frd), _Q_FLU_FRD)
    q = q / np.linalg.norm(q)
    return q if q[0] >= 0.0 else -q


def quat_to_euler_ned(q_ned_frd):
    """Return (roll, pitch, yaw) [rad] of an NED<-FRD quaternion (aerospace ZYX convention).

    roll, yaw in [-pi, pi], pitch in [-pi/2, pi/2]; yaw is the compass heading (0 = north).
    """
    w, x, y, z = q_ned_frd
    roll = math.atan2(2.0 * (w * x + y * z), 1.0 - 2.0 * (x * x + y * y))
    pitch = math.asin(clamp(2.0 * (w * y - z * x), -1.0, 1.0))
    yaw = math.atan2(2.0 * (w * z + x * y), 1.0 - 2.0 * (y * y + z * z))
    return roll, pitch, yaw


def euler_ned_to_quat(roll, pitch, yaw):
    """Return the NED<-FRD quaternion (w, x, y, z) for ZYX Euler angles [rad]."""
    return tq.qmult(tq.qmult(tq.axangle2quat([0, 0, 1], yaw), tq.axangle2quat([0, 1, 0], pitch)),
                    tq.axangle2quat([1, 0, 0], roll))


_S2 = math.sqrt(0.5)


def euler_ned_to_q_enu_flu(roll: float, pitch: float, yaw: float):
    """ZYX Euler angles of the NED<-FRD attitude [rad] -> q_ENU<-FLU (w, x, y, z), floats.

    The same as q_ned_frd_to_enu_flu(euler_ned_to_quat(...)) up to the sign, in closed form
    (q_ENU<-FLU = q_ENU<-NED q q_FRD<-FLU, with q_ENU<-NED = (0, s, s, 0), q_FRD<-FLU = (0,
    1, 0, 0), s = sqrt(1/2)): a plane converts its attitude every step.
    """
    cr, sr = math.cos(0.5 * roll), math.sin(0.5 * roll)
    cp, sp = math.cos(0.5 * pitch), math.sin(0.5 * pitch)
    cy, sy = math.cos(0.5 * yaw), math.sin(0.5 * yaw)
    w = cr * cp * cy + sr * sp * sy
    x = sr * cp * cy - cr * sp * sy
    y = cr * sp * cy + sr * cp * sy
    z = cr * cp * sy - sr * sp * cy
    # (0, s, s, 0) * (w, x, y, z) * (0, 1, 0, 0), one overall sign dropped
    q = (_S2 * (w + z), _S2 * (x + y), _S2 * (x - y), _S2 * (w - z))
    return q if q[0] >= 0.0 else (-q[0], -q[1], -q[2], -q[3])


def yaw_enu_to_heading_deg(yaw_enu):
    """Convert an ENU yaw (rad, 0 = east, counter-clockwise) to a compass heading [0, 360) deg."""
    return (90.0 - math.degrees(yaw_enu)) % 360.0


def quat_rotate(q, v):
    """Rotate vector v (3,) by unit quaternion q (w, x, y, z): returns R(q) @ v."""
    return tq.rotate_vector(v, q)


def quat_rotate_inverse(q, v) -> np.ndarray:
    """R(q)^T @ v for a unit quaternion q (w, x, y, z): a world vector into the body frame.

    Plain float arithmetic (per-step sensor path: ~10x faster than building R with
    transforms3d.quat2mat, whose input checks dominate for one vector); shape (3,).
    """
    w, x, y, z = float(q[0]), float(q[1]), float(q[2]), float(q[3])
    vx, vy, vz = float(v[0]), float(v[1]), float(v[2])
    # columns of R(q) dotted with v
    return np.array([(1.0 - 2.0 * (y * y + z * z)) * vx + 2.0 * (x * y + w * z) * vy
                     + 2.0 * (x * z - w * y) * vz,
                     2.0 * (x * y - w * z) * vx + (1.0 - 2.0 * (x * x + z * z)) * vy
                     + 2.0 * (y * z + w * x) * vz,
                     2.0 * (x * z + w * y) * vx + 2.0 * (y * z - w * x) * vy
                     + (1.0 - 2.0 * (x * x + y * y)) * vz])
