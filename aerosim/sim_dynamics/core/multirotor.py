"""6-DOF multirotor rigid-body model (pure, no rclpy).

Frames: world ENU (suffix ``_enu``), body FLU (``_flu``); the quaternion ``q_enu_flu`` =
(w, x, y, z) rotates body vectors into the world. Units SI throughout.

Model, per rotor i at body position r_i with spin direction d_i (+1 CCW seen from above, i.e.
spin vector +z_flu; -1 CW):
    rotor speed      omega_i' = (omega_cmd_i - omega_i) / tau   (tau_up / tau_down)
    thrust           T_i = k_f * omega_i^2          along +z_flu
    reaction torque  Q_i = -d_i * k_m * omega_i^2   about z_flu
    body drag        F_d = -(c_lin * v_flu + c_quad * |v_flu| * v_flu)
                     (v_flu: air-relative, per axis)
    angular drag     M_d = -c_ang * w_flu
    translational    m a_enu = R_enu_flu (sum T_i z_flu + F_d) + m g_enu
    rotational       I w_flu' = sum(r_i x T_i z_flu) + sum Q_i z_flu + M_d - w_flu x I w_flu
Ground: a flat plane at z = 0 (the landing-gear contact point is base_link). In contact, the
plane supports the vehicle (no downward acceleration), damps horizontal and angular motion, and
the position is clamped after each step: no sinking, no bounce.
Integration: classic RK4 at a fixed step, quaternion renormalized after each step, compiled with
numba (sim_dynamics.core.multirotor_kernel: the equations above as array code).
Not modelled: rotor gyroscopic effects, blade flapping, ground effect, battery sag.
"""

from dataclasses import dataclass, field
import math
from typing import Annotated, Any, Literal, Optional, Sequence, Tuple, get_args

import numpy as np
from pydantic import BeforeValidator, Field, WithJsonSchema, model_validator

from sim_core.schema import FileModel, quantity, rule, vector
from sim_dynamics.core import multirotor_kernel as kern

GRAVITY = 9.80665  # m/s^2, standard gravity
# Ground contact damping: rates at which horizontal and angular velocity decay when resting [1/s].
GROUND_LINEAR_DAMPING = 8.0
GROUND_ANGULAR_DAMPING = 20.0
ThrottleCurve = Literal['speed', 'thrust']
THROTTLE_CURVES = get_args(ThrottleCurve)
SPINS = {'ccw': 1, 'cw': -1}        # a rotor's direction seen from above -> its sign
Moment = Annotated[float, Field(gt=0.0)]
Drag = Annotated[float, Field(ge=0.0)]


def _spin(v: Any) -> Any:
    """A rotor file's direction ('ccw', 'cw') as its sign (+1, -1); anything else refused."""
    if isinstance(v, str) and v in SPINS:
        return SPINS[v]
    raise rule(f'must be ccw or cw (seen from above), got {v!r:.40}')


# The file says ccw or cw; the model keeps the sign (+1 CCW, -1 CW), the kernel's.
Spin = Annotated[int, BeforeValidator(_spin),
                 WithJsonSchema({'enum': list(SPINS), 'description': 'Spin direction seen '
                                 'from above: ccw or cw'})]


class Rotor(FileModel):
    """One rotor: position in body FLU [m] and spin direction (+1 CCW, -1 CW seen from above)."""

    position: Tuple[float, float, float] = vector(..., 'Its hub, body FLU', 'm')
    direction: Spin


def _vec3(description: str, unit: str) -> Any:
    return vector((0.0, 0.0, 0.0), description + ', body FLU axes', unit)


