"""mavlink_bridge: MAVLink HIL link between the simulated vehicle and a flight controller.

Simulator -> FC: HEARTBEAT (1 Hz), HOME_POSITION (1 Hz), the scenario mission (MISSION_COUNT /
MISSION_ITEM_INT), HIL_SENSOR (IMU rate), HIL_GPS (GNSS rate, if on), HIL_STATE_QUATERNION.
FC -> simulator: HIL_ACTUATOR_CONTROLS -> effector_command (aerosim_msgs/AircraftEffectorCommand).
The sensors come from the same SensorSuite as sensors_node (same parameters, same seed: the
same samples), driven by vehicle_state. Topics: subscribes vehicle_state, /sim/status;
publishes effector_command, mavlink/status (aerosim_msgs/MavlinkLinkStatus, latched) and the
link's DiagnosticStatus on /diagnostics (FC connected or not, rates, rejects by kind).

Input accounting is per datagram (per read on TCP): a datagram with anything wrong in it (no
complete frame, a bad CRC or unknown id, a peer or system id not allowed, a message for another
system, actuator values out of range) is one reject of the kind of its first problem, counted
and logged at a limited rate; a handler's exception is a reject of kind 'invalid'.

Threads: the executor runs the ROS callbacks (state -> sensors out, timers); a reader thread
waits on the socket and answers actuator and mission messages at once (lowest lockstep latency).
Both share the link behind one lock. Timers (heartbeat, home, mission retries) run on the
steady wall clock: they keep going while the simulation is paused.

Composed with dynamics_node in one process (mavlink_bridge.hil_plant), the state arrives by a
direct call of ``on_state`` and the answer leaves through ``command_sink`` (the dynamics node's
apply_command) before effector_command is published for the tools: no middleware hop in the
lockstep loop.
"""

from datetime import datetime, timezone
import threading
import time

from aerosim_msgs.msg import (AircraftEffectorCommand, MavlinkLinkStatus, MavlinkPeer, SimStatus,
                              VehicleState)
from rclpy.clock import Clock, ClockType

from mavlink_bridge.core import hil
from sim_core.link import parse_id_list, UdpLink
from mavlink_bridge.core.mav import new_mav, reset_parser
from mavlink_bridge.core.mission import items_from_scenario, MissionServer, SENDING
from mavlink_bridge.core.mixer import ActuatorError, Mixer
from mavlink_bridge.core.peers import is_flight_controller, PeerTable
from sim_core.clock import SimState
from sim_core.errors import ConfigError
from sim_core.ros import qos
from sim_core.ros.convert import time_msg, vehicle_state_arrays
from sim_core.ros.params import apply_realtime, declare, declare_realtime
from sim_core.ros.port_node import PortNode
from sim_core.ros.run import run_node
from sim_core.scenario import load_scenario
from sim_core.decimator import Decimator
from sim_sensors.core.suite import SensorSuite
from sim_sensors.params import declare_suite, describe

