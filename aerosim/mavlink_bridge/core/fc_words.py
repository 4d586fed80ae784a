"""What the flight controller says, for our log: STATUSTEXT and PX4's events (pure, no sockets).

STATUSTEXT is logged as it comes (the same text at most once per REPEAT_S); one that says the
FC will not arm or start (``refusal()``, PX4's words) goes to the session's AutoStart, which
judges whether it persists (the built-in FC says so this way). PX4 v1.16 sends it on a link
only while a ground station's HEARTBEAT (MAV_TYPE_GCS) was heard there
(streams/STATUSTEXT.hpp: `if (_mavlink->is_gcs_connected())`), and commander counts any GCS
heartbeat on any link as the ground station (Commander::dataLinkCheck: gcs_connection_lost
cleared): a bridge posing as one would let PX4 arm without a ground station under NAV_DLL_ACT
and hide the datalink-loss failsafe a user tests by closing QGroundControl. So the bridge
sends no GCS heartbeat; PX4's words come from its events interface, which it sends on every
link (mavlink_main.cpp, SendProtocol::update), with the texts in its component metadata:
MAV_CMD_REQUEST_MESSAGE(COMPONENT_METADATA) -> the general metadata file's mftp:// URI
(etc/extras/component_general.json.xz) -> its entry of type COMP_METADATA_TYPE_EVENTS ->
the events file (etc/extras/all_events.json.xz), both read over MAVLink FTP. Until the texts
arrive, events wait (at most QUEUE); without them an event is logged by its id.

PX4 reports its health and arming checks as events (HealthAndArmingChecks, Report::report):
a summary (commander_arming_check_summary), one event per failing check (groups arming_check,
health), a health summary. The last report is kept: ``failing_checks()`` names what blocks
arming when PX4 refuses it.
"""

from typing import List, Optional, Tuple

from mavlink_bridge.core import ftp
from mavlink_bridge.core.events import EventText, Formatter, Receiver, load_json
from mavlink_bridge.core.mav import mavlink
from mavlink_bridge.core.mav_ext import (
    COMP_METADATA_TYPE_EVENTS,
    COMPONENT_METADATA,
    MAV_EVENT_CURRENT_SEQUENCE_FLAGS_RESET,
    REQUEST_EVENT,
    Decoded,
    ExtMessage,
)

REPEAT_S = 5.0              # the same text is logged at most this often [s]
# PX4's commander's words when it will not arm or start, at MAV_SEVERITY_CRITICAL
# (mavlink_log_critical): each failing check "Preflight Fail: ..." with every report of its
# checks, on a change and on an arming request (HealthAndArmingChecks.cpp, checks/*.cpp),
# "Arming denied: ..." and "Mission start denied! No valid mission" (Commander.cpp)
REFUSALS = ('Preflight Fail', 'Arming denied', 'Mission start denied')
QUEUE = 200                 # events kept until the texts arrive
REQUEST_S, REQUEST_TRIES = 1.0, 5       # COMPONENT_METADATA asked for this often, this many
WARNING_LEVEL = 4           # events at this level or more severe are logged as warnings
INFO_LEVEL = 6              # ... up to this one as info; debug and protocol are not logged
REPORT_GROUPS = ('arming_check', 'health')
# navigation_mode_group_t bits (PX4's events enum): the modes autostart arms and flies in,
# Hold (loiter) and Mission; a check's first argument says which modes it blocks
MODES_AUTOSTART = 8 | 16
ARMING_SUMMARY = 'commander_arming_check_summary'
NEED, ASKED, GENERAL, EVENTS, READY, FAILED = (
    'not needed yet', 'asked for COMPONENT_METADATA', 'reading the general metadata',
    'reading the events metadata', 'ready', 'failed')

Result = Tuple[list, List[Tuple[str, str]]]         # (messages to send, (level, text) lines)


