"""One vehicle of a world, whatever its kind: the models behind sim_core.kinds.VehicleModel.

Each class wraps the kind's own model, as its single-kind node drives it, and fulfils the
contract one world (sim_world.core.world) steps any mix of kinds with (pure, no rclpy):
``mass_kg``, ``radius_m`` (the contact sphere), ``reset()``, ``step(dt_s)``, ``sample(t_ns)``
(a VehicleSample in ENU/FLU, exactly as the kind's node publishes it), ``push(dp, dv)`` (a
contact's positional correction and impulse), ``on_surface()``,
``angular_acceleration_flu()`` and ``apply_command(cmd)`` (a command over a link: a quad's
throttles, a plane's EffectorCommand; FieldError names what is refused, a boat refuses any).
Each is built from a world member (sim_core.members.Member) by
``from_member(member, environment)`` and keeps the command its controller set through the
kind's own methods:

- QuadModel (sim_dynamics.core.multirotor, as dynamics_node): ``set_throttles([0..1])``. Its
  contact sphere is collision.body_radius (1.5 x the longest rotor arm), as a quad fleet's.
- PlaneModel (JSBSim, sim_dynamics.core.plane, as plane_node): ``apply_flight(FlightCommand)``
  (the autopilot's) or ``apply_effectors(EffectorCommand)`` (a HIL bridge's), both checked.
  JSBSim runs at its own fixed step (JSBSIM_DT_S, plane_node's 125 Hz); ``step(dt_s)`` counts
  the world's time in nanoseconds and runs JSBSim each time one of its steps is due: a world
  step of 4 ms runs it every second step, one of 16 ms twice. Between JSBSim steps the state
  holds (at most one JSBSim step old). Contact sphere: half the wingspan (JSBSim's
  metrics/bw-ft: 5.5 m for the C172), a sphere round the centre of gravity: the tail and the
  nose reach about as far, the fuselage's height is far less (a generous shape for a plane).
  A push re-initializes JSBSim at the current state plus the push (JSBSim's velocities are
  not writable): the flight continues unchanged (checked: 10 s after a zero push the
  position agrees to 0.1 mm).
- BoatModel (one boat of sim_dynamics.core.usv's BoatSwarm with usv_control's
  HeadingSpeedControl, as usv_node): ``command(throttle, rudder_rad)`` (manual, releasing the
  holds of the axes it sets) or ``holds(heading_deg, speed_mps)`` / ``release()``. The boat
  is planar and carried by the water: a push moves it and changes its velocity only in the
  horizontal plane (the water takes the vertical part). Contact sphere: half the hull length
  (length_m of config/boats/*.yaml), centred on the waterline. The boat runs at its own step
  (BOAT_DT_S, usv_node's 50 Hz) as the plane runs JSBSim: numpy on arrays of one boat costs
  ~80 us a step, a fifth of a 250 Hz world's budget.
"""

import math
from typing import Optional, Sequence, Tuple

from sim_core.deck import DeckSpec
from sim_core.frames import VehicleSample, euler_ned_to_q_enu_flu, frd_to_flu, ned_to_enu
from sim_core.kinds import Carried, VehicleKind
from sim_core.members import Member
from sim_core.scenario import Environment, Scenario
from sim_core.units import FT_M
from sim_core.validate import FieldError, number
from sim_dynamics.core.collision import body_radius
from sim_dynamics.core.multirotor import Multirotor, MultirotorParams
from sim_dynamics.core.plane import (
    AircraftParams,
    AirData,
    EffectorCommand,
    FlightCommand,
    Plane,
)
from sim_dynamics.core.usv import BoatSwarm, BoatType, boat_state_ned, rudder_aerosim_starboard
from sim_dynamics.core.usv_control import HeadingSpeedControl, check_manual

JSBSIM_DT_S = 1.0 / 125.0           # JSBSim's own step (plane_node's default rate) [s]
BOAT_DT_S = 1.0 / 50.0              # a boat's own step (usv_node's default rate) [s]
NS_PER_S = 1_000_000_000


