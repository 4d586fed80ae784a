"""PX4's MAVLink links over UDP: mavlink_main.cpp, mavlink_receiver.cpp, px4-rc.mavlink (v1.16).

Part of the PX4 stand-in (px4_sitl.py), src/modules/mavlink/ and ROMFS's px4-rc.mavlink:
- the onboard payload link (14280 + i -> 14030 + i) and, with --gcs-port, the GCS link
  (18570 + i -> 14550), both with forwarding (-f); bound to the local port, sending to the
  remote until a datagram arrives; the first sender becomes the partner for good;
- forwarding (Mavlink::forward_message): a message received on a link goes to every other
  forwarding link, unless it targets this system's component 1 (kept), unless it is a
  HEARTBEAT and MAV_HB_FORW_EN is 0, and only to a link where its target was seen before
  (component_was_seen: a broadcast needs any component heard there);
- STATUSTEXT only on a link where a HEARTBEAT of MAV_TYPE_GCS was heard within 3 s
  (streams/STATUSTEXT.hpp, is_gcs_connected()); every message also goes out as its event on
  every link (px4_events: EVENT, CURRENT_EVENT_SEQUENCE, REQUEST_EVENT; COMPONENT_METADATA and
  MAVLink FTP for the texts);
- parameters: PARAM_SET -> PARAM_VALUE, unknown names and other types unanswered (px4_params);
- the payload link's telemetry (Streams): px4_streams.py; the HEARTBEAT every link sends:
  px4_commander.py; the mission manager answering on a link: px4_mission.py.
"""

import collections
import socket
import struct
import threading
from typing import Optional

from mavlink_bridge.core.mav import mavlink, new_mav, pack

import px4_events
from px4_params import PARAMS, to_wire
from px4_streams import Streams

GCS_TIMEOUT_US = 3_000_000          # telemetry_status_s::HEARTBEAT_TIMEOUT_US
SEVERITY_LEVEL = {mavlink.MAV_SEVERITY_CRITICAL: 'critical', mavlink.MAV_SEVERITY_ERROR: 'error',
                  mavlink.MAV_SEVERITY_WARNING: 'warning', mavlink.MAV_SEVERITY_INFO: 'info'}


class LinkStats:
    """Frames received per sender and the sequence gaps, as MAVProxy/mavutil count loss."""

    def __init__(self):
        """No frames yet."""
        self.last = {}
        self.frames = 0
        self.lost = 0

    def add(self, msg):
        """Count one decoded frame (an UNKNOWN_ one by its frame's header)."""
        key = source(msg)
        seq = msg.get_msgbuf()[4] if msg.get_type().startswith('UNKNOWN_') else msg.get_seq()
        if key in self.last:
            self.lost += (seq - self.last[key] - 1) % 256
        self.last[key] = seq
        self.frames += 1


