"""Malformed inputs for the bridges' ports and the config files.

The fuzz smoke test (test_fuzz.py) and the long run (scripts/fuzz_ports.py) share them.

Every generator yields (bytes, family) where the input is malformed *by construction*: a
correct bridge rejects each one, exactly once. Families: random bytes, truncated / extended /
single-bit- or single-byte-mutated valid frames (a CRC-16 catches every error burst of 16 bits
or less, and the libraries' own parsers, pymavlink and imcpy, are asked to confirm each mutant
is refused), huge length fields, valid frames carrying NaN/inf/out-of-range values or
addressed to another system, and for the JSON protocol, wrong types, wrong arity, non-finite
numbers, deep nesting, huge numbers and oversized datagrams.
"""

from collections import Counter
import json
import math
import random
import time

import imcpy

from mavlink_bridge.core.mav import mavlink, new_mav

BAD_JSON_VALUES = ('"x"', 'null', '[1]', '{"a": 1}', 'NaN', 'Infinity', '-Infinity', '"1e9"',
                   '9' * 400)


def random_bytes(rng: random.Random) -> bytes:
    """Random bytes: mostly short, sometimes up to 2000, rarely 60 kB."""
    r = rng.random()
    n = rng.randint(0, 64) if r < 0.7 else rng.randint(65, 2000) if r < 0.98 else \
        rng.randint(2001, 60000)
    return rng.randbytes(n)


def bit_flip(frame: bytes, rng: random.Random, start: int = 0) -> bytes:
    """Return frame with one bit flipped at or after start."""
    b = bytearray(frame)
    i = rng.randrange(start, len(b))
    b[i] ^= 1 << rng.randrange(8)
    return bytes(b)


def byte_set(frame: bytes, rng: random.Random, start: int = 0) -> bytes:
    """Return frame with one byte replaced by another value, at or after start."""
    b = bytearray(frame)
    i = rng.randrange(start, len(b))
    b[i] = (b[i] + rng.randint(1, 255)) % 256
    return bytes(b)


def truncated(frame: bytes, rng: random.Random) -> bytes:
    """A strict prefix of frame."""
    return frame[:rng.randrange(0, len(frame))]


class FrameInputs:
    """The draw both binary protocols share: random bytes, a mutant or a refused message.

    A quarter are random bytes; then a mutant of a valid frame that the protocol's own library
    refuses; above the last mutant bound, a well-framed message a subclass builds to be refused
    on its content or addressing.

    Subclasses set rng, valid (frames), MUTANTS ((upper bound of the draw, family), ...),
    BYTE_START (first byte byte_set may change) and define _refused, _huge_length, _semantic.
    """

    MUTANTS = ()
    BYTE_START = 0

    def one(self):
        """(datagram, family)."""
        rng = self.rng
        r = rng.random()
        if r < 0.25:
            return random_bytes(rng), 'random'
        frame = rng.choice(self.valid)
        fam = next((f for bound, f in self.MUTANTS if r < bound), None)
        if fam is None:
            return self._semantic(r)
        if fam == 'truncated':
            data = truncated(frame, rng)
        elif fam == 'extended':
            data = frame + rng.randbytes(rng.randint(1, 64))
        elif fam == 'bit_flip':
            data = bit_flip(frame, rng)
        elif fam == 'byte_set':
            data = byte_set(frame, rng, self.BYTE_START)
        else:
            data = self._huge_length(frame)
        if not self._refused(data):
            return self.one()                   # the mutant is a valid frame: not garbage
        return data, fam


