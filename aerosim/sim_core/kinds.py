"""Vehicle kinds: the enum, each kind's plain facts, and the model contract (pure, no rclpy).

What a kind *brings* (its parameters loader, model, mixer, view shape, judge) is registered in
`sim_world.core.kinds` (layer 4: it sees every layer's parts). This module holds what every
layer may know about a kind without importing those parts: where its files live, how its
vehicles are named, which controllers fly it, what it moves in; and `VehicleModel`, the typed
contract a kind's model fulfils so that one world steps any mix of kinds (no method names
passed as strings, no duck typing).
"""

from dataclasses import dataclass
from enum import Enum
from typing import Any, Dict, NamedTuple, Optional, Protocol, Sequence, Tuple

from sim_core.deck import DeckSpec
from sim_core.errors import ConfigError
from sim_core.frames import VehicleSample


class VehicleKind(str, Enum):
    """A kind of vehicle (its value is the scenario's `kind:` string)."""

    MULTIROTOR = 'multirotor'
    PLANE = 'plane'
    BOAT = 'boat'
    AUV = 'auv'


AIR, WATER = 'air', 'water'
# Controllers that are any ROS node publishing the vehicle's effector_command (no bridge): the
# world takes the command as it comes, and in lockstep waits for it as for a flight controller.
TOPIC = 'topic'
TOPIC_CONTROLLERS = (TOPIC,)


@dataclass(frozen=True)
class Speeds:
    """Nominal speeds of a kind [m/s] for its planned path (sim_core.separation)."""

    horizontal: float
    climb: float
    descent: float


@dataclass(frozen=True)
class KindInfo:
    """The plain facts of a kind (no code): see the module docstring."""

    folder: str                     # config/<folder>/<params>.yaml: its parameter files
    prefix: str                     # namespace of vehicle i of the kind: <prefix><i>
    controllers: Tuple[str, ...]    # who may fly it (the first is the default)
    mavlink: Tuple[str, ...]        # those of them reached over the MAVLink HIL bridge
    medium: str                     # AIR (ground impacts) or WATER (on the surface)
    pitot: bool                     # its sensor suite has an airspeed sensor
    speeds: Speeds                  # nominal speeds of its planned path
    vertical: bool                  # takes off straight up where it stands and lands straight
    #                                 down over its point (else climbs out on the line to the
    #                                 takeoff item and glides down to the landing point)
    lands_on_decks: bool = False    # may rest on a boat's deck (sim_world.core.decks): its
    #                                 model is carried (VehicleModel.carry)
    imc_type: str = ''              # its IMC system type (Announce) when flown over IMC
    sensors: bool = False           # carries the sensor suite (IMU, magnetometer, barometer,
    #                                 GNSS; sim_sensors): its ROS sensor topics are published


# Nominal speeds (sim_core.separation). Multirotor: PX4's MPC_XY_CRUISE 5 m/s (the built-in
# FC's cruise_speed 5 m/s); climbs between MPC_TKO_SPEED 1.5 and MPC_Z_V_AUTO_UP 3 m/s,
# descends between MPC_LAND_SPEED 0.7 and MPC_Z_V_AUTO_DN 1.5 m/s (the built-in FC: land
# 0.7 m/s, 0.4 below 3 m). Plane: a C172's cruise (100 kt, the built-in FC's fw_cruise_kts),
# ~700 ft/min climb, a 3 deg glide. Boat: the WAM-V's transit speed. AUV: a LAUV's usual plan
# speed (its planned path is drawn at the surface: sim_core.separation keeps water kinds there).
KINDS: Dict[VehicleKind, KindInfo] = {
    VehicleKind.MULTIROTOR: KindInfo('vehicles', 'quad', ('builtin', 'px4', 'external', TOPIC),
                                     ('builtin', 'px4', 'external'), AIR, False,
                                     Speeds(5.0, 2.0, 1.0), True, True, sensors=True),
    VehicleKind.PLANE: KindInfo('aircraft', 'plane', ('autopilot', 'builtin', 'px4', TOPIC),
                                ('builtin', 'px4'), AIR, True, Speeds(50.0, 3.5, 3.0), False,
                                sensors=True),
    VehicleKind.BOAT: KindInfo('boats', 'boat', ('waypoint', 'imc'), (), WATER, False,
                               Speeds(2.0, 0.0, 0.0), False, imc_type='usv'),
    VehicleKind.AUV: KindInfo('auvs', 'auv', ('builtin', 'imc'), (), WATER, False,
                              Speeds(1.25, 0.0, 0.0), False, imc_type='uuv'),
}


