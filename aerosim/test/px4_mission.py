"""PX4's mission manager, upload half: src/modules/mavlink/mavlink_mission.cpp (v1.16).

Part of the PX4 stand-in (px4_sitl.py). MavlinkMissionManager, as it takes the mission the
simulator sends:
- MISSION_COUNT to our system and component 1 / 190 / 0; a transfer in progress elsewhere:
  ACK ERROR; count 0: ACK ACCEPTED; else GETLIST, request item 0 (MISSION_REQUEST: `_int_mode`
  starts false; a MISSION_ITEM_INT switches it to MISSION_REQUEST_INT);
- an item of another sequence is ignored; the item is parsed as parse_mavlink_mission_item()
  does (global frames for NAV commands; RTL only in MAV_FRAME_MISSION, else UNSUPPORTED and the
  transfer ends); the last one: ACK ACCEPTED with the mission's CRC32 as opaque_id;
- in IDLE, the last item again (our ACK lost): ACK ACCEPTED again;
- the request is re-sent every 250 ms (MAVLINK_MISSION_RETRY_TIMEOUT_DEFAULT) and the transfer
  aborted after 5 s without a message (MAVLINK_MISSION_PROTOCOL_TIMEOUT_DEFAULT), PX4 clock;
- the navigator checks a new mission (px4_params.feasibility: MIS_TKO_LAND_REQ, the
  fixed-wing landing's glide slope against FW_LND_ANG) and says why one is rejected
  (Commander._new_mission, px4_commander.py, when the last item is accepted).
"""

from dataclasses import dataclass
import struct
import zlib

from mavlink_bridge.core.mav import mavlink

RETRY_US = 250_000          # MAVLINK_MISSION_RETRY_TIMEOUT_DEFAULT
PROTOCOL_TIMEOUT_US = 5_000_000
MISSION_COMPONENTS = (1, mavlink.MAV_COMP_ID_MISSIONPLANNER, mavlink.MAV_COMP_ID_ALL)
GLOBAL_FRAMES = (mavlink.MAV_FRAME_GLOBAL, mavlink.MAV_FRAME_GLOBAL_RELATIVE_ALT)
GLOBAL_INT_FRAMES = (mavlink.MAV_FRAME_GLOBAL_INT, mavlink.MAV_FRAME_GLOBAL_RELATIVE_ALT_INT)
NAV_GLOBAL = (mavlink.MAV_CMD_NAV_WAYPOINT, mavlink.MAV_CMD_NAV_LOITER_UNLIM,
              mavlink.MAV_CMD_NAV_LOITER_TIME, mavlink.MAV_CMD_NAV_LAND,
              mavlink.MAV_CMD_NAV_TAKEOFF, mavlink.MAV_CMD_NAV_LOITER_TO_ALT)
NAV_NO_POSITION = (mavlink.MAV_CMD_NAV_RETURN_TO_LAUNCH, mavlink.MAV_CMD_NAV_DELAY)


@dataclass
class Item:
    """A stored mission item, as the Autopilot reads it (x, y degE7; z m)."""

    seq: int
    command: int
    frame: int
    param1: float
    param2: float
    param3: float
    param4: float
    x: int
    y: int
    z: float


