"""The FC's command side: its parameters, the mission, arming, and what it says (pure).

Beside the HIL stream (sensors out, actuators in: bridge.HilBridge), the bridge talks to the
served flight controller on the link that takes the mission (PX4: its onboard payload link):
1. the parameter file, if one is given (fc_params.ParamUpload: PARAM_SET, confirmed);
2. the scenario mission (mission.MissionServer: the MAVLink mission protocol, upload);
3. with autostart, arming and the mission start (autostart.AutoStart, on the sim clock);
   without, an FC that starts itself (the built-in FC) is watched by the same AutoStart
   (`start`): what it says of why it will not arm or start, persisting, is its failure;
and it hears the FC's answers and words (fc_words.FcWords: STATUSTEXT, PX4's events).

What goes to the FC on that link is addressed to it: target system and component both set
(the served FC's, 1:1 for a PX4 instance 0). PX4 forwards what a link receives to its other
forwarding links, the ground station's among them, unless the message targets PX4 itself
(Mavlink::forward_message: `target_system == own && target_component == own: keep`);
HEARTBEATs are forwarded too (MAV_HB_FORW_EN, 1). So nothing of ours appears on the ground
station's link, where QGroundControl would list our system as a second vehicle (it takes any
HEARTBEAT of component 1 that is not a GCS, onboard controller, gimbal or ADS-B:
MultiVehicleManager::_vehicleHeartbeatInfo) and MAVSDK a second system (any message of a
new system id: MavsdkImpl::receive_message). The bridge sends no HEARTBEAT and no
HOME_POSITION there (the seed's HEARTBEAT says ARMED | GUIDED while the simulation runs).

What the FC streams there that the session does not read (PX4 runs its payload link in onboard
mode: ATTITUDE, HIGHRES_IMU, GLOBAL_POSITION_INT, ... as its 4000 B/s data rate allows, on
its own clock) costs the FC a datagram per message and the bridge a wake-up and a parse per
message, both multiplied by the real-time factor (about 1,000 datagrams per wall second at
RTF 12, and a reader thread competing with the lockstep loop's). With quiet_streams, each
message type heard from the FC that the session does not read is stopped on that link once
(MAV_CMD_SET_MESSAGE_INTERVAL, interval -1: PX4's MavlinkReceiver::set_message_interval sets
the stream's rate to 0 on the link the command came in on; HEARTBEAT it refuses, and a
message that is not a stream is answered FAILED). A ground station's link is untouched.

Until the FC is heard there, the bridge asks it for AUTOPILOT_VERSION every GREET_S (targeted,
so never forwarded): PX4 takes the first sender on a UDP link as its partner for good
(mavlink_receiver.cpp), so the link is ours before anything else talks to it, and the answer
names the firmware in the log.

A flight controller heard again on that link after a silence (or a new one) gets the
mission again only if it is disarmed and has not accepted it in this session (or its HIL
link was connected anew: a restarted PX4): a flying FC is never sent the mission again.
"""

from typing import List, Optional, Sequence, Tuple

from mavlink_bridge.core import mav_ext
from mavlink_bridge.core.autostart import FAILED as AUTOSTART_FAILED
from mavlink_bridge.core.autostart import AutoStart
from mavlink_bridge.core.fc_params import DONE as PARAMS_DONE
from mavlink_bridge.core.fc_params import FAILED as PARAMS_FAILED
from mavlink_bridge.core.fc_params import IDLE as PARAMS_IDLE
from mavlink_bridge.core.fc_params import SENDING as PARAMS_SENDING
from mavlink_bridge.core.fc_params import Param, ParamUpload
from mavlink_bridge.core.fc_words import FcWords
from mavlink_bridge.core.mav import mavlink
from mavlink_bridge.core.mission import DONE, IDLE, SENDING, ItemInt, MissionServer

TAKING_S = 1.0             # an upload whose FC answered within this long is under way [s, wall]
MISSION_MSGS = ('MISSION_REQUEST_INT', 'MISSION_REQUEST', 'MISSION_ACK', 'MISSION_REQUEST_LIST',
                'MISSION_COUNT', 'MISSION_CLEAR_ALL')
# The message ids the session (and the peer table: HEARTBEAT) reads on the mission link
READ_IDS = frozenset(
    [getattr(mavlink, f'MAVLINK_MSG_ID_{n}') for n in MISSION_MSGS + (
        'HEARTBEAT', 'COMMAND_ACK', 'PARAM_VALUE', 'STATUSTEXT', 'AUTOPILOT_VERSION',
        'FILE_TRANSFER_PROTOCOL', 'MISSION_ITEM_INT')]
    + list(mav_ext.BY_ID))
