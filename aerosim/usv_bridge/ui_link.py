"""The USV UI's links (pure sockets, no rclpy): sim_core.link's, with what a UI port needs.

UiUdpLink: a receive buffer sized for the largest burst we promise (``udp_rcvbuf_bytes``), and
the datagrams the kernel dropped because it was full (Linux): each datagram carries the
socket's drop count as it was queued (SO_RXQ_OVFL, in recvmsg's ancillary data), and the
count now is read at will (SO_MEMINFO: drops after the last datagram received show there
first). What the kernel dropped never reaches the bridge, so it gets no answer: counted, it is
at least known (/diagnostics, a warning).

UiTcpLink: one UI at a time, as sim_core's TcpServerLink keeps its client (a connection whose
peer closed or reset it is dropped before a newcomer is judged). A second client while one is
connected gets one refusal line and is closed; the one connected keeps its connection.
Connections, refusals and disconnections are reported (``on_event``) so the node can log them
and tell the UI. A dead peer (a UI's host gone without closing) is found by TCP keepalive
within about 11 s and dropped, so it does not lock the port.
"""

import socket
import struct
import time
from typing import Callable, List, Optional, Tuple

from sim_core.link import (
    MAX_DATAGRAM,
    MAX_REFUSED_PER_RECV,
    STAMP_SPACE,
    Address,
    Allowlist,
    TcpServerLink,
    UdpLink,
    arrival,
    wait_readable,
)

SO_RXQ_OVFL = getattr(socket, 'SO_RXQ_OVFL', 40)        # Linux socket(7)
SO_RCVBUFFORCE = getattr(socket, 'SO_RCVBUFFORCE', 33)
SO_MEMINFO = 55                                         # Linux >= 4.6: u32 sk_meminfo[]
SK_MEMINFO_DROPS = 8                                    # its index of the drop count
OVFL_SPACE = socket.CMSG_SPACE(4)                       # __u32
# Kernel memory one small UDP datagram takes in a receive buffer (its skb's truesize), as
# measured on Linux x86-64 over loopback: 832 bytes up to ~190 bytes of payload (a 22 with up
# to 4 waypoints, a 26), 1,280 up to ~640, 2,304 up to ~1,600. The buffer holds
# rcvbuf / truesize datagrams the bridge has not read yet.
SMALL_DATAGRAM_BYTES = 190
SMALL_DATAGRAM_TRUESIZE = 832
# A refused client is read (and what it sent dropped) until it closes, for at most this long
# [s]: closed with its input unread, the kernel would reset the connection, and the client
# could lose the refusal line before reading it.
REFUSED_LINGER_S = 2.0


def size_receive_buffer(sock, want: int) -> int:
    """Make sock's receive buffer want bytes (as getsockopt counts); the size granted.

    Linux doubles the value set and caps it at 2 x net.core.rmem_max; SO_RCVBUFFORCE passes
    the cap where the process may (CAP_NET_ADMIN).
    """
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, want // 2)
    got = sock.getsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF)
    if got < want:
        try:
            sock.setsockopt(socket.SOL_SOCKET, SO_RCVBUFFORCE, want // 2)
        except OSError:
            pass
        got = sock.getsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF)
    return got


def ovfl_count(ancdata) -> Optional[int]:
    """The SO_RXQ_OVFL drop count in recvmsg's ancillary data (None if absent: none yet)."""
    for level, kind, data in ancdata:
        if level == socket.SOL_SOCKET and kind == SO_RXQ_OVFL and len(data) >= 4:
            return struct.unpack_from('=I', data)[0]
    return None


