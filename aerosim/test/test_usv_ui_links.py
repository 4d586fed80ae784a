"""The USV UI's links through every order of connects, resets, closes and half-closes (issue 49).

A UI written from the seed alone reconnected after a reset and then a normal close, and the
bridge exited (`ValueError: Logger severity cannot be changed between calls`: one log call site
at two severities) and the graph stopped. A line a UI had begun before its connection ended
was glued to the next UI's first line. Over UDP a UI that ended its session with [26, 0] was not
told when another took control, and the log named only the new one (docs/usv_ui.md: both).
"""

import json
import socket
import struct
import time

from conftest import DEADLINE_SCALE, free_ports, tcp_client
from usv_ui_peer import UiPeer, sample, start_graph

# Every ordered pair of the three ways a UI's connection ends, each pair once (a de Bruijn
# sequence: close->close, close->reset, reset->reset, reset->half, half->half, half->close,
# close->half, half->reset, reset->close).
ORDER = ('close', 'close', 'reset', 'reset', 'half', 'half', 'close', 'half', 'reset', 'close')
WHY = {'close': '(it closed the connection)',
       'reset': 'Connection reset by peer)',      # read or sending, whichever sees it first
       'half': '(it closed the connection)'}


def _reply(f):
    """The next answer on a UI's connection (states and notices skipped); {} at its end."""
    while True:
        line = f.readline()
        if not line:
            return {}
        m = json.loads(line)
        if isinstance(m, dict) and 'reply' in m:
            return m


def _end(sock, f, how: str) -> None:
    """End a UI's connection: close (FIN), reset (RST, a line begun) or half-close.

    close: the session ended first ([26, 0]: no more 21), so nothing is left unread (a
    socket closed with unread input sends RST, not FIN); half: no more input, read on until
    the bridge closes its side; reset: while 21 flows, a line begun and never finished.
    """
    if how == 'reset':
        sock.sendall(b'[26, ')
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack('ii', 1, 0))
    elif how == 'close':
        sock.sendall(b'[26, 0]\n')
        assert _reply(f)['session'] == 'end'
    else:
        sock.shutdown(socket.SHUT_WR)
        while f.readline():
            pass
    f.close()
    sock.close()


def test_the_tcp_ui_link_survives_every_order_of_ends_and_serves_each_new_ui(procs):
    """Each UI in turn: served (its first input numbered 1), a second refused, then ended.

    After every way of ending and in every order the next UI is served at once (a connection
    whose end is still unread is seen gone before the newcomer is judged), nothing a UI began
    reaches the next, and the bridge logs each disconnection with its reason.
    """
    port = free_ports(2)
    swarm, bridge = start_graph(procs, port, port + 1, transport='tcp')
    seconds = 0
    tcp_client(port, 1.0, 60.0 * DEADLINE_SCALE).close()     # the bridge listens (a UI too)
    for k, how in enumerate(ORDER):
        ui = tcp_client(port, 30.0 * DEADLINE_SCALE)
        f = ui.makefile('rb')
        ui.sendall(b'[26, 1]\n')
        m = _reply(f)
        assert m == {'reply': 26, 'seq': 1, 'ok': True, 'session': 'practice'}, \
            (k, how, m, procs.output(bridge)[-3000:])
        if k % 3 == 0:                          # a second UI meanwhile: refused, told why
            time.sleep(0.2)     # past warn_period_s (0.1 s): each refusal is logged on its own
            second = tcp_client(port, 30.0 * DEADLINE_SCALE)
            g = second.makefile('rb')
            refusal = json.loads(g.readline())
            assert refusal['notice'] == 'refused' and refusal['kind'] == 'other_ui', refusal
            assert g.readline() == b''
            g.close()
            second.close()
            seconds += 1
        _end(ui, f, how)
    last = tcp_client(port, 30.0 * DEADLINE_SCALE)
    f = last.makefile('rb')
    last.sendall(b'[26, 2]\n')
    assert _reply(f) == {'reply': 26, 'seq': 1, 'ok': True, 'session': 'simulation'}
    f.close()
    last.close()
    deadline = time.monotonic() + 30.0 * DEADLINE_SCALE
    while sum('UI disconnected:' in x for x in bridge.lines) < len(ORDER) + 2 and \
            time.monotonic() < deadline:
        time.sleep(0.1)
    assert bridge.poll() is None and swarm.poll() is None
    out = procs.output(bridge)
    assert 'Traceback' not in out and 'Logger severity' not in out, out[-3000:]
    gone = [x for x in out.splitlines() if 'UI disconnected:' in x]
    assert len(gone) == len(ORDER) + 2, gone
    for line, how in zip(gone[1:], ORDER):
        assert line.endswith(WHY[how]), (how, line)
        assert ('[WARN]' in line) == (how == 'reset'), line
    assert out.count('UI connected from') == len(ORDER) + 2
    assert out.count('refused a second UI') == seconds
    assert 'json' not in ''.join(x for x in out.splitlines() if 'rejected' in x), out[-3000:]


def test_a_ui_that_ended_its_session_is_told_who_took_control(procs):
    """UDP: A's [26, 0] releases control; B's input takes it: A gets ui_changed, the log both."""
    port = free_ports(3)
    swarm, bridge = start_graph(procs, port, port + 1)
    a, b = UiPeer(port + 1, port), UiPeer(port + 2, port)
    a.send_init(sample(), procs, bridge)
    a.send([26, 2])
    assert a.reply(30.0 * DEADLINE_SCALE, to=26)['ok']
    a.send([26, 0])
    assert a.reply(30.0 * DEADLINE_SCALE, to=26)['ok']
    b.send([26, 1])
    assert b.reply(30.0 * DEADLINE_SCALE, to=26)['ok']
    notice = next((m for m in a.messages(10.0 * DEADLINE_SCALE)
                   if isinstance(m, dict) and 'notice' in m), None)
    assert notice is not None and notice['notice'] == 'ui_changed', notice
    assert notice['ui'] == f'127.0.0.1:{port + 2}', notice
    out = procs.output(bridge)
    assert f'UI 127.0.0.1:{port + 2} has control now (127.0.0.1:{port + 1} ended its session ' \
        'with [26, 0])' in out, out[-3000:]
