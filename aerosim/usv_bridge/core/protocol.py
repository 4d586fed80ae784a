"""The USV swarm UI protocol (seed 004): init JSON, commands 21, 22 and 26 (pure, no rclpy).

Wire format (ours; the seed does not name a transport): one UTF-8 JSON text per UDP datagram
(or per line on TCP). The UI sends the SimConfig.json object (init), ``[22, ...]`` (motion
control of one boat) and ``[26, x]`` (session control); the simulator sends ``[21, n, ...]``.

Every parse/validate function raises ProtocolError with a ``kind`` (the reject counter it
goes to) and a text that names the offending field, e.g. ``boats[2].health: must be in
(0, 1e6], got -5``. Nothing here has side effects: a rejected input changes nothing.
"""

from dataclasses import dataclass
import datetime
import json
import math
from typing import Dict, Iterable, List, Optional, Sequence, Tuple

import numpy as np

# Reject kinds (counters): what went wrong with an input.
REJECT_KINDS = ('size', 'encoding', 'json', 'command', 'arity', 'type', 'value',
                'unknown_id', 'state')
CMD_STATE, CMD_CONTROL, CMD_SESSION = 21, 22, 26
# Command 26 codes.
SESSION_END, SESSION_PRACTICE, SESSION_SIMULATION, SESSION_REAL = 0, 1, 2, 3
SESSION_NAMES = {SESSION_END: 'end', SESSION_PRACTICE: 'practice',
                 SESSION_SIMULATION: 'simulation', SESSION_REAL: 'real-boat'}
# Command 22 task types and control modes.
TASK_NONE, TASK_ESCORT, TASK_DEFEND, TASK_ATTACK, TASK_MANUAL, TASK_RING, TASK_FORMATION = \
    range(7)
TASKS_WITH_TARGET = (TASK_ESCORT, TASK_DEFEND, TASK_ATTACK, TASK_RING, TASK_FORMATION)
MODE_NONE, MODE_WAYPOINT_SPEED, MODE_RUDDER_THROTTLE, MODE_HEADING_SPEED, \
    MODE_WAYPOINT_TIME, MODE_WAYPOINT_VARIABLE_SPEED = range(6)
WAYPOINT_MODES = (MODE_WAYPOINT_SPEED, MODE_WAYPOINT_TIME, MODE_WAYPOINT_VARIABLE_SPEED)
# Command 22 layout: [22, id, task, target, route, reserved, mode, a, b, changed, n, wp...]
CMD22_HEAD = 11
WAYPOINT_FIELDS = 3
MAX_WAYPOINTS = 1000
MAX_SPEED_MPS = 100.0
RUDDER_LIMIT_DEG = 30.0
# Command 21: values per boat (para2..para21) and the decimals sent.
CMD21_PER_BOAT = 20
LATLON_DECIMALS = 8
VALUE_DECIMALS = 4
TIMESTAMP_FORMAT = '%Y-%m-%d-%H-%M-%S'
MAX_TEXT_BYTES = 4 << 20


class ProtocolError(ValueError):
    """An input the protocol refuses; kind is one of REJECT_KINDS."""

    def __init__(self, kind: str, text: str):
        """kind: the reject counter; text: what is wrong, naming the field."""
        super().__init__(text)
        self.kind = kind


