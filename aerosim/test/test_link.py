"""UdpLink and TcpServerLink on real sockets: the wait with polling first, arrival stamps."""

import socket
import threading
import time

from sim_core.link import SpinWait, UdpLink

from conftest import DEADLINE_SCALE


def test_spin_wait_polls_only_after_a_quick_answer():
    s = SpinWait(0.3)                  # long budget: a preempted test stays within it
    assert s.start() == 0.0            # nothing heard yet: block at once
    s.done(True)                       # answered within the budget: poll next time
    assert s.start() == 0.3
    time.sleep(0.35)
    s.done(True)                       # took longer than the budget (paced, paused): block
    assert s.start() == 0.0
    s.done(False)                      # timed out
    assert s.start() == 0.0
    assert SpinWait(0.0).start() == 0.0
    assert SpinWait(-1.0).budget_s == 0.0


def _pair():
    a = UdpLink(('127.0.0.1', 0))
    b = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    b.bind(('127.0.0.1', 0))
    return a, b


def test_recv_with_polling_gets_a_datagram_sent_during_the_poll_and_after_it():
    a, b = _pair()
    try:
        for delay in (0.0002, 0.02):         # within the 5 ms poll, and after it (blocking)
            threading.Timer(delay, b.sendto, (b'x' * 7, a.local)).start()
            data, addr = a.recv(1.0, spin_s=0.005)
            assert data == b'x' * 7 and addr == b.getsockname()
        t0 = time.monotonic()
        assert a.recv(0.05, spin_s=0.01) == (None, None)       # nothing: poll, then time out
        assert 0.05 <= time.monotonic() - t0 < 5.0 * DEADLINE_SCALE   # it does time out
    finally:
        a.close()
        b.close()


def test_tcp_recv_with_polling_takes_the_client_then_its_bytes():
    from sim_core.link import TcpServerLink
    srv = TcpServerLink(('127.0.0.1', 0))
    c = socket.create_connection(srv.local)
    try:
        deadline = time.monotonic() + 10.0
        while srv.remote is None and time.monotonic() < deadline:
            srv.recv(0.1, spin_s=0.002)               # the accept
        assert srv.remote == c.getsockname()
        threading.Timer(0.0005, c.sendall, (b'abc',)).start()
        data = None
        while data is None and time.monotonic() < deadline:
            data, addr = srv.recv(1.0, spin_s=0.005)
        assert data == b'abc' and addr == c.getsockname()
    finally:
        c.close()
        srv.close()


def test_both_links_keep_the_kernels_arrival_time_of_what_they_returned():
    """rx_stamp: SO_TIMESTAMPNS, on time.time()'s clock, before recv() returned it.

    A datagram sent, then left 50 ms in the socket: its stamp is the send's time, not the read's
    (how the bridge tells the FC's time per step from the time the answer waited for us).
    """
    from sim_core.link import TcpServerLink
    a, b = _pair()
    srv = TcpServerLink(('127.0.0.1', 0))
    c = socket.create_connection(srv.local)
    try:
        t0 = time.time()
        b.sendto(b'x', a.local)
        time.sleep(0.05)
        data, _ = a.recv(1.0)
        t1 = time.time()
        assert data == b'x' and t0 - 0.01 <= a.rx_stamp <= t0 + 0.04 < t1, (t0, a.rx_stamp, t1)
        deadline = time.monotonic() + 10.0
        while srv.remote is None and time.monotonic() < deadline:
            srv.recv(0.1)
        t0 = time.time()
        c.sendall(b'abc')
        time.sleep(0.05)
        data, _ = srv.recv(1.0)
        assert data == b'abc' and t0 - 0.01 <= srv.rx_stamp <= t0 + 0.04 < time.time()
    finally:
        c.close()
        srv.close()
        a.close()
        b.close()


# --- TcpServerLink: one client, which keeps the link ------------------------------------------
def _events():
    got = []

    def on_event(what, addr, other):
        got.append((what, addr, other))
    return got, on_event


def _pump(srv, until, wait_s=10.0):
    """Call srv.recv until until() holds (within the scaled deadline); the data returned."""
    out = []
    deadline = time.monotonic() + wait_s * DEADLINE_SCALE
    while not until() and time.monotonic() < deadline:
        data, addr = srv.recv(0.05)
        if data is not None:
            out.append((data, addr))
    assert until(), out
    return out


def _next_data(srv, wait_s=10.0):
    """The next (bytes, addr) srv.recv returns, within the scaled deadline."""
    deadline = time.monotonic() + wait_s * DEADLINE_SCALE
    while time.monotonic() < deadline:
        data, addr = srv.recv(0.05)
        if data is not None:
            return data, addr
    raise AssertionError('nothing received')


def _closed_by_server(sock, wait_s=10.0) -> bool:
    """True if the server ended sock (EOF or reset) within the scaled deadline."""
    sock.settimeout(wait_s * DEADLINE_SCALE)
    try:
        while sock.recv(4096):
            pass
        return True
    except ConnectionResetError:
        return True
    except socket.timeout:
        return False


def _vet_fc(data):
    """A vet: a connection is the peer's if it begins with b'FC'."""
    from sim_core.link import TAKE, WAIT, Verdict
    if data.startswith(b'FC'):
        return TAKE
    return WAIT if b'FC'.startswith(data) else Verdict(False, f'begins with {data[:2]!r}')


