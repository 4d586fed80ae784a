"""The USV UI session over real sockets: answers a UI can match, bursts, a second UI.

usv_swarm_node + usv_bridge, a UI played from the seed (004) and docs/usv_ui.md: every input
is numbered per UI (valid or not) and answered in the order sent, with its boat; a UDP burst
up to the promised size is answered whole, and what the kernel drops beyond it is counted on
/diagnostics with a warning; a second UI is refused, both are told, and the log says so.
"""

import json
import threading
import time

from diagnostic_msgs.msg import DiagnosticArray
import pytest

from usv_bridge.core import protocol as P

from conftest import (
    DEADLINE_SCALE,
    free_ports,
    port_counts,
    probe_node,
    spin_until,
    tcp_client,
    wait_line,
)
from usv_ui_peer import UiPeer, sample, start_graph


def answers(ui, n, timeout_s):
    """The next n answers (objects with "reply"), other messages skipped."""
    got = []
    deadline = time.monotonic() + timeout_s * DEADLINE_SCALE
    for m in ui.messages(timeout_s * DEADLINE_SCALE):
        if isinstance(m, dict) and 'reply' in m:
            got.append(m)
            if len(got) == n:
                return got
        if time.monotonic() > deadline:
            break
    raise AssertionError(f'{len(got)} of {n} answers: {got[-3:]}')


def good22(boat, heading):
    return [22, boat, 0, 0, 0, 0, 3, 1.0, heading, 0, 0]


def test_every_input_is_numbered_and_answered_in_the_order_sent_with_its_boat(procs):
    """20 pairs (valid 22, refused 22) and garbage: 41 answers, seq 1.., in input order.

    Before: a refusal had no seq and no boat, and went out at once, ahead of the answers to
    the valid commands sent before it (20 refusals, then 20 answers).
    """
    port = free_ports(2)
    swarm, bridge = start_graph(procs, port, port + 1)
    ui = UiPeer(port + 1, port)
    first = ui.send_init(sample(), procs, bridge)
    assert first['seq'] == ui.probes + 1            # the probes were numbered too
    ui.send([26, 2])
    assert answers(ui, 1, 30.0)[0] == {'reply': 26, 'seq': ui.probes + 2, 'ok': True,
                                       'session': 'simulation'}
    base = ui.probes + 3
    sent = []
    for k in range(20):
        boat = (1, 2, 3, 11, 12)[k % 5]
        ui.send(good22(boat, float(k)))
        ui.send(good22(boat, 400.0))                   # refused by the bridge: heading
        sent += [(boat, True), (boat, False)]
    ui.raw(b'[22, "one"')                              # not JSON: no boat to name
    got = answers(ui, 41, 60.0)
    assert [m['seq'] for m in got] == list(range(base, base + 41)), got
    assert [(m['boat'], m['ok']) for m in got[:40]] == sent, got
    assert all(m['reply'] == 22 for m in got[:40])
    assert got[0]['applied'] == 'boat 1: heading 0 deg, speed 1 m/s'
    assert got[1]['kind'] == 'value' and \
        got[1]['error'] == '22.para8 (heading deg): must be in [0, 360), got 400'
    assert got[40] == {'reply': 'unknown', 'seq': base + 40, 'ok': False, 'kind': 'json',
                       'error': got[40]['error']}
    # a refusal by the simulation (a boat out of action) names its boat and number as well
    ui.send([22, 99, 0, 0, 0, 0, 3, 1.0, 360, 0, 0])   # both wrong: the first error is named
    m = answers(ui, 1, 30.0)[0]
    assert (m['seq'], m['boat'], m['kind']) == (base + 41, 99, 'unknown_id'), m
    ui.send(good22(1, 360.0))
    m = answers(ui, 1, 30.0)[0]
    assert m['error'] == '22.para8 (heading deg): must be in [0, 360), got 360', m


