"""Fill any ROS message with deterministic pseudo-random values (for round-trip tests)."""

import importlib
from pathlib import Path
import random
import zlib

MSG_DIR = Path(__file__).resolve().parent.parent.parent / 'aerosim_msgs' / 'msg'
_INT_RANGES = {'uint8': (0, 255), 'int8': (-128, 127), 'uint16': (0, 65535),
               'int16': (-32768, 32767), 'uint32': (0, 2**32 - 1), 'int32': (-2**31, 2**31 - 1),
               'uint64': (0, 2**64 - 1), 'int64': (-2**63, 2**63 - 1), 'octet': (0, 255),
               'char': (0, 255), 'byte': (0, 255)}


def aerosim_types():
    """Every message class of aerosim_msgs, by name."""
    mod = importlib.import_module('aerosim_msgs.msg')
    return {p.stem: getattr(mod, p.stem) for p in sorted(MSG_DIR.glob('*.msg'))}


def _value(t, rng):
    if t in ('double', 'float'):
        return rng.uniform(-1e6, 1e6) if t == 'double' else float(rng.randint(-1000, 1000)) / 8
    if t == 'boolean':
        return rng.random() < 0.5
    if t in _INT_RANGES:
        lo, hi = _INT_RANGES[t]
        return rng.randint(lo, hi)
    if t == 'string' or t.startswith('string<'):
        return ''.join(rng.choice('abcXYZ019 _-{}[],:"') for _ in range(rng.randint(0, 40)))
    pkg, name = t.split('/')
    cls = getattr(importlib.import_module(f'{pkg}.msg'), name)
    return fill(cls(), rng)


def fill(msg, rng):
    """Set every field of msg (recursively) from rng; returns msg."""
    for field, t in msg.get_fields_and_field_types().items():
        if t.startswith('sequence<'):
            inner = t[len('sequence<'):-1].split(',')[0]
            val = [_value(inner, rng) for _ in range(rng.randint(0, 6))]
        elif t.endswith(']') and '[' in t:
            inner, n = t[:-1].split('[')
            val = [_value(inner, rng) for _ in range(int(n))]
        else:
            val = _value(t, rng)
        setattr(msg, field, val)
    return msg


def sample(name, cls, k=0):
    """The k-th deterministic sample of message type name."""
    rng = random.Random(zlib.crc32(name.encode()) + k)
    return fill(cls(), rng)
