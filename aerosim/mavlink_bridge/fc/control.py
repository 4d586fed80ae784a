"""Cascaded multicopter control of the built-in flight controller (pure, no rclpy).

The PX4 structure and default gains for a ~1.5 kg quad (mc_pos_control, mc_att_control,
mc_rate_control): position P -> velocity PID -> acceleration -> thrust vector and attitude
setpoint -> attitude P (quaternion error) -> rate PID -> normalized torques -> Quad X mixer
with thrust model (thrust ~ throttle^2, PX4's THR_MDL_FAC = 1). All in NED / FRD.
"""

from dataclasses import dataclass
import math
from typing import Optional

import numpy as np

from sim_core.units import clamp

GRAVITY = 9.80665
# PX4 Quad X mixer: per motor (roll, pitch, yaw) scale; motor order 0 FR CCW, 1 RL CCW,
# 2 FL CW, 3 RR CW.
QUAD_X = np.array([[-0.7071, 0.7071, 1.0],
                   [0.7071, -0.7071, 1.0],
                   [0.7071, 0.7071, -1.0],
                   [-0.7071, -0.7071, -1.0]])


@dataclass
class Gains:
    """Controller gains and limits (PX4 parameter names in the comments)."""

    pos_xy_p: float = 0.95          # MPC_XY_P [1/s]
    pos_z_p: float = 1.0            # MPC_Z_P [1/s]
    vel_xy_p: float = 1.8           # MPC_XY_VEL_P_ACC [1/s]
    vel_xy_i: float = 0.4           # MPC_XY_VEL_I_ACC [1/s^2]
    vel_xy_d: float = 0.2           # MPC_XY_VEL_D_ACC [-]
    vel_z_p: float = 4.0            # MPC_Z_VEL_P_ACC [1/s]
    vel_z_i: float = 2.0            # MPC_Z_VEL_I_ACC [1/s^2]
    vel_z_d: float = 0.0            # MPC_Z_VEL_D_ACC [-]
    max_speed_xy: float = 5.0       # MPC_XY_VEL_MAX [m/s]
    max_speed_up: float = 3.0       # MPC_Z_VEL_MAX_UP [m/s]
    max_speed_down: float = 1.5     # MPC_Z_VEL_MAX_DN [m/s]
    max_tilt_deg: float = 35.0      # MPC_TILTMAX_AIR [deg]
    hover_thrust: float = 0.52      # MPC_THR_HOVER [0..1, normalized thrust]
    thrust_min: float = 0.08        # MPC_THR_MIN
    thrust_max: float = 1.0         # MPC_THR_MAX
    att_rp_p: float = 6.5           # MC_ROLL_P / MC_PITCH_P [1/s]
    att_yaw_p: float = 2.8          # MC_YAW_P [1/s]
    rate_rp_p: float = 0.15         # MC_ROLLRATE_P
    rate_rp_i: float = 0.2          # MC_ROLLRATE_I
    rate_rp_d: float = 0.003        # MC_ROLLRATE_D
    rate_yaw_p: float = 0.2         # MC_YAWRATE_P
    rate_yaw_i: float = 0.1         # MC_YAWRATE_I
    max_rate_rp: float = 3.8        # MC_ROLLRATE_MAX [rad/s]
    max_rate_yaw: float = 3.5       # MC_YAWRATE_MAX [rad/s]
    thrust_model: float = 1.0       # THR_MDL_FAC: 0 thrust ~ throttle, 1 thrust ~ throttle^2


def _cross(a, b):
    """Cross product of two 3-vectors (numpy's np.cross is slow on small arrays)."""
    return np.array([a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2],
                     a[0] * b[1] - a[1] * b[0]])


