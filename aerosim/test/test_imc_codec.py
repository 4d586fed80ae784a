"""IMC codec (imc_bridge.core.codec) against the spec's tables, through imcpy: no ROS."""

import math
import struct

import imcpy
import pytest

from imc_bridge.core.codec import Address, ImcError, decode, simulated_state

ADDR = Address(src=0x2001, src_ent=42)


def crc16_ibm(data: bytes) -> int:
    """CRC-16/IBM (ARC), IMC's footer: only to forge test frames with a valid CRC."""
    crc = 0
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ 0xA001 if crc & 1 else crc >> 1
    return crc


def sample_state():
    return simulated_state(ADDR, 12.5, (math.radians(41.18), math.radians(-8.70), 52.0),
                           (10.0, -20.0, 1.5), (0.1, -0.2, math.radians(370.0)),
                           (1.5, 0.2, -0.1), (0.01, -0.02, 0.3), (0.4, -0.3, 0.0))


def test_simulated_state_is_102_bytes_with_the_spec_layout():
    data = sample_state().serialize()
    assert len(data) == 102                              # spec: message size 102, payload 80
    sync, mgid, size, ts, src, src_ent, dst, dst_ent = struct.unpack_from('<HHHdHBHB', data)
    assert (sync, mgid, size) == (0xFE54, 50, 80)
    assert (ts, src, src_ent, dst, dst_ent) == (12.5, 0x2001, 42, 0xFFFF, 0xFF)
    # payload per the table: lat, lon fp64 [rad]; height, x, y, z, phi, theta, psi, u, v, w,
    # p, q, r, svx, svy, svz fp32
    f = struct.unpack_from('<dd16f', data, 20)
    assert f[0] == math.radians(41.18) and f[1] == math.radians(-8.70)
    assert f[2:6] == pytest.approx((52.0, 10.0, -20.0, 1.5))
    assert f[8] == pytest.approx(math.radians(10.0), abs=1e-6)      # psi wrapped to [-pi, pi)
    assert f[9:18] == pytest.approx((1.5, 0.2, -0.1, 0.01, -0.02, 0.3, 0.4, -0.3, 0.0),
                                    abs=1e-6)
    assert struct.unpack_from('<H', data, 100)[0] == crc16_ibm(data[:100])


def test_decode_round_trips_what_imcpy_serialized():
    m = decode(sample_state().serialize())
    assert m.msg_name == 'SimulatedState' and m.msg_id == 50
    assert (m.src, m.src_ent, m.timestamp) == (0x2001, 42, 12.5)
    assert (m.x, m.y) == pytest.approx((10.0, -20.0))


def test_theta_outside_the_spec_range_is_refused():
    with pytest.raises(ValueError, match='theta'):
        simulated_state(ADDR, 0.0, (0, 0, 0), (0, 0, 0), (0.0, 2.0, 0.0), (0, 0, 0), (0, 0, 0))


def forged(mgid: int, payload: bytes, endian='<') -> bytes:
    head = struct.pack(endian + 'HHHdHBHB', 0xFE54, mgid, len(payload), 1.0, 1, 0, 0xFFFF,
                       0xFF)
    body = head + payload
    return body + struct.pack(endian + 'H', crc16_ibm(body))


def test_big_endian_messages_are_valid_imc():
    data = forged(150, b'', endian='>')                 # Heartbeat, no payload, big endian
    assert data[:2] == b'\xfe\x54'
    assert decode(data).msg_name == 'Heartbeat'


@pytest.mark.parametrize('mutate,kind', [
    (lambda b: b'', 'truncated'),
    (lambda b: b[:50], 'truncated'),
    (lambda b: b'\x00\x00' + b[2:], 'sync'),
    (lambda b: b[:-1] + bytes([b[-1] ^ 0xFF]), 'crc'),
    (lambda b: b + b'\x00\x01', 'size'),                # a second message or trailing bytes
    (lambda b: b[:4] + struct.pack('<H', 200) + b[6:], 'truncated'),   # wrong size field
    (lambda b: b[1::-1] + b[2:], 'truncated'),         # swapped sync: sizes read big endian
    (lambda b: forged(4000, b''), 'unknown'),
    (lambda b: bytes(range(256)) * 3, 'sync'),
])
def test_malformed_datagrams_raise_a_counted_kind(mutate, kind):
    with pytest.raises(ImcError) as err:
        decode(mutate(sample_state().serialize()))
    assert err.value.kind == kind, str(err.value)


def test_every_spec_enum_value_of_messages_51_to_53():
    assert int(imcpy.LeakSimulation.OperationEnum.OFF) == 0
    assert int(imcpy.LeakSimulation.OperationEnum.ON) == 1
    assert [int(imcpy.UASimulation.TypeEnum.DATA), int(imcpy.UASimulation.TypeEnum.PING),
            int(imcpy.UASimulation.TypeEnum.PING_REPLY)] == [0, 1, 2]
    e = imcpy.DynamicsSimParam.ActionOnTheVehicleSimulationParametersEnum
    assert [int(e.REQUEST), int(e.SET), int(e.REPORT)] == [0, 1, 2]
    # sizes from the spec: 51 is 25+ bytes, 52 is 27+, 53 is 31
    leak = imcpy.LeakSimulation()
    leak.op, leak.entities = imcpy.LeakSimulation.OperationEnum.ON, ''
    assert len(leak.serialize()) == 25
    ua = imcpy.UASimulation()
    assert len(ua.serialize()) == 27
    assert len(imcpy.DynamicsSimParam().serialize()) == 31
