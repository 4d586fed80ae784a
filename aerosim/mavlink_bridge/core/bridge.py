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

Reject kinds: no complete frame in a datagram; a frame pymavlink refused (CRC, unknown id, bad
length); a signed frame (we hold no key: the MAVLink spec has a system without signing drop
them); a message for another system/component; actuator values refused; the handler raised
(the node's guard). 'peer': a system id not allowed, or actuators from a system that is not
the served FC, or anything speaking as the FC (its ids, actuator outputs, an FC's HEARTBEAT)
from another address or port than the FC's on a pinned link (`fc_address`, `mission_link`:
Endpoint.at_pin); PortNode adds the addresses refused by allow_peers.
"""

from dataclasses import dataclass, field
from datetime import datetime, timezone
import threading
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np

from mavlink_bridge.core import commands, hil, mav_ext
from mavlink_bridge.core.autostart import result_name
from mavlink_bridge.core.endpoint import Endpoint, is_signed
from mavlink_bridge.core.fc_params import load_params
from mavlink_bridge.core.fc_session import FcSession
from mavlink_bridge.core.mav import mavlink
from mavlink_bridge.core.mission import items_from_scenario
from mavlink_bridge.core.mixer import (
    MIXERS,
    PLANE_LAYOUTS,
    PX4_PLANE,
    PX4_PLANE_REVERSED,
    ActuatorError,
    MixerConfig,
    check_layout,
)
from mavlink_bridge.core.peers import ServedFc, is_flight_controller
from sim_core.clock import SimState
from sim_core.decimator import Decimator
from sim_core.errors import ConfigError
from sim_core.frames import VehicleSample
from sim_core.kinds import info, kind_of
from sim_core.members import world_members
from sim_core.scenario import MAX_FLEET, Scenario, load_scenario
from sim_sensors.core.landing_target import DownwardSensors, TargetConfig
from sim_sensors.core.suite import SensorSuite, SuiteConfig

REJECT_KINDS = ('truncated', 'undecodable', 'signed', 'target', 'value', 'invalid')
PX4_AUTOPILOT = mavlink.MAV_AUTOPILOT_PX4     # 12
MAX_SAID = 1024         # (peer, command, result) kinds logged; the rest only counted


@dataclass(frozen=True)
class BridgeConfig:
    """The bridge's parameters, read once (units in the names; ranges in PARAMETERS)."""

    scenario_file: str = 'default'
    transport: str = 'udp'
    bind: str = '127.0.0.1:14560'
    fc_address: str = '127.0.0.1:14561'
    tcp_bind: str = '127.0.0.1:4560'
    mission_link: str = ''
    mission_bind: str = ''
    system_id: int = 51
    component_id: int = 1
    fc_system_id: int = 1
    fc_component_id: int = 1
    autostart: bool = False
    autostart_ready_s: float = 5.0
    autostart_timeout_s: float = 30.0
    fc_param_file: str = ''
    heartbeat_rate_hz: float = 1.0
    home_rate_hz: float = 1.0
    hil_state_rate_hz: float = 50.0
    mission_timeout_s: float = 1.5
    mission_retries: int = 5
    mixer_motor_channels: Tuple[int, ...] = (0, 1, 2, 3)
    mixer_plane_layout: str = 'px4'
    mixer_plane_channels: Tuple[int, ...] = PX4_PLANE
    mixer_plane_reversed: Tuple[int, ...] = PX4_PLANE_REVERSED
    gps_utc_start: str = ''
    peer_timeout_s: float = 3.0
    warn_period_s: float = 2.0
    allow_system_ids: Any = ''
    sensor_topics: bool = False
    quiet_streams: bool = True
    spin_wait_us: int = 1000
    vehicles: int = 1
    vehicle_index: int = 0


# name -> (description with units, lo, hi); the defaults are BridgeConfig's
PARAMETERS: Dict[str, tuple] = {
    'scenario_file': ('Scenario YAML (origin = home, mission)',),
    'transport': ('udp | tcp (TCP server, PX4 SITL connects to it)',),
    'bind': ('UDP local address host:port',),
    'fc_address': ("UDP address of the flight controller host:port, where the bridge sends "
                   "and the only address and port the FC's frames are taken from (its ids, "
                   'actuator outputs or an FC HEARTBEAT from elsewhere: rejected_peer); '
                   "'' = reply to the first sender, the FC recognized by its ids only",),
    'tcp_bind': ('TCP server address host:port',),
    'mission_link': ("UDP host:port of the FC's MAVLink instance that takes the mission, "
                     'parameters and arming commands (PX4 SITL: its onboard payload link, '
                     "127.0.0.1:14280 + instance; the FC's frames on that link are taken from "
                     "this address and port only); '' = all on the HIL link",),
    'mission_bind': ('Our UDP address host:port on the mission link (PX4 SITL sends to '
                     "127.0.0.1:14030 + instance); '' = an ephemeral port",),
    'system_id': ("Our MAVLink system id (not the FC's)", 1, 255),
    'component_id': ('Our component id (1: GCS address mission requests to it)', 1, 255),
    'fc_system_id': ('System id of the served FC: the mission goes to it, only its actuator '
                     'outputs are taken (0 = the first FC heard)', 0, 255),
    'fc_component_id': ('Component id of the served FC (0 = the first heard)', 0, 255),
    'autostart': ('Arm the FC and start its mission once it accepted the mission and reports '
                  'ready (HEARTBEAT STANDBY): MAV_CMD_COMPONENT_ARM_DISARM, then '
                  'MAV_CMD_MISSION_START (PX4; the built-in FC arms itself)',),
    'autostart_ready_s': ('Autostart: arm anyway this long after the FC took the mission if it '
                          'does not say STANDBY, to hear why it refuses [s, sim]', 0.0, 600.0),
    'autostart_timeout_s': ('Autostart: give up this long after the FC took the mission, an '
                            'error that ends a judged run [s, sim]', 1.0, 3600.0),
    'fc_param_file': ("FC parameters to set before the mission (QGroundControl's .params "
                      "format; a path or a name in config/px4, e.g. c172r); '' = none",),
    'heartbeat_rate_hz': ('HEARTBEAT rate [Hz] (wall)', 0.1, 50.0),
    'home_rate_hz': ('HOME_POSITION rate [Hz] (wall)', 0.1, 50.0),
    'hil_state_rate_hz': ('HIL_STATE_QUATERNION (ground truth) rate [Hz] (sim); 0 = off',
                          0.0, 1000.0),
    'mission_timeout_s': ('Mission protocol timeout [s]', 0.05, 60.0),
    'mission_retries': ('Mission protocol retries [-]', 0, 100),
    'mixer_motor_channels': ('controls[] channel driving each motor (motor index order of the '
                             'model)',),
    'mixer_plane_layout': ('Planes: what HIL_ACTUATOR_CONTROLS.controls[] carry. '
                           + ' '.join(f"'{k}': {v}." for k, v in PLANE_LAYOUTS.items()),),
    'mixer_plane_channels': ("Planes, mixer_plane_layout 'px4' (aetr4 has its own order and "
                             'refuses another table): controls[] channel of the throttle, left '
                             'aileron, right aileron, elevator, rudder, left flap, right flap, '
                             "nose wheel (default: PX4 v1.16's SITL plane, airframe 1030: "
                             'outputs 5, 6, 7, 8, 3, 4, 9, and output 10 for the nose wheel as '
                             'config/px4/c172r.params sets it, PWM_MAIN_FUNC10 440; -1 = no '
                             'nose-wheel channel: it turns with the rudder where the aircraft '
                             'links them)',),
    'mixer_plane_reversed': ("Planes, layout 'px4': controls[] channels whose value is negated "
                             'first (PX4 PWM_MAIN_REV; airframe 1030 reverses output 9)',),
    'gps_utc_start': ("UTC at sim time 0 for HIL_GPS, ISO-8601; '' = now",),
    'peer_timeout_s': ('Peer silence before it is dropped [s] (wall and sim time both, while '
                       'the simulation runs)', 0.5, 600.0),
    'warn_period_s': ('Minimum period of repeated warnings [s]', 0.1, 600.0),
    'allow_system_ids': ("MAVLink systems whose messages are taken, comma-separated; '' = any. "
                         'Others are counted as rejected_peer',),
    'sensor_topics': ('Also publish the ROS sensor topics (imu, imu/data, mag, baro, '
                      'baro/temperature, gnss, gnss/fix, /tf_static) from the samples sent to '
                      'the FC: hil_plant does, instead of a sensors_node process',),
    'quiet_streams': ("Ask the FC to stop, on the mission link, each stream the bridge does not "
                      'read (MAV_CMD_SET_MESSAGE_INTERVAL -1; PX4 streams its onboard telemetry '
                      'there): each message costs the FC and the bridge a datagram, times the '
                      "real-time factor. A ground station's link keeps its streams",),
    'vehicles': ('Vehicles in the simulation (a fleet: one bridge per vehicle, each its own '
                 "links); 0 = as many as the scenario's vehicles: list", 0, MAX_FLEET),
    'vehicle_index': ('The vehicle this bridge serves (0-based): its start, mission and links '
                      '(hil_plant sets it for each vehicle of a fleet)', 0, MAX_FLEET - 1),
    'spin_wait_us': ('As fast as possible (time_scale 0): poll the HIL link this long for the '
                     "FC's answer before sleeping on it [µs], while answers come that fast (a "
                     'sleeping receiver is woken by an interrupt that costs tens of µs on a '
                     'VM); 0 = never', 0, 20000),
}
ANY_TYPE = ('allow_system_ids',)       # `-p allow_system_ids:=1` arrives as an int


def parse_utc(text: str) -> int:
    """'' -> now; ISO-8601 (Z or offset; naive = UTC) -> µs since the Unix epoch."""
    if not text:
        return int(datetime.now(timezone.utc).timestamp() * 1e6)
    try:
        dt = datetime.fromisoformat(text.replace('Z', '+00:00'))
    except ValueError:
        raise ConfigError(f'gps_utc_start: expected ISO-8601 like 2026-11-22T12:00:00Z, '
                          f'got {text!r}') from None
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=timezone.utc)
    return int(dt.timestamp() * 1e6)


