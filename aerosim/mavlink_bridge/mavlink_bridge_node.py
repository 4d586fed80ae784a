"""mavlink_bridge: MAVLink HIL link between the simulated vehicle and a flight controller.

Simulator -> FC: HEARTBEAT (1 Hz), HOME_POSITION (1 Hz), the scenario mission (MISSION_COUNT /
MISSION_ITEM_INT), HIL_SENSOR (IMU rate), HIL_GPS (GNSS rate, if on), HIL_STATE_QUATERNION.
FC -> simulator: HIL_ACTUATOR_CONTROLS -> effector_command (aerosim_msgs/AircraftEffectorCommand).
The sensors come from the same SensorSuite as sensors_node (same parameters, same seed: the
same samples), driven by vehicle_state. Topics: subscribes vehicle_state, /sim/status;
publishes effector_command, mavlink/status (aerosim_msgs/MavlinkLinkStatus, latched) and the
link's DiagnosticStatus on /diagnostics (FC connected or not, rates, rejects by kind); with
sensor_topics (hil_plant) also the ROS sensor topics of the samples it sends.

Two links. The HIL link carries the sensors and the actuator outputs (UDP, or the TCP server
PX4 SITL's simulator_mavlink connects to). PX4 ignores everything else on that link
(SimulatorMavlink::handle_message), so with `mission_link` set the mission, HEARTBEAT,
HOME_POSITION and the arming commands of `autostart` also go to one of the FC's MAVLink
instances over UDP (for PX4 SITL its onboard payload link, 14280 + instance; we bind its
remote port, 14030 + instance, where PX4 sends). Without it everything uses the HIL link (the
built-in FC and FCs that take everything on one link).

Input accounting is per datagram (per read on TCP): a datagram with anything wrong in it (no
complete frame, a bad CRC or unknown id, a signed frame, a peer or system id not allowed, a
message for another system, actuator values out of range, actuators from a system that is not
the served flight controller) is one reject of the kind of its first problem, counted and
logged at a limited rate; a handler's exception is a reject of kind 'invalid'.

Threads: the executor runs the ROS callbacks (state -> sensors out, timers); one reader thread
per link waits on its socket and answers actuator and mission messages at once (lowest
lockstep latency). Shared state (mission server, autostart, served FC, step bookkeeping) is
behind one lock; each link's sender has its own. Timers (heartbeat, home, mission retries) run
on the steady wall clock: they keep going while the simulation is paused.

Composed with dynamics_node in one process (mavlink_bridge.hil_plant), the state arrives by a
direct call of ``on_state`` and the answer leaves through ``command_sink`` (the dynamics node's
apply_command) before effector_command is published for the tools: no middleware hop in the
lockstep loop.
"""

from datetime import datetime, timezone
import threading
import time

from rclpy.clock import Clock, ClockType
import rclpy.logging

from aerosim_msgs.msg import (
    AircraftEffectorCommand,
    MavlinkLinkStatus,
    MavlinkPeer,
    SimStatus,
    VehicleState,
)
from mavlink_bridge.core import hil
from mavlink_bridge.core.autostart import AutoStart
from mavlink_bridge.core.endpoint import Endpoint, is_signed
from mavlink_bridge.core.mav import mavlink
from mavlink_bridge.core.mission import DONE, SENDING, MissionServer, items_from_scenario
from mavlink_bridge.core.mixer import ActuatorError, Mixer
from mavlink_bridge.core.peers import ServedFc, is_flight_controller
from sim_core.clock import SimState
from sim_core.decimator import Decimator
from sim_core.errors import ConfigError
from sim_core.link import SpinWait, UdpLink, is_loopback, parse_endpoint, parse_id_list
from sim_core.scenario import load_scenario
from sim_ros import qos
from sim_ros.convert import time_msg, vehicle_state_arrays
from sim_ros.params import apply_realtime, declare, declare_realtime
from sim_ros.port_node import PortNode
from sim_ros.run import run_node
from sim_sensors.core.suite import SensorSuite
from sim_sensors.params import declare_suite, describe
from sim_sensors.topics import SensorTopics, declare_frames