# --- MAVLink -------------------------------------------------------------------------------------
class MavlinkInputs(FrameInputs):
    """Malformed MAVLink 2 datagrams for a bridge of system bridge_sysid:1."""

    MUTANTS = ((0.4, 'truncated'), (0.55, 'bit_flip'), (0.7, 'byte_set'), (0.75, 'huge_length'))
    BYTE_START = 1

    def __init__(self, bridge_sysid: int = 51, seed: int = 1):
        """Valid frames of an FC (1:1) are the mutation seeds."""
        self.rng = random.Random(seed)
        self.sysid = bridge_sysid
        mav = new_mav(1, 1)
        self.valid = [m.pack(mav) for m in (
            mav.heartbeat_encode(mavlink.MAV_TYPE_QUADROTOR, mavlink.MAV_AUTOPILOT_PX4, 0, 0, 3),
            mav.hil_actuator_controls_encode(4000, [0.5] * 16, 129, 1),
            mav.mission_request_int_encode(bridge_sysid, 1, 0, 0),
            mav.mission_ack_encode(bridge_sysid, 1, 0, 0),
            mav.mission_request_list_encode(bridge_sysid, 1, 0))]
        self.mav = mav

    @staticmethod
    def _refused(data: bytes) -> bool:
        return not [m for m in (new_mav(0, 0).parse_buffer(data) or [])
                    if m.get_type() != 'BAD_DATA']

    @staticmethod
    def _huge_length(frame: bytes) -> bytes:
        b = bytearray(frame)
        b[1] = 255                              # payload length: more than the datagram holds
        return bytes(b)

    def _semantic(self, r):
        rng = self.rng
        if r < 0.9:
            v = rng.choice([math.nan, math.inf, -math.inf, 1.5, -1.5, 1e30, -1e30])
            controls = [0.5] * 16
            controls[rng.randrange(4)] = v
            m = self.mav.hil_actuator_controls_encode(rng.randint(0, 2**40), controls, 129, 1)
            return m.pack(self.mav), 'bad_value'
        else:
            other = rng.choice([s for s in (1, 2, 99, 255) if s != self.sysid])
            m = rng.choice([self.mav.mission_request_int_encode(other, 1, 0, 0),
                            self.mav.mission_ack_encode(other, 1, 0, 0),
                            self.mav.mission_request_list_encode(self.sysid, 77)])
            return m.pack(self.mav), 'not_for_us'


# --- IMC -----------------------------------------------------------------------------------------
class ImcInputs(FrameInputs):
    """Malformed IMC datagrams for a bridge of system bridge_sysid."""

    MUTANTS = ((0.4, 'truncated'), (0.5, 'extended'), (0.62, 'bit_flip'), (0.72, 'byte_set'),
               (0.76, 'huge_length'))
    BYTE_START = 2

    def __init__(self, bridge_sysid: int = 0x3F01, seed: int = 2):
        """Valid messages to the bridge are the mutation seeds."""
        self.rng = random.Random(seed)
        self.sysid = bridge_sysid
        msgs = [imcpy.Heartbeat(), imcpy.DesiredSpeed(), imcpy.DesiredHeading(),
                imcpy.SetThrusterActuation(), imcpy.SetServoPosition(), imcpy.EntityList()]
        msgs[1].value, msgs[1].speed_units = 1.0, imcpy.SpeedUnits.METERS_PS
        self.valid = [self._frame(m) for m in msgs]

    def _frame(self, m, dst=None) -> bytes:
        m.src, m.src_ent, m.dst, m.dst_ent = 0x0022, 3, self.sysid if dst is None else dst, 0xFF
        m.timestamp = 1.0
        return m.serialize()

    @staticmethod
    def _refused(data: bytes) -> bool:
        try:
            msg = imcpy.Packet.deserialize(data)
        except RuntimeError:
            return True
        if msg is None:
            return True
        return len(data) != len(msg.serialize())   # extra or missing bytes around it

    @staticmethod
    def _huge_length(frame: bytes) -> bytes:
        b = bytearray(frame)
        b[4:6] = (0xFFFF).to_bytes(2, 'little')        # payload size: 65535
        return bytes(b)

    def _semantic(self, r):
        rng = self.rng
        if r < 0.92:
            v = rng.choice([math.nan, math.inf, -math.inf, 1e30, -1e30])
            m = rng.choice([imcpy.DesiredSpeed, imcpy.DesiredHeading,
                            imcpy.SetThrusterActuation, imcpy.SetServoPosition])()
            m.value = v
            return self._frame(m), 'bad_value'
        else:
            m = rng.choice([imcpy.DesiredSpeed, imcpy.EstimatedState, imcpy.SimulatedState])()
            if isinstance(m, imcpy.DesiredSpeed):
                return self._frame(m, dst=0x0123), 'not_for_us'
            return self._frame(m), 'unhandled'