class Link:
    """One MAVLink instance of PX4 over UDP (mavlink_main.cpp, mavlink_receiver.cpp).

    Bound to its local port, sending to 127.0.0.1:remote until a datagram arrives; the first
    sender becomes the partner for good (set_client_source_initialized); messages from any
    address are still handled. `forwarding` (-f in px4-rc.mavlink: every SITL link has it).
    component_was_seen: the (system, component) pairs heard on this link
    (MavlinkReceiver::update_rx_stats). gcs_heard_us: PX4 time of the last HEARTBEAT of
    MAV_TYPE_GCS on this link (telemetry_status.heartbeat_type_gcs, 3 s timeout).
    """

    def __init__(self, name: str, port: int, remote: int, sysid: int, host: str = '127.0.0.1',
                  streams: Optional[Streams] = None):
        """name: for the report; port / remote: local port and default partner port.

        streams: the link's telemetry (Streams), None = none modelled.
        """
        self.name = name
        self.streams = streams
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind((host, port))
        self.partner = (host, remote)
        self.partner_locked = False
        self.mav = new_mav(sysid, 1)
        self.mav.robust_parsing = True
        self.rx = new_mav(sysid, 1)
        self.rx.robust_parsing = True
        self.forwarding = True
        self.seen = set()
        self.gcs_heard_us = None
        self.stats = LinkStats()
        self.forwarded = collections.Counter()      # msgid -> frames passed to this link
        self.send_errors = 0
        self.lock = threading.Lock()                # the sender (sequence numbers)

    def send(self, *msgs, raw: bytes = b''):
        """Frames of ours (pymavlink messages) and raw frames, in one datagram."""
        with self.lock:
            data = b''.join(pack(self.mav, m) for m in msgs) + raw
            if data:
                self._out(data)

    def send_ext(self, msgid: int, payload: bytes):
        """A frame of a message pymavlink's dialect lacks (px4_events.frame), our sequence."""
        with self.lock:
            data = px4_events.frame(msgid, payload, self.mav.seq, self.mav.srcSystem,
                                    self.mav.srcComponent)
            self.mav.seq = (self.mav.seq + 1) % 256
            self._out(data)

    def _out(self, data: bytes):
        try:
            self.sock.sendto(data, self.partner)
        except OSError:             # no partner to reach (a port 0 in the unit tests)
            self.send_errors += 1

    def component_was_seen(self, sysid: int, compid: int) -> bool:
        """MavlinkReceiver::component_was_seen: broadcast (0) needs any component seen."""
        if sysid == 0:
            return bool(self.seen)
        return any(s == sysid and (compid == 0 or c == compid) for s, c in self.seen)


def targets(m):
    """(target_system, target_component) of a message, 0 where it has none (meta->flags)."""
    if m.get_type() == 'UNKNOWN_412':
        r = px4_events.parse_request_event(bytes(m.get_msgbuf()))
        return (r[0], r[1]) if r else (0, 0)
    return getattr(m, 'target_system', 0), getattr(m, 'target_component', 0)


def source(m):
    """(sysid, compid) of a message; of an UNKNOWN_ one from its frame (pymavlink leaves 0)."""
    if m.get_type().startswith('UNKNOWN_'):
        b = m.get_msgbuf()
        return b[5], b[6]
    return m.get_srcSystem(), m.get_srcComponent()