RECV_POLL_S = 0.1
# Reject kinds: no complete frame in a datagram; a frame pymavlink refused (CRC, unknown id,
# bad length); a signed frame (we hold no key: the MAVLink spec has a system without signing
# drop them); a message for another system/component; actuator values refused; the handler
# raised. PortNode adds 'peer' (an address or system id not allowed, or actuators from a
# system that is not the served FC).
REJECT_KINDS = ('truncated', 'undecodable', 'signed', 'target', 'value', 'invalid')
MISSION_MSGS = ('MISSION_REQUEST_INT', 'MISSION_REQUEST', 'MISSION_ACK', 'MISSION_REQUEST_LIST')
STATUSTEXT_REPEAT_S = 5.0     # the same text of the FC is logged at most this often


def parse_utc(text: str) -> int:
    """ISO-8601 UTC ('2026-11-22T12:00:00Z') -> µs since the epoch; '' -> now."""
    if not text:
        return int(time.time() * 1e6)
    try:
        dt = datetime.fromisoformat(text.replace('Z', '+00:00'))
    except ValueError:
        raise ConfigError(f'gps_utc_start: expected ISO-8601 like 2026-11-22T12:00:00Z, '
                          f'got {text!r}') from None
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=timezone.utc)
    return int(dt.timestamp() * 1e6)


def answered_sensor_ns(time_usec: int, last_sensor_ns):
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