class MultirotorParams(FileModel):
    """Physical parameters of a multirotor (SI units; YAML files in kinds/multirotor/params).

    throttle_curve 'speed': omega_cmd = omega_min + throttle * (omega_max - omega_min) (Gazebo
    motor model); 'thrust': omega_cmd = omega_max * sqrt(throttle), thrust linear in throttle
    (jMAVSim).
    """

    what = 'vehicle file'
    name: str = Field('multirotor', description='Its name')
    mass: float = quantity(..., 'Mass', 'kg', gt=0.0, le=1000.0)
    inertia: Tuple[Moment, Moment, Moment] = vector(
        ..., 'Principal moments Ixx, Iyy, Izz (principal axes = body FLU axes)', 'kg m^2')
    rotors: Tuple[Rotor, ...] = vector(..., 'Its rotors in motor index order (PX4 order for '
                                       'Quad X)', min_length=1, max_length=16)
    k_f: float = quantity(..., 'Thrust coefficient', 'N/(rad/s)^2', gt=0.0)
    k_m: float = quantity(..., 'Reaction torque coefficient', 'N m/(rad/s)^2', ge=0.0)
    omega_max: float = quantity(..., 'Rotor speed at throttle 1', 'rad/s', gt=0.0, le=1e5)
    omega_min: float = quantity(0.0, "Rotor speed at throttle 0 ('speed' curve)", 'rad/s',
                                ge=0.0)
    tau_up: float = quantity(0.0125, 'Motor time constant spinning up', 's', ge=1e-4, le=10.0)
    tau_down: float = quantity(0.025, 'Motor time constant spinning down', 's', ge=1e-4,
                               le=10.0)
    throttle_curve: ThrottleCurve = Field('speed', description='speed: rotor speed linear in '
                                          'throttle (Gazebo); thrust: thrust linear (jMAVSim)')
    drag_linear: Tuple[Drag, Drag, Drag] = _vec3('Linear drag', 'N/(m/s)')
    drag_quadratic: Tuple[Drag, Drag, Drag] = _vec3('Quadratic drag', 'N/(m/s)^2')
    drag_angular: Tuple[Drag, Drag, Drag] = _vec3('Angular drag', 'N m/(rad/s)')
    source: str = Field('', description='Where its numbers come from')

    @model_validator(mode='after')
    def _flies(self) -> 'MultirotorParams':
        if self.omega_min >= self.omega_max:
            raise rule(f'must be < omega_max ({self.omega_max:g} rad/s), got '
                       f'{self.omega_min:g}', 'omega_min')
        if self.max_thrust() <= self.weight:
            raise rule(f'max thrust {self.max_thrust():.2f} N does not exceed the weight '
                       f'{self.weight:.2f} N; the vehicle cannot fly')
        return self

    @property
    def weight(self) -> float:
        """Weight [N]."""
        return self.mass * GRAVITY

    def max_thrust(self) -> float:
        """Total thrust at full throttle [N]."""
        return len(self.rotors) * self.k_f * self.omega_max ** 2

    def throttle_to_omega(self, throttle: float) -> float:
        """Map a throttle 0..1 to a commanded rotor speed [rad/s]."""
        if self.throttle_curve == 'thrust':
            return self.omega_max * math.sqrt(throttle)
        return self.omega_min + throttle * (self.omega_max - self.omega_min)

    def omega_to_throttle(self, omega: float) -> float:
        """Inverse of throttle_to_omega."""
        if self.throttle_curve == 'thrust':
            return (omega / self.omega_max) ** 2
        return (omega - self.omega_min) / (self.omega_max - self.omega_min)

    def hover_omega(self) -> float:
        """Rotor speed at which the rotors together carry the weight [rad/s]."""
        return math.sqrt(self.weight / (len(self.rotors) * self.k_f))

    def hover_throttle(self) -> float:
        """Analytic hover throttle (all rotors equal) [0..1]."""
        return self.omega_to_throttle(self.hover_omega())


@dataclass
class MultirotorState:
    """A snapshot of the state, as numpy arrays (SI, ENU/FLU)."""

    p_enu: np.ndarray        # m, shape (3,)
    v_enu: np.ndarray        # m/s, shape (3,)
    q_enu_flu: np.ndarray       # (w, x, y, z), shape (4,)
    w_flu: np.ndarray        # rad/s, shape (3,)
    omega: np.ndarray      # rad/s, shape (n_rotors,)
    a_enu: np.ndarray        # m/s^2, shape (3,), kinematic acceleration (gravity excluded)
    w_dot_flu: np.ndarray    # rad/s^2, shape (3,)
    on_ground: bool


