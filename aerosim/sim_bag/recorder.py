"""recorder: writes the topics of a running graph to a rosbag2 directory (MCAP or sqlite3).

`aerosim record [-o DIR] [--storage mcap|sqlite3] [--topics T ...] [--regex R] [--exclude R]`
or `ros2 run aerosim recorder --ros-args -p output:=DIR ...`.

Topics are discovered every discovery_period_s and subscribed *raw* (the CDR bytes go to the
bag without deserialization, so one process keeps up with the 250 Hz pipeline). Each
subscription matches its publishers' QoS (transient local if they all are, so latched topics
such as /sim/status are recorded; best effort if any publisher is). The bag stores each type's
full definition and RIHS01 hash from the installed .msg files (sim_bag.core.bagio), custom
aerosim_msgs included. Timestamps are receive times on the node's clock (wall time, or sim time
with use_sim_time), as ros2 bag record does.

SIGINT/SIGTERM: the subscriptions are dropped first, then the bag is closed (storage finished,
metadata.yaml written): every message the callback wrote is in the bag.
"""

from datetime import datetime
import signal
import time

import rclpy
from rclpy.clock import Clock, ClockType
from rclpy.executors import SingleThreadedExecutor
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy
from rclpy.signals import SignalHandlerOptions

from sim_bag.core.bagio import DEFAULT_EXCLUDE, BagWriter, TopicFilter, qos_to_bag
from sim_core.errors import ConfigError
from sim_core.ros.monitor import message_class
from sim_core.ros.params import declare

# Per-subscription queue: deep enough that a burst while the bag flushes a chunk loses nothing.
QUEUE_DEPTH = 1000


def default_output() -> str:
    """rosbag2's default name, in the current folder: rosbag2_YYYY_MM_DD-HH_MM_SS."""
    return datetime.now().strftime('rosbag2_%Y_%m_%d-%H_%M_%S')


def subscription_qos(publishers) -> QoSProfile:
    """The QoS that receives from every publisher of a topic (rosbag2's adaptation rule)."""
    pubs = [p.qos_profile for p in publishers]
    reliable = bool(pubs) and all(q.reliability == ReliabilityPolicy.RELIABLE for q in pubs)
    latched = bool(pubs) and all(q.durability == DurabilityPolicy.TRANSIENT_LOCAL for q in pubs)
    return QoSProfile(
        depth=QUEUE_DEPTH, history=HistoryPolicy.KEEP_LAST,
        reliability=ReliabilityPolicy.RELIABLE if reliable else ReliabilityPolicy.BEST_EFFORT,
        durability=DurabilityPolicy.TRANSIENT_LOCAL if latched else DurabilityPolicy.VOLATILE)


class Recorder(Node):
    """Discovers and records topics into one bag."""

    def __init__(self):
        """Declare parameters, open the bag, start discovery."""
        super().__init__('recorder')
        out = declare(self, 'output', '', "Bag directory to create ('' = rosbag2_<date>)")
        storage = declare(self, 'storage', 'mcap', 'Storage: mcap or sqlite3')
        names = declare(self, 'topics', [''], 'Topics to record (names; relative names are '
                        "resolved in the node's namespace); empty = all")
        self.select = TopicFilter(
            names=tuple(self.resolve_topic_name(n) for n in names if n),
            regex=declare(self, 'regex', '', 'Also record topics matching this regex'),
            exclude=declare(self, 'exclude', DEFAULT_EXCLUDE,
                            'Do not record topics matching this regex (names given in topics '
                            'are always recorded)'))
        period = declare(self, 'discovery_period_s', 0.2, 'Topic discovery period [s] (wall)',
                         0.01, 10.0)
        self.bag = BagWriter(out or default_output(), storage)
        self.subs = {}
        self._skipped = set()
        self.stopping = False
        self._wall = Clock(clock_type=ClockType.STEADY_TIME)
        self.create_timer(period, self.discover, clock=self._wall)
        self.get_logger().info(f'recording to {self.bag.path} ({storage}); topics: '
                               f'{", ".join(self.select.names) or "all"}'
                               f'{"; regex " + self.select.regex if self.select.regex else ""}')
        self.discover()

    def discover(self) -> None:
        """Subscribe to every selected topic that has appeared since the last call."""
        if self.stopping:
            return
        for topic, types in self.get_topic_names_and_types():
            if topic in self.subs or topic in self._skipped or not self.select.takes(topic):
                continue
            if len(types) != 1:
                self._skip(topic, f'{len(types)} types on one topic ({", ".join(types)})')
                continue
            pubs = self.get_publishers_info_by_topic(topic)
            if not pubs:
                continue            # a subscriber only: wait for a publisher (its QoS matters)
            try:
                cls = message_class(types[0])
                self.bag.add_topic(topic, types[0], [
                    qos_to_bag(p.qos_profile.reliability, p.qos_profile.durability,
                               p.qos_profile.depth) for p in pubs])
            except (ImportError, AttributeError, ValueError) as exc:
                self._skip(topic, f'type {types[0]}: {exc}')
                continue
            profile = subscription_qos(pubs)
            self.subs[topic] = self.create_subscription(
                cls, topic, lambda raw, t=topic: self.on_message(t, raw), profile, raw=True)
            self.get_logger().info(f'subscribed {topic} [{types[0]}] '
                                   f'({profile.reliability.name.lower()}, '
                                   f'{profile.durability.name.lower()})')

    def _skip(self, topic, why):
        self._skipped.add(topic)
        self.get_logger().warning(f'not recording {topic}: {why}')

    def on_message(self, topic: str, raw: bytes) -> None:
        """Write one message, stamped with its receive time on the node's clock."""
        if not self.stopping:
            self.bag.write(topic, self.get_clock().now().nanoseconds, raw)

    def close(self) -> None:
        """Stop receiving, then finish the bag; log what it holds."""
        self.stopping = True
        for sub in self.subs.values():
            self.destroy_subscription(sub)
        self.subs.clear()
        self.bag.close()
        total = self.bag.total()
        self.get_logger().info(f'closed {self.bag.path}: {total} messages on '
                               f'{len(self.bag.counts)} topics')
        for topic, n in sorted(self.bag.counts.items()):
            self.get_logger().info(f'  {topic}: {n}')


def main(args=None) -> None:
    """Record until SIGINT/SIGTERM; exit 2 on a configuration error."""
    # Our own handlers: a signal only sets a flag, so it never interrupts a write half-way.
    rclpy.init(args=args, signal_handler_options=SignalHandlerOptions.NO)
    stop = []
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.append(1))
    node = None
    try:
        node = Recorder()
        executor = SingleThreadedExecutor()
        executor.add_node(node)
        while not stop and rclpy.ok():
            executor.spin_once(timeout_sec=0.1)
        # take what is already queued (delivered by DDS, not yet written), until idle
        deadline, idle = time.monotonic() + 1.0, 0
        while time.monotonic() < deadline and rclpy.ok() and idle < 3:
            before = node.bag.total()
            executor.spin_once(timeout_sec=0.02)
            idle = idle + 1 if node.bag.total() == before else 0
    except ConfigError as exc:
        rclpy.logging.get_logger('recorder').fatal(f'configuration error: {exc}')
        raise SystemExit(2) from exc
    finally:
        if node is not None:
            node.close()
            node.destroy_node()
        rclpy.try_shutdown()


if __name__ == '__main__':
    main()