# --- USV UI JSON ---------------------------------------------------------------------------------
class UsvInputs:
    """Malformed datagrams of the USV UI protocol (seed 004) for a session with boats ids."""

    def __init__(self, boat_ids=(1, 2), seed: int = 3, max_bytes: int = 65000):
        """Valid commands 22 of each mode and a 26 are the mutation seeds."""
        self.rng = random.Random(seed)
        self.max_bytes = max_bytes
        b = boat_ids[0]
        self.valid = [
            [22, b, 0, 0, 0, 0, 3, 2.0, 90, 0, 0],
            [22, b, 0, 0, 0, 0, 1, 0, 0, 1, 2, 134.5, 10.5, 1],
            [26, 2]]

    def _nested(self, depth: int) -> str:
        rng = self.rng
        if depth <= 0 or rng.random() < 0.3:
            return rng.choice(BAD_JSON_VALUES + ('1', '-7', '3.5', '1e400', '123456789' * 5))
        if rng.random() < 0.5:
            return '[' + ', '.join(self._nested(depth - 1) for _ in range(rng.randint(0, 4))) + ']'
        return '{' + ', '.join(f'"k{i}": {self._nested(depth - 1)}'
                               for i in range(rng.randint(0, 4))) + '}'

    def one(self):
        """(datagram, family)."""
        rng = self.rng
        r = rng.random()
        if r < 0.15:
            return random_bytes(rng), 'random'
        cmd = list(rng.choice(self.valid))
        text = json.dumps(cmd)
        if r < 0.3:
            return text[:rng.randrange(1, len(text))].encode(), 'truncated'
        if r < 0.5:
            i = rng.randrange(len(cmd))
            parts = [json.dumps(x) for x in cmd]
            parts[i] = rng.choice(BAD_JSON_VALUES)
            return ('[' + ', '.join(parts) + ']').encode(), 'bad_field'
        if r < 0.6:
            cut = cmd[:rng.randrange(len(cmd))] if rng.random() < 0.5 else \
                cmd + [0] * rng.randint(1, 5)
            return json.dumps(cut).encode(), 'arity'
        if r < 0.8:
            s = self._nested(rng.randint(1, 5))
            if s.startswith('{'):
                # an object is an init: make it one that names no boats
                s = '{"boats": "none", ' + s[1:] if len(s) > 2 else '{"boats": 0}'
            elif s.startswith('['):
                s = '[' + rng.choice(['0', '99', '-1', '"22"', '22.5']) + \
                    (', ' + s[1:] if len(s) > 2 else ']')
            return s.encode(), 'structure'
        if r < 0.85:
            d = rng.randint(1000, 30000)          # within one UDP datagram
            return ('[' * d + ']' * d).encode(), 'deep_nesting'
        if r < 0.9:
            return (b'[22, ' + b'1, ' * (self.max_bytes // 3) + b'1]'), 'oversized'
        return (text.encode() + b'\x00' + rng.randbytes(rng.randint(1, 8))), 'trailing'


def mutated_text(text: str, rng: random.Random) -> str:
    """A config file's text with a few edits (deletions, duplications, swaps, bad values)."""
    s = text
    for _ in range(rng.randint(1, 4)):
        r = rng.random()
        i = rng.randrange(len(s) + 1)
        if r < 0.25:
            s = s[:i] + s[i + rng.randint(1, 40):]
        elif r < 0.45:
            j = rng.randrange(len(s) + 1)
            s = s[:i] + s[min(i, j):max(i, j)][:200] + s[i:]
        elif r < 0.7:
            s = s[:i] + rng.choice(['NaN', '.nan', '.inf', '-1e999', 'null', '[', '{', ']', '}',
                                    ':', ',', '"', "'", '- ', '\n', '\t', '*a', '&a', '!!python/',
                                    '\x00', '\ud800', '1e400', '9' * 400]) + s[i:]
        else:
            s = s[:i] + ''.join(chr(rng.randrange(32, 127)) for _ in range(rng.randint(1, 8))) \
                + s[i:]
    return s


# --- sending -------------------------------------------------------------------------------------
def udp_stats(port: int):
    """(receive queue [bytes], kernel drops) of the UDP socket on 127.0.0.1:port.

    Read from /proc/net/udp; None if there is no such socket.
    """
    want = f'0100007F:{port:04X}'
    with open('/proc/net/udp') as f:
        for line in f.readlines()[1:]:
            col = line.split()
            if col[1] == want:
                return int(col[4].split(':')[1], 16), int(col[-1])
    return None


def blast(sock, addr, inputs, n: int, max_queue: int = 128 * 1024):
    """Send n inputs (inputs.one()) from sock to addr (127.0.0.1).

    Paced on the receiver's queue so the kernel drops (almost) nothing. Returns (Counter of
    families, kernel drops during the run, wall seconds).
    """
    port = addr[1]
    _q, drops0 = udp_stats(port)
    fams = Counter()
    t0 = time.monotonic()
    for k in range(n):
        data, fam = inputs.one()
        fams[fam] += 1
        sock.sendto(data, addr)
        if k % 20 == 19:
            while udp_stats(port)[0] > max_queue:
                time.sleep(0.001)
    dt = time.monotonic() - t0
    return fams, udp_stats(port)[1] - drops0, dt


def wait_drained(port: int, timeout_s: float = 60.0) -> bool:
    """Wait until the receiver emptied its queue."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if udp_stats(port)[0] == 0:
            return True
        time.sleep(0.02)
    return False
