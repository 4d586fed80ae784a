"""The USV UI protocol codec (seed 004): init, 21, 22, 26 against the seed's field tables."""

import copy
import datetime
import json
from pathlib import Path

import numpy as np
import pytest

from sim_dynamics.core.swarm_orders import Motion, Task, Waypoint
from usv_bridge.core import protocol as P

CONFIG = Path(__file__).resolve().parent.parent / 'config'
BOAT_TYPES, OBSTACLE_TYPES = {1, 2}, {101, 102, 103, 104}

# The seed's init example, as printed in the seed.
SEED_INIT = {
    'time_scale': 1, 'wave_degree': 1, 'weather': 1, 'hour': 13,
    'x_leftTop_longtitude': 134, 'y_leftTop_latitude': 11,
    'x_rightBottom_longtitude': 135, 'y_rightBottom_latitude': 10,
    'boats': [{'id': 1, 'type': 1, 'team': 0, 'x_longtitude': 134.500, 'y_latitude': 10.5,
               'startAngle': 0, 'health': 100, 'gas_outputRate': 100, 'attack_radius': 100,
               'attack': 20}],
    'obstacles': [{'id': 101, 'type': 101, 'x_longtitude': 134.50, 'y_latitude': 10.505,
                   'startAngle': 0}],
    'map_max_distance': 2000, 'task_area_center_longtitude': 134.48,
    'task_area_center_latitude': 10.48, 'task_area_radius': 5000,
    'gas_p': 0.1, 'gas_i': 0.001, 'gas_d': 0.5,
    'steering_p': 0.15, 'steering_i': 0.001, 'steering_d': 0.13,
}


def parse(obj):
    return P.parse_init(obj, BOAT_TYPES, OBSTACLE_TYPES)


def test_the_seeds_init_example_and_the_shipped_sample_parse():
    cfg = parse(json.loads(json.dumps(SEED_INIT)))
    assert cfg.time_scale == 1.0 and cfg.wave_degree == 1 and cfg.hour == 13
    assert (cfg.map_west_deg, cfg.map_north_deg, cfg.map_east_deg, cfg.map_south_deg) == \
        (134.0, 11.0, 135.0, 10.0)
    b = cfg.boats[0]
    assert (b.id, b.type, b.team, b.lon_deg, b.lat_deg, b.health, b.gas_output_rate,
            b.attack_radius_m, b.attack) == (1, 1, 0, 134.5, 10.5, 100.0, 100.0, 100.0, 20.0)
    assert cfg.obstacles[0].id == 101 and cfg.gas_pid == (0.1, 0.001, 0.5)
    assert cfg.steering_pid == (0.15, 0.001, 0.13) and cfg.center == (10.5, 134.5)
    sample = parse(json.loads((CONFIG / 'SimConfig.json').read_text()))
    assert len(sample.boats) == 5 and {b.team for b in sample.boats} == {0, 1}


def set_path(obj, path, value):
    *head, last = path
    for k in head:
        obj = obj[k]
    if value is KeyError:
        del obj[last]
    else:
        obj[last] = value


