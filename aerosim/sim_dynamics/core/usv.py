"""3-DOF surface-vessel model for N boats at once (pure numpy, no rclpy, no per-boat loop).

Frames: local NED around the scenario origin (north ``n``, east ``e`` [m]); heading ``psi``
[rad] compass (0 = north, clockwise positive); body surge ``u`` (forward) and sway ``v``
(starboard) [m/s]; yaw rate ``r`` [rad/s] (positive = turning to starboard). Every state and
input is an array of shape (N,); boats of several types are stacked (per-boat parameter arrays).

Model (per boat):
    throttle    thr' = slew toward thr_cmd at ``gas_output_rate`` [1/s] (the protocol's
                gas_outputRate, % per second / 100)
    rudder      delta' = slew toward clip(delta_cmd, +-rudder_max) at rudder_rate
    thrust      T = T_max * thr (thr >= 0), T_max * reverse_ratio * thr (thr < 0), where
                T_max = X_u U_top + X_uu U_top^2: full throttle gives exactly the top speed
                (VRX's recipe)
    surge       (m + m_a) u' = T (1 - speed_loss) - X_u u - X_uu |u| u
    yaw         T_n r' = K_n a delta - r - alpha r^3   (speed-scaled Nomoto, with the optional
                cubic term of the nonlinear Nomoto model); authority a = max(u / U_top,
                PROP_WASH |thr|): at low speed the propeller wash over the rudder (twin
                hulls: differential thrust) still turns the boat, as when turning in place
    sway        tau_v v' = -k_v u r - v   (the drift outward in a turn)
    kinematics  n' = u cos psi - v sin psi + c_n + w_n,  e' = u sin psi + v cos psi + c_e + w_e
                (c: current, w = windage * wind: drift), psi' = r
Sea state (WMO 0..9): a speed loss, and the waves' motion of the hull: bounded roll and pitch
oscillations and a heave of half the significant wave height (a small craft rides the waves),
each a sine of the wave period (not fed back into the planar motion). The heave moves the
hull's reference point (the waterline) up and down: a deck on the hull (sim_core.deck) rises
and falls with it. Integration: semi-implicit Euler at a fixed step
(the fast states, throttle and rudder, are slew-limited; boats are slow against 10..100 Hz).
"""

import math
from typing import Annotated, Any, Optional, Sequence

import numpy as np
from pydantic import Field

from sim_core.deck import DeckSpec
from sim_core.errors import ConfigError
from sim_core.schema import FileModel, quantity
from sim_core.units import wrap_pi

# WMO sea state code -> significant wave height [m] (middle of each band; 9: "over 14 m").
WMO_WAVE_HEIGHT_M = (0.0, 0.05, 0.3, 0.875, 1.875, 3.25, 5.0, 7.5, 11.5, 14.0)
# Speed loss at sea state s [-]: SPEED_LOSS_PER_SEA_STATE * s, a rule of thumb for small craft.
SPEED_LOSS_PER_SEA_STATE = 0.04
MAX_ROLL_RAD = math.radians(25.0)
# Rudder authority from the propeller wash per unit throttle [-] (low-speed turning).
PROP_WASH = 0.5
MAX_PITCH_RAD = math.radians(15.0)


def rudder_aerosim_starboard(rudder_rad):
    """Rudder angle [rad] between AeroSim's and the model's sign (either way: one sign flip).

    AeroSim's rudder_cmd_angle_rad: positive = trailing edge to port, the bow turns to port.
    The model: positive = the bow turns to starboard, the NED yaw sense.
    """
    return -rudder_rad


Text = Annotated[str, Field(min_length=1)]


def _pos(default, description: str, unit: str) -> Any:
    """A parameter > 0."""
    return quantity(default, description, unit, gt=0.0)


def _nonneg(default, description: str, unit: str) -> Any:
    """A parameter >= 0."""
    return quantity(default, description, unit, ge=0.0)


