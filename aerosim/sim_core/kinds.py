"""Vehicle kinds: each kind's plain facts, read from its folder, and the model contract (pure).

A kind of vehicle is one folder, ``aerosim/kinds/<name>/`` (the name of the folder is the
kind's name, the scenario's ``kind:``), and one line in the registry ``kinds/__init__.py``;
what the kind *brings* (its model, judge, view, controllers: code) is its KindEntry
(kinds.entry, layer 4). This module (layer 0) holds what every layer may know of a kind without
importing its code: its facts, data in ``kinds/<name>/kind.yaml``, read here from every kind
folder beside the package (as sim_core.paths finds config/; ``load_kinds``): how its vehicles
are named, which controllers fly it, what it moves in, which MAVLink mixer, built-in FC
airframe and PX4 parameter file it takes; where its parameter files (``params/``) and
scenarios (``scenarios/``) are. And ``VehicleModel``, the typed contract a kind's model
fulfils so that one world steps any mix of kinds.

A kind is its name (a str): the kinds are data, found at start, so an Enum of them would be
built at run time and check nothing a type checker could see; ``kind_of`` is the one check
of a name, naming the kinds there are.
"""

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, List, NamedTuple, Optional, Protocol, Sequence, Tuple

from sim_core.deck import DeckSpec
from sim_core.errors import ConfigError
from sim_core.frames import VehicleSample
from sim_core.paths import config_dirs, read_yaml
from sim_core.validate import number

# The kind folders: aerosim/kinds/ beside this package (the source tree, or site-packages when
# installed: setup.py installs each folder's kind.yaml, params/ and scenarios/ with it)
KINDS_DIR = Path(__file__).resolve().parent.parent / 'kinds'
KIND_FILE = 'kind.yaml'
# What a kind moves in: AIR (the world's surface rule: ground and water impacts), WATER
# (carried by the water at z = 0), GROUND (on the ground at z = 0: no impact, as a boat)
AIR, WATER, GROUND = 'air', 'water', 'ground'
MEDIA = (AIR, WATER, GROUND)
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
    """The plain facts of a kind (its kind.yaml; no code): see the module docstring."""

    name: str                       # the folder's name: the scenario's kind
    folder: Path                    # kinds/<name>
    prefix: str                     # namespace of vehicle i of the kind: <prefix><i>
    controllers: Tuple[str, ...]    # who may fly it (the first is the default)
    mavlink: Tuple[str, ...]        # those of them reached over the MAVLink HIL bridge
    medium: str                     # AIR, WATER or GROUND (MEDIA)
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
    mixer: str = ''                 # its MAVLink bridge's mixer (mavlink_bridge.core.mixer
    #                                 MIXERS), '' for a kind not flown over MAVLink
    airframe: str = ''              # the built-in FC's control laws for it
    #                                 (mavlink_bridge.fc.fc_core AIRFRAMES), '' none
    px4_params: str = ''            # PX4's parameter file (config/px4) when PX4 flies it

    @property
    def params_dir(self) -> Path:
        """Its parameter files: kinds/<name>/params/*.yaml."""
        return self.folder / 'params'

    @property
    def scenarios_dir(self) -> Path:
        """Its own scenarios: kinds/<name>/scenarios/*.yaml."""
        return self.folder / 'scenarios'


# kind.yaml's keys: (type, required); the values are checked in _facts
_KEYS = {'prefix': (str, True), 'controllers': (list, True), 'mavlink': (list, False),
         'medium': (str, True), 'pitot': (bool, False), 'speeds': (dict, True),
         'vertical': (bool, False), 'lands_on_decks': (bool, False), 'imc_type': (str, False),
         'sensors': (bool, False), 'mixer': (str, False), 'airframe': (str, False),
         'px4_params': (str, False)}
_SPEEDS = ('horizontal', 'climb', 'descent')


def _names(v: Any, where: str) -> Tuple[str, ...]:
    """A list of distinct identifiers (controllers)."""
    if not all(isinstance(x, str) and x.isidentifier() for x in v) or len(set(v)) != len(v):
        raise ConfigError(f'{where}: a list of distinct names, got {v!r}')
    return tuple(v)


def load_kind(folder: Path) -> KindInfo:
    """The facts of the kind in folder (its kind.yaml); ConfigError naming the file and key."""
    path = Path(folder) / KIND_FILE
    name = Path(folder).name
    d = read_yaml(path, 'kind file')
    if not isinstance(d, dict):
        raise ConfigError(f"{path}: a mapping of the kind's facts, got {type(d).__name__}")
    where = f'{path}'
    for key in d:
        if key not in _KEYS:
            raise ConfigError(f'{where}: {key}: unknown key (one of {", ".join(_KEYS)})')
    for key, (typ, required) in _KEYS.items():
        if key not in d:
            if required:
                raise ConfigError(f'{where}: {key}: required')
        elif not isinstance(d[key], typ):
            raise ConfigError(f'{where}: {key}: must be a {typ.__name__}, got {d[key]!r}')
    if not name.isidentifier() or not name.islower():
        raise ConfigError(f"{where}: the kind's folder name {name!r} is its name: lower-case "
                          'letters, digits and _')
    if not d['prefix'].isidentifier():
        raise ConfigError(f'{where}: prefix: a ROS name (letters, digits, _), got '
                          f'{d["prefix"]!r}')
    controllers = _names(d['controllers'], f'{where}: controllers')
    mavlink = _names(d.get('mavlink', []), f'{where}: mavlink')
    if not controllers:
        raise ConfigError(f'{where}: controllers: at least one (the first is the default)')
    stray = [c for c in mavlink if c not in controllers]
    if stray:
        raise ConfigError(f'{where}: mavlink: {stray[0]!r} is not one of its controllers')
    if d['medium'] not in MEDIA:
        raise ConfigError(f'{where}: medium: one of {", ".join(MEDIA)}, got {d["medium"]!r}')
    sp = d['speeds']
    unknown = sorted(set(sp) - set(_SPEEDS))
    if unknown or any(k not in sp for k in _SPEEDS):
        raise ConfigError(f'{where}: speeds: {", ".join(_SPEEDS)} [m/s], got {sorted(sp)}')
    speeds = Speeds(*(number(sp[k], f'{where}: speeds.{k}', 0.0, 400.0) for k in _SPEEDS))
    if not speeds.horizontal > 0.0:
        raise ConfigError(f'{where}: speeds.horizontal: must be > 0 m/s')
    if mavlink and not d.get('mixer'):
        raise ConfigError(f'{where}: mixer: required for a kind flown over MAVLink '
                          f'({", ".join(mavlink)})')
    return KindInfo(name, Path(folder), d['prefix'], controllers, mavlink, d['medium'],
                    d.get('pitot', False), speeds, d.get('vertical', False),
                    d.get('lands_on_decks', False), d.get('imc_type', ''),
                    d.get('sensors', False), d.get('mixer', ''), d.get('airframe', ''),
                    d.get('px4_params', ''))


