"""Scenario files: origin, vehicle, initial pose, environment, sensors, mission (pure, no rclpy).

A scenario is YAML (see config/scenarios/default.yaml). Every field is validated and every
error names the field. Paths (vehicle files) are resolved relative to the scenario file, then
to the package's config/ folder.
"""

from dataclasses import dataclass, field
import math
from pathlib import Path
from typing import Optional

from sim_core.errors import ConfigError
from sim_core.geodesy import GeoOrigin
from sim_core.kinds import KINDS, controller_of, kind_of
from sim_core.paths import read_yaml, resolve_config_path
from sim_core.validate import number, vector

MISSION_COMMANDS = ('takeoff', 'waypoint', 'land', 'rtl')
# Vehicle kinds and the config/ folder their parameter files live in (sim_core.kinds).
VEHICLE_KINDS = {k.value: i.folder for k, i in KINDS.items()}
# Turbulence intensities (MIL-F-8785C) of environment.turbulence (planes).
TURBULENCE = ('none', 'light', 'moderate', 'severe')
# What lies at z = 0 under an air vehicle (environment.surface).
SURFACES = ('ground', 'water')
# Items that end on the ground (judged at rest with the motors stopped).
LANDING_COMMANDS = ('land', 'rtl')


@dataclass(frozen=True)
class MissionItem:
    """One mission item. lat/lon [deg] WGS-84, alt_m [m] above the origin (relative altitude).

    An underwater item's depth: the scenario's `depth_m: 5` is alt_m -5 (the origin is at the
    sea surface in a world of water).
    """

    command: str
    lat_deg: float = 0.0
    lon_deg: float = 0.0
    alt_m: float = 0.0
    hold_s: float = 0.0              # s, loiter time at the item
    acceptance_radius_m: float = 1.0
    deck: str = ''                   # land: on the deck of this vehicle (a precision landing
    #                                  on its pad's beacon; lat/lon: where to meet it)


@dataclass(frozen=True)
class SceneObject:
    """A sphere (size = (radius,)) or an axis-aligned box (size = (dx, dy, dz) full lengths).

    center_enu [m]; color RGB 0..255.
    """

    kind: str
    center_enu: tuple
    size: tuple
    color: tuple = (200, 60, 50)

    @classmethod
    def from_dict(cls, d, where='object'):
        """Validate a scenario entry: {type: sphere|box, position_enu: [...], size: ..., color}."""
        if not isinstance(d, dict):
            raise ConfigError(f'{where}: must be a mapping')
        kind = d.get('type')
        if kind not in ('sphere', 'box'):
            raise ConfigError(f'{where}.type: must be "sphere" or "box", got {kind!r}')
        pos = vector(d.get('position_enu'), f'{where}.position_enu', 3)     # [m]
        size = d.get('size')
        size = [size] if isinstance(size, (int, float)) and not isinstance(size, bool) else size
        n = 1 if kind == 'sphere' else 3
        if not (isinstance(size, list) and len(size) == n and all(
                isinstance(x, (int, float)) and not isinstance(x, bool) and 0 < x < 1e4
                for x in size)):
            raise ConfigError(f'{where}.size: must be {"a radius" if n == 1 else "[dx, dy, dz]"}'
                              f' in (0, 1e4) m, got {d.get("size")!r}')
        color = d.get('color', [200, 60, 50])
        if not (isinstance(color, list) and len(color) == 3 and all(
                isinstance(c, int) and 0 <= c <= 255 for c in color)):
            raise ConfigError(f'{where}.color: must be [r, g, b] integers 0..255')
        return cls(kind, tuple(float(x) for x in pos), tuple(float(x) for x in size),
                   tuple(color))


@dataclass(frozen=True)
class FleetEntry:
    """One vehicle of the scenario's `vehicles:` list (sim_core.fleet, sim_core.members).

    A fleet of one kind, or a world of several kinds. mission None: the scenario's mission,
    moved with the vehicle's start position. kind: a VehicleKind value (default the
    scenario's vehicle.kind); controller '' = the kind's default (sim_core.kinds).
    """

    vehicle_file: Path
    initial_position_enu: tuple
    initial_yaw_deg: float
    mission: Optional[tuple] = None
    kind: str = 'multirotor'
    controller: str = ''
    initial_speed_mps: float = 0.0
    start_on: str = ''                  # starts resting on this vehicle's deck (sim_world)
    cruise_speed_mps: float = 0.0       # a boat's waypoint speed [m/s]; 0 = its default


