"""The sim_usv_swarm graph (usv_swarm_node + usv_bridge) over real UDP/TCP with a JSON client.

The client plays the USV UI of seed 004: init -> 26:2 -> 22, reading command 21 at the
configured rate (checked on the sim-time stamps); garbage on the port is counted by kind and
changes nothing; TCP carries the same commands one per line.
"""

import json
import math
from pathlib import Path
import threading
import time

import pytest

from aerosim_msgs.msg import SwarmState
from sim_ros import qos
from usv_bridge.core import protocol as P

from conftest import (
    DEADLINE_SCALE,
    UdpPeer,
    free_ports,
    port_counts,
    probe_node,
    spin_for,
    spin_until,
    tcp_client,
)
from graph_start import start

CONFIG = Path(__file__).resolve().parent.parent / 'config'
TIME_SCALE = 10


def sample(**top):
    obj = json.loads((CONFIG / 'SimConfig.json').read_text())
    obj['time_scale'] = TIME_SCALE
    obj.update(top)
    return obj


class UiPeer(UdpPeer):
    """The USV UI: JSON datagrams."""

    def send(self, obj):
        self.raw(json.dumps(obj).encode())

    def messages(self, timeout_s):
        for data in self.datagrams(timeout_s):
            yield json.loads(data)

    def wait_21(self, timeout_s=15.0, pred=lambda boats, ts: True):
        for m in self.messages(timeout_s):
            if isinstance(m, list) and m[0] == 21:
                boats, ts = P.decode_21(m)
                if pred(boats, ts):
                    return boats, ts
        raise AssertionError(f'no matching command 21 within {timeout_s} s')

    probes = 0

    def send_init(self, obj, procs, bridge, tries=60):
        """Once the bridge answers (a probe it refuses at once), send the init; its answer.

        The bridge answers an init when the swarm has applied it; an init sent again before
        that would be applied again. Each probe is one rejected input ('command') on the
        bridge's /diagnostics (counted in probes).
        """
        for _ in range(tries):
            self.raw(b'[0]')
            try:
                self.reply(1.0, to='unknown')
                self.probes += 1
                break
            except AssertionError:
                continue
        else:
            raise AssertionError(procs.output(bridge))
        self.send(obj)
        return self.reply(60.0, to='init')

    def reply(self, timeout_s=10.0, to=None):
        """The next answer (to: only an answer whose "reply" is that: 'init', 22, 26)."""
        for m in self.messages(timeout_s):
            if isinstance(m, dict) and (to is None or m.get('reply') == to):
                return m
        raise AssertionError('no reply')


def ui_args(port, ui_port, transport='udp'):
    """sim_usv_swarm's launch arguments for the test's ports: ours (UDP, or the TCP server)."""
    return {'ui_bind': f'127.0.0.1:{port}', 'ui_address': f'127.0.0.1:{ui_port}',
            'transport': transport}


def start_graph(procs, port, ui_port, transport='udp'):
    """sim_usv_swarm's usv_swarm_node and usv_bridge (in /swarm) as launched: (swarm, bridge)."""
    nodes = start(procs, 'sim_usv_swarm', ui_args(port, ui_port, transport),
                  nodes=('usv_swarm_node', 'usv_bridge'),
                  params={'usv_swarm_node': {'clock_rate_hz': 20.0},
                          'usv_bridge': {'warn_period_s': 0.1}})
    return nodes['usv_swarm_node'], nodes['usv_bridge']


def seconds(ts):
    t = P.parse_timestamp(ts)
    return t.hour * 3600 + t.minute * 60 + t.second + t.microsecond * 1e-6


def test_init_session_and_control_with_21_at_its_rate(procs, ros_context):
    from nav_msgs.msg import Odometry

    from aerosim_msgs.msg import SwarmState
    from sim_ros import qos
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