def test_tcp_a_second_connection_is_refused_and_the_client_keeps_the_link():
    """The first client keeps the link: a second connection is closed at once, said with why.

    The link used to make the newcomer the client and close the first: PX4, which never
    connects again, lost its simulator to any local connection.
    """
    from sim_core.link import TcpServerLink
    events, on_event = _events()
    srv = TcpServerLink(('127.0.0.1', 0), on_event=on_event)
    a = socket.create_connection(srv.local)
    b = None
    try:
        _pump(srv, lambda: srv.remote is not None)
        assert srv.remote == a.getsockname() and events == [('connected', srv.remote, None)]
        b = socket.create_connection(srv.local)
        _pump(srv, lambda: len(events) == 2)
        assert events[1][:2] == ('refused', b.getsockname()), events
        assert 'a second connection while the peer at' in events[1][2]
        assert _closed_by_server(b)
        assert srv.remote == a.getsockname() and srv.clients == 1 and srv.refused_clients == 1
        assert srv.send(b'sensors')
        a.settimeout(5.0)
        assert a.recv(100) == b'sensors'
        a.sendall(b'answer')
        assert _next_data(srv) == (b'answer', a.getsockname())
    finally:
        a.close()
        if b is not None:
            b.close()
        srv.close()


def test_tcp_a_connection_is_served_only_once_its_first_bytes_prove_it_the_peer():
    """With a vet: a bare connection and a stranger wait, get nothing, and are closed.

    The peer's first bytes come back from recv as its first data; the stranger's never do.
    """
    from sim_core.link import TcpServerLink
    events, on_event = _events()
    srv = TcpServerLink(('127.0.0.1', 0), vet=_vet_fc, on_event=on_event)
    bare = socket.create_connection(srv.local)
    stranger = socket.create_connection(srv.local)
    fc = None
    try:
        _pump(srv, lambda: srv.waiting() == 2)
        assert not srv.send(b'sensors') and srv.remote is None    # nobody is served yet
        stranger.sendall(b'F')                                     # not decided yet
        for _ in range(5):
            assert srv.recv(0.05) == (None, None)
        assert srv.waiting() == 2 and not events
        stranger.sendall(b'X garbage')
        _pump(srv, lambda: srv.waiting() == 1)
        assert events[-1] == ('refused', stranger.getsockname(), "begins with b'FX'"), events
        assert _closed_by_server(stranger)
        fc = socket.create_connection(srv.local)
        fc.sendall(b'FC hello')
        got = _pump(srv, lambda: srv.remote is not None)
        assert got == [(b'FC hello', fc.getsockname())]
        assert ('connected', fc.getsockname(), None) in events
        # the one waiting beside it is closed: the link is taken
        assert events[-1][:2] == ('refused', bare.getsockname()), events
        assert 'the link is taken' in events[-1][2]
        assert _closed_by_server(bare)
        assert srv.send(b'sensors')
        fc.settimeout(5.0)
        assert fc.recv(100) == b'sensors'
        assert srv.clients == 1 and srv.refused_clients == 2 and srv.waiting() == 0
    finally:
        for s in (bare, stranger, fc):
            if s is not None:
                s.close()
        srv.close()


def test_tcp_waiting_connections_are_bounded_and_have_a_deadline():
    """MAX_PENDING wait at most (one more closes the oldest); none waits past pending_s."""
    from sim_core.link import MAX_PENDING, TcpServerLink
    events, on_event = _events()
    srv = TcpServerLink(('127.0.0.1', 0), vet=_vet_fc, on_event=on_event, pending_s=3.0)
    bare = []
    try:
        for _ in range(MAX_PENDING + 1):
            bare.append(socket.create_connection(srv.local))
        _pump(srv, lambda: srv.waiting() == MAX_PENDING and len(events) == 1)
        assert events[0][:2] == ('refused', bare[0].getsockname()), events
        assert f'{MAX_PENDING} connections waiting' in events[0][2]
        assert _closed_by_server(bare[0])
        t0 = time.monotonic()
        _pump(srv, lambda: srv.waiting() == 0, wait_s=20.0)
        assert time.monotonic() - t0 >= 2.0       # the deadline counts from each accept
        assert all(w == 'refused' and 'without proving itself the peer' in why
                   for w, _, why in events[1:]) and len(events) == MAX_PENDING + 1, events
        assert all(_closed_by_server(s) for s in bare[1:])
        assert srv.remote is None and srv.clients == 0
    finally:
        for s in bare:
            s.close()
        srv.close()


def test_tcp_a_client_that_closed_is_dropped_before_a_newcomer_is_judged():
    """The peer restarted: its old connection's end is read first, the new one is not refused.

    Its FIN may still be unread when the new connection is accepted: refusing the newcomer
    then would lose a PX4 that restarted (it connects once).
    """
    from sim_core.link import CLOSED_BY_PEER, TcpServerLink
    events, on_event = _events()
    srv = TcpServerLink(('127.0.0.1', 0), vet=_vet_fc, on_event=on_event)
    old = socket.create_connection(srv.local)
    new = None
    try:
        old.sendall(b'FC 1')
        _pump(srv, lambda: srv.remote is not None)
        old_addr = old.getsockname()
        old.close()
        new = socket.create_connection(srv.local)
        deadline = time.monotonic() + 5.0
        while srv.server not in wait_readable_all(srv) and time.monotonic() < deadline:
            time.sleep(0.01)
        new.sendall(b'FC 2')
        got = _pump(srv, lambda: srv.remote == new.getsockname())
        assert got == [(b'FC 2', new.getsockname())]
        assert events == [('connected', old_addr, None), ('disconnected', old_addr,
                          CLOSED_BY_PEER), ('connected', new.getsockname(), None)], events
        assert srv.refused_clients == 0 and srv.clients == 2
    finally:
        if new is not None:
            new.close()
        srv.close()


def wait_readable_all(srv):
    """The link's sockets readable now."""
    import select
    socks = [srv.server] + ([srv.client] if srv.client else [])
    return select.select(socks, [], [], 0.0)[0]