@dataclass(frozen=True)
class Environment:
    """Wind and water current [m/s] (ENU, velocity over ground), gravity [m/s^2], sea state.

    sea_state: WMO sea state code 0 (calm, glassy) .. 9 (phenomenal), used by boat models.
    turbulence: none, light, moderate or severe (MIL-F-8785C), used by aircraft models.
    surface: what lies at z = 0 under an air vehicle in a world (sim_world): 'ground'
    (a touchdown there is a landing, or a ground impact when fast) or 'water' (at sea: any
    touchdown is a ditching). wave_seed: the phases of the waves' motion of the boats.
    water_depth_m: a flat seabed this deep (an AUV's DVL locks on it within its range); 0: no
    seabed within reach.
    """

    wind_enu: tuple = (0.0, 0.0, 0.0)
    gravity: float = 9.80665
    current_enu: tuple = (0.0, 0.0, 0.0)
    sea_state: int = 0
    turbulence: str = 'none'
    surface: str = 'ground'
    wave_seed: int = 0
    water_depth_m: float = 0.0      # the seabed's depth below the surface [m]; 0 = unknown/deep


@dataclass(frozen=True)
class Scenario:
    """A validated scenario."""

    name: str
    origin: GeoOrigin
    vehicle_file: Path
    vehicle_kind: str = 'multirotor'    # a VEHICLE_KINDS key
    initial_position_enu: tuple = (0.0, 0.0, 0.0)
    initial_yaw_deg: float = 0.0        # compass heading [deg], 0 = north
    initial_speed_mps: float = 0.0      # planes starting airborne: airspeed [m/s], 0 = cruise
    decimal_year: float = 2026.9        # date for the magnetic model
    environment: Environment = field(default_factory=Environment)
    mission: tuple = ()
    objects: tuple = ()                 # SceneObject: rendered by the camera
    path: Optional[Path] = None
    fleet: tuple = ()                   # FleetEntry of each vehicle of a `vehicles:` list
    # the least planned distance between two listed vehicles [m] (sim_core.fleet); 0 = not
    # checked: a scenario that stages a collision on purpose (a judge's or an avoidance test)
    separation_m: Optional[float] = None


def _num(d, key, where, default=None, lo=None, hi=None):
    v = d.get(key, default)
    if v is None:
        raise ConfigError(f'{where}.{key}: required')
    return number(v, f'{where}.{key}', -math.inf if lo is None else lo,
                  math.inf if hi is None else hi)


def _vec3(d, key, where, default=(0.0, 0.0, 0.0), lim=1e6):
    return vector(d.get(key, list(default)), f'{where}.{key}', 3, -lim, lim)


def _map(d, key, where, required=False):
    v = d.get(key)
    if v is None:
        if required:
            raise ConfigError(f'{where}.{key}: required')
        return {}
    if not isinstance(v, dict):
        raise ConfigError(f'{where}.{key}: must be a mapping, got {type(v).__name__}')
    return v


