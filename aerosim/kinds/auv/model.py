"""The AUV of a world: a torpedo AUV (sim_dynamics.core.auv) as a VehicleModel (pure).

AuvModel: the 6-DOF Auv on its own 100 Hz step (sim_dynamics.core.fixed_step), floating by its
reserve buoyancy; ``command(thrust_act, fins)`` (its pilot's) and ``effector()`` (AeroSim's
arrays over IMC: rudder fins and elevator fins by role, in fin order); ``holds()`` refused.
"""

import math
from typing import Optional, Sequence, Tuple

from sim_core.deck import DeckSpec
from sim_core.frames import VehicleSample, euler_ned_to_quat, ned_to_enu, q_ned_frd_to_enu_flu
from sim_core.kinds import Carried
from sim_core.members import Member
from sim_core.scenario import Environment, Scenario
from sim_core.validate import FieldError, number
from sim_dynamics.core.auv import (
    ELEVATOR,
    RUDDER,
    Auv,
    AuvType,
    fins_by_surface,
    mul_t,
    rot,
)
from sim_dynamics.core.fixed_step import FixedStep

AUV_DT_S = 1.0 / 100.0          # an AUV's own step in a world [s]


class AuvModel:
    """One AUV of a world (sim_core.kinds.VehicleModel), on its own 100 Hz step.

    Its controller (in process: its pilot, kinds/auv/controllers.py; DUNE over IMC: the
    imc_bridge's effector_command) sets ``command(thrust_act, fins)``. Contact sphere: half
    its length. It floats at the surface (on_surface: its hull breaks the surface).
    """

    def __init__(self, auv_type: AuvType, scenario: Scenario,
                 environment: Optional[Environment] = None, dt_s: float = AUV_DT_S):
        """The AUV of auv_type at scenario's start (depth: -initial z); environment: current."""
        env = scenario.environment if environment is None else environment
        self.auv_type = auv_type
        self.scenario = scenario
        c = env.current_enu
        self.auv = Auv(auv_type, (c[1], c[0], -c[2]), env.gravity)
        self.clock = FixedStep(dt_s)
        self.dt_s = self.clock.step_ns / 1e9
        self.mass_kg = float(auv_type.mass_kg)
        self.radius_m = 0.5 * float(auv_type.length_m)
        self.deck: Optional[DeckSpec] = None
        self.reset()

    @classmethod
    def from_member(cls, member: Member, environment: Optional[Environment] = None
                    ) -> 'AuvModel':
        """The AUV of member (its AUV file and start; environment: the scenario's)."""
        sc = member.scenario
        return cls(AuvType.from_yaml(sc.vehicle_file), sc, environment)

    def reset(self) -> None:
        """At the start, at rest, commands 0: at the surface unless the start is deeper."""
        s = self.scenario
        e, n, u = (float(x) for x in s.initial_position_enu)
        depth = -u if u < 0.0 else self._float_depth()
        self.auv.reset((n, e, depth), euler_ned_to_quat(0.0, 0.0,
                                                        math.radians(s.initial_yaw_deg)))
        self.clock.reset()

    def _float_depth(self) -> float:
        """The depth [m] at which it floats at rest (buoyancy = weight)."""
        a = self.auv
        return (a.weight / a.buoyancy - 0.5) * self.auv_type.diameter_m

    def command(self, thrust_act: Optional[float] = None,
                fins: Optional[Sequence[Optional[float]]] = None) -> None:
        """Thruster [-1, 1] and fin deflections [rad] in fin order (None: unchanged).

        Clipped to the vehicle's limits; ValueError if not finite.
        """
        if thrust_act is not None and not math.isfinite(thrust_act):
            raise ValueError(f'thrust {thrust_act!r}: not finite')
        if fins is not None and any(d is not None and not math.isfinite(d) for d in fins):
            raise ValueError(f'fins {list(fins)!r}: not finite')
        self.auv.command(thrust_act, fins)

    def effector(self, throttle: Sequence[float], rudders: Sequence[float],
                 elevators: Sequence[float]) -> None:
        """AeroSim's AircraftEffectorCommand arrays: thruster and fin angles, checked.

        throttle_cmd[0] in [-1, 1], the rudder fins' and the elevator fins' angles [rad], each
        in fin order (empty: unchanged); FieldError naming what is bad.
        """
        for name, arr, lo, hi in (('throttle_cmd', throttle, -1.0, 1.0),
                                  ('rudder_cmd_angle_rad', rudders, -math.pi, math.pi),
                                  ('elevator_cmd_angle_rad', elevators, -math.pi, math.pi)):
            for k, x in enumerate(arr):
                number(x, f'{name}[{k}]', lo, hi)
        n = {RUDDER: len(rudders), ELEVATOR: len(elevators)}
        have = {RUDDER: sum(f.surface == RUDDER for f in self.auv_type.fins),
                ELEVATOR: sum(f.surface == ELEVATOR for f in self.auv_type.fins)}
        for surf, name in ((RUDDER, 'rudder_cmd_angle_rad'), (ELEVATOR, 'elevator_cmd_angle_rad')):
            if n[surf] > have[surf]:
                raise FieldError('value', f'{name}: {n[surf]} angles, this AUV has '
                                 f'{have[surf]} {surf} fins')
        self.command(float(throttle[0]) if len(throttle) else None,
                     fins_by_surface(self.auv_type, rudders, elevators))

    def holds(self, heading_deg: Optional[float], speed_mps: Optional[float]) -> None:
        """Refused (FieldError): guidance has no depth, an AUV takes its actuators.

        DesiredHeading/DesiredSpeed would leave the depth to nobody: DUNE's own depth, pitch
        and heading loops drive the fins.
        """
        raise FieldError('value', 'an AUV takes actuator commands (effector_command: thruster '
                         'and fins), not heading and speed holds')

    def apply_command(self, cmd) -> None:
        """No flight controller drives an AUV over MAVLink: FieldError."""
        raise FieldError('type', 'an AUV takes no MAVLink command (its controllers: builtin, or '
                         'imc: its effector_command)')

    def step(self, dt_s: float) -> None:
        """Advance the world's dt_s [s]: each AUV step due."""
        for _ in range(self.clock.due(dt_s)):
            self.auv.step(self.dt_s)

    def sample(self, t_ns: int) -> VehicleSample:
        """The state now (ENU/FLU), stamped t_ns."""
        a = self.auv
        nu = a.nu
        return VehicleSample(t_ns, tuple(float(x) for x in ned_to_enu(a.p)),
                             tuple(float(x) for x in ned_to_enu(a.velocity_ned())),
                             tuple(float(x) for x in q_ned_frd_to_enu_flu(a.q)),
                             tuple(float(x) for x in ned_to_enu(a.acc_ned)),
                             (float(nu[3]), -float(nu[4]), -float(nu[5])))

    def angular_acceleration_flu(self) -> Tuple[float, float, float]:
        """Body angular acceleration [rad/s^2], FLU."""
        d = self.auv.nu_dot
        return (float(d[3]), -float(d[4]), -float(d[5]))

    def push(self, dp_enu: Sequence[float], dv_enu: Sequence[float]) -> None:
        """Move by dp_enu [m] and change the velocity by dv_enu [m/s] (into the body frame)."""
        a = self.auv
        a.p = [a.p[0] + float(dp_enu[1]), a.p[1] + float(dp_enu[0]), a.p[2] - float(dp_enu[2])]
        dv = mul_t(rot(a.q), (float(dv_enu[1]), float(dv_enu[0]), -float(dv_enu[2])))
        a.nu = [a.nu[0] + dv[0], a.nu[1] + dv[1], a.nu[2] + dv[2]] + a.nu[3:]

    def idle(self) -> bool:
        """No thrust commanded (the thruster's actuation 0)."""
        return not abs(float(self.auv.thrust_act)) > 0.0

    def on_surface(self) -> bool:
        """Its hull breaks the surface (less than all of it under water)."""
        return self.auv.submerged(self.auv.depth) < 1.0

    def carry(self, carried: Optional[Carried]) -> None:
        """An AUV does not rest on a deck (its kind.yaml: no lands_on_decks)."""
        raise NotImplementedError('an AUV does not land on a deck')
