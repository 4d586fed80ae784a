"""player: republishes a rosbag2 directory (MCAP or sqlite3) at its recorded timing.

`aerosim play BAG [--rate R] [--loop] [--topics T ...] [--regex R] [--clock] [--start-paused]`
or `ros2 run aerosim player --ros-args -p bag:=BAG ...`.

Messages go out as recorded (raw CDR, no deserialization) on their recorded topics (remap with
`-r old:=new`), each publisher with the QoS its recorded publishers offered (reliability,
durability: a latched /sim/status is latched again). Timing: a message recorded at t is sent at
t0_wall + (t - t0_bag) / rate. A bag that holds /clock (a recorded sim graph) replays its sim
clock as data; `clock:=true` publishes /clock from the bag timeline instead (ros2 bag play
--clock), for bags without one. Services ~/pause, ~/resume, ~/toggle_paused (std_srvs/Trigger)
hold and continue the timeline; start_paused waits for ~/resume.

Lossless by default (`wait_for_acked`, as `ros2 bag play --wait-for-all-acked`): a reliable
publisher keeps the last 200 messages; before it could overwrite one a reader has not
acknowledged yet (every 100 messages of a topic), the player waits until every reader has
acknowledged (at most ack_timeout_s, then a warning). A reader slower than the replay (a
loaded machine) slows the replay instead of losing messages; the timeline moves on by the
time waited.
"""

import time

from rclpy.duration import Duration
from rclpy.node import Node
from rclpy.qos import ReliabilityPolicy
from rosgraph_msgs.msg import Clock as ClockMsg
from std_srvs.srv import Trigger

from sim_bag.core.bagio import TopicFilter, bag_messages, bag_topics, open_reader
from sim_bag.core.params import PLAYER_PARAMETERS, PlayerConfig
from sim_core.errors import ConfigError
from sim_ros import qos
from sim_ros.convert import message_class, time_msg
from sim_ros.params import read_config
from sim_ros.run import make_executor, run_node

# Longest wait between executor turns while a message is not yet due [s] (services, /clock).
POLL_S = 0.005
END_GRACE_S = 0.5         # after the last message: let reliable readers fetch it


class Timeline:
    """Bag time against the steady wall clock: rate, pause, re-anchoring (pure)."""

    def __init__(self, rate: float, t0_bag: int, wall_s: float, paused: bool):
        """Bag time t0_bag [ns] at wall time wall_s [s]."""
        self.rate = rate
        self.anchor_bag = t0_bag
        self.anchor_wall = wall_s
        self.paused = paused

    def bag_time(self, wall_s: float) -> int:
        """The bag time [ns] playback has reached at wall_s."""
        if self.paused:
            return self.anchor_bag
        return self.anchor_bag + int((wall_s - self.anchor_wall) * self.rate * 1e9)

    def set_paused(self, paused: bool, wall_s: float) -> None:
        """Pause (freeze bag time) or resume (continue from where it froze)."""
        if paused != self.paused:
            self.anchor_bag = self.bag_time(wall_s)
            self.anchor_wall = wall_s
            self.paused = paused

    def hold(self, seconds: float) -> None:
        """Bag time stood still for seconds of wall time (the player waited for readers)."""
        if not self.paused:
            self.anchor_wall += seconds

    def wait_s(self, t_bag: int, wall_s: float) -> float:
        """Wall seconds until bag time t_bag is due (inf while paused)."""
        if self.paused:
            return float('inf')
        return (t_bag - self.bag_time(wall_s)) * 1e-9 / self.rate