def scenario_from_dict(d: dict, base_dir: Optional[Path] = None,
                       path: Optional[Path] = None) -> Scenario:
    """Validate a parsed scenario mapping."""
    if not isinstance(d, dict):
        raise ConfigError(f'scenario: must be a mapping, got {type(d).__name__}')
    o = _map(d, 'origin', 'scenario', required=True)
    origin = GeoOrigin(_num(o, 'lat_deg', 'origin'), _num(o, 'lon_deg', 'origin'),
                       _num(o, 'alt_m', 'origin', default=0.0))
    v = _map(d, 'vehicle', 'scenario', required=True)
    kind = kind_of(v.get('kind', 'multirotor'), 'vehicle.kind').value
    vfile = v.get('params')
    if not isinstance(vfile, str):
        raise ConfigError(f'vehicle.params: must be a vehicle file name, got {vfile!r}')
    vehicle_file = resolve_config_path(vfile, base_dir, VEHICLE_KINDS[kind])
    init_pos = _vec3(v, 'initial_position_enu', 'vehicle', lim=1e5)
    if init_pos[2] < 0.0:
        raise ConfigError(f'vehicle.initial_position_enu[2]: must be >= 0 (above ground), got '
                          f'{init_pos[2]}')
    init_yaw = _num(v, 'initial_yaw_deg', 'vehicle', 0.0, -360.0, 360.0)
    env = _map(d, 'environment', 'scenario')
    sea_state = env.get('sea_state', 0)
    if isinstance(sea_state, bool) or not isinstance(sea_state, int) or \
            not 0 <= sea_state <= 9:
        raise ConfigError(f'environment.sea_state: must be a WMO code 0..9, got {sea_state!r}')
    turbulence = env.get('turbulence', 'none')
    if turbulence not in TURBULENCE:
        raise ConfigError(f'environment.turbulence: must be one of {", ".join(TURBULENCE)}, '
                          f'got {turbulence!r}')
    surface = env.get('surface', 'ground')
    if surface not in SURFACES:
        raise ConfigError(f'environment.surface: must be one of {", ".join(SURFACES)}, '
                          f'got {surface!r}')
    wave_seed = env.get('wave_seed', 0)
    if isinstance(wave_seed, bool) or not isinstance(wave_seed, int) or \
            not 0 <= wave_seed < 2 ** 31:
        raise ConfigError(f'environment.wave_seed: must be an integer 0..2^31-1, got '
                          f'{wave_seed!r}')
    environment = Environment(_vec3(env, 'wind_enu', 'environment', lim=60.0),
                              _num(env, 'gravity', 'environment', 9.80665, 0.0, 30.0),
                              _vec3(env, 'current_enu', 'environment', lim=10.0), sea_state,
                              turbulence, surface, wave_seed,
                              _num(env, 'water_depth_m', 'environment', 0.0, 0.0, 11000.0))
    mission = _mission(d.get('mission', []), 'scenario.mission', 'mission', origin)
    fleet = _fleet(d.get('vehicles'), kind, vehicle_file, init_yaw, base_dir, origin)
    objs = d.get('objects', [])
    if not isinstance(objs, list) or len(objs) > 1000:
        raise ConfigError('scenario.objects: must be a list of at most 1000 objects')
    objects = tuple(SceneObject.from_dict(o, f'objects[{i}]') for i, o in enumerate(objs))
    name = d.get('name', path.stem if path else 'scenario')
    if not isinstance(name, str):
        raise ConfigError('scenario.name: must be a string')
    return Scenario(
        name=name, origin=origin, vehicle_file=vehicle_file, vehicle_kind=kind,
        initial_position_enu=init_pos,
        initial_yaw_deg=init_yaw,
        initial_speed_mps=_num(v, 'initial_speed_mps', 'vehicle', 0.0, 0.0, 300.0),
        decimal_year=_num(d, 'decimal_year', 'scenario', 2026.9, 2025.0, 2030.0),
        environment=environment, mission=mission, objects=objects, path=path, fleet=fleet,
        separation_m=(None if d.get('separation_m') is None
                      else _num(d, 'separation_m', 'scenario', None, 0.0, 1000.0)))


def _mission(items, where: str, prefix: str, origin: GeoOrigin) -> tuple:
    """Validate a list of mission items; errors name prefix[i].field."""
    if not isinstance(items, list):
        raise ConfigError(f'{where}: must be a list of items')
    mission = []
    for i, it in enumerate(items):
        w = f'{prefix}[{i}]'
        if not isinstance(it, dict):
            raise ConfigError(f'{w}: must be a mapping')
        cmd = it.get('command')
        if cmd not in MISSION_COMMANDS:
            raise ConfigError(f'{w}.command: must be one of {MISSION_COMMANDS}, got {cmd!r}')
        needs_pos = cmd in ('waypoint', 'land')
        lat = _num(it, 'lat_deg', w, None if needs_pos else origin.lat_deg, -90.0, 90.0)
        lon = _num(it, 'lon_deg', w, None if needs_pos else origin.lon_deg, -180.0, 180.0)
        if True in it:      # YAML 1.1 reads an unquoted `on:` key as true
            raise ConfigError(f'{w}: a key `on` (YAML reads it as true): the deck to land on '
                              'is `deck: boat0`')
        deck = it.get('deck', '')
        if deck and cmd != 'land':
            raise ConfigError(f'{w}.deck: only a land item lands on a deck, not a {cmd}')
        if not isinstance(deck, str) or deck and not deck.isidentifier():
            raise ConfigError(f"{w}.deck: a vehicle's name (boat0, ...), got {deck!r}")
        if 'depth_m' in it and 'alt_m' in it:
            raise ConfigError(f'{w}: alt_m or depth_m, not both (depth_m: {it["depth_m"]!r} '
                              'is alt_m -depth_m)')
        alt = (-_num(it, 'depth_m', w, 0.0, 0.0, 1000.0) if 'depth_m' in it
               else _num(it, 'alt_m', w, 0.0, -1000.0, 10000.0))
        mission.append(MissionItem(
            cmd, lat, lon, alt,
            _num(it, 'hold_s', w, 0.0, 0.0, 3600.0),
            _num(it, 'acceptance_radius_m', w, 1.0, 0.1, 1000.0), deck))
    return tuple(mission)