class MavlinkBridge(PortNode):
    """HIL bridge node."""

    # destroy_node() may run on a half-built node (a configuration error in __init__)
    hil = mlink = _stop = _count = None
    _readers = ()

    def __init__(self, direct_state: bool = False):
        """Declare parameters, open the links, start the reader threads.

        direct_state: the vehicle state comes through on_state() from a node of the same
        process; vehicle_state is not subscribed.
        """
        super().__init__('mavlink_bridge')
        self._readers = []
        self._stop = threading.Event()
        d = self._d
        scenario_file = d('scenario_file', 'default', 'Scenario YAML (origin = home, mission)')
        self.suite_cfg = declare_suite(self)
        transport = d('transport', 'udp', 'udp | tcp (TCP server, PX4 SITL connects to it)')
        bind = d('bind', '127.0.0.1:14560', 'UDP local address host:port')
        fc_address = d('fc_address', '127.0.0.1:14561',
                       "UDP address of the flight controller host:port; '' = reply to the "
                       'first sender')
        tcp_bind = d('tcp_bind', '127.0.0.1:4560', 'TCP server address host:port')
        mission_link = d('mission_link', '',
                         "UDP host:port of the FC's MAVLink instance that takes the mission, "
                         'HEARTBEAT, HOME_POSITION and arming commands (PX4 SITL: its onboard '
                         "payload link, 127.0.0.1:14280 + instance); '' = all on the HIL link")
        mission_bind = d('mission_bind', '',
                         'Our UDP address host:port on the mission link (PX4 SITL sends to '
                         "127.0.0.1:14030 + instance); '' = an ephemeral port")
        self.sysid = d('system_id', 51, "Our MAVLink system id (not the FC's)", 1, 255)
        self.compid = d('component_id', 1,
                        'Our component id (1: GCS address mission requests to it)', 1, 255)
        fc_sysid = d('fc_system_id', 1, 'System id of the served FC: the mission goes to it, '
                     'only its actuator outputs are taken (0 = the first FC heard)', 0, 255)
        fc_compid = d('fc_component_id', 1, 'Component id of the served FC (0 = the first '
                      'heard)', 0, 255)
        self.autostart_on = d('autostart', False,
                              'Arm the FC and start its mission once it accepted the mission '
                              'and reports ready (HEARTBEAT STANDBY): MAV_CMD_COMPONENT_ARM_'
                              'DISARM, then MAV_CMD_MISSION_START (PX4; the built-in FC arms '
                              'itself)')
        hb_rate = d('heartbeat_rate_hz', 1.0, 'HEARTBEAT rate [Hz] (wall)', 0.1, 50.0)
        home_rate = d('home_rate_hz', 1.0, 'HOME_POSITION rate [Hz] (wall)', 0.1, 50.0)
        state_rate = d('hil_state_rate_hz', 50.0,
                       'HIL_STATE_QUATERNION (ground truth) rate [Hz] (sim); 0 = off',
                       0.0, 1000.0)
        mission_timeout = d('mission_timeout_s', 1.5, 'Mission protocol timeout [s]', 0.05, 60.0)
        mission_retries = d('mission_retries', 5, 'Mission protocol retries [-]', 0, 100)
        channels = d('mixer_motor_channels', [0, 1, 2, 3],
                     'controls[] channel driving each motor (motor index order of the model)')
        utc = d('gps_utc_start', '', "UTC at sim time 0 for HIL_GPS, ISO-8601; '' = now")
        self.peer_timeout_s = d('peer_timeout_s', 3.0, 'Peer silence before it is dropped [s] '
                                '(wall, while the simulation runs)', 0.5, 600.0)
        warn_period = d('warn_period_s', 2.0, 'Minimum period of repeated warnings [s]',
                        0.1, 600.0)
        allow_ids = d('allow_system_ids', '', 'MAVLink systems whose messages are taken, '
                      "comma-separated; '' = any. Others are counted as rejected_peer",
                      any_type=True)
        sensor_topics = d('sensor_topics', False,
                          'Also publish the ROS sensor topics (imu, imu/data, mag, baro, '
                          'baro/temperature, gnss, gnss/fix, /tf_static) from the samples sent '
                          'to the FC: hil_plant does, instead of a sensors_node process')
        frames = declare_frames(self)
        spin_us = d('spin_wait_us', 1000,
                    'As fast as possible (time_scale 0): poll the HIL link this long for the '
                    "FC's answer before sleeping on it [µs], while answers come that fast (a "
                    'sleeping receiver is woken by an interrupt that costs tens of µs on a VM); '
                    '0 = never', 0, 20000)
        self.realtime_priority = declare_realtime(self)
        self._spin = SpinWait(spin_us * 1e-6)
        self._fast = False              # the simulation runs as fast as possible (/sim/status)
        self._init_port('MAVLink', REJECT_KINDS, warn_period)
        try:
            self.mixer = Mixer(tuple(int(c) for c in channels))
            self.utc0_us = parse_utc(utc)
            self.allow_ids = parse_id_list(allow_ids, 'allow_system_ids', 1, 255)
            self.link = self._open_link(transport, bind, tcp_bind, fc_address, 'fc_address')
            if mission_link:
                remote = parse_endpoint(mission_link, 'mission_link')
                local = parse_endpoint(mission_bind, 'mission_bind') if mission_bind else \
                    ('127.0.0.1' if is_loopback(remote[0]) else '0.0.0.0', 0)
                if not is_loopback(local[0]) and not self.allow:
                    self.get_logger().warning(
                        f'mission link listening on {local[0]} and taking input from any '
                        'peer: set allow_peers to the addresses that may command the '
                        'simulation')
                self.mlink = Endpoint(UdpLink(local, remote, self.allow, self._refused),
                                      self.sysid, self.compid, 'mission link',
                                      self.peer_timeout_s)
        except (ValueError, OSError) as exc:
            raise ConfigError(str(exc)) from exc
        self.hil = Endpoint(self.link, self.sysid, self.compid, 'HIL link', self.peer_timeout_s)
        self.mission_ep = self.mlink or self.hil     # where the mission and commands go
        self.scenario = load_scenario(scenario_file)
        self.suite = SensorSuite(self.suite_cfg, self.scenario)
        self.encoder = hil.HilSensorEncoder()
        self.topics = SensorTopics(self, *frames) if sensor_topics else None
        self.dec_state = Decimator(state_rate) if state_rate > 0.0 else None
        self.mission = MissionServer(items_from_scenario(self.scenario.mission),
                                     mission_timeout, mission_retries)
        self.served = ServedFc(fc_sysid, fc_compid)
        self.autostart = AutoStart(self.served.target(), len(self.mission.items)) \
            if self.autostart_on else None
        self.sim_state = None
        self._session_started = False
        self._lock = threading.Lock()
        self._count = dict(rx=0, actuators=0, ignored=0, sensor=0, gps=0)
        self._work_s = 0.0              # wall time handling the FC's answers [s]
        self._last_sensor_ns = None
        self._answered_ns = None        # the frame the FC's last answer was for [ns]
        self._halted_at_ns = 0          # last frame sent when the sim was paused/stopped [ns]
        self._last_state_ns = -1
        self._engaged = False
        self._throttles = [0.0] * 4
        self._said = {}                 # FC STATUSTEXT -> wall time last logged
        # Called with (throttles, stamp_ns) before effector_command is published (composition).
        self.command_sink = None
        self._msg_cmd = AircraftEffectorCommand()

        self.pub_cmd = self.create_publisher(AircraftEffectorCommand, 'effector_command',
                                             qos.COMMAND)
        self.pub_status = self.create_publisher(MavlinkLinkStatus, 'mavlink/status', qos.LATCHED)
        if not direct_state:
            self.create_subscription(VehicleState, 'vehicle_state', self._on_state, qos.STATE)
        self.create_subscription(SimStatus, '/sim/status', self._on_sim_status, qos.LATCHED)
        wall = Clock(clock_type=ClockType.STEADY_TIME)
        self.create_timer(1.0 / hb_rate, self._send_heartbeat, clock=wall)
        self.create_timer(1.0 / home_rate, self._send_home, clock=wall)
        self.create_timer(0.05, self._poll, clock=wall)
        self.create_timer(1.0, self._publish_status, clock=wall)
        self.create_timer(1.0, self._publish_diagnostics, clock=wall)
        for ep, name in ((self.hil, 'mavlink-rx'), (self.mlink, 'mavlink-mission')):
            if ep is not None:
                t = threading.Thread(target=self._read_loop, args=(ep,), name=name, daemon=True)
                self._readers.append(t)
                t.start()
        where = f'; mission link {self.mlink.describe()}' if self.mlink else ''
        self.get_logger().info(
            f'MAVLink 2 {self.link.describe()}{where}, our id {self.sysid}:{self.compid}, '
            f'serving FC {self.served.describe()}; {describe(self.suite_cfg)}; mission '
            f'{len(self.mission.items)} items from {self.scenario.name}'
            f'{" (autostart: arm and start it when the FC is ready)" if self.autostart else ""}'
            f'; mixer motor channels {self.mixer.motor_channels}')
        self._publish_status()

    def _d(self, *a, **k):
        return declare(self, *a, **k)

    def _endpoints(self):
        return [ep for ep in (self.hil, self.mlink) if ep is not None]

    # --- sending -------------------------------------------------------------------------------
    def _running(self) -> bool:
        return self.sim_state == SimState.RUNNING

    def _send_heartbeat(self):
        state = SimState.STOPPED if self.sim_state is None else self.sim_state
        for ep in self._endpoints():
            ep.send(hil.heartbeat(ep.tx, state))
        if not self._running():
            return      # a lockstep FC is frozen with the simulation: its silence is no loss
        gone = False
        for ep in self._endpoints():
            for p in ep.peers.expire(time.monotonic()):
                gone = True
                self.get_logger().warn(f'peer {p.sysid}:{p.compid} silent on the {ep.name} for '
                                       f'{self.peer_timeout_s:g} s: dropped')
        if gone:
            self._publish_status()

    def _send_home(self):
        if self._running():
            t_us = self._last_state_ns // 1000 if self._last_state_ns > 0 else 0
            for ep in self._endpoints():
                ep.send(hil.home_position(ep.tx, self.scenario.origin, t_us))

    def _poll(self):
        now = time.monotonic()
        with self._lock:
            out = self.mission.poll(now)
            cmds = []
            if self.autostart is not None and self._running():
                self.autostart.target = self.served.target()
                cmds = self.autostart.poll(self.mission_ep.tx, now)
        self.mission_ep.send(*out)
        self.mission_ep.send(*cmds)
        self._log_events()

    def _log_events(self):
        sources = [self.mission.events] + ([self.autostart.events] if self.autostart else [])
        for events in sources:
            while events:
                self.get_logger().info(events.pop(0))

    def _start_mission(self, sysid: int, compid: int):
        with self._lock:
            out = self.mission.start(self.mission_ep.tx, sysid, compid, time.monotonic())
        self.mission_ep.send(*out)
        self._log_events()

    # --- ROS inputs ----------------------------------------------------------------------------
    def _on_sim_status(self, msg: SimStatus):
        self._fast = msg.time_scale == 0.0
        state = SimState(msg.state)
        if state == self.sim_state:
            return
        what = ('sensors follow the steps, actuators accepted' if state == SimState.RUNNING
                else 'sensors only for steps taken (/sim/step), actuators ignored')
        self.get_logger().info(f'simulation {state.name}: {what}')
        if state != SimState.RUNNING:
            with self._lock:
                self._halted_at_ns = self._last_sensor_ns or 0
        else:
            for ep in self._endpoints():
                ep.peers.touch_all(time.monotonic())
        self.sim_state = state
        if state == SimState.RUNNING and not self._session_started:
            self._session_started = True
            if self.mlink is None:
                fc = self.hil.peers.flight_controller()
                self._start_mission(*(fc if fc else self.served.target()))
            elif self.mlink.peers.flight_controller():     # heard on the mission link already
                self._start_mission(*self.mlink.peers.flight_controller())
        self._send_heartbeat()

    def _on_state(self, msg: VehicleState):
        self.on_state(vehicle_state_arrays(msg))

    def on_state(self, args):
        """Sensors of one simulation step out to the FC.

        args: (t_ns, p_enu, v_enu, q_wb (w, x, y, z), a_enu, w_flu), the tuple of
        vehicle_state_arrays.
        """
        t_ns = args[0]
        if t_ns < self._last_state_ns:
            self.get_logger().warn('sim time went backwards (reset): sensors restart; a real '
                                   'FC in lockstep must be restarted too')
            self.encoder = hil.HilSensorEncoder()
            if self.dec_state:
                self.dec_state.reset()
            with self._lock:
                self._halted_at_ns = 0
        advanced = t_ns > self._last_state_ns
        self._last_state_ns = t_ns
        # Every step the simulation took, and only those: the state itself says so (its time
        # advanced), whatever /sim/status said and when it arrived (another topic: no order
        # with this one). A paused simulation publishes no new time; /sim/step while paused
        # does, and the FC gets those frames. The same states in give the same frames out,
        # live or replayed from a bag.
        if not advanced or t_ns <= 0:
            return
        s = self.suite.sample(*args)
        tx = self.hil.tx
        out = []
        if s.imu is not None:
            out.append(self.encoder.encode(tx, s, t_ns // 1000))
            self._count['sensor'] += 1
        for fix in s.gnss:
            out.append(hil.hil_gps(tx, fix, self.utc0_us + fix.t_ns // 1000))
            self._count['gps'] += 1
        if self.dec_state is not None and self.dec_state.due(t_ns):
            out.append(hil.hil_state_quaternion(tx, t_ns // 1000, self.scenario.origin,
                                                *args[1:], self.scenario.environment.gravity))
        with self._lock:
            # No HIL_SENSOR at this step, so no FC answer will come: the last command holds,
            # if the FC answered the latest frame (a silent FC must not be answered for).
            hold = s.imu is None and self._engaged and self._answered_ns == self._last_sensor_ns
            if s.imu is not None:
                self._last_sensor_ns = t_ns
        self.hil.send(*out)
        if self.topics is not None:      # after the FC has its sensors: it computes meanwhile
            self.topics.publish(s, time_msg(t_ns))
        if hold:
            self._publish_command(self._throttles, t_ns)

    def _publish_command(self, throttles, t_ns):
        if self.command_sink is not None:
            self.command_sink(throttles, t_ns)
        cmd = self._msg_cmd          # reused: this runs once per step
        cmd.header.stamp = time_msg(t_ns)
        cmd.throttle_cmd = [float(x) for x in throttles]
        self.pub_cmd.publish(cmd)

    # --- MAVLink input (reader threads) --------------------------------------------------------
    def _read_loop(self, ep: Endpoint):
        if self.realtime_priority and ep is self.hil:
            # this thread answers the FC: in the plant composition it steps the simulation
            apply_realtime(self, self.realtime_priority, 'MAVLink receive thread')
        spin = self._spin if ep is self.hil else None
        while not self._stop.is_set():
            try:
                if spin is None:
                    data, addr = ep.link.recv(RECV_POLL_S)
                else:
                    data, addr = ep.link.recv(RECV_POLL_S, spin.start() if self._fast else 0.0)
                    spin.done(data is not None)
            except (OSError, ValueError):
                if self._stop.is_set():
                    return
                continue
            if data is None:
                continue
            if self._stop.is_set() or not self.context.ok():
                return
            t0 = time.perf_counter()
            answers = self._count['actuators']
            self._guarded(lambda d, a: self._handle_bytes(ep, d, a), data, addr, 'invalid')
            if self._count['actuators'] != answers:
                # an FC answer: in the plant composition it integrated the next step, sampled
                # and sent its sensors and published its topics before returning here
                self._work_s += time.perf_counter() - t0

    def _handle_bytes(self, ep: Endpoint, data: bytes, addr):
        """Parse one datagram (TCP: one read) and act on it; one reject if anything was wrong."""
        msgs = ep.parse(data)
        problem = None
        if ep.udp and not msgs:
            problem = ('truncated', f'{len(data)} bytes and no complete MAVLink frame')
        now = time.monotonic()
        for m in msgs:
            src = (m.get_srcSystem(), m.get_srcComponent())
            if m.get_type() == 'BAD_DATA':
                why = ('undecodable', f'undecodable MAVLink input: {m.reason}')
            elif src == (self.sysid, self.compid):
                continue   # our own echo
            elif is_signed(m):
                why = ('signed', f'signed {m.get_type()} from {src[0]}:{src[1]}: this bridge '
                       'holds no signing key and drops signed frames (MAVLink spec)')
            elif self.allow_ids and src[0] not in self.allow_ids:
                why = ('peer', f'{m.get_type()} from system {src[0]}, not in allow_system_ids')
            else:
                self._count['rx'] += 1
                ep.link.learn(addr)
                ep.peers.seen(src[0], src[1], now)
                why = self._dispatch(ep, m, addr, now)
            problem = problem or why
        if problem:
            self._reject(*problem, addr)

    def _for_us(self, m):
        """None if m is addressed to us (or to all), else the reject (kind, text)."""
        if (m.target_system in (0, self.sysid)
                and getattr(m, 'target_component', 0) in (0, self.compid)):
            return None
        return ('target', f'{m.get_type()} for {m.target_system}:'
                f'{getattr(m, "target_component", 0)} is not for us')

    def _dispatch(self, ep: Endpoint, m, addr, now: float):
        """Act on one message; return None, or the reject (kind, text) if refused."""
        t = m.get_type()
        src = (m.get_srcSystem(), m.get_srcComponent())
        if t == 'HIL_ACTUATOR_CONTROLS':
            return self._on_actuators(m) if ep is self.hil else None
        if t == 'HEARTBEAT':
            self._on_heartbeat(ep, m, addr)
        elif t in MISSION_MSGS and ep is self.mission_ep:
            wrong = self._for_us(m)
            if wrong:
                return wrong
            with self._lock:
                out = ()
                if t == 'MISSION_ACK':
                    if self.mission.on_ack(m) and self.mission.state == DONE \
                            and self.autostart is not None:
                        self.autostart.mission_accepted()
                elif t == 'MISSION_REQUEST_LIST':
                    out = self.mission.on_request_list(ep.tx, m, now)
                else:
                    out = self.mission.on_request(ep.tx, m, now)
            ep.send(*out)
            self._log_events()
        elif t == 'COMMAND_ACK' and ep is self.mission_ep and self.autostart is not None \
                and self.served.matches(*src):
            wrong = self._for_us(m)
            if wrong:
                return wrong
            with self._lock:
                self.autostart.command_ack(m, now)
            self._log_events()
        elif t == 'STATUSTEXT' and self.served.matches(*src):
            self._fc_says(m, now)
        return None

    def _on_heartbeat(self, ep: Endpoint, m, addr):
        src = (m.get_srcSystem(), m.get_srcComponent())
        new = ep.peers.heartbeat(m, f'{addr[0]}:{addr[1]}', time.monotonic())
        if new:
            self.get_logger().info(
                f'peer {src[0]}:{src[1]} on the {ep.name} at {addr[0]}:{addr[1]}: type '
                f'{m.type}, autopilot {m.autopilot}, status {m.system_status}')
        fc = is_flight_controller(m.type, m.autopilot)
        if fc and self.served.learn(*src):
            self.get_logger().info(f'serving flight controller {self.served.describe()}')
        if not (fc and self.served.matches(*src)):
            return
        if self.autostart is not None and ep is self.mission_ep:
            with self._lock:
                self.autostart.heartbeat(m)
        # A flight controller new (or back) on the link that takes the mission gets it.
        if new and ep is self.mission_ep and self._session_started \
                and self.mission.state != SENDING:
            self._start_mission(*src)

    def _fc_says(self, m, now: float):
        """Log a STATUSTEXT of the FC (PX4 explains refusals so), a text once per 5 s at most."""
        text = m.text.rstrip('\x00').strip()
        if now - self._said.get(text, -1e9) < STATUSTEXT_REPEAT_S:
            return
        self._said[text] = now
        log = self.get_logger()
        (log.warning if m.severity <= mavlink.MAV_SEVERITY_WARNING else log.info)(
            f'FC {m.get_srcSystem()}:{m.get_srcComponent()} says: {text}')

    def _on_actuators(self, m):
        src = (m.get_srcSystem(), m.get_srcComponent())
        if not self.served.matches(*src):
            return ('peer', f'HIL_ACTUATOR_CONTROLS from {src[0]}:{src[1]}, not the flight '
                    f'controller this link serves ({self.served.describe()})')
        if self.served.learn(*src):
            self.get_logger().info(f'serving flight controller {self.served.describe()}')
        try:
            thr, refused = self.mixer.throttles(m.controls), None
        except ActuatorError as exc:       # garbage is refused whatever the sim does
            thr, refused = None, ('value', f'HIL_ACTUATOR_CONTROLS rejected: {exc}; motors keep '
                                  'the last valid command')
        with self._lock:
            t_ns = answered_sensor_ns(m.time_usec, self._last_sensor_ns)
            halted = self.sim_state in (SimState.PAUSED, SimState.STOPPED) and \
                t_ns is not None and t_ns <= self._halted_at_ns
            if t_ns is not None and not halted:
                self._answered_ns = t_ns
        if t_ns is None or halted:
            # no frame sent yet, or paused/stopped: the vehicle does not react. Answers to
            # frames of steps taken after the pause (/sim/step, or the first steps after a
            # resume whose RUNNING status, another topic, has not arrived yet) are taken.
            self._count['ignored'] += 1
            return refused
        self._count['actuators'] += 1
        if not self._engaged:
            self._engaged = True
            self.get_logger().info(f'first HIL_ACTUATOR_CONTROLS at sim t = {t_ns / 1e9:.3f} '
                                   's: the flight controller drives the motors')
        if thr is not None:
            self._throttles = thr
        # A refused answer still answers its step (the motors hold the last valid command):
        # the simulation must not crawl through lockstep timeouts on an FC's bad values.
        self._publish_command(self._throttles, t_ns)
        return refused

    # --- status --------------------------------------------------------------------------------
    def _publish_status(self):
        st = MavlinkLinkStatus()
        st.header.stamp = time_msg(max(self._last_state_ns, 0))
        st.link = self.link.describe() + (f'; mission: {self.mlink.describe()}'
                                          if self.mlink else '')
        st.system_id, st.component_id = self.sysid, self.compid
        now = time.monotonic()
        for p in self._peers():
            st.peers.append(MavlinkPeer(
                system_id=p.sysid, component_id=p.compid, mav_type=p.mav_type,
                autopilot=p.autopilot, system_status=p.system_status, address=p.address,
                last_seen_age_s=now - p.last_seen, heartbeats=p.heartbeats))
        c, r = self._count, self.rejects
        st.rx_messages, st.rx_wrong_target = c['rx'], r['target']
        st.rx_bad_frames = r['truncated'] + r['undecodable'] + r['invalid'] + r['signed']
        st.rejected_actuators, st.ignored_actuators = r['value'], c['ignored']
        st.actuator_messages, st.hil_sensor_sent, st.hil_gps_sent = (
            c['actuators'], c['sensor'], c['gps'])
        st.mission_state, st.mission_result = self.mission.state, self.mission.result
        st.mission_transfers, st.mission_resent = self.mission.transfers, self.mission.resent
        self.pub_status.publish(st)

    def _peers(self):
        """The peers of every link, each (sysid, compid) once: the one heard last."""
        seen = {}
        for ep in self._endpoints():
            for p in ep.peers.active():
                key = (p.sysid, p.compid)
                if key not in seen or p.last_seen > seen[key].last_seen:
                    seen[key] = p
        return [seen[k] for k in sorted(seen)]

    def _publish_diagnostics(self):
        fc = next((ep.peers.flight_controller() for ep in self._endpoints()
                   if ep.peers.flight_controller()), None)
        up = fc is not None
        extra = [('mission', f'{self.mission.state} {self.mission.result}'.strip()),
                 ('served_fc', self.served.describe()),
                 ('send_errors', sum(ep.link.send_errors for ep in self._endpoints()))]
        if self.mlink:
            extra.append(('mission_link', self.mlink.describe()))
        if self.autostart:
            extra.append(('autostart', self.autostart.state))
        self._publish_port_status(
            'MAVLink HIL link', self.link.describe(), up,
            f'flight controller {fc[0]}:{fc[1]}, {self._count["rx"]} in, '
            f'{sum(self.rejects.values())} rejected' if up else 'no flight controller heard',
            self._count, extra)

    def destroy_node(self):
        """Say POWEROFF (the seed's Stopped state), stop the readers; PortNode closes the link."""
        for ep in self._endpoints():
            ep.send(hil.heartbeat(ep.tx, SimState.STOPPED))
        if self._stop is not None:
            self._stop.set()
        for t in self._readers:
            t.join(timeout=1.0)
        n = self._count['actuators'] if self._count else 0
        if self.mlink is not None:
            self.mlink.link.close()
        log = self.get_logger().name
        super().destroy_node()
        if n:      # once the node is gone: after Ctrl-C its logger could not reach /rosout
            rclpy.logging.get_logger(log).info(
                f'{n} FC answers taken: {1e6 * self._work_s / n:.0f} µs of work per answer '
                '(decode, mix; composed: integrate, sensors, HIL_SENSOR out, topics)')


def main(args=None):
    """Run mavlink_bridge."""
    run_node(MavlinkBridge, 'mavlink_bridge', args)


if __name__ == '__main__':
    main()
