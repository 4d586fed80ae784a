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
import time

from rclpy.node import Node

from sim_bag.core.bagio import BagWriter, TopicFilter, qos_to_bag
from sim_bag.core.params import RECORDER_PARAMETERS, RecorderConfig
from sim_bag.raw_topics import RawTopics
from sim_ros.params import read_config
from sim_ros.run import run_node, until_stopped

# Per-subscription queue: deep enough that a burst while the bag flushes a chunk loses nothing.
QUEUE_DEPTH = 1000


def default_output() -> str:
    """rosbag2's default name, in the current folder: rosbag2_YYYY_MM_DD-HH_MM_SS."""
    return datetime.now().strftime('rosbag2_%Y_%m_%d-%H_%M_%S')


class Recorder(Node):
    """Discovers and records topics into one bag."""

    def __init__(self):
        """Declare parameters, open the bag, start discovery."""
        super().__init__('recorder')
        cfg = read_config(self, RecorderConfig, RECORDER_PARAMETERS)
        self.select = TopicFilter(
            names=tuple(self.resolve_topic_name(n) for n in cfg.topics if n),
            regex=cfg.regex, exclude=cfg.exclude)
        self.bag = BagWriter(cfg.output or default_output(), cfg.storage)
        self.stopping = False
        self.topics = RawTopics(self, self.select, QUEUE_DEPTH, self._add_topic,
                                self.on_message, cfg.discovery_period_s)
        self.get_logger().info(f'recording to {self.bag.path} ({cfg.storage}); topics: '
                               f'{", ".join(self.select.names) or "all"}'
                               f'{"; regex " + self.select.regex if self.select.regex else ""}')
        self.topics.discover()

    def _add_topic(self, topic, msgtype, pubs):
        self.bag.add_topic(topic, msgtype, [
            qos_to_bag(p.qos_profile.reliability, p.qos_profile.durability, p.qos_profile.depth)
            for p in pubs])

    def on_message(self, topic: str, raw: bytes) -> None:
        """Write one message, stamped with its receive time on the node's clock."""
        if not self.stopping:
            self.bag.write(topic, self.get_clock().now().nanoseconds, raw)

    def close(self) -> None:
        """Stop receiving, then finish the bag; log what it holds."""
        self.stopping = True
        self.topics.close()
        self.bag.close()
        total = self.bag.total()
        self.get_logger().info(f'closed {self.bag.path}: {total} messages on '
                               f'{len(self.bag.counts)} topics')
        for topic, n in sorted(self.bag.counts.items()):
            self.get_logger().info(f'  {topic}: {n}')


def main(args=None) -> None:
    """Record until SIGINT/SIGTERM, then close the bag; exit 2 on a configuration error."""
    def body(node):
        # a signal only sets a flag (until_stopped): it never interrupts a write half-way
        executor = until_stopped(node)
        # take what is already queued (delivered by DDS, not yet written), until idle
        deadline, idle = time.monotonic() + 1.0, 0
        while time.monotonic() < deadline and executor.context.ok() and idle < 3:
            before = node.bag.total()
            executor.spin_once(timeout_sec=0.02)
            idle = idle + 1 if node.bag.total() == before else 0
        node.close()
    run_node(Recorder, 'recorder', args, body=body)


if __name__ == '__main__':
    main()
