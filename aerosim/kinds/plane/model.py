"""The plane of a world: a JSBSim aircraft (sim_dynamics.core.plane) as a VehicleModel (pure).

PlaneModel: ``apply_flight(FlightCommand)`` (the autopilot's) or ``apply_effectors(
EffectorCommand)`` (a HIL bridge's, or any ROS node's: ``apply_command``), both checked.
JSBSim runs at its own fixed step (JSBSIM_DT_S, 125 Hz); ``step(dt_s)`` counts the world's time
in nanoseconds (sim_dynamics.core.fixed_step) and runs JSBSim each time one of its steps is
due: a world step of 4 ms runs it every second step, one of 16 ms twice. Between JSBSim steps
the state holds (at most one JSBSim step old). Contact sphere: half the wingspan (JSBSim's
metrics/bw-ft: 5.5 m for the C172), a sphere round the centre of gravity: the tail and the nose
reach about as far, the fuselage's height is far less (a generous shape for a plane). A push
re-initializes JSBSim at the current state plus the push (JSBSim's velocities are not
writable): the flight continues unchanged (checked: 10 s after a zero push the position agrees
to 0.1 mm).
"""

from typing import Optional, Sequence, Tuple

from sim_core.deck import DeckSpec
from sim_core.frames import VehicleSample
from sim_core.kinds import Carried
from sim_core.members import Member
from sim_core.scenario import Environment, Scenario
from sim_core.units import FT_M
from sim_core.validate import FieldError
from sim_dynamics.core.fixed_step import FixedStep
from sim_dynamics.core.plane import (
    AircraftParams,
    AirData,
    EffectorCommand,
    FlightCommand,
    Plane,
)

JSBSIM_DT_S = 1.0 / 125.0           # JSBSim's own step in a world [s]


class PlaneModel:
    """A JSBSim aircraft of a world (sim_dynamics.core.plane.Plane) at its own fixed step."""

    def __init__(self, params: AircraftParams, scenario: Scenario,
                 environment: Optional[Environment] = None, dt_s: float = JSBSIM_DT_S):
        """The aircraft of params at scenario's start (runway or airborne trimmed).

        environment: wind and turbulence (default the scenario's); dt_s: JSBSim's step [s].
        ConfigError if JSBSim cannot load the model or trim it.
        """
        env = scenario.environment if environment is None else environment
        self.params = params
        self.scenario = scenario
        self.plane = Plane(params, scenario.origin, dt_s, env.wind_enu, env.turbulence)
        self.clock = FixedStep(self.plane.dt)
        self.start = ''
        self.reset()
        self.mass_kg = float(self.plane.mass_properties()[0])
        self.deck: Optional[DeckSpec] = None
        self.radius_m = 0.5 * float(self.plane.fdm['metrics/bw-ft']) * FT_M

    @classmethod
    def from_member(cls, member: Member, environment: Optional[Environment] = None
                    ) -> 'PlaneModel':
        """The aircraft of member (its aircraft file and start; environment: the scenario's)."""
        sc = member.scenario
        return cls(AircraftParams.from_yaml(sc.vehicle_file), sc, environment)

    def reset(self) -> None:
        """At the start: 'ground' (at rest) or 'air' (trimmed) in self.start."""
        sc = self.scenario
        self.start = self.plane.reset(sc.initial_position_enu, sc.initial_yaw_deg,
                                      sc.initial_speed_mps)
        self.clock.reset()

    def step(self, dt_s: float) -> None:
        """Advance the world's dt_s [s]: run JSBSim's steps that fall due in it (0, 1 or more).

        ModelDiverged if JSBSim runs away (Plane.step).
        """
        for _ in range(self.clock.due(dt_s)):
            self.plane.step()

    def sample(self, t_ns: int) -> VehicleSample:
        """The state of the last JSBSim step, stamped t_ns."""
        return self.plane.sample(t_ns)

    def angular_acceleration_flu(self) -> Tuple[float, float, float]:
        """Body angular acceleration [rad/s^2], FLU."""
        return self.plane.angular_acceleration_flu()

    def air_data(self) -> AirData:
        """JSBSim's air data (the PFD's sources: vc_kts is its airspeed)."""
        return self.plane.air_data()

    def apply_flight(self, cmd: FlightCommand) -> None:
        """Normalized pilot commands (the autopilot's), checked: FieldError names a bad field."""
        self.plane.apply_flight(self.plane.check_flight(cmd))

    def apply_effectors(self, cmd: EffectorCommand) -> None:
        """Surface angles, throttle, brakes (a HIL mixer's), checked: FieldError on a bad one."""
        self.plane.apply_effectors(self.plane.check_effectors(cmd))

    def apply_command(self, cmd) -> None:
        """A flight controller's EffectorCommand (the fixed-wing mixer's); FieldError."""
        if not isinstance(cmd, EffectorCommand):
            raise FieldError('type', 'a plane takes an EffectorCommand, got '
                             f'{type(cmd).__name__}')
        self.apply_effectors(cmd)

    def push(self, dp_enu: Sequence[float], dv_enu: Sequence[float]) -> None:
        """Move by dp_enu [m] and change the velocity by dv_enu [m/s] (a contact).

        JSBSim's position is writable, its velocities are not: JSBSim is re-initialized at
        the state now (position, attitude, body rates) with the velocity plus dv_enu; the
        engine keeps running, the FCS its commands, the sim time and the step count go on.
        """
        f, pl = self.plane.fdm, self.plane
        p = pl.sample(0).p_enu
        lat, lon, alt = pl.origin.enu_to_geodetic(p[0] + float(dp_enu[0]),
                                                  p[1] + float(dp_enu[1]),
                                                  p[2] + float(dp_enu[2]))
        ic = {'ic/lat-geod-deg': lat, 'ic/long-gc-deg': lon, 'ic/h-sl-ft': alt / FT_M,
              'ic/phi-rad': f['attitude/phi-rad'], 'ic/theta-rad': f['attitude/theta-rad'],
              'ic/psi-true-rad': f['attitude/psi-rad'],
              'ic/vn-fps': f['velocities/v-north-fps'] + float(dv_enu[1]) / FT_M,
              'ic/ve-fps': f['velocities/v-east-fps'] + float(dv_enu[0]) / FT_M,
              'ic/vd-fps': f['velocities/v-down-fps'] - float(dv_enu[2]) / FT_M,
              'ic/p-rad_sec': f['velocities/p-rad_sec'], 'ic/q-rad_sec': f['velocities/q-rad_sec'],
              'ic/r-rad_sec': f['velocities/r-rad_sec']}
        sim_t = f.get_sim_time()
        for k, v in ic.items():
            f[k] = v
        f.run_ic()
        f.set_sim_time(sim_t)
        pl._v_prev = pl._v_enu()        # the velocity the next step differentiates from

    def idle(self) -> bool:
        """No thrust commanded (JSBSim's throttle command 0)."""
        return not self.plane.fdm['fcs/throttle-cmd-norm'] > 0.0

    def carry(self, carried: Optional[Carried]) -> None:
        """A plane does not rest on a deck (its kind.yaml: no lands_on_decks)."""
        raise NotImplementedError('a plane does not land on a deck')

    def on_surface(self) -> bool:
        """Weight on the wheels (JSBSim's gear/wow), or the centre of gravity at z <= 0.

        z: the altitude above the origin's (the Earth's curvature aside: 8 cm at 1 km).
        """
        f = self.plane.fdm
        return f['gear/wow'] > 0.0 or f['position/h-sl-meters'] <= self.plane.origin.alt_m
