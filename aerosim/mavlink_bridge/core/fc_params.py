"""An FC parameter file set over MAVLink before the mission (pure, no sockets).

The file is QGroundControl's parameter file format, which PX4 users load with QGC ("Load
from file") and which PX4's own docs name: one parameter per line, tab- or space-separated
`<system id> <component id> <NAME> <value> <MAV_PARAM_TYPE>`, '#' starts a comment. The
system and component columns are not used: the parameters go to the served FC. Types: 6
INT32, 9 REAL32 (the two PX4 has).

The upload: PARAM_SET per parameter, confirmed by the FC's PARAM_VALUE of the same name and
value (MAVLink parameter protocol; PX4 answers every write, mavlink_parameters.cpp). PX4
encodes values bytewise: an INT32 travels as its 4 bytes in the float field
(MAV_PROTOCOL_CAPABILITY_PARAM_ENCODE_BYTEWISE). At most WINDOW writes are unconfirmed at a
time; one without an answer within `timeout_s` is sent again, `retries` times; PX4 answers
nothing for a name it does not know or a type that is not the parameter's (it logs "unknown
param" / "param types mismatch" on its console), so those end as failures naming the
parameter.
"""

from dataclasses import dataclass
import math
import struct
from typing import Dict, List, Optional, Sequence, Tuple

from sim_core.errors import ConfigError
from sim_core.paths import read_text, resolve_config_path

INT32, REAL32 = 6, 9
WINDOW = 8
IDLE, SENDING, DONE, FAILED = 'idle', 'sending', 'done', 'failed'


@dataclass(frozen=True)
class Param:
    """One parameter of the file: name, value, MAV_PARAM_TYPE."""

    name: str
    value: float
    ptype: int

    def wire(self) -> float:
        """The value as PARAM_SET carries it (bytewise for INT32)."""
        if self.ptype == INT32:
            return struct.unpack('<f', struct.pack('<i', int(self.value)))[0]
        return float(self.value)

    def matches(self, value: float, ptype: int) -> bool:
        """A PARAM_VALUE's value and type are ours."""
        if ptype != self.ptype:
            return False
        if self.ptype == INT32:
            return struct.unpack('<i', struct.pack('<f', value))[0] == int(self.value)
        return struct.pack('<f', value) == struct.pack('<f', self.value)


def parse_params(text: str, where: str) -> Tuple[Param, ...]:
    """A parameter file's parameters; ConfigError naming the line of the first problem."""
    out: Dict[str, Param] = {}
    for n, raw in enumerate(text.splitlines(), 1):
        line = raw.split('#', 1)[0].strip()
        if not line:
            continue
        cols = line.split()
        if len(cols) != 5:
            raise ConfigError(f'{where}:{n}: expected <sysid> <compid> <NAME> <value> <type>, '
                              f'got {raw.strip()!r}')
        name, value, ptype = cols[2], cols[3], cols[4]
        if not (0 < len(name) <= 16 and name.isascii() and name.replace('_', '').isalnum()):
            raise ConfigError(f'{where}:{n}: {name!r} is not a parameter name (1-16 letters, '
                              'digits, _)')
        if ptype not in (str(INT32), str(REAL32)):
            raise ConfigError(f'{where}:{n}: {name}: type must be {INT32} (INT32) or '
                              f'{REAL32} (REAL32), got {ptype!r}')
        try:
            v = int(value) if ptype == str(INT32) else float(value)
        except ValueError:
            raise ConfigError(f'{where}:{n}: {name}: {value!r} is not a number of type '
                              f'{ptype}') from None
        if not math.isfinite(v) or (ptype == str(INT32) and not -2**31 <= v < 2**31):
            raise ConfigError(f'{where}:{n}: {name}: {value} out of range')
        if name in out:
            raise ConfigError(f'{where}:{n}: {name} given twice')
        out[name] = Param(name, v, int(ptype))
    return tuple(out.values())