# ... and what the FC sends that is not a stream (commands to other components, events of the
# mission): never asked to stop
NOT_STREAMS = frozenset((mavlink.MAVLINK_MSG_ID_COMMAND_LONG, mavlink.MAVLINK_MSG_ID_COMMAND_INT,
                         mavlink.MAVLINK_MSG_ID_MISSION_ITEM_REACHED))
QUIET_SAY_S = 2.0           # the streams stopped are logged once none was new for this long [s]
GREET_S = 1.0               # AUTOPILOT_VERSION asked for this often until the FC is heard [s]
FW_TYPES = {0: 'dev', 64: 'alpha', 128: 'beta', 192: 'rc', 255: 'official'}
Lines = List[Tuple[str, str]]


class FcSession:
    """Parameters, mission, autostart and the FC's words, for one served FC."""

    def __init__(self, items: Sequence[ItemInt], ours: Tuple[int, int], target: Tuple[int, int],
                 mission_timeout_s: float = 1.5, mission_retries: int = 5,
                 autostart: Optional[dict] = None,
                 params: Optional[Tuple[str, Sequence[Param]]] = None,
                 quiet_streams: bool = False):
        """items: the mission; ours: our (sysid, compid); target: the FC's (as configured).

        autostart: AutoStart's keyword arguments (retry_s, ready_s, timeout_s), or None: the
        FC starts itself and is only watched (AutoStart's defaults); params: (file name,
        parameters) to set first, or None; quiet_streams: stop the FC's streams the session
        does not read (module docstring).
        """
        self.ours = ours
        self.target = target
        self.mission = MissionServer(items, mission_timeout_s, mission_retries)
        # arms and starts the FC (autostart), or watches one that starts itself
        self.start = AutoStart(target, len(items), **(autostart or {}),
                               commands=autostart is not None)
        self.autostart = self.start if autostart is not None else None
        self.params = ParamUpload(params[1], target, params[0]) if params else None
        self.words = FcWords(target)
        self.started = False            # the session began (the simulation ran, FC heard)
        self.heard = False              # the FC answered on this link
        self.version = ''               # its AUTOPILOT_VERSION, as the log says it
        self._greeted_at = -1e9
        self.accepted_on: Optional[int] = None      # the HIL connection the mission was for
        self._failure_said = False
        self.quiet_streams = quiet_streams
        self.stopped: dict = {}         # message id -> name, asked to stop (quiet_streams)
        self._stop_news: list = []      # names asked since the last log line
        self._stopped_at = 0.0          # when the last one was asked [s, wall]
        self._moved_at = -1e9           # the last step of an upload (ours or the FC's) [s, wall]
        self.fc_status: Optional[int] = None    # MAV_STATE of the FC's last HEARTBEAT here

    def set_target(self, target: Tuple[int, int]) -> None:
        """The served FC's ids (learned from its first HEARTBEAT)."""
        self.target = (int(target[0]), int(target[1]))
        for part in (self.start, self.params, self.words):
            if part is not None:
                part.target = self.target

    # --- the sequence ------------------------------------------------------------------------
    def begin(self, mav, now: float) -> list:
        """The FC is there and the simulation runs: parameters first, then the mission."""
        self.started = True
        self._moved_at = now
        if self.params is not None and self.params.state == PARAMS_IDLE:
            return self.params.start(mav, now)
        if self.params is not None and self.params.state != PARAMS_DONE:
            return []                   # under way (the mission follows), or failed
        return self.mission.start(mav, self.target[0], self.target[1], now)

    def fc_back(self, mav, now: float, armed: bool, hil_connection: int) -> Tuple[list, Lines]:
        """The FC new or heard again on the link: the mission if it may take it (docstring)."""
        if not self.started:
            return [], []
        if self.mission.state == SENDING:   # the count went out before the FC listened
            sends = self.mission.count_again(now)
            if sends:
                self._moved_at = now
            return sends, []
        if armed:
            return [], [('info', f'FC {self.target[0]}:{self.target[1]} heard again on the '
                         'mission link, armed: it flies; the mission is not sent again')]
        if self.mission.state == DONE and self.accepted_on == hil_connection:
            return [], [('info', f'FC {self.target[0]}:{self.target[1]} heard again on the '
                         'mission link: it has the mission already')]
        return self.begin(mav, now), []

    def taking(self, now: float) -> bool:
        """True while the FC takes its parameters or mission and answered in the last TAKING_S.

        now: wall time [s].
        """
        busy = self.mission.state == SENDING or (
            self.params is not None and self.params.state == PARAMS_SENDING)
        return self.started and busy and now - self._moved_at < TAKING_S

    def waiting_for(self, now: float, lockstep: bool = False) -> str:
        """What keeps the FC from flying its mission from sim time 0, or '' (ready).

        now: wall time [s]; lockstep: the FC's clock is the simulation's (PX4 SITL). A fleet's
        clock stays at 0 until every member's FC is ready (hil_plant). An FC that takes its
        uploads on the wall clock (the built-in FC) is ready once it accepted the mission and
        its HEARTBEAT says it passed its pre-flight checks (MAV_STATE_STANDBY, or ACTIVE:
        flying); starting the clock after a second without an answer started a late FC's
        mission 1.2-2.5 s of sim after the others' on a loaded machine, and copies of one
        mission met where their paths cross. A lockstep FC can neither take the mission nor
        pass its checks while time is held: it is ready once no upload of ours is under way
        with answers (taking); it takes the mission in the first sim seconds, on the same
        clock as the others. An FC that will not fly (failure()) holds no one.
        """
        if self.failure():
            return ''
        if lockstep:
            return 'its uploads' if self.taking(now) else ''
        if not self.started:
            return 'the FC on the mission link'
        if self.params is not None and self.params.state != PARAMS_DONE:
            return 'its parameters'
        if self.mission.state != DONE:
            return 'the mission upload'
        if self.fc_status not in (mavlink.MAV_STATE_STANDBY, mavlink.MAV_STATE_ACTIVE):
            return 'its pre-flight checks (HEARTBEAT STANDBY)'
        return ''

    def failure(self) -> str:
        """Why the FC will not fly (a parameter, arming, what it says), or ''."""
        if self.params is not None and self.params.state == PARAMS_FAILED:
            return f'FC parameters from {self.params.source}: {self.params.result}'
        if self.start.state == AUTOSTART_FAILED:
            checks = self.words.failing_checks()
            return self.start.reason + (
                f'; the FC says: {"; ".join(checks)}' if checks else '')
        return ''

    # --- input -------------------------------------------------------------------------------
    def _for_us(self, m):
        """None if m is addressed to us (or to all), else the reject (kind, text)."""
        if m.target_system in (0, self.ours[0]) and \
                getattr(m, 'target_component', 0) in (0, self.ours[1]):
            return None
        return ('target', f'{m.get_type()} for {m.target_system}:'
                f'{getattr(m, "target_component", 0)} is not for us')

    def on_message(self, mav, m, now: float, sim_s: float, from_fc: bool,
                   hil_connection: int) -> Tuple[list, Lines, Optional[tuple]]:
        """A message on the mission link: (to send, lines to log, reject or None)."""
        t = m.get_type()
        out: list = []
        logs: Lines = []
        if from_fc and self.quiet_streams:
            out += self._quiet(mav, m, now)
        if t in MISSION_MSGS:
            wrong = self._for_us(m)
            if wrong:
                return [], [], wrong
            self._moved_at = now
            if t == 'MISSION_ACK':
                if self.mission.on_ack(m) and self.mission.state == DONE:
                    self.accepted_on = hil_connection
                    self.start.mission_accepted(sim_s)
            elif t == 'MISSION_REQUEST_LIST':
                out += self.mission.on_request_list(mav, m, now)
            elif t == 'MISSION_COUNT':
                out += self.mission.on_count(mav, m)
            elif t == 'MISSION_CLEAR_ALL':
                out += self.mission.on_clear_all(mav, m)
            else:
                out += self.mission.on_request(mav, m, now)
        elif not from_fc:
            return [], [], None
        elif t == 'COMMAND_ACK' and self.autostart is not None:
            wrong = self._for_us(m)
            if wrong:
                return [], [], wrong
            self.autostart.command_ack(m, sim_s)
        elif t == 'PARAM_VALUE' and self.params is not None:
            self._moved_at = now
            out += self.params.on_value(mav, m, now)
            out += self._after_params(mav, now)
        elif t == 'STATUSTEXT':
            logs += self.words.statustext(m, now)
            refusal = self.words.refusal(m)
            if refusal:
                self.start.refusal(refusal, sim_s)
        elif t == 'AUTOPILOT_VERSION' and not self.version:
            self.heard = True
            logs.append(('info', self._version(m)))
        elif t == 'FILE_TRANSFER_PROTOCOL':
            sends, lines = self.words.on_ftp(mav, m, now)
            out, logs = out + sends, logs + lines
        elif t.startswith('UNKNOWN_'):
            d = mav_ext.decode(m)
            if d is not None:
                sends, lines = self.words.on_ext(mav, d, now)
                out, logs = out + sends, logs + lines
        return out, logs + self.lines(), None

    def _quiet(self, mav, m, now: float) -> list:
        """Stop the FC's stream of m on this link if the session does not read it (once)."""
        i = m.get_msgId()
        if i in READ_IDS or i in NOT_STREAMS or i in self.stopped or i < 0:
            return []
        self.stopped[i] = m.get_type()
        self._stop_news.append(m.get_type())
        self._stopped_at = now
        return [mav.command_long_encode(self.target[0], self.target[1],
                                        mavlink.MAV_CMD_SET_MESSAGE_INTERVAL, 0, float(i), -1.0,
                                        0, 0, 0, 0, 0)]

    def _quiet_lines(self, now: float) -> Lines:
        if not self._stop_news or now - self._stopped_at < QUIET_SAY_S:
            return []
        names, self._stop_news = self._stop_news, []
        return [('info', f'FC {self.target[0]}:{self.target[1]}: asked to stop {len(names)} '
                 f'streams on the mission link that the bridge does not read '
                 f'({", ".join(sorted(names))}; {len(self.stopped)} in all): each cost it and '
                 'us a datagram per message, times the real-time factor')]

    def _after_params(self, mav, now: float) -> list:
        if self.params is not None and self.params.state == PARAMS_DONE and \
                self.mission.state == IDLE and self.started:
            return self.mission.start(mav, self.target[0], self.target[1], now)
        return []

    def heartbeat(self, m) -> None:
        """The served FC's HEARTBEAT on this link (its readiness and armed flag)."""
        self.heard = True
        self.fc_status = int(m.system_status)
        self.start.heartbeat(m)

    def _version(self, m) -> str:
        """AUTOPILOT_VERSION as a log line.

        PX4 packs major.minor.patch.type in the bytes of flight_sw_version and the first 8
        bytes of its git hash in flight_custom_version.
        """
        v = int(m.flight_sw_version)
        sw = f'{v >> 24 & 0xFF}.{v >> 16 & 0xFF}.{v >> 8 & 0xFF}'
        kind = FW_TYPES.get(v & 0xFF, str(v & 0xFF))
        git = bytes(m.flight_custom_version[:8]).hex() if m.flight_custom_version else ''
        self.version = f'{sw} {kind}' + (f', git {git}' if git.strip('0') else '')
        return f'FC {self.target[0]}:{self.target[1]}: autopilot {m.get_srcSystem()}, ' \
            f'firmware {self.version}'

    def poll(self, mav, now: float, sim_s: float, running: bool) -> Tuple[list, Lines]:
        """Retries (wall time) and the autostart's commands (sim time, while running)."""
        out = self.mission.poll(now)
        if not self.heard and now - self._greeted_at >= GREET_S:
            self._greeted_at = now
            out.append(mav.command_long_encode(
                self.target[0], self.target[1], mavlink.MAV_CMD_REQUEST_MESSAGE, 0,
                float(mavlink.MAVLINK_MSG_ID_AUTOPILOT_VERSION), 0, 0, 0, 0, 0, 0))
        if self.params is not None:
            out += self.params.poll(mav, now) + self._after_params(mav, now)
        if running:
            out += self.start.poll(mav, sim_s)
        sends, lines = self.words.poll(mav, now)
        return out + sends, lines + self.lines() + self._quiet_lines(now)

    def lines(self) -> Lines:
        """The parts' news, and once the failure that keeps the FC from flying (an error)."""
        logs: Lines = []
        for part in (self.params, self.mission, self.start):
            if part is None:
                continue
            for e in part.events:
                if part is self.autostart and 'refused' in e:
                    checks = self.words.failing_checks()
                    logs.append(('warning', e + (f'; the FC says: {"; ".join(checks)}'
                                                 if checks else '')))
                else:
                    logs.append(('info', e))
            part.events.clear()
        why = self.failure()
        if why and not self._failure_said:
            self._failure_said = True
            logs.append(('error', f'the flight controller will not fly: {why}'))
        return logs
