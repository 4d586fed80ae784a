"""The boat of a world: one boat of sim_dynamics.core.usv with its holds, as a VehicleModel.

BoatModel (pure, no rclpy): one boat of a BoatSwarm with usv_control's HeadingSpeedControl:
``command(throttle, rudder_rad)`` (manual, releasing the holds of the axes it sets) or
``holds(heading_deg, speed_mps)`` / ``release()``; ``effector(throttle, rudders, elevators)``
(AeroSim's arrays over IMC). The boat is planar and carried by the water: a push moves it and
changes its velocity only in the horizontal plane (the water takes the vertical part). Contact
sphere: half the hull length (length_m of its params file), centred on the waterline. It runs
at its own step (BOAT_DT_S, 50 Hz; sim_dynamics.core.fixed_step) as the plane runs JSBSim:
numpy on arrays of one boat costs ~80 us a step, a fifth of a 250 Hz world's budget. A boat
type may carry a landing deck (``deck``: its params file's ``deck:``).
"""

import math
from typing import Optional, Sequence, Tuple

from sim_core.deck import DeckSpec
from sim_core.frames import VehicleSample, euler_ned_to_q_enu_flu, frd_to_flu, ned_to_enu
from sim_core.kinds import Carried
from sim_core.members import Member
from sim_core.scenario import Environment, Scenario
from sim_core.validate import FieldError
from sim_dynamics.core.fixed_step import NS_PER_S, FixedStep
from sim_dynamics.core.usv import BoatSwarm, BoatType, boat_state_ned, rudder_aerosim_starboard
from sim_dynamics.core.usv_control import HeadingSpeedControl, check_manual

BOAT_DT_S = 1.0 / 50.0              # a boat's own step in a world [s]


def _floats(a) -> Tuple[float, ...]:
    return tuple(float(x) for x in a)