def find_params(name: str) -> str:
    """A parameter file: a path, or a name in config/px4 ('.params' optional); ConfigError."""
    try:
        return str(resolve_config_path(name, None, 'px4'))
    except ConfigError:
        if name.endswith('.params'):
            raise
        return str(resolve_config_path(name + '.params', None, 'px4'))


def load_params(name: str) -> Tuple[str, Tuple[Param, ...]]:
    """(path, parameters) of a parameter file (ConfigError naming the file and line)."""
    path = find_params(name)
    return path, parse_params(read_text(path, 'FC parameter file'), path)


class ParamUpload:
    """Sets every parameter of a file on the FC; call poll() regularly."""

    def __init__(self, params: Sequence[Param], target: Tuple[int, int], source: str,
                 timeout_s: float = 1.0, retries: int = 5):
        """params: to set; target: the FC (sysid, compid); source: the file's name for logs."""
        self.params = list(params)
        self.target = target
        self.source = source
        self.timeout_s = timeout_s
        self.retries = retries
        self.state = IDLE
        self.result = ''
        self.events: List[str] = []
        self.sent = 0
        self._todo: List[Param] = []
        self._open: Dict[str, Tuple[float, int]] = {}     # name -> (deadline, tries)
        self._done: Dict[str, Param] = {}
        self._failed: List[str] = []

    def start(self, mav, now: float) -> list:
        """Begin: the first WINDOW writes."""
        self.state = SENDING
        self._todo = list(self.params)
        self.events.append(f'FC parameters: setting {len(self.params)} from {self.source} on '
                           f'{self.target[0]}:{self.target[1]}')
        return self._fill(mav, now)

    def _write(self, mav, p: Param):
        self.sent += 1
        return mav.param_set_encode(self.target[0], self.target[1], p.name.encode(), p.wire(),
                                    p.ptype)

    def _fill(self, mav, now: float) -> list:
        out = []
        while self._todo and len(self._open) < WINDOW:
            p = self._todo.pop(0)
            self._open[p.name] = (now + self.timeout_s, 0)
            out.append(self._write(mav, p))
        return out + self._finish()

    def on_value(self, mav, m, now: float) -> list:
        """PARAM_VALUE from the FC: confirms a write of ours with the same value."""
        if self.state != SENDING or (m.get_srcSystem(), m.get_srcComponent()) != \
                tuple(self.target):
            return []
        name = m.param_id.rstrip('\x00') if isinstance(m.param_id, str) else \
            bytes(m.param_id).split(b'\0', 1)[0].decode('ascii', 'replace')
        if name not in self._open:
            return []
        p = next(x for x in self.params if x.name == name)
        if not p.matches(m.param_value, m.param_type):
            return []               # not (yet) our value: the write's answer is still due
        del self._open[name]
        self._done[name] = p
        return self._fill(mav, now)

    def poll(self, mav, now: float) -> list:
        """Writes again whose answer is late; give up on one after the retries."""
        if self.state != SENDING:
            return []
        out = []
        for name, (deadline, tries) in list(self._open.items()):
            if now < deadline:
                continue
            if tries >= self.retries:
                del self._open[name]
                self._failed.append(name)
                continue
            self._open[name] = (now + self.timeout_s, tries + 1)
            out.append(self._write(mav, next(x for x in self.params if x.name == name)))
        return out + self._fill(mav, now)

    def _finish(self) -> list:
        if self._todo or self._open or self.state != SENDING:
            return []
        if self._failed:
            self.state = FAILED
            self.result = (f'{len(self._failed)} of {len(self.params)} not confirmed by the FC '
                           f'after {self.retries} retries (unknown to it, or of another type): '
                           f'{", ".join(self._failed)}')
        else:
            self.state = DONE
            self.result = f'{len(self.params)} set and confirmed'
        self.events.append(f'FC parameters from {self.source}: {self.result}')
        return []

    def failed_names(self) -> Optional[List[str]]:
        """The parameters the FC did not confirm (None while under way)."""
        return list(self._failed) if self.state in (DONE, FAILED) else None