def _floats(a) -> Tuple[float, ...]:
    return tuple(float(x) for x in a)


class FixedStep:
    """A model's own fixed step inside the world's: how many of its steps fall due.

    Counts in integer nanoseconds (no drift): due(dt_s) adds the world's dt_s [s] and
    returns the number of whole model steps now due (0, 1 or more).
    """

    def __init__(self, dt_s: float):
        """dt_s: the model's step [s]."""
        self.step_ns = int(round(dt_s * NS_PER_S))
        self.reset()

    def reset(self) -> None:
        """Nothing stepped."""
        self._world_ns = 0
        self._model_ns = 0

    def due(self, dt_s: float) -> int:
        """Add dt_s [s] of world time; the model steps due."""
        self._world_ns += int(round(dt_s * NS_PER_S))
        n = (self._world_ns - self._model_ns) // self.step_ns
        self._model_ns += n * self.step_ns
        return n


class QuadModel:
    """A multirotor of a world (sim_dynamics.core.multirotor.Multirotor)."""

    kind = VehicleKind.MULTIROTOR

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
        """At the start (as dynamics_node: at rest, ENU yaw from the compass heading)."""
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
        """The state now, stamped t_ns (as DynamicsNode.state_arrays).

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


class PlaneModel:
    """A JSBSim aircraft of a world (sim_dynamics.core.plane.Plane) at its own fixed step."""

    kind = VehicleKind.PLANE

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
        """At the start, as plane_node: 'ground' (at rest) or 'air' (trimmed) in self.start."""
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
        """The state of the last JSBSim step, stamped t_ns (as plane_node's)."""
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
        """A plane does not rest on a deck (sim_core.kinds lands_on_decks)."""
        raise NotImplementedError('a plane does not land on a deck')

    def on_surface(self) -> bool:
        """Weight on the wheels (JSBSim's gear/wow), or the centre of gravity at z <= 0.

        z: the altitude above the origin's (the Earth's curvature aside: 8 cm at 1 km).
        """
        f = self.plane.fdm
        return f['gear/wow'] > 0.0 or f['position/h-sl-meters'] <= self.plane.origin.alt_m


class BoatModel:
    """One boat of a world: a BoatSwarm of one with its speed and heading holds (as usv_node)."""

    kind = VehicleKind.BOAT

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
        """At the start (as usv_node): at rest on the heading, no command, no holds."""
        s, b = self.scenario, self.boat
        b.n[:], b.e[:] = s.initial_position_enu[1], s.initial_position_enu[0]
        b.psi[:] = math.radians(s.initial_yaw_deg)
        for a in (b.u, b.v, b.r, b.u_dot, b.v_dot, b.r_dot, b.throttle, b.rudder,
                  b.throttle_cmd, b.rudder_cmd, b.roll, b.pitch, b.roll_rate, b.pitch_rate,
                  b.heave, b.heave_rate, b.heave_acc):
            a[:] = 0.0          # the waves' motion too, as a new BoatSwarm (usv_node keeps it)
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
        effector_command). ValueError if not finite.
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

        As usv_node's step, at the boat's own rate (FixedStep).
        """
        for _ in range(self.clock.due(dt_s)):
            self.control.update(self.dt_s)
            self.boat.step(self.dt_s)

    def sample(self, t_ns: int) -> VehicleSample:
        """The state now, stamped t_ns (as usv_node's VehicleStatePublisher.publish_boat)."""
        p, v, euler, w_frd, a = boat_state_ned(self.boat, 0)
        return VehicleSample(t_ns, _floats(ned_to_enu(p)), _floats(ned_to_enu(v)),
                             euler_ned_to_q_enu_flu(*euler), _floats(ned_to_enu(a)),
                             _floats(frd_to_flu(w_frd)))

    def angular_acceleration_flu(self) -> Tuple[float, float, float]:
        """Body angular acceleration [rad/s^2], FLU (the yaw rate's, as usv_node)."""
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
        """A boat rests on the water, not on a deck (sim_core.kinds lands_on_decks)."""
        raise NotImplementedError('a boat does not land on a deck')
