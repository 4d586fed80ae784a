"""rosbag2 record and replay (sim_bag): a real sim graph, the recorder and player processes.

Recording: what the bag holds is compared with what a probe subscriber saw published, message
by message (bytes), and the recorder is stopped with SIGINT while the sim runs. Replay: what
the player republishes is compared with the bag field by field.
"""

import json
import os
from pathlib import Path
import signal
import sys
import time

import pytest
from rclpy.qos import QoSProfile, ReliabilityPolicy
from rclpy.serialization import deserialize_message
from std_srvs.srv import Trigger
import yaml

from aerosim_msgs.msg import SimStatus, VehicleState
from aerosim_msgs.srv import SetPaused
from sim_bag.core.bagio import (
    BagWriter,
    TopicFilter,
    bag_messages,
    bag_topics,
    msgdef,
    open_reader,
)
from sim_bag.player import Timeline
from sim_core.errors import ConfigError
from sim_ros import qos
from sim_ros.convert import message_class, time_ns

from conftest import probe_node, spin_for, spin_until
from graph_start import start

NS = 1_000_000_000
STEP_NS = 4_000_000                 # the world at 250 Hz
RECORDED = {
    '/quad/vehicle_state': 'aerosim_msgs/msg/VehicleState',
    '/quad/imu': 'aerosim_msgs/msg/IMU',
    '/quad/odom': 'nav_msgs/msg/Odometry',
    '/sim/status': 'aerosim_msgs/msg/SimStatus',
}


def test_topic_filter_names_regex_and_exclude():
    f = TopicFilter(names=('/rosout',), regex='odom|imu')
    assert f.takes('/rosout')                      # named exactly: taken despite the exclude
    assert f.takes('/quad/odom') and f.takes('/quad/imu/data')
    assert not f.takes('/quad/vehicle_state') and not f.takes('/parameter_events')
    every = TopicFilter()
    assert every.takes('/quad/vehicle_state') and not every.takes('/rosout')
    with pytest.raises(ConfigError, match='regex'):
        TopicFilter(regex='(')
    with pytest.raises(ConfigError, match='absolute'):
        TopicFilter(names=('odom',))


def test_bag_type_hashes_are_the_ones_rosidl_generated():
    # the RIHS01 hash ROS computed when it built the type (its .json) is what the bag stores:
    # a real `ros2 bag play` matches publishers by it
    share = Path(os.environ['AMENT_PREFIX_PATH'].split(':')[0]).parent
    found = 0
    for pre in os.environ['AMENT_PREFIX_PATH'].split(':'):
        for js in Path(pre, 'share').glob('*/msg/*.json'):
            if js.parent.parent.name not in ('aerosim_msgs', 'nav_msgs', 'sensor_msgs'):
                continue
            want = json.loads(js.read_text())['type_hashes'][0]
            assert msgdef(want['type_name'])[1] == want['hash_string'], want['type_name']
            found += 1
    assert found >= 30, share
    text, _ = msgdef('aerosim_msgs/msg/VehicleState')
    assert text.startswith('std_msgs/Header header\n') and 'MSG: aerosim_msgs/ActorState' in text
    with pytest.raises(ConfigError, match='no definition'):
        msgdef('aerosim_msgs/msg/NoSuchType')


