"""The PX4 stand-in's events interface, component metadata and MAVLink FTP server.

Read from PX4 v1.16's sources, written independently of the bridge's receiving side (its own
frame layouts and CRC_EXTRA values, which are the ones PX4's generated headers carry):
- events (src/lib/events, src/modules/mavlink/mavlink_events.cpp): an event's id is
  (component 1 << 24) | the 24 low bits of the FNV-1a hash of its name (events::ID); each new
  event gets the next uint16 sequence number; EVENT (410) goes to every link at once,
  CURRENT_EVENT_SEQUENCE (411) every 3 s (current_sequence_interval) and with the reset flag
  at the first event; the last 20 are kept (EventBuffer) for REQUEST_EVENT (412), an older one
  is answered RESPONSE_EVENT_ERROR (413) with the oldest held;
- the texts: the events metadata JSON (libevents' format, as PX4's build writes
  build/.../events/all_events.json: components "1" = namespace px4, event groups, enums),
  xz-compressed in etc/extras/all_events.json.xz and listed (type 4) in
  etc/extras/component_general.json.xz, whose URI COMPONENT_METADATA (397) gives
  (streams/COMPONENT_METADATA.hpp, on MAV_CMD_REQUEST_MESSAGE);
- MAVLink FTP (mavlink_ftp.cpp): OpenFileRO (one session, 0), ReadFile (NAK EOF past the end),
  TerminateSession; a request with the sequence number of the one last answered gets that
  answer again; other opcodes: NAK unknown command.
The messages and their argument types are PX4's (its all_events.json for v1.16).
"""

import json
import lzma
import struct

from pymavlink.generator.mavcrc import x25crc

# CRC_EXTRA of PX4's generated headers (mavlink/common/mavlink_msg_*.h, MAVLINK_MSG_ID_*_CRC)
CRC_EXTRA = {410: 160, 411: 106, 412: 33, 413: 77, 397: 182}
BUFFER = 20
COMPONENT_METADATA_ID = 397
SEQ_INTERVAL_US = 3_000_000
LOG = {'emergency': 0, 'alert': 1, 'critical': 2, 'error': 3, 'warning': 4, 'notice': 5,
       'info': 6, 'debug': 7, 'protocol': 8}

ENUMS = {
    'arm_disarm_reason_t': ('uint8_t', False, {0: 'Transition to standby', 3: 'internal command',
                                               4: 'external command', 5: 'mission start',
                                               6: 'landing', 7: 'auto preflight disarming'}),
    'navigation_mode_group_t': ('uint32_t', True, {1: 'Fully manual mode (w/o any controller '
                                                   'support)', 8: 'Mission mode', 16: 'Loiter',
                                                   32: 'RTL', 131072: 'Takeoff', 262144: 'Land'}),
    'health_component_t': ('uint32_t', True, {4096: 'Communication links', 262144: 'Mission',
                                              16777216: 'Global position estimate'}),
}
CHECK_ARGS = (('modes', 'navigation_mode_group_t'), ('health_component_index', 'uint8_t'))
# name: (group, type, message, arguments)
EVENTS = {
    'commander_arming_check_summary': (
        'arming_check', 'summary', 'Arming check summary event',
        (('chunk_idx', 'uint8_t'), ('error', 'px4::health_component_t'),
         ('warning', 'px4::health_component_t'), ('can_arm', 'px4::navigation_mode_group_t'),
         ('can_run', 'px4::navigation_mode_group_t'))),
    'commander_health_summary': (
        'health', 'summary', 'Health report summary event',
        (('chunk_idx', 'uint8_t'), ('is_present', 'px4::health_component_t'),
         ('error', 'px4::health_component_t'), ('warning', 'px4::health_component_t'))),
    'check_rc_dl_no_dllink': ('arming_check', '', 'No connection to the ground control station',
                              CHECK_ARGS),
    'check_modes_global_pos': ('arming_check', '', 'Navigation error: No valid global position '
                               'estimate', CHECK_ARGS),
    'check_modes_mission': ('arming_check', '', 'No valid mission available', CHECK_ARGS),
    'commander_arm_denied_resolve_failures': ('default', '', 'Arming denied: Resolve system '
                                              'health failures first', ()),
    'commander_armed_by': ('default', '', 'Armed by {1}', (('arg0', 'px4::arm_disarm_reason_t'),)),
    'commander_disarmed_by': ('default', '', 'Disarmed by {1}',
                              (('arg0', 'px4::arm_disarm_reason_t'),)),
    'commander_mission_start_denied_no_mission': ('default', '', 'Mission start denied! No '
                                                  'valid mission', ()),
    'mission_execute': ('default', '', 'Executing Mission', ()),
    'commander_takeoff_detected': ('default', '', 'Takeoff detected', ()),
    'commander_landing_detected': ('default', '', 'Landing detected', ()),
    'navigator_mis_land_missing': ('default', '', 'Mission rejected: Landing waypoint/pattern '
                                   'required', ()),
    'navigator_mis_approach_wp_below_land': ('default', '', 'Mission rejected: the approach '
                                             'waypoint must be above the landing point', ()),
    'navigator_mis_glide_slope_too_steep': (
        'default', '', 'Mission rejected: the landing glide slope is steeper than the vehicle '
        'setting of {1}.{2} degrees', (('arg0', 'uint8_t'), ('arg1', 'uint8_t'))),
    'navigator_mis_correct_glide_slope': (
        'default', '', 'Reduce the glide slope, lower the entrance altitude {1} meters, or '
        'increase the landing approach distance {2} meters',
        (('arg0', 'uint32_t'), ('arg1', 'uint32_t'))),
}
BASE = {'uint8_t': 'B', 'uint16_t': 'H', 'uint32_t': 'I', 'int32_t': 'i', 'float': 'f'}