RECV_POLL_S = 0.1
# Reject kinds: no complete frame in a datagram; a frame pymavlink refused (CRC, unknown id,
# bad length); a message for another system/component; actuator values refused; the handler
# raised. PortNode adds 'peer' (an address or system id not allowed).
REJECT_KINDS = ('truncated', 'undecodable', 'target', 'value', 'invalid')


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

    def __init__(self, direct_state: bool = False):
        """Declare parameters, open the link, start the reader thread.

        direct_state: the vehicle state comes through on_state() from a node of the same
        process; vehicle_state is not subscribed.
        """
        super().__init__('mavlink_bridge')
        self._reader = None
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
        self.sysid = d('system_id', 51, "Our MAVLink system id (not the FC's)", 1, 255)
        self.compid = d('component_id', 1,
                        'Our component id (1: GCS address mission requests to it)', 1, 255)
        self.fc_sysid = d('fc_system_id', 1, 'FC system id the mission is sent to (0 = any)',
                          0, 255)
        self.fc_compid = d('fc_component_id', 1, 'FC component id (0 = any)', 0, 255)
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
        self.peer_timeout_s = d('peer_timeout_s', 3.0, 'Peer silence before it is dropped [s]',
                                0.5, 600.0)
        warn_period = d('warn_period_s', 2.0, 'Minimum period of repeated warnings [s]',
                        0.1, 600.0)
        allow_ids = d('allow_system_ids', '', 'MAVLink systems whose messages are taken, '
                      "comma-separated; '' = any. Others are counted as rejected_peer",
                      any_type=True)
        self.realtime_priority = declare_realtime(self)
        self._init_port('MAVLink', REJECT_KINDS, warn_period)
        try:
            self.mixer = Mixer(tuple(int(c) for c in channels))
            self.utc0_us = parse_utc(utc)
            self.allow_ids = parse_id_list(allow_ids, 'allow_system_ids', 1, 255)
            self.link = self._open_link(transport, bind, tcp_bind, fc_address, 'fc_address')
        except (ValueError, OSError) as exc:
            raise ConfigError(str(exc)) from exc
        self.scenario = load_scenario(scenario_file)
        self.suite = SensorSuite(self.suite_cfg, self.scenario)
        self.encoder = hil.HilSensorEncoder()
        self.dec_state = Decimator(state_rate) if state_rate > 0.0 else None
        self.mav_tx = new_mav(self.sysid, self.compid)
        self.mav_rx = new_mav(self.sysid, self.compid)
        self.mission = MissionServer(items_from_scenario(self.scenario.mission),
                                     mission_timeout, mission_retries)
        self.peers = PeerTable(self.peer_timeout_s)
        self.sim_state = None
        self._session_started = False
        self._lock = threading.Lock()
        self._count = dict(rx=0, actuators=0, ignored=0, sensor=0, gps=0)
        self._last_sensor_ns = None
        self._halted_at_ns = 0          # last frame sent when the sim was paused/stopped [ns]
        self._last_state_ns = -1
        self._engaged = False
        self._throttles = [0.0] * 4
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
        self._reader = threading.Thread(target=self._read_loop, name='mavlink-rx', daemon=True)
        self._reader.start()
        self.get_logger().info(
            f'MAVLink 2 {self.link.describe()}, our id {self.sysid}:{self.compid}; '
            f'{describe(self.suite_cfg)}; mission {len(self.mission.items)} items from '
            f'{self.scenario.name}; mixer motor channels {self.mixer.motor_channels}')
        self._publish_status()

    def _d(self, *a, **k):
        return declare(self, *a, **k)

    # --- sending -------------------------------------------------------------------------------
    def _send(self, *msgs):
        """Send messages in one datagram (one send per step instead of up to three).

        PX4, MAVSDK and pymavlink parse every frame of a datagram.
        """
        with self._lock:
            data = b''.join(m.pack(self.mav_tx) for m in msgs if m is not None)
            if data:
                self.link.send(data)

    def _running(self) -> bool:
        return self.sim_state == SimState.RUNNING

    def _send_heartbeat(self):
        state = SimState.STOPPED if self.sim_state is None else self.sim_state
        self._send(hil.heartbeat(self.mav_tx, state))
        gone = self.peers.expire(time.monotonic())
        for p in gone:
            self.get_logger().warn(f'peer {p.sysid}:{p.compid} silent for '
                                   f'{self.peer_timeout_s:g} s: dropped')
        if gone:
            self._publish_status()

    def _send_home(self):
        if self._running():
            self._send(hil.home_position(self.mav_tx, self.scenario.origin,
                                         self._last_state_ns // 1000 if self._last_state_ns > 0
                                         else 0))

    def _poll(self):
        with self._lock:
            out = self.mission.poll(time.monotonic())
        self._send(*out)
        self._log_mission()

    def _log_mission(self):
        while self.mission.events:
            self.get_logger().info(self.mission.events.pop(0))

    def _start_mission(self, sysid: int, compid: int):
        with self._lock:
            out = self.mission.start(self.mav_tx, sysid, compid, time.monotonic())
        self._send(*out)
        self._log_mission()

    # --- ROS inputs ----------------------------------------------------------------------------
    def _on_sim_status(self, msg: SimStatus):
        state = SimState(msg.state)
        if state != self.sim_state:
            what = ('sensors follow the steps, actuators accepted' if state == SimState.RUNNING
                    else 'sensors only for steps taken (/sim/step), actuators ignored')
            self.get_logger().info(f'simulation {state.name}: {what}')
            if state != SimState.RUNNING:
                with self._lock:
                    self._halted_at_ns = self._last_sensor_ns or 0
        self.sim_state = state
        if state == SimState.RUNNING and not self._session_started:
            self._session_started = True
            fc = self.peers.flight_controller()
            self._start_mission(*(fc if fc else (self.fc_sysid, self.fc_compid)))
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
        out = []
        if s.imu is not None:
            out.append(self.encoder.encode(self.mav_tx, s, t_ns // 1000))
            self._count['sensor'] += 1
        for fix in s.gnss:
            out.append(hil.hil_gps(self.mav_tx, fix, self.utc0_us + fix.t_ns // 1000))
            self._count['gps'] += 1
        if self.dec_state is not None and self.dec_state.due(t_ns):
            out.append(hil.hil_state_quaternion(self.mav_tx, t_ns // 1000, self.scenario.origin,
                                                *args[1:], self.scenario.environment.gravity))
        if s.imu is not None:
            with self._lock:
                self._last_sensor_ns = t_ns
        self._send(*out)
        if s.imu is None and self._engaged:
            # No HIL_SENSOR at this step, so no FC answer will come: hold the last command.
            self._publish_command(self._throttles, t_ns)

    def _publish_command(self, throttles, t_ns):
        if self.command_sink is not None:
            self.command_sink(throttles, t_ns)
        cmd = self._msg_cmd          # reused: this runs once per step
        cmd.header.stamp = time_msg(t_ns)
        cmd.throttle_cmd = [float(x) for x in throttles]
        self.pub_cmd.publish(cmd)

    # --- MAVLink input (reader thread) ---------------------------------------------------------
    def _read_loop(self):
        if self.realtime_priority:
            # this thread answers the FC: in the plant composition it steps the simulation
            apply_realtime(self, self.realtime_priority, 'MAVLink receive thread')
        while not self._stop.is_set():
            try:
                data, addr = self.link.recv(RECV_POLL_S)
            except (OSError, ValueError):
                if self._stop.is_set():
                    return
                continue
            if data is None:
                continue
            if self._stop.is_set() or not self.context.ok():
                return
            self._guarded(self._handle_bytes, data, addr, 'invalid')

    def _handle_bytes(self, data: bytes, addr):
        """Parse one datagram (TCP: one read) and act on it; one reject if anything was wrong."""
        udp = isinstance(self.link, UdpLink)
        try:
            msgs = self.mav_rx.parse_buffer(data) or []
        finally:
            if udp:
                reset_parser(self.mav_rx)   # a datagram is whole: no frame continues in the next
        problem = None
        if udp and not msgs:
            problem = ('truncated', f'{len(data)} bytes and no complete MAVLink frame')
        for m in msgs:
            if m.get_type() == 'BAD_DATA':
                why = ('undecodable', f'undecodable MAVLink input: {m.reason}')
            elif m.get_srcSystem() == self.sysid and m.get_srcComponent() == self.compid:
                continue   # our own echo
            elif self.allow_ids and m.get_srcSystem() not in self.allow_ids:
                why = ('peer', f'{m.get_type()} from system {m.get_srcSystem()}, not in '
                       'allow_system_ids')
            else:
                self._count['rx'] += 1
                self.link.learn(addr)
                why = self._dispatch(m, addr)
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

    def _dispatch(self, m, addr):
        """Act on one message; return None, or the reject (kind, text) if refused."""
        t = m.get_type()
        now = time.monotonic()
        if t == 'HIL_ACTUATOR_CONTROLS':
            return self._on_actuators(m)
        elif t == 'HEARTBEAT':
            if self.peers.heartbeat(m, f'{addr[0]}:{addr[1]}', now):
                self.get_logger().info(
                    f'peer {m.get_srcSystem()}:{m.get_srcComponent()} at {addr[0]}:{addr[1]}: '
                    f'type {m.type}, autopilot {m.autopilot}, status {m.system_status}')
                if (is_flight_controller(m.type, m.autopilot) and self._session_started
                        and self.mission.state != SENDING):
                    self._start_mission(m.get_srcSystem(), m.get_srcComponent())
        elif t in ('MISSION_REQUEST_INT', 'MISSION_REQUEST', 'MISSION_ACK',
                   'MISSION_REQUEST_LIST'):
            wrong = self._for_us(m)
            if wrong:
                return wrong
            with self._lock:
                if t == 'MISSION_ACK':
                    self.mission.on_ack(m)
                    out = ()
                elif t == 'MISSION_REQUEST_LIST':
                    out = self.mission.on_request_list(self.mav_tx, m, now)
                else:
                    out = self.mission.on_request(self.mav_tx, m, now)
            self._send(*out)
            self._log_mission()
        return None

    def _on_actuators(self, m):
        try:
            thr = self.mixer.throttles(m.controls)
        except ActuatorError as exc:       # garbage is refused whatever the sim does
            return ('value', f'HIL_ACTUATOR_CONTROLS rejected: {exc}; motors keep the last '
                    'valid command')
        with self._lock:
            t_ns = answered_sensor_ns(m.time_usec, self._last_sensor_ns)
            halted = self.sim_state in (SimState.PAUSED, SimState.STOPPED) and \
                t_ns is not None and t_ns <= self._halted_at_ns
        if t_ns is None or halted:
            # no frame sent yet, or paused/stopped: the vehicle does not react. Answers to
            # frames of steps taken after the pause (/sim/step, or the first steps after a
            # resume whose RUNNING status, another topic, has not arrived yet) are taken.
            self._count['ignored'] += 1
            return None
        self._count['actuators'] += 1
        if not self._engaged:
            self._engaged = True
            self.get_logger().info(f'first HIL_ACTUATOR_CONTROLS at sim t = {t_ns / 1e9:.3f} '
                                   's: the flight controller drives the motors')
        self._throttles = thr
        self._publish_command(thr, t_ns)
        return None

    # --- status --------------------------------------------------------------------------------
    def _publish_status(self):
        st = MavlinkLinkStatus()
        st.header.stamp = time_msg(max(self._last_state_ns, 0))
        st.link = self.link.describe()
        st.system_id, st.component_id = self.sysid, self.compid
        now = time.monotonic()
        for p in self.peers.active():
            st.peers.append(MavlinkPeer(
                system_id=p.sysid, component_id=p.compid, mav_type=p.mav_type,
                autopilot=p.autopilot, system_status=p.system_status, address=p.address,
                last_seen_age_s=now - p.last_seen, heartbeats=p.heartbeats))
        c, r = self._count, self.rejects
        st.rx_messages, st.rx_wrong_target = c['rx'], r['target']
        st.rx_bad_frames = r['truncated'] + r['undecodable'] + r['invalid']
        st.rejected_actuators, st.ignored_actuators = r['value'], c['ignored']
        st.actuator_messages, st.hil_sensor_sent, st.hil_gps_sent = (
            c['actuators'], c['sensor'], c['gps'])
        st.mission_state, st.mission_result = self.mission.state, self.mission.result
        st.mission_transfers, st.mission_resent = self.mission.transfers, self.mission.resent
        self.pub_status.publish(st)

    def _publish_diagnostics(self):
        fc = self.peers.flight_controller()
        up = fc is not None
        self._publish_port_status(
            'MAVLink HIL link', self.link.describe(), up,
            f'flight controller {fc[0]}:{fc[1]}, {self._count["rx"]} in, '
            f'{sum(self.rejects.values())} rejected' if up else 'no flight controller heard',
            self._count, [('mission', f'{self.mission.state} {self.mission.result}'.strip()),
                          ('send_errors', self.link.send_errors)])

    def destroy_node(self):
        """Stop the reader thread; PortNode closes the link."""
        self._stop.set()
        if self._reader is not None:
            self._reader.join(timeout=1.0)
        super().destroy_node()


def main(args=None):
    """Run mavlink_bridge."""
    run_node(MavlinkBridge, 'mavlink_bridge', args)


if __name__ == '__main__':
    main()