@pytest.mark.parametrize('storage', ['mcap', 'sqlite3'])
def test_writer_and_reader_round_trip_both_storages(tmp_path, storage, monkeypatch):
    from rclpy.serialization import serialize_message
    monkeypatch.setenv('ROS_DISTRO', 'kilted')
    msgs = []
    for k in range(50):
        m = VehicleState()
        m.header.stamp.sec, m.header.stamp.nanosec = divmod(k * STEP_NS, NS)
        m.velocity.x = k * 0.5
        msgs.append(serialize_message(m))
    w = BagWriter(tmp_path / 'bag', storage)
    w.add_topic('/quad/vehicle_state', 'aerosim_msgs/msg/VehicleState')
    for k, raw in enumerate(msgs):
        w.write('/quad/vehicle_state', 1000 + k, raw)
    w.close()
    w.close()                                      # idempotent
    meta = yaml.safe_load((tmp_path / 'bag' / 'metadata.yaml').read_text())
    assert meta['rosbag2_bagfile_information']['ros_distro'] == 'kilted'   # not 'rosbags'
    # a ROS_DISTRO that is not a name cannot reach the YAML
    monkeypatch.setenv('ROS_DISTRO', 'x\nmessage_count: 0')
    w = BagWriter(tmp_path / 'bag2', storage)
    w.close()
    meta = yaml.safe_load((tmp_path / 'bag2' / 'metadata.yaml').read_text())
    assert meta['rosbag2_bagfile_information']['ros_distro'] == 'unknown'
    reader = open_reader(tmp_path / 'bag')
    (topic,) = bag_topics(reader)
    assert (topic.name, topic.msgtype, topic.count) == (
        '/quad/vehicle_state', 'aerosim_msgs/msg/VehicleState', 50)
    got = list(bag_messages(reader, TopicFilter()))
    assert [t for _, t, _ in got] == [1000 + k for k in range(50)]
    assert [bytes(d) for _, _, d in got] == msgs
    with pytest.raises(ConfigError, match='exists'):
        BagWriter(tmp_path / 'bag', storage)
    with pytest.raises(ConfigError, match="'mcap' or 'sqlite3'"):
        BagWriter(tmp_path / 'other', 'rosbag1')
    with pytest.raises(ConfigError, match='cannot open'):
        open_reader(tmp_path / 'nothing')


def test_timeline_rate_and_pause():
    tl = Timeline(rate=2.0, t0_bag=10 * NS, wall_s=100.0, paused=False)
    assert tl.bag_time(101.0) == 12 * NS
    assert tl.wait_s(14 * NS, 101.0) == pytest.approx(1.0)
    tl.set_paused(True, 101.5)
    assert tl.bag_time(200.0) == 13 * NS and tl.wait_s(14 * NS, 200.0) == float('inf')
    tl.set_paused(False, 200.0)
    assert tl.bag_time(200.5) == 14 * NS
    tl.hold(0.5)                       # the player waited 0.5 s for readers: bag time held
    assert tl.bag_time(201.0) == 14 * NS and tl.wait_s(15 * NS, 201.0) == pytest.approx(0.5)
    tl.set_paused(True, 201.0)
    tl.hold(3.0)                       # paused by the user: a hold changes nothing
    tl.set_paused(False, 210.0)
    assert tl.bag_time(210.0) == 14 * NS