# Most vehicles in one simulation (a `vehicles:` list, or the launch argument vehicles:=N).
MAX_FLEET = 32


def _fleet(entries, kind: str, vehicle_file: Path, init_yaw: float,
           base_dir: Optional[Path], origin: GeoOrigin) -> tuple:
    """Validate the `vehicles:` list: kind, controller, start, vehicle file, mission of each.

    `vehicle:` gives the defaults (kind, params, yaw); each entry needs its start position. An
    entry of another kind than vehicle.kind names its own params (a world: sim_world).
    """
    if entries is None:
        return ()
    if not isinstance(entries, list) or not 1 <= len(entries) <= MAX_FLEET:
        raise ConfigError(f'scenario.vehicles: must be a list of 1..{MAX_FLEET} vehicles, got '
                          f'{entries!r:.60}')
    fields = ('kind', 'controller', 'params', 'initial_position_enu', 'initial_yaw_deg',
              'initial_speed_mps', 'mission', 'start_on', 'cruise_speed_mps')
    out = []
    for i, e in enumerate(entries):
        w = f'vehicles[{i}]'
        if not isinstance(e, dict):
            raise ConfigError(f'{w}: must be a mapping ({", ".join(fields)}), got {e!r:.40}')
        unknown = sorted(set(e) - set(fields))
        if unknown:
            raise ConfigError(f'{w}.{unknown[0]}: unknown field ({", ".join(fields)})')
        k = kind_of(e.get('kind', kind), f'{w}.kind').value
        controller = controller_of(k, e.get('controller'), f'{w}.controller') \
            if 'controller' in e else ''
        vfile = vehicle_file
        if 'params' in e:
            if not isinstance(e['params'], str):
                raise ConfigError(f'{w}.params: must be a vehicle file name, got '
                                  f'{e["params"]!r}')
            vfile = resolve_config_path(e['params'], base_dir, VEHICLE_KINDS[k])
        elif k != kind:
            raise ConfigError(f'{w}.params: required for a {k} (vehicle.params is for a {kind})')
        if 'initial_position_enu' not in e:
            raise ConfigError(f'{w}.initial_position_enu: required (each vehicle its own start)')
        pos = _vec3(e, 'initial_position_enu', w, lim=1e5)
        if pos[2] < 0.0:
            raise ConfigError(f'{w}.initial_position_enu[2]: must be >= 0 (above ground), got '
                              f'{pos[2]}')
        mission = None
        if 'mission' in e:
            mission = _mission(e['mission'], f'{w}.mission', f'{w}.mission', origin)
        start_on = e.get('start_on', '')
        if not isinstance(start_on, str) or start_on and not start_on.isidentifier():
            raise ConfigError(f"{w}.start_on: a vehicle's name (boat0, ...), got {start_on!r}")
        out.append(FleetEntry(vfile, pos, _num(e, 'initial_yaw_deg', w, init_yaw, -360.0,
                                               360.0), mission, k, controller,
                              _num(e, 'initial_speed_mps', w, 0.0, 0.0, 300.0), start_on,
                              _num(e, 'cruise_speed_mps', w, 0.0, 0.0, 100.0)))
    return tuple(out)


def kinds_in(scenario: Scenario) -> tuple:
    """The vehicle kinds a scenario flies (its `vehicles:` list, else vehicle.kind), in order."""
    ks = [e.kind for e in scenario.fleet] or [scenario.vehicle_kind]
    return tuple(dict.fromkeys(ks))


def check_one_kind(scenario: Scenario, kind: str, who: str) -> None:
    """ConfigError unless every vehicle of scenario is a kind (a graph of one kind: who)."""
    others = [k for k in kinds_in(scenario) if k != kind]
    if others:
        raise ConfigError(f'scenario {scenario.name}: {who} flies {kind}s only, the scenario '
                          f'also has a {others[0]} (a mix of kinds runs in sim_world)')


def load_scenario(path) -> Scenario:
    """Load and validate a scenario YAML file (a bare name is looked up in config/scenarios)."""
    p = Path(path)
    if not p.is_file():
        p = resolve_config_path(str(path), None, 'scenarios')
    data = read_yaml(p, 'scenario')
    return scenario_from_dict(data, base_dir=p.parent, path=p)
