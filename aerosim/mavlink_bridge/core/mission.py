"""MAVLink mission protocol, simulator side: the scenario mission served to a peer (pure).

Upload to the flight controller ("mission source") and download by a GCS use the same transfer:
  us: MISSION_COUNT -> peer: MISSION_REQUEST_INT(seq) / MISSION_REQUEST(seq) (deprecated)
  us: MISSION_ITEM_INT(seq) ... peer: MISSION_ACK(type)
A transfer starts when the session starts (start()) or when a peer sends MISSION_REQUEST_LIST.
Timeouts and retries follow the protocol (1500 ms default, 5 retries): without a request (or the
final ACK) in time, the last message sent is sent again; after the last retry the transfer fails.
A re-request of an item already sent is answered again (the peer lost it); requests for items
ahead of the next expected one are out of sequence and ignored (recoverable, the spec says);
both are counted. A request for an item the mission does not have (seq >= count, or any item
of the empty fence/rally) is answered MISSION_ACK MAV_MISSION_INVALID_SEQUENCE and, from the
peer of the transfer, ends it (an error ends the operation: mavlink.io mission protocol,
Errors; PX4 answers the same request MAV_MISSION_ERROR and goes idle,
MavlinkMissionManager::handle_mission_request_both). Only one transfer runs at a time (a new
peer may take over one that got no request yet); MISSION_REQUEST_LIST for fence/rally
answers an empty count.

The simulator is the mission's source (seed 003: "External mission uploads are not yet
supported"), so what would change it is refused, each answered as the protocol asks, with
a MISSION_ACK to its sender: an upload (MISSION_COUNT) of a flight plan, or MISSION_CLEAR_ALL
of the plan or of all types, MAV_MISSION_DENIED ("not accepting any mission commands from
this communication partner"); fence and rally points, of which we hold none, clear
(MISSION_CLEAR_ALL, or an upload of 0 items, which the spec makes a clear) ACCEPTED and an
upload of items MAV_MISSION_NO_SPACE (room for none: what PX4 answers a count above its
capacity); an unknown mission type MAV_MISSION_INVALID (as PX4's handle_mission_count).
"""

from dataclasses import dataclass
import math
from typing import List, Optional, Sequence

from mavlink_bridge.core.mav import mavlink
from sim_core.scenario import MissionItem

COMMANDS = {
    'takeoff': mavlink.MAV_CMD_NAV_TAKEOFF,      # 22
    'waypoint': mavlink.MAV_CMD_NAV_WAYPOINT,    # 16
    'land': mavlink.MAV_CMD_NAV_LAND,            # 21
    'rtl': mavlink.MAV_CMD_NAV_RETURN_TO_LAUNCH,  # 20
}
FRAME = mavlink.MAV_FRAME_GLOBAL_RELATIVE_ALT_INT   # 6
MISSION = mavlink.MAV_MISSION_TYPE_MISSION
KNOWN_TYPES = (MISSION, mavlink.MAV_MISSION_TYPE_FENCE, mavlink.MAV_MISSION_TYPE_RALLY,
               mavlink.MAV_MISSION_TYPE_ALL)


def result_name(result: int) -> str:
    """MAV_MISSION_RESULT value -> its name (or the number)."""
    e = mavlink.enums['MAV_MISSION_RESULT'].get(result)
    return e.name if e else str(result)


@dataclass(frozen=True)
class ItemInt:
    """MISSION_ITEM_INT content (without target ids): x/y degE7, z m above home."""

    seq: int
    command: int
    param1: float
    param2: float
    param3: float
    param4: float
    x: int
    y: int
    z: float
    frame: int = FRAME
    autocontinue: int = 1


def items_from_scenario(mission: Sequence[MissionItem]) -> List[ItemInt]:
    """Convert scenario mission items to MISSION_ITEM_INT contents.

    NAV_WAYPOINT: param1 hold [s], param2 acceptance radius [m]; NAV_TAKEOFF / NAV_LAND:
    param4 yaw NaN (keep heading); NAV_LAND on a boat's deck (`deck:`): param2
    PRECISION_LAND_MODE_REQUIRED (2; PX4's land_precision: mavlink_mission.cpp, navigator's
    precland); RTL: no position, in MAV_FRAME_MISSION (PX4 refuses it in a global frame as
    UNSUPPORTED: parse_mavlink_mission_item() in mavlink_mission.cpp).
    """
    out = []
    for i, it in enumerate(mission):
        cmd = COMMANDS[it.command]
        p1 = p2 = p3 = 0.0
        p4 = math.nan
        if it.command == 'waypoint':
            p1, p2 = it.hold_s, it.acceptance_radius_m
        elif it.command == 'land' and it.deck:
            p2 = float(mavlink.PRECISION_LAND_MODE_REQUIRED)
        x = y = 0
        z = it.alt_m
        if it.command != 'rtl':
            x, y = int(round(it.lat_deg * 1e7)), int(round(it.lon_deg * 1e7))
        else:
            p4, z = 0.0, 0.0
        out.append(ItemInt(i, cmd, p1, p2, p3, p4, x, y, z,
                           mavlink.MAV_FRAME_MISSION if it.command == 'rtl' else FRAME))
    return out


