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
