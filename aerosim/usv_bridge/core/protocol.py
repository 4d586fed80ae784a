"""The USV swarm UI protocol (seed 004): init JSON, commands 21, 22 and 26 (pure, no rclpy).

Wire format (ours; the seed does not name a transport): one UTF-8 JSON text per UDP datagram
(or per line on TCP). The UI sends the SimConfig.json object (init), ``[22, ...]`` (motion
control of one boat) and ``[26, x]`` (session control); the simulator sends ``[21, n, ...]``
with n the swarm's boat count, the whole swarm in one datagram (UDP) or one line (TCP).

This module maps the wire onto the swarm's own types (sim_dynamics.core.swarm_config for the
init, swarm_orders.Order for 22) and back (21 from the SwarmState columns). Every parse and
validate function raises ProtocolError with a ``kind`` (the reject counter it goes to) and a
text that names the offending field, e.g. ``boats[2].health: must be in (0, 1e6], got -5``.
Nothing here has side effects: a rejected input changes nothing.
"""

import datetime
import json
from typing import Any, Dict, List, Optional, Tuple

import numpy as np

from sim_core.validate import FieldError, integer, is_number, number
from sim_dynamics.core.swarm_config import MAX_ID, SwarmConfig, parse_swarm_config
from sim_dynamics.core.swarm_orders import (
    MAX_SPEED_MPS,
    MAX_WAYPOINTS,
    RUDDER_LIMIT_DEG,
    TASKS_WITH_TARGET,
    Motion,
    Order,
    Task,
    Waypoint,
)

# Reject kinds (counters): what went wrong with an input. 'state': the simulation refused it
# (no session, a boat out of action); 'busy': more inputs queued than max_pending; 'other_ui':
# a valid input from a second UI while another one has control.
REJECT_KINDS = ('size', 'encoding', 'json', 'command', 'arity', 'type', 'value',
                'unknown_id', 'state', 'busy', 'other_ui')
CMD_STATE, CMD_CONTROL, CMD_SESSION = 21, 22, 26
# Command 26 codes.
SESSION_END, SESSION_PRACTICE, SESSION_SIMULATION, SESSION_REAL = 0, 1, 2, 3
SESSION_NAMES = {SESSION_END: 'end', SESSION_PRACTICE: 'practice',
                 SESSION_SIMULATION: 'simulation', SESSION_REAL: 'real-boat'}
# Command 22 wire codes -> the swarm's tasks and motions (the seed's numbering).
TASKS = {int(t): t for t in Task}
MOTIONS = {int(m): m for m in Motion}
# Command 22 layout: [22, id, task, target, route, reserved, mode, a, b, changed, n, wp...]
CMD22_HEAD = 11
HEADING_FIELD = '22.para8 (heading deg)'
WAYPOINT_FIELDS = 3
# Command 21: values per boat (para2..para21) and the decimals sent.
CMD21_PER_BOAT = 20
LATLON_DECIMALS = 8
VALUE_DECIMALS = 4
TIMESTAMP_FORMAT = '%Y-%m-%d-%H-%M-%S'
MAX_TEXT_BYTES = 4 << 20
UTF8_BOM = b'\xef\xbb\xbf'


class ProtocolError(FieldError):
    """An input the protocol refuses; kind is one of REJECT_KINDS."""


# --- decoding ----------------------------------------------------------------------------------
def decode(data: bytes):
    """One datagram/line -> ('init', dict) or (code, list) for codes 21, 22, 26.

    A leading UTF-8 byte order mark is skipped (RFC 8259 lets a parser ignore it). Raises
    ProtocolError for anything else (size, not UTF-8, not JSON, unknown command), naming a
    JSON text that holds JSON (an init encoded twice).
    """
    if len(data) > MAX_TEXT_BYTES:
        raise ProtocolError('size', f'{len(data)} bytes, more than {MAX_TEXT_BYTES}')
    if data.startswith(UTF8_BOM):
        data = data[len(UTF8_BOM):]
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
        if is_number(code) and code in (CMD_STATE, CMD_CONTROL, CMD_SESSION):
            return int(code), obj
        raise ProtocolError('command', f'unknown command code {str(code)[:40]!r}')
    if isinstance(obj, str) and obj.lstrip()[:1] in ('{', '['):
        raise ProtocolError('command', 'a JSON string that holds JSON (encoded twice?): send '
                            'the object or array itself')
    raise ProtocolError('command', f'expected a JSON object (init) or a non-empty array '
                        f'[code, ...], got {type(obj).__name__}')


def _no_constant(name):
    # NaN, Infinity, -Infinity are not JSON; Python's json accepts them unless told otherwise.
    raise ValueError(f'{name} is not a JSON number')


def _wire(exc: FieldError) -> ProtocolError:
    return exc if isinstance(exc, ProtocolError) else ProtocolError(exc.kind, str(exc))


def parse_init(obj, boat_types, obstacle_types, max_boats: int = 10000) -> SwarmConfig:
    """Validate an init object (the swarm's SimConfig.json schema); ProtocolError if refused."""
    try:
        return parse_swarm_config(obj, boat_types, obstacle_types, max_boats)
    except FieldError as exc:
        raise _wire(exc) from None