def sub_id(name: str) -> int:
    """The 24-bit FNV-1a hash of a name (PX4's events::ID without the component)."""
    h = 0x811C9DC5
    for c in name.encode():
        h = ((h ^ c) * 0x01000193) & 0xFFFFFFFF
    return h & 0xFFFFFF


def event_id(name: str) -> int:
    """PX4's id of an event of component 1 (px4)."""
    return (1 << 24) | sub_id(name)


def pack_args(name: str, *values) -> bytes:
    """An event's arguments, little-endian, enums by their base type."""
    out = b''
    for (_, t), v in zip(EVENTS[name][3], values):
        base = ENUMS[t.split('::')[-1]][0] if t.split('::')[-1] in ENUMS else t
        out += struct.pack('<' + BASE[base], v)
    return out


def metadata() -> dict:
    """The events metadata JSON, libevents' format (as PX4's all_events.json)."""
    groups = {}
    for name, (group, kind, message, args) in EVENTS.items():
        ev = {'name': name, 'message': message}
        if kind:
            ev['type'] = kind
        if args:
            ev['arguments'] = [{'name': a, 'type': t} for a, t in args]
        groups.setdefault(group, {'events': {}})['events'][str(sub_id(name))] = ev
    enums = {n: {'type': t, 'is_bitfield': bf, 'description': n,
                 'entries': {str(k): {'name': str(k), 'description': d}
                             for k, d in entries.items()}}
             for n, (t, bf, entries) in ENUMS.items()}
    return {'version': 2, 'components': {'1': {'namespace': 'px4', 'event_groups': groups,
                                               'enums': enums}}}


def files() -> dict:
    """The FTP server's files: the general metadata and the events metadata, xz."""
    general = {'version': 1, 'metadataTypes': [
        {'type': 4, 'uri': 'mftp://etc/extras/all_events.json.xz', 'fileCrc': 0}]}
    return {'etc/extras/component_general.json.xz': lzma.compress(json.dumps(general).encode()),
            'etc/extras/all_events.json.xz': lzma.compress(json.dumps(metadata()).encode())}


def frame(msgid: int, payload: bytes, seq: int, sysid: int, compid: int) -> bytes:
    """A MAVLink 2 frame of one of the messages pymavlink's dialect lacks."""
    payload = payload.rstrip(b'\0') or b'\0'
    head = struct.pack('<BBBBBBBHB', 0xFD, len(payload), 0, 0, seq & 0xFF, sysid, compid,
                       msgid & 0xFFFF, msgid >> 16)
    crc = x25crc(head[1:] + payload)
    crc.accumulate([CRC_EXTRA[msgid]])
    return head + payload + struct.pack('<H', crc.crc)


