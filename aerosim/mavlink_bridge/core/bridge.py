"""The MAVLink HIL bridge's decisions, without ROS: what to send, take, refuse and log.

HilBridge owns the bridge's shared state: the served FC, its session (fc_session.FcSession:
parameters, mission, autostart, the FC's words), the step bookkeeping of lockstep, the
counters. Two kinds of thread call it: the executor (vehicle
state, /sim/status, timers) and one reader thread per link (each datagram). Every method takes
the one lock, decides, and returns Actions: frames to send per endpoint, motor commands,
lines to log, the reject. The node (mavlink_bridge_node) carries them out after the lock is
released. In the hil_plant composition a motor command steps the simulation, and the new
state comes back into on_state() from the same reader thread.

Two links. The HIL link carries the sensors and the actuator outputs (UDP, or the TCP server
PX4 SITL's simulator_mavlink connects to). PX4 ignores everything else on that link
(SimulatorMavlink::handle_message), so with `mission_link` set the parameters, the mission
and the arming commands of `autostart` go to one of the FC's MAVLink instances over UDP (for
PX4 SITL its onboard payload link, 14280 + instance; we bind its remote port, 14030 +
instance, where PX4 sends), addressed to the FC only: PX4 would forward anything else to the
ground station (see fc_session). HEARTBEAT and HOME_POSITION (seed 003) go on the HIL link.
Without a mission link everything uses the HIL link (the built-in FC, and FCs that take
everything on one link).

Peers are alive while heard within peer_timeout_s of wall time or of sim time: a lockstep FC
lives on the simulation clock (PX4's HEARTBEAT is 1 Hz of its time), so a machine too loaded
to run the simulation at real time does not make it look gone.
Reject kinds: bridge_config.REJECT_KINDS.
"""

from dataclasses import dataclass, field
import threading
from typing import Any, List, Optional, Sequence, Tuple

import numpy as np

from mavlink_bridge.core import commands, hil, mav_ext
from mavlink_bridge.core.autostart import result_name
from mavlink_bridge.core.bridge_config import (  # noqa: F401 - re-exported: the node, tests
    ANY_TYPE,
    PARAMETERS,
    REJECT_KINDS,
    BridgeConfig,
    make_mixer,
    parse_utc,
    vehicle_scenario,
)
from mavlink_bridge.core.bridge_queries import BridgeQueries
from mavlink_bridge.core.endpoint import Endpoint, first_frame, is_signed
from mavlink_bridge.core.fc_params import load_params
from mavlink_bridge.core.fc_session import FcSession
from mavlink_bridge.core.mav import mavlink
from mavlink_bridge.core.mission import items_from_scenario
from mavlink_bridge.core.mixer import ActuatorError
from mavlink_bridge.core.peers import ServedFc, is_flight_controller
from sim_core.actions import Actions as BaseActions
from sim_core.clock import ResetDetector, SimState
from sim_core.config import checked
from sim_core.decimator import Decimator
from sim_core.frames import VehicleSample
from sim_core.kinds import info
from sim_core.link import Verdict
from sim_core.scenario import Scenario
from sim_sensors.core.landing_target import DownwardSensors, TargetConfig
from sim_sensors.core.suite import SensorSuite, SuiteConfig

MAX_SAID = 1024         # (peer, command, result) kinds logged; the rest only counted


@dataclass
class Actions(BaseActions):
    """A decision (sim_core.actions) with the HIL link's own: replies, motor commands, sample.

    sends: (Endpoint, messages) pairs; logs: (level, text); rejects: at most one per datagram.
    """

    replies: List[Tuple[Endpoint, Any, tuple]] = field(default_factory=list)  # (ep, addr, msgs)
    commands: List[Tuple[Sequence[float], int]] = field(default_factory=list)  # (thr, t_ns)
    sample: Any = None              # (SensorSample, t_ns) of this step, for the sensor topics
    status_changed: bool = False    # mavlink/status is out of date

    def send(self, ep: Endpoint, *msgs) -> None:
        """Queue msgs for ep."""
        if msgs:
            self.sends.append((ep, msgs))

    def reply(self, ep: Endpoint, addr, *msgs) -> None:
        """Queue msgs for the sender at addr on ep (untargeted ones too: a requested message)."""
        if msgs:
            self.replies.append((ep, addr, msgs))