class BoatModel:
    """One boat of a world: a BoatSwarm of one with its speed and heading holds."""

    def __init__(self, boat_type: BoatType, scenario: Scenario,
                 environment: Optional[Environment] = None, dt_s: float = BOAT_DT_S):
        """The boat of boat_type at scenario's start; environment: current, wind, sea state.

        dt_s: the boat's own step [s] (the holds and the model), run as the plane's JSBSim.
        """
        env = scenario.environment if environment is None else environment
        self.boat_type = boat_type
        self.scenario = scenario
        self.boat = BoatSwarm([boat_type])
        self.boat.set_environment(current_ne=(env.current_enu[1], env.current_enu[0]),
                                  wind_ne=(env.wind_enu[1], env.wind_enu[0]),
                                  sea_state=env.sea_state, wave_seed=env.wave_seed)
        self.control = HeadingSpeedControl(self.boat)
        self.clock = FixedStep(dt_s)
        self.dt_s = self.clock.step_ns / NS_PER_S
        self.mass_kg = float(boat_type.mass_kg)
        self.radius_m = 0.5 * float(boat_type.length_m)
        self.deck: Optional[DeckSpec] = boat_type.deck
        self.reset()

    @classmethod
    def from_member(cls, member: Member, environment: Optional[Environment] = None
                    ) -> 'BoatModel':
        """The boat of member (its boat file and start; environment: the scenario's)."""
        sc = member.scenario
        return cls(BoatType.from_yaml(sc.vehicle_file), sc, environment)

    @property
    def top_speed_mps(self) -> float:
        """Full-throttle speed in calm water [m/s]."""
        return float(self.boat_type.top_speed_mps)

    def reset(self) -> None:
        """At the start: at rest on the heading, no command, no holds."""
        s, b = self.scenario, self.boat
        b.n[:], b.e[:] = s.initial_position_enu[1], s.initial_position_enu[0]
        b.psi[:] = math.radians(s.initial_yaw_deg)
        for a in (b.u, b.v, b.r, b.u_dot, b.v_dot, b.r_dot, b.throttle, b.rudder,
                  b.throttle_cmd, b.rudder_cmd, b.roll, b.pitch, b.roll_rate, b.pitch_rate,
                  b.heave, b.heave_rate, b.heave_acc):
            a[:] = 0.0          # the waves' motion too, as a new BoatSwarm
        b.t = 0.0
        b.waves()               # the hull as the waves hold it at t = 0
        self.control.release()
        self.clock.reset()

    def apply_command(self, cmd) -> None:
        """No flight controller drives a boat over MAVLink: FieldError."""
        raise FieldError('type', 'a boat takes no MAVLink command (its controllers: waypoint, '
                         'or imc: command() and holds())')

    def command(self, throttle: Optional[float], rudder_rad: Optional[float]) -> None:
        """Manual throttle [-1, 1] and rudder [rad] (AeroSim's sign: positive, bow to port).

        None keeps that axis as it is; an axis given drops its hold (as usv_node's
        effector_command took them). ValueError if not finite.
        """
        b, c = self.boat, self.control
        if throttle is not None:
            c.speed_hold[0] = False
        if rudder_rad is not None:
            c.heading_hold[0] = False
        b.command(b.throttle_cmd[0] if throttle is None else throttle,
                  b.rudder_cmd[0] if rudder_rad is None else rudder_aerosim_starboard(rudder_rad),
                  0)

    def effector(self, throttle: Sequence[float], rudders: Sequence[float],
                 elevators: Sequence[float]) -> None:
        """AeroSim's AircraftEffectorCommand arrays (a controller over a link), checked.

        At most one throttle in [-1, 1] and one rudder [rad], no elevator; FieldError naming
        what is bad.
        """
        if len(elevators):
            raise FieldError('value', 'elevator_cmd_angle_rad: a boat has no elevator')
        self.command(*check_manual(throttle, rudders))

    def holds(self, heading_deg: Optional[float], speed_mps: Optional[float]) -> None:
        """Hold a compass heading [deg] and a speed through the water [m/s] (None: not held).

        ValueError if not finite.
        """
        if heading_deg is not None:
            self.control.hold_heading(math.radians(heading_deg), 0)
        if speed_mps is not None:
            self.control.hold_speed(speed_mps, 0)

    def release(self) -> None:
        """Drop both holds: the manual commands rule again."""
        self.control.release()

    def heading_deg(self) -> float:
        """Compass heading [deg] in [0, 360)."""
        return math.degrees(float(self.boat.psi[0])) % 360.0

    def step(self, dt_s: float) -> None:
        """Advance the world's dt_s [s]: each boat step due, the holds then the model.

        At the boat's own rate (FixedStep).
        """
        for _ in range(self.clock.due(dt_s)):
            self.control.update(self.dt_s)
            self.boat.step(self.dt_s)

    def sample(self, t_ns: int) -> VehicleSample:
        """The state now, stamped t_ns (NED -> ENU, FRD -> FLU)."""
        p, v, euler, w_frd, a = boat_state_ned(self.boat, 0)
        return VehicleSample(t_ns, _floats(ned_to_enu(p)), _floats(ned_to_enu(v)),
                             euler_ned_to_q_enu_flu(*euler), _floats(ned_to_enu(a)),
                             _floats(frd_to_flu(w_frd)))

    def angular_acceleration_flu(self) -> Tuple[float, float, float]:
        """Body angular acceleration [rad/s^2], FLU (the yaw rate's)."""
        return (0.0, 0.0, -float(self.boat.r_dot[0]))

    def push(self, dp_enu: Sequence[float], dv_enu: Sequence[float]) -> None:
        """Move by dp_enu and change the velocity by dv_enu, horizontally (the water holds z).

        The velocity change goes into the body surge u and sway v (heading psi): u += dv_n
        cos psi + dv_e sin psi, v += -dv_n sin psi + dv_e cos psi.
        """
        b = self.boat
        b.n[0] += float(dp_enu[1])
        b.e[0] += float(dp_enu[0])
        dn, de = float(dv_enu[1]), float(dv_enu[0])
        c, s = math.cos(float(b.psi[0])), math.sin(float(b.psi[0]))
        b.u[0] += dn * c + de * s
        b.v[0] += -dn * s + de * c

    def on_surface(self) -> bool:
        """Always: the water carries it."""
        return True

    def idle(self) -> bool:
        """No throttle commanded (its holds released or at zero speed)."""
        return not abs(float(self.boat.throttle_cmd[0])) > 0.0

    def carry(self, carried: Optional[Carried]) -> None:
        """A boat rests on the water, not on a deck (its kind.yaml: no lands_on_decks)."""
        raise NotImplementedError('a boat does not land on a deck')
