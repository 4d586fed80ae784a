"""The multirotor of a world: sim_dynamics.core.multirotor behind sim_core.kinds.VehicleModel.

QuadModel wraps the rigid body and rotors of a Multirotor (pure, no rclpy): built from a world
member by ``from_member(member, environment)``, commanded by its controller's throttles
(``set_throttles([0..1])``, or ``apply_command``: a MAVLink bridge's mixer output, an
EffectorCommand's throttle from any ROS node; FieldError names what is refused). Its contact
sphere is collision.body_radius (1.5 x the longest rotor arm), as a quad fleet's. It may rest
on a boat's deck (its kind lands_on_decks): ``carry`` sets it in the deck's state.
"""

import math
from typing import Optional, Sequence, Tuple

from sim_core.deck import DeckSpec
from sim_core.frames import VehicleSample
from sim_core.kinds import Carried
from sim_core.members import Member
from sim_core.scenario import Environment, Scenario
from sim_core.validate import FieldError, number
from sim_dynamics.core.collision import body_radius
from sim_dynamics.core.multirotor import Multirotor, MultirotorParams
from sim_dynamics.core.plane import EffectorCommand


def _floats(a) -> Tuple[float, ...]:
    return tuple(float(x) for x in a)


class QuadModel:
    """A multirotor of a world (sim_dynamics.core.multirotor.Multirotor)."""

    def __init__(self, params: MultirotorParams, scenario: Scenario,
                 environment: Optional[Environment] = None):
        """The vehicle of params at scenario's start; environment: wind, gravity."""
        env = scenario.environment if environment is None else environment
        self.params = params
        self.scenario = scenario
        self.model = Multirotor(params, wind_enu=env.wind_enu, gravity=env.gravity)
        self.mass_kg = float(params.mass)
        self.radius_m = body_radius([r.position for r in params.rotors])
        self.deck: Optional[DeckSpec] = None
        self.throttles = [0.0] * len(params.rotors)
        self.carried: Optional[Carried] = None      # resting on a moving deck
        self.reset()

    @classmethod
    def from_member(cls, member: Member, environment: Optional[Environment] = None
                    ) -> 'QuadModel':
        """The quad of member (its vehicle file and start; environment: the scenario's)."""
        sc = member.scenario
        return cls(MultirotorParams.from_yaml(sc.vehicle_file), sc, environment)

    @property
    def motors(self) -> int:
        """Number of motors (the length of set_throttles' list)."""
        return len(self.params.rotors)

    def hover_throttle(self) -> float:
        """The throttle of every motor that carries the weight [0..1]."""
        return self.params.hover_throttle()

    def reset(self) -> None:
        """At the start: at rest, ENU yaw from the compass heading."""
        sc = self.scenario
        self.model.reset(p_enu=sc.initial_position_enu,
                         yaw=math.radians(90.0 - sc.initial_yaw_deg))
        self.throttles = [0.0] * self.motors
        self.carried = None

    def set_throttles(self, throttles: Sequence[float]) -> None:
        """The motor commands, one per motor in [0, 1] (clipped); ValueError on a bad count."""
        self.model.set_throttles(throttles)
        self.throttles = [float(t) for t in throttles]

    def apply_command(self, cmd) -> None:
        """A controller's throttles, one per motor in [0, 1]; FieldError if refused.

        cmd: the throttles (a MAVLink bridge's mixer), or an EffectorCommand (its throttle:
        AeroSim's AircraftEffectorCommand from any ROS node).
        """
        if isinstance(cmd, EffectorCommand):
            cmd = cmd.throttle
        if isinstance(cmd, (str, bytes)) or not hasattr(cmd, '__len__'):
            raise FieldError('type', f'a multirotor takes one throttle per motor, got '
                             f'{type(cmd).__name__}')
        thr = list(cmd)
        if len(thr) != self.motors:
            raise FieldError('value', f'{len(thr)} throttles, the vehicle has {self.motors} '
                             'motors')
        for k, x in enumerate(thr):
            number(x, f'throttle[{k}]', 0.0, 1.0)
        self.set_throttles(thr)

    def step(self, dt_s: float) -> None:
        """Integrate dt_s [s] with the throttles in force."""
        self.model.step(dt_s)

    def idle(self) -> bool:
        """Every motor commanded to stop (a landing's end)."""
        return not any(t > 0.0 for t in self.throttles)

    def sample(self, t_ns: int) -> VehicleSample:
        """The state now, stamped t_ns.

        Carried by a deck: the deck point's acceleration (what the IMU feels there).
        """
        s, acc = self.model.raw, self.model.acceleration
        a = _floats(self.carried.a_enu) if self.carried is not None else acc[0:3]
        return VehicleSample(t_ns, s[0:3], s[3:6], s[6:10], a, s[10:13])

    def angular_acceleration_flu(self) -> Tuple[float, float, float]:
        """Body angular acceleration [rad/s^2], FLU (VehicleState's angular_acceleration)."""
        if self.carried is not None:
            return (0.0, 0.0, 0.0)
        a = self.model.acceleration
        return (a[3], a[4], a[5])

    def carry(self, carried: Optional[Carried]) -> None:
        """Rest on a moving deck in the state carried (None: free, as the last state left it).

        The rigid body takes the deck's state, the rotors keep their speeds; the next step
        integrates from it freely (the deck contact decides after it whether the vehicle
        lifted off or is carried again).
        """
        self.carried = carried
        if carried is not None:
            self.model.set_rigid(carried.p_enu, carried.v_enu, carried.q_enu_flu,
                                 carried.w_flu)

    def push(self, dp_enu: Sequence[float], dv_enu: Sequence[float]) -> None:
        """Move by dp_enu [m], change the velocity by dv_enu [m/s]; the ground still holds."""
        self.model.push(dp_enu, dv_enu)

    def on_surface(self) -> bool:
        """Resting on (touching) the ground plane z = 0, or carried by a deck."""
        return self.model.on_ground or self.carried is not None