@pytest.mark.parametrize('path, value, kind, named', [
    (('time_scale',), 0, 'value', 'time_scale'),
    (('time_scale',), '1', 'type', 'time_scale'),
    (('wave_degree',), 10, 'value', 'wave_degree'),
    (('wave_degree',), 1.5, 'type', 'wave_degree'),
    (('weather',), True, 'type', 'weather'),
    (('hour',), 24, 'value', 'hour'),
    (('x_rightBottom_longtitude',), 133, 'value', 'x_rightBottom_longtitude'),
    (('y_rightBottom_latitude',), 12, 'value', 'y_rightBottom_latitude'),
    (('boats',), [], 'value', 'boats'),
    (('boats',), {}, 'type', 'boats'),
    (('boats', 0, 'id'), -1, 'value', 'boats[0].id'),
    (('boats', 0, 'type'), 9, 'value', 'boats[0].type'),
    (('boats', 0, 'x_longtitude'), 136.0, 'value', 'boats[0].x_longtitude'),
    (('boats', 0, 'y_latitude'), 9.99, 'value', 'boats[0].y_latitude'),
    (('boats', 0, 'health'), 0, 'value', 'boats[0].health'),
    (('boats', 0, 'gas_outputRate'), -5, 'value', 'boats[0].gas_outputRate'),
    (('boats', 0, 'attack_radius'), None, 'type', 'boats[0].attack_radius'),
    (('boats', 0, 'attack'), KeyError, 'value', 'boats[0].attack: missing'),
    (('boats', 0), 'boat', 'type', 'boats[0]'),
    (('obstacles', 0, 'id'), 1, 'value', 'obstacles[0].id: 1 is already used by boats[0]'),
    (('obstacles', 0, 'type'), 7, 'value', 'obstacles[0].type'),
    (('task_area_radius',), -1, 'value', 'task_area_radius'),
    (('steering_d',), 'x', 'type', 'steering_d'),
    (('gas_p',), KeyError, 'value', 'gas_p: missing'),
])
def test_every_bad_init_field_is_refused_by_name(path, value, kind, named):
    obj = copy.deepcopy(SEED_INIT)
    set_path(obj, path, value)
    with pytest.raises(P.ProtocolError) as e:
        parse(obj)
    assert e.value.kind == kind and named in str(e.value)


def test_duplicate_boat_ids_and_unknown_fields():
    obj = copy.deepcopy(SEED_INIT)
    obj['boats'].append(dict(obj['boats'][0], y_latitude=10.4))
    with pytest.raises(P.ProtocolError, match=r'boats\[1\].id: 1 is already used by boats\[0\]'):
        parse(obj)
    obj['boats'][1]['id'] = 2
    obj['extra'] = 1
    obj['boats'][1]['colour'] = 'red'
    assert parse(obj).ignored == ('extra', 'boats[1].colour')


@pytest.mark.parametrize('data, kind', [
    (b'\xff\xfe', 'encoding'), (b'not json', 'json'), (b'[1, NaN]', 'json'),
    (b'[22, Infinity]', 'json'), (b'[]', 'command'), (b'"text"', 'command'),
    (json.dumps(json.dumps(SEED_INIT)).encode(), 'command'),         # encoded twice
    (b'[99, 1]', 'command'), (b'[true]', 'command'), (b'[' * 100000, 'json'),
    (b' ' * (P.MAX_TEXT_BYTES + 1), 'size'),
])
def test_decode_refuses_what_is_not_a_command(data, kind):
    with pytest.raises(P.ProtocolError) as e:
        P.decode(data)
    assert e.value.kind == kind


def test_decode_finds_the_command():
    assert P.decode(b'[26, 2]') == (26, [26, 2])
    assert P.decode(b'{"a": 1}') == ('init', {'a': 1})
    # a UTF-8 byte order mark before the JSON is skipped (RFC 8259 allows ignoring it)
    assert P.decode(b'\xef\xbb\xbf{"a": 1}') == ('init', {'a': 1})
    with pytest.raises(P.ProtocolError, match='encoded twice'):
        P.decode(json.dumps(json.dumps([26, 2])).encode())
    assert P.parse_command26([26, 2]) == P.SESSION_SIMULATION
    for bad, kind in (([26], 'arity'), ([26, 4], 'value'), ([26, 'x'], 'type'),
                      ([26, 1, 2], 'arity')):
        with pytest.raises(P.ProtocolError) as e:
            P.parse_command26(bad)
        assert e.value.kind == kind


def cfg2():
    obj = copy.deepcopy(SEED_INIT)
    obj['boats'].append(dict(obj['boats'][0], id=7, team=1, y_latitude=10.4))
    return parse(obj)


