"""The rover's model: a kinematic bicycle on the ground (z = 0) as a VehicleModel (pure).

RoverParams is its parameter file (params/*.yaml): a sim_core.schema model. RoverModel is one rover
of a world: its state is the position (east, north [m], z = 0), the heading (ENU yaw psi
[rad], counter-clockwise from east) and the speed v along it [m/s]; its command a throttle
in [-1, 1] (the speed it asks for: throttle x top_speed_mps, reverse below 0) and a front
wheels' steering angle delta [rad] (positive left, FLU's yaw sense, as AeroSim's
wheel_steer_cmd_angle_rad). Per step dt:

    v      moves towards the throttle's speed by at most max_accel_mps2 dt (linear in dt)
    r      = v_m tan(delta) / wheelbase_m, clamped to +-max_turn_rate (v_m: the step's mean
           speed): the yaw rate of a bicycle whose wheels roll without slipping
    pose   the exact arc of speed v_m and yaw rate r over dt (a straight line when r = 0):
           e += v_m (sin(psi + r dt) - sin psi) / r, n -= v_m (cos(psi + r dt) - cos psi) / r

so the speed and turn-rate limits hold at any step, and a constant command draws an exact
circle (second order in dt while the speed changes). It rolls on the ground: a contact's
push moves it horizontally and changes its speed along its heading only (the wheels do not
slip sideways; the ground takes the rest). Contact sphere: half its length.
"""

import math
from typing import Any, Optional, Sequence, Tuple

from pydantic import Field, model_validator

from sim_core.deck import DeckSpec
from sim_core.frames import VehicleSample
from sim_core.kinds import Carried
from sim_core.members import Member
from sim_core.scenario import Environment, Scenario
from sim_core.schema import FileModel, quantity, rule
from sim_core.units import clamp
from sim_core.validate import FieldError, number
from sim_dynamics.core.plane import EffectorCommand

# the EffectorCommand fields a rover has none of
NOT_A_ROVERS = ('aileron_rad', 'elevator_rad', 'rudder_rad', 'thrust_tilt_rad', 'flap_rad',
                'speedbrake_rad', 'landing_gear', 'wheel_brake')


def _num(lo: float, hi: float, description: str, unit: str) -> Any:
    """A required number in [lo, hi]."""
    return quantity(..., description, unit, ge=lo, le=hi)


class RoverParams(FileModel):
    """One rover type (SI; its file in kinds/<kind>/params, keys as the fields)."""

    what = 'rover file'
    name: str = Field(..., min_length=1, description='Its name')
    length_m: float = _num(0.1, 20.0, 'Chassis, bumper to bumper (contact sphere, viewers)', 'm')
    width_m: float = _num(0.1, 10.0, 'Track, wheel to wheel', 'm')
    wheelbase_m: float = _num(0.05, 20.0, 'Front to rear axle (<= length_m)', 'm')
    wheel_diameter_m: float = _num(0.01, 5.0, 'Wheel diameter (drawn)', 'm')
    mass_kg: float = _num(0.1, 1.0e5, 'Mass (contacts)', 'kg')
    top_speed_mps: float = _num(0.1, 50.0, 'Speed at full throttle, forward or back', 'm/s')
    max_accel_mps2: float = _num(0.01, 20.0, 'Speed change, either way', 'm/s^2')
    max_steer_deg: float = _num(1.0, 60.0, "Front wheels' steering angle, either way", 'deg')
    max_turn_rate_dps: float = _num(1.0, 360.0, 'Yaw rate, either way', 'deg/s')

    @model_validator(mode='after')
    def _fits(self) -> 'RoverParams':
        if self.wheelbase_m > self.length_m:
            raise rule(f'{self.wheelbase_m:g} m is longer than the rover (length_m '
                       f'{self.length_m:g} m)', 'wheelbase_m')
        return self

    @property
    def max_steer_rad(self) -> float:
        """The steering limit [rad]."""
        return math.radians(self.max_steer_deg)

    @property
    def max_turn_rate_rps(self) -> float:
        """The yaw-rate limit [rad/s]."""
        return math.radians(self.max_turn_rate_dps)


