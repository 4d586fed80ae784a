"""MAVLink mission download, flight-controller side (the receiver of an upload) (pure).

On MISSION_COUNT: request items 0..n-1 one by one with MISSION_REQUEST_INT; each request is
re-sent after timeout_s without the item, up to `retries` times; items out of sequence are
ignored; after the last item, MISSION_ACK ACCEPTED. request_list() asks the peer for its mission
(MISSION_REQUEST_LIST), used when no count arrives.
"""

from typing import Any, List, Optional, Tuple

from mavlink_bridge.core.mav import mavlink

MISSION = mavlink.MAV_MISSION_TYPE_MISSION


class MissionClient:
    """Receives one mission; `items` holds it once `complete`."""

    def __init__(self, timeout_s: float = 1.5, retries: int = 5):
        """timeout_s: wait per item [s]; retries: re-requests before giving up."""
        self.timeout_s = timeout_s
        self.retries = retries
        self.items: List[Any] = []          # MISSION_ITEM_INT messages, in sequence order
        self.complete = False
        self.failed = ''
        self.count: Optional[int] = None
        self.peer: Optional[Tuple[int, int]] = None
        self.events: List[str] = []
        self.rerequests = 0
        self._pending: List[Any] = []
        self._deadline: Optional[float] = None
        self._tries = 0

    def on_count(self, mav, msg, now):
        """MISSION_COUNT: (re)start the download; returns the first request."""
        if msg.mission_type != MISSION:
            return []
        self.peer = (msg.get_srcSystem(), msg.get_srcComponent())
        if self.count == msg.count and self._pending and not self.complete:
            return []   # a repeated count while downloading: keep going
        self.count = msg.count
        self._pending = []
        self.complete = False
        self.failed = ''
        self.events.append(f'mission: count {msg.count} from {self.peer[0]}:{self.peer[1]}')
        if msg.count == 0:
            self.items, self.complete = [], True
            return [mav.mission_ack_encode(*self.peer, mavlink.MAV_MISSION_ACCEPTED, MISSION)]
        return self._request(mav, 0, now)

    def _request(self, mav, seq, now):
        self._seq = seq
        self._deadline = now + self.timeout_s
        self._tries = 0
        return [mav.mission_request_int_encode(*self.peer, seq, MISSION)]

    def on_item(self, mav, msg, now):
        """MISSION_ITEM_INT: store it if it is the one requested; request the next or ACK.

        The last item again after the download completed means our ACK was lost (the sender
        re-sends its last message on timeout): ACK again, as PX4 does.
        """
        if msg.mission_type != MISSION:
            return []
        if self.complete and self.count and msg.seq == self.count - 1 and \
                (msg.get_srcSystem(), msg.get_srcComponent()) == self.peer:
            return [mav.mission_ack_encode(*self.peer, mavlink.MAV_MISSION_ACCEPTED, MISSION)]
        if self.complete or self.count is None:
            return []
        if msg.seq != self._seq:
            return []
        self._pending.append(msg)
        if len(self._pending) == self.count:
            self.items, self.complete = list(self._pending), True
            self._deadline = None
            self.events.append(f'mission: {self.count} items received')
            return [mav.mission_ack_encode(*self.peer, mavlink.MAV_MISSION_ACCEPTED, MISSION)]
        return self._request(mav, msg.seq + 1, now)

    def poll(self, mav, now):
        """Re-request after a timeout; give up after the retries."""
        if self._deadline is None or self.complete or now < self._deadline:
            return []
        if self._tries >= self.retries:
            self.failed = f'no item {self._seq} after {self.retries} retries'
            self.events.append(f'mission: download failed: {self.failed}')
            self._deadline = None
            self.count = None
            return []
        self._tries += 1
        self.rerequests += 1
        self._deadline = now + self.timeout_s
        return [mav.mission_request_int_encode(*self.peer, self._seq, MISSION)]

    def request_list(self, mav, target, now):
        """Ask target (sysid, compid) for its mission."""
        self.events.append(f'mission: requesting the list from {target[0]}:{target[1]}')
        return [mav.mission_request_list_encode(target[0], target[1], MISSION)]
