"""Arm the flight controller and start its mission once it is ready (pure, no sockets).

For an FC that waits to be told (PX4): after the mission upload was accepted and the FC's
HEARTBEAT says it passed its pre-flight checks (MAV_STATE_STANDBY: PX4 sets it when
`pre_flight_checks_pass`, src/modules/mavlink/streams/HEARTBEAT.hpp), send
MAV_CMD_COMPONENT_ARM_DISARM (param1 1), then MAV_CMD_MISSION_START (param1 0: first item,
param2 the last). PX4's commander answers ARM with ACCEPTED or TEMPORARILY_REJECTED (checks
failed), MISSION_START with ACCEPTED, TEMPORARILY_REJECTED (mode change refused) or DENIED (no
valid mission), src/modules/commander/Commander.cpp. A command without an ACK is sent again
after `retry_s` with `confirmation` + 1 (MAVLink command protocol); a refusal is retried after
`retry_s` too (the FC may become ready).

An FC that does not say STANDBY within `ready_s` of accepting the mission is asked to arm
anyway: PX4 runs its arming checks on the request and reports what fails (its events), so a
PX4 that will never be ready (no ground station under NAV_DLL_ACT, say) is heard saying why
within seconds, not silently waited for. After `timeout_s` without a started mission the
autostart has FAILED, with the last refusal as its reason; unless the FC flies on its own: one
that has answered no command and says it is armed and ACTIVE (the built-in FC arms itself and
takes no commands) has STARTED.

An FC that arms and starts itself (the built-in FC; `commands` False) is only watched: it
has STARTED once it says it is armed and ACTIVE. What it says of why it will not arm or start
(fc_words.refusal: PX4's words, "Preflight Fail: ...", critical) makes it FAILED once it
persisted `ready_s`: said, and no HEARTBEAT since saying that it passed its checks (STANDBY:
PX4's pre_flight_checks_pass) or is armed. One such message is no verdict: PX4 says "Preflight
Fail" during its own start too, until its estimator has converged. With commands, the FC's
words only join the reason when the autostart gives up.

Times are the simulation's [s]: a lockstep FC lives on the simulation clock (PX4's timeouts
too), so a slow or paused simulation cannot make it look late.
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

    def __init__(self, target, item_count: int, retry_s: float = 1.0, timeout_s: float = 30.0,
                 ready_s: float = 5.0, commands: bool = True):
        """target: (sysid, compid) of the FC; item_count: items in the uploaded mission.

        retry_s: period of a command without an answer or refused; ready_s: wait this long
        for STANDBY before asking anyway (commands False: for the FC to take back its
        refusal); timeout_s: give up this long after the mission was accepted [s, sim];
        commands: arm and start the FC (False: it starts itself and is only watched).
        """
        self.commands = commands
        self.refused: List[str] = []        # the FC's refusals since it last passed its checks
        self._refused_at: Optional[float] = None    # the first of them [s, sim]
        self.target = tuple(target)
        self.item_count = item_count
        self.retry_s = retry_s
        self.timeout_s = timeout_s
        self.ready_s = ready_s
        self.state = WAIT_MISSION
        self.events: List[str] = []
        self.sent = 0
        self.refusals = 0
        self.last_refusal = ''
        self.reason = ''                    # why it FAILED
        self._accepted_at: Optional[float] = None
        self._cmd: Optional[int] = None
        self._next_at = 0.0
        self._confirmation = 0
        self._fc_status = None
        self._armed = False
        self._acks = 0                      # COMMAND_ACKs of ours the FC sent

    # --- inputs --------------------------------------------------------------------------------
    def mission_accepted(self, now: Optional[float] = None) -> None:
        """The FC accepted the mission upload (at sim time now; None: at the next poll)."""
        if self.state == WAIT_MISSION:
            self.state = WAIT_READY
            self._accepted_at = now

    def heartbeat(self, msg) -> None:
        """A HEARTBEAT of the FC: its system status and armed flag (passed: no refusal)."""
        self._fc_status = msg.system_status
        self._armed = bool(msg.base_mode & ARMED_FLAG)
        if self._armed or self._fc_status in (mavlink.MAV_STATE_STANDBY,
                                              mavlink.MAV_STATE_ACTIVE):
            self.refused, self._refused_at = [], None

    def refusal(self, text: str, now: float) -> None:
        """The FC says it will not arm or start (fc_words.refusal), at sim time now [s]."""
        if self.state in (STARTED, FAILED):
            return
        if self._refused_at is None:
            self._refused_at = now
        if text not in self.refused:
            self.refused.append(text)

    @property
    def fc_armed(self) -> bool:
        """The FC's last HEARTBEAT said it is armed."""
        return self._armed

    def command_ack(self, msg, now: float) -> None:
        """COMMAND_ACK from the FC for the command in flight."""
        if msg.command != self._cmd or self.state not in (ARMING, STARTING):
            return
        self._acks += 1
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
        refusal = f'{name} refused ({result_name(msg.result)})'
        self.refusals += 1
        if refusal != self.last_refusal:
            self.events.append(f'autostart: {refusal}; trying again every {self.retry_s:g} s '
                               f'for up to {self.timeout_s:g} s')
        self.last_refusal = refusal
        self._confirmation = 0
        self._next_at = now + self.retry_s

    # --- output --------------------------------------------------------------------------------
    def poll(self, mav, now: float) -> list:
        """Messages to send now (COMMAND_LONG), possibly none; now: sim time [s]."""
        if not self.commands:
            self._watch(now)
            return []
        if self.state == WAIT_READY:
            if self._accepted_at is None:
                self._accepted_at = now
            if self._fc_status == mavlink.MAV_STATE_STANDBY:
                self.events.append('autostart: the FC passed its pre-flight checks (STANDBY): '
                                   'arming')
            elif now - self._accepted_at >= self.ready_s:
                self.events.append(f'autostart: the FC does not say it is ready (STANDBY) '
                                   f'{self.ready_s:g} s after taking the mission: arming, to '
                                   'hear why if it refuses')
            else:
                return []
            self.state, self._cmd, self._next_at = ARMING, ARM, now
        if self.state in (ARMING, STARTING) and not self._acks and self._armed and \
                self._fc_status == mavlink.MAV_STATE_ACTIVE:
            self.state, self._cmd = STARTED, None
            self.events.append('autostart: the FC flies on its own (armed, ACTIVE) and answers '
                               'no commands: taken as started')
            return []
        if self.state not in (ARMING, STARTING) or now < self._next_at:
            return []
        assert self._accepted_at is not None
        if now - self._accepted_at > self.timeout_s and self.sent:   # asked at least once
            doing = 'arm' if self._cmd == ARM else 'start the mission'
            self.state = FAILED
            self.reason = (f'the FC would not {doing} within {self.timeout_s:g} s of taking the '
                           f'mission' + (f': {self.last_refusal}' if self.last_refusal else
                                         ': no answer')
                           + ''.join(f'; {text}' for text in self.refused))
            self.events.append(f'autostart: gave up: {self.reason}')
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

    def _watch(self, now: float) -> None:
        """An FC that starts itself: STARTED once it flies, FAILED once it refused ready_s."""
        if self.state in (STARTED, FAILED):
            return
        if self._armed and self._fc_status == mavlink.MAV_STATE_ACTIVE:
            self.state = STARTED
            self.events.append('the FC armed and started on its own (armed, ACTIVE)')
        elif self._refused_at is not None and now - self._refused_at >= self.ready_s:
            self.state = FAILED
            self.reason = (f'{"; ".join(self.refused)} (the FC says so since sim t = '
                           f'{self._refused_at:.1f} s and has not armed {self.ready_s:g} s '
                           'later)')