@dataclass
class Multirotor:
    """A multirotor integrated with RK4 at a fixed step. Call ``step(dt, throttles)``."""

    params: MultirotorParams
    # read once at construction into the compiled kernel's constants
    wind_enu: tuple = (0.0, 0.0, 0.0)        # m/s, ENU, air velocity over ground
    gravity: float = GRAVITY               # m/s^2
    _s: np.ndarray = field(init=False, repr=False)     # the kernel's state vector
    _acc: tuple = field(default=(0.0, 0.0, 0.0, 0.0, 0.0, 0.0), repr=False)

    def __post_init__(self):
        """Start at rest on the ground at the origin, level, facing east (ENU yaw 0)."""
        p = self.params
        self._n = len(p.rotors)
        # The constants of the compiled kernel (sim_dynamics.core.multirotor_kernel)
        self._rotor_k = np.array([(r.position[1] * p.k_f, -r.position[0] * p.k_f,
                                   -r.direction * p.k_m) for r in p.rotors], dtype=float)
        k = np.zeros(kern.BODY_K_LEN)
        k[kern.K_F], k[kern.INV_M] = p.k_f, 1.0 / p.mass
        k[kern.IXX:kern.IZZ + 1] = p.inertia
        k[kern.INV_IXX:kern.INV_IZZ + 1] = [1.0 / i for i in p.inertia]
        k[kern.CL:kern.CL + 3], k[kern.CQ:kern.CQ + 3] = p.drag_linear, p.drag_quadratic
        k[kern.CA:kern.CA + 3] = p.drag_angular
        k[kern.GRAVITY], k[kern.TAU_UP], k[kern.TAU_DOWN] = self.gravity, p.tau_up, p.tau_down
        k[kern.GROUND_LIN], k[kern.GROUND_ANG] = GROUND_LINEAR_DAMPING, GROUND_ANGULAR_DAMPING
        self._body_k = k
        self._wind = np.array(self.wind_enu, dtype=float)
        self._d = np.zeros(13)    # rigid-body derivative at the current state
        self.reset()

    def reset(self, p_enu=(0.0, 0.0, 0.0), yaw=0.0, v_enu=(0.0, 0.0, 0.0), omega=None) -> None:
        """Set the state: position [m] ENU, yaw [rad] ENU, velocity [m/s], rotor speeds [rad/s]."""
        om = [0.0] * self._n if omega is None else [float(x) for x in omega]
        if len(om) != self._n:
            raise ValueError(f'omega: expected {self._n} rotor speeds, got {len(om)}')
        self._s = np.array([float(p_enu[0]), float(p_enu[1]), max(0.0, float(p_enu[2])),
                            float(v_enu[0]), float(v_enu[1]), float(v_enu[2]),
                            math.cos(yaw / 2.0), 0.0, 0.0, math.sin(yaw / 2.0),
                            0.0, 0.0, 0.0] + om)
        self._cmd = np.array(om)
        kern.body_deriv(self._s, self._rotor_k, self._body_k, self._wind, self._d)
        self._outputs()

    # --- integration -------------------------------------------------------------------------
    def set_throttles(self, throttles: Sequence[float]) -> None:
        """Set the motor commands (0..1 each, motor index order). Values are clipped to 0..1."""
        if len(throttles) != self._n:
            raise ValueError(f'throttles: expected {self._n} values, got {len(throttles)}')
        f = self.params.throttle_to_omega
        self._cmd = np.array([f(min(1.0, max(0.0, float(t)))) for t in throttles])

    def step(self, dt: float, throttles: Optional[Sequence[float]] = None) -> None:
        """Advance the state by dt [s] (RK4); optionally set new throttles first."""
        if throttles is not None:
            self.set_throttles(throttles)
        self._s = kern.rk4_step(self._s, self._cmd, self._rotor_k, self._body_k, self._wind,
                                float(dt), self._d)
        self._outputs()

    def push(self, dp_enu, dv_enu) -> None:
        """Move the vehicle by dp_enu [m] and change its velocity by dv_enu [m/s] (a contact).

        The ground still supports it (z >= 0).
        """
        s = self._s
        for k in range(3):
            s[k] += float(dp_enu[k])
            s[3 + k] += float(dv_enu[k])
        s[2] = max(0.0, s[2])
        kern.body_deriv(s, self._rotor_k, self._body_k, self._wind, self._d)
        self._outputs()

    def set_rigid(self, p_enu, v_enu, q_enu_flu, w_flu) -> None:
        """Set the rigid-body state (the rotors keep their speeds): carried by a moving deck.

        p_enu [m], v_enu [m/s], q_enu_flu (w, x, y, z; normalized here), w_flu [rad/s].
        """
        q = np.asarray(q_enu_flu, dtype=float)
        s = self._s
        s[0:3] = np.asarray(p_enu, dtype=float)
        s[2] = max(0.0, s[2])
        s[3:6] = np.asarray(v_enu, dtype=float)
        s[6:10] = q / math.sqrt(float(q @ q))
        s[10:13] = np.asarray(w_flu, dtype=float)
        kern.body_deriv(s, self._rotor_k, self._body_k, self._wind, self._d)
        self._outputs()

    def _outputs(self) -> None:
        """The state and acceleration as floats, read once per step by the accessors."""
        self._raw = tuple(self._s.tolist())
        d = self._d
        self._acc = (float(d[3]), float(d[4]), float(d[5]), float(d[10]), float(d[11]),
                     float(d[12]))

    # --- accessors -----------------------------------------------------------------------------
    @property
    def on_ground(self) -> bool:
        """True when resting on (or touching) the ground plane."""
        return self._raw[2] <= 1e-9

    def state(self) -> MultirotorState:
        """Return a snapshot of the state as numpy arrays."""
        s = self._s
        return MultirotorState(
            p_enu=np.array(s[0:3]), v_enu=np.array(s[3:6]), q_enu_flu=np.array(s[6:10]),
            w_flu=np.array(s[10:13]), omega=np.array(s[13:]), a_enu=np.array(self._acc[0:3]),
            w_dot_flu=np.array(self._acc[3:6]), on_ground=self.on_ground)

    @property
    def raw(self) -> tuple:
        """The state as a tuple of floats: p_enu(3), v_enu(3), q_enu_flu(4), w_flu(3), omega(n)."""
        return self._raw

    @property
    def acceleration(self) -> tuple:
        """(a_enu (3) m/s^2 kinematic, w_dot_flu (3) rad/s^2) at the current state."""
        return self._acc
