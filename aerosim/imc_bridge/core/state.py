"""Vehicle state in IMC's frames (pure, no rclpy): from the ROS VehicleState (ENU/FLU).

IMC's SimulatedState and EstimatedState carry NED offsets from a geodetic origin, ZYX Euler
angles of the body (FRD) in NED, body velocities u/v/w and rates p/q/r (FRD), and for
EstimatedState the NED ground velocity. One conversion serves both messages.

Velocities: DUNE's marine sensor simulators read SimulatedState u/v/w as the velocity through
the water and add the stream (svx/svy/svz, rotated into the body) for the velocity over ground
(Simulators.DVL: water velocity = u/v/w, ground velocity = u/v/w + stream). So SimulatedState
gets ``uvw_water`` = R^T (v_ground - stream); EstimatedState, whose vx/vy/vz are over ground,
gets ``uvw_ground`` = R^T v_ground.
"""

import math
from typing import NamedTuple, Tuple

import numpy as np
from transforms3d import quaternions as tq

from sim_core.frames import enu_to_ned, flu_to_frd, q_enu_flu_to_ned_frd, quat_to_euler_ned

Vec3 = Tuple[float, float, float]


class ImcKinematics(NamedTuple):
    """A vehicle's state in IMC terms (SI units, rad)."""

    ned: Vec3          # x north, y east, z down offsets from the origin [m]
    euler: Vec3        # phi, theta, psi [rad] (NED <- FRD, ZYX)
    uvw_water: Vec3    # body FRD velocity through the water (ground minus stream) [m/s]
    uvw_ground: Vec3   # body FRD velocity over ground [m/s]
    pqr: Vec3          # body FRD angular velocity [rad/s]
    v_ned: Vec3        # NED velocity over ground [m/s]


def vec3(v) -> Vec3:
    """Three numbers as a tuple of floats."""
    return (float(v[0]), float(v[1]), float(v[2]))


def imc_kinematics(p_enu, v_enu, q_enu_flu, w_flu, stream_ned=(0.0, 0.0, 0.0)) -> ImcKinematics:
    """Vehicle state -> ImcKinematics.

    p_enu [m], v_enu [m/s], q_enu_flu = q_ENU<-FLU (w, x, y, z), w_flu [rad/s]; stream_ned: the
    water's velocity over ground [m/s], NED.
    """
    q = q_enu_flu_to_ned_frd(q_enu_flu)
    v_ned = enu_to_ned(v_enu)
    r_t = tq.quat2mat(q).T
    return ImcKinematics(vec3(enu_to_ned(p_enu)), vec3(quat_to_euler_ned(q)),
                         vec3(r_t @ (v_ned - np.asarray(stream_ned))), vec3(r_t @ v_ned),
                         vec3(flu_to_frd(w_flu)), vec3(v_ned))


def stream_velocity_ned(current_enu) -> Vec3:
    """Water current ENU [m/s] -> the (svx north, svy east, svz down) of SimulatedState."""
    return vec3(enu_to_ned(np.asarray(current_enu, dtype=float)))


def rad_position(origin, p_ned, geoid_height_m: float = 0.0):
    """(lat, lon [rad], height above the ellipsoid [m]) of a NED offset [m] from a GeoOrigin.

    geoid_height_m: geoid height above the ellipsoid at the origin [m] (the origin's altitude
    is above mean sea level).
    """
    lat, lon, h = origin.enu_to_geodetic(p_ned[1], p_ned[0], -p_ned[2])
    return math.radians(lat), math.radians(lon), float(h) + geoid_height_m