def kind_of(value, where: str = 'kind') -> VehicleKind:
    """The VehicleKind named by value (a string or a kind); ConfigError naming where."""
    try:
        return VehicleKind(value)
    except ValueError:
        raise ConfigError(f'{where}: must be one of {", ".join(k.value for k in VehicleKind)}, '
                          f'got {value!r}') from None


def info(kind) -> KindInfo:
    """The KindInfo of kind (a VehicleKind or its string)."""
    return KINDS[kind_of(kind)]


def controller_of(kind, value, where: str = 'controller') -> str:
    """The controller named by value for kind ('' = the kind's default); ConfigError."""
    k = info(kind)
    if value in (None, ''):
        return k.controllers[0]
    if value not in k.controllers:
        raise ConfigError(f'{where}: a {kind_of(kind).value} is flown by one of '
                          f'{", ".join(k.controllers)}, got {value!r}')
    return str(value)


class Carried(NamedTuple):
    """The state of a vehicle resting on a moving deck (VehicleModel.carry), ENU/FLU, SI.

    Each a sequence of floats or a numpy array.
    """

    p_enu: Any                      # [m]
    v_enu: Any                      # [m/s]: the deck point's, plus any slip
    q_enu_flu: Any                  # (w, x, y, z): the deck's tilt, the vehicle's own heading
    w_flu: Any                      # [rad/s]: the deck's rotation
    a_enu: Any                      # [m/s^2]: the deck point's acceleration (the IMU feels it)


class VehicleModel(Protocol):
    """What one world needs of a vehicle's model, whatever its kind (sim_world).

    Positions and velocities are ENU [m, m/s]; the model keeps its own command (set by its
    controller through the kind's own methods) and integrates it in step().
    """

    mass_kg: float                  # for the contact impulse
    radius_m: float                 # contact shape: a sphere around the body [m]
    deck: Optional[DeckSpec]        # a landing deck on it (a boat type's), None: none

    def reset(self) -> None:
        """Back to the scenario's start (pose, speed, commands at rest)."""

    def step(self, dt_s: float) -> None:
        """Integrate dt_s [s] with the command in force."""

    def sample(self, t_ns: int) -> VehicleSample:
        """The state now, stamped t_ns."""

    def push(self, dp_enu: Sequence[float], dv_enu: Sequence[float]) -> None:
        """Move by dp_enu [m] and change the velocity by dv_enu [m/s] (a contact)."""

    def on_surface(self) -> bool:
        """Resting on what carries it: the ground (air vehicles), the water (boats)."""

    def idle(self) -> bool:
        """No propulsion commanded (a quad's motors stopped: the end of a landing)."""

    def angular_acceleration_flu(self) -> Tuple[float, float, float]:
        """Body angular acceleration [rad/s^2], FLU (VehicleState's)."""

    def apply_command(self, cmd: Any) -> None:
        """A command over a link (a flight controller's: throttles, an EffectorCommand).

        Raises sim_core.validate.FieldError naming what is refused (a kind no controller
        flies over a link refuses any).
        """

    def carry(self, carried: Optional[Carried]) -> None:
        """Rest on a moving deck in this state (None: free again): kinds lands_on_decks.

        A kind that never rests on a deck raises NotImplementedError.
        """