# --- command 22 --------------------------------------------------------------------------------
def parse_command22(arr: List, config: SwarmConfig,
                    ids: Optional[Dict[int, int]] = None) -> Order:
    """Validate [22, ...] against the seed's table and the running config; the boat's Order.

    ids: boat id -> index (config.boat_index(), passed in to avoid rebuilding it).
    """
    if len(arr) < CMD22_HEAD:
        raise ProtocolError('arity', f'22: at least {CMD22_HEAD} values, got {len(arr)}')
    ids = config.boat_index() if ids is None else ids
    try:
        bid = integer(arr[1], '22.para1 (boat id)', 0, MAX_ID)
        if bid not in ids:
            raise ProtocolError('unknown_id', f'22.para1: no boat {bid} in the running config')
        task = TASKS[integer(arr[2], '22.para2 (task)', 0, 6)]
        target = integer(arr[3], '22.para3 (target id)', 0, MAX_ID)
        if task in TASKS_WITH_TARGET:
            if target not in ids:
                raise ProtocolError('unknown_id', f'22.para3: task {int(task)} needs a target '
                                    f'boat; no boat {target}')
            if target == bid:
                raise ProtocolError('value', f'22.para3: boat {bid} cannot target itself')
        route = integer(arr[4], '22.para4 (route id)', -MAX_ID, MAX_ID)
        integer(arr[5], '22.para5 (reserved)', -MAX_ID, MAX_ID)
        mode = MOTIONS[integer(arr[6], '22.para6 (control mode)', 0, 5)]
        a = number(arr[7], '22.para7 (throttle/speed)')
        b = number(arr[8], '22.para8 (rudder/heading)')
        changed = integer(arr[9], '22.para9 (changed)', 0, 1)
        n = integer(arr[10], '22.para10 (waypoints)', 0, MAX_WAYPOINTS)
        if len(arr) != CMD22_HEAD + WAYPOINT_FIELDS * n:
            raise ProtocolError('arity', f'22: {n} waypoints need {CMD22_HEAD + 3 * n} values, '
                                f'got {len(arr)}')
        order: Dict[str, Any] = {'boat_id': bid, 'task': task, 'target_id': target,
                                 'route_id': route, 'motion': mode,
                                 'route_changed': bool(changed)}
        if mode == Motion.RUDDER_THROTTLE:
            order.update(throttle_pct=number(a, '22.para7 (throttle %)', 0.0, 100.0),
                         rudder_deg=number(b, '22.para8 (rudder deg)', -RUDDER_LIMIT_DEG,
                                           RUDDER_LIMIT_DEG))
        if mode in (Motion.HEADING_SPEED, Motion.WAYPOINT_VARIABLE_SPEED):
            order['speed_mps'] = number(a, '22.para7 (speed m/s)', 0.0, MAX_SPEED_MPS)
        if mode == Motion.HEADING_SPEED:
            order['heading_deg'] = heading(b)
        wps = []
        last_t = 0.0
        for k in range(n):
            o = CMD22_HEAD + WAYPOINT_FIELDS * k
            w = f'22.waypoint[{k}]'
            lon = number(arr[o], f'{w}.lon')
            lat = number(arr[o + 1], f'{w}.lat')
            if not config.inside(lon, lat):
                raise ProtocolError('value', f'{w}: ({lon:.8f}, {lat:.8f}) is outside the map')
            if mode == Motion.WAYPOINT_TIME:
                v = number(arr[o + 2], f'{w}.time_s', last_t, 1e7, lo_open=True)
                last_t = v
            else:
                v = number(arr[o + 2], f'{w}.speed', 0.0, MAX_SPEED_MPS)
            wps.append(Waypoint(lat_deg=lat, lon_deg=lon, value=v))
        if mode in (Motion.WAYPOINT_SPEED, Motion.WAYPOINT_TIME) and changed and not wps:
            raise ProtocolError('value', f'22: mode {int(mode)} with changed = 1 needs '
                                'waypoints')
    except FieldError as exc:
        raise _wire(exc) from None
    return Order(waypoints=tuple(wps), **order)


def heading(v) -> float:
    """22.para8 in mode 3: a compass heading in [0, 360) degrees, as the seed gives it."""
    h = number(v, HEADING_FIELD)
    if not 0.0 <= h < 360.0:
        raise ProtocolError('value', f'{HEADING_FIELD}: must be in [0, 360), got {h:g}')
    return h


def boat_of(arr: List):
    """A 22's boat as sent (para1) if it is an integer, else None: named in its answer."""
    v = arr[1] if len(arr) > 1 else None
    if isinstance(v, float) and v.is_integer():    # 3.0 (NaN and infinities are not)
        v = int(v)
    if isinstance(v, int) and not isinstance(v, bool) and abs(v) <= MAX_ID:
        return v
    return None


def parse_command26(arr: List) -> int:
    """Validate [26, x]: the session code 0..3."""
    if len(arr) != 2:
        raise ProtocolError('arity', f'26: exactly 2 values, got {len(arr)}')
    try:
        return integer(arr[1], '26.para1', 0, 3)
    except FieldError as exc:
        raise _wire(exc) from None


