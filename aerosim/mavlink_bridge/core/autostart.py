"""Arm the flight controller and start its mission once it is ready (pure, no sockets).

For an FC that waits to be told (PX4): after the mission upload was accepted and the FC's
HEARTBEAT says it passed its pre-flight checks (MAV_STATE_STANDBY: PX4 sets it when
`pre_flight_checks_pass`, src/modules/mavlink/streams/HEARTBEAT.hpp), send
MAV_CMD_COMPONENT_ARM_DISARM (param1 1), then MAV_CMD_MISSION_START (param1 0: first item,
param2 the last). PX4's commander answers ARM with ACCEPTED or TEMPORARILY_REJECTED (checks
failed), MISSION_START with ACCEPTED, TEMPORARILY_REJECTED (mode change refused) or DENIED (no
valid mission), src/modules/commander/Commander.cpp. A command without an ACK is sent again
after `retry_s` with `confirmation` + 1 (MAVLink command protocol); a refusal is retried after
`retry_s` too (the FC may become ready), until `timeout_s` has passed since the FC was ready.
"""

from typing import List, Optional

from mavlink_bridge.core.mav import mavlink

WAIT_MISSION, WAIT_READY, ARMING, STARTING, STARTED, FAILED = (
    'waiting for the mission upload', 'waiting for the FC to be ready', 'arming',
    'starting the mission', 'mission started', 'failed')
ARM = mavlink.MAV_CMD_COMPONENT_ARM_DISARM          # 400
START = mavlink.MAV_CMD_MISSION_START               # 300
ARMED_FLAG = mavlink.MAV_MODE_FLAG_SAFETY_ARMED


def result_name(result: int) -> str:
    """MAV_RESULT value -> its name without the prefix (or the number)."""
    e = mavlink.enums['MAV_RESULT'].get(result)
    return e.name.replace('MAV_RESULT_', '') if e else str(result)


class AutoStart:
    """Arms the FC and starts its mission: feed it the FC's messages, poll it regularly."""

    def __init__(self, target, item_count: int, retry_s: float = 1.0, timeout_s: float = 60.0):
        """target: (sysid, compid) of the FC; item_count: items in the uploaded mission."""
        self.target = tuple(target)
        self.item_count = item_count
        self.retry_s = retry_s
        self.timeout_s = timeout_s
        self.state = WAIT_MISSION
        self.events: List[str] = []
        self.sent = 0
        self._ready_at: Optional[float] = None
        self._cmd: Optional[int] = None
        self._next_at = 0.0
        self._confirmation = 0
        self._fc_status = None
        self._armed = False

    # --- inputs --------------------------------------------------------------------------------
    def mission_accepted(self) -> None:
        """The FC accepted the mission upload."""
        if self.state == WAIT_MISSION:
            self.state = WAIT_READY

    def heartbeat(self, msg) -> None:
        """A HEARTBEAT of the FC: its system status and armed flag."""
        self._fc_status = msg.system_status
        self._armed = bool(msg.base_mode & ARMED_FLAG)

    def command_ack(self, msg, now: float) -> None:
        """COMMAND_ACK from the FC for the command in flight."""
        if msg.command != self._cmd or self.state not in (ARMING, STARTING):
            return
        name = 'arm' if self._cmd == ARM else 'mission start'
        if msg.result == mavlink.MAV_RESULT_IN_PROGRESS:
            self._next_at = now + self.retry_s
            return
        if msg.result == mavlink.MAV_RESULT_ACCEPTED:
            self.events.append(f'autostart: {name} accepted')
            if self._cmd == ARM:
                self.state, self._cmd, self._next_at = STARTING, START, now
                self._confirmation = 0
            else:
                self.state, self._cmd = STARTED, None
            return
        self.events.append(f'autostart: {name} refused ({result_name(msg.result)}); trying '
                           f'again in {self.retry_s:g} s')
        self._confirmation = 0
        self._next_at = now + self.retry_s

    # --- output --------------------------------------------------------------------------------
    def poll(self, mav, now: float) -> list:
        """Messages to send now (COMMAND_LONG), possibly none."""
        if self.state == WAIT_READY and self._fc_status == mavlink.MAV_STATE_STANDBY:
            self._ready_at = now
            self.state, self._cmd, self._next_at = ARMING, ARM, now
            self.events.append('autostart: the FC passed its pre-flight checks (STANDBY): arming')
        if self.state not in (ARMING, STARTING) or now < self._next_at:
            return []
        if self._ready_at is not None and now - self._ready_at > self.timeout_s:
            self.state = FAILED
            self.events.append(f'autostart: gave up after {self.timeout_s:g} s: the FC would not '
                               f'{"arm" if self._cmd == ARM else "start the mission"}')
            return []
        if self._cmd == ARM and self._armed:        # armed by someone else: go on
            self.state, self._cmd = STARTING, START
        self._next_at = now + self.retry_s
        conf = self._confirmation
        self._confirmation = min(conf + 1, 255)
        self.sent += 1
        p = (1.0, 0.0) if self._cmd == ARM else (0.0, float(max(self.item_count - 1, 0)))
        return [mav.command_long_encode(self.target[0], self.target[1], self._cmd, conf,
                                        p[0], p[1], 0.0, 0.0, 0.0, 0.0, 0.0)]
