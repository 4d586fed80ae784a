"""A USV swarm scenario: the SimConfig.json object of seed 004, validated (pure, no rclpy).

The swarm is described by the init object the USV UI sends (and by `config/SimConfig.json`,
the same object read from a file): the map, the boats and obstacles with their type codes,
the environment and the control gains. This module owns that description and its checks; the
UI bridge (usv_bridge.core.protocol) decodes the wire and hands the object here.

A refused object raises sim_core.validate.FieldError naming the first bad field, e.g.
``boats[2].health: must be in (0, 1e+06], got -5``. Nothing has side effects.
"""

from dataclasses import dataclass
import json
from pathlib import Path
from typing import Any, Dict, Iterable, Sequence, Tuple

from sim_core.clock import MAX_TIME_SCALE, MIN_TIME_SCALE
from sim_core.errors import ConfigError
from sim_core.paths import resolve_config_path
from sim_core.validate import FieldError, integer, number

MAX_ID = 2**31 - 1


@dataclass(frozen=True)
class BoatSpec:
    """One boat: ids, WGS-84 position [deg], compass start heading [deg], health, attack."""

    id: int
    type: int
    team: int
    lon_deg: float
    lat_deg: float
    start_angle_deg: float    # compass heading at start
    health: float
    gas_output_rate: float    # throttle slew [% per second]
    attack_radius_m: float
    attack: float             # damage per second dealt to the target within attack_radius


@dataclass(frozen=True)
class ObstacleSpec:
    """One obstacle: ids, WGS-84 position [deg], compass heading [deg]."""

    id: int
    type: int
    lon_deg: float
    lat_deg: float
    start_angle_deg: float


@dataclass(frozen=True)
class SwarmConfig:
    """The validated init object."""

    time_scale: float
    wave_degree: int          # WMO sea state 0..9
    weather: int              # Beaufort force 0..12 (ours: the seed gives no scale)
    hour: int                 # local hour of day at start, 0..23
    map_west_deg: float       # x_leftTop_longtitude
    map_north_deg: float      # y_leftTop_latitude
    map_east_deg: float       # x_rightBottom_longtitude
    map_south_deg: float      # y_rightBottom_latitude
    boats: Tuple[BoatSpec, ...]
    obstacles: Tuple[ObstacleSpec, ...]
    map_max_distance_m: float
    task_area_lon_deg: float
    task_area_lat_deg: float
    task_area_radius_m: float
    gas_pid: Tuple[float, float, float]
    steering_pid: Tuple[float, float, float]
    ignored: Tuple[str, ...] = ()     # keys present but not part of the seed (logged)

    @property
    def center(self) -> Tuple[float, float]:
        """(lat, lon) [deg] of the map's centre: the origin of the local frame."""
        return (0.5 * (self.map_north_deg + self.map_south_deg),
                0.5 * (self.map_west_deg + self.map_east_deg))

    def inside(self, lon: float, lat: float) -> bool:
        """Whether (lon, lat) lies inside the map corners."""
        return (self.map_west_deg <= lon <= self.map_east_deg
                and self.map_south_deg <= lat <= self.map_north_deg)

    def boat_index(self) -> Dict[int, int]:
        """Boat id -> index in boats."""
        return {b.id: i for i, b in enumerate(self.boats)}


TOP_FIELDS = ('time_scale', 'wave_degree', 'weather', 'hour', 'x_leftTop_longtitude',
              'y_leftTop_latitude', 'x_rightBottom_longtitude', 'y_rightBottom_latitude',
              'boats', 'obstacles', 'map_max_distance', 'task_area_center_longtitude',
              'task_area_center_latitude', 'task_area_radius', 'gas_p', 'gas_i', 'gas_d',
              'steering_p', 'steering_i', 'steering_d')
BOAT_FIELDS = ('id', 'type', 'team', 'x_longtitude', 'y_latitude', 'startAngle', 'health',
               'gas_outputRate', 'attack_radius', 'attack')