def vehicle_scenario(cfg: BridgeConfig) -> Scenario:
    """The scenario as the served vehicle sees it (vehicle_index of a fleet); ConfigError.

    Vehicle vehicle_index of the world (sim_core.members.world_members): of a fleet, or of a
    scenario of several kinds, with its own kind, start, vehicle file and mission.
    """
    scenario = load_scenario(cfg.scenario_file)
    members = world_members(scenario, cfg.vehicles)
    if cfg.vehicle_index >= len(members):
        raise ConfigError(f'vehicle_index: {cfg.vehicle_index}, but the simulation has '
                          f'{len(members)} vehicle(s) (0-based)')
    return members[cfg.vehicle_index].scenario


def make_mixer(cfg: BridgeConfig, scenario: Scenario):
    """The scenario's vehicle's mixer, its kind's (mixer.MIXERS); ConfigError."""
    try:
        check_layout(cfg.mixer_plane_layout)     # a typo is an error on any vehicle
        kind = kind_of(scenario.vehicle_kind, 'vehicle.kind')
        if kind not in MIXERS:
            raise ConfigError(f'scenario {scenario.name}: a {kind.value} is not flown over '
                              'MAVLink (no mixer for it)')
        return MIXERS[kind](MixerConfig(
            tuple(int(c) for c in cfg.mixer_motor_channels), cfg.mixer_plane_layout,
            tuple(cfg.mixer_plane_channels), tuple(cfg.mixer_plane_reversed)),
            str(scenario.vehicle_file))
    except (TypeError, ValueError) as exc:
        raise ConfigError(str(exc)) from exc


