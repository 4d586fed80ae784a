"""One MAVLink link of the bridge: its socket, its sender (own sequence numbers) and parser.

No rclpy. Sequence numbers are per link: a receiver counts loss per link and sender, so two
links sharing one counter would each see gaps. The sender is shared by the threads that send
on the link (the executor's timers, the reader thread) behind its own lock.

Replies find their peer: on UDP, a message addressed to a system (target_system) goes to the
address that system was last heard from on this link (``heard``), as a MAVLink router routes
by the systems it has seen; anything else goes to the link's remote. A ground station on
another port than the FC's gets its COMMAND_ACK, MISSION_ACK and mission download there,
while the sensors go to the FC.

A UDP link with a configured remote (`fc_address`, `mission_link`) is pinned: the FC lives at
that address and port, and only what comes from there can be the FC (``at_pin``). PX4 sends
from the port it binds (SimulatorMavlink: bind INADDR_ANY:port, sendto the simulator; its
MAVLink instances: bind -u, send to -o), as does the built-in FC (its `bind`).

A TCP link (PX4 SITL's simulator link) is pinned to a connection instead: the one whose first
frame comes from the FC's ids (``first_frame``, TcpServerLink's vet); nothing of another
connection is parsed, and a second connection while the FC's is open is closed at once.
"""

import socket
import threading
from typing import Callable, Dict, List, Optional, Tuple

from mavlink_bridge.core.mav import new_mav, pack, reset_parser
from mavlink_bridge.core.mav_ext import source
from mavlink_bridge.core.peers import PeerTable
from sim_core.link import TAKE, WAIT, UdpLink, Verdict, is_loopback

SIGNED = 0x01   # MAVLink 2 incompatibility flag: the frame carries a signature


def pin_address(remote) -> Optional[Tuple[str, int]]:
    """The configured remote (host, port) as datagrams from it show it: the host resolved."""
    if remote is None:
        return None
    host, port = remote
    try:
        host = socket.gethostbyname(host)       # 'localhost' -> '127.0.0.1'
    except (OSError, UnicodeError):
        pass                                    # sending there fails too: nothing matches
    return host, int(port)


def at_pin(pinned: Optional[Tuple[str, int]], addr) -> bool:
    """True if input from addr (host, port) may be the pinned peer's (pinned None: any).

    A pin given as 0.0.0.0 is this machine: its datagrams come from a local address.
    """
    if pinned is None:
        return True
    host, port = pinned
    if port != addr[1]:
        return False
    return addr[0] == host or (host == '0.0.0.0' and is_loopback(addr[0]))


def is_signed(msg) -> bool:
    """True for a MAVLink 2 frame with the signature flag set."""
    buf = msg.get_msgbuf()
    return len(buf) > 2 and buf[0] == 0xFD and bool(buf[2] & SIGNED)


def first_frame(data: bytes, is_fc: Callable[[int, int], bool], fc: str) -> Verdict:
    """Whether a TCP connection's first bytes are the FC's: its first frame from the FC's ids.

    is_fc(sysid, compid): the served FC's ids (fc: how a log names them). PX4 v1.16, once its
    connect() succeeded and before any HIL_SENSOR (SimulatorMavlink.cpp: run() starts the
    sim_send thread, whose send() begins with send_heartbeat(), then calls
    request_hil_state_quaternion()), sends exactly a HEARTBEAT (autopilot 12) and a
    COMMAND_LONG SET_MESSAGE_INTERVAL, in either order, both from MAV_SYS_ID:MAV_COMP_ID
    (SITL: instance + 1 (ROMFS init.d-posix/rcS), 1); it writes whole frames on a stream
    that loses nothing. So the FC's connection begins with a whole frame from those ids:
    bytes that are no frame (pymavlink's BAD_DATA), a signed frame (we hold no key) or a
    frame from other ids first are a stranger's. No complete frame yet: WAIT.
    """
    rx = new_mav(0, 0)
    for m in rx.parse_buffer(data) or []:
        t = m.get_type()
        if t == 'BAD_DATA':
            return Verdict(False, f'its first bytes are no MAVLink frame ({m.reason}); the '
                           "flight controller's connection begins with a frame of its own")
        src = source(m)
        if is_signed(m):
            return Verdict(False, f'its first frame, {t} from {src[0]}:{src[1]}, is signed '
                           '(this bridge holds no signing key)')
        if not is_fc(*src):
            return Verdict(False, f'its first frame, {t} from {src[0]}:{src[1]}, is not from '
                           f'the flight controller {fc}')
        return TAKE
    return WAIT


class Endpoint:
    """A link (UdpLink or TcpServerLink) with our ids."""

    def __init__(self, link, sysid: int, compid: int, name: str, peer_timeout_s: float):
        """link: an open link; sysid/compid: ours; name: how logs call it ('HIL link').

        peer_timeout_s: silence after which a peer heard on this link is dropped [s].
        """
        self.link = link
        self.name = name
        self.peers = PeerTable(peer_timeout_s)
        self.tx = new_mav(sysid, compid)
        self.rx = new_mav(sysid, compid)
        self.udp = isinstance(link, UdpLink)
        self.pinned = pin_address(link.fixed_remote) if self.udp else None
        self.routes: Dict[int, Tuple[str, int]] = {}   # sysid -> where it was heard last
        self._tx_lock = threading.Lock()
        self._connection = 0            # TCP: the link's client whose stream rx parses

    def heard(self, sysid: int, addr) -> None:
        """A message of system sysid came from addr (taken): replies to it go there (UDP)."""
        if self.udp and sysid:
            self.routes[sysid] = addr

    def at_pin(self, addr) -> bool:
        """True if input from addr (host, port) may be the FC's: the pinned address, or any."""
        return at_pin(self.pinned, addr)

    def send(self, *msgs) -> None:
        """Send the messages in one datagram per destination (None entries skipped).

        PX4, MAVSDK and pymavlink parse every frame of a datagram. A message addressed to a
        system heard at another address than the remote goes there (module docstring).
        """
        with self._tx_lock:
            if not self.routes:
                data = b''.join(pack(self.tx, m) for m in msgs if m is not None)
                if data:
                    self.link.send(data)
                return
            by_addr: Dict[Optional[Tuple[str, int]], List[bytes]] = {}
            for m in msgs:
                if m is not None:
                    to = self.routes.get(getattr(m, 'target_system', 0))
                    by_addr.setdefault(to, []).append(pack(self.tx, m))
            for to, frames in by_addr.items():
                if to is None or to == self.link.remote:
                    self.link.send(b''.join(frames))
                else:
                    self.link.send_to(b''.join(frames), to)

    def send_to(self, addr, *msgs) -> None:
        """Send the messages in one datagram to addr (UDP; TCP: to the client)."""
        with self._tx_lock:
            data = b''.join(pack(self.tx, m) for m in msgs if m is not None)
            if not data:
                return
            if self.udp and addr is not None:
                self.link.send_to(data, addr)
            else:
                self.link.send(data)

    def parse(self, data: bytes) -> list:
        """Decoded messages of one datagram (TCP: one read; frames may continue in the next).

        pymavlink's robust parser returns BAD_DATA for what it refuses, never raises. On TCP a
        new client's stream starts afresh: no partial frame of the one before prefixes it.
        """
        if not self.udp and self.link.clients != self._connection:
            self._connection = self.link.clients
            reset_parser(self.rx)
        try:
            return self.rx.parse_buffer(data) or []
        finally:
            if self.udp:
                reset_parser(self.rx)   # a datagram is whole: no frame continues in the next

    def describe(self) -> str:
        """The link as a log line shows it."""
        return self.link.describe()