class MavlinkLinks:
    """Px4Sitl's MAVLink links: its words out, each link's receive loop, forwarding, handling.

    A mixin of Px4Sitl (px4_sitl.py), on its state: sysid, links, payload, mm, params, events,
    ftp, lock, now_us, counts, log, stop; it calls the commander's _command and _new_mission
    (px4_commander.py) and _nav_from_params (px4_precland.py).
    """

    # --- output ----------------------------------------------------------------------------------
    def say(self, severity: int, text: str, event=None, *args):
        """A message of PX4: STATUSTEXT where a GCS is, its event on every link.

        STATUSTEXT.hpp sends only on links with a GCS heartbeat; event: the event's name,
        args its arguments.
        """
        self.log.append(text)
        for link in self.links:
            if self._gcs_on(link):
                self.counts['statustext'] += 1
                link.send(link.mav.statustext_encode(severity, text.encode()[:50]))
        if event is not None:
            self._event(event, SEVERITY_LEVEL.get(severity, 'info'), *args)

    def _event(self, name: str, level: str, *args):
        body = self.events.event(name, level, self.now_us, *args)
        self.counts['events'] += 1
        for link in self.links:
            link.send_ext(410, body)

    def _gcs_on(self, link) -> bool:
        return link.gcs_heard_us is not None and \
            self.now_us - link.gcs_heard_us <= GCS_TIMEOUT_US

    def _udp_send(self, *msgs):
        """Send on the payload link (the link the simulator's mission side talks to)."""
        self.payload.send(*msgs)

    # --- MAVLink links (UDP) ------------------------------------------------------------------
    def run_link(self, link: Link):
        """Receive loop of one MAVLink link."""
        link.sock.settimeout(0.2)
        while not self.stop.is_set():
            try:
                data, addr = link.sock.recvfrom(65536)
            except socket.timeout:
                continue
            except OSError:
                return
            if self.now_us == 0:
                # PX4's MAVLink instances start after the first HIL_SENSOR: rcS starts
                # simulator_mavlink, which waits for the simulator and the first sensors to
                # set the lockstep clock ("setting initial absolute time"), then mavlink
                # (px4-rc.mavlink): until then nothing listens on the port
                self.counts['before_mavlink_start'] += 1
                continue
            # the first sender is the partner for good (replies go there); datagrams from
            # anyone are still handled (mavlink_receiver.cpp does not filter by address)
            if not link.partner_locked:
                link.partner, link.partner_locked = addr, True
            for m in link.rx.parse_buffer(data) or []:
                if m.get_type() != 'BAD_DATA':
                    link.stats.add(m)
                    link.seen.add(source(m))
                    self._forward(link, m)
                    self._on_message(link, m)

    def run_mavlink(self):
        """Receive loop of the payload link (the tests' entry point)."""
        self.run_link(self.payload)

    def _forward(self, link: Link, m):
        """Mavlink::forward_message: to every other forwarding link, as PX4 does."""
        if not link.forwarding:
            return
        ts, tc = targets(m)
        if (ts, tc) == (self.sysid, 1):
            return                                # only for us: kept
        if m.get_type() == 'HEARTBEAT' and not self.params['MAV_HB_FORW_EN']:
            return
        for other in self.links:
            if other is not link and other.forwarding and other.component_was_seen(ts, tc):
                other.forwarded[m.get_msgId()] += 1
                other.send(raw=bytes(m.get_msgbuf()))

    def _on_message(self, link: Link, m):
        t = m.get_type()
        if t == 'HEARTBEAT':
            if m.type == mavlink.MAV_TYPE_GCS:
                with self.lock:
                    link.gcs_heard_us = self.now_us
            return
        with self.lock:
            now = self.now_us
            out, ext = [], []
            if t == 'MISSION_COUNT':
                out = self.mm.on_count(link.mav, m, now)
            elif t in ('MISSION_ITEM', 'MISSION_ITEM_INT'):
                before = self.mm.accepted
                out = self.mm.on_item(link.mav, m, now)
                if self.mm.accepted > before:
                    self._new_mission()
            elif t == 'COMMAND_LONG' and m.target_system in (0, self.sysid):
                out = [self._command(m, link)]
                if m.command == mavlink.MAV_CMD_REQUEST_MESSAGE and \
                        int(m.param1) == px4_events.COMPONENT_METADATA_ID:
                    ext.append((397, struct.pack('<II100s', now // 1000, 0,
                                                 b'mftp://etc/extras/component_general.json.xz')))
            elif t == 'PARAM_SET' and m.target_system == self.sysid and \
                    m.target_component in (1, 0):
                name = m.param_id.rstrip('\x00') if isinstance(m.param_id, str) else \
                    bytes(m.param_id).split(b'\0', 1)[0].decode()
                v = self.params.set(name, m.param_value, m.param_type)
                if v is None:
                    self.counts['param_refused'] += 1
                else:
                    self.counts['param_sets'] += 1
                    self._nav_from_params()
                    out = [link.mav.param_value_encode(name.encode(), to_wire(v, m.param_type),
                                                       m.param_type, len(PARAMS), 0)]
            elif t == 'FILE_TRANSFER_PROTOCOL' and m.target_system in (0, self.sysid):
                self.counts['ftp'] += 1
                src = source(m)
                out = [link.mav.file_transfer_protocol_encode(0, src[0], src[1],
                                                              self.ftp.handle(m.payload))]
            elif t == 'UNKNOWN_412':
                r = px4_events.parse_request_event(bytes(m.get_msgbuf()))
                if r and r[0] == self.sysid:
                    ext = self.events.answer(source(m), r[2], r[3])
        link.send(*out)
        for msgid, body in ext:
            link.send_ext(msgid, body)