def _diag(node, ex, diags, pred, timeout_s=30.0):
    ok = spin_until(node, ex, lambda: pred(port_counts(diags, 'USV UI link')), timeout_s)
    c = port_counts(diags, 'USV UI link')
    assert ok, c
    return c


def test_a_udp_burst_of_10000_commands_is_answered_whole(procs, ros_context):
    """10,000 back-to-back 22s over UDP: 10,000 answers, no kernel drop.

    Before: a 2 MiB receive buffer held ~2,520 small datagrams; the rest of a burst was lost
    in the kernel, unanswered and uncounted.
    """
    port = free_ports(2)
    swarm, bridge = start_graph(procs, port, port + 1)
    node, ex = probe_node(ros_context, 'burst_diag')
    diags = []
    node.create_subscription(DiagnosticArray, '/diagnostics', diags.append, 50)
    c = _diag(node, ex, diags, lambda c: 'rx' in c)
    if int(c.get('udp_rcvbuf_bytes', 1 << 30)) < 8 << 20:
        pytest.skip(f'the kernel granted {c["udp_rcvbuf_bytes"]} bytes (net.core.rmem_max; '
                    'not root): the promise needs 8 MiB')
    ui = UiPeer(port + 1, port)
    ui.send_init(sample(), procs, bridge)
    ui.send([26, 2])
    answers(ui, 1, 30.0)
    n = 10000
    burst = [json.dumps(good22((1, 2, 3, 11, 12)[k % 5], float(k % 360))).encode()
             for k in range(n)]
    # back to back, no pause; the UI reads its answers meanwhile (its own buffer is finite)
    threading.Thread(target=lambda: [ui.raw(d) for d in burst], daemon=True).start()
    got = answers(ui, n, 60.0)
    assert all(m['ok'] for m in got) and got[-1]['seq'] - got[0]['seq'] == n - 1
    c = _diag(node, ex, diags, lambda c: c.get('cmd22') == str(n))
    assert c['kernel_drops'] == '0', c


def test_kernel_drops_are_counted_on_diagnostics_with_a_warning(procs, ros_context):
    """A receive buffer too small for the burst: every input is answered or counted lost.

    Before: the drops were visible in `ss` only; the bridge did not know of them.
    """
    port = free_ports(2)
    swarm, bridge = start_graph(procs, port, port + 1, udp_rcvbuf_bytes=65536)
    node, ex = probe_node(ros_context, 'drops_diag')
    diags = []
    node.create_subscription(DiagnosticArray, '/diagnostics', diags.append, 50)
    ui = UiPeer(port + 1, port)
    ui.send_init(sample(), procs, bridge)
    before = int(_diag(node, ex, diags, lambda c: c.get('init') == '1')['inputs'])
    n = 20000
    for _ in range(n):
        ui.raw(b'[26, 9]')                          # refused at once: the bridge is the cost
    c = _diag(node, ex, diags, lambda c: int(c.get('inputs', 0)) +
              int(c.get('kernel_drops', 0)) == before + n)
    assert int(c['kernel_drops']) > 0, c
    assert wait_line(bridge.lines, 'dropped by the kernel', 10.0 * DEADLINE_SCALE), \
        procs.output(bridge)[-3000:]