# --- field checks ------------------------------------------------------------------------------
def _is_number(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def number(v, name: str, lo: float = -math.inf, hi: float = math.inf,
           lo_open: bool = False) -> float:
    """A finite JSON number in [lo, hi] (or (lo, hi]) as float; ProtocolError naming name."""
    if not _is_number(v):
        raise ProtocolError('type', f'{name}: must be a number, got {v!r}')
    try:
        v = float(v)
    except OverflowError:       # an integer of hundreds of digits
        raise ProtocolError('value', f'{name}: must be finite, got an integer of '
                            f'{v.bit_length()} bits') from None
    if not math.isfinite(v):
        raise ProtocolError('value', f'{name}: must be finite, got {v!r}')
    if v < lo or v > hi or (lo_open and v == lo):
        raise ProtocolError('value', f'{name}: must be in {"(" if lo_open else "["}{lo:g}, '
                            f'{hi:g}], got {v:g}')
    return v


def integer(v, name: str, lo: int, hi: int) -> int:
    """A JSON integer in [lo, hi] (an integral float such as 3.0 is accepted)."""
    if not _is_number(v):
        raise ProtocolError('type', f'{name}: must be an integer, got {v!r}')
    if isinstance(v, float):
        if not (math.isfinite(v) and v.is_integer()):
            raise ProtocolError('type', f'{name}: must be an integer, got {v!r}')
        v = int(v)
    if not lo <= v <= hi:
        raise ProtocolError('value', f'{name}: must be in [{lo}, {hi}], got {v}')
    return v


# --- decoding ----------------------------------------------------------------------------------
def decode(data: bytes):
    """One datagram/line -> ('init', dict) or (code, list) for codes 21, 22, 26.

    Raises ProtocolError for anything else (size, not UTF-8, not JSON, unknown command).
    """
    if len(data) > MAX_TEXT_BYTES:
        raise ProtocolError('size', f'{len(data)} bytes, more than {MAX_TEXT_BYTES}')
    try:
        text = data.decode('utf-8')
    except UnicodeDecodeError as exc:
        raise ProtocolError('encoding', f'not UTF-8: {exc}') from None
    try:
        obj = json.loads(text, parse_constant=_no_constant)
    except (ValueError, RecursionError) as exc:
        raise ProtocolError('json', f'not JSON: {exc}') from None
    if isinstance(obj, dict):
        return 'init', obj
    if isinstance(obj, list) and obj:
        code = obj[0]
        if _is_number(code) and code in (CMD_STATE, CMD_CONTROL, CMD_SESSION):
            return int(code), obj
        raise ProtocolError('command', f'unknown command code {str(code)[:40]!r}')
    raise ProtocolError('command', f'expected a JSON object (init) or a non-empty array '
                        f'[code, ...], got {type(obj).__name__}')


def _no_constant(name):
    # NaN, Infinity, -Infinity are not JSON; Python's json accepts them unless told otherwise.
    raise ValueError(f'{name} is not a JSON number')


# --- init (SimConfig.json) ---------------------------------------------------------------------
@dataclass(frozen=True)
class BoatSpec:
    """One boat of the init object (protocol units: degrees, %, m, damage per second)."""

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
    """One obstacle of the init object."""

    id: int
    type: int
    lon_deg: float
    lat_deg: float
    start_angle_deg: float


@dataclass(frozen=True)
class SimConfig:
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
MAX_ID = 2**31 - 1


def _fields(obj, keys: Sequence[str], where: str):
    if not isinstance(obj, dict):
        raise ProtocolError('type', f'{where}: must be an object, got {type(obj).__name__}')
    missing = [k for k in keys if k not in obj]
    if missing:
        raise ProtocolError('value', f'{where + "." if where else ""}{missing[0]}: missing'
                            + (f' (and {len(missing) - 1} more)' if len(missing) > 1 else ''))
    return [f'{where + "." if where else ""}{k}' for k in obj if k not in keys]


def parse_config(obj, boat_types: Iterable[int], obstacle_types: Iterable[int],
                 max_boats: int = 10000, max_obstacles: int = 10000) -> SimConfig:
    """Validate the init object; ProtocolError names the first bad field.

    boat_types / obstacle_types: the ``type`` codes this simulator knows.
    """
    boat_types, obstacle_types = set(boat_types), set(obstacle_types)
    ignored = _fields(obj, TOP_FIELDS, '')
    g = obj
    ts = number(g['time_scale'], 'time_scale', 0.1, 100.0)
    wave = integer(g['wave_degree'], 'wave_degree', 0, 9)
    weather = integer(g['weather'], 'weather', 0, 12)
    hour = integer(g['hour'], 'hour', 0, 23)
    west = number(g['x_leftTop_longtitude'], 'x_leftTop_longtitude', -180.0, 180.0)
    north = number(g['y_leftTop_latitude'], 'y_leftTop_latitude', -85.0, 85.0)
    east = number(g['x_rightBottom_longtitude'], 'x_rightBottom_longtitude', -180.0, 180.0)
    south = number(g['y_rightBottom_latitude'], 'y_rightBottom_latitude', -85.0, 85.0)
    if not east > west:
        raise ProtocolError('value', f'x_rightBottom_longtitude: must be east of '
                            f'x_leftTop_longtitude ({west:g}), got {east:g}')
    if not north > south:
        raise ProtocolError('value', f'y_rightBottom_latitude: must be south of '
                            f'y_leftTop_latitude ({north:g}), got {south:g}')
    if east - west > 10.0 or north - south > 10.0:
        raise ProtocolError('value', f'map: at most 10 degrees across (a local tangent plane), '
                            f'got {east - west:g} x {north - south:g}')

    def inside(lon, lat, where):
        if not (west <= lon <= east):
            raise ProtocolError('value', f'{where}.x_longtitude: {lon:g} is outside the map '
                                f'[{west:g}, {east:g}]')
        if not (south <= lat <= north):
            raise ProtocolError('value', f'{where}.y_latitude: {lat:g} is outside the map '
                                f'[{south:g}, {north:g}]')

    def items(name, lo, hi):
        v = g[name]
        if not isinstance(v, list) or not lo <= len(v) <= hi:
            raise ProtocolError('value' if isinstance(v, list) else 'type',
                                f'{name}: must be a list of {lo}..{hi} items, got '
                                f'{len(v) if isinstance(v, list) else v!r}')
        return v

    seen = {}

    def placed(item, where, keys, types, what):
        """The fields boats and obstacles share: (id, type, lon, lat, startAngle)."""
        nonlocal ignored
        ignored += _fields(item, keys, where)
        iid = integer(item['id'], f'{where}.id', 0, MAX_ID)
        if iid in seen:
            raise ProtocolError('value', f'{where}.id: {iid} is already used by {seen[iid]}')
        seen[iid] = where
        itype = integer(item['type'], f'{where}.type', 0, MAX_ID)
        if itype not in types:
            raise ProtocolError('value', f'{where}.type: unknown {what} type {itype}; known: '
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
    return SimConfig(
        time_scale=ts, wave_degree=wave, weather=weather, hour=hour, map_west_deg=west,
        map_north_deg=north, map_east_deg=east, map_south_deg=south, boats=tuple(boats),
        obstacles=tuple(obstacles),
        map_max_distance_m=number(g['map_max_distance'], 'map_max_distance', 0.0, 1e7,
                                  lo_open=True),
        task_area_lon_deg=ta_lon, task_area_lat_deg=ta_lat,
        task_area_radius_m=number(g['task_area_radius'], 'task_area_radius', 0.0, 1e7,
                                  lo_open=True),
        gas_pid=tuple(gains[:3]), steering_pid=tuple(gains[3:]), ignored=tuple(ignored))


# --- command 22 --------------------------------------------------------------------------------
@dataclass(frozen=True)
class BoatCommand:
    """A validated command 22 (protocol units: degrees, m/s, throttle %, seconds)."""

    boat_id: int
    task: int
    target_id: int
    route_id: int
    mode: int
    throttle_or_speed: float      # mode 2: throttle [0, 100] %; modes 1/3/5: speed [m/s]
    rudder_or_heading: float      # mode 2: rudder [-30, 30] deg; mode 3: heading [0, 360) deg
    changed: bool                 # the waypoints (modes 1, 4) / speed (mode 5) changed
    waypoints: Tuple[Tuple[float, float, float], ...]  # (lon, lat, speed m/s | time s)


def parse_command22(arr: List, config: SimConfig,
                    ids: Optional[Dict[int, int]] = None) -> BoatCommand:
    """Validate [22, ...] against the seed's table and the running config.

    ids: boat id -> index (config.boat_index(), passed in to avoid rebuilding it).
    """
    if len(arr) < CMD22_HEAD:
        raise ProtocolError('arity', f'22: at least {CMD22_HEAD} values, got {len(arr)}')
    ids = config.boat_index() if ids is None else ids
    bid = integer(arr[1], '22.para1 (boat id)', 0, MAX_ID)
    if bid not in ids:
        raise ProtocolError('unknown_id', f'22.para1: no boat {bid} in the running config')
    task = integer(arr[2], '22.para2 (task)', 0, 6)
    target = integer(arr[3], '22.para3 (target id)', 0, MAX_ID)
    if task in TASKS_WITH_TARGET:
        if target not in ids:
            raise ProtocolError('unknown_id', f'22.para3: task {task} needs a target boat; '
                                f'no boat {target}')
        if target == bid:
            raise ProtocolError('value', f'22.para3: boat {bid} cannot target itself')
    route = integer(arr[4], '22.para4 (route id)', -MAX_ID, MAX_ID)
    integer(arr[5], '22.para5 (reserved)', -MAX_ID, MAX_ID)
    mode = integer(arr[6], '22.para6 (control mode)', 0, 5)
    a = number(arr[7], '22.para7 (throttle/speed)')
    b = number(arr[8], '22.para8 (rudder/heading)')
    changed = integer(arr[9], '22.para9 (changed)', 0, 1)
    n = integer(arr[10], '22.para10 (waypoints)', 0, MAX_WAYPOINTS)
    if len(arr) != CMD22_HEAD + WAYPOINT_FIELDS * n:
        raise ProtocolError('arity', f'22: {n} waypoints need {CMD22_HEAD + 3 * n} values, '
                            f'got {len(arr)}')
    if mode == MODE_RUDDER_THROTTLE:
        number(a, '22.para7 (throttle %)', 0.0, 100.0)
        number(b, '22.para8 (rudder deg)', -RUDDER_LIMIT_DEG, RUDDER_LIMIT_DEG)
    if mode in (MODE_HEADING_SPEED, MODE_WAYPOINT_VARIABLE_SPEED):
        number(a, '22.para7 (speed m/s)', 0.0, MAX_SPEED_MPS)
    if mode == MODE_HEADING_SPEED:
        number(b, '22.para8 (heading deg)', 0.0, 360.0)
        if b == 360.0:
            raise ProtocolError('value', '22.para8 (heading deg): must be in [0, 360), got 360')
    wps = []
    last_t = 0.0
    for k in range(n):
        o = CMD22_HEAD + WAYPOINT_FIELDS * k
        w = f'22.waypoint[{k}]'
        lon = number(arr[o], f'{w}.lon')
        lat = number(arr[o + 1], f'{w}.lat')
        if not config.inside(lon, lat):
            raise ProtocolError('value', f'{w}: ({lon:.8f}, {lat:.8f}) is outside the map')
        if mode == MODE_WAYPOINT_TIME:
            v = number(arr[o + 2], f'{w}.time_s', last_t, 1e7, lo_open=True)
            last_t = v
        else:
            v = number(arr[o + 2], f'{w}.speed', 0.0, MAX_SPEED_MPS)
        wps.append((lon, lat, v))
    if mode in (MODE_WAYPOINT_SPEED, MODE_WAYPOINT_TIME) and changed and not wps:
        raise ProtocolError('value', f'22: mode {mode} with changed = 1 needs waypoints')
    return BoatCommand(bid, task, target, route, mode, a, b, bool(changed), tuple(wps))


def parse_command26(arr: List) -> int:
    """Validate [26, x]: the session code 0..3."""
    if len(arr) != 2:
        raise ProtocolError('arity', f'26: exactly 2 values, got {len(arr)}')
    return integer(arr[1], '26.para1', 0, 3)


# --- command 21 --------------------------------------------------------------------------------
# Columns of command 21's per-boat block (para2..para21), in order; True: an integer field.
CMD21_COLUMNS = (
    ('id', True), ('lon_deg', False), ('lat_deg', False), ('yaw_deg', False),
    ('yaw_rate', False), ('yaw_acc', False), ('pitch_deg', False), ('roll_deg', False),
    ('speed_forward', False), ('acc_forward', False), ('speed_lateral', False),
    ('acc_lateral', False), ('course_deg', False), ('status', True), ('task', True),
    ('target_id', True), ('control_mode', True), ('control_a', False), ('control_b', False),
    ('health', False))


def wrap_180(deg):
    """Degrees into [-180, 180) (arrays or scalars)."""
    return (np.asarray(deg, dtype=float) + 180.0) % 360.0 - 180.0


def timestamp(when: datetime.datetime) -> str:
    """yyyy-MM-dd-HH-mm-ss-fff."""
    return when.strftime(TIMESTAMP_FORMAT) + f'-{when.microsecond // 1000:03d}'


def parse_timestamp(text: str) -> datetime.datetime:
    """Inverse of timestamp() (tests and clients)."""
    head, _, ms = text.rpartition('-')
    if len(ms) != 3 or not ms.isdigit():
        raise ProtocolError('value', f'timestamp {text!r}: expected yyyy-MM-dd-HH-mm-ss-fff')
    return datetime.datetime.strptime(head, TIMESTAMP_FORMAT).replace(
        microsecond=int(ms) * 1000)


def encode_21(columns: Dict[str, np.ndarray], stamp: str,
              max_bytes: Optional[int] = None) -> List[bytes]:
    """Command 21 for every boat: one UTF-8 JSON array, or several if max_bytes is given.

    columns: CMD21_COLUMNS name -> array (N,). Latitude/longitude are rounded to 8 decimals,
    the other floats to 4; yaw and course are expected in [-180, 180). With max_bytes, boats
    are packed in order into as many datagrams as needed, each a complete command
    ``[21, k, <k boats>, stamp]`` with the same stamp (the UI merges the parts of one stamp).
    """
    cols = []
    for name, is_int in CMD21_COLUMNS:
        a = np.asarray(columns[name])
        if is_int:
            cols.append(a.astype(np.int64).tolist())
        else:
            d = LATLON_DECIMALS if name in ('lon_deg', 'lat_deg') else VALUE_DECIMALS
            cols.append(np.round(a.astype(float), d).tolist())
    rows = list(zip(*cols))
    tail = json.dumps(stamp)

    def part(chunk) -> bytes:
        # numbers only: the nested JSON's inner brackets can be dropped safely (C encoder)
        body = json.dumps(chunk, separators=(',', ':'))[2:-2].replace('],[', ',')
        return f'[21,{len(chunk)},{body},{tail}]'.encode()
    if max_bytes is None or not rows:
        return [part(rows)] if rows else [f'[21,0,{tail}]'.encode()]
    out = []
    per_row = len(part(rows[:64])) / min(len(rows), 64)
    size = max(1, int(0.9 * max_bytes / per_row))
    i = 0
    while i < len(rows):
        k = min(size, len(rows) - i)
        data = part(rows[i:i + k])
        while len(data) > max_bytes:
            if k == 1:
                raise ValueError(f'max_bytes {max_bytes}: too small for one boat '
                                 f'({len(data)} bytes)')
            k = max(1, k // 2)
            data = part(rows[i:i + k])
        out.append(data)
        i += k
    return out


def decode_21(arr: List) -> Tuple[List[Dict[str, float]], str]:
    """[21, n, ...] -> (one dict per boat keyed by CMD21_COLUMNS names, timestamp)."""
    if len(arr) < 3:
        raise ProtocolError('arity', f'21: at least 3 values, got {len(arr)}')
    n = integer(arr[1], '21.para1', 0, MAX_ID)
    if len(arr) != 3 + CMD21_PER_BOAT * n:
        raise ProtocolError('arity', f'21: {n} boats need {3 + CMD21_PER_BOAT * n} values, '
                            f'got {len(arr)}')
    names = [c for c, _ in CMD21_COLUMNS]
    boats = [dict(zip(names, arr[2 + CMD21_PER_BOAT * i: 2 + CMD21_PER_BOAT * (i + 1)]))
             for i in range(n)]
    return boats, arr[-1]
