"""IMC wire format through imcpy (LSTS's IMC library): datagram checks and message building.

imcpy serializes and parses the messages (SimulatedState is its 102 bytes); this module only
adds what a UDP endpoint needs around it: one message per datagram (DUNE's UDP transport),
the datagram's length checked against the header's size field (imcpy parses the first message
of a longer buffer silently), and every failure turned into an ``ImcError`` with a kind that
the bridge counts (sync, truncated, size, crc, unknown, invalid). No rclpy.

IMC header (20 bytes): sync 0xFE54 (its byte order tells the sender's endianness; both are
valid), message id, payload size, timestamp [s], src, src_ent, dst, dst_ent; then the payload
and a CRC-16 (IBM) footer.
"""

from dataclasses import dataclass
import math
import struct

import imcpy

from sim_core.frames import wrap_pi

HEADER_SIZE = 20
FOOTER_SIZE = 2
SYNC = 0xFE54
# Largest datagram accepted [bytes]: IMC's own limit for a message over UDP.
MAX_DATAGRAM = 65535
KINDS = ('sync', 'truncated', 'size', 'crc', 'unknown', 'invalid')


class ImcError(ValueError):
    """A datagram that is not one valid IMC message; kind is one of KINDS."""

    def __init__(self, kind: str, text: str):
        """kind: KINDS entry; text: what is wrong, for the log."""
        super().__init__(text)
        self.kind = kind


@dataclass(frozen=True)
class Address:
    """IMC addressing of our side: system id and entity id."""

    src: int
    src_ent: int


def decode(data: bytes):
    """One IMC message from one datagram; raises ImcError saying why it is not one.

    Returns the imcpy message object (its msg_name, msg_id, header and fields).
    """
    n = len(data)
    if n < HEADER_SIZE + FOOTER_SIZE:
        raise ImcError('truncated', f'{n} bytes, shorter than an IMC header and footer (22)')
    if n > MAX_DATAGRAM:
        raise ImcError('size', f'{n} bytes, larger than {MAX_DATAGRAM}')
    (sync,) = struct.unpack_from('<H', data, 0)
    if sync == SYNC:
        endian = '<'
    elif sync == 0x54FE:
        endian = '>'
    else:
        raise ImcError('sync', f'sync number 0x{sync:04X}, not 0xFE54 in either byte order')
    mgid, size = struct.unpack_from(endian + 'HH', data, 2)
    if n != HEADER_SIZE + size + FOOTER_SIZE:
        raise ImcError('size' if n > HEADER_SIZE + size + FOOTER_SIZE else 'truncated',
                       f'message {mgid}: header says {size} payload bytes, the datagram '
                       f'holds {n - HEADER_SIZE - FOOTER_SIZE}')
    try:
        msg = imcpy.Packet.deserialize(data)
    except RuntimeError as exc:
        text = str(exc)
        kind = ('crc' if 'CRC' in text else 'unknown' if 'identification' in text
                or 'unknown' in text.lower() else 'invalid')
        raise ImcError(kind, f'message {mgid}: {text}') from None
    if msg is None:
        raise ImcError('unknown', f'message id {mgid} is not in this IMC version')
    return msg


def stamp(msg, addr: Address, t_s: float, dst: int = 0xFFFF, dst_ent: int = 0xFF):
    """Fill an imcpy message's header: our address, destination, timestamp [s]; returns it."""
    msg.src, msg.src_ent = addr.src, addr.src_ent
    msg.dst, msg.dst_ent = dst, dst_ent
    msg.timestamp = float(t_s)
    return msg


