"""Messages of MAVLink's common set that pymavlink 2.4.50's bundled dialect lacks (pure).

pymavlink's common.xml predates the events interface and component metadata, so its parser
hands these frames over as ``UNKNOWN_<id>`` with their raw bytes (MAVLink_unknown, CRC not
checked). PX4 v1.16 sends them (its common.xml, mavlink/message_definitions): EVENT (410),
CURRENT_EVENT_SEQUENCE (411), RESPONSE_EVENT_ERROR (413) and COMPONENT_METADATA (397); we
send REQUEST_EVENT (412). Each is defined here by its fields in the XML's order; the wire
order (by type size, largest first, stable) and the CRC_EXTRA follow mavgen's rules
(pymavlink.generator.mavparse.message_checksum), so decode() checks a frame's CRC as pymavlink
would and ExtMessage packs a MAVLink 2 frame as pymavlink's own messages do (trailing zero
bytes of the payload dropped).
"""

from dataclasses import dataclass
import struct
from typing import Dict, NamedTuple, Optional, Tuple

from pymavlink.generator.mavcrc import x25crc

SIZES = {'uint8_t': 1, 'int8_t': 1, 'char': 1, 'uint16_t': 2, 'int16_t': 2, 'uint32_t': 4,
         'int32_t': 4, 'float': 4, 'uint64_t': 8, 'int64_t': 8, 'double': 8}
CODES = {'uint8_t': 'B', 'int8_t': 'b', 'char': 's', 'uint16_t': 'H', 'int16_t': 'h',
         'uint32_t': 'I', 'int32_t': 'i', 'float': 'f', 'uint64_t': 'Q', 'int64_t': 'q',
         'double': 'd'}
HEADER_V2 = 10


@dataclass(frozen=True)
class MsgDef:
    """One message: id, name and fields (name, C type, array length 0 = scalar) in XML order."""

    msgid: int
    name: str
    fields: Tuple[Tuple[str, str, int], ...]

    def __post_init__(self):
        """Arrays are of 1-byte types only (all these messages need)."""
        assert all(SIZES[t] == 1 for _, t, n in self.fields if n), self.name

    @property
    def wire(self):
        """The fields in wire order: by type size, largest first (stable), as mavgen sorts."""
        return sorted(self.fields, key=lambda f: -SIZES[f[1]])

    @property
    def crc_extra(self) -> int:
        """CRC_EXTRA as mavgen computes it: x25 over the name and the fields (wire order)."""
        crc = x25crc()
        crc.accumulate_str(self.name + ' ')
        for name, ctype, n in self.wire:
            crc.accumulate_str(ctype + ' ')
            crc.accumulate_str(name + ' ')
            if n:
                crc.accumulate([n])
        return (crc.crc & 0xFF) ^ (crc.crc >> 8)

    @property
    def struct(self) -> struct.Struct:
        """The payload's layout, little-endian (arrays: of 1-byte types, as bytes)."""
        return struct.Struct('<' + ''.join(f'{n}s' if n else CODES[ctype]
                                           for _, ctype, n in self.wire))


EVENT = MsgDef(410, 'EVENT', (
    ('destination_component', 'uint8_t', 0), ('destination_system', 'uint8_t', 0),
    ('id', 'uint32_t', 0), ('event_time_boot_ms', 'uint32_t', 0), ('sequence', 'uint16_t', 0),
    ('log_levels', 'uint8_t', 0), ('arguments', 'uint8_t', 40)))
CURRENT_EVENT_SEQUENCE = MsgDef(411, 'CURRENT_EVENT_SEQUENCE', (
    ('sequence', 'uint16_t', 0), ('flags', 'uint8_t', 0)))
REQUEST_EVENT = MsgDef(412, 'REQUEST_EVENT', (
    ('target_system', 'uint8_t', 0), ('target_component', 'uint8_t', 0),
    ('first_sequence', 'uint16_t', 0), ('last_sequence', 'uint16_t', 0)))
RESPONSE_EVENT_ERROR = MsgDef(413, 'RESPONSE_EVENT_ERROR', (
    ('target_system', 'uint8_t', 0), ('target_component', 'uint8_t', 0),
    ('sequence', 'uint16_t', 0), ('sequence_oldest_available', 'uint16_t', 0),
    ('reason', 'uint8_t', 0)))