def load_kinds(root: Path = KINDS_DIR) -> Dict[str, KindInfo]:
    """The facts of every kind folder under root (each folder with a kind.yaml), by name.

    ConfigError for a kind file that is wrong, or two kinds with one prefix (their vehicles'
    names would repeat).
    """
    out: Dict[str, KindInfo] = {}
    for folder in sorted(p.parent for p in Path(root).glob(f'*/{KIND_FILE}')):
        k = load_kind(folder)
        same = [o.name for o in out.values() if o.prefix == k.prefix]
        if same:
            raise ConfigError(f'{folder / KIND_FILE}: prefix: {k.prefix!r} is the prefix of '
                              f"{same[0]} too (the vehicles' names would repeat)")
        out[k.name] = k
    return out


KINDS: Dict[str, KindInfo] = load_kinds()


def kind_of(value, where: str = 'kind') -> str:
    """The kind named by value (a kind's name, a str); ConfigError naming where and the kinds."""
    if isinstance(value, str) and value in KINDS:
        return value
    raise ConfigError(f'{where}: must be one of {", ".join(KINDS)}, got {value!r}')


def info(kind) -> KindInfo:
    """The KindInfo of kind (its name); ConfigError if there is no such kind."""
    return KINDS[kind_of(kind)]


def controller_of(kind, value, where: str = 'controller') -> str:
    """The controller named by value for kind ('' = the kind's default); ConfigError."""
    k = info(kind)
    if value in (None, ''):
        return k.controllers[0]
    if value not in k.controllers:
        raise ConfigError(f'{where}: a {k.name} is flown by one of '
                          f'{", ".join(k.controllers)}, got {value!r}')
    return str(value)


def _find(name: str, folders: Sequence[Path], base_dir: Optional[Path], what: str) -> Path:
    """A file named name: as given, relative to base_dir, then in folders (.yaml optional)."""
    if not isinstance(name, str) or not name or '\x00' in name or len(name) > 4096:
        raise ConfigError(f'{what}: {str(name)[:80]!r} is not a file name')
    cands = [Path(name)]
    if base_dir is not None:
        cands.append(Path(base_dir) / name)
    for d in folders:
        cands += [d / name, d / f'{name}.yaml']
    for cand in cands:
        try:
            if cand.is_file():
                return cand.resolve()
        except OSError:         # a component longer than the file system takes, ...
            continue
    raise ConfigError(f'{what}: file {name!r} not found (looked in {base_dir or "."} and '
                      + ', '.join(str(d) for d in folders) + ')')


def vehicle_file(kind, name: str, base_dir: Optional[Path] = None) -> Path:
    """A vehicle's parameter file of kind; ConfigError naming where it looked.

    As given, relative to base_dir (the scenario's folder), then in its kind's params folder
    (kinds/<kind>/params/<name>[.yaml]).
    """
    k = info(kind)
    return _find(name, [k.params_dir], base_dir, f'{k.name} parameters')


def scenario_dirs() -> List[Path]:
    """Where a scenario's bare name is looked up: config/scenarios, then each kind's own."""
    return [d / 'scenarios' for d in config_dirs()] + [
        k.scenarios_dir for k in KINDS.values() if k.scenarios_dir.is_dir()]


def scenario_path(name: str) -> Path:
    """A scenario file: as given, in config/scenarios, then in a kind's scenarios folder.

    ConfigError if not found, or if its bare name is in two kinds' folders (and not in
    config/scenarios): the file to take would be a guess.
    """
    shared = [d / 'scenarios' for d in config_dirs()]
    try:
        return _find(name, shared, None, 'scenarios')
    except ConfigError:
        pass
    found = []
    for k in KINDS.values():
        try:
            found.append(_find(name, [k.scenarios_dir], None, 'scenarios'))
        except ConfigError:
            continue
    found = list(dict.fromkeys(found))
    if len(found) > 1:
        raise ConfigError(f"scenarios: {name!r} is in more than one kind's folder ("
                          + ', '.join(str(f) for f in found) + '): give its path')
    if found:
        return found[0]
    raise ConfigError(f'scenarios: file {name!r} not found (looked in '
                      + ', '.join(str(d) for d in scenario_dirs()) + ')')


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
