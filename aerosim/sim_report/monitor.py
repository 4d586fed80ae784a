"""monitor: watches a running graph for N sim seconds, then reports what it published and exits.

Used by `aerosim launch <graph> --sim-seconds N` (the headless demo) and by tests. It discovers
the topics under its namespace plus /sim/status, subscribes to them raw (no deserialization
cost), counts messages and measures their rates on sim time (/clock). The N sim seconds are
counted from the moment the graph's topics are discovered (the set unchanged for two discovery
periods): a graph running as fast as possible is seconds of sim time ahead of the monitor by
then, and a report over a window the monitor did not watch would list nothing.
"""

import time

import rclpy
from rclpy.clock import Clock, ClockType
from rclpy.executors import ExternalShutdownException
from rclpy.node import Node
from rclpy.serialization import deserialize_message
from rosgraph_msgs.msg import Clock as ClockMsg

from sim_core.timeutil import NS_PER_S
from sim_report.core.params import MONITOR_PARAMETERS, MonitorConfig
from sim_ros import qos
from sim_ros.convert import message_class, time_ns
from sim_ros.params import read_config


def summarize(topic: str, msg) -> str:
    """One line with the essentials of a message, for the report."""
    def v3(v):
        return f'({v.x:+.3f}, {v.y:+.3f}, {v.z:+.3f})'
    t = type(msg).__name__
    if t == 'VehicleState':
        return f'position ENU {v3(msg.state.pose.position)} m, velocity {v3(msg.velocity)} m/s'
    if t == 'IMU':
        return f'specific force {v3(msg.acceleration)} m/s^2, gyro {v3(msg.gyroscope)} rad/s'
    if t == 'MagneticField':
        f = msg.magnetic_field
        return f'field ({f.x * 1e6:+.2f}, {f.y * 1e6:+.2f}, {f.z * 1e6:+.2f}) uT'
    if t == 'FluidPressure':
        return f'{msg.fluid_pressure / 100.0:.2f} hPa'
    if t == 'Temperature':
        return f'{msg.temperature:.2f} degC'
    if t == 'NavSatFix':
        return f'lat {msg.latitude:.7f} lon {msg.longitude:.7f} alt {msg.altitude:.2f} m'
    if t == 'SimStatus':
        return (f'state {msg.state} steps {msg.steps} RTF {msg.real_time_factor:.2f} late '
                f'{msg.late_steps} rejected {msg.rejected_inputs}')
    return ''


class MonitorNode(Node):
    """Counts messages on every topic of the graph until the sim time limit."""

    def __init__(self):
        """Declare parameters and start discovery."""
        super().__init__('monitor')
        cfg = read_config(self, MonitorConfig, MONITOR_PARAMETERS)
        self.stop_after_s, self.timeout_s = cfg.stop_after_sim_s, cfg.startup_timeout_s
        self._wall = Clock(clock_type=ClockType.STEADY_TIME)
        self._t0_wall = time.monotonic()
        self.t_ns = None
        self.window_start_ns = None      # sim time at which the observation window opened
        self._stable_polls = 0
        self.stats = {}
        self.done = False
        self.exit_code = 0
        self.create_subscription(ClockMsg, '/clock', self._on_clock, qos.CLOCK)
        self.create_timer(0.25, self._discover, clock=self._wall)

    def _on_clock(self, msg):
        self.t_ns = time_ns(msg.clock)
        start = self.window_start_ns
        if start is not None and self.t_ns - start >= self.stop_after_s * NS_PER_S \
                and not self.done:
            self._report()

    def _discover(self):
        if self.t_ns is None and time.monotonic() - self._t0_wall > self.timeout_s:
            self.get_logger().error(f'no /clock after {self.timeout_s:g} s: is the graph up?')
            self.exit_code, self.done = 1, True
            return
        ns = self.get_namespace().rstrip('/') + '/'
        known = len(self.stats)
        for topic, types in self.get_topic_names_and_types():
            if topic in self.stats or topic in ('/rosout', '/parameter_events', '/clock'):
                continue
            if not (topic.startswith(ns) or topic.startswith('/sim/')):
                continue
            try:
                cls = message_class(types[0])
            except (ImportError, AttributeError, ValueError):
                continue
            entry = {'type': types[0], 'cls': cls, 'count': 0, 'first_ns': None, 'last': None}
            self.stats[topic] = entry
            # as its publishers offer it (rosbag2's rule): /sim/status is latched,
            # /sim/collisions volatile; a latched request of a volatile topic warned twice
            profile = qos.matching([(p.qos_profile.reliability, p.qos_profile.durability)
                                    for p in self.get_publishers_info_by_topic(topic)], 100)
            self.create_subscription(cls, topic, lambda raw, e=entry: self._on_msg(e, raw),
                                     profile, raw=True)
        if self.window_start_ns is None and self.t_ns is not None:
            self._stable_polls = self._stable_polls + 1 if self.stats and \
                len(self.stats) == known else 0
            if self._stable_polls >= 2:
                self.window_start_ns = self.t_ns
                for e in self.stats.values():        # count from the window on
                    e['count'], e['first_ns'] = 0, None

    def _on_msg(self, entry, raw):
        entry['last'] = raw
        if self.window_start_ns is None:
            return
        entry['count'] += 1
        if entry['first_ns'] is None:
            entry['first_ns'] = self.t_ns

    def _report(self):
        self.done = True
        log = self.get_logger()
        t = (self.t_ns - self.window_start_ns) / NS_PER_S
        wall = time.monotonic() - self._t0_wall
        t0 = self.window_start_ns / NS_PER_S
        log.info(f'--- {t:.2f} s of sim time observed (sim t = {t0:.2f} to '
                 f'{self.t_ns / NS_PER_S:.2f} s; {wall:.1f} s wall since start); published '
                 'topics ---')
        for topic in sorted(self.stats):
            e = self.stats[topic]
            span = (self.t_ns - (e['first_ns'] or 0)) / NS_PER_S
            rate = '      -'
            if span > 0 and e['count'] > 1:
                rate = f'{(e["count"] - 1) / span:7.1f} Hz'
            last = summarize(topic, deserialize_message(e['last'], e['cls'])) if e['last'] else ''
            log.info(f'{topic:32s} {e["type"]:34s} {e["count"]:7d} msgs {rate}  {last}')


def main(args=None):
    """Run the monitor until its report is done; exit code 0 on success."""
    rclpy.init(args=args)
    node = MonitorNode()
    code = 0
    try:
        while rclpy.ok() and not node.done:
            rclpy.spin_once(node, timeout_sec=0.1)
        code = node.exit_code
    except (KeyboardInterrupt, ExternalShutdownException):
        code = 0
    finally:
        node.destroy_node()
        rclpy.try_shutdown()
    raise SystemExit(code)


if __name__ == '__main__':
    main()