COMPONENT_METADATA = MsgDef(397, 'COMPONENT_METADATA', (
    ('time_boot_ms', 'uint32_t', 0), ('file_crc', 'uint32_t', 0), ('uri', 'char', 100)))
BY_ID: Dict[int, MsgDef] = {d.msgid: d for d in (EVENT, CURRENT_EVENT_SEQUENCE, REQUEST_EVENT,
                                                 RESPONSE_EVENT_ERROR, COMPONENT_METADATA)}
MAV_EVENT_CURRENT_SEQUENCE_FLAGS_RESET = 1
COMP_METADATA_TYPE_GENERAL, COMP_METADATA_TYPE_EVENTS = 0, 4


class Decoded(NamedTuple):
    """A decoded frame: its definition, sender and fields by name."""

    d: MsgDef
    sysid: int
    compid: int
    fields: dict

    def get_type(self) -> str:
        """The message name, as pymavlink's messages say it."""
        return self.d.name


def source(msg) -> Tuple[int, int]:
    """(sysid, compid) of a parsed message; of an UNKNOWN_<id> one from its frame's header.

    pymavlink returns MAVLink_unknown before it fills the header: its get_srcSystem() is 0.
    """
    if msg.get_type().startswith('UNKNOWN_'):
        buf = msg.get_msgbuf()
        if len(buf) >= HEADER_V2 and buf[0] == 0xFD:
            return buf[5], buf[6]
        if len(buf) >= 6 and buf[0] == 0xFE:        # MAVLink 1
            return buf[3], buf[4]
    return msg.get_srcSystem(), msg.get_srcComponent()


def decode(msg) -> Optional[Decoded]:
    """An UNKNOWN_<id> message of pymavlink (MAVLink 2 frame bytes) -> Decoded.

    None if the id is not one of ours, the frame is not MAVLink 2, or its CRC (with the
    message's CRC_EXTRA) does not match: pymavlink could not check it without the definition.
    """
    buf = bytes(msg.get_msgbuf())
    if len(buf) < HEADER_V2 + 2 or buf[0] != 0xFD:
        return None
    plen = buf[1]
    msgid = buf[7] | (buf[8] << 8) | (buf[9] << 16)
    d = BY_ID.get(msgid)
    if d is None or len(buf) < HEADER_V2 + plen + 2:
        return None
    crc = x25crc(buf[1:HEADER_V2 + plen])
    crc.accumulate([d.crc_extra])
    if struct.unpack_from('<H', buf, HEADER_V2 + plen)[0] != crc.crc:
        return None
    st = d.struct
    payload = buf[HEADER_V2:HEADER_V2 + plen].ljust(st.size, b'\0')[:st.size]
    values = st.unpack(payload)
    fields = {}
    for (name, ctype, _), v in zip(d.wire, values):
        if ctype == 'char':
            v = v.split(b'\0', 1)[0].decode('utf-8', 'replace')
        fields[name] = v
    return Decoded(d, buf[5], buf[6], fields)


class ExtMessage:
    """A message of ours to send: packs like pymavlink's messages (mav_ext.pack(mav))."""

    def __init__(self, d: MsgDef, **fields):
        """d: the definition; fields: every field by name (arrays as bytes or sequences)."""
        self.d = d
        self.fields = fields

    def get_type(self) -> str:
        """The message name."""
        return self.d.name

    def pack(self, mav, force_mavlink1: bool = False) -> bytes:
        """A MAVLink 2 frame with mav's ids and current sequence number (mav.pack advances)."""
        values = []
        for name, _, n in self.d.wire:
            v = self.fields[name]
            if n:
                v = v.encode() if isinstance(v, str) else bytes(v)
            values.append(v)
        payload = self.d.struct.pack(*values).rstrip(b'\0') or b'\0'
        head = struct.pack('<BBBBBBBHB', 0xFD, len(payload), 0, 0, mav.seq, mav.srcSystem,
                           mav.srcComponent, self.d.msgid & 0xFFFF, self.d.msgid >> 16)
        crc = x25crc(head[1:] + payload)
        crc.accumulate([self.d.crc_extra])
        return head + payload + struct.pack('<H', crc.crc)