class UiUdpLink(UdpLink):
    """UdpLink with a sized receive buffer and the kernel's drops counted (Linux)."""

    def __init__(self, bind: Address, remote: Optional[Address], allow: Allowlist,
                 on_refused: Callable[[Address], None], rcvbuf_bytes: int):
        """Bind now (OSError if it can't); ask for rcvbuf_bytes of receive buffer."""
        super().__init__(bind, remote, allow, on_refused)
        self.rcvbuf_wanted = rcvbuf_bytes
        self.rcvbuf_bytes = size_receive_buffer(self.sock, rcvbuf_bytes)
        try:
            self.sock.setsockopt(socket.SOL_SOCKET, SO_RXQ_OVFL, 1)
            self.counts_drops = True
        except OSError:
            self.counts_drops = False
        self._ovfl = 0                  # the drop count the last datagram carried

    def burst(self) -> int:
        """Back-to-back small inputs (<= SMALL_DATAGRAM_BYTES) the buffer holds unread."""
        return self.rcvbuf_bytes // SMALL_DATAGRAM_TRUESIZE

    def kernel_drops(self) -> int:
        """Datagrams the kernel dropped on this socket so far (receive buffer full)."""
        try:
            info = self.sock.getsockopt(socket.SOL_SOCKET, SO_MEMINFO, 4 * (SK_MEMINFO_DROPS + 1))
            now = struct.unpack_from(f'={SK_MEMINFO_DROPS + 1}I', info)[SK_MEMINFO_DROPS]
        except (OSError, struct.error):
            now = 0
        return max(now, self._ovfl)

    def recv(self, timeout_s: float, spin_s: float = 0.0):
        """As UdpLink.recv; the drop count each datagram carries is kept (kernel_drops)."""
        for _ in range(MAX_REFUSED_PER_RECV):
            if not wait_readable([self.sock], timeout_s, spin_s):
                return None, None
            try:
                data, anc, _, addr = self.sock.recvmsg(MAX_DATAGRAM, STAMP_SPACE + OVFL_SPACE)
            except OSError:
                return None, None
            dropped = ovfl_count(anc)
            if dropped is not None:
                self._ovfl = max(self._ovfl, dropped)
            if self.allow.permits(addr):
                self.rx_stamp = arrival(anc)
                return data, addr
            self.on_refused(addr)
            timeout_s = spin_s = 0.0
        return None, None

    def buffer_lines(self) -> list:
        """(level, text) lines: what burst the receive buffer holds; a warning if short."""
        burst = f'a burst of ~{self.burst()} back-to-back inputs of up to ' \
            f'{SMALL_DATAGRAM_BYTES} bytes'
        if self.rcvbuf_bytes < self.rcvbuf_wanted:
            lines = [('warning', f'UDP receive buffer: the kernel granted {self.rcvbuf_bytes} '
                      f'of {self.rcvbuf_wanted} bytes (udp_rcvbuf_bytes), {burst}; raise '
                      f'net.core.rmem_max to {self.rcvbuf_wanted // 2} or use transport tcp')]
        else:
            lines = [('info', f'UDP receive buffer {self.rcvbuf_bytes} bytes: {burst} (more: '
                      'use transport tcp)')]
        if not self.counts_drops:
            lines.append(('warning', 'this kernel does not report dropped datagrams '
                          '(SO_RXQ_OVFL): inputs lost in a full receive buffer are not counted'))
        return lines

    def describe(self) -> str:
        """As UdpLink's, with the receive buffer."""
        return f'{super().describe()}, receive buffer {self.rcvbuf_bytes} bytes'


class UiTcpLink(TcpServerLink):
    """TcpServerLink whose refused client is told why before it is closed (module docstring).

    on_event(what, addr, other): 'connected' (other None), 'second' (other: the client
    connected; returns the line sent to addr before it is closed), 'disconnected' (other:
    why, text).
    """

    def __init__(self, bind: Address, allow: Allowlist, on_refused: Callable[[Address], None],
                 send_timeout_s: Optional[float], on_event: Callable):
        """Listen now (OSError if it can't)."""
        super().__init__(bind, allow, on_refused, send_timeout_s, on_event=on_event)
        self._closing: List[Tuple[socket.socket, float]] = []   # (refused client, deadline)

    def recv(self, timeout_s: float, spin_s: float = 0.0):
        """As TcpServerLink.recv; refused clients' input read and dropped until they close."""
        if self._closing:
            self._linger()
        return super().recv(timeout_s, spin_s)

    def _turn_away(self, new, addr, why: str) -> None:
        """A second client: its refusal line (from on_event), then our end shut (FIN)."""
        self.refused_clients += 1
        line = self.on_event('second', addr, self.remote)
        try:
            new.settimeout(1.0)
            if line:
                new.sendall(line)
            new.shutdown(socket.SHUT_WR)
            new.setblocking(False)
        except OSError:
            new.close()
            return
        self._closing.append((new, time.monotonic() + REFUSED_LINGER_S))

    def _linger(self) -> None:
        """Read and drop what refused clients send; close each at its EOF or deadline."""
        now, keep = time.monotonic(), []
        for s, deadline in self._closing:
            try:
                while s.recv(65536):
                    pass
                done = True                     # EOF
            except BlockingIOError:
                done = now > deadline
            except OSError:
                done = True
            if done:
                s.close()
            else:
                keep.append((s, deadline))
        self._closing = keep

    def close(self) -> None:
        """Close the client (no event), the refused ones and the server."""
        for s, _ in self._closing:
            s.close()
        self._closing = []
        super().close()