def _record_run(procs, ros_context, tmp_path, storage):
    """A paused sim_quad graph, the recorder and a probe; run ~2 s sim, SIGINT the recorder.

    Returns (bag path, {topic: [raw, ...]} the probe received, recorder output).
    """
    # sim_quad's world: the time source and the quad's sensors in one process
    start(procs, 'sim_quad', {'time_scale': 1.0, 'seed': 1}, nodes=('world_plant',),
          params={'world_plant': {'start_paused': True}})
    bag = tmp_path / 'run'
    topics = '[' + ', '.join(RECORDED) + ']'
    rec = procs.start([sys.executable, '-m', 'sim_bag.recorder', '--ros-args',
                       '-p', f'output:={bag}', '-p', f'storage:={storage}',
                       '-p', f'topics:={topics}', '-p', 'discovery_period_s:=0.05'])
    node, ex = probe_node(ros_context, 'bag_probe')
    seen = {t: [] for t in RECORDED}
    deep = QoSProfile(depth=5000, reliability=ReliabilityPolicy.RELIABLE)  # nothing dropped
    subs = [node.create_subscription(message_class(typ), topic, seen[topic].append,
                                     qos.LATCHED if topic == '/sim/status' else deep, raw=True)
            for topic, typ in RECORDED.items()]
    pause = node.create_client(SetPaused, '/sim/pause')

    def ready():   # the recorder subscribes every topic; the probe is matched to each publisher
        return pause.service_is_ready() and all(sub.get_publisher_count() >= 1 for sub in subs) \
            and all(node.count_subscribers(t) >= 2 for t in RECORDED if t != '/sim/status')
    assert spin_until(node, ex, ready, 30.0), 'graph/recorder did not come up'
    spin_for(node, ex, 1.0)       # recorder logs its subscriptions
    fut = pause.call_async(SetPaused.Request(paused=False))
    assert spin_until(node, ex, fut.done, 10.0) and fut.result().success

    def sim_s():
        v = seen['/quad/vehicle_state']
        return time_ns(deserialize_message(v[-1], VehicleState).header.stamp) / NS if v else 0
    assert spin_until(node, ex, lambda: sim_s() >= 2.0, 30.0), 'sim did not run 2 s'
    os.killpg(rec.pid, signal.SIGINT)              # mid-run: the sim keeps publishing
    rec.wait(20)
    spin_for(node, ex, 1.0)       # the probe takes what it has queued
    out = procs.text(rec)
    assert rec.returncode == 0, out
    return bag, seen, out


@pytest.mark.parametrize('storage', ['mcap', 'sqlite3'])
def test_record_a_sim_run_and_stop_with_sigint(procs, ros_context, tmp_path, storage):
    bag, seen, out = _record_run(procs, ros_context, tmp_path, storage)
    meta = (bag / 'metadata.yaml').read_text()
    assert f'storage_identifier: {storage}' in meta and 'aerosim_msgs/msg/VehicleState' in meta
    reader = open_reader(bag)
    topics = {t.name: t for t in bag_topics(reader)}
    assert {n: t.msgtype for n, t in topics.items()} == RECORDED
    # /sim/status is latched: offered and recorded as transient local
    assert topics['/sim/status'].qos[0].durability.name == 'TRANSIENT_LOCAL'
    got = {t: [] for t in RECORDED}
    stamps = {t: [] for t in RECORDED}
    for topic, t_ns, data in bag_messages(reader, TopicFilter()):
        got[topic].append(bytes(data))
        stamps[topic].append(t_ns)
    for topic in RECORDED:
        n = len(got[topic])
        assert f'{topic}: {n}' in out, f'recorder reported another count for {topic}'
        assert n == topics[topic].count
        # receive times, in order
        assert stamps[topic] == sorted(stamps[topic])
    # the state stream: every step from the first recorded to the last, none missing or
    # repeated, byte-identical to what the probe received
    states = got['/quad/vehicle_state']
    assert len(states) >= 400, len(states)                      # >= 1.6 s of 250 Hz
    t = [time_ns(deserialize_message(r, VehicleState).header.stamp) for r in states]
    assert all(b - a == STEP_NS for a, b in zip(t, t[1:])), 'a step is missing or repeated'
    for topic in ('/quad/vehicle_state', '/quad/imu', '/quad/odom'):
        bag, probe = got[topic], seen[topic]
        assert len(bag) >= 0.9 * len(states) / (5 if topic == '/quad/odom' else 1)
        # the probe may have matched a publisher after the recorder did (the graph publishes
        # its initial samples while paused): at most a few leading messages only in the bag
        lead = next(k for k, m in enumerate(bag) if m in probe)
        assert lead <= 3, (topic, lead)
        i = probe.index(bag[lead])
        assert probe[i:i + len(bag) - lead] == bag[lead:], topic
    assert got['/sim/status'], 'latched status not recorded'