class BoatType(FileModel):
    """Parameters of one boat type (SI; YAML files in kinds/boat/params, each with its source).

    The meaning of each in the model: this module's docstring.
    """

    what = 'boat type'
    name: Text = Field(..., description='Its name')
    source: Text = Field(..., description='Where its numbers come from')
    length_m: float = _pos(..., 'Hull length (contact circle, viewers)', 'm')
    mass_kg: float = _pos(..., 'Mass', 'kg')
    added_mass_ratio: float = _nonneg(..., 'Surge added mass / mass', '-')
    drag_linear: float = _pos(..., 'Linear surge drag X_u', 'N/(m/s)')
    drag_quadratic: float = _nonneg(..., 'Quadratic surge drag X_uu', 'N/(m/s)^2')
    top_speed_mps: float = _pos(..., 'Speed at full throttle (sets the maximum thrust)',
                                'm/s')
    reverse_thrust_ratio: float = _nonneg(..., 'Reverse / forward thrust at full throttle', '-')
    nomoto_K: float = _pos(..., 'Nomoto gain: steady yaw rate per rad of rudder at top speed',
                           '1/s')
    nomoto_T: float = _pos(..., 'Nomoto yaw time constant', 's')
    nomoto_alpha: float = _nonneg(..., 'Cubic yaw damping (0 = linear Nomoto)', 's^2/rad^2')
    rudder_max_deg: float = quantity(..., 'Rudder limit, +-', 'deg', gt=0.0, le=90.0)
    rudder_rate_dps: float = _pos(..., 'Rudder slew rate', 'deg/s')
    sway_gain: float = _nonneg(..., 'Sway speed per (u r) in turns', 's')
    sway_tau_s: float = _pos(..., 'Sway time constant', 's')
    windage: float = _nonneg(..., 'Drift speed per wind speed', '-')
    deck: Optional[DeckSpec] = Field(None, description='A landing deck on the hull '
                                     '(sim_core.deck), optional')

    @property
    def max_thrust_n(self) -> float:
        """Forward thrust at full throttle [N]: balances the drag at the top speed."""
        u = self.top_speed_mps
        return self.drag_linear * u + self.drag_quadratic * u * u