def test_command_22_fields_per_the_seed_table():
    cfg = cfg2()
    # [22, id, task, target, route, reserved, mode, throttle/speed, rudder/heading, changed, n]
    o = P.parse_command22([22, 1, 0, 0, 0, 0, 2, 60, -12.5, 0, 0], cfg)
    assert (o.boat_id, o.motion, o.throttle_pct, o.rudder_deg) == \
        (1, Motion.RUDDER_THROTTLE, 60.0, -12.5)
    o = P.parse_command22([22, 1, 3, 7, 5, 0, 3, 2.5, 270, 0, 0], cfg)
    assert (o.task, o.target_id, o.route_id, o.heading_deg, o.speed_mps) == \
        (Task.ATTACK, 7, 5, 270.0, 2.5)
    o = P.parse_command22([22, 1, 0, 0, 9, 0, 1, 0, 0, 1, 2, 134.1, 10.2, 2.0,
                           134.12345678, 10.3, 1.5], cfg)
    assert o.route_changed and o.motion == Motion.WAYPOINT_SPEED
    assert o.waypoints == (Waypoint(10.2, 134.1, 2.0), Waypoint(10.3, 134.12345678, 1.5))
    o = P.parse_command22([22, 1, 0, 0, 9, 0, 4, 0, 0, 1, 2, 134.1, 10.2, 60,
                           134.2, 10.3, 120], cfg)
    assert [w.value for w in o.waypoints] == [60.0, 120.0]
    o = P.parse_command22([22, 1, 0, 0, 9, 0, 5, 3.5, 0, 0, 0], cfg)
    assert (o.motion, o.speed_mps, o.route_changed) == \
        (Motion.WAYPOINT_VARIABLE_SPEED, 3.5, False)


@pytest.mark.parametrize('cmd, kind, named', [
    ([22, 1, 0, 0, 0, 0, 2, 60, 0, 0], 'arity', 'at least 11'),
    ([22, 9, 0, 0, 0, 0, 0, 0, 0, 0, 0], 'unknown_id', 'no boat 9'),
    ([22, 1, 7, 0, 0, 0, 0, 0, 0, 0, 0], 'value', 'para2'),
    ([22, 1, 1, 8, 0, 0, 0, 0, 0, 0, 0], 'unknown_id', 'para3'),
    ([22, 1, 3, 1, 0, 0, 0, 0, 0, 0, 0], 'value', 'itself'),
    ([22, 1, 0, 0, 0, 0, 6, 0, 0, 0, 0], 'value', 'para6'),
    ([22, 1, 0, 0, 0, 0, 2, 101, 0, 0, 0], 'value', 'throttle'),
    ([22, 1, 0, 0, 0, 0, 2, 50, 31, 0, 0], 'value', 'rudder'),
    ([22, 1, 0, 0, 0, 0, 3, 2, 360, 0, 0], 'value', 'heading'),
    ([22, 1, 0, 0, 0, 0, 3, -1, 10, 0, 0], 'value', 'speed'),
    ([22, 1, 0, 0, 0, 0, 3, 'fast', 10, 0, 0], 'type', 'para7'),
    ([22, 1, 0, 0, 0, 0, 3, 1, None, 0, 0], 'type', 'para8'),
    ([22, 1, 0, 0, 0, 0, 1, 0, 0, 2, 0], 'value', 'para9'),
    ([22, 1, 0, 0, 0, 0, 1, 0, 0, 1, 1, 134.1, 10.2], 'arity', '1 waypoints need 14'),
    ([22, 1, 0, 0, 0, 0, 1, 0, 0, 1, 1, 136.1, 10.2, 1.0], 'value', 'outside the map'),
    ([22, 1, 0, 0, 0, 0, 4, 0, 0, 1, 2, 134.1, 10.2, 60, 134.2, 10.2, 30], 'value',
     'time_s'),
    ([22, 1, 0, 0, 0, 0, 1, 0, 0, 1, 0], 'value', 'needs waypoints'),
    ([22, 1, 0, 0, 0, 0, 1, 0, 0, 1, P.MAX_WAYPOINTS + 1], 'value', 'para10'),
    ([22, 1.5, 0, 0, 0, 0, 0, 0, 0, 0, 0], 'type', 'para1'),
])
def test_bad_command_22_is_refused_by_field(cmd, kind, named):
    with pytest.raises(P.ProtocolError) as e:
        P.parse_command22(cmd, cfg2())
    assert e.value.kind == kind and named in str(e.value)