OBSTACLE_FIELDS = ('id', 'type', 'x_longtitude', 'y_latitude', 'startAngle')


def _fields(obj, keys: Sequence[str], where: str):
    if not isinstance(obj, dict):
        raise FieldError('type', f'{where or "init"}: must be an object, got '
                         f'{type(obj).__name__}')
    missing = [k for k in keys if k not in obj]
    if missing:
        raise FieldError('value', f'{where + "." if where else ""}{missing[0]}: missing'
                         + (f' (and {len(missing) - 1} more)' if len(missing) > 1 else ''))
    return [f'{where + "." if where else ""}{k}' for k in obj if k not in keys]


def parse_swarm_config(obj, boat_types: Iterable[int], obstacle_types: Iterable[int],
                       max_boats: int = 10000, max_obstacles: int = 10000) -> SwarmConfig:
    """Validate the init object; FieldError names the first bad field.

    boat_types / obstacle_types: the ``type`` codes this simulator knows.
    """
    boat_types, obstacle_types = set(boat_types), set(obstacle_types)
    ignored = _fields(obj, TOP_FIELDS, '')
    g = obj
    ts = number(g['time_scale'], 'time_scale', MIN_TIME_SCALE, MAX_TIME_SCALE)
    wave = integer(g['wave_degree'], 'wave_degree', 0, 9)
    weather = integer(g['weather'], 'weather', 0, 12)
    hour = integer(g['hour'], 'hour', 0, 23)
    west = number(g['x_leftTop_longtitude'], 'x_leftTop_longtitude', -180.0, 180.0)
    north = number(g['y_leftTop_latitude'], 'y_leftTop_latitude', -85.0, 85.0)
    east = number(g['x_rightBottom_longtitude'], 'x_rightBottom_longtitude', -180.0, 180.0)
    south = number(g['y_rightBottom_latitude'], 'y_rightBottom_latitude', -85.0, 85.0)
    if not east > west:
        raise FieldError('value', f'x_rightBottom_longtitude: must be east of '
                         f'x_leftTop_longtitude ({west:g}), got {east:g}')
    if not north > south:
        raise FieldError('value', f'y_rightBottom_latitude: must be south of '
                         f'y_leftTop_latitude ({north:g}), got {south:g}')
    if east - west > 10.0 or north - south > 10.0:
        raise FieldError('value', f'map: at most 10 degrees across (a local tangent plane), '
                         f'got {east - west:g} x {north - south:g}')

    def inside(lon, lat, where):
        if not (west <= lon <= east):
            raise FieldError('value', f'{where}.x_longtitude: {lon:g} is outside the map '
                             f'[{west:g}, {east:g}]')
        if not (south <= lat <= north):
            raise FieldError('value', f'{where}.y_latitude: {lat:g} is outside the map '
                             f'[{south:g}, {north:g}]')

    def items(name, lo, hi):
        v = g[name]
        if not isinstance(v, list) or not lo <= len(v) <= hi:
            raise FieldError('value' if isinstance(v, list) else 'type',
                             f'{name}: must be a list of {lo}..{hi} items, got '
                             f'{len(v) if isinstance(v, list) else v!r}')
        return v

    seen: Dict[Any, str] = {}

    def placed(item, where, keys, types, what):
        """The fields boats and obstacles share: (id, type, lon, lat, startAngle)."""
        nonlocal ignored
        ignored += _fields(item, keys, where)
        iid = integer(item['id'], f'{where}.id', 0, MAX_ID)
        if iid in seen:
            raise FieldError('value', f'{where}.id: {iid} is already used by {seen[iid]}')
        seen[iid] = where
        itype = integer(item['type'], f'{where}.type', 0, MAX_ID)
        if itype not in types:
            raise FieldError('value', f'{where}.type: unknown {what} type {itype}; known: '
                             f'{sorted(types)}')
        lon = number(item['x_longtitude'], f'{where}.x_longtitude')
        lat = number(item['y_latitude'], f'{where}.y_latitude')
        inside(lon, lat, where)
        return iid, itype, lon, lat, number(item['startAngle'], f'{where}.startAngle',
                                            -360.0, 360.0)

    boats_raw = items('boats', 1, max_boats)
    obst_raw = items('obstacles', 0, max_obstacles)
    boats = []
    for i, b in enumerate(boats_raw):
        w = f'boats[{i}]'
        bid, btype, lon, lat, angle = placed(b, w, BOAT_FIELDS, boat_types, 'boat')
        boats.append(BoatSpec(
            id=bid, type=btype, team=integer(b['team'], f'{w}.team', 0, MAX_ID),
            lon_deg=lon, lat_deg=lat, start_angle_deg=angle,
            health=number(b['health'], f'{w}.health', 0.0, 1e6, lo_open=True),
            gas_output_rate=number(b['gas_outputRate'], f'{w}.gas_outputRate', 0.0, 1e4,
                                   lo_open=True),
            attack_radius_m=number(b['attack_radius'], f'{w}.attack_radius', 0.0, 1e5),
            attack=number(b['attack'], f'{w}.attack', 0.0, 1e6)))
    obstacles = [ObstacleSpec(*placed(o, f'obstacles[{i}]', OBSTACLE_FIELDS, obstacle_types,
                                      'obstacle'))
                 for i, o in enumerate(obst_raw)]
    ta_lon = number(g['task_area_center_longtitude'], 'task_area_center_longtitude',
                    -180.0, 180.0)
    ta_lat = number(g['task_area_center_latitude'], 'task_area_center_latitude', -90.0, 90.0)
    gains = [number(g[k], k, 0.0, 1e3) for k in ('gas_p', 'gas_i', 'gas_d', 'steering_p',
                                                  'steering_i', 'steering_d')]
    return SwarmConfig(
        time_scale=ts, wave_degree=wave, weather=weather, hour=hour, map_west_deg=west,
        map_north_deg=north, map_east_deg=east, map_south_deg=south, boats=tuple(boats),
        obstacles=tuple(obstacles),
        map_max_distance_m=number(g['map_max_distance'], 'map_max_distance', 0.0, 1e7,
                                  lo_open=True),
        task_area_lon_deg=ta_lon, task_area_lat_deg=ta_lat,
        task_area_radius_m=number(g['task_area_radius'], 'task_area_radius', 0.0, 1e7,
                                  lo_open=True),
        gas_pid=(gains[0], gains[1], gains[2]),
        steering_pid=(gains[3], gains[4], gains[5]), ignored=tuple(ignored))