class BoatSwarm:
    """N boats stepped together; every attribute below is an array of shape (N,)."""

    def __init__(self, types: Sequence[BoatType]):
        """types: one BoatType per boat (boats of one type share the same object)."""
        if not types:
            raise ConfigError('a swarm needs at least one boat')
        self.types = tuple(types)
        n = len(types)

        def col(getter):
            return np.array([getter(t) for t in types], dtype=float)

        self.mass = col(lambda t: t.mass_kg * (1.0 + t.added_mass_ratio))
        self.xu = col(lambda t: t.drag_linear)
        self.xuu = col(lambda t: t.drag_quadratic)
        self.u_top = col(lambda t: t.top_speed_mps)
        self.t_max = col(lambda t: t.max_thrust_n)
        self.rev = col(lambda t: t.reverse_thrust_ratio)
        self.k_n = col(lambda t: t.nomoto_K)
        self.t_n = col(lambda t: t.nomoto_T)
        self.alpha = col(lambda t: t.nomoto_alpha)
        self.rudder_max = np.radians(col(lambda t: t.rudder_max_deg))
        self.rudder_rate = np.radians(col(lambda t: t.rudder_rate_dps))
        self.k_v = col(lambda t: t.sway_gain)
        self.tau_v = col(lambda t: t.sway_tau_s)
        self.windage = col(lambda t: t.windage)
        self.length = col(lambda t: t.length_m)
        self.n = np.zeros(n)
        self.e = np.zeros(n)
        self.psi = np.zeros(n)
        self.u = np.zeros(n)
        self.v = np.zeros(n)
        self.r = np.zeros(n)
        self.u_dot = np.zeros(n)
        self.v_dot = np.zeros(n)
        self.r_dot = np.zeros(n)
        self.throttle = np.zeros(n)
        self.rudder = np.zeros(n)
        self.throttle_cmd = np.zeros(n)
        self.rudder_cmd = np.zeros(n)
        self.gas_rate = np.ones(n)          # throttle slew [1/s] (gas_outputRate 100 %/s)
        self.active = np.ones(n, dtype=bool)   # False: stopped (health 0, collision)
        self.roll = np.zeros(n)
        self.pitch = np.zeros(n)
        self.roll_rate = np.zeros(n)        # rad/s: d(roll)/dt of the wave motion
        self.pitch_rate = np.zeros(n)       # rad/s: d(pitch)/dt
        self.heave = np.zeros(n)            # m, up: the waves' vertical motion of the hull
        self.heave_rate = np.zeros(n)       # m/s
        self.heave_acc = np.zeros(n)        # m/s^2
        self._phase = np.random.default_rng(0).uniform(0.0, 2 * math.pi, n)
        self.t = 0.0
        self.current_ne = np.zeros(2)       # m/s
        self.wind_ne = np.zeros(2)          # m/s, the air's velocity
        self.sea_state = 0

    def __len__(self) -> int:
        """Number of boats."""
        return len(self.types)

    def set_environment(self, current_ne=(0.0, 0.0), wind_ne=(0.0, 0.0),
                        sea_state: int = 0, wave_seed: int = 0) -> None:
        """Current and wind [m/s] (north, east: velocity of the water / air) and WMO sea state.

        wave_seed: the phases of each boat's wave motion (0: the default phases).
        """
        self._phase = np.random.default_rng(int(wave_seed)).uniform(0.0, 2 * math.pi,
                                                                     len(self.types))
        if not (isinstance(sea_state, int) and 0 <= sea_state <= 9):
            raise ConfigError(f'sea_state: must be a WMO code 0..9, got {sea_state!r}')
        c, w = np.asarray(current_ne, dtype=float), np.asarray(wind_ne, dtype=float)
        if c.shape != (2,) or w.shape != (2,) or not (np.isfinite(c).all()
                                                       and np.isfinite(w).all()):
            raise ConfigError('current_ne / wind_ne: two finite numbers (north, east) each')
        self.current_ne, self.wind_ne, self.sea_state = c, w, sea_state

    def command(self, throttle, rudder_rad, idx=None) -> None:
        """Set throttle [-1, 1] and rudder [rad] commands (all boats, or the boats idx).

        Values are clipped to the boat's limits; NaN/inf are rejected (ValueError) and change
        nothing.
        """
        thr = np.asarray(throttle, dtype=float)
        rud = np.asarray(rudder_rad, dtype=float)
        if not (np.isfinite(thr).all() and np.isfinite(rud).all()):
            raise ValueError('throttle and rudder must be finite')
        sel = slice(None) if idx is None else idx
        self.throttle_cmd[sel] = np.clip(thr, -1.0, 1.0)
        self.rudder_cmd[sel] = np.clip(rud, -self.rudder_max[sel], self.rudder_max[sel])

    def step(self, dt: float) -> None:
        """Advance every boat by dt [s]."""
        on = self.active
        # actuators: slew-limited toward the commands; a stopped boat's actuators go to zero
        thr_cmd = np.where(on, self.throttle_cmd, 0.0)
        rud_cmd = np.where(on, self.rudder_cmd, 0.0)
        self.throttle += np.clip(thr_cmd - self.throttle, -self.gas_rate * dt,
                                 self.gas_rate * dt)
        self.rudder += np.clip(rud_cmd - self.rudder, -self.rudder_rate * dt,
                               self.rudder_rate * dt)
        thrust = self.t_max * np.where(self.throttle >= 0.0, self.throttle,
                                       self.rev * self.throttle)
        thrust *= 1.0 - SPEED_LOSS_PER_SEA_STATE * self.sea_state
        u, v, r = self.u, self.v, self.r
        self.u_dot = (thrust - self.xu * u - self.xuu * np.abs(u) * u) / self.mass
        # rudder authority: from the speed through the water, or from the propeller's wash
        # over the rudder / differential thrust at low speed ("kick ahead")
        authority = np.maximum(u / self.u_top, PROP_WASH * np.abs(self.throttle))
        self.r_dot = (self.k_n * authority * self.rudder - r
                      - self.alpha * r * r * r) / self.t_n
        self.v_dot = (-self.k_v * u * r - v) / self.tau_v
        self.u = u + self.u_dot * dt
        self.v = v + self.v_dot * dt
        self.r = r + self.r_dot * dt
        vn, ve = self.ground_velocity_ne()
        self.n += vn * dt
        self.e += ve * dt
        self.psi = wrap_pi(self.psi + self.r * dt)
        self.t += dt
        self.waves()

    def waves(self) -> None:
        """The waves' motion of every hull (roll, pitch, heave and their rates) at time t."""
        h = WMO_WAVE_HEIGHT_M[self.sea_state]
        if h == 0.0:
            for a in (self.roll, self.pitch, self.roll_rate, self.pitch_rate, self.heave,
                      self.heave_rate, self.heave_acc):
                a[:] = 0.0
            return
        # Slope-like amplitudes: wave height over boat length, bounded; a period that grows
        # with the wave height (deep water, steepness ~1/20).
        period = max(1.0, math.sqrt(2 * math.pi * 20.0 * h / 9.81))
        w = 2 * math.pi / period
        roll_amp = np.minimum(MAX_ROLL_RAD, np.arctan(h / self.length))
        pitch_amp = np.minimum(MAX_PITCH_RAD, 0.5 * np.arctan(h / self.length))
        a_roll, a_pitch = w * self.t + self._phase, 0.8 * w * self.t + 1.3 * self._phase
        self.roll = roll_amp * np.sin(a_roll)
        self.pitch = pitch_amp * np.sin(a_pitch)
        # their exact time derivatives: the body rates p, q follow the attitude
        self.roll_rate = roll_amp * w * np.cos(a_roll)
        self.pitch_rate = pitch_amp * 0.8 * w * np.cos(a_pitch)
        # heave: half the significant wave height, at the wave frequency, its own phase
        a_heave = w * self.t + 2.1 * self._phase
        self.heave = 0.5 * h * np.sin(a_heave)
        self.heave_rate = 0.5 * h * w * np.cos(a_heave)
        self.heave_acc = -0.5 * h * w * w * np.sin(a_heave)

    def ground_velocity_ne(self, idx=None):
        """(north, east) velocity over ground [m/s] of every boat (arrays (N,)) or of idx.

        The body velocity rotated by the heading, plus current and wind drift: the kinematics
        of step().
        """
        sel = slice(None) if idx is None else idx
        psi, u, v = self.psi[sel], self.u[sel], self.v[sel]
        c, s = np.cos(psi), np.sin(psi)
        drift = self.current_ne + np.multiply.outer(self.windage[sel], self.wind_ne)
        return (u * c - v * s + drift[..., 0], u * s + v * c + drift[..., 1])


