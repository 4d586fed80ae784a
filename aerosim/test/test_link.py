"""UdpLink's wait with polling first (SpinWait), on real sockets."""

import socket
import threading
import time

from sim_core.link import SpinWait, UdpLink


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
        assert 0.05 <= time.monotonic() - t0 < 1.0
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
