"""builtin_fc: a built-in flight controller that behaves like an external autopilot over MAVLink.

A separate process with its own MAVLink UDP endpoint (not a ROS pipeline stage): it downloads
the mission with MISSION_REQUEST_INT, estimates the state from HIL_SENSOR / HIL_GPS, flies the
mission, and answers every HIL_SENSOR with one HIL_ACTUATOR_CONTROLS (lockstep). What it
answers, asks, refuses and says: FcCore (mavlink_bridge.fc.fc_core). This node is an rclpy
node for parameters, logging, its progress topic `fc/progress` (std_msgs/String, one line per
event) and its port's /diagnostics (a BridgeNode, like the bridges: allow_peers, rejects
counted by kind and logged at a limited rate). Threads (rule 4 of sim_ros.bridge_node): its
loop waits on the socket and is the core's only caller; an executor thread serves the
parameter services (`ros2 param get /quad/builtin_fc ...`) and the 1 Hz diagnostics timer.
"""

import threading
import time

from rclpy.clock import Clock, ClockType
from rclpy.executors import SingleThreadedExecutor
import rclpy.logging
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from std_msgs.msg import String

from mavlink_bridge.core.mav import pack
from mavlink_bridge.fc.fc_core import PARAMETERS, REJECT_KINDS, FcConfig, FcCore
from sim_core.errors import ConfigError
from sim_core.link import SpinWait
from sim_ros.bridge_node import BridgeNode
from sim_ros.params import apply_realtime, declare_realtime, read_config
from sim_ros.run import run_node

PROGRESS_QOS = QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE,
                          durability=DurabilityPolicy.TRANSIENT_LOCAL)
RECV_WAIT_S = 0.05          # the loop's longest wait on the socket [s]


class BuiltinFc(BridgeNode):
    """Parameters, link and the receive loop around the FcCore."""

    _cost = ''                  # the cost line logged at the end

    def __init__(self):
        """Declare parameters and open the UDP endpoint."""
        super().__init__('builtin_fc')
        cfg = self.cfg = read_config(self, FcConfig, PARAMETERS)
        self.realtime_priority = declare_realtime(self)
        self.spin = SpinWait(cfg.spin_wait_us * 1e-6)
        self._init_port('MAVLink FC', REJECT_KINDS, cfg.warn_period_s)
        try:
            self.link = self._open_link('udp', cfg.bind, remote=cfg.sim_address,
                                        remote_what='sim_address')
        except (ValueError, OSError) as exc:
            raise ConfigError(str(exc)) from exc
        self.core = FcCore(cfg)
        self.pub = self.create_publisher(String, 'fc/progress', PROGRESS_QOS)
        self.busy_s = 0.0               # wall time handling the simulator's datagrams [s]
        self._cpu0 = 0.0
        self.create_timer(1.0, self._publish_diagnostics,
                          clock=Clock(clock_type=ClockType.STEADY_TIME))
        self.get_logger().info(f'built-in FC {cfg.system_id}:{cfg.component_id} '
                               f'({cfg.vehicle}) on {self.link.describe()}')

    def say(self, text: str):
        """Log and publish a progress line."""
        self.get_logger().info(text)
        self.pub.publish(String(data=text))

    def _send(self, sends) -> None:
        """MAVLink messages to the simulator, one datagram each."""
        for m in sends:
            self.link.send(pack(self.core.mav, m))

    def _apply_own(self, act, _sent) -> None:
        """The progress lines: logged and on fc/progress."""
        for text in act.said:
            self.say(text)

    def run(self):
        """Receive loop until shutdown (or mission done with exit_when_done).

        An executor thread serves the parameter services meanwhile; it stops before the loop
        returns, so the node is never destroyed under a waiting executor.
        """
        services = SingleThreadedExecutor()
        services.add_node(self)         # parameter services and the diagnostics timer

        def serve():
            try:
                services.spin()
            except Exception:  # noqa: BLE001 - shutdown under a waiting executor: nothing to do
                if self.context.ok():
                    raise
        thread = threading.Thread(target=serve, name='parameter services', daemon=True)
        thread.start()
        try:
            self._loop()
        finally:
            services.shutdown(timeout_sec=1.0)
            thread.join(1.0)
            n = self.core.answered
            if n:
                self._cost = (
                    f'answered {n} HIL_SENSOR: {1e6 * self.busy_s / n:.0f} µs of work per '
                    'answer (parse, estimate, control, send), loop thread CPU '
                    f'{1e6 * (time.thread_time() - self._cpu0) / n:.0f} µs per answer (with '
                    'its polling while waiting)')

    def _loop(self):
        if self.realtime_priority > 0:
            apply_realtime(self, self.realtime_priority, 'FC loop')
        self._cpu0 = time.thread_time()
        while self.context.ok():
            self._apply(self.core.tick(time.monotonic()))
            data, addr = self.link.recv(RECV_WAIT_S, self.spin.start())
            self.spin.done(data is not None)
            if data is None:
                continue
            t0 = time.perf_counter()
            self._guarded(self._on_datagram, data, addr, 'invalid')
            self.busy_s += time.perf_counter() - t0
            if self.core.done:
                self.say('mission done: exiting')
                return

    def _on_datagram(self, data: bytes, addr):
        self._apply(self.core.on_datagram(data, time.monotonic(), addr), addr)

    def _publish_diagnostics(self):
        c = self.core
        up = c.sim_peer is not None
        self._publish_port_status(
            'MAVLink FC link', self.link.describe(), up,
            f'simulator {c.sim_peer[0]}:{c.sim_peer[1]}, {c.answered} answered, '
            f'{sum(self.rejects.values())} rejected' if c.sim_peer else 'no simulator heard',
            {'answered': c.answered, 'mission_items': len(c.mission.items)},
            [('phase', c.ap.phase), ('armed', c.ap.armed)])

    def destroy_node(self):
        """Log the FC's own cost per answer (a peer's, measured apart); PortNode closes the link.

        Logged once the node is gone: after Ctrl-C the context is shut down, and a node's
        logger would then fail to publish the line on /rosout.
        """
        log = self.get_logger().name
        super().destroy_node()
        if self._cost:
            rclpy.logging.get_logger(log).info(self._cost)


def main(args=None):
    """Run builtin_fc: its own receive loop instead of spinning."""
    run_node(BuiltinFc, 'builtin_fc', args, body=BuiltinFc.run)


if __name__ == '__main__':
    main()