def simulated_state(addr: Address, t_s: float, origin_rad, ned, euler, uvw, pqr,
                    stream_ned=(0.0, 0.0, 0.0), dst: int = 0xFFFF, dst_ent: int = 0xFF):
    """SimulatedState (id 50) of a vehicle, per the spec's table.

    origin_rad: (lat [rad], lon [rad], height above WGS-84 [m]) of the local frame's origin;
    ned: (x north, y east, z down) offsets [m]; euler: (phi, theta, psi) [rad], NED/FRD;
    uvw: body FRD velocity [m/s]; pqr: body FRD rates [rad/s]; stream_ned: water current
    [m/s]. Angles are wrapped into the spec's ranges (phi, psi in [-pi, pi)); theta must lie in
    [-pi/2, pi/2] (a ValueError otherwise: the attitude source is broken).
    """
    phi, theta, psi = euler
    if not -math.pi / 2 <= theta <= math.pi / 2:
        raise ValueError(f'theta {theta!r} rad outside [-pi/2, pi/2]')
    m = imcpy.SimulatedState()
    m.lat, m.lon, m.height = float(origin_rad[0]), float(origin_rad[1]), float(origin_rad[2])
    m.x, m.y, m.z = (float(c) for c in ned)
    m.phi, m.theta, m.psi = wrap_pi(float(phi)), float(theta), wrap_pi(float(psi))
    m.u, m.v, m.w = (float(c) for c in uvw)
    m.p, m.q, m.r = (float(c) for c in pqr)
    m.svx, m.svy, m.svz = (float(c) for c in stream_ned)
    return stamp(m, addr, t_s, dst, dst_ent)


def estimated_state(addr: Address, t_s: float, origin_rad, kin, depth: float = 0.0,
                    alt: float = -1.0, dst: int = 0xFFFF, dst_ent: int = 0xFF):
    """EstimatedState (id 350): origin (lat, lon [rad], height [m]) plus kin (ImcKinematics).

    depth [m] below the surface (0 at the surface); alt [m] above the bottom, -1 = unknown
    (IMC's convention).
    """
    m = imcpy.EstimatedState()
    m.lat, m.lon, m.height = float(origin_rad[0]), float(origin_rad[1]), float(origin_rad[2])
    m.x, m.y, m.z = kin.ned
    m.phi, m.theta, m.psi = wrap_pi(kin.euler[0]), kin.euler[1], wrap_pi(kin.euler[2])
    m.u, m.v, m.w = kin.uvw_ground
    m.vx, m.vy, m.vz = kin.v_ned
    m.p, m.q, m.r = kin.pqr
    m.depth, m.alt = float(depth), float(alt)
    return stamp(m, addr, t_s, dst, dst_ent)


def announce(addr: Address, t_s: float, sys_name: str, sys_type: int, position_rad,
             services):
    """Announce (id 151) to every system.

    Name, IMC SystemType, position (lat, lon [rad], height [m]) and the service URIs (joined
    with ';', DUNE's separator).
    """
    m = imcpy.Announce()
    m.sys_name, m.sys_type, m.owner = sys_name, imcpy.SystemType(sys_type), 0xFFFF
    m.lat, m.lon, m.height = (float(c) for c in position_rad)
    m.services = ';'.join(services)
    return stamp(m, addr, t_s)


def entity_list_report(addr: Address, t_s: float, entities, dst: int = 0xFFFF,
                       dst_ent: int = 0xFF):
    """EntityList (id 5) REPORT: entities as (label, id) pairs, 'label=id;label=id'."""
    m = imcpy.EntityList()
    m.op = imcpy.EntityList.OperationEnum.REPORT
    m.list = ';'.join(f'{label}={eid}' for label, eid in entities)
    return stamp(m, addr, t_s, dst, dst_ent)


def entity_state(addr: Address, t_s: float, entity: int, failure: bool, description: str,
                 dst: int = 0xFFFF, dst_ent: int = 0xFF):
    """EntityState (id 1) of one of our entities: NORMAL or FAILURE with a description.

    src_ent = entity (DUNE's monitors and Neptus label it from our EntityList).
    """
    m = imcpy.EntityState()
    m.state = imcpy.EntityState.StateEnum.FAILURE if failure else \
        imcpy.EntityState.StateEnum.NORMAL
    m.description = description
    stamp(m, addr, t_s, dst, dst_ent)
    m.src_ent = entity
    return m
