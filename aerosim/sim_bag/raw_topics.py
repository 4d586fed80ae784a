"""RawTopics: subscribe raw (CDR bytes) to every selected topic as it appears.

Shared by the recorder and the Foxglove bridge. Every discovery_period_s (wall) the graph is
listed; a selected topic with exactly one type and at least one publisher is subscribed with
the QoS that matches all its publishers (qos.matching: latched topics stay latched). The owner
is asked first (on_topic: raise ValueError/ImportError to refuse, logged once) and then gets
every message (on_message(topic, raw)).
"""

from rclpy.clock import Clock, ClockType

from sim_ros import qos
from sim_ros.convert import message_class


class RawTopics:
    """Topic discovery and raw subscriptions for one node."""

    def __init__(self, node, select, depth, on_topic, on_message, period_s, verb='recording'):
        """select: a TopicFilter; on_topic(topic, msgtype, publishers); on_message(topic, raw)."""
        self.node, self.select, self.depth = node, select, depth
        self.on_topic, self.on_message = on_topic, on_message
        self.verb = verb
        self.subs = {}
        self.types = {}
        self._skipped = set()
        self.closed = False
        node.create_timer(period_s, self.discover, clock=Clock(clock_type=ClockType.STEADY_TIME))

    def discover(self) -> None:
        """Subscribe to every selected topic that has appeared since the last call."""
        if self.closed:
            return
        log = self.node.get_logger()
        for topic, types in self.node.get_topic_names_and_types():
            if topic in self.subs or topic in self._skipped or not self.select.takes(topic):
                continue
            if len(types) != 1:
                self._skip(topic, f'{len(types)} types on one topic ({", ".join(types)})')
                continue
            pubs = self.node.get_publishers_info_by_topic(topic)
            if not pubs:
                continue            # a subscriber only: wait for a publisher (its QoS matters)
            try:
                cls = message_class(types[0])
                self.on_topic(topic, types[0], pubs)
            except (ImportError, AttributeError, ValueError) as exc:
                self._skip(topic, f'type {types[0]}: {exc}')
                continue
            profile = qos.matching([(p.qos_profile.reliability, p.qos_profile.durability)
                                    for p in pubs], self.depth)
            self.types[topic] = types[0]
            self.subs[topic] = self.node.create_subscription(
                cls, topic, lambda raw, t=topic: self.on_message(t, raw), profile, raw=True)
            log.info(f'subscribed {topic} [{types[0]}] ({profile.reliability.name.lower()}, '
                     f'{profile.durability.name.lower()})')

    def _skip(self, topic, why):
        self._skipped.add(topic)
        self.node.get_logger().warning(f'not {self.verb} {topic}: {why}')

    def close(self) -> None:
        """Drop every subscription (no callback runs afterwards)."""
        self.closed = True
        for sub in self.subs.values():
            self.node.destroy_subscription(sub)
        self.subs.clear()
