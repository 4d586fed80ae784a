"""The sim_usv_swarm graph (usv_swarm_node + usv_bridge) over real UDP/TCP with a JSON client.

The client plays the USV UI of seed 004: init -> 26:2 -> 22, reading command 21 at the
configured rate (checked on the sim-time stamps); garbage on the port is counted by kind and
changes nothing; TCP carries the same commands one per line.
"""

import json
import math
import time

import pytest

from aerosim_msgs.msg import SwarmState
from sim_ros import qos
from usv_bridge.core import protocol as P

from conftest import (
    DEADLINE_SCALE,
    free_ports,
    port_counts,
    probe_node,
    spin_until,
    tcp_client,
)
from graph_start import start
from usv_ui_peer import (
    UiPeer,
    sample,
    seconds,
    start_graph,
    ui_args,
)


def test_init_session_and_control_with_21_at_its_rate(procs, ros_context):
    from nav_msgs.msg import Odometry

    port = free_ports(2)
    ui_port = port + 1
    swarm, bridge = start_graph(procs, port, ui_port)
    ui = UiPeer(ui_port, port)
    node, ex = probe_node(ros_context, 'swarm_test', '/swarm')
    states, odom = [], []
    node.create_subscription(SwarmState, 'state', states.append, qos.STATE)
    node.create_subscription(Odometry, 'boat_1/odom', odom.append, qos.SENSOR_SUB)
    rep = ui.send_init(sample(), procs, bridge)           # the reply names the counts
    assert rep == {'reply': 'init', 'seq': ui.probes + 1, 'ok': True, 'boats': 5,
                   'obstacles': 2, 'ignored': []}       # every input numbered: the probes too
    # no session yet: no command 21
    assert not [m for m in ui.messages(1.0) if isinstance(m, list) and m[0] == 21]
    ui.send([26, 2])
    boats, ts = ui.wait_21()
    assert [b['id'] for b in boats] == [1, 2, 3, 11, 12]
    assert (boats[0]['lon_deg'], boats[0]['lat_deg']) == pytest.approx((134.5, 10.5), abs=1e-7)
    assert boats[3]['yaw_deg'] == -180.0 and all(b['status'] == 1 for b in boats)
    assert seconds(ts) - 13 * 3600 < 1.0                 # the init's hour + session time
    # 10 Hz on sim time: consecutive stamps 100 ms apart, none missing
    stamps = [seconds(ts)]
    for m in ui.messages(2.0):
        if isinstance(m, list) and m[0] == 21:
            stamps.append(seconds(m[-1]))
    steps = [round(b - a, 3) for a, b in zip(stamps, stamps[1:])]
    assert len(steps) > 10 and set(steps) == {0.1}, steps
    # (how many of them a wall second carries is the machine's speed: bench_swarm's figure)
    # 22 heading/speed for boat 1: reached within 60 s of sim time
    ui.send([22, 1, 0, 0, 0, 0, 3, 2.0, 90, 0, 0])
    t0 = stamps[-1]
    boats, ts = ui.wait_21(20.0, lambda b, t: seconds(t) > t0 + 60.0)
    b = boats[0]
    assert b['yaw_deg'] == pytest.approx(90.0, abs=2.0)
    assert b['speed_forward'] == pytest.approx(2.0, abs=0.2)
    assert (b['control_mode'], b['control_a'], b['control_b']) == (3, 90.0, 2.0)
    assert boats[1]['control_mode'] == 0 and boats[1]['speed_forward'] == 0.0
    # the ROS side: SwarmState and boat_1's odometry agree with command 21
    assert spin_until(node, ex, lambda: states and odom, 10.0)
    s = states[-1]
    assert s.session == SwarmState.SESSION_SIMULATION and list(s.id) == [1, 2, 3, 11, 12]
    assert s.x_east_m[0] > 50.0 and abs(s.y_north_m[0]) < 30.0    # turned east, went east
    o = odom[-1]
    assert o.pose.pose.position.x > 50.0 and o.header.frame_id == 'map'
    # 26:0 ends the session: command 21 stops
    ui.send([26, 0])
    for _ in ui.messages(0.5):                  # what was already under way
        pass
    assert not [m for m in ui.messages(1.0) if isinstance(m, list) and m[0] == 21]


GARBAGE = [
    (b'\xff\xfe\x00', 'encoding'),
    (b'hello', 'json'),
    (b'[22, NaN]', 'json'),
    (b'[1, 2, 3]', 'command'),
    (b'[]', 'command'),
    (b'"string"', 'command'),
    (b'[21, 0, "2026"]', 'command'),
    (b'[22, 1, 0]', 'arity'),
    (b'[22, 999, 0, 0, 0, 0, 3, 2.0, 90, 0, 0]', 'unknown_id'),
    (b'[22, 1, 0, 0, 0, 0, 3, 2.0, 400, 0, 0]', 'value'),
    (b'[22, 1, 0, 0, 0, 0, 3, "2", 90, 0, 0]', 'type'),
    (b'[22, 1, 0, 0, 0, 0, 1, 0, 0, 1, 2, 134.5, 10.5, 1]', 'arity'),
    (b'[26, 7]', 'value'),
    (json.dumps(json.dumps([26, 2])).encode(), 'command'),            # encoded twice
    (b'{"time_scale": 1}', 'value'),
    (json.dumps([22, 1, 0, 0, 0, 0, 1, 0, 0, 1, 1000] + [134.5, 10.5, 1.0] * 1000 + [1])
     .encode(), 'arity'),
]