def answered_sensor_ns(time_usec: int, last_sensor_ns: Optional[int]) -> Optional[int]:
    """Sim time [ns] of the HIL_SENSOR an HIL_ACTUATOR_CONTROLS answers (None: none sent yet).

    A lockstep FC (PX4, the built-in FC) stamps its answer with the time_usec of the sensor
    frame it just processed. An FC still working through a backlog (sensors free-ran before it
    connected) answers old frames: their stamps do not release the awaited step, so the FC
    catches up instead of flying on stale sensors. time_usec 0 or not one of ours (an FC on its
    own clock): the answer is taken as the answer to the latest frame.
    """
    if last_sensor_ns is None:
        return None
    t_ns = int(time_usec) * 1000
    return t_ns if 0 < t_ns <= last_sensor_ns else last_sensor_ns


@dataclass
class Actions:
    """What the node does after a decision: send, command the motors, log, count a reject."""

    sends: List[Tuple[Endpoint, tuple]] = field(default_factory=list)
    replies: List[Tuple[Endpoint, Any, tuple]] = field(default_factory=list)  # (ep, addr, msgs)
    commands: List[Tuple[Sequence[float], int]] = field(default_factory=list)  # (thr, t_ns)
    logs: List[Tuple[str, str]] = field(default_factory=list)   # ('info' | 'warning', text)
    reject: Optional[Tuple[str, str]] = None                    # (kind, text)
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