class HilBridge(BridgeQueries):
    """The HIL link's state and rules (see the module docstring); queries: BridgeQueries."""

    def __init__(self, cfg: BridgeConfig, scenario: Scenario, suite_cfg: SuiteConfig,
                 hil_ep: Endpoint, mission_link: Optional[Endpoint] = None,
                 allow_ids=(), target_cfg: Optional[TargetConfig] = None):
        """cfg: parameters; hil_ep: the HIL link; mission_link: the FC's MAVLink instance.

        target_cfg: the landing-target sensor and range finder of a vehicle that lands on
        decks (sim_core.kinds lands_on_decks), sampled when on_state is given decks.
        """
        self.cfg = cfg = checked(cfg, PARAMETERS)
        self.sysid, self.compid = cfg.system_id, cfg.component_id
        self.hil, self.mlink = hil_ep, mission_link
        self.mission_ep = mission_link or hil_ep     # where the mission and commands go
        self.allow_ids = allow_ids
        self.scenario = scenario
        self.utc0_us = parse_utc(cfg.gps_utc_start)
        self.mixer = make_mixer(cfg, scenario)
        self.suite = SensorSuite(suite_cfg, scenario)
        self.downward = None
        if info(scenario.vehicle_kind).lands_on_decks:
            self.downward = DownwardSensors(target_cfg or TargetConfig(),
                                            np.random.default_rng([suite_cfg.seed, 0x1A4D]))
        self.encoder = hil.HilSensorEncoder()
        self.dec_state = Decimator(cfg.hil_state_rate_hz) if cfg.hil_state_rate_hz > 0 else None
        self.served = ServedFc(cfg.fc_system_id, cfg.fc_component_id)
        self.session = FcSession(
            items_from_scenario(scenario.mission), (self.sysid, self.compid),
            self.served.target(), cfg.mission_timeout_s, cfg.mission_retries,
            {'ready_s': cfg.autostart_ready_s, 'timeout_s': cfg.autostart_timeout_s}
            if cfg.autostart else None,
            load_params(cfg.fc_param_file) if cfg.fc_param_file else None,
            quiet_streams=cfg.quiet_streams)
        self.mission, self.autostart = self.session.mission, self.session.autostart
        self.lock = threading.Lock()      # owner of everything below and the counters
        self.count = {'rx': 0, 'actuators': 0, 'ignored': 0, 'sensor': 0, 'gps': 0,
                      'commands': 0, 'target': 0}
        self._commands_said: set = set()    # (peer, command, result) logged once
        self.sim_state: Optional[SimState] = None
        self.fast = False               # the simulation runs as fast as possible
        self._last_sensor_ns: Optional[int] = None
        self._answered_ns: Optional[int] = None  # the frame the FC's last answer was for [ns]
        self._halted_at_ns = 0          # last frame sent when the sim was paused/stopped [ns]
        self.last_state_ns = -1
        self._clock_reset = ResetDetector()
        self._engaged = False
        self._command: Any = self.mixer.idle()      # the last valid actuator command
        self._ran = False               # the simulation has run (the session may begin)

    def endpoints(self) -> List[Endpoint]:
        """The links: the HIL link, and the mission link if any."""
        return [ep for ep in (self.hil, self.mlink) if ep is not None]

    def running(self) -> bool:
        """The simulation runs (sensors follow the steps, actuators taken)."""
        return self.sim_state == SimState.RUNNING

    # --- timers (wall clock) -------------------------------------------------------------------
    def heartbeat(self, now: float) -> Actions:
        """HEARTBEAT on every link; peers silent for peer_timeout_s dropped (while running)."""
        act = Actions()
        with self.lock:
            self._heartbeat(act, now)
        return act

    def _heartbeat(self, act: Actions, now: float) -> None:
        state = SimState.STOPPED if self.sim_state is None else self.sim_state
        act.send(self.hil, hil.heartbeat(self.hil.tx, state))
        if not self.running():
            return      # a lockstep FC is frozen with the simulation: its silence is no loss
        for ep in self.endpoints():
            for p in ep.peers.expire(now, self.sim_s):
                act.status_changed = True
                act.logs.append(('warning', f'peer {p.sysid}:{p.compid} silent on the {ep.name} '
                                 f'for {self.cfg.peer_timeout_s:g} s (wall and sim time): '
                                 'dropped'))

    @property
    def sim_s(self) -> float:
        """The simulation time of the last state [s] (0 before the first)."""
        return max(self.last_state_ns, 0) * 1e-9

    def home(self) -> Actions:
        """HOME_POSITION on the HIL link, while running."""
        act = Actions()
        if self.running():
            t_us = self.last_state_ns // 1000 if self.last_state_ns > 0 else 0
            act.send(self.hil, hil.home_position(self.hil.tx, self.scenario.origin, t_us))
        return act

    def poll(self, now: float) -> Actions:
        """The session's retries, its autostart commands and the FC's words."""
        act = Actions()
        with self.lock:
            self.session.set_target(self.served.target())
            sends, lines = self.session.poll(self.mission_ep.tx, now, self.sim_s,
                                             self.running())
            act.send(self.mission_ep, *sends)
            self._lines(act, lines)
        return act

    def _lines(self, act: Actions, lines) -> None:
        if lines:
            act.logs.extend(lines)
            act.status_changed = True

    def stopped_frames(self) -> Actions:
        """The last words: HEARTBEAT with the seed's Stopped state (MAV_STATE_POWEROFF)."""
        act = Actions()
        act.send(self.hil, hil.heartbeat(self.hil.tx, SimState.STOPPED))
        return act

    def _begin(self, act: Actions, now: float) -> None:
        """The FC is there and the simulation runs: the session starts (parameters, mission)."""
        self.session.set_target(self.served.target())
        act.send(self.mission_ep, *self.session.begin(self.mission_ep.tx, now))
        self._lines(act, self.session.lines())

    # --- the simulation ------------------------------------------------------------------------
    def on_sim_status(self, state: SimState, time_scale: float, now: float) -> Actions:
        """/sim/status: follow pause/run; the first RUNNING starts the mission upload."""
        act = Actions()
        with self.lock:
            self.fast = time_scale == 0.0
            if state == self.sim_state:
                return act
            what = ('sensors follow the steps, actuators accepted' if state == SimState.RUNNING
                    else 'sensors only for steps taken (/sim/step), actuators ignored')
            act.logs.append(('info', f'simulation {state.name}: {what}'))
            if state != SimState.RUNNING:
                self._halted_at_ns = self._last_sensor_ns or 0
            else:
                for ep in self.endpoints():
                    ep.peers.touch_all(now)
            self.sim_state = state
            if state == SimState.RUNNING:
                self._ran = True
            if state == SimState.RUNNING and not self.session.started:
                fc = (self.mlink or self.hil).peers.flight_controller()
                if fc:
                    self.served.learn(*fc)
                if self.mlink is None or fc:    # the FC heard on the mission link already
                    self._begin(act, now)
            self._heartbeat(act, now)
        return act

    def on_state(self, s: VehicleSample, decks: Optional[Sequence] = None) -> Actions:
        """Sensors of one simulation step (its VehicleSample), to the FC.

        decks: the world's decks now ((DeckSpec, PadPose) pairs; None: a world without decks,
        or no world): a vehicle that lands on decks also sends LANDING_TARGET and
        DISTANCE_SENSOR (sim_sensors.core.landing_target) when sampled.

        Every step the simulation took, and only those: the state itself says so (its
        time advanced), whatever /sim/status said and when it arrived (another topic: no order
        with this one). A paused simulation publishes no new time; /sim/step while paused does,
        and the FC gets those frames. The same states in give the same frames out, live or
        replayed from a bag.
        """
        act = Actions()
        t_ns = s.t_ns
        with self.lock:
            if self._clock_reset.went_back(t_ns):
                act.logs.append(('warning', 'sim time went backwards (reset): sensors restart; '
                                 'a real FC in lockstep must be restarted too'))
                self.encoder = hil.HilSensorEncoder()
                if self.dec_state:
                    self.dec_state.reset()
                self._halted_at_ns = 0
            advanced = t_ns > self.last_state_ns
            self.last_state_ns = t_ns
            if not advanced or t_ns <= 0:
                return act
            sample = self.suite.sample(*s)
            act.sample = (sample, t_ns)
            tx = self.hil.tx
            out = []
            if sample.imu is not None:
                out.append(self.encoder.encode(tx, sample, t_ns // 1000))
                self.count['sensor'] += 1
            for fix in sample.gnss:
                out.append(hil.hil_gps(tx, fix, self.utc0_us + fix.t_ns // 1000))
                self.count['gps'] += 1
            if self.downward is not None and decks is not None:
                rng = self.downward.range(t_ns, s.p_enu, s.q_enu_flu, decks)
                if rng is not None:
                    out.append(hil.distance_sensor(tx, rng, t_ns // 1000))
                tgt = self.downward.target(t_ns, s.p_enu, s.q_enu_flu, decks)
                if tgt is not None:
                    out.append(hil.landing_target(tx, tgt, t_ns // 1000))
                    self.count['target'] += 1
            if self.dec_state is not None and self.dec_state.due(t_ns):
                out.append(hil.hil_state_quaternion(tx, t_ns // 1000, self.scenario.origin,
                                                    s.p_enu, s.v_enu, s.q_enu_flu, s.a_enu,
                                                    s.w_flu, self.scenario.environment.gravity))
            # No HIL_SENSOR at this step, so no FC answer will come: the last command holds,
            # if the FC answered the latest frame (a silent FC must not be answered for).
            if sample.imu is None and self._engaged and \
                    self._answered_ns == self._last_sensor_ns:
                act.commands.append((self._command, t_ns))
            if sample.imu is not None:
                self._last_sensor_ns = t_ns
        act.send(self.hil, *out)
        return act

    # --- MAVLink input (reader threads) --------------------------------------------------------
    def on_datagram(self, ep: Endpoint, data: bytes, addr, now: float) -> Actions:
        """One datagram (TCP: one read): act on it; one reject if anything was wrong."""
        act = Actions()
        msgs = ep.parse(data)
        problem = None
        if ep.udp and not msgs:
            problem = ('truncated', f'{len(data)} bytes and no complete MAVLink frame')
        with self.lock:
            for m in msgs:
                src = mav_ext.source(m)
                if m.get_type() == 'BAD_DATA':
                    why = ('undecodable', f'undecodable MAVLink input: {m.reason}')
                elif src == (self.sysid, self.compid):
                    continue   # our own echo
                elif is_signed(m):
                    why = ('signed', f'signed {m.get_type()} from {src[0]}:{src[1]}: this bridge '
                           'holds no signing key and drops signed frames (MAVLink spec)')
                elif self.allow_ids and src[0] not in self.allow_ids:
                    why = ('peer', f'{m.get_type()} from system {src[0]}, not in '
                           'allow_system_ids')
                elif not ep.at_pin(addr) and self._fc_like(m, src):
                    why = ('peer', self._impostor(ep, m, src, addr))
                else:
                    self.count['rx'] += 1
                    ep.link.learn(addr)
                    ep.heard(src[0], addr)
                    ep.peers.seen(src[0], src[1], now, self.sim_s)
                    why = self._dispatch(act, ep, m, addr, now)
                problem = problem or why
        if problem:
            act.refuse(*problem)
        return act

    def vet_connection(self, data: bytes) -> Verdict:
        """A new TCP connection's first bytes: the FC's (endpoint.first_frame) or a stranger's."""
        with self.lock:
            return first_frame(data, self._may_be_fc, self.served.describe())

    def _may_be_fc(self, sysid: int, compid: int) -> bool:
        """(sysid, compid) may be the served FC: its ids (as heard or set), allowed, not ours."""
        return (sysid, compid) != (self.sysid, self.compid) and self.served.matches(
            sysid, compid) and (not self.allow_ids or sysid in self.allow_ids)

    def _fc_like(self, m, src) -> bool:
        """True if m speaks as the served FC: its ids, actuators, or an FC HEARTBEAT it may be."""
        t = m.get_type()
        if t == 'HIL_ACTUATOR_CONTROLS' or self.served.exactly(*src):
            return True
        return t == 'HEARTBEAT' and is_flight_controller(m.type, m.autopilot) and \
            self.served.matches(*src)

    def _impostor(self, ep: Endpoint, m, src, addr) -> str:
        """Why m, from addr, is not the FC's although it speaks as the FC (see _fc_like)."""
        pin = f'{ep.pinned[0]}:{ep.pinned[1]}' if ep.pinned else '?'
        what = 'mission_link' if ep is self.mlink else 'fc_address'
        return (f'{m.get_type()} from {src[0]}:{src[1]} at {addr[0]}:{addr[1]}, but the '
                f'flight controller ({self.served.describe()}) is at {pin} ({what}): '
                'ignored, it does not drive the vehicle')

    def _dispatch(self, act: Actions, ep: Endpoint, m, addr, now: float):
        """Act on one message; return None, or the reject (kind, text) if refused."""
        t = m.get_type()
        src = mav_ext.source(m)
        if t == 'HIL_ACTUATOR_CONTROLS':
            return self._on_actuators(act, m) if ep is self.hil else None
        if t == 'HEARTBEAT':
            self._on_heartbeat(act, ep, m, addr, now)
            return None
        if t in ('COMMAND_LONG', 'COMMAND_INT'):
            self._on_command(act, ep, m, addr)
            return None
        if ep is not self.mission_ep:
            return None
        sends, lines, wrong = self.session.on_message(
            ep.tx, m, now, self.sim_s, self.served.matches(*src), self._hil_connection())
        act.send(ep, *sends)
        self._lines(act, lines)
        return wrong

    def _on_command(self, act: Actions, ep: Endpoint, m, addr) -> None:
        """A command: answered with its COMMAND_ACK if addressed to us (core/commands.py)."""
        if not commands.for_us(m, (self.sysid, self.compid)):
            return          # a broadcast, or another component's (PX4 forwards commands)
        offers: commands.Offers = {}
        if ep is self.hil:      # seed 003's HEARTBEAT and HOME_POSITION go on the HIL link
            t_us = max(self.last_state_ns, 0) // 1000
            state = self.sim_state if self.sim_state is not None else SimState.STOPPED
            offers = {mavlink.MAVLINK_MSG_ID_HOME_POSITION:
                      lambda: hil.home_position(ep.tx, self.scenario.origin, t_us),
                      mavlink.MAVLINK_MSG_ID_HEARTBEAT: lambda: hil.heartbeat(ep.tx, state)}
        out, result = commands.answer(ep.tx, m, offers)
        act.reply(ep, addr, *out)
        self.count['commands'] += 1
        src = (m.get_srcSystem(), m.get_srcComponent())
        key = (src, m.command, result)
        if key not in self._commands_said and len(self._commands_said) < MAX_SAID:
            self._commands_said.add(key)
            what = commands.command_name(m.command) + (
                f'({int(round(m.param1))})' if m.command == commands.REQUEST_MESSAGE else '')
            act.logs.append(('info', f'{m.get_type()} {what} from {src[0]}:{src[1]} on the '
                             f'{ep.name}: answered {result_name(result)} (said once per '
                             'peer, command and result)'))

    def _hil_connection(self) -> int:
        """Connections the HIL link took (a TCP server: PX4 connecting again after a restart)."""
        return getattr(self.hil.link, 'clients', 0)

    def _on_heartbeat(self, act: Actions, ep: Endpoint, m, addr, now: float) -> None:
        src = (m.get_srcSystem(), m.get_srcComponent())
        new = ep.peers.heartbeat(m, f'{addr[0]}:{addr[1]}', now, self.sim_s)
        if new:
            act.logs.append(('info', f'peer {src[0]}:{src[1]} on the {ep.name} at '
                             f'{addr[0]}:{addr[1]}: type {m.type}, autopilot {m.autopilot}, '
                             f'status {m.system_status}'))
        fc = is_flight_controller(m.type, m.autopilot)
        if fc and self.served.learn(*src):
            act.logs.append(('info', f'serving flight controller {self.served.describe()}'))
        if not (fc and self.served.matches(*src)) or ep is not self.mission_ep:
            return
        self.session.set_target(self.served.target())
        self.session.heartbeat(m)
        if new and not self.session.started and self._ran:
            self._begin(act, now)       # the first FC heard while the simulation runs
        elif new:   # back after a silence (or another): the mission if it may take it
            sends, lines = self.session.fc_back(
                ep.tx, now, bool(m.base_mode & mavlink.MAV_MODE_FLAG_SAFETY_ARMED),
                self._hil_connection())
            act.send(ep, *sends)
            self._lines(act, lines + self.session.lines())

    def _on_actuators(self, act: Actions, m):
        src = (m.get_srcSystem(), m.get_srcComponent())
        if not self.served.matches(*src):
            return ('peer', f'HIL_ACTUATOR_CONTROLS from {src[0]}:{src[1]}, not the flight '
                    f'controller this link serves ({self.served.describe()})')
        if self.served.learn(*src):
            act.logs.append(('info', f'serving flight controller {self.served.describe()}'))
        try:
            armed = bool(m.mode & mavlink.MAV_MODE_FLAG_SAFETY_ARMED)
            thr, refused = self.mixer.command(m.controls, armed), None
        except ActuatorError as exc:       # garbage is refused whatever the sim does
            thr, refused = None, ('value', f'HIL_ACTUATOR_CONTROLS rejected: {exc}; motors keep '
                                  'the last valid command')
        t_ns = hil.answered_sensor_ns(m.time_usec, self._last_sensor_ns)
        halted = self.sim_state in (SimState.PAUSED, SimState.STOPPED) and \
            t_ns is not None and t_ns <= self._halted_at_ns
        if t_ns is None or halted:
            # no frame sent yet, or paused/stopped: the vehicle does not react. Answers to
            # frames of steps taken after the pause (/sim/step, or the first steps after a
            # resume whose RUNNING status, another topic, has not arrived yet) are taken.
            self.count['ignored'] += 1
            return refused
        self._answered_ns = t_ns
        self.count['actuators'] += 1
        if not self._engaged:
            self._engaged = True
            act.logs.append(('info', f'first HIL_ACTUATOR_CONTROLS at sim t = {t_ns / 1e9:.3f} '
                             's: the flight controller drives the motors'))
        if thr is not None:
            self._command = thr
        # A refused answer still answers its step (the motors hold the last valid command):
        # the simulation must not crawl through lockstep timeouts on an FC's bad values.
        act.commands.append((self._command, t_ns))
        return refused
