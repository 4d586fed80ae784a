"""The USV UI session over real sockets: answers a UI can match.

usv_swarm_node + usv_bridge, a UI played from the seed (004) and docs/usv_ui.md: every input
is numbered per UI (valid or not) and answered in the order sent, with its boat.
"""

import time

from test_usv_swarm_graph import UiPeer, sample, start_graph

from conftest import DEADLINE_SCALE, free_ports


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