def grid_init(n, time_scale=1):
    """An init of n WAM-Vs on a 50 m grid round the map centre, no obstacles."""
    obj = sample(time_scale=time_scale, obstacles=[])
    side = math.ceil(math.sqrt(n))
    step = 50.0 / 111_000.0                     # deg, about 50 m
    proto = obj['boats'][0]
    obj['boats'] = [dict(proto, id=k + 1, team=k % 2, type=1,
                         x_longtitude=134.5 + (k % side - side / 2) * step,
                         y_latitude=10.5 + (k // side - side / 2) * step) for k in range(n)]
    return obj


def burst(n_boats, rounds):
    """Commands 22 (heading/speed), rounds x n_boats, and what each boat is told last."""
    cmds, last = [], {}
    for r in range(rounds):
        for b in range(1, n_boats + 1):
            heading, speed = float((b * 7 + r * 30) % 360), round(1.0 + 0.1 * r, 1)
            cmds.append([22, b, 0, 0, 0, 0, 3, speed, heading, 0, 0])
            last[b] = (heading, speed)
    return cmds, last


def told(boats, last):
    """Boats whose 21 control fields show their last command."""
    return sum(1 for b in boats if b['control_mode'] == 3 and
               (b['control_a'], b['control_b']) == last[b['id']])


def test_a_burst_of_1000_commands_over_udp_is_applied_whole_and_in_order(procs):
    port = free_ports(2)
    swarm, bridge = start_graph(procs, port, port + 1)
    ui = UiPeer(port + 1, port)
    assert ui.send_init(grid_init(200), procs, bridge)['boats'] == 200
    ui.send([26, 2])
    assert ui.reply(to=26)['ok']
    cmds, last = burst(200, 5)
    for c in cmds:                              # back to back, no pause
        ui.send(c)
    seqs, best = [], 0
    deadline = time.monotonic() + 120.0
    for m in ui.messages(120.0):
        if isinstance(m, dict):
            assert m['reply'] == 22 and m['ok'], m
            seqs.append(m['seq'])
        elif m[0] == 21 and len(seqs) == len(cmds):
            boats, _ = P.decode_21(m)
            best = max(best, told(boats, last))
            if best == 200:
                break
        assert time.monotonic() < deadline
    # every command answered as applied, in the order sent; every boat shows its last one
    first = ui.probes + 3                       # probes, init, 26, then the burst
    assert seqs == list(range(first, first + len(cmds))), (len(seqs), seqs[:5])
    assert best == 200, best


def test_a_burst_of_10000_commands_over_tcp_is_applied_whole(procs):
    port = free_ports(2)
    start_graph(procs, port, port + 1, transport='tcp')
    sock = tcp_client(port, 60.0)
    f = sock.makefile('rb')

    def lines():
        while True:
            yield json.loads(f.readline())
    cmds, last = burst(2000, 5)
    data = json.dumps(grid_init(2000)).encode() + b'\n[26, 2]\n' + \
        b''.join(json.dumps(c).encode() + b'\n' for c in cmds)
    # the UI writes while it reads (the simulator answers and sends 21 meanwhile)
    threading.Thread(target=sock.sendall, args=(data,), daemon=True).start()
    applied, best = 0, 0
    deadline = time.monotonic() + 240.0
    for m in lines():
        if isinstance(m, dict):
            assert m['ok'], m
            applied += m['reply'] == 22
        elif applied == len(cmds):
            boats, _ = P.decode_21(m)
            assert m[1] == 2000
            best = max(best, told(boats, last))
            if best == 2000:
                break
        assert time.monotonic() < deadline, (applied, best)
    sock.close()
    assert applied == 10000 and best == 2000


def test_init_26_22_back_to_back_are_applied_in_order_and_21_shows_the_new_swarm(procs):
    port = free_ports(2)
    swarm, bridge = start_graph(procs, port, port + 1)
    ui = UiPeer(port + 1, port)
    five = sample()
    one = sample(boats=five['boats'][:1])
    ui.send_init(five, procs, bridge)
    seq = ui.probes + 1
    for i in range(200):
        cfg = one if i % 2 else five
        heading = float(i % 360)
        ui.send(cfg)
        ui.send([26, 2])
        ui.send([22, 1, 0, 0, 0, 0, 3, 1.0, heading, 0, 0])
        got, after_init = {}, None
        for m in ui.messages(60.0):                 # the answers, and a 21 after them
            if isinstance(m, dict):
                got[m['reply']] = m
            elif m[0] == 21 and 'init' in got:
                after_init = m[1]
            if 22 in got and after_init is not None:
                break
        if [got.get(k, {}).get('seq') for k in ('init', 26, 22)] != [seq + 1, seq + 2, seq + 3]:
            raise AssertionError((i, got, procs.output(bridge)[-3000:],
                                  procs.output(swarm)[-3000:]))
        assert all(got[k]['ok'] for k in got), got
        assert got[22]['applied'] == f'boat 1: heading {heading:g} deg, speed 1 m/s'
        # the first 21 after the init's answer shows the new swarm
        assert after_init == len(cfg['boats']), (i, after_init)
        seq += 3
    boats, _ = ui.wait_21(30.0, lambda b, t: b[0]['control_a'] == 199.0)
    assert len(boats) == 1                      # the last init (i = 199) had one boat


def test_after_an_init_no_21_of_the_old_swarm_even_behind_a_backlog(procs):
    """A big swarm at 10x: the bridge is behind on its states when the next init is applied.

    The states it still holds are of the old swarm; none of them may go out after the init's
    answer (the UI would see the old swarm under the new session).
    """
    port = free_ports(2)
    start_graph(procs, port, port + 1, transport='tcp')
    sock = tcp_client(port, 60.0)
    f = sock.makefile('rb')
    small = sample()
    for _ in range(3):
        sock.sendall(json.dumps(grid_init(2000, time_scale=10)).encode() + b'\n[26, 2]\n')
        olds = 0
        while olds < 20:                           # a backlog of 2000-boat states
            m = json.loads(f.readline())
            olds += isinstance(m, list) and m[1] == 2000
        sock.sendall(json.dumps(small).encode() + b'\n')
        while True:
            m = json.loads(f.readline())
            if isinstance(m, dict) and m['reply'] == 'init':
                assert m['ok'] and m['boats'] == 5
                break
        for _ in range(5):                         # every 21 from now on: the new swarm
            m = json.loads(f.readline())
            if isinstance(m, list):
                assert m[1] == 5, m[1]
    sock.close()


def _swarm_state(n, source, seq, stamp_s):
    """A SwarmState of n boats at rest reflecting input `seq` of `source` (as usv_swarm_node)."""
    m = SwarmState(session=P.SESSION_SIMULATION, input_seq=seq, input_source=source)
    m.header.stamp.sec = stamp_s
    m.id = list(range(1, n + 1))
    m.team = [0] * n
    m.lon_deg, m.lat_deg = [134.5] * n, [10.5] * n
    for name in ('x_east_m', 'y_north_m', 'yaw_deg', 'yaw_rate', 'yaw_acc', 'pitch_deg',
                 'roll_deg', 'speed_forward', 'acc_forward', 'speed_lateral', 'acc_lateral',
                 'course_deg', 'control_a', 'control_b'):
        setattr(m, name, [0.0] * n)
    m.status, m.task, m.target_id, m.control_mode = [1] * n, [0] * n, [0] * n, [0] * n
    m.health = [100.0] * n
    return m


def test_no_21_of_a_swarm_goes_out_before_the_reply_to_its_init(procs, ros_context):
    """States and answers travel on two topics with no order between them.

    The test plays usv_swarm_node on the real topics and lets the states of the new swarm
    arrive before the init's answer (seen once in 20 runs under load with the real swarm: the
    UI read 20 states of a swarm it had no reply for). The UI must get the reply first.
    """
    from aerosim_msgs.msg import SwarmInput, SwarmInputResult, SwarmInputResults, SwarmInputs
    port = free_ports(2)
    bridge = start(procs, 'sim_usv_swarm', ui_args(port, port + 1), nodes=('usv_bridge',),
                   params={'usv_bridge': {'warn_period_s': 0.1}})['usv_bridge']
    node, ex = probe_node(ros_context, 'swarm_standin', '/swarm')
    inputs = []
    node.create_subscription(SwarmInputs, 'input', inputs.append, qos.INPUT)
    pub_state = node.create_publisher(SwarmState, 'state', qos.STATE)
    pub_result = node.create_publisher(SwarmInputResults, 'input_result', qos.INPUT)
    assert spin_until(node, ex, lambda: pub_state.get_subscription_count() >= 1
                      and pub_result.get_subscription_count() >= 1, 30.0)
    ui = UiPeer(port + 1, port, poll_s=0.2)
    ui.send(sample())
    assert spin_until(node, ex, lambda: inputs, 30.0), procs.output(bridge)
    (init,) = inputs[0].inputs
    assert init.kind == SwarmInput.KIND_INIT
    source = inputs[0].source
    # the new swarm's states first (it applied the init), its answer 1 s later
    for k in range(3):
        pub_state.publish(_swarm_state(5, source, init.seq, 10 + k))
    spin_for(node, ex, 1.0)
    result = SwarmInputResults(source=source, boats=5, results=[SwarmInputResult(
        seq=init.seq, kind=init.kind, applied=True, text='init: 5 boats')])
    pub_result.publish(result)
    got = []
    for m in ui.messages(10.0 * DEADLINE_SCALE):
        got.append(m)
        if sum(isinstance(x, list) for x in got) == 3:
            break
    kinds = ['reply' if isinstance(m, dict) else m[0] for m in got]
    assert kinds == ['reply', 21, 21, 21], kinds
    assert got[0]['reply'] == 'init' and got[0]['ok'] and got[0]['boats'] == 5
    # states of an input already answered go straight out
    pub_state.publish(_swarm_state(5, source, init.seq, 20))
    assert ui.wait_21()[0][0]['id'] == 1
    # a stale one (from before the init) never does
    pub_state.publish(_swarm_state(7, source, init.seq - 1, 21))
    pub_state.publish(_swarm_state(5, source, init.seq, 22))
    boats, _ = ui.wait_21()
    assert len(boats) == 5
