"""The MAVLink events interface, receiving side, and the events' texts (pure, no sockets).

https://mavlink.io/en/services/events.html. A component numbers its events (EVENT.sequence,
uint16, wrapping), repeats its latest number in CURRENT_EVENT_SEQUENCE, and keeps the last
few (PX4: 20) to be asked again with REQUEST_EVENT; one no longer held is answered with
RESPONSE_EVENT_ERROR (the oldest it holds). Receiver, as libevents' ReceiveProtocol: take the
next number, drop duplicates, ask for a missing one (again after 100 ms). At first contact the
last HISTORY events are asked for too, so what the FC said before we listened (PX4's boot-time
arming-check report) is not lost.

An EVENT carries an id and up to 40 bytes of arguments, no text: the texts are the
component's metadata (libevents' JSON, which PX4 builds from its sources and serves over
MAVLink FTP, see fc_words). Formatter renders an event as libevents' parser does: the id is
(component << 24) | sub-id; arguments are packed little-endian in the event's order, an enum
argument by its enum's base type; the message's {N} is argument N (1-based), {N:.D} with D
decimals, a unit after it (m, m_v, m/s, m^2, C) is appended; enums show their entry's
description, bitfields the descriptions of the set bits joined by the separator;
<param>X</param> and <a>X</a> show X, <profile name="P">X</profile> shows X for the
profile (ours: dev), other tags are dropped with their content, a backslash escapes the next
character.
"""

import json
import lzma
import re
import struct
from typing import Dict, List, NamedTuple, Optional, Tuple

LEVELS = ('emergency', 'alert', 'critical', 'error', 'warning', 'notice', 'info', 'debug',
          'protocol', 'disabled')
BASE = {'uint8_t': 'B', 'int8_t': 'b', 'uint16_t': 'H', 'int16_t': 'h', 'uint32_t': 'I',
        'int32_t': 'i', 'uint64_t': 'Q', 'int64_t': 'q', 'float': 'f'}
HISTORY = 20            # events asked for at first contact (PX4's EventBuffer holds 20)
RETRY_S = 0.1           # a missing event is asked for again after this [s] (libevents: 100 ms)
ARG_RE = re.compile(r'^(\d+)(?::(?:\.(\d+))?)?(m|m_v|m/s|m\^2|C)?$')
TAG_RE = re.compile(r'^<([a-z]+)(?: ([a-z]+)="([^"]*)")?>', re.DOTALL)


class EventText(NamedTuple):
    """A rendered event."""

    event_id: int
    name: str               # '' if the metadata does not know the id
    group: str
    kind: str               # the event's type ('summary' for report summaries), or ''
    level: int              # external log level 0 (emergency) .. 9 (disabled)
    text: str
    args: tuple = ()        # the arguments' values (enums as their numbers)


def _older(expected: int, incoming: int) -> int:
    """-1 incoming is older than expected (a duplicate), 0 equal, 1 newer (events missed)."""
    if expected == incoming:
        return 0
    return -1 if (incoming - expected) & 0xFFFF > 0x7FFF else 1


def load_json(raw: bytes) -> dict:
    """A metadata file's JSON: plain, or xz-compressed; ValueError if it is neither."""
    if raw[:6] == b'\xfd7zXZ\x00':
        try:
            raw = lzma.decompress(raw)
        except lzma.LZMAError as exc:
            raise ValueError(f'not a valid xz file: {exc}') from None
    try:
        return json.loads(raw.decode('utf-8'))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f'not JSON: {exc}') from None