class MissionManager:
    """PX4's MavlinkMissionManager, upload half (the simulator sends us the mission)."""

    def __init__(self, sysid: int, say):
        """sysid: ours; say(severity, text): a STATUSTEXT of ours."""
        self.sysid = sysid
        self.say = say
        self.state = 'idle'
        self.int_mode = False
        self.partner = None
        self.count = 0
        self.seq = 0
        self.items = []
        self.crc = 0
        self.mission = []           # the accepted mission
        self.mission_crc = 0
        self.requests = 0
        self.rerequests = 0
        self.accepted = 0
        self.last_sent_us = 0
        self.last_recv_us = 0

    def _for_me(self, m) -> bool:
        return m.target_system == self.sysid and m.target_component in MISSION_COMPONENTS

    def _ack(self, mav, target, result, opaque=0):
        # PX4 puts the mission's CRC32 in opaque_id; pymavlink's common dialect here predates
        # that extension field, so the ACK goes out without it (receivers ignore it)
        return mav.mission_ack_encode(target[0], target[1], result,
                                      mavlink.MAV_MISSION_TYPE_MISSION)

    def _request(self, mav, now_us):
        self.last_sent_us = now_us
        self.requests += 1
        enc = mav.mission_request_int_encode if self.int_mode else mav.mission_request_encode
        return enc(self.partner[0], self.partner[1], self.seq, mavlink.MAV_MISSION_TYPE_MISSION)

    def on_count(self, mav, m, now_us):
        """MISSION_COUNT: handle_mission_count()."""
        if not self._for_me(m):
            return []
        src = (m.get_srcSystem(), m.get_srcComponent())
        if self.state == 'idle':
            self.last_recv_us = now_us
            if m.mission_type != mavlink.MAV_MISSION_TYPE_MISSION:
                return [self._ack(mav, src, mavlink.MAV_MISSION_UNSUPPORTED)]
            self.partner = src
            if m.count == 0:
                self.mission, self.mission_crc = [], 0
                return [self._ack(mav, src, mavlink.MAV_MISSION_ACCEPTED)]
            self.state, self.seq, self.count, self.items, self.crc = 'getlist', 0, m.count, [], 0
        elif self.state == 'getlist':
            self.last_recv_us = now_us
            if src != self.partner:
                return [self._ack(mav, src, mavlink.MAV_MISSION_ERROR)]
            if self.seq != 0:
                self.say(mavlink.MAV_SEVERITY_CRITICAL, 'WPM: REJ. CMD: Busy')
                return [self._ack(mav, self.partner, mavlink.MAV_MISSION_ERROR)]
        return [self._request(mav, now_us)]

    def _parse(self, m):
        """parse_mavlink_mission_item(): an Item, or the MAV_MISSION_RESULT that refuses it."""
        if m.frame in GLOBAL_FRAMES or (self.int_mode and m.frame in GLOBAL_INT_FRAMES):
            if m.frame in GLOBAL_INT_FRAMES:
                self.int_mode = True
            if m.command not in NAV_GLOBAL:
                return mavlink.MAV_MISSION_UNSUPPORTED
            x, y = (int(m.x), int(m.y)) if self.int_mode else \
                (int(round(m.x * 1e7)), int(round(m.y * 1e7)))
        elif m.frame == mavlink.MAV_FRAME_MISSION:
            if m.command not in NAV_NO_POSITION:
                return mavlink.MAV_MISSION_UNSUPPORTED
            x = y = 0
        else:
            return mavlink.MAV_MISSION_UNSUPPORTED_FRAME
        return Item(m.seq, m.command, m.frame, m.param1, m.param2, m.param3, m.param4, x, y,
                    float(m.z))

    def on_item(self, mav, m, now_us):
        """MISSION_ITEM / MISSION_ITEM_INT: handle_mission_item_both()."""
        self.int_mode = m.get_type() == 'MISSION_ITEM_INT'
        if not self._for_me(m):
            return []
        src = (m.get_srcSystem(), m.get_srcComponent())
        if src != self.partner:
            self.say(mavlink.MAV_SEVERITY_CRITICAL, 'REJ. MIS ITEM: partner id mismatch')
            return []
        if m.mission_type != mavlink.MAV_MISSION_TYPE_MISSION:
            return [self._ack(mav, src, mavlink.MAV_MISSION_ERROR)]
        if self.state == 'idle':
            if self.seq == m.seq + 1:       # the last item again: our ACK was lost
                return [self._ack(mav, src, mavlink.MAV_MISSION_ACCEPTED, self.crc)]
            self.say(mavlink.MAV_SEVERITY_CRITICAL, 'IGN MISSION_ITEM: No transfer')
            return [self._ack(mav, src, mavlink.MAV_MISSION_ERROR)]
        self.last_recv_us = now_us
        if m.seq != self.seq:
            if m.seq < self.seq:
                self.rerequests += 1
            return []                        # not the expected item: ignored
        item = self._parse(m)
        if not isinstance(item, Item):
            self.say(mavlink.MAV_SEVERITY_CRITICAL, 'IGN MISSION_ITEM: Invalid item')
            self.state = 'idle'
            return [self._ack(mav, src, item)]
        self.crc = zlib.crc32(struct.pack('<HHffffiif', item.command, item.frame, item.param1,
                                          item.param2, item.param3, item.param4, item.x, item.y,
                                          item.z), self.crc)
        self.items.append(item)
        self.seq = m.seq + 1
        if self.seq < self.count:
            return [self._request(mav, now_us)]
        self.state = 'idle'
        self.mission, self.mission_crc = list(self.items), self.crc
        self.accepted += 1
        return [self._ack(mav, src, mavlink.MAV_MISSION_ACCEPTED, self.crc)]

    def tick(self, mav, now_us):
        """MavlinkMissionManager::send(): re-request after 250 ms, give up after 5 s."""
        if self.state == 'getlist' and now_us - self.last_sent_us > RETRY_US:
            return [self._request(mav, now_us)]
        if self.state != 'idle' and now_us - self.last_recv_us > PROTOCOL_TIMEOUT_US:
            self.say(mavlink.MAV_SEVERITY_CRITICAL, 'Operation timeout')
            self.state = 'idle'
        return []
