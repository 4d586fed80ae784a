"""Datagram/stream transports (pure sockets, no rclpy): MAVLink and IMC bridges.

UdpLink: bound to a local address; sends to a fixed remote, or, when the remote is not
configured, to the address of the last peer that sent a valid frame (like mavutil's udpin).
TcpServerLink: listens (PX4 SITL connects to TCP 4560); one client at a time, which keeps
the link: a second connection is closed at once, and with a ``vet`` a new connection becomes
the client only once its first bytes prove it the peer (the class docstring). Both deliver
raw bytes; parsing is the caller's (pymavlink).
Neither raises on peer errors: send failures are counted. Both take an Allowlist: input from
other addresses is dropped before parsing (UDP) or the connection is closed (TCP), and
``on_refused(addr)`` is called for each (the node counts and logs it). Both keep the kernel's
arrival time of what recv() returned last (``rx_stamp``, SO_TIMESTAMPNS, time.time() clock):
a lockstep loop tells from it how long the peer took and how long the answer waited for us.
"""

from dataclasses import dataclass
import ipaddress
import select
import socket
import struct
import threading
import time
from typing import Callable, Dict, List, Optional, Tuple

Address = Tuple[str, int]
MAX_DATAGRAM = 65535
# Datagrams from refused peers skipped within one recv() before it returns empty-handed.
MAX_REFUSED_PER_RECV = 1000
SO_TIMESTAMPNS = getattr(socket, 'SO_TIMESTAMPNS', 35)     # Linux socket(7)
STAMP_SPACE = socket.CMSG_SPACE(struct.calcsize('@ll'))    # struct timespec
# TCP: connections waiting to prove themselves the peer (TcpServerLink's vet), the longest
# they wait [s], and the most bytes they may send without proving it.
MAX_PENDING = 8
PENDING_S = 5.0
MAX_PROOF_BYTES = 4096
# TCP keepalive on a client's connection: first probe after 5 s idle, then every 2 s, 3 lost
KEEPALIVE = (('TCP_KEEPIDLE', 5), ('TCP_KEEPINTVL', 2), ('TCP_KEEPCNT', 3))
CLOSED_BY_PEER = 'it closed the connection'
TCP_INFO = getattr(socket, 'TCP_INFO', None)        # Linux tcp(7): struct tcp_info
TCP_ESTABLISHED = 1                                 # its first byte, tcpi_state


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


@dataclass(frozen=True)
class Verdict:
    """What a TCP link's vet makes of a waiting connection's first bytes.

    take: True, the connection is the peer's (it becomes the client); False, it is not
    (closed, ``why`` says why); None, not decided yet (more bytes are awaited).
    """

    take: Optional[bool]
    why: str = ''


WAIT = Verdict(None)
TAKE = Verdict(True)


class _Waiting:
    """A connection accepted but not yet the client: it has to prove itself first."""

    __slots__ = ('sock', 'addr', 'deadline', 'data')

    def __init__(self, sock: socket.socket, addr: Address, deadline: float):
        self.sock, self.addr, self.deadline = sock, addr, deadline
        self.data = bytearray()


def keepalive(sock) -> None:
    """TCP keepalive with short intervals (KEEPALIVE, where the options exist).

    A client whose host vanished without closing (no FIN, no RST) is found dead within
    about 11 s instead of holding the port (one client at a time) for hours.
    """
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)
        for name, value in KEEPALIVE:
            if hasattr(socket, name):
                sock.setsockopt(socket.IPPROTO_TCP, getattr(socket, name), value)
    except OSError:
        pass


def _established(c) -> bool:
    """False once c's peer ended the connection (its FIN or RST came; Linux TCP_INFO's state).

    Where TCP_INFO is not there, True: the end shows as c readable.
    """
    try:
        return c.getsockopt(socket.IPPROTO_TCP, TCP_INFO, 1)[0] == TCP_ESTABLISHED
    except (OSError, TypeError):
        return True


def _no_event(_what, _addr, _other):
    return None