class Player(Node):
    """Republishes one bag."""

    def __init__(self):
        """Declare parameters, open the bag, create the publishers and services."""
        super().__init__('player')
        cfg = read_config(self, PlayerConfig, PLAYER_PARAMETERS)
        if not cfg.bag:
            raise ConfigError('bag: give the bag directory (-p bag:=DIR)')
        self.bag_path, self.rate, self.loop, self.clock = cfg.bag, cfg.rate, cfg.loop, cfg.clock
        self.select = TopicFilter(names=tuple(n for n in cfg.topics if n), regex=cfg.regex,
                                  exclude=cfg.exclude)
        self.clock_period_s = 1.0 / cfg.clock_rate_hz
        self.start_paused, self.wait_for_acked = cfg.start_paused, cfg.wait_for_acked
        self.ack_timeout_s = cfg.ack_timeout_s
        self.wait_for_readers, self.readers_timeout_s = cfg.wait_for_readers, \
            cfg.readers_timeout_s
        self._readers_ok: set = set()
        reader = open_reader(self.bag_path)
        try:
            topics = [t for t in bag_topics(reader) if self.select.takes(t.name)]
            self.t0 = reader.start_time
            self.duration_s = reader.duration * 1e-9
        finally:
            reader.close()
        if not topics:
            raise ConfigError(f'bag {self.bag_path}: no topic selected')
        if self.clock and any(t.name == '/clock' for t in topics):
            self.get_logger().warning('the bag has /clock: replaying it; clock:=true ignored')
            self.clock = False
        self.pubs = {}
        self._unacked = {}           # reliable topics: messages since the last full ack
        self.ack_waits = self.ack_timeouts = 0
        for t in topics:
            try:
                cls = message_class(t.msgtype)
            except (ImportError, AttributeError, ValueError):
                raise ConfigError(f'bag topic {t.name}: type {t.msgtype} is not installed') \
                    from None
            # the QoS its recorded publishers offered (reliable / latched if all were)
            profile = qos.matching([(q.reliability.value, q.durability.value) for q in t.qos],
                                   qos.STATE.depth)
            self.pubs[t.name] = self.create_publisher(cls, t.name, profile)
            if self.wait_for_acked and profile.reliability == ReliabilityPolicy.RELIABLE:
                self._unacked[t.name] = 0
        self.pub_clock = (self.create_publisher(ClockMsg, '/clock', qos.CLOCK)
                          if self.clock else None)
        self.counts = dict.fromkeys(self.pubs, 0)
        self.timeline = None
        self.paused = self.start_paused
        for name, fn in (('pause', lambda: True), ('resume', lambda: False),
                         ('toggle_paused', lambda: not self.paused)):
            self.create_service(Trigger, f'~/{name}',
                                lambda req, resp, f=fn: self._on_pause(f(), resp))
        self.get_logger().info(
            f'playing {self.bag_path}: {len(topics)} topics, {self.duration_s:.2f} s at rate '
            f'{self.rate:g}{" (loop)" if self.loop else ""}'
            f'{"; paused: call ~/resume" if self.start_paused else ""}')

    def _on_pause(self, paused: bool, resp):
        self.paused = paused
        if self.timeline is not None:
            self.timeline.set_paused(paused, time.monotonic())
        resp.success = True
        resp.message = 'paused' if paused else 'playing'
        self.get_logger().info(resp.message)
        return resp

    def play(self, executor) -> int:
        """Play the bag (loop: forever); exit code 0."""
        passes = 0
        while executor.context.ok():
            self.timeline = Timeline(self.rate, self.t0, time.monotonic(), self.paused)
            self._next_clock = 0.0
            reader = open_reader(self.bag_path)
            try:
                for topic, t_ns, data in bag_messages(reader, self.select):
                    if not self._wait_until(executor, t_ns):
                        return 0
                    self._wait_for_readers(executor, topic)
                    self._before_publish(topic)
                    self.pubs[topic].publish(data)
                    self.counts[topic] += 1
            finally:
                reader.close()
            passes += 1
            self.get_logger().info(f'pass {passes} done: {sum(self.counts.values())} messages '
                                   'published so far')
            if not self.loop:
                break
        end = time.monotonic() + END_GRACE_S
        while executor.context.ok() and time.monotonic() < end:
            executor.spin_once(timeout_sec=POLL_S)
        for topic, n in sorted(self.counts.items()):
            self.get_logger().info(f'  {topic}: {n}')
        if self._unacked:
            self.get_logger().info(f'waited for acknowledgements {self.ack_waits} times '
                                   f'({self.ack_timeouts} timed out)')
        return 0

    def _wait_for_readers(self, executor, topic: str) -> None:
        """Hold bag time until topic's publisher matched wait_for_readers readers (once)."""
        if not self.wait_for_readers or topic in self._readers_ok:
            return
        self._readers_ok.add(topic)
        pub, t0 = self.pubs[topic], time.monotonic()
        while executor.context.ok() and pub.get_subscription_count() < self.wait_for_readers:
            if time.monotonic() - t0 > self.readers_timeout_s:
                self.get_logger().warning(
                    f'{topic}: {pub.get_subscription_count()} of {self.wait_for_readers} '
                    f'readers after {self.readers_timeout_s:g} s: playing on')
                break
            executor.spin_once(timeout_sec=POLL_S)
        waited = time.monotonic() - t0
        self.timeline.hold(waited)
        self.get_logger().info(f'{topic}: {pub.get_subscription_count()} reader(s) matched '
                               f'after {waited:.2f} s')

    def _before_publish(self, topic: str) -> None:
        """Reliable topic: every half history, wait for the readers' acknowledgements."""
        n = self._unacked.get(topic)
        if n is None:
            return
        if n < qos.STATE.depth // 2:
            self._unacked[topic] = n + 1
            return
        t0 = time.monotonic()
        self.ack_waits += 1
        if not self.pubs[topic].wait_for_all_acked(Duration(seconds=self.ack_timeout_s)):
            self.ack_timeouts += 1
            self.get_logger().warning(
                f'{topic}: a reader did not acknowledge within {self.ack_timeout_s:g} s '
                f'({self.ack_timeouts} times so far): it may miss messages',
                throttle_duration_sec=5.0)
        self._unacked[topic] = 1
        self.timeline.hold(time.monotonic() - t0)

    def _wait_until(self, executor, t_ns: int) -> bool:
        """Serve services and /clock until t_ns is due; False if the context ended."""
        while executor.context.ok():
            now = time.monotonic()
            self._tick_clock(now)
            wait = self.timeline.wait_s(t_ns, now)
            if wait <= 0.0:
                return True
            executor.spin_once(timeout_sec=min(wait, POLL_S))
        return False

    def _tick_clock(self, now: float) -> None:
        if self.pub_clock is not None and now >= self._next_clock:
            self._next_clock = now + self.clock_period_s
            self.pub_clock.publish(ClockMsg(clock=time_msg(self.timeline.bag_time(now))))


def main(args=None):
    """Play a bag; exit 0 at its end, 2 on a configuration error."""
    def body(node):
        executor = make_executor()
        executor.add_node(node)
        return node.play(executor)
    run_node(Player, 'player', args, body=body)


if __name__ == '__main__':
    main()
