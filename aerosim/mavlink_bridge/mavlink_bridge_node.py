"""mavlink_bridge: MAVLink HIL link between the simulated vehicle and a flight controller.

Simulator -> FC: HEARTBEAT (1 Hz), HOME_POSITION (1 Hz), the scenario mission (MISSION_COUNT /
MISSION_ITEM_INT), HIL_SENSOR (IMU rate), HIL_GPS (GNSS rate, if on), HIL_STATE_QUATERNION.
FC -> simulator: HIL_ACTUATOR_CONTROLS -> effector_command (aerosim_msgs/AircraftEffectorCommand).
The sensors come from the same SensorSuite as sensors_node (same parameters, same seed: the
same samples), driven by vehicle_state. Topics: subscribes vehicle_state, /sim/status;
publishes effector_command, mavlink/status (aerosim_msgs/MavlinkLinkStatus, latched) and the
link's DiagnosticStatus on /diagnostics (FC connected or not, rates, rejects by kind); with
sensor_topics (hil_plant) also the ROS sensor topics of the samples it sends.

This node only wires: the decisions (what to send, take, refuse, log) are HilBridge's
(mavlink_bridge.core.bridge), which owns the shared state behind its lock and explains the
two links (HIL; mission_link for PX4) and how input is accounted. Threads (rule 3 of
sim_ros.bridge_node): the executor runs the ROS callbacks and the wall-clock timers
(heartbeat, home, mission retries: on while the simulation is paused); one reader thread per
link waits on its socket and answers at once (lowest lockstep latency).

Composed with dynamics_node in one process (mavlink_bridge.hil_plant), the state arrives by a
direct call of ``on_state`` and the answer leaves through ``command_sink`` (the dynamics node's
apply_command) before effector_command is published for the tools: no middleware hop in the
lockstep loop.
"""

import threading
import time
from typing import Callable, Optional, Sequence

from rclpy.clock import Clock, ClockType
import rclpy.logging

from aerosim_msgs.msg import AircraftEffectorCommand, MavlinkLinkStatus, SimStatus, VehicleState
from mavlink_bridge.core import bridge as hb
from mavlink_bridge.core.endpoint import Endpoint
from mavlink_bridge.core.step_split import StepSplit
from mavlink_bridge.readers import FcFollower, mission_endpoint
from mavlink_bridge.status import diagnostic_values, fill_command, link_status
from sim_core import realtime as rt
from sim_core.clock import SimState
from sim_core.errors import ConfigError
from sim_core.link import WAIT, SpinWait, Verdict, parse_id_list
from sim_ros import qos
from sim_ros.bridge_node import BridgeNode
from sim_ros.convert import time_msg, vehicle_state_arrays
from sim_ros.params import apply_realtime, declare_realtime, read_config
from sim_ros.run import run_node
from sim_sensors.core.landing_target import PARAMETERS as TARGET_PARAMETERS
from sim_sensors.core.landing_target import TargetConfig
from sim_sensors.params import declare_suite, describe
from sim_sensors.topics import SensorTopics, declare_frames

RECV_POLL_S = 0.1


