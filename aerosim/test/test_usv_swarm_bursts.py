"""The sim_usv_swarm graph under bursts and back-to-back inits, over real UDP/TCP.

A burst of 1,000 commands over UDP (10,000 over TCP) is applied whole and in order; an init,
26 and 22 sent back to back apply in order, and no command 21 of the old swarm goes out after
an init, nor before the reply to it. The peer is usv_ui_peer's.
"""

import json
import math
import threading
import time

from aerosim_msgs.msg import SwarmState
from sim_ros import qos
from usv_bridge.core import protocol as P

from conftest import (
    DEADLINE_SCALE,
    free_ports,
    probe_node,
    spin_for,
    spin_until,
    tcp_client,
)
from graph_start import start
from usv_ui_peer import (
    UiPeer,
    sample,
    start_graph,
    ui_args,
)


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