IDLE, SENDING, DONE, FAILED = 'idle', 'sending', 'done', 'failed'
MAX_SAID = 1024         # refusal kinds logged (the rest only counted)


class MissionServer:
    """Serves one mission to one peer at a time; call poll() regularly for timeouts."""

    def __init__(self, items: Sequence[ItemInt], timeout_s: float = 1.5, retries: int = 5):
        """items: the mission; timeout_s: wait for the peer's next message; retries: re-sends."""
        self.items = list(items)
        self.timeout_s = timeout_s
        self.retries = retries
        self.state = IDLE
        self.result = ''
        self.target = (0, 0)
        self.next_seq = 0
        self.resent = 0              # re-sends after timeouts, all transfers
        self.rerequests = 0          # items requested again by the peer
        self.out_of_sequence = 0     # requests ignored
        self.refused = 0             # out-of-range requests, uploads and clears refused
        self._said: set = set()      # refusals already logged (_say)
        self.transfers = 0
        self.completed = 0
        self.events: List[str] = []
        self._last = None
        self._deadline = 0.0
        self._tries = 0

    # --- starting ------------------------------------------------------------------------------
    def start(self, mav, target_sys: int, target_comp: int, now: float):
        """Begin a transfer to target: returns [MISSION_COUNT]."""
        self.state = SENDING
        self.target = (target_sys, target_comp)
        self.next_seq = 0
        self.transfers += 1
        self.events.append(f'mission: sending MISSION_COUNT {len(self.items)} to '
                           f'{target_sys}:{target_comp}')
        if not self.items:
            self.events.append('mission: empty, waiting for the ACK')
        return self._send(mav.mission_count_encode(target_sys, target_comp, len(self.items),
                                                   MISSION), now)

    def on_request_list(self, mav, msg, now: float):
        """MISSION_REQUEST_LIST from a peer: start a transfer (or answer an empty count)."""
        src = (msg.get_srcSystem(), msg.get_srcComponent())
        if msg.mission_type != MISSION:
            return [mav.mission_count_encode(src[0], src[1], 0, msg.mission_type)]
        if self.state == SENDING and src != self.target and self.next_seq == 0:
            self.events.append(f'mission: {self.target[0]}:{self.target[1]} never requested an '
                               f'item; serving {src[0]}:{src[1]} instead')
        elif self.state == SENDING and src != self.target:
            self.events.append(f'mission: request list from {src[0]}:{src[1]} denied, '
                               f'busy with {self.target[0]}:{self.target[1]}')
            return [mav.mission_ack_encode(src[0], src[1], mavlink.MAV_MISSION_DENIED, MISSION)]
        return self.start(mav, src[0], src[1], now)

    # --- during a transfer ---------------------------------------------------------------------
    def _from_target(self, msg) -> bool:
        src = (msg.get_srcSystem(), msg.get_srcComponent())
        return self.state == SENDING and (self.target == (0, 0) or src == self.target)

    def on_request(self, mav, msg, now: float):
        """MISSION_REQUEST_INT or MISSION_REQUEST: MISSION_ITEM_INT, a refusal, or nothing."""
        kind = getattr(msg, 'mission_type', MISSION)
        src = (msg.get_srcSystem(), msg.get_srcComponent())
        if msg.seq >= (len(self.items) if kind == MISSION else 0):
            return self._invalid_sequence(mav, msg, src, kind)
        if kind != MISSION or not self._from_target(msg):
            self.out_of_sequence += 1
            return []
        if self.target == (0, 0):   # broadcast count: the first requester is the peer
            self.target = (msg.get_srcSystem(), msg.get_srcComponent())
        seq = msg.seq
        if seq > self.next_seq:
            self.out_of_sequence += 1
            self.events.append(f'mission: ignored out-of-sequence request {seq} '
                               f'(expected {self.next_seq})')
            return []
        if seq < self.next_seq:
            self.rerequests += 1
        else:
            self.next_seq = seq + 1
        it = self.items[seq]
        return self._send(mav.mission_item_int_encode(
            self.target[0], self.target[1], seq, it.frame, it.command, 1 if seq == 0 else 0,
            it.autocontinue, it.param1, it.param2, it.param3, it.param4, it.x, it.y, it.z,
            MISSION), now)

    def _invalid_sequence(self, mav, msg, src, kind: int) -> list:
        """A request for an item the mission does not have: MISSION_ACK INVALID_SEQUENCE."""
        self.refused += 1
        have = len(self.items) if kind == MISSION else 0
        what = f'item {msg.seq} of {have}' + ('' if kind == MISSION else f' (type {kind})')
        if kind == MISSION and self._from_target(msg) and self.target != (0, 0):
            self.state = FAILED
            self.result = (f'{src[0]}:{src[1]} requested {what}: answered '
                           'MAV_MISSION_INVALID_SEQUENCE, the transfer ended')
            self.events.append(f'mission: {self.result}')
        else:
            self._say(('request', src), f'mission: {src[0]}:{src[1]} requested {what}: '
                      'answered MAV_MISSION_INVALID_SEQUENCE')
        return [mav.mission_ack_encode(src[0], src[1], mavlink.MAV_MISSION_INVALID_SEQUENCE,
                                       kind)]

    def on_count(self, mav, msg) -> list:
        """MISSION_COUNT (a peer uploads to us): MISSION_ACK, refused (module docstring)."""
        kind = msg.mission_type
        if kind == MISSION:
            res = mavlink.MAV_MISSION_DENIED
            why = "the simulator serves the scenario's mission (seed 003: no external uploads)"
        elif kind not in KNOWN_TYPES or kind == mavlink.MAV_MISSION_TYPE_ALL:
            res, why = mavlink.MAV_MISSION_INVALID, 'not a mission type one uploads'
        elif msg.count == 0:
            res, why = mavlink.MAV_MISSION_ACCEPTED, 'empty: none is held'
        else:
            res, why = mavlink.MAV_MISSION_NO_SPACE, 'the simulator holds no fence or rally points'
        return self._answer(mav, msg, res, f'upload of {msg.count} items (type {kind})', why)

    def on_clear_all(self, mav, msg) -> list:
        """MISSION_CLEAR_ALL: MISSION_ACK (module docstring)."""
        kind = msg.mission_type
        if kind in (MISSION, mavlink.MAV_MISSION_TYPE_ALL):
            res = mavlink.MAV_MISSION_DENIED
            why = "the scenario's mission cannot be cleared: the simulator is its source"
        elif kind in KNOWN_TYPES:
            res, why = mavlink.MAV_MISSION_ACCEPTED, 'none is held'
        else:
            res, why = mavlink.MAV_MISSION_INVALID, 'unknown mission type'
        return self._answer(mav, msg, res, f'clear all (type {kind})', why)

    def _answer(self, mav, msg, result: int, what: str, why: str) -> list:
        src = (msg.get_srcSystem(), msg.get_srcComponent())
        if result != mavlink.MAV_MISSION_ACCEPTED:
            self.refused += 1
        self._say((what, src, result), f'mission: {what} from {src[0]}:{src[1]}: answered '
                  f'{result_name(result)} ({why})')
        return [mav.mission_ack_encode(src[0], src[1], result, msg.mission_type)]

    def _say(self, key, text: str) -> None:
        """Log text the first time for key (one kind of refusal to one peer).

        The rest are only counted (refused): a client that insists does not flood the log.
        """
        if key not in self._said and len(self._said) < MAX_SAID:
            self._said.add(key)
            self.events.append(text + ' (said once per peer and kind; all are counted)')

    def on_ack(self, msg) -> Optional[str]:
        """MISSION_ACK from the peer: ends the transfer; returns the outcome (or None)."""
        if getattr(msg, 'mission_type', MISSION) != MISSION or not self._from_target(msg):
            return None
        if msg.type == mavlink.MAV_MISSION_ACCEPTED:
            if self.next_seq < len(self.items):
                # ACCEPTED before the last item went out: a late or repeated ACK of an earlier
                # transfer (reordering). The peer is still requesting: keep serving it.
                self.out_of_sequence += 1
                self.events.append(f'mission: ignored an ACK after {self.next_seq} of '
                                   f"{len(self.items)} items (an earlier transfer's)")
                return None
            self.state = DONE
            self.completed += 1
            self.result = f'accepted: {len(self.items)} items'
        else:
            self.state = FAILED
            self.result = f'rejected by the peer: {result_name(msg.type)}'
        self.events.append(f'mission: {self.result}')
        return self.result

    def count_again(self, now: float):
        """The MISSION_COUNT again now if no item was asked for yet (else []).

        For a peer heard for the first time after the count went out: a count sent before
        the FC listened is lost, and the retry would come timeout_s of wall later (at 10x
        real time, 15 s of sim in which the FC has no mission and says so).
        """
        if self.state != SENDING or self.next_seq != 0 or self._last is None:
            return []
        self.events.append('mission: the FC is heard: MISSION_COUNT again now')
        return self._send(self._last, now)

    def poll(self, now: float):
        """Handle timeouts: returns messages to re-send (may be empty)."""
        if self.state != SENDING or now < self._deadline:
            return []
        if self._tries >= self.retries:
            self.state = FAILED
            self.result = (f'timed out after {self.retries} retries waiting for '
                           f'{"the ACK" if self.next_seq >= len(self.items) else "a request"} '
                           f'(item {self.next_seq} of {len(self.items)})')
            self.events.append(f'mission: {self.result}')
            return []
        self._tries += 1
        self.resent += 1
        self._deadline = now + self.timeout_s
        return [self._last]

    def _send(self, msg, now: float):
        self._last = msg
        self._deadline = now + self.timeout_s
        self._tries = 0
        return [msg]
