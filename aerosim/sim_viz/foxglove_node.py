"""foxglove_node: a Foxglove WebSocket server (PyPI foxglove-sdk) serving the graph's topics.

Open Foxglove (app or https://app.foxglove.dev) -> "Open connection" -> Foxglove WebSocket ->
ws://127.0.0.1:8765. Every selected topic (default: the graph's namespace, /sim/*, /clock and
/diagnostics) is advertised as a channel with its ROS 2 schema (ros2msg: the full definition
from the installed .msg files, as rosbag2 stores it) and forwarded as the raw CDR bytes it
was published with: no conversion, so odometry, paths, markers, images and SimStatus appear in
Foxglove's 3D, image and plot panels as they would from foxglove_bridge on a ROS install.
/clock drives Foxglove's time (the server's time capability), so playback follows sim time.
The server binds 127.0.0.1 unless `host` says otherwise.
"""

import foxglove
from rclpy.node import Node

from sim_bag.core.bagio import TopicFilter, msgdef
from sim_bag.raw_topics import RawTopics
from sim_core.errors import ConfigError
from sim_ros.params import read_config
from sim_ros.run import run_node
from sim_viz.core.params import FOXGLOVE_PARAMETERS, FoxgloveConfig

QUEUE_DEPTH = 10            # a viewer wants the newest data, not a backlog


def default_regex(namespace: str) -> str:
    """Topics served by default: the graph's namespace, /sim/*, /clock, /diagnostics."""
    ns = namespace.rstrip('/')
    head = f'^{ns}/|' if ns else '^/|'
    return head + '^/sim/|^/clock$|^/diagnostics$'


class FoxgloveNode(Node):
    """ROS topics -> Foxglove channels."""

    topics = server = None      # destroy_node() may run on a half-built node

    def __init__(self):
        """Declare parameters, start the server, discover topics."""
        super().__init__('foxglove_node')
        cfg = read_config(self, FoxgloveConfig, FOXGLOVE_PARAMETERS)
        host, port = cfg.host, cfg.port
        self.select = TopicFilter(regex=cfg.regex or default_regex(self.get_namespace()),
                                  exclude=cfg.exclude)
        try:
            self.server = foxglove.start_server(
                name=f'aerosim {self.get_namespace()}', host=host, port=port,
                capabilities=[foxglove.Capability.Time])
        except Exception as exc:  # noqa: BLE001 - the SDK raises its own error types
            raise ConfigError(f'host/port: cannot serve on {host}:{port}: {exc}') from None
        self.channels = {}
        self.counts = {}
        self.topics = RawTopics(self, self.select, QUEUE_DEPTH, self._add_channel,
                                self._on_message, cfg.discovery_period_s, verb='serving')
        self.get_logger().info(f'Foxglove WebSocket server on ws://{host}:{self.server.port} '
                               f'(topics matching {self.select.regex})')
        self.topics.discover()

    def _add_channel(self, topic, msgtype, _pubs):
        text, _ = msgdef(msgtype)
        self.channels[topic] = foxglove.Channel(
            topic, message_encoding='cdr',
            schema=foxglove.Schema(name=msgtype, encoding='ros2msg', data=text.encode()))
        self.counts[topic] = 0

    def _on_message(self, topic, raw):
        now = self.get_clock().now().nanoseconds
        if topic == '/clock':
            # builtin_interfaces/Time after the 4-byte CDR header: int32 sec, uint32 nanosec
            sec = int.from_bytes(raw[4:8], 'little', signed=True)
            nsec = int.from_bytes(raw[8:12], 'little')
            self.server.broadcast_time(sec * 1_000_000_000 + nsec)
        self.channels[topic].log(raw, log_time=now)
        self.counts[topic] += 1

    def destroy_node(self):
        """Stop the server with the node."""
        if self.topics is not None:
            self.topics.close()
        if self.server is not None:
            self.server.stop()
        return super().destroy_node()


def main(args=None):
    """Run foxglove_node."""
    run_node(FoxgloveNode, 'foxglove_node', args)


if __name__ == '__main__':
    main()
