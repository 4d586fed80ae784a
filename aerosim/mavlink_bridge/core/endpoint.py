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
"""

import socket
import threading
from typing import Dict, List, Optional, Tuple

from mavlink_bridge.core.mav import new_mav, pack, reset_parser
from mavlink_bridge.core.peers import PeerTable
from sim_core.link import UdpLink, is_loopback

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


def is_signed(msg) -> bool:
    """True for a MAVLink 2 frame with the signature flag set."""
    buf = msg.get_msgbuf()
    return len(buf) > 2 and buf[0] == 0xFD and bool(buf[2] & SIGNED)


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

    def heard(self, sysid: int, addr) -> None:
        """A message of system sysid came from addr (taken): replies to it go there (UDP)."""
        if self.udp and sysid:
            self.routes[sysid] = addr

    def at_pin(self, addr) -> bool:
        """True if input from addr (host, port) may be the FC's: the pinned address, or any."""
        if self.pinned is None:
            return True
        host, port = self.pinned
        if port != addr[1]:
            return False
        # a remote given as 0.0.0.0 is this machine: its datagrams come from a local address
        return addr[0] == host or (host == '0.0.0.0' and is_loopback(addr[0]))

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

        pymavlink's robust parser returns BAD_DATA for what it refuses, never raises.
        """
        try:
            return self.rx.parse_buffer(data) or []
        finally:
            if self.udp:
                reset_parser(self.rx)   # a datagram is whole: no frame continues in the next

    def describe(self) -> str:
        """The link as a log line shows it."""
        return self.link.describe()