class FcWords:
    """The served FC's STATUSTEXT and events; call poll() regularly (retries)."""

    def __init__(self, target: Tuple[int, int]):
        """target: the FC (sysid, compid) events come from and requests go to."""
        self.target = target
        self.receiver = Receiver()
        self.formatter: Optional[Formatter] = None
        self.meta_state = NEED
        self.meta_error = ''
        self.events = 0             # events taken
        self.report: List[EventText] = []       # the last health/arming report's checks
        self._report_open: Optional[List[EventText]] = None
        self._known: set = set()            # check texts of the last report, logged already
        self._queue: Optional[List[tuple]] = []   # None once rendered
        self._said: dict = {}
        self._ftp: Optional[ftp.FtpRead] = None
        self._asked_at = -1e9
        self._asks = 0

    # --- STATUSTEXT ----------------------------------------------------------------------------
    def statustext(self, m, now: float) -> List[Tuple[str, str]]:
        """A STATUSTEXT of the FC: a line, unless said in the last REPEAT_S."""
        text = m.text.rstrip('\x00').strip()
        level = 'warning' if m.severity <= mavlink.MAV_SEVERITY_WARNING else 'info'
        return self._say(level, text, now, m.get_srcSystem(), m.get_srcComponent())

    @staticmethod
    def refusal(m) -> str:
        """A STATUSTEXT's text if it says the FC will not arm or start (REFUSALS), else ''.

        Only at severity CRITICAL or more severe, as PX4 says them.
        """
        text = m.text.rstrip('\x00').strip()
        return text if m.severity <= mavlink.MAV_SEVERITY_CRITICAL and \
            text.startswith(REFUSALS) else ''

    def _say(self, level: str, text: str, now: float, sysid: int, compid: int):
        if not text or now - self._said.get(text, -1e9) < REPEAT_S:
            return []
        self._said[text] = now
        return [(level, f'FC {sysid}:{compid} says: {text}')]

    # --- the events interface ------------------------------------------------------------------
    def on_ext(self, mav, d: Decoded, now: float) -> Result:
        """EVENT, CURRENT_EVENT_SEQUENCE, RESPONSE_EVENT_ERROR or COMPONENT_METADATA."""
        if (d.sysid, d.compid) != tuple(self.target):
            return [], []
        f, name = d.fields, d.get_type()
        out, logs = [], []
        if name == 'EVENT':
            if f['destination_system'] not in (0, mav.srcSystem):
                return [], []
            take, req = self.receiver.on_event(f['sequence'], now)
            out += self._requests(req)
            if take:
                self.events += 1
                logs += self._event(f['id'], f['log_levels'], f['arguments'], now)
        elif name == 'CURRENT_EVENT_SEQUENCE':
            out += self._requests(self.receiver.on_current(
                f['sequence'], bool(f['flags'] & MAV_EVENT_CURRENT_SEQUENCE_FLAGS_RESET), now))
        elif name == 'RESPONSE_EVENT_ERROR':
            if (f['target_system'], f['target_component']) == (mav.srcSystem, mav.srcComponent):
                lost = self.receiver.lost
                out += self._requests(self.receiver.on_error(
                    f['sequence'], f['sequence_oldest_available'], now))
                # events gone before we first heard the FC are no news; after, a loss is
                if self.receiver.lost > lost and self.events:
                    logs.append(('info', f'FC {self.target[0]}:{self.target[1]}: '
                                 f'{self.receiver.lost - lost} of its earlier events are no '
                                 'longer available'))
        elif name == COMPONENT_METADATA.name and self.meta_state == ASKED:
            out += self._read(mav, f['uri'], GENERAL, now)
        if name != COMPONENT_METADATA.name and self.meta_state == NEED:
            self.meta_state = ASKED         # it speaks the events interface: get its texts
            out += self._ask(mav, now)
        return out, logs + self._meta_logs(now)

    def _requests(self, ranges) -> list:
        return [ExtMessage(REQUEST_EVENT, target_system=self.target[0],
                           target_component=self.target[1], first_sequence=a, last_sequence=b)
                for a, b in ranges]

    def _event(self, event_id: int, levels: int, args: bytes, now: float):
        if self.formatter is None:
            if self._queue is not None and len(self._queue) < QUEUE:
                self._queue.append((event_id, levels, bytes(args)))
            return []
        return self._log_event(self.formatter.render(event_id, levels, bytes(args)), now)

    def _log_event(self, ev: EventText, now: float) -> List[Tuple[str, str]]:
        if ev.name == ARMING_SUMMARY:
            self._known = {e.text for e in self.report}
            self._report_open = []
            return []
        if ev.group in REPORT_GROUPS and ev.kind != 'summary':
            if self._report_open is not None:
                self._report_open.append(ev)
                self.report = list(self._report_open)
            # the report repeats on every change: a check is logged when it appears
            if ev.level > WARNING_LEVEL or ev.text in self._known:
                return []
            self._known.add(ev.text)
            return self._say('info', f'check: {ev.text}', now, *self.target)
        if ev.level > INFO_LEVEL:
            return []
        return self._say('warning' if ev.level <= WARNING_LEVEL else 'info', ev.text, now,
                         *self.target)

    def failing_checks(self, modes: int = MODES_AUTOSTART) -> List[str]:
        """The checks of the FC's last report that block `modes` (errors first).

        PX4's arming-check events carry the modes they block as their first argument
        (navigation_mode_group_t); "No offboard signal" blocks Offboard only, not a mission.
        """
        return [e.text for e in sorted(self.report, key=lambda e: e.level)
                if e.level <= WARNING_LEVEL and (not e.args or int(e.args[0]) & modes)]

    # --- the texts: component metadata over MAVLink FTP ---------------------------------------
    def _ask(self, mav, now: float) -> list:
        self._asked_at, self._asks = now, self._asks + 1
        return [mav.command_long_encode(self.target[0], self.target[1],
                                        mavlink.MAV_CMD_REQUEST_MESSAGE, 0,
                                        float(COMPONENT_METADATA.msgid), 0, 0, 0, 0, 0, 0)]

    def _read(self, mav, uri: str, state: str, now: float) -> list:
        path = ftp.path_of_uri(uri)
        if path is None:
            return self._fail(f'metadata at {uri!r}, not on the FC (mftp://)')
        self.meta_state = state
        self._ftp = ftp.FtpRead(self.target, path)
        return self._ftp.start(mav, now)

    def _fail(self, why: str) -> list:
        self.meta_state, self.meta_error = FAILED, why
        return []

    def on_ftp(self, mav, m, now: float) -> Result:
        """A FILE_TRANSFER_PROTOCOL reply: the metadata files."""
        if self._ftp is None or self.meta_state not in (GENERAL, EVENTS):
            return [], []
        out = self._ftp.on_message(mav, m, now)
        return out + self._ftp_progress(mav, now), self._meta_logs(now)

    def _ftp_progress(self, mav, now: float) -> list:
        r = self._ftp
        if r is None or r.state == ftp.FAILED:
            return self._fail(f'MAVLink FTP: {r.error if r else "no transfer"}')
        if r.state != ftp.DONE:
            return []
        try:
            meta = load_json(bytes(r.data))
            if self.meta_state == GENERAL:
                uri = next(t.get('uri', '') for t in meta.get('metadataTypes', [])
                           if t.get('type') == COMP_METADATA_TYPE_EVENTS)
                return self._read(mav, uri, EVENTS, now)
            self.formatter = Formatter(meta)
        except (ValueError, StopIteration, AttributeError, TypeError) as exc:
            return self._fail(f'{r.path}: {exc or "no events metadata listed"}')
        self.meta_state, self._ftp = READY, None
        return []

    def _meta_logs(self, now: float) -> List[Tuple[str, str]]:
        """A line when the texts arrived or could not be had; the queued events rendered."""
        logs: List[Tuple[str, str]] = []
        if self.meta_state == READY and self._queue is not None:
            assert self.formatter is not None
            logs.append(('info', f'FC {self.target[0]}:{self.target[1]}: its events metadata '
                         f'read over MAVLink FTP ({len(self.formatter.events)} events): its '
                         'words are logged'))
            queued, self._queue = self._queue, None
            for e in queued:
                logs += self._log_event(self.formatter.render(*e), now)
        elif self.meta_state == FAILED and self._queue is not None:
            logs.append(('warning', f'FC {self.target[0]}:{self.target[1]}: no events '
                         f'metadata ({self.meta_error}): its events are logged by id'))
            self.formatter = Formatter({'version': 1, 'components': {}})
            queued, self._queue = self._queue, None
            for e in queued:
                logs += self._log_event(self.formatter.render(*e), now)
        return logs

    def poll(self, mav, now: float) -> Result:
        """Retries: a late event, COMPONENT_METADATA, an FTP request."""
        out = self._requests(self.receiver.poll(now))
        if self.meta_state == ASKED and now - self._asked_at >= REQUEST_S:
            if self._asks >= REQUEST_TRIES:
                self._fail(f'no COMPONENT_METADATA after {REQUEST_TRIES} requests')
            else:
                out += self._ask(mav, now)
        elif self.meta_state in (GENERAL, EVENTS) and self._ftp is not None:
            out += self._ftp.poll(mav, now) + self._ftp_progress(mav, now)
        return out, self._meta_logs(now)

    def describe(self) -> str:
        """A status line: events taken and the metadata's state."""
        return (f'{self.events} events, {self.receiver.lost} lost, metadata {self.meta_state}'
                + (f' ({self.meta_error})' if self.meta_error else ''))