def columns(n, rng):
    cols = {}
    for name, is_int in P.CMD21_COLUMNS:
        cols[name] = rng.integers(0, 1000, n) if is_int else rng.uniform(-179.9, 179.9, n)
    cols['id'] = np.arange(1, n + 1)
    return cols


def test_command_21_layout_units_and_round_trip():
    rng = np.random.default_rng(1)
    cols = columns(3, rng)
    stamp = P.timestamp(datetime.datetime(2026, 11, 23, 13, 4, 5, 678000))
    assert stamp == '2026-11-23-13-04-05-678'
    assert P.parse_timestamp(stamp) == datetime.datetime(2026, 11, 23, 13, 4, 5, 678000)
    arr = json.loads(P.encode_21(cols, stamp))
    assert arr[0] == 21 and arr[1] == 3 and len(arr) == 3 + 20 * 3 and arr[-1] == stamp
    boats, ts = P.decode_21(arr)
    assert ts == stamp
    for i, b in enumerate(boats):
        for name, is_int in P.CMD21_COLUMNS:
            v = cols[name][i]
            if is_int:
                assert b[name] == int(v) and isinstance(b[name], int)
            elif name in ('lon_deg', 'lat_deg'):
                assert b[name] == pytest.approx(v, abs=5e-9)      # 8 decimals
            else:
                assert b[name] == pytest.approx(v, abs=5e-5)
    # para2 is the boat id, para3/para4 lon/lat, para15 the status ... in the seed's order
    assert [arr[2], arr[3], arr[4]] == [1, round(cols['lon_deg'][0], 8),
                                        round(cols['lat_deg'][0], 8)]
    assert arr[2 + 13] == int(cols['status'][0]) and arr[2 + 19] == round(cols['health'][0], 4)


def test_command_21_para1_is_the_swarm_and_its_size_bound_holds():
    # para1 is the number of boats of the swarm: every boat in the one command
    cols = columns(1000, np.random.default_rng(2))
    arr = json.loads(P.encode_21(cols, '2026-11-23-13-04-05-678'))
    boats, _ = P.decode_21(arr)
    assert arr[1] == 1000 and [b['id'] for b in boats] == list(range(1, 1001))
    # the size bound the bridge checks an init against (UDP: one datagram) is never exceeded,
    # even by the widest values each field can take
    for n, ids in ((1, [7]), (300, range(10**9, 10**9 + 300))):
        worst = {name: np.full(n, 9 if is_int else -999999.9999) for name, is_int in
                 P.CMD21_COLUMNS}
        worst.update(id=np.array(ids), target_id=np.array(ids),
                     lon_deg=np.full(n, -179.99999999), lat_deg=np.full(n, -84.99999999),
                     yaw_deg=np.full(n, -179.9999), course_deg=np.full(n, -179.9999))
        data = P.encode_21(worst, '2026-11-23-13-04-05-678')
        assert len(data) <= P.max_21_bytes(ids), (n, len(data), P.max_21_bytes(ids))
        assert len(data) >= 0.9 * P.max_21_bytes(ids)             # and it is not loose
    # values beyond +-999999.9999 are clamped (a bounded size), angles wrapped after rounding
    cols = columns(2, np.random.default_rng(3))
    cols['acc_forward'] = np.array([3e9, -3e9])
    cols['yaw_deg'] = np.array([179.99996, -180.0])
    cols['course_deg'] = np.array([179.99994, 180.0 - 1e-12])
    boats, _ = P.decode_21(json.loads(P.encode_21(cols, 'x')))
    assert [b['acc_forward'] for b in boats] == [999999.9999, -999999.9999]
    assert [b['yaw_deg'] for b in boats] == [-180.0, -180.0]
    assert [b['course_deg'] for b in boats] == [179.9999, -180.0]


