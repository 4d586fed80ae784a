"""Speed and heading holds for N boats at once: the boat's own low-level autopilot (no rclpy).

What a boat's controller does with "go at this speed, steer this heading" (IMC DesiredSpeed /
DesiredHeading, AeroSim AutopilotCommand holds), vectorized over the swarm's arrays:

speed    a_des = k_speed (U_sp - u) + k_speed_i * integral(U_sp - u)   [m/s^2]
         thrust = X_u u + X_uu |u| u + m a_des (the model's drag cancelled), throttle = thrust
         / T_max (astern: / (T_max reverse_ratio)); the integral only runs near the setpoint
         and while the throttle is not saturated (anti-windup). With the throttle unsaturated
         the speed error decays as exp(-k_speed t): k_speed is DUNE's tas2acc_pgain ("true
         airspeed to acceleration").
heading  r_des = clip(k_heading wrap(psi_sp - psi), +-r_max)   [rad/s]
         rudder = (r_des + alpha r_des^3 + T k_rate (r_des - r)) / (K max(u / U_top, 0.1)):
         the speed-scaled Nomoto model inverted, plus yaw-rate damping. k_heading [1/s] plays
         the role of DUNE's bank2p_pgain (attitude error to rate).
Axes are independent: an axis without a hold keeps the manual command.

PidControl is the other law on the same holds: the USV UI's PID gains (seed 004's
gas_p/i/d, steering_p/i/d) around a throttle trim; see its docstring for the units.
"""

from typing import Optional, Sequence, Tuple

import numpy as np

from sim_core.units import wrap_pi
from sim_core.validate import FieldError, number
from sim_dynamics.core.usv import SPEED_LOSS_PER_SEA_STATE, BoatSwarm

# Ranges of the gains [1/s] (parameters and IMC DynamicsSimParam are checked against them).
SPEED_GAIN_RANGE = (0.01, 10.0)
HEADING_GAIN_RANGE = (0.01, 10.0)
MIN_SPEED_RATIO = 0.1
# The speed integral runs only near the setpoint [m/s] (no wind-up while accelerating).
INTEGRATE_BELOW_MPS = 0.2


class Holds:
    """Which boats hold a speed and/or a heading, and the setpoints (arrays of shape (N,)).

    The control laws (subclasses) turn the holds into throttle and rudder commands in update().
    """

    def __init__(self, swarm: BoatSwarm):
        """No holds; setpoints zero."""
        n = len(swarm)
        self.swarm = swarm
        self.speed_hold = np.zeros(n, dtype=bool)
        self.heading_hold = np.zeros(n, dtype=bool)
        self.speed_sp = np.zeros(n)          # m/s, through the water
        self.heading_sp = np.zeros(n)        # rad, compass
        self._int = np.zeros(n)              # speed integral
        self._int_h = np.zeros(n)            # heading integral (laws that have one)

    def hold_speed(self, speed_mps, idx=None) -> None:
        """Hold speed_mps [m/s] (negative: astern) from now on; NaN/inf raise ValueError."""
        v = np.asarray(speed_mps, dtype=float)
        if not np.isfinite(v).all():
            raise ValueError('speed setpoint must be finite')
        sel = slice(None) if idx is None else idx
        self.speed_sp[sel] = v
        self.speed_hold[sel] = True

    def hold_heading(self, heading_rad, idx=None) -> None:
        """Hold the compass heading [rad] from now on; NaN/inf raise ValueError."""
        v = np.asarray(heading_rad, dtype=float)
        if not np.isfinite(v).all():
            raise ValueError('heading setpoint must be finite')
        sel = slice(None) if idx is None else idx
        self.heading_sp[sel] = wrap_pi(v)
        self.heading_hold[sel] = True

    def release(self, idx=None) -> None:
        """Drop both holds (manual commands again) and the integrals."""
        sel = slice(None) if idx is None else idx
        self.speed_hold[sel] = False
        self.heading_hold[sel] = False
        self._int[sel] = 0.0
        self._int_h[sel] = 0.0

    def trim_throttle(self, speed_mps):
        """Throttle [-1, 1] that holds speed_mps [m/s] in steady state (the drag cancelled)."""
        b = self.swarm
        v = np.asarray(speed_mps, dtype=float)
        thrust = (b.xu * v + b.xuu * np.abs(v) * v) / (1.0 - SPEED_LOSS_PER_SEA_STATE
                                                         * b.sea_state)
        return np.clip(np.where(thrust >= 0.0, thrust / b.t_max, thrust / (b.t_max * b.rev)),
                       -1.0, 1.0)

    def update(self, dt: float) -> None:
        """Compute the throttle and rudder of the boats with holds and command them."""
        raise NotImplementedError