def parse_request_event(buf: bytes):
    """REQUEST_EVENT frame -> (target_system, target_component, first, last), or None."""
    if len(buf) < 12 or buf[0] != 0xFD or (buf[7] | buf[8] << 8 | buf[9] << 16) != 412:
        return None
    plen = buf[1]
    crc = x25crc(buf[1:10 + plen])
    crc.accumulate([CRC_EXTRA[412]])
    if struct.unpack_from('<H', buf, 10 + plen)[0] != crc.crc:
        return None
    first, last, ts, tc = struct.unpack('<HHBB', buf[10:10 + plen].ljust(6, b'\0'))
    return ts, tc, first, last


class EventSender:
    """PX4's event buffer and send protocol for one system (its links share the numbering)."""

    def __init__(self, sysid: int):
        """Numbering starts at 65526 (PX4 starts near the wrap, as seen from v1.16 SITL)."""
        self.sysid = sysid
        self.seq = 65525
        self.buffer = []            # (seq, payload) of the last BUFFER events
        self.sent_reset = False
        self.next_current_us = 0
        self.requests = 0

    def event(self, name: str, level: str, t_us: int, *args) -> bytes:
        """A new event's payload, kept in the buffer.

        EVENT in wire order: id, time, sequence, destination component and system, log
        levels, arguments[40].
        """
        self.seq = (self.seq + 1) & 0xFFFF
        body = struct.pack('<IIHBBB40s', event_id(name), t_us // 1000, self.seq, 0, 0,
                           LOG[level] | (LOG[level] << 4), pack_args(name, *args))
        self.buffer = (self.buffer + [(self.seq, body)])[-BUFFER:]
        return body

    def current(self, t_us: int, force: bool = False):
        """CURRENT_EVENT_SEQUENCE payload if due, else None.

        Every 3 s, and with the reset flag the first time.
        """
        if not force and t_us < self.next_current_us and self.sent_reset:
            return None
        self.next_current_us = t_us + SEQ_INTERVAL_US
        flags = 0 if self.sent_reset else 1
        self.sent_reset = True
        return struct.pack('<HB', self.seq, flags)

    def answer(self, target, first: int, last: int):
        """REQUEST_EVENT: [(msgid, payload)] of the held events, errors for the others."""
        self.requests += 1
        out, seq = [], first
        while True:
            held = [b for s, b in self.buffer if s == seq]
            if held:
                out.append((410, held[0]))
            else:
                oldest = self.buffer[0][0] if self.buffer else (self.seq + 1) & 0xFFFF
                out.append((413, struct.pack('<HHBBB', seq, oldest, target[0], target[1], 1)))
            if seq == last:
                return out
            seq = (seq + 1) & 0xFFFF


class FtpServer:
    """PX4's MavlinkFTP, the read-only part: one session."""

    def __init__(self, files_: dict):
        """files_: path -> bytes."""
        self.files = files_
        self.open = None
        self.last = None            # (request seq, reply payload)
        self.reads = 0

    def handle(self, payload) -> bytes:
        """A request payload (251 bytes) -> the reply payload."""
        b = bytes(payload).ljust(251, b'\0')
        seq, session, op, size, _, _, _, offset = struct.unpack_from('<HBBBBBBI', b)
        if self.last and self.last[0] == seq:
            return self.last[1]                    # our reply was lost: the same again
        data = b[12:12 + size]

        def reply(ok: bool, body: bytes = b'', sess: int = 0) -> bytes:
            out = struct.pack('<HBBBBBBI', (seq + 1) & 0xFFFF, sess, 128 if ok else 129,
                              len(body), op, 0, 0, offset) + body
            return out.ljust(251, b'\0')

        if op == 4:                 # OpenFileRO
            path = data.split(b'\0', 1)[0].decode('utf-8', 'replace')
            if self.open is not None:
                r = reply(False, bytes([5]))                    # no sessions available
            elif path not in self.files:
                r = reply(False, bytes([10]))                   # file not found
            else:
                self.open = path
                r = reply(True, struct.pack('<I', len(self.files[path])))
        elif op == 5:               # ReadFile
            if self.open is None or session != 0:
                r = reply(False, bytes([4]))                    # invalid session
            elif offset >= len(self.files[self.open]):
                r = reply(False, bytes([6]))                    # EOF
            else:
                self.reads += 1
                r = reply(True, self.files[self.open][offset:offset + min(size, 239)])
        elif op == 1:               # TerminateSession
            self.open = None
            r = reply(True)
        else:
            r = reply(False, bytes([7]))                        # unknown command
        self.last = (seq, r)
        return r