def _no_constant(name):
    # NaN, Infinity, -Infinity are not JSON; Python's json takes them unless told otherwise.
    raise ValueError(f'{name} is not a JSON number')


def json_object(text: str, what: str = 'init'):
    """Strict JSON (no NaN/Infinity) that must be an object; FieldError otherwise."""
    try:
        obj = json.loads(text, parse_constant=_no_constant)
    except (ValueError, RecursionError) as exc:
        raise FieldError('json', f'{what}: not JSON: {exc}') from None
    if not isinstance(obj, dict):
        raise FieldError('type', f'{what}: must be a JSON object, got {type(obj).__name__}')
    return obj


def load_swarm_config(name: str, boat_types: Iterable[int], obstacle_types: Iterable[int],
                      max_boats: int) -> Tuple[SwarmConfig, str]:
    """Read and validate a SimConfig.json file (a path, or a name in config/).

    Returns (the config, its JSON text). ConfigError naming the file and the field if it is
    unreadable or refused.
    """
    path = Path(resolve_config_path(name))
    try:
        data = path.read_bytes()
        try:
            text = data.decode('utf-8-sig')
        except UnicodeDecodeError as exc:
            raise FieldError('encoding', f'not UTF-8: {exc}') from None
        return parse_swarm_config(json_object(text, path.name), boat_types, obstacle_types,
                                  max_boats), text
    except (OSError, ValueError) as exc:      # FieldError and UnicodeError are ValueErrors
        raise ConfigError(f'{path}: {exc}') from exc
