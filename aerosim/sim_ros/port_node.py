"""PortNode: the shared part of the nodes that own an external port (the three bridges).

Owns the socket link (closed with the node), the peer allowlist (``allow_peers``), the reject
counters by kind with a rate-limited warning, the guard that keeps the port alive whatever a
datagram does, and the 1 Hz /diagnostics status (counts and their rates, ``rejected_<kind>``,
``rejected``).
"""

import threading
import time

from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
from rclpy.node import Node

from sim_core.link import Allowlist, TcpServerLink, UdpLink, is_loopback, parse_endpoint
from sim_core.port_config import PORT_PARAMETERS, PortConfig
from sim_ros import qos
from sim_ros.params import read_config

# Datagrams read per poll of the socket (the poll timer runs every 10 ms).
MAX_DATAGRAMS_PER_POLL = 500


class PortNode(Node):
    """A node with one external link; subclasses set ``link`` and call ``_init_port``."""

    link = None                 # destroy_node() may run on a half-built node

    def __init__(self, name: str, **node_kw):
        """Create the node; no link yet."""
        super().__init__(name, **node_kw)
        self.allow = None           # the allow_peers Allowlist, once declared
        self._rate_mark = None      # (monotonic time, counts) of the last diagnostics

    def _open_link(self, transport: str, bind: str, tcp_bind: str = '', remote: str = '',
                   remote_what: str = '', send_timeout_s=None, **tcp):
        """The port's link, filtered by allow_peers (ValueError/OSError if misconfigured).

        transport 'udp': bound to bind ('host:port'), sending to remote (the parameter
        remote_what; '' = the last sender of valid input); 'tcp': a server on tcp_bind whose
        client is dropped if it takes no data for send_timeout_s (None: the sender waits);
        tcp: TcpServerLink's vet and on_event (how a connection proves itself the peer's).
        """
        if transport not in ('udp', 'tcp'):
            raise ValueError(f'transport: one of udp, tcp, got {transport!r}')
        udp = transport == 'udp'
        local = parse_endpoint(bind if udp else tcp_bind, 'bind' if udp else 'tcp_bind')
        allow = self._allowlist([local[0]])
        if udp:
            return UdpLink(local, parse_endpoint(remote, remote_what), allow, self._refused)
        return TcpServerLink(local, allow, self._refused, send_timeout_s, **tcp)

    def _allowlist(self, bound_hosts) -> Allowlist:
        """Declare allow_peers and return it (ValueError if malformed); kept in self.allow.

        Warns when a port listens beyond loopback (bound_hosts) and takes input from anyone.
        """
        allow = self.allow = Allowlist(
            read_config(self, PortConfig, PORT_PARAMETERS).allow_peers)
        exposed = [h for h in bound_hosts if h and not is_loopback(h)]
        if exposed and not allow:
            self.get_logger().warning(
                f'listening on {", ".join(exposed)} and taking input from any peer: set '
                'allow_peers to the addresses that may command the simulation')
        return allow

    def _refused(self, addr):
        """The link dropped input from a peer not in allow_peers."""
        self._reject('peer', f'{addr[0]} is not in allow_peers', addr)

    def _init_port(self, label: str, kinds, warn_period_s: float, max_text: int = None):
        """Reject counters for kinds, log label ('IMC', 'USV UI'), the diagnostics publisher.

        max_text: longest rejected-input text quoted in a warning (None: all of it).
        """
        self._port_label = label
        self._warn_period = warn_period_s
        self._max_text = max_text
        self.rejects = dict.fromkeys(tuple(kinds) + ('peer',), 0)
        self._warned = {}           # kind -> monotonic time of its last warning
        self._reject_lock = threading.Lock()    # reader threads and the executor count
        self.pub_diag = self.create_publisher(DiagnosticArray, '/diagnostics', qos.VIEW_PUB)

    def _reject(self, kind: str, text: str, addr=None):
        """Count a rejected input by kind and warn, at most once per warn_period_s per kind.

        Per kind: a peer flooding one kind (DUNE's telemetry we do not use, a fuzzer's
        garbage) never hides the first input refused for another reason.
        """
        now = time.monotonic()
        with self._reject_lock:
            self.rejects[kind] += 1
            if now - self._warned.get(kind, -1e9) < self._warn_period:
                return
            self._warned[kind] = now
        src = f' from {addr[0]}:{addr[1]}' if addr else ''
        text = text if self._max_text is None else text[:self._max_text]
        self.get_logger().warning(
            f'{self._port_label} input rejected{src} ({kind}, {self.rejects[kind]} so far; '
            f'{sum(self.rejects.values())} in all): {text}')

    def _log_lines(self, lines) -> None:
        """Log a core's (level, text) lines.

        level: 'info', 'warning', 'error', or 'throttled' (a warning at most once per
        warn_period_s). Each level has its own call site: rclpy refuses one site logging at two
        severities.
        """
        if not lines:
            return                      # the common case, once per step
        log = self.get_logger()
        for level, text in lines:
            if level == 'throttled':
                log.warning(text, throttle_duration_sec=self._warn_period)
            elif level == 'warning':
                log.warning(text)
            elif level == 'error':
                log.error(text)
            else:
                log.info(text)

    def _guarded(self, handler, data: bytes, addr, crash_kind: str):
        """handler(data, addr) and its result; an exception is a reject of crash_kind (None)."""
        try:
            return handler(data, addr)
        except Exception as exc:  # noqa: BLE001 - the port must survive any input
            if self.context.ok():
                self._reject(crash_kind, f'{type(exc).__name__}: {exc}', addr)
            return None

    def _read_link(self, on_data):
        """Hand what the link has now (at most MAX_DATAGRAMS_PER_POLL reads) to on_data."""
        for _ in range(MAX_DATAGRAMS_PER_POLL):
            data, addr = self.link.recv(0.0)
            if data is None or not self.context.ok():
                return
            on_data(data, addr)

    def _publish_port_status(self, name: str, hardware_id: str, ok: bool, message: str,
                             counts: dict, extra=()):
        """Publish the link's DiagnosticStatus: counts, rejects by kind, extra (key, value).

        Each count also goes out as ``<count>_per_s``, its rate since the last status [1/s].
        """
        now = time.monotonic()
        counts = dict(counts)
        mark = self._rate_mark
        self._rate_mark = (now, dict(counts))
        dt = now - mark[0] if mark else 0.0
        for k, v in list(counts.items()):
            counts[f'{k}_per_s'] = (f'{(v - mark[1].get(k, 0)) / dt:.1f}' if dt > 0.0
                                    else '0.0')
        arr = DiagnosticArray()
        arr.header.stamp = self.get_clock().now().to_msg()
        st = DiagnosticStatus(name=f'{self.get_name()}: {name}', hardware_id=hardware_id)
        st.level = DiagnosticStatus.OK if ok else DiagnosticStatus.WARN
        st.message = message
        rejected = sum(self.rejects.values())
        st.values = [KeyValue(key=k, value=str(v)) for k, v in counts.items()] + [
            KeyValue(key=f'rejected_{k}', value=str(v)) for k, v in self.rejects.items()] + [
            KeyValue(key='rejected', value=str(rejected))] + [
            KeyValue(key=k, value=str(v)) for k, v in extra]
        arr.status = [st]
        self.pub_diag.publish(arr)

    def destroy_node(self):
        """Close the link, then destroy the node."""
        if self.link is not None:
            self.link.close()
        super().destroy_node()
