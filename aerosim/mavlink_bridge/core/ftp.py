"""MAVLink FTP, client side: read one file from a component (pure, no sockets).

https://mavlink.io/en/services/ftp.html. FILE_TRANSFER_PROTOCOL carries a 251-byte payload:
seq_number (uint16), session, opcode, size, req_opcode, burst_complete, padding (uint8 each),
offset (uint32), data[239]. A reply's seq_number is the request's + 1; it is an ACK (128) or
a NAK (129, data[0] the error). Reading a file: OpenFileRO (4, data = the path; the ACK's data
is the file size, uint32) -> ReadFile (5, offset, size) until the size is read (a NAK EOF past
the end) -> TerminateSession (1). A request without a reply in time is sent again with the
same sequence number (PX4's server answers a repeated request with its last reply,
MavlinkFTP::_process_request); after `retries` the read fails. PX4 has one session for all its
links: an open refused with "no sessions available" (another client reading) is tried again
after BUSY_WAIT_S, `retries` times.

PX4 serves its component metadata so (COMPONENT_METADATA's mftp:// URIs, e.g.
mftp://etc/extras/component_general.json.xz: the path etc/extras/..., relative to its root).
"""

import struct
from typing import List, Optional, Tuple

PAYLOAD = 251
DATA = 239
HEADER = struct.Struct('<HBBBBBBI')         # seq, session, opcode, size, req_op, burst, pad, off
TERMINATE, OPEN_RO, READ = 1, 4, 5
ACK, NAK = 128, 129
ERRORS = {0: 'none', 1: 'fail', 2: 'fail (errno)', 3: 'invalid data size', 4: 'invalid session',
          5: 'no sessions available', 6: 'end of file', 7: 'unknown command', 8: 'file exists',
          9: 'file protected', 10: 'file not found'}
EOF_ERROR, NO_SESSIONS = 6, 5
BUSY_WAIT_S = 1.0           # an open refused for want of a session is tried again after [s]
OPENING, READING, DONE, FAILED = 'opening', 'reading', 'done', 'failed'


def payload(seq: int, opcode: int, session: int = 0, offset: int = 0, data: bytes = b'',
            size: Optional[int] = None) -> bytes:
    """A request's 251-byte payload."""
    n = len(data) if size is None else size
    return (HEADER.pack(seq & 0xFFFF, session, opcode, n, 0, 0, 0, offset)
            + data).ljust(PAYLOAD, b'\0')


def parse(raw) -> Tuple[int, int, int, int, int, bytes]:
    """A payload -> (seq, session, opcode, size, req_opcode, data[:size])."""
    b = bytes(raw).ljust(PAYLOAD, b'\0')
    seq, session, opcode, size, req_op, _, _, _ = HEADER.unpack_from(b)
    return seq, session, opcode, size, req_op, b[HEADER.size:HEADER.size + min(size, DATA)]


def path_of_uri(uri: str) -> Optional[str]:
    """'mftp://[;comp=N]etc/x.json.xz' -> 'etc/x.json.xz'; None if not an mftp URI."""
    if not uri.startswith('mftp://'):
        return None
    rest = uri[len('mftp://'):]
    if rest.startswith('[;comp='):
        end = rest.find(']')
        rest = rest[end + 1:] if end >= 0 else ''
    return rest or None


class FtpRead:
    """Reads one file: start(), then feed every FILE_TRANSFER_PROTOCOL reply; poll() retries."""

    def __init__(self, target: Tuple[int, int], path: str, timeout_s: float = 0.5,
                 retries: int = 10, max_bytes: int = 4 << 20):
        """target: the server (sysid, compid); path: the file; max_bytes: refuse larger files."""
        self.target = target
        self.path = path
        self.timeout_s = timeout_s
        self.retries = retries
        self.max_bytes = max_bytes
        self.state = OPENING
        self.error = ''
        self.data = bytearray()
        self.size = 0
        self.requests = 0
        self.resent = 0
        self._seq = 0
        self._session = 0
        self._last: Optional[bytes] = None
        self._deadline = 0.0
        self._tries = 0

    def _send(self, mav, body: bytes, now: float):
        self._last = body
        self._deadline = now + self.timeout_s
        self._tries = 0
        self.requests += 1
        return [mav.file_transfer_protocol_encode(0, self.target[0], self.target[1], body)]

    def _request(self, mav, opcode: int, now: float, **kw):
        self._seq = (self._seq + 1) & 0xFFFF
        return self._send(mav, payload(self._seq, opcode, **kw), now)

    def start(self, mav, now: float) -> list:
        """OpenFileRO for the path."""
        path = self.path.encode()
        if len(path) >= DATA:
            return self._fail(f'path longer than {DATA - 1} bytes')
        return self._request(mav, OPEN_RO, now, data=path)

    def _fail(self, why: str) -> list:
        self.state, self.error = FAILED, why
        return []

    def on_message(self, mav, m, now: float) -> List:
        """A FILE_TRANSFER_PROTOCOL message: the reply to our request, or ignored."""
        if self.state not in (OPENING, READING) or self._last is None:
            return []
        if (m.get_srcSystem(), m.get_srcComponent()) != tuple(self.target):
            return []
        seq, session, opcode, size, req_op, data = parse(m.payload)
        if seq != (self._seq + 1) & 0xFFFF or opcode not in (ACK, NAK):
            return []                       # not the reply to our request in flight
        if opcode == NAK:
            err = data[0] if data else 1
            if self.state == READING and err == EOF_ERROR:
                return self._finish(mav, now, session)
            if self.state == OPENING and err == NO_SESSIONS and self._tries < self.retries:
                # PX4 has one session for all its links (a ground station reading its
                # metadata at the same time): open again later, a new request
                self._tries += 1
                self._seq = (self._seq + 1) & 0xFFFF
                self._last = payload(self._seq, OPEN_RO, data=self.path.encode())
                self._deadline = now + BUSY_WAIT_S
                return []
            return self._fail(f'{self.path}: {ERRORS.get(err, err)} (opcode {req_op})')
        if self.state == OPENING:
            if size < 4:
                return self._fail(f'{self.path}: open answered without a file size')
            self.size = struct.unpack_from('<I', data)[0]
            if self.size > self.max_bytes:
                return self._fail(f'{self.path}: {self.size} bytes, more than {self.max_bytes}')
            self.state, self._session = READING, session
            return self._read(mav, now)
        self.data += data
        if len(self.data) >= self.size or size == 0:
            return self._finish(mav, now, session)
        return self._read(mav, now)

    def _read(self, mav, now: float) -> list:
        return self._request(mav, READ, now, session=self._session, offset=len(self.data),
                             size=DATA)

    def _finish(self, mav, now: float, session: int) -> list:
        self.state = DONE
        del self.data[self.size:]
        self._seq = (self._seq + 1) & 0xFFFF
        return [mav.file_transfer_protocol_encode(
            0, self.target[0], self.target[1], payload(self._seq, TERMINATE, session))]

    def poll(self, mav, now: float) -> list:
        """The request again if its reply is late; fail after the retries."""
        if self.state not in (OPENING, READING) or self._last is None or now < self._deadline:
            return []
        if self._tries >= self.retries:
            return self._fail(f'{self.path}: no reply after {self.retries} retries')
        self._tries += 1
        self.resent += 1
        self._deadline = now + self.timeout_s
        return [mav.file_transfer_protocol_encode(0, self.target[0], self.target[1], self._last)]