class Formatter:
    """The texts of a component's events, from its libevents metadata (see the docstring)."""

    def __init__(self, meta: dict, profile: str = 'dev'):
        """meta: the metadata JSON (version >= 1, components); ValueError if it is not one."""
        if not isinstance(meta, dict) or not isinstance(meta.get('components'), dict) or \
                not isinstance(meta.get('version', 0), int) or meta.get('version', 0) < 1:
            raise ValueError('not a libevents metadata file (version >= 1 with components)')
        self.profile = profile
        self.events: Dict[int, Tuple[str, str, dict]] = {}    # id -> (namespace, group, event)
        self.enums: Dict[str, dict] = {}
        for cid, comp in meta['components'].items():
            ns = comp.get('namespace', '')
            for name, enum in (comp.get('enums') or {}).items():
                self.enums[f'{ns}::{name}'] = enum
            for group, g in (comp.get('event_groups') or {}).items():
                for sub, ev in (g.get('events') or {}).items():
                    self.events[(int(cid) << 24) | int(sub)] = (ns, group, ev)

    def render(self, event_id: int, log_levels: int, args: bytes) -> EventText:
        """The event's text ('event 0x... (no metadata)' if its id is unknown)."""
        level = log_levels & 0x0F
        hit = self.events.get(event_id)
        if hit is None:
            return EventText(event_id, '', '', '', level,
                             f"event 0x{event_id:08x} (not in the FC's metadata)")
        ns, group, ev = hit
        values: list = []
        try:
            values = self._values(ns, ev.get('arguments') or [], bytes(args))
            text = self._message(ev.get('message', ''), values)
        except (KeyError, struct.error, ValueError, TypeError) as exc:
            text = f'{ev.get("message", "")} (arguments not decoded: {exc})'
        return EventText(event_id, ev.get('name', ''), group, ev.get('type', ''), level, text,
                         tuple(v for v, _ in values))

    def _values(self, ns: str, spec, args: bytes) -> List[Tuple[object, Optional[dict]]]:
        out, off = [], 0
        for a in spec:
            t, enum = a['type'], None
            if t not in BASE:
                enum = self.enums[t if '::' in t else f'{ns}::{t}']
                t = enum['type']
            st = struct.Struct('<' + BASE[t])
            out.append((st.unpack_from(args.ljust(off + st.size, b'\0'), off)[0], enum))
            off += st.size
        return out

    @staticmethod
    def _shown(value, enum) -> object:
        if enum is None:
            return value
        entries = {int(k): v.get('description', v.get('name', k))
                   for k, v in (enum.get('entries') or {}).items()}
        if enum.get('is_bitfield'):
            parts = [entries.get(1 << i, f'(unknown: {value})')
                     for i in range(64) if int(value) >> i & 1]
            return enum.get('separator', '|').join(parts)
        return entries.get(int(value), f'(unknown: {value})')

    def _message(self, msg: str, values) -> str:
        out, i = [], 0
        while i < len(msg):
            c = msg[i]
            if c == '\\' and i + 1 < len(msg):
                out.append(msg[i + 1])
                i += 2
            elif c == '<':
                m = TAG_RE.match(msg[i:])
                end = msg.find(f'</{m.group(1)}>', i) if m else -1
                if not m or end < 0:
                    out.append(c)
                    i += 1
                    continue
                content = msg[i + m.end():end]
                tag, attr = m.group(1), m.group(3)
                if tag == 'profile':
                    keep = (self.profile != attr[1:]) if attr and attr.startswith('!') \
                        else self.profile == (attr or '')
                    out.append(self._message(content, values) if keep else '')
                elif tag in ('param', 'a'):
                    out.append(content)
                i = end + len(tag) + 3
            elif c == '{':
                end = msg.find('}', i)
                m = ARG_RE.match(msg[i + 1:end]) if end > i else None
                k = int(m.group(1)) - 1 if m else -1
                if not m or not 0 <= k < len(values):
                    out.append(c)
                    i += 1
                    continue
                v = self._shown(*values[k])
                s = f'{v:.{int(m.group(2))}f}' if m.group(2) and isinstance(v, (int, float)) \
                    else str(v)
                if m.group(3):
                    s += ' ' + ('m' if m.group(3) == 'm_v' else m.group(3))
                out.append(s)
                i = end + 1
            else:
                out.append(c)
                i += 1
        return ''.join(out).strip()


class Receiver:
    """Sequence bookkeeping of one sending component (libevents' ReceiveProtocol)."""

    def __init__(self, history: int = HISTORY):
        """history: events before the first one heard that are asked for."""
        self.history = history
        self.latest: Optional[int] = None         # the last sequence number taken
        self.current: Optional[int] = None        # the sender's latest, as it said
        self.lost = 0
        self.requests = 0
        self._retry_at: Optional[float] = None

    def _request(self, now: float) -> List[Tuple[int, int]]:
        assert self.latest is not None
        self.requests += 1
        self._retry_at = now + RETRY_S
        nxt = (self.latest + 1) & 0xFFFF
        return [(nxt, nxt)]

    def _first(self, seq: int) -> None:
        self.latest = (seq - 1 - self.history) & 0xFFFF

    def on_event(self, seq: int, now: float) -> Tuple[bool, List[Tuple[int, int]]]:
        """An EVENT numbered seq: (take it, REQUEST_EVENT ranges to send)."""
        if self.latest is None:
            self._first(seq)
        assert self.latest is not None
        cmp = _older((self.latest + 1) & 0xFFFF, seq)
        if cmp < 0:
            return False, []                  # a duplicate
        if cmp > 0:
            return False, self._request(now)  # some missing: ask for the next one first
        self.latest = seq
        self._retry_at = None
        if self.current is not None and _older(self.latest, self.current) > 0:
            return True, self._request(now)
        return True, []

    def on_current(self, seq: int, reset: bool, now: float) -> List[Tuple[int, int]]:
        """CURRENT_EVENT_SEQUENCE: the sender's latest (reset: it restarted its numbering)."""
        if reset or self.latest is None:
            self.latest = None
            self._first(seq + 1)
        self.current = seq
        assert self.latest is not None
        return self._request(now) if _older(self.latest, seq) > 0 else []

    def on_error(self, seq: int, oldest: int, now: float) -> List[Tuple[int, int]]:
        """RESPONSE_EVENT_ERROR: events before `oldest` are gone; go on from there."""
        if self.latest is None or seq != (self.latest + 1) & 0xFFFF:
            return []
        self.lost += (oldest - seq) & 0xFFFF
        self.latest = (oldest - 1) & 0xFFFF
        if self.current is not None and _older(self.latest, self.current) <= 0:
            self._retry_at = None
            return []
        return self._request(now)

    def poll(self, now: float) -> List[Tuple[int, int]]:
        """The request again when its answer is late."""
        if self._retry_at is None or now < self._retry_at:
            return []
        return self._request(now)