class MavlinkBridge(BridgeNode):
    """HIL bridge node: sockets, threads, timers and topics around a HilBridge."""

    # destroy_node() may run on a half-built node (a configuration error in __init__)
    core = mlink = _stop = None
    _readers = ()

    def __init__(self, direct_state: bool = False, **node_kw):
        """Declare parameters, open the links, start the reader threads.

        direct_state: the vehicle state comes through on_state() from a node of the same
        process; vehicle_state is not subscribed. node_kw: rclpy Node arguments (a fleet's
        composition gives each vehicle's bridge its namespace and parameter_overrides).
        """
        super().__init__('mavlink_bridge', **node_kw)
        self._readers = []
        self._stop = threading.Event()
        cfg = self.cfg = read_config(self, hb.BridgeConfig, hb.PARAMETERS, hb.ANY_TYPE)
        suite_cfg = declare_suite(self)
        target_cfg = read_config(self, TargetConfig, TARGET_PARAMETERS)
        frames = declare_frames(self)
        self.realtime_priority = declare_realtime(self, "the FC's process")
        self._spin = SpinWait(cfg.spin_wait_us * 1e-6)
        self._init_port('MAVLink', hb.REJECT_KINDS, cfg.warn_period_s)
        try:
            allow_ids = parse_id_list(cfg.allow_system_ids, 'allow_system_ids', 1, 255)
            self.link = self._open_link(cfg.transport, cfg.bind, cfg.tcp_bind, cfg.fc_address,
                                        'fc_address', vet=self._vet, on_event=self._on_tcp)
            if cfg.mission_link:
                self.mlink = mission_endpoint(cfg, self.allow, self._refused, self.get_logger())
        except (ValueError, OSError) as exc:
            raise ConfigError(str(exc)) from exc
        self.hil = Endpoint(self.link, cfg.system_id, cfg.component_id, 'HIL link',
                            cfg.peer_timeout_s)
        self.follower = FcFollower(self.get_logger(), self.hil.udp)    # realtime_priority -1
        self.core = hb.HilBridge(cfg, hb.vehicle_scenario(cfg), suite_cfg, self.hil,
                                 self.mlink, allow_ids, target_cfg)
        # () -> the world's decks now ((DeckSpec, PadPose) pairs), set by a world's
        # composition (sim_world.world_plant); None: no decks, no downward sensors
        self.decks: Optional[Callable[[], Sequence]] = None
        self.topics = SensorTopics(self, *frames) if cfg.sensor_topics else None
        self._work_s = 0.0              # wall time handling the FC's answers [s]
        self.split = StepSplit()        # where each lockstep step's wall time goes
        # Called with (command, stamp_ns) before effector_command is published (composition):
        # motor throttles, or a plane's EffectorCommand (the fixed-wing mixer's).
        self.command_sink = None
        self._msg_cmd = AircraftEffectorCommand()
        self.pub_cmd = self.create_publisher(AircraftEffectorCommand, 'effector_command',
                                             qos.COMMAND)
        self.pub_status = self.create_publisher(MavlinkLinkStatus, 'mavlink/status', qos.LATCHED)
        if not direct_state:
            self.create_subscription(VehicleState, 'vehicle_state', self._on_state, qos.STATE)
        self.create_subscription(SimStatus, '/sim/status', self._on_sim_status, qos.LATCHED)
        wall = Clock(clock_type=ClockType.STEADY_TIME)
        for period, fn in ((1.0 / cfg.heartbeat_rate_hz, self.core.heartbeat),
                           (1.0 / cfg.home_rate_hz, lambda _now: self.core.home()),
                           (0.05, self.core.poll)):
            self.create_timer(period, lambda fn=fn: self._apply(fn(time.monotonic())),
                              clock=wall)
        self.create_timer(1.0, self._publish_status, clock=wall)
        self.create_timer(1.0, self._publish_diagnostics, clock=wall)
        for ep, name in ((self.hil, 'mavlink-rx'), (self.mlink, 'mavlink-mission')):
            if ep is not None:
                t = threading.Thread(target=self._read_loop, args=(ep,), name=name, daemon=True)
                self._readers.append(t)
                t.start()
        where = f'; mission link {self.mlink.describe()}' if self.mlink else ''
        self.get_logger().info(f'MAVLink 2 {self.link.describe()}{where}, '
                               + self.core.describe(describe(suite_cfg)))
        self._publish_status()

    def _send(self, sends) -> None:
        """The frames of a decision, on their links."""
        for ep, msgs in sends:
            ep.send(*msgs)

    def _apply_own(self, act: hb.Actions, sent) -> None:
        """Replies, the step's sensor topics, motor commands, the status."""
        for ep, to, msgs in act.replies:
            ep.send_to(to, *msgs)
        if act.sample is not None:
            if sent is not None:
                self.split.sent(*sent)
            if self.topics is not None:     # after the FC has its sensors: it computes meanwhile
                self.topics.publish(act.sample[0], time_msg(act.sample[1]))
        for command, t_ns in act.commands:
            self._publish_command(command, t_ns)
        if act.status_changed:
            self._publish_status()

    # --- ROS inputs ----------------------------------------------------------------------------
    def _on_sim_status(self, msg: SimStatus):
        self._apply(self.core.on_sim_status(SimState(msg.state), msg.time_scale,
                                            time.monotonic()))

    def _on_state(self, msg: VehicleState):
        self.on_state(vehicle_state_arrays(msg))

    def on_state(self, s):
        """Sensors of one simulation step (a VehicleSample) out to the FC."""
        self._apply(self.core.on_state(s, self.decks() if self.decks is not None else None))

    def _publish_command(self, command, t_ns):
        """command: motor throttles (multirotor) or an EffectorCommand (plane)."""
        if self.command_sink is not None:
            self.command_sink(command, t_ns)
            if not self.pub_cmd.get_subscription_count():
                return               # composed: the topic is for the tools, and none listens
        self.pub_cmd.publish(fill_command(self._msg_cmd, command, t_ns))

    # --- MAVLink input (reader threads) --------------------------------------------------------
    def _read_loop(self, ep: Endpoint):
        if self.realtime_priority > 0 and ep is self.hil:
            # this thread answers the FC: in the plant composition it steps the simulation
            apply_realtime(self, self.realtime_priority, 'MAVLink receive thread')
        follow = self.realtime_priority == rt.AS_PEER and ep is self.hil
        spin = self._spin if ep is self.hil else None
        along = self.realtime_priority == rt.AS_PEER and ep is not self.hil
        taken = None                    # the mission link thread's priority (along)
        while not self._stop.is_set():
            if along and self.follower.prio != taken:
                taken = self.follower.prio
                self.follower.mission_thread_follows(taken)
            try:
                if spin is None:
                    data, addr = ep.link.recv(RECV_POLL_S)
                else:
                    data, addr = ep.link.recv(RECV_POLL_S,
                                              spin.start() if self.core.fast else 0.0)
                    spin.done(data is not None)
            except (OSError, ValueError):
                if self._stop.is_set():
                    return
                continue
            if data is None:
                continue
            if self._stop.is_set() or not self.context.ok():
                return
            t0 = time.time()
            if self._guarded(lambda d, a, ep=ep: self._on_datagram(ep, d, a), data, addr,
                             'invalid'):
                # an FC answer: in the plant composition it integrated the next step, sampled
                # and sent its sensors and published its topics before returning here
                t1 = time.time()
                self._work_s += t1 - t0
                self.split.answered(t0, ep.link.rx_stamp, t1)
                if follow and self.link.remote != self.follower.peer:
                    self.follower.follow_fc(self.link.remote)

    def _on_datagram(self, ep: Endpoint, data: bytes, addr) -> bool:
        """Hand a datagram to the core and carry out its decision; True if it answered a step."""
        act = self.core.on_datagram(ep, data, addr, time.monotonic())
        self._apply(act, addr)
        return bool(act.commands)

    def _vet(self, data: bytes) -> Verdict:
        """TCP: a new connection's first bytes, the FC's or not (the core decides)."""
        return self.core.vet_connection(data) if self.core is not None else WAIT

    def _on_tcp(self, what: str, addr, other) -> None:
        """TCP: the FC's connection taken or gone; another refused (counted, a warning)."""
        where = f'{addr[0]}:{addr[1]}'
        if what == 'refused':
            self._reject('connection', f'TCP connection closed: {other}', addr)
        elif what == 'connected':
            self.get_logger().info(f"flight controller connected from {where}: its first "
                                   "frame is the FC's")
        else:
            self.get_logger().warning(
                f"the flight controller's connection from {where} ended ({other}): a new one "
                "is taken only if its first frame is the FC's (PX4 does not connect again: "
                'restart it)')

    # --- status --------------------------------------------------------------------------------
    def _publish_status(self):
        link = self.link.describe() + (f'; mission: {self.mlink.describe()}' if self.mlink else '')
        self.pub_status.publish(link_status(self.core, link, self.rejects))

    def _publish_diagnostics(self):
        c = self.core
        fc = c.flight_controller()
        self._publish_port_status(
            'MAVLink HIL link', self.link.describe(), fc is not None,
            f'flight controller {fc[0]}:{fc[1]}, {c.count["rx"]} in, '
            f'{sum(self.rejects.values())} rejected' if fc else 'no flight controller heard',
            c.count, diagnostic_values(c, self.mlink.describe() if self.mlink else ''))

    def destroy_node(self):
        """Say POWEROFF (the seed's Stopped state), stop the readers; PortNode closes the link."""
        if self.core is not None:
            for ep, msgs in self.core.stopped_frames().sends:
                ep.send(*msgs)
        if self._stop is not None:
            self._stop.set()
        for t in self._readers:
            t.join(timeout=1.0)
        n = self.core.count['actuators'] if self.core else 0
        if self.mlink is not None:
            self.mlink.link.close()
        log = self.get_logger().name
        super().destroy_node()
        if n:      # once the node is gone: after Ctrl-C its logger could not reach /rosout
            rclpy.logging.get_logger(log).info(self.split.cost(n, self._work_s))


def main(args=None):
    """Run mavlink_bridge."""
    run_node(MavlinkBridge, 'mavlink_bridge', args)


if __name__ == '__main__':
    main()
