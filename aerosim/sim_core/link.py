"""Datagram/stream transports (pure sockets, no rclpy): MAVLink and IMC bridges.

UdpLink: bound to a local address; sends to a fixed remote, or, when the remote is not
configured, to the address of the last peer that sent a valid frame (like mavutil's udpin).
TcpServerLink: listens (PX4 SITL connects to TCP 4560); one client at a time, a new client
replaces the old one. Both deliver raw bytes; parsing is the caller's (pymavlink).
Neither raises on peer errors: send failures are counted. Both take an Allowlist: input from
other addresses is dropped before parsing (UDP) or the connection is closed (TCP), and
``on_refused(addr)`` is called for each (the node counts and logs it). Both keep the kernel's
arrival time of what recv() returned last (``rx_stamp``, SO_TIMESTAMPNS, time.time() clock):
a lockstep loop tells from it how long the peer took and how long the answer waited for us.
"""

import ipaddress
import select
import socket
import struct
import threading
import time
from typing import Callable, Dict, Optional, Tuple

Address = Tuple[str, int]
MAX_DATAGRAM = 65535
# Datagrams from refused peers skipped within one recv() before it returns empty-handed.
MAX_REFUSED_PER_RECV = 1000
SO_TIMESTAMPNS = getattr(socket, 'SO_TIMESTAMPNS', 35)     # Linux socket(7)
STAMP_SPACE = socket.CMSG_SPACE(struct.calcsize('@ll'))    # struct timespec


def stamp_arrivals(sock) -> None:
    """Ask the kernel to stamp what sock receives (SO_TIMESTAMPNS); ignored where it can't."""
    try:
        sock.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
    except OSError:
        pass


def arrival(ancdata) -> float:
    """The SO_TIMESTAMPNS arrival time in recvmsg's ancillary data [s, epoch]; 0.0 if none."""
    for level, kind, data in ancdata:
        if level == socket.SOL_SOCKET and kind == SO_TIMESTAMPNS:
            sec, nsec = struct.unpack_from('@ll', data)
            return sec + nsec * 1e-9
    return 0.0


def is_loopback(host: str) -> bool:
    """True if host is a loopback address (127.0.0.0/8, ::1) or 'localhost'."""
    if host == 'localhost':
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class Allowlist:
    """The peer addresses a port takes input from; empty = any.

    Entries: IP addresses, networks ('192.168.1.0/24') or host names (resolved once, here).
    """

    def __init__(self, entries, what: str = 'allow_peers'):
        """entries: a comma-separated string or a list of strings. Raises ValueError."""
        if isinstance(entries, str):
            entries = entries.split(',')
        if not isinstance(entries, (list, tuple)) or \
                not all(isinstance(e, str) for e in entries):
            raise ValueError(f'{what}: addresses as text, comma-separated, got {entries!r}')
        self.entries = [e.strip() for e in entries if e.strip()]
        self.nets = []
        for e in self.entries:
            try:
                self.nets.append(ipaddress.ip_network(e, strict=False))
            except ValueError:
                try:
                    self.nets.append(ipaddress.ip_network(socket.gethostbyname(e)))
                except (OSError, UnicodeError):
                    raise ValueError(f'{what}: {e!r} is not an IP address, a network '
                                     '(a.b.c.d/n) or a known host name') from None
        self._seen: Dict[str, bool] = {}

    def __bool__(self) -> bool:
        return bool(self.nets)

    def permits(self, addr: Address) -> bool:
        """True if input from addr (host, port) is taken."""
        if not self.nets:
            return True
        host = addr[0]
        ok = self._seen.get(host)
        if ok is None:
            ok = False
            try:
                ip = ipaddress.ip_address(host)
                ok = any(ip in n for n in self.nets)
            except ValueError:
                ok = False
            if len(self._seen) < 4096:       # a flood of spoofed sources cannot grow it
                self._seen[host] = ok
        return ok


def parse_id_list(value, what: str, lo: int, hi: int) -> frozenset:
    """'1, 2, 255', 7 or [1, 2] -> frozenset of ids; '' or [] -> empty (any). ValueError."""
    if isinstance(value, int) and not isinstance(value, bool):
        value = str(value)
    elif isinstance(value, (list, tuple)):
        value = ','.join(str(v) for v in value)
    elif not isinstance(value, str):
        raise ValueError(f'{what}: integers separated by commas, got {value!r}')
    ids = set()
    for part in value.split(','):
        part = part.strip()
        if not part:
            continue
        try:
            v = int(part, 0)
        except ValueError:
            v = None
        if v is None or not lo <= v <= hi:
            raise ValueError(f'{what}: integers in [{lo}, {hi}] separated by commas, got '
                             f'{part!r}')
        ids.add(v)
    return frozenset(ids)


def _nobody(_addr):
    pass


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


def wait_readable(socks, timeout_s: float, spin_s: float = 0.0) -> list:
    """The sockets of socks readable within timeout_s [s] (select); [] if none.

    spin_s: first poll them without sleeping for up to this long [s] (see SpinWait).
    """
    if spin_s > 0.0:
        end = time.perf_counter() + spin_s
        while time.perf_counter() < end:
            r, _, _ = select.select(socks, [], [], 0.0)
            if r:
                return r
    return select.select(socks, [], [], timeout_s)[0]