class HeadingSpeedControl(Holds):
    """Speed and heading holds for every boat of a BoatSwarm (arrays of shape (N,))."""

    def __init__(self, swarm: BoatSwarm, speed_gain=0.5, heading_gain=0.8, speed_i_gain=0.05,
                 rate_gain=1.0):
        """Gains [1/s] (speed_i_gain [1/s^2]), scalars or per-boat arrays."""
        super().__init__(swarm)
        n = len(swarm)
        self.speed_gain = np.full(n, float(speed_gain))
        self.heading_gain = np.full(n, float(heading_gain))
        self.speed_i_gain = np.full(n, float(speed_i_gain))
        self.rate_gain = np.full(n, float(rate_gain))
        # the largest yaw rate the rudder gives at top speed (steady Nomoto)
        self.r_max = swarm.k_n * swarm.rudder_max

    def update(self, dt: float) -> None:
        """Compute the throttle and rudder of the boats with holds and command them."""
        b = self.swarm
        if not (self.speed_hold.any() or self.heading_hold.any()):
            return
        u, r = b.u, b.r
        err = self.speed_sp - u
        a_des = self.speed_gain * err + self.speed_i_gain * self._int
        thrust = (b.xu * u + b.xuu * np.abs(u) * u + b.mass * a_des) \
            / (1.0 - SPEED_LOSS_PER_SEA_STATE * b.sea_state)
        thr = np.where(thrust >= 0.0, thrust / b.t_max, thrust / (b.t_max * b.rev))
        run = self.speed_hold & (np.abs(thr) < 1.0) & (np.abs(err) < INTEGRATE_BELOW_MPS)
        self._int = np.where(run, self._int + err * dt, self._int)
        thr = np.clip(thr, -1.0, 1.0)
        r_des = np.clip(self.heading_gain * wrap_pi(self.heading_sp - b.psi), -self.r_max,
                        self.r_max)
        gain = b.k_n * np.maximum(u / b.u_top, MIN_SPEED_RATIO)
        rudder = (r_des + b.alpha * r_des ** 3 + b.t_n * self.rate_gain * (r_des - r)) / gain
        b.command(np.where(self.speed_hold, thr, b.throttle_cmd),
                  np.where(self.heading_hold, rudder, b.rudder_cmd))


class PidControl(Holds):
    """The USV UI's PID speed and heading control (SimConfig gas_p/i/d, steering_p/i/d).

    Units (ours; the seed gives the gains without units):
    throttle = trim(U_sp) + gas_p e + gas_i integral(e) - gas_d u'   with e = U_sp - u [m/s],
               the throttle as a fraction of full (0..1), trim the throttle that holds U_sp in
               calm water (the model's drag cancelled); D acts on the measured acceleration.
    rudder   = rudder_max (steering_p h + steering_i integral(h) - steering_d r)   clipped to
               +-rudder_max, h = heading error [deg], r = yaw rate [deg/s]: the output is a
               fraction of full rudder per degree.
    Integrals run only while their output is not saturated (anti-windup). Forward only:
    the UI's throttle is 0..100 %.
    """

    def __init__(self, swarm: BoatSwarm, gas_pid=(0.1, 0.001, 0.5),
                 steering_pid=(0.15, 0.001, 0.13)):
        """gas_pid, steering_pid: (p, i, d) in the units above."""
        super().__init__(swarm)
        self.gas = tuple(float(g) for g in gas_pid)
        self.steering = tuple(float(g) for g in steering_pid)

    def update(self, dt: float) -> None:
        """Compute the throttle and rudder of the boats with holds and command them."""
        b = self.swarm
        if not (self.speed_hold.any() or self.heading_hold.any()):
            return
        kp, ki, kd = self.gas
        err = self.speed_sp - b.u
        thr = self.trim_throttle(self.speed_sp) + kp * err + ki * self._int - kd * b.u_dot
        run = self.speed_hold & (thr > 0.0) & (thr < 1.0)
        self._int = np.where(run, self._int + err * dt, self._int)
        thr = np.clip(thr, 0.0, 1.0)
        sp, si, sd = self.steering
        h = np.degrees(wrap_pi(self.heading_sp - b.psi))
        out = sp * h + si * self._int_h - sd * np.degrees(b.r)
        run = self.heading_hold & (np.abs(out) < 1.0)
        self._int_h = np.where(run, self._int_h + h * dt, self._int_h)
        rudder = np.clip(out, -1.0, 1.0) * b.rudder_max
        b.command(np.where(self.speed_hold, thr, b.throttle_cmd),
                  np.where(self.heading_hold, rudder, b.rudder_cmd))


def check_manual(throttle: Sequence[float], rudder: Sequence[float]
                 ) -> Tuple[Optional[float], Optional[float]]:
    """A boat's manual command (AeroSim's effector_command arrays), checked.

    At most one throttle in [-1, 1] and one finite rudder [rad]; at least one of them. Returns
    (throttle, rudder), None for an axis not given; FieldError names what is refused.
    """
    thr, rud = list(throttle), list(rudder)
    if not thr and not rud:
        raise FieldError('value', 'neither throttle_cmd nor rudder_cmd_angle_rad given')
    if len(thr) > 1 or len(rud) > 1:
        raise FieldError('value', f'one throttle and one rudder, got {len(thr)} and {len(rud)}')
    return (number(thr[0], 'throttle_cmd', -1.0, 1.0) if thr else None,
            number(rud[0], 'rudder_cmd_angle_rad') if rud else None)