def test_a_second_udp_ui_is_refused_and_both_are_told(procs):
    """Before: a second UI's [26, 2] restarted the first UI's session, and nobody knew."""
    port = free_ports(3)
    swarm, bridge = start_graph(procs, port, port + 1, ui_timeout_s=4.0)
    ui = UiPeer(port + 1, port)
    ui.send_init(sample(), procs, bridge)
    ui.send([26, 2])
    assert answers(ui, 1, 30.0)[0]['ok']
    other = UiPeer(port + 2, port)
    other.raw(b'[26, 9]')                            # garbage is refused for what it is
    assert answers(other, 1, 30.0)[0]['kind'] == 'value'
    other.send([26, 2])
    m = answers(other, 1, 30.0)[0]
    assert (m['reply'], m['seq'], m['ok'], m['kind']) == (26, 2, False, 'other_ui'), m
    assert f'127.0.0.1:{port + 1}' in m['error']
    notice = next(m for m in ui.messages(10.0 * DEADLINE_SCALE)
                  if isinstance(m, dict) and 'notice' in m)
    assert notice['notice'] == 'other_ui' and notice['ui'] == f'127.0.0.1:{port + 2}', notice
    # the first UI's session goes on, and it keeps control while it sends
    ui.send(good22(1, 90.0))
    assert answers(ui, 1, 30.0)[0]['ok']
    # silent for ui_timeout_s, it is released: the other UI takes over, both are told
    time.sleep(4.5)
    other.send([26, 2])
    assert answers(other, 1, 30.0)[0]['ok']
    notice = next(m for m in ui.messages(10.0 * DEADLINE_SCALE)
                  if isinstance(m, dict) and m.get('notice') == 'ui_changed')
    assert notice['ui'] == f'127.0.0.1:{port + 2}', notice
    out = procs.output(bridge)
    assert f'rejected from 127.0.0.1:{port + 2} (other_ui' in out, out[-3000:]
    assert f'127.0.0.1:{port + 1} has control (its last input' in out, out[-3000:]
    assert f'UI 127.0.0.1:{port + 2} has control now' in out, out[-3000:]


def test_a_second_tcp_ui_is_refused_and_the_first_keeps_its_connection(procs):
    """Before: the second connection replaced the first, which got EOF; no log line."""
    port = free_ports(2)
    swarm, bridge = start_graph(procs, port, port + 1, transport='tcp')
    first = tcp_client(port, 30.0 * DEADLINE_SCALE)
    f1 = first.makefile('rb')
    first.sendall(json.dumps(sample()).encode() + b'\n[26, 2]\n')
    got = [json.loads(f1.readline()) for _ in range(2)]
    assert [m['reply'] for m in got] == ['init', 26] and all(m['ok'] for m in got)
    second = tcp_client(port, 30.0 * DEADLINE_SCALE)
    f2 = second.makefile('rb')
    m = json.loads(f2.readline())
    assert m['notice'] == 'refused' and m['kind'] == 'other_ui', m
    assert f2.readline() == b''                      # then closed
    seen_notice = False
    for _ in range(200):                              # the first is told, and still served
        m = json.loads(f1.readline())
        if isinstance(m, dict):
            assert m['notice'] == 'other_ui', m
            seen_notice = True
        elif seen_notice:
            assert P.decode_21(m)[0]
            break
    assert seen_notice
    first.sendall(json.dumps(good22(1, 45.0)).encode() + b'\n')
    for _ in range(200):
        m = json.loads(f1.readline())
        if isinstance(m, dict):
            assert m['reply'] == 22 and m['ok'] and m['seq'] == 3, m
            break
    f1.close()
    first.close()                       # (with its file open too, the socket stays open)
    # once the first has gone, a new UI is taken (numbered from 1 on its connection)
    deadline = time.monotonic() + 30.0 * DEADLINE_SCALE
    while True:
        third = tcp_client(port, 30.0 * DEADLINE_SCALE)
        f3 = third.makefile('rb')
        third.sendall(b'[26, 1]\n')
        m = json.loads(f3.readline() or b'{}')
        while isinstance(m, list):
            m = json.loads(f3.readline())
        if m.get('notice') != 'refused':
            break
        f3.close()
        third.close()                   # the bridge had not seen the first one go yet
        assert time.monotonic() < deadline
        time.sleep(0.2)
    assert m == {'reply': 26, 'seq': 1, 'ok': True, 'session': 'practice'}, m
    f3.close()
    third.close()
    out = procs.output(bridge)
    assert 'refused a second UI' in out and 'UI disconnected' in out, out[-3000:]
