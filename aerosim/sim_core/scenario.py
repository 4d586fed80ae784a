"""Scenario files: origin, vehicle, initial pose, environment, sensors, mission (pure, no rclpy).

A scenario is YAML (see config/scenarios/default.yaml), validated by its model
(sim_core.scenario_file.ScenarioFile: every key's type, range and unit; an error names the
file and the key path) and turned here into the ``Scenario`` the nodes use. A vehicle file is
resolved relative to the scenario file, then in its kind's params folder (kinds/<kind>/params,
sim_core.kinds.vehicle_file); a scenario's bare name in config/scenarios, then in the kinds'
own scenarios folders (sim_core.kinds.scenario_path).
"""

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional, get_args

from sim_core.errors import ConfigError
from sim_core.geodesy import GeoOrigin
from sim_core.kinds import scenario_path
from sim_core.kinds import vehicle_file as find_vehicle
from sim_core.paths import read_yaml
from sim_core.scenario_file import (
    DEFAULT_KIND,
    Command,
    FleetEntryFile,
    MissionItemFile,
    ScenarioFile,
    SceneObjectFile,
    Surface,
    Turbulence,
)
from sim_core.scenario_file import MAX_FLEET as MAX_FLEET  # its callers import it from here
from sim_core.schema import load

MISSION_COMMANDS = get_args(Command)
# Turbulence intensities (MIL-F-8785C) of environment.turbulence (planes).
TURBULENCE = get_args(Turbulence)
# What lies at z = 0 under an air vehicle (environment.surface).
SURFACES = get_args(Surface)
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
    def from_dict(cls, d: Any, where: str = 'object') -> 'SceneObject':
        """A scenario's entry: {type: sphere|box, position_enu: [...], size: ..., color}."""
        return _scene_object(SceneObjectFile.from_dict(d, where))


@dataclass(frozen=True)
class FleetEntry:
    """One vehicle of the scenario's `vehicles:` list (sim_core.fleet, sim_core.members).

    A fleet of one kind, or a world of several kinds. mission None: the scenario's mission,
    moved with the vehicle's start position. kind: a kind's name (default the
    scenario's vehicle.kind); controller '' = the kind's default (sim_core.kinds).
    """

    vehicle_file: Path
    initial_position_enu: tuple
    initial_yaw_deg: float
    mission: Optional[tuple] = None
    kind: str = DEFAULT_KIND
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
    vehicle_kind: str = DEFAULT_KIND    # a kind's name (sim_core.kinds)
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


def scenario_from_dict(d: Any, base_dir: Optional[Path] = None,
                       path: Optional[Path] = None) -> Scenario:
    """A parsed scenario mapping, validated (ConfigError naming the file and the key path)."""
    where = f'scenario {path}' if path is not None else 'scenario'
    f = load(ScenarioFile, d, where)
    o, v = f.origin, f.vehicle
    origin = GeoOrigin(o.lat_deg, o.lon_deg, o.alt_m)
    vehicle_file = _vehicle_file(v.params, v.kind, base_dir, f'{where}: vehicle.params')
    fleet = tuple(_entry(e, f, origin, vehicle_file, base_dir, f'{where}: vehicles[{i}]')
                  for i, e in enumerate(f.vehicles or ()))
    return Scenario(
        name=f.name if f.name is not None else path.stem if path else 'scenario',
        origin=origin, vehicle_file=vehicle_file, vehicle_kind=v.kind,
        initial_position_enu=v.initial_position_enu, initial_yaw_deg=v.initial_yaw_deg,
        initial_speed_mps=v.initial_speed_mps, decimal_year=f.decimal_year,
        environment=Environment(**f.environment.model_dump()),
        mission=_mission(f.mission, origin),
        objects=tuple(_scene_object(x) for x in f.objects), path=path, fleet=fleet,
        separation_m=f.separation_m)


def _vehicle_file(name: str, kind: str, base_dir: Optional[Path], where: str) -> Path:
    """The vehicle file name names: relative to the scenario, then in its kind's params."""
    try:
        return find_vehicle(kind, name, base_dir)
    except ConfigError as exc:
        raise ConfigError(f'{where}: {exc}') from None


def _mission(items, origin: GeoOrigin) -> tuple:
    """The mission items (lat/lon default to the origin's, a depth is a negative altitude)."""
    def item(it: MissionItemFile) -> MissionItem:
        alt = -it.depth_m if it.depth_m is not None else it.alt_m or 0.0
        return MissionItem(it.command,
                           origin.lat_deg if it.lat_deg is None else it.lat_deg,
                           origin.lon_deg if it.lon_deg is None else it.lon_deg,
                           alt, it.hold_s, it.acceptance_radius_m, it.deck)
    return tuple(item(it) for it in items)


def _entry(e: FleetEntryFile, f: ScenarioFile, origin: GeoOrigin, vehicle_file: Path,
           base_dir: Optional[Path], where: str) -> FleetEntry:
    """One vehicle of `vehicles:`, its defaults from the vehicle section."""
    v = f.vehicle
    kind = e.kind or v.kind
    vfile = vehicle_file if e.params is None else _vehicle_file(e.params, kind, base_dir,
                                                                f'{where}.params')
    return FleetEntry(
        vfile, e.initial_position_enu,
        v.initial_yaw_deg if e.initial_yaw_deg is None else e.initial_yaw_deg,
        None if e.mission is None else _mission(e.mission, origin), kind,
        e.controller, e.initial_speed_mps,
        e.start_on, e.cruise_speed_mps)


def _scene_object(o: SceneObjectFile) -> SceneObject:
    size = tuple(o.size) if isinstance(o.size, list) else (o.size,)
    return SceneObject(o.type, o.position_enu, size, o.color)


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
    """Load and validate a scenario YAML file (a bare name: sim_core.kinds.scenario_path)."""
    p = Path(path)
    if not p.is_file():
        p = scenario_path(str(path))
    data = read_yaml(p, 'scenario')
    return scenario_from_dict(data, base_dir=p.parent, path=p)