def test_garbage_is_counted_by_kind_and_changes_nothing(procs, ros_context):
    from diagnostic_msgs.msg import DiagnosticArray
    port = free_ports(2)
    ui_port = port + 1
    swarm, bridge = start_graph(procs, port, ui_port)
    ui = UiPeer(ui_port, port)
    node, ex = probe_node(ros_context, 'swarm_diag')
    diags = []
    node.create_subscription(DiagnosticArray, '/diagnostics', diags.append, 10)
    ui.send_init(sample(), procs, bridge)
    ui.send([26, 2])
    ui.send([22, 2, 0, 0, 0, 0, 3, 1.0, 180, 0, 0])
    boats, ts = ui.wait_21(15.0, lambda b, t: b[1]['control_mode'] == 3)
    before = boats
    # a bad init is answered with the field it got wrong and changes nothing
    bad = sample()
    bad['boats'][2]['health'] = -5
    ui.send(bad)
    rep = ui.reply(to='init')
    assert rep['ok'] is False and rep['kind'] == 'value' and 'boats[2].health' in rep['error']
    expected = {'value': 1, 'command': ui.probes}
    for data, kind in GARBAGE:
        ui.raw(data)
        expected[kind] = expected.get(kind, 0) + 1
    want = sum(expected.values())

    def counts():
        return port_counts(diags, 'USV UI link')
    assert spin_until(node, ex, lambda: counts().get('rejected') == str(want), 15.0), \
        (counts(), procs.output(bridge))
    c = counts()
    for kind in P.REJECT_KINDS:
        assert c[f'rejected_{kind}'] == str(expected.get(kind, 0)), kind
    assert c['init'] == '1' and c['cmd22'] == '1' and c['cmd26'] == '1'
    # the sim is unaffected: same boats, boat 2 still on its command, boat 1 untouched
    boats, ts = ui.wait_21()
    assert [b['id'] for b in boats] == [b['id'] for b in before]
    assert (boats[1]['control_mode'], boats[1]['control_a'], boats[1]['control_b']) == \
        (3, 180.0, 1.0)
    assert boats[0]['control_mode'] == 0 and boats[0]['health'] == 100.0
    assert swarm.poll() is None and bridge.poll() is None
    out = procs.output(bridge)
    assert 'rejected' in out and 'boats[2].health' in out


def test_tcp_transport_carries_the_same_commands_one_per_line(procs):
    port = free_ports(2)
    start_graph(procs, port, port + 1, transport='tcp')
    # replies are waited for, not timed: an init is processed by two nodes over DDS, which
    # takes seconds on a loaded machine
    sock = tcp_client(port, 30.0 * DEADLINE_SCALE)
    f = sock.makefile('rb')
    cfg = sample()
    # one init split over two writes, then 26 and 22 in one write: lines are reassembled
    text = json.dumps(cfg).encode()
    sock.sendall(text[:100])
    time.sleep(0.1)
    sock.sendall(text[100:] + b'\n')
    assert json.loads(f.readline())['ok'] is True
    sock.sendall(b'[26, 1]\nnot json\n')
    answers = {}
    while len(answers) < 2:                    # every input is answered, in its order
        m = json.loads(f.readline())
        if isinstance(m, dict):
            answers[m['reply']] = m
    assert answers[26]['ok'] and answers['unknown'] == {
        'reply': 'unknown', 'seq': 3, 'ok': False, 'kind': 'json',
        'error': answers['unknown']['error']}
    sock.sendall(b'[22, 3, 0, 0, 0, 0, 2, 100, 10, 0, 0]\n')
    for _ in range(200):
        m = json.loads(f.readline())
        if isinstance(m, dict):
            assert m == {'reply': 22, 'seq': 4, 'ok': True, 'boat': 3,
                         'applied': 'boat 3: rudder 10 deg, throttle 100 %'}
            continue
        boats, ts = P.decode_21(m)
        if boats[2]['control_mode'] == 2:
            break
    assert len(boats) == 5 and boats[2]['control_a'] == 10.0 and boats[2]['control_b'] == 100.0
    # practice session: every boat in one line
    assert m[1] == 5 and len(m) == 3 + 20 * 5
    sock.close()
    assert not math.isnan(boats[2]['lon_deg'])


# The checks the nodes make themselves (not a core's: those are test_bridge_config's, without
# ROS, as the missing sim_config and types_file files)
@pytest.mark.parametrize('name, param, value, message', [
    ('usv_bridge', 'transport', 'serial', "transport: one of udp, tcp, got 'serial'"),
    ('usv_bridge', 'bind', 'nonsense', 'bind: expected host:port'),
    ('usv_bridge', 'timestamps', 'gps', "timestamps: one of sim, wall, got 'gps'"),
    ('usv_swarm_node', 'current_ne', [0.1], 'current_ne: two finite numbers'),
])
def test_bad_configuration_is_a_clear_error(procs, name, param, value, message):
    port = free_ports(2)
    p = start(procs, 'sim_usv_swarm', ui_args(port, port + 1), nodes=(name,),
              params={name: {param: value}})[name]
    assert p.wait(30.0) == 2
    out = procs.output(p)
    assert 'configuration error' in out and message in out, out[-2000:]