class HilBridge:
    """The HIL link's state and rules (see the module docstring)."""

    def __init__(self, cfg: BridgeConfig, scenario: Scenario, suite_cfg: SuiteConfig,
                 hil_ep: Endpoint, mission_link: Optional[Endpoint] = None,
                 allow_ids=(), target_cfg: Optional[TargetConfig] = None):
        """cfg: parameters; hil_ep: the HIL link; mission_link: the FC's MAVLink instance.

        target_cfg: the landing-target sensor and range finder of a vehicle that lands on
        decks (sim_core.kinds lands_on_decks), sampled when on_state is given decks.
        """
        self.cfg = cfg
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
            if t_ns < self.last_state_ns:
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
        act.reject = problem
        return act

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
        t_ns = answered_sensor_ns(m.time_usec, self._last_sensor_ns)
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

    # --- status --------------------------------------------------------------------------------
    def peers(self) -> list:
        """The peers of every link, each (sysid, compid) once: the one heard last."""
        seen: Dict[Tuple[int, int], Any] = {}
        with self.lock:
            for ep in self.endpoints():
                for p in ep.peers.active():
                    key = (p.sysid, p.compid)
                    if key not in seen or p.last_seen > seen[key].last_seen:
                        seen[key] = p
        return [seen[k] for k in sorted(seen)]

    def waiting_for(self, now: float) -> str:
        """What keeps the served FC from flying its mission from t = 0, or '' (ready).

        Not heard yet: its FC. PX4 (autopilot 12 in its HEARTBEAT on any link) runs every
        module on the clock our HIL_SENSOR sets (SimulatorMavlink, lockstep): with time held
        at 0 it is silent on its MAVLink links (its HEARTBEAT and mission manager run on that
        clock), so it is ready once heard on the HIL link and any upload of ours went quiet.
        Any other FC: FcSession.waiting_for (its mission accepted, its checks passed).
        """
        with self.lock:
            fc = next((p for ep in self.endpoints() for p in ep.peers.active()
                       if is_flight_controller(p.mav_type, p.autopilot)), None)
            if fc is None:
                return 'its FC to be heard'
            return self.session.waiting_for(now, lockstep=fc.autopilot == PX4_AUTOPILOT)

    def flight_controller(self) -> Optional[Tuple[int, int]]:
        """(sysid, compid) of a flight controller heard on any link, or None."""
        with self.lock:
            return next((ep.peers.flight_controller() for ep in self.endpoints()
                         if ep.peers.flight_controller()), None)
