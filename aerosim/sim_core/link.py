"""Datagram/stream transports (pure sockets, no rclpy): MAVLink and IMC bridges.

UdpLink: bound to a local address; sends to a fixed remote, or, when the remote is not
configured, to the address of the last peer that sent a valid frame (like mavutil's udpin).
TcpServerLink: listens (PX4 SITL connects to TCP 4560); one client at a time, a new client
replaces the old one. Both deliver raw bytes; parsing is the caller's (pymavlink).
Neither raises on peer errors: send failures are counted.
"""

import select
import socket
import threading
from typing import Optional, Tuple

Address = Tuple[str, int]
MAX_DATAGRAM = 65535


def parse_endpoint(text: str, what: str) -> Optional[Address]:
    """'host:port' -> (host, port); '' -> None. Raises ValueError naming what."""
    text = (text or '').strip()
    if not text:
        return None
    host, sep, port = text.rpartition(':')
    try:
        p = int(port)
    except ValueError:
        p = -1
    if not sep or not host or not 0 < p < 65536:
        raise ValueError(f'{what}: expected host:port with port 1..65535, got {text!r}')
    return host, p


class UdpLink:
    """UDP socket bound to bind; remote fixed or learned."""

    def __init__(self, bind: Address, remote: Optional[Address] = None):
        """Bind now (raises OSError with the address if it can't)."""
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 20)
        try:
            self.sock.bind(bind)
        except OSError as exc:
            self.sock.close()
            raise OSError(f'cannot bind UDP {bind[0]}:{bind[1]}: {exc.strerror}') from exc
        self.local = self.sock.getsockname()
        self.fixed_remote = remote
        self.remote = remote
        self.send_errors = 0
        self.sent = 0

    def learn(self, addr: Address) -> None:
        """Reply to addr from now on, unless the remote is fixed."""
        if self.fixed_remote is None:
            self.remote = addr

    def send(self, data: bytes) -> bool:
        """Send one datagram to the remote; False if there is none or it failed."""
        if self.remote is None:
            return False
        return self.send_to(data, self.remote)

    def send_to(self, data: bytes, addr: Address) -> bool:
        """Send one datagram to addr; False if it failed (counted)."""
        try:
            self.sock.sendto(data, addr)
            self.sent += 1
            return True
        except OSError:
            self.send_errors += 1
            return False

    def recv(self, timeout_s: float):
        """Wait up to timeout_s for one datagram: (bytes, addr) or (None, None)."""
        r, _, _ = select.select([self.sock], [], [], timeout_s)
        if not r:
            return None, None
        try:
            data, addr = self.sock.recvfrom(MAX_DATAGRAM)
        except OSError:
            return None, None
        return data, addr

    def describe(self) -> str:
        """'udp 127.0.0.1:14560 -> 127.0.0.1:14561' (or '-> learned')."""
        r = f'{self.remote[0]}:{self.remote[1]}' if self.remote else 'first sender'
        return f'udp {self.local[0]}:{self.local[1]} -> {r}'

    def close(self) -> None:
        """Close the socket."""
        self.sock.close()


class TcpServerLink:
    """TCP server for one client at a time (PX4 SITL's simulator_mavlink connects here)."""

    def __init__(self, bind: Address):
        """Listen now (raises OSError with the address if it can't)."""
        self.server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            self.server.bind(bind)
        except OSError as exc:
            self.server.close()
            raise OSError(f'cannot bind TCP {bind[0]}:{bind[1]}: {exc.strerror}') from exc
        self.server.listen(1)
        self.local = self.server.getsockname()
        self.client = None
        self.remote = None
        self.send_errors = 0
        self.sent = 0
        self.clients = 0
        self._lock = threading.Lock()

    def learn(self, addr: Address) -> None:
        """TCP: the remote is the connected client."""

    def send(self, data: bytes) -> bool:
        """Send on the connected client; False if none or it failed (the client is dropped)."""
        with self._lock:
            c = self.client
        if c is None:
            return False
        try:
            c.sendall(data)
            self.sent += 1
            return True
        except OSError:
            self.send_errors += 1
            self._drop(c)
            return False

    def _drop(self, c) -> None:
        with self._lock:
            if self.client is c:
                self.client, self.remote = None, None
        try:
            c.close()
        except OSError:
            pass

    def recv(self, timeout_s: float):
        """Wait for a new client or bytes from the client: (bytes, addr) or (None, None)."""
        with self._lock:
            c = self.client
        socks = [self.server] + ([c] if c else [])
        r, _, _ = select.select(socks, [], [], timeout_s)
        if self.server in r:
            new, addr = self.server.accept()
            new.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            old = c
            with self._lock:
                self.client, self.remote = new, addr
            self.clients += 1
            if old is not None:
                self._drop(old)
            return None, None
        if c is not None and c in r:
            try:
                data = c.recv(MAX_DATAGRAM)
            except OSError:
                data = b''
            if not data:
                self._drop(c)
                return None, None
            return data, self.remote
        return None, None

    def describe(self) -> str:
        """'tcp server 127.0.0.1:4560 (client ...)'."""
        r = f'{self.remote[0]}:{self.remote[1]}' if self.remote else 'no client'
        return f'tcp server {self.local[0]}:{self.local[1]} ({r})'

    def close(self) -> None:
        """Close the client and the server."""
        with self._lock:
            c = self.client
        if c is not None:
            self._drop(c)
        self.server.close()