class Controller:
    """Position/velocity/attitude/rate cascade; step() returns four motor throttles 0..1."""

    def __init__(self, gains: Optional[Gains] = None):
        """gains: defaults are PX4's for a ~1.5 kg quad."""
        g = self.g = gains or Gains()
        # Per-axis gain vectors, built once (small numpy constructions dominate a step).
        self._vel_k = (np.array([g.vel_xy_p, g.vel_xy_p, g.vel_z_p]),
                       np.array([g.vel_xy_i, g.vel_xy_i, g.vel_z_i]),
                       np.array([g.vel_xy_d, g.vel_xy_d, g.vel_z_d]))
        self._rate_k = (np.array([g.rate_rp_p, g.rate_rp_p, g.rate_yaw_p]),
                        np.array([g.rate_rp_i, g.rate_rp_i, g.rate_yaw_i]),
                        np.array([g.rate_rp_d, g.rate_rp_d, 0.0]))
        self.reset()

    def reset(self):
        """Clear integrators (on arming)."""
        self.vel_int = np.zeros(3)
        self.rate_int = np.zeros(3)
        self.prev_rates = None
        self.prev_vel = None
        self.thrust = 0.0
        self.saturated = False

    def velocity_setpoint(self, pos, pos_sp, vel_ff=None):
        """Position P with speed limits: NED velocity setpoint [m/s]."""
        g = self.g
        e = np.asarray(pos_sp) - np.asarray(pos)
        v = np.array([g.pos_xy_p * e[0], g.pos_xy_p * e[1], g.pos_z_p * e[2]])
        if vel_ff is not None:
            v += vel_ff
        h = math.hypot(v[0], v[1])
        if h > g.max_speed_xy:
            v[0:2] *= g.max_speed_xy / h
        v[2] = min(max(v[2], -g.max_speed_up), g.max_speed_down)
        return v

    def step(self, dt, vel, vel_sp, yaw_sp, R, rates):
        """One control step: velocity setpoint -> motor throttles (FRD/NED, dt [s]).

        R: attitude as the rotation matrix body FRD -> NED; rates: body FRD [rad/s].
        """
        g = self.g
        # velocity PID -> acceleration setpoint (NED)
        ev = np.asarray(vel_sp) - np.asarray(vel)
        dv = np.zeros(3) if self.prev_vel is None else (np.asarray(vel) - self.prev_vel) / dt
        self.prev_vel = np.array(vel, dtype=float)
        kp, ki, kd = self._vel_k
        acc_sp = kp * ev + self.vel_int - kd * dv
        if not self.saturated:
            self.vel_int = clamp(self.vel_int + ki * ev * dt, -3.0, 3.0)
        # acceleration -> body z axis and collective thrust (normalized)
        f = np.array([acc_sp[0], acc_sp[1], acc_sp[2] - GRAVITY])   # specific force wanted
        if f[2] > -0.2 * GRAVITY:
            f[2] = -0.2 * GRAVITY
        h = math.hypot(f[0], f[1])
        max_h = -f[2] * math.tan(math.radians(g.max_tilt_deg))
        if h > max_h:
            f[0:2] *= max_h / h
        norm = float(np.linalg.norm(f))
        body_z = -f / norm
        thrust = g.hover_thrust * norm / GRAVITY
        self.saturated = not g.thrust_min <= thrust <= g.thrust_max
        thrust = min(max(thrust, g.thrust_min), g.thrust_max)
        self.thrust = thrust
        # attitude setpoint from body z and yaw
        y_c = np.array([-math.sin(yaw_sp), math.cos(yaw_sp), 0.0])
        body_x = _cross(y_c, body_z)
        body_x /= np.linalg.norm(body_x)
        body_y = _cross(body_z, body_x)
        R_sp = np.column_stack([body_x, body_y, body_z])
        return self.attitude_step(dt, R_sp, thrust, R, rates)

    def attitude_step(self, dt, R_sp, thrust, R, rates):
        """Attitude P on the rotation error (R_sp, R: body FRD -> NED), rate loop, mixer."""
        g = self.g
        E = 0.5 * (R_sp.T @ R - R.T @ R_sp)           # vee of it: the attitude error
        e = -np.array([E[2, 1], E[0, 2], E[1, 0]])
        rate_sp = np.array([g.att_rp_p * e[0], g.att_rp_p * e[1], g.att_yaw_p * e[2]])
        rate_sp[0:2] = clamp(rate_sp[0:2], -g.max_rate_rp, g.max_rate_rp)
        rate_sp[2] = min(max(rate_sp[2], -g.max_rate_yaw), g.max_rate_yaw)
        return self.rate_step(dt, rate_sp, thrust, rates)

    def rate_step(self, dt, rate_sp, thrust, rates):
        """Rate PID -> normalized torques -> Quad X mixer -> throttles."""
        rates = np.asarray(rates, dtype=float)
        er = rate_sp - rates
        d = np.zeros(3) if self.prev_rates is None else (rates - self.prev_rates) / dt
        self.prev_rates = rates
        kp, ki, kd = self._rate_k
        torque = kp * er + self.rate_int - kd * d
        self.rate_int = clamp(self.rate_int + ki * er * dt, -0.3, 0.3)
        torque = clamp(torque, -1.0, 1.0)
        return self.mix(thrust, torque)

    def mix(self, thrust, torque):
        """Quad X mix with the thrust model; keeps roll/pitch authority at the limits."""
        m = thrust + QUAD_X @ torque
        lo, hi = float(m.min()), float(m.max())
        if hi > 1.0:
            m -= hi - 1.0
        if lo < 0.0 and hi - lo <= 1.0:
            m -= lo
        m = np.minimum(np.maximum(m, 0.0), 1.0)
        k = self.g.thrust_model
        if k <= 0.0:
            return m
        # thrust = (1 - k) * u + k * u^2  ->  u
        return np.where(m > 0.0, (-(1 - k) + np.sqrt((1 - k) ** 2 + 4 * k * m)) / (2 * k), 0.0)