# --- UiPipeline: the bridge node's decisions, without ROS -------------------------------------
class _Types:
    boats, obstacles = BOAT_TYPES, OBSTACLE_TYPES


class _State:
    def __init__(self, source, seq, session=P.SESSION_PRACTICE):
        self.input_source, self.input_seq, self.session = source, seq, session


def pipeline(**cfg):
    from usv_bridge.core.pipeline import UiConfig, UiPipeline
    return UiPipeline(UiConfig(**cfg), _Types(), parse(json.loads(json.dumps(SEED_INIT))), 77)


def test_pipeline_keeps_order_window_and_answers_each_input():
    p = pipeline(window=2)
    ui = ('127.0.0.1', 9922)
    for k in range(3):
        act = p.on_input(json.dumps([22, 1, 0, 0, k, 0, 2, 60, 0, 0, 0]).encode(), ui, 0.0)
        assert act.accepted and act.rejects == []
    assert p.flush(0.0, listening=False).batches == []        # no swarm: nothing goes out
    act = p.flush(0.1, listening=True)
    assert [[i.seq for i in b] for b in act.batches] == [[1, 2]]  # the window: 2 out
    # a state reflecting input 2 waits for its answer; the answer goes out first
    assert p.on_state(_State(77, 2)).states == []
    act = p.on_results([(1, True, '', 'ok 1'), (2, False, 'state', 'boat 1 is dead')])
    assert [r[1]['seq'] for r in act.replies] == [1, 2]
    assert act.replies[0][1]['ok'] and not act.replies[1][1]['ok']
    assert act.rejects == [('state', 'boat 1 is dead', ui)] and len(act.states) == 1
    assert [i.seq for b in p.flush(0.2, True).batches for i in b] == [3]


def test_pipeline_refuses_garbage_with_its_kind_and_drops_stale_states():
    p = pipeline()
    ui = ('127.0.0.1', 9922)
    act = p.on_input(b'[21, 0]', ui, 0.0)
    assert not act.accepted and act.rejects[0][0] == 'command'
    assert act.replies[0][1] == {'reply': 21, 'seq': 1, 'ok': False, 'kind': 'command',
                                 'error': act.rejects[0][1]}
    assert p.on_input(b'{not json', ui, 0.0).rejects[0][0] == 'json'
    # an init applied: states from before it are stale
    assert p.on_input(json.dumps(SEED_INIT).encode(), ui, 0.0).accepted
    p.flush(0.0, True)
    act = p.on_results([(1, True, '', 'init applied')])
    assert act.replies[0][1]['reply'] == 'init' and act.replies[0][1]['boats'] == 1
    assert p.on_state(_State(77, 0)).states == []              # before the init
    assert len(p.on_state(_State(77, 1)).states) == 1
    assert p.on_state(_State(77, 1, P.SESSION_END)).states == []
    # with no swarm listening, queued inputs are refused after answer_timeout_s
    p.on_input(json.dumps([26, 1]).encode(), ui, 10.0)
    act = p.check_answers(10.0 + p.cfg.answer_timeout_s + 0.1, listening=False)
    assert act.rejects[0][0] == 'state' and 'no swarm' in act.rejects[0][1]


def test_pipeline_answers_each_ui_in_its_input_order_with_its_number_and_boat():
    p = pipeline()
    ui, other = ('127.0.0.1', 9922), ('127.0.0.1', 9923)
    replies = []
    for data in ([22, 1, 0, 0, 0, 0, 3, 1.0, 10, 0, 0], [22, 1, 0, 0, 0, 0, 3, 1.0, 400, 0, 0],
                 [22, 'x'], [22, 7.0, 0, 0, 0, 0, 3, 1.0, 10, 0, 0]):
        act = p.on_input(json.dumps(data).encode(), ui, 0.0)
        replies += act.replies
    assert replies == []                    # the refusals wait for the answer to input 1
    act = p.on_input(b'[26, 9]', other, 0.0)
    assert [(a, r['seq']) for a, r in act.replies] == [(other, 1)]   # another UI: its own
    p.flush(0.0, True)
    act = p.on_results([(1, True, '', 'boat 1: heading 10 deg, speed 1 m/s')])
    got = [r for _, r in act.replies]
    assert [(r['seq'], r['ok'], r.get('boat', '-')) for r in got] == \
        [(1, True, 1), (2, False, 1), (3, False, None), (4, False, 7)]
    assert got[1]['error'] == '22.para8 (heading deg): must be in [0, 360), got 400'
    assert got[3]['kind'] == 'unknown_id'
    assert p.counts['inputs'] == 5 and p.counts['rx'] == 1