def boat_state_ned(b: BoatSwarm, i: int = 0):
    """(p_ned, v_ned, euler (roll, pitch, yaw), w_frd, a_ned) of boat i.

    Down: minus the waves' heave (0 in calm water).

    a_ned: the acceleration over ground of the body motion (surge/sway rates plus the turn's
    centripetal terms), without the constant drift. w_frd: the body rates (p, q, r) of the
    Euler angle rates (roll and pitch of the waves, the heading rate r), ZYX kinematics:
    p = phi' - psi' sin(theta), q = theta' cos(phi) + psi' sin(phi) cos(theta),
    r_b = psi' cos(phi) cos(theta) - theta' sin(phi).
    """
    psi, u, v, r = b.psi[i], b.u[i], b.v[i], b.r[i]
    phi, theta = float(b.roll[i]), float(b.pitch[i])
    dphi, dtheta = float(b.roll_rate[i]), float(b.pitch_rate[i])
    sphi, cphi, sth, cth = math.sin(phi), math.cos(phi), math.sin(theta), math.cos(theta)
    w_frd = np.array([dphi - r * sth, dtheta * cphi + r * sphi * cth,
                      r * cphi * cth - dtheta * sphi])
    c, s = math.cos(psi), math.sin(psi)
    vn, ve = b.ground_velocity_ne(i)
    ax_b, ay_b = b.u_dot[i] - v * r, b.v_dot[i] + u * r
    return (np.array([b.n[i], b.e[i], -float(b.heave[i])]),
            np.array([vn, ve, -float(b.heave_rate[i])]),
            (phi, theta, float(psi)), w_frd,
            np.array([c * ax_b - s * ay_b, s * ax_b + c * ay_b, -float(b.heave_acc[i])]))