class RoverModel:
    """One rover of a world (sim_core.kinds.VehicleModel; the module docstring)."""

    def __init__(self, params: RoverParams, scenario: Scenario,
                 environment: Optional[Environment] = None):
        """The rover of params at scenario's start, at rest (the environment: no effect)."""
        self.params = params
        self.scenario = scenario
        self.mass_kg = float(params.mass_kg)
        self.radius_m = 0.5 * float(params.length_m)
        self.deck: Optional[DeckSpec] = None
        self.reset()

    @classmethod
    def from_member(cls, member: Member, environment: Optional[Environment] = None
                    ) -> 'RoverModel':
        """The rover of member (its parameter file and start)."""
        sc = member.scenario
        return cls(RoverParams.from_yaml(sc.vehicle_file), sc, environment)

    def reset(self) -> None:
        """At the start: at rest on its compass heading, throttle and steering 0."""
        s = self.scenario
        self.e, self.n = float(s.initial_position_enu[0]), float(s.initial_position_enu[1])
        self.psi = math.radians(90.0 - s.initial_yaw_deg)     # ENU yaw from the compass
        self.v = 0.0
        self.r = 0.0
        self.r_dot = 0.0
        self.a_long = 0.0
        self.throttle = 0.0
        self.steer_rad = 0.0

    # --- its controller's commands ---------------------------------------------------------
    def drive(self, throttle: Optional[float] = None, steer_rad: Optional[float] = None
              ) -> None:
        """Throttle in [-1, 1] and steering angle [rad] (None: unchanged), clipped to limits.

        ValueError if not finite.
        """
        if throttle is not None:
            if not math.isfinite(throttle):
                raise ValueError(f'throttle {throttle!r}: not finite')
            self.throttle = clamp(float(throttle), -1.0, 1.0)
        if steer_rad is not None:
            if not math.isfinite(steer_rad):
                raise ValueError(f'steering {steer_rad!r}: not finite')
            m = self.params.max_steer_rad
            self.steer_rad = clamp(float(steer_rad), -m, m)

    def apply_command(self, cmd) -> None:
        """Any ROS node's EffectorCommand (controller topic), checked: FieldError if refused.

        At most one throttle_cmd in [-1, 1] and one wheel_steer_cmd_angle_rad within the
        steering limit, at least one of them (an empty array keeps that command); any other
        device is refused: a rover has none.
        """
        if not isinstance(cmd, EffectorCommand):
            raise FieldError('type', f'a rover takes an EffectorCommand, got '
                             f'{type(cmd).__name__}')
        for f in NOT_A_ROVERS:
            if len(getattr(cmd, f)):
                raise FieldError('value', f'{f}: a rover has none (throttle and wheel steer)')
        thr, steer = list(cmd.throttle), list(cmd.wheel_steer_rad)
        if not thr and not steer:
            raise FieldError('value', 'neither throttle_cmd nor wheel_steer_cmd_angle_rad given')
        if len(thr) > 1 or len(steer) > 1:
            raise FieldError('value', f'one throttle and one wheel steer angle, got {len(thr)} '
                             f'and {len(steer)}')
        m = self.params.max_steer_rad
        self.drive(number(thr[0], 'throttle_cmd[0]', -1.0, 1.0) if thr else None,
                   number(steer[0], 'wheel_steer_cmd_angle_rad[0]', -m, m) if steer else None)

    # --- the world's -----------------------------------------------------------------------
    def step(self, dt_s: float) -> None:
        """Integrate dt_s [s] with the command in force (module docstring)."""
        p = self.params
        dv = clamp(self.throttle * p.top_speed_mps - self.v, -p.max_accel_mps2 * dt_s,
                   p.max_accel_mps2 * dt_s)
        vm = self.v + 0.5 * dv
        r = clamp(vm * math.tan(self.steer_rad) / p.wheelbase_m, -p.max_turn_rate_rps,
                  p.max_turn_rate_rps)
        psi = self.psi
        if abs(r) * dt_s > 1e-9:
            self.e += vm * (math.sin(psi + r * dt_s) - math.sin(psi)) / r
            self.n -= vm * (math.cos(psi + r * dt_s) - math.cos(psi)) / r
        else:
            self.e += vm * math.cos(psi) * dt_s
            self.n += vm * math.sin(psi) * dt_s
        self.psi = math.remainder(psi + r * dt_s, math.tau)
        self.r_dot = (r - self.r) / dt_s if dt_s > 0.0 else 0.0
        self.r = r
        self.a_long = dv / dt_s if dt_s > 0.0 else 0.0
        self.v += dv

    def sample(self, t_ns: int) -> VehicleSample:
        """The state now (ENU/FLU), stamped t_ns: on the ground, level, on its heading."""
        c, s = math.cos(self.psi), math.sin(self.psi)
        a_lat = self.v * self.r                         # centripetal, to the left [m/s^2]
        return VehicleSample(t_ns, (self.e, self.n, 0.0), (self.v * c, self.v * s, 0.0),
                             (math.cos(0.5 * self.psi), 0.0, 0.0, math.sin(0.5 * self.psi)),
                             (self.a_long * c - a_lat * s, self.a_long * s + a_lat * c, 0.0),
                             (0.0, 0.0, self.r))

    def heading_deg(self) -> float:
        """Compass heading [deg] in [0, 360)."""
        return (90.0 - math.degrees(self.psi)) % 360.0

    def angular_acceleration_flu(self) -> Tuple[float, float, float]:
        """Body angular acceleration [rad/s^2], FLU (the yaw rate's change)."""
        return (0.0, 0.0, self.r_dot)

    def push(self, dp_enu: Sequence[float], dv_enu: Sequence[float]) -> None:
        """Move by dp_enu horizontally; change the speed by dv_enu along its heading only."""
        self.e += float(dp_enu[0])
        self.n += float(dp_enu[1])
        self.v += float(dv_enu[0]) * math.cos(self.psi) + float(dv_enu[1]) * math.sin(self.psi)

    def on_surface(self) -> bool:
        """Always: the ground carries it."""
        return True

    def idle(self) -> bool:
        """No throttle commanded."""
        return self.throttle == 0.0

    def carry(self, carried: Optional[Carried]) -> None:
        """A rover does not rest on a deck (its kind.yaml: no lands_on_decks)."""
        raise NotImplementedError('a rover does not land on a deck')