def test_replay_republishes_the_bag_field_by_field(procs, ros_context, tmp_path):
    bag, _, _ = _record_run(procs, ros_context, tmp_path, 'mcap')
    procs.stop()                                   # the live graph ends: only the player speaks
    procs.items.clear()
    reader = open_reader(bag)
    recorded = {t: [] for t in RECORDED}
    times = []
    for topic, t_ns, data in bag_messages(reader, TopicFilter()):
        recorded[topic].append(bytes(data))
        if topic == '/quad/vehicle_state':
            times.append(t_ns)
    player = procs.start([sys.executable, '-m', 'sim_bag.player', '--ros-args',
                          '-p', f'bag:={bag}', '-p', 'rate:=2.0', '-p', 'start_paused:=true',
                          '-r', '/quad/odom:=/replay/odom'])
    node, ex = probe_node(ros_context, 'replay_probe')
    got = {t: [] for t in RECORDED}
    arrival = []
    for topic, typ in RECORDED.items():
        name = '/replay/odom' if topic == '/quad/odom' else topic
        cls = message_class(typ)

        def on_msg(m, t=topic):
            got[t].append(m)
            if t == '/quad/vehicle_state':
                arrival.append(time.monotonic())
        node.create_subscription(cls, name, on_msg,
                                 qos.LATCHED if topic == '/sim/status' else qos.STATE)
    resume = node.create_client(Trigger, '/player/resume')
    assert spin_until(node, ex, resume.service_is_ready, 30.0), 'player did not come up'
    assert spin_until(node, ex, lambda: node.count_publishers('/replay/odom') == 1, 10.0)
    spin_for(node, ex, 0.5)        # matched both ways
    assert got['/quad/vehicle_state'] == []         # start_paused holds everything back
    fut = resume.call_async(Trigger.Request())
    assert spin_until(node, ex, fut.done, 10.0) and fut.result().message == 'playing'
    assert spin_until(node, ex, lambda: player.poll() is not None, 60.0), 'player did not end'
    assert player.returncode == 0
    spin_for(node, ex, 0.3)
    for topic, typ in RECORDED.items():
        cls = message_class(typ)
        want = [deserialize_message(r, cls) for r in recorded[topic]]
        if topic == '/sim/status':      # latched: the late-joining probe may see the last only
            assert got[topic] and got[topic][-1] == want[-1]
            assert isinstance(got[topic][-1], SimStatus)
            continue
        assert len(got[topic]) == len(want), topic
        assert got[topic] == want, f'{topic}: republished messages differ from the bag'
    # timing at rate 2: never ahead of half the recorded span (a loaded machine may only make
    # it slower; the player's lateness is not asserted here)
    span_bag = (times[-1] - times[0]) / NS
    span_wall = arrival[-1] - arrival[0]
    assert span_wall >= 0.95 * span_bag / 2.0, (span_wall, span_bag)


def test_player_and_recorder_refuse_bad_configuration(procs, tmp_path):
    p = procs.start([sys.executable, '-m', 'sim_bag.player', '--ros-args',
                     '-p', f'bag:={tmp_path / "missing"}'])
    assert p.wait(30) == 2
    assert 'cannot open' in procs.text(p)
    # a folder that looks like a bag but holds garbage
    junk = tmp_path / 'junk'
    junk.mkdir()
    (junk / 'metadata.yaml').write_bytes(b'rosbag2_bagfile_information: [\x00\xff')
    (junk / 'junk.mcap').write_bytes(bytes(range(256)) * 16)
    p = procs.start([sys.executable, '-m', 'sim_bag.player', '--ros-args', '-p', f'bag:={junk}'])
    assert p.wait(30) == 2
    out = procs.text(p)
    assert 'cannot open' in out and 'Traceback' not in out, out
    (tmp_path / 'taken').mkdir()
    r = procs.start([sys.executable, '-m', 'sim_bag.recorder', '--ros-args',
                     '-p', f'output:={tmp_path / "taken"}'])
    assert r.wait(30) == 2
    assert 'exists' in procs.text(r)