class SpinWait:
    """When to poll a socket without sleeping before blocking on it (a lockstep ping-pong).

    A lockstep loop on two processes is a ping-pong of datagrams: each side sends, then waits
    for the other's answer. A receiver asleep in the kernel has to be woken by the sender, and
    on a virtual machine that wake-up (an inter-processor interrupt) costs tens of µs on each
    side, per datagram. Polling for a short while instead keeps the receiver awake: the
    answer is picked up at once. SpinWait polls only while answers have been coming fast:
    after a wait longer than the budget (a real-time pace, a paused simulation, a peer gone)
    the next wait blocks at once, so a paced or idle link costs no CPU; one quick answer
    re-arms it.
    """

    def __init__(self, budget_s: float):
        """budget_s: the longest poll before blocking [s]; 0 = never poll."""
        self.budget_s = max(0.0, float(budget_s))
        self._armed = False
        self._t0 = 0.0

    def start(self) -> float:
        """Call before waiting: how long to poll first [s]."""
        self._t0 = time.perf_counter()
        return self.budget_s if self._armed else 0.0

    def done(self, got: bool) -> None:
        """Call after waiting: got True if a datagram arrived."""
        self._armed = got and time.perf_counter() - self._t0 <= self.budget_s


class UdpLink:
    """UDP socket bound to bind; remote fixed or learned."""

    def __init__(self, bind: Address, remote: Optional[Address] = None,
                 allow: Optional[Allowlist] = None,
                 on_refused: Callable[[Address], None] = _nobody):
        """Bind now (raises OSError with the address if it can't)."""
        self.allow = allow or Allowlist(())
        self.on_refused = on_refused
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 20)
        stamp_arrivals(self.sock)
        self.rx_stamp = 0.0             # kernel arrival of the last datagram returned [s]
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

    def recv(self, timeout_s: float, spin_s: float = 0.0):
        """Wait up to timeout_s for a datagram of an allowed peer: (bytes, addr) or (None, None).

        spin_s: first poll the socket without sleeping for up to this long [s] (see
        SpinWait). Datagrams from other peers are dropped (on_refused is called for each).
        """
        for _ in range(MAX_REFUSED_PER_RECV):
            if not wait_readable([self.sock], timeout_s, spin_s):
                return None, None
            try:
                data, anc, _, addr = self.sock.recvmsg(MAX_DATAGRAM, STAMP_SPACE)
            except OSError:
                return None, None
            if self.allow.permits(addr):
                self.rx_stamp = arrival(anc)
                return data, addr
            self.on_refused(addr)
            timeout_s = spin_s = 0.0      # only what is already queued: no wait for a stranger
        return None, None

    def describe(self) -> str:
        """'udp 127.0.0.1:14560 -> 127.0.0.1:14561' (or '-> learned')."""
        r = f'{self.remote[0]}:{self.remote[1]}' if self.remote else 'first sender'
        return f'udp {self.local[0]}:{self.local[1]} -> {r}'

    def close(self) -> None:
        """Close the socket."""
        self.sock.close()


class TcpServerLink:
    """TCP server for one client at a time (PX4 SITL's simulator_mavlink connects here)."""

    def __init__(self, bind: Address, allow: Optional[Allowlist] = None,
                 on_refused: Callable[[Address], None] = _nobody,
                 send_timeout_s: Optional[float] = None):
        """Listen now (raises OSError with the address if it can't).

        send_timeout_s: a client that takes no data for this long is dropped (counted in
        send_errors; it may connect again) instead of stalling the sender; None = wait.
        """
        self.allow = allow or Allowlist(())
        self.send_timeout_s = send_timeout_s
        self.on_refused = on_refused
        self.server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            self.server.bind(bind)
        except OSError as exc:
            self.server.close()
            raise OSError(f'cannot bind TCP {bind[0]}:{bind[1]}: {exc.strerror}') from exc
        self.server.listen(1)
        self.local = self.server.getsockname()
        self.client: Optional[socket.socket] = None
        self.remote: Optional[Tuple[str, int]] = None
        self.send_errors = 0
        self.sent = 0
        self.clients = 0
        self.rx_stamp = 0.0             # kernel arrival of the last bytes returned [s]
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

    def recv(self, timeout_s: float, spin_s: float = 0.0):
        """Wait for a new client or bytes from the client: (bytes, addr) or (None, None).

        spin_s: first poll without sleeping for up to this long [s] (see SpinWait).
        """
        with self._lock:
            c = self.client
        socks = [self.server] + ([c] if c else [])
        r = wait_readable(socks, timeout_s, spin_s)
        if self.server in r:
            try:
                new, addr = self.server.accept()
            except OSError:
                return None, None
            if not self.allow.permits(addr):
                new.close()
                self.on_refused(addr)
                return None, None
            new.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            stamp_arrivals(new)
            new.settimeout(self.send_timeout_s)
            old = c
            with self._lock:
                self.client, self.remote = new, addr
            self.clients += 1
            if old is not None:
                self._drop(old)
            return None, None
        if c is not None and c in r:
            try:
                data, anc, _, _ = c.recvmsg(MAX_DATAGRAM, STAMP_SPACE)
            except OSError:
                data = b''
            if not data:
                self._drop(c)
                return None, None
            self.rx_stamp = arrival(anc)
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