@pytest.mark.parametrize('heading, ok', [(0, True), (359.999, True), (360, False),
                                         (-0.001, False), (400, False)])
def test_heading_is_in_0_to_360_open_and_every_refusal_says_so(heading, ok):
    cfg = parse(json.loads(json.dumps(SEED_INIT)))
    cmd = [22, 1, 0, 0, 0, 0, 3, 1.0, heading, 0, 0]
    if ok:
        assert P.parse_command22(cmd, cfg).heading_deg == heading
        return
    with pytest.raises(P.ProtocolError, match=r'must be in \[0, 360\), got '):
        P.parse_command22(cmd, cfg)


def test_pipeline_one_ui_at_a_time_over_udp():
    p = pipeline(ui_timeout_s=10.0, warn_period_s=1.0)
    a, b = ('127.0.0.1', 1), ('127.0.0.1', 2)
    assert p.on_input(b'[26, 2]', a, 0.0).accepted and p.ui == a
    act = p.on_input(b'[26, 1]', b, 5.0)       # a sent 5 s ago: it keeps control
    assert not act.accepted and act.rejects[0][0] == 'other_ui'
    assert act.replies[0][0] == a and act.replies[0][1]['notice'] == 'other_ui'
    assert act.replies[1] == (b, {'reply': 26, 'seq': 1, 'ok': False, 'kind': 'other_ui',
                                  'error': act.rejects[0][1]})
    assert '127.0.0.1:1 has control' in act.rejects[0][1]
    act = p.on_input(b'[26, 1]', b, 5.5)       # told once per warn_period_s
    assert [x for x, _ in act.replies] == [b]
    p.on_input(b'garbage', a, 6.0)              # anything from the UI keeps it in control
    assert p.on_input(b'[26, 1]', b, 15.0).rejects[0][0] == 'other_ui'
    act = p.on_input(b'[26, 1]', b, 16.5)      # 10.5 s of silence: b takes control
    assert act.accepted and p.ui == b
    assert act.replies == [(a, {'notice': 'ui_changed', 'ui': '127.0.0.1:2',
                                'text': act.replies[0][1]['text']})]
    assert any('UI 127.0.0.1:2 has control now' in t for _, t in act.logs)
    assert p.on_input(b'[26, 0]', b, 17.0).accepted and p.ui is None   # ended: released
    act = p.on_input(b'[26, 2]', a, 17.1)      # a takes it: b, which released it, is told
    assert act.accepted and p.ui == a
    assert act.replies == [(b, {'notice': 'ui_changed', 'ui': '127.0.0.1:1',
                                'text': '127.0.0.1:1 has control now: yours ended with your '
                                        '[26, 0]'})]
    assert ('info', 'UI 127.0.0.1:1 has control now (127.0.0.1:2 ended its session with '
            '[26, 0])') in act.logs             # the log names both
    assert p.on_input(b'[26, 0]', a, 17.15).accepted and p.ui is None
    act = p.on_input(b'[26, 2]', a, 17.16)     # the same UI again: nobody else to tell
    assert act.accepted and p.ui == a and act.replies == []
    # a refused init does not become the config the next commands are checked against
    two = json.loads(json.dumps(SEED_INIT))
    two['boats'][0]['id'] = 5
    assert p.on_input(json.dumps(two).encode(), b, 17.2).rejects[0][0] == 'other_ui'
    assert p.on_input(b'[22, 1, 0, 0, 0, 0, 3, 1.0, 10, 0, 0]', a, 17.3).accepted