class TcpServerLink:
    """TCP server for one client at a time: the peer's connection, which nobody takes over.

    PX4 SITL's simulator_mavlink connects here once and never again (SimulatorMavlink::run
    connects in a loop before its receive loop and, once connected, polls that socket for
    ever: a connection closed under it is not replaced). So the connection the link serves
    is kept:
    - while a client is connected, another connection is closed at once (``on_event``
      'refused'), unless the client's own connection has ended (its FIN or RST came: what
      it sent before is delivered and it is dropped first, then the newcomer is judged as
      below: a peer that restarted is not refused for its old connection's unread end);
    - with ``vet`` (a function of a connection's first bytes returning a Verdict), a new
      connection becomes the client only once vet takes its first bytes; until then it
      waits, gets nothing sent and has nothing of it returned; it is closed when vet refuses
      it, when it sent MAX_PROOF_BYTES without being taken, or after ``pending_s`` (each an
      event 'refused' with the reason). At most MAX_PENDING wait: one more closes the oldest
      (a flood of bare connections cannot keep the peer out: its first bytes come at once).
      Once one is taken the others are closed. Without vet the first connection is taken
      at once.
    What vet took is returned by recv() as the client's first data. Events, ``on_event(what,
    addr, other)``: 'connected' (other None), 'refused' (other: why), 'disconnected' (other:
    why). ``on_refused(addr)``: a connection from an address allow refuses (closed at once).
    """

    def __init__(self, bind: Address, allow: Optional[Allowlist] = None,
                 on_refused: Callable[[Address], None] = _nobody,
                 send_timeout_s: Optional[float] = None,
                 vet: Optional[Callable[[bytes], Verdict]] = None,
                 on_event: Callable = _no_event, pending_s: float = PENDING_S):
        """Listen now (raises OSError with the address if it can't).

        send_timeout_s: a client that takes no data for this long is dropped (counted in
        send_errors; it may connect again) instead of stalling the sender; None = wait.
        vet, on_event, pending_s [s]: see the class docstring.
        """
        self.allow = allow or Allowlist(())
        self.send_timeout_s = send_timeout_s
        self.on_refused = on_refused
        self.vet = vet
        self.on_event = on_event
        self.pending_s = pending_s
        self.server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            self.server.bind(bind)
        except OSError as exc:
            self.server.close()
            raise OSError(f'cannot bind TCP {bind[0]}:{bind[1]}: {exc.strerror}') from exc
        self.server.listen(MAX_PENDING)
        self.local = self.server.getsockname()
        self.client: Optional[socket.socket] = None
        self.remote: Optional[Tuple[str, int]] = None
        self.send_errors = 0
        self.sent = 0
        self.clients = 0                # connections taken as the client
        self.refused_clients = 0        # connections closed without being taken
        self.rx_stamp = 0.0             # kernel arrival of the last bytes returned [s]
        self._waiting: List[_Waiting] = []
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
        except socket.timeout:
            why = f'it took no data for {self.send_timeout_s:g} s'
        except OSError as exc:
            why = f'sending failed: {exc.strerror or exc}'
        self.send_errors += 1
        self._drop(c, why)
        return False

    def send_to(self, data: bytes, addr: Address) -> bool:
        """TCP: to the client, if it is at addr."""
        return addr == self.remote and self.send(data)

    def _drop(self, c, why: str) -> None:
        """Close c; if it was the client, the link has none now ('disconnected': why)."""
        with self._lock:
            was = self.remote if self.client is c else None
            if was is not None:
                self.client, self.remote = None, None
        try:
            c.close()
        except OSError:
            pass
        if was is not None:
            self.on_event('disconnected', was, why)

    def recv(self, timeout_s: float, spin_s: float = 0.0):
        """Wait for a connection or bytes from the client: (bytes, addr) or (None, None).

        New connections are accepted and vetted here (class docstring); only the client's
        bytes (or what vet took) are returned. The client is read first: what it sent before
        its connection ended is delivered, and its end seen, before a newcomer is judged.
        spin_s: first poll without sleeping for up to this long [s] (see SpinWait).
        """
        now = time.monotonic()
        if self._waiting:
            self._expire(now)
            if self._waiting:
                timeout_s = max(0.0, min(timeout_s, min(w.deadline for w in self._waiting)
                                         - now))
        with self._lock:
            c = self.client
        socks = [self.server] + ([c] if c else []) + [w.sock for w in self._waiting]
        r = wait_readable(socks, timeout_s, spin_s)
        if not r:
            return None, None
        if c is not None and (c in r or (self.server in r and not _established(c))):
            return self._read_client(c)     # (ended since the wait: readable now)
        if self.server in r:
            self._accept(c)
        for w in [w for w in self._waiting if w.sock in r]:
            got = self._vet(w)
            if got is not None:
                return got
        return None, None

    def _read_client(self, c):
        """The client's bytes: (bytes, addr); at its end it is dropped: (None, None)."""
        try:
            data, anc, _, _ = c.recvmsg(MAX_DATAGRAM, STAMP_SPACE)
            why = CLOSED_BY_PEER
        except OSError as exc:
            data, why = b'', f'connection error: {exc.strerror or exc}'
        if not data:
            self._drop(c, why)
            return None, None
        self.rx_stamp = arrival(anc)
        return data, self.remote

    def _accept(self, c) -> None:
        """Accept a connection: refused (allow, or a client is connected), waiting, or taken."""
        try:
            new, addr = self.server.accept()
        except OSError:
            return
        if not self.allow.permits(addr):
            new.close()
            self.on_refused(addr)
            return
        if c is not None:
            peer = self.remote or ('?', 0)
            self._turn_away(new, addr, f'a second connection while the peer at {peer[0]}:'
                            f'{peer[1]} is connected (one client at a time: it keeps the link)')
            return
        new.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        keepalive(new)
        stamp_arrivals(new)
        new.settimeout(self.send_timeout_s)
        if self.vet is None:
            self._take(new, addr)
            return
        if len(self._waiting) >= MAX_PENDING:
            old = self._waiting.pop(0)
            self._turn_away(old.sock, old.addr, f'{MAX_PENDING} connections waiting to prove '
                            'themselves the peer: the oldest is closed for a newer one')
        self._waiting.append(_Waiting(new, addr, time.monotonic() + self.pending_s))

    def _vet(self, w: _Waiting):
        """Read a waiting connection: (data, addr) if vet takes it now, else None."""
        try:
            data, anc, _, _ = w.sock.recvmsg(MAX_DATAGRAM, STAMP_SPACE)
            why = f'it closed the connection after {len(w.data)} bytes, without proving ' \
                'itself the peer'
        except OSError as exc:
            data, anc = b'', []
            why = f'connection error before it proved itself the peer: {exc.strerror or exc}'
        if not data:
            self._waiting.remove(w)
            self._turn_away(w.sock, w.addr, why)
            return None
        w.data += data
        v = self.vet(bytes(w.data)) if self.vet is not None else TAKE
        if v.take is None and len(w.data) > MAX_PROOF_BYTES:
            v = Verdict(False, f'{len(w.data)} bytes without proving itself the peer')
        if v.take is None:
            return None
        self._waiting.remove(w)
        if not v.take:
            self._turn_away(w.sock, w.addr, v.why)
            return None
        self.rx_stamp = arrival(anc)
        self._take(w.sock, w.addr)
        for other in self._waiting:
            self._turn_away(other.sock, other.addr, f'the peer connected from '
                            f'{w.addr[0]}:{w.addr[1]}: the link is taken')
        self._waiting = []
        return bytes(w.data), w.addr

    def _expire(self, now: float) -> None:
        """Close the waiting connections past their deadline."""
        for w in [w for w in self._waiting if now >= w.deadline]:
            self._waiting.remove(w)
            self._turn_away(w.sock, w.addr, f'{len(w.data)} bytes in {self.pending_s:g} s '
                            'without proving itself the peer')

    def _take(self, sock, addr: Address) -> None:
        with self._lock:
            self.client, self.remote = sock, addr
        self.clients += 1
        self.on_event('connected', addr, None)

    def _turn_away(self, sock, addr: Address, why: str) -> None:
        """Close a connection that is not taken, at once ('refused': why)."""
        self.refused_clients += 1
        try:
            sock.close()
        except OSError:
            pass
        self.on_event('refused', addr, why)

    def waiting(self) -> int:
        """Connections accepted and not yet taken or refused."""
        return len(self._waiting)

    def describe(self) -> str:
        """'tcp server 127.0.0.1:4560 (client ...)'."""
        r = f'{self.remote[0]}:{self.remote[1]}' if self.remote else 'no client'
        return f'tcp server {self.local[0]}:{self.local[1]} ({r})'

    def close(self) -> None:
        """Close the client, the waiting connections and the server (no events)."""
        self.on_event = _no_event
        with self._lock:
            c = self.client
        if c is not None:
            self._drop(c, 'closed')
        for w in self._waiting:
            w.sock.close()
        self._waiting = []
        self.server.close()