# --- command 21 --------------------------------------------------------------------------------
# Columns of command 21's per-boat block (para2..para21), in order; True: an integer field.
CMD21_COLUMNS = (
    ('id', True), ('lon_deg', False), ('lat_deg', False), ('yaw_deg', False),
    ('yaw_rate', False), ('yaw_acc', False), ('pitch_deg', False), ('roll_deg', False),
    ('speed_forward', False), ('acc_forward', False), ('speed_lateral', False),
    ('acc_lateral', False), ('course_deg', False), ('status', True), ('task', True),
    ('target_id', True), ('control_mode', True), ('control_a', False), ('control_b', False),
    ('health', False))


def timestamp(when: datetime.datetime) -> str:
    """yyyy-MM-dd-HH-mm-ss-fff."""
    return when.strftime(TIMESTAMP_FORMAT) + f'-{when.microsecond // 1000:03d}'


def parse_timestamp(text: str) -> datetime.datetime:
    """Inverse of timestamp() (tests and clients)."""
    head, _, ms = text.rpartition('-')
    if len(ms) != 3 or not ms.isdigit():
        raise ProtocolError('value', f'timestamp {text!r}: expected yyyy-MM-dd-HH-mm-ss-fff')
    try:
        when = datetime.datetime.strptime(head, TIMESTAMP_FORMAT)
    except ValueError:
        raise ProtocolError('value', f'timestamp {text!r}: expected '
                            'yyyy-MM-dd-HH-mm-ss-fff') from None
    return when.replace(microsecond=int(ms) * 1000)


# Floats other than lon/lat are sent within +-FLOAT_LIMIT (a boat's values never come near:
# the bound only makes the size of a 21 predictable).
FLOAT_LIMIT = 999999.9999
ANGLE_COLUMNS = ('yaw_deg', 'course_deg')
INT_WIDTH = {'status': 1, 'task': 1, 'control_mode': 1}


def encode_21(columns: Dict[str, np.ndarray], stamp: str) -> bytes:
    """Command 21 for every boat: ``[21, n, <n boats>, stamp]``, one UTF-8 JSON array.

    columns: CMD21_COLUMNS name -> array (N,). Latitude/longitude are rounded to 8 decimals,
    the other floats to 4 (within +-FLOAT_LIMIT); yaw and course are wrapped into
    [-180, 180) after rounding (179.99996 is sent as -180.0, not 180.0).
    """
    cols = []
    for name, is_int in CMD21_COLUMNS:
        a = np.asarray(columns[name])
        if is_int:
            cols.append(a.astype(np.int64).tolist())
            continue
        d = LATLON_DECIMALS if name in ('lon_deg', 'lat_deg') else VALUE_DECIMALS
        v = np.round(a.astype(float), d)
        if name in ANGLE_COLUMNS:
            v = np.where(v >= 180.0, v - 360.0, v)
        elif d == VALUE_DECIMALS:
            v = np.clip(v, -FLOAT_LIMIT, FLOAT_LIMIT)
        cols.append(v.tolist())
    rows = list(zip(*cols))
    tail = json.dumps(stamp)
    if not rows:
        return f'[21,0,{tail}]'.encode()
    # numbers only: the nested JSON's inner brackets can be dropped safely (C encoder)
    body = json.dumps(rows, separators=(',', ':'))[2:-2].replace('],[', ',')
    return f'[21,{len(rows)},{body},{tail}]'.encode()


def max_21_bytes(ids) -> int:
    """The largest command 21 of a swarm with these boat ids can be [bytes] (worst values).

    Per boat: the id and a target id as wide as the widest id, lon -179.99999999 (13), lat
    -84.99999999 (12), 13 floats of at most 12 characters (-999999.9999), three one-digit
    ints, 20 separators; plus the head and the timestamp.
    """
    id_w = max((len(str(int(i))) for i in ids), default=1)
    per_boat = 2 * id_w + 13 + 12 + 13 * 12 + sum(INT_WIDTH.values()) + CMD21_PER_BOAT
    head = len(f'[21,{len(ids)},') + len('"2026-01-01-00-00-00-000"]')
    return head + per_boat * len(ids)


def decode_21(arr: List) -> Tuple[List[Dict[str, float]], str]:
    """[21, n, ...] -> (one dict per boat keyed by CMD21_COLUMNS names, timestamp)."""
    if len(arr) < 3:
        raise ProtocolError('arity', f'21: at least 3 values, got {len(arr)}')
    try:
        n = integer(arr[1], '21.para1', 0, MAX_ID)
    except FieldError as exc:
        raise _wire(exc) from None
    if len(arr) != 3 + CMD21_PER_BOAT * n:
        raise ProtocolError('arity', f'21: {n} boats need {3 + CMD21_PER_BOAT * n} values, '
                            f'got {len(arr)}')
    names = [c for c, _ in CMD21_COLUMNS]
    boats = [dict(zip(names, arr[2 + CMD21_PER_BOAT * i: 2 + CMD21_PER_BOAT * (i + 1)]))
             for i in range(n)]
    return boats, arr[-1]
