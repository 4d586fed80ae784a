"""The composed HIL plant (world_plant): its lockstep and its sensor topics, over real UDP.

The world and the quad's bridge in one process (sim_quad_hil's default composition): lockstep
keyed by the answer to the latest HIL_SENSOR frame, and the sensor topics of the frames it
sends. Its links, fleet and typed contract: test_hil_plant_links.
"""

from datetime import datetime, timezone
import time

from hil_helpers import Peer
import pytest

from mavlink_bridge.core.mav import new_mav

from conftest import DEADLINE_SCALE, free_ports
from graph_start import start


def world_plant(procs, port, **params):
    """sim_quad_hil's world_plant alone, lockstep as fast as possible, its FC at port + 1.

    The clock starts at once (fleet_start_timeout_s 0): the test's FC does not take the
    mission, which the world's start hold would wait for (60 s). params: more parameters
    of the process (its world node's and its bridge's).
    """
    p = {'lockstep_timeout_s': 30.0}
    p.update(params)
    return start(procs, 'sim_quad_hil', {'time_scale': 0.0, 'summary': False,
                                         'sensor_topics': p.pop('sensor_topics', False),
                                         'fleet_start_timeout_s': 0.0,
                                         'bind': f'127.0.0.1:{port}',
                                         'fc_address': f'127.0.0.1:{port + 1}'},
                 nodes=('world_plant',), params={'world_plant': p})['world_plant']


def awaited_frame(ex, statuses, read, timeout_s):
    """The time [µs] of the frame a lockstep plant waits on, once /sim/status shows it waiting.

    After its first answer a lockstep plant steps only on the answer to its latest frame; which
    frame that is the link cannot tell: silence is no proof (a loaded plant pauses for a
    second, a slow reader's full socket drops the newest datagrams). Two statuses in a row in
    lockstep at the same sim time, no lockstep timeout, are: the plant waits for the answer to
    that time (the second status rules out one taken while an answer was stepping it).
    statuses: the probe's /sim/status messages; read() is called meanwhile (the link is kept
    read: no kernel drops). None if it did not wait within timeout_s x DEADLINE_SCALE.
    """
    deadline = time.monotonic() + timeout_s * DEADLINE_SCALE
    while time.monotonic() < deadline:
        read()
        ex.spin_once(timeout_sec=0.0)
        if len(statuses) >= 2:
            a, b = statuses[-2:]
            if a.lockstep and b.lockstep and a.sim_time == b.sim_time and \
                    b.lockstep_timeouts == 0:
                return b.sim_time.sec * 1_000_000 + b.sim_time.nanosec // 1000
    return None


def status_probe(ros_context, name):
    """A probe node in /quad with a subscription to /sim/status: (node, executor, statuses)."""
    from aerosim_msgs.msg import SimStatus
    from sim_ros import qos

    from conftest import probe_node

    node, ex = probe_node(ros_context, name, '/quad')
    statuses = []
    node.create_subscription(SimStatus, '/sim/status', statuses.append, qos.LATCHED)
    return node, ex, statuses


def test_composed_plant_steps_only_on_the_answer_to_its_latest_sensor_frame(procs, ros_context):
    """world_plant (world + bridge in one process): lockstep keyed by time_usec, topics kept.

    The peer lets the free-running sensors pile up, then answers old frames first, like an FC
    working through a backlog: those answers must not advance the simulation; the answer to
    the latest frame advances it by exactly one step. The ROS side still sees vehicle_state
    and effector_command (answer stamped with the frame's sim time).
    """
    from aerosim_msgs.msg import AircraftEffectorCommand, VehicleState
    from sim_ros import qos

    from conftest import spin_until

    node, ex, statuses = status_probe(ros_context, 'probe')
    states, cmds = [], []
    node.create_subscription(VehicleState, 'vehicle_state', states.append, qos.SENSOR_SUB)
    node.create_subscription(AircraftEffectorCommand, 'effector_command', cmds.append,
                             qos.SENSOR_SUB)
    port = free_ports(2)
    peer = Peer(port + 1, port)
    plant = world_plant(procs, port)
    hover = [0.7213] * 4 + [0.0] * 12

    def sensor_times(timeout_s):
        return [m.time_usec for m in peer.recv(timeout_s) if m.get_type() == 'HIL_SENSOR']

    def newer(after, timeout_s):
        """The first HIL_SENSOR time above after [µs] (older ones: the backlog), or None."""
        for m in peer.recv(timeout_s * DEADLINE_SCALE):
            if m.get_type() == 'HIL_SENSOR' and m.time_usec > after:
                return m.time_usec
        return None

    free = []
    for m in peer.recv(30.0 * DEADLINE_SCALE):
        if m.get_type() == 'HIL_SENSOR':
            free.append(m.time_usec)
            if len(free) >= 50:
                break
    assert len(free) == 50 and free == sorted(free)
    # first answer (to an old frame) engages lockstep; the plant then awaits its latest frame,
    # which /sim/status tells (the backlog is read meanwhile)
    peer.send(peer.mav.hil_actuator_controls_encode(free[0], hover, 129, 1))
    latest = awaited_frame(ex, statuses, lambda: sensor_times(0.05), 60.0)
    assert latest is not None, ([(s.lockstep, s.sim_time) for s in statuses[-3:]],
                                procs.output(plant)[-2000:])
    for old in free[1:10]:                          # a backlog of answers to old frames
        peer.send(peer.mav.hil_actuator_controls_encode(old, hover, 129, 1))
    assert newer(latest, 0.5) is None, 'an answer to an old frame advanced the simulation'
    for k in range(20):                             # the answer to the latest: one step each
        peer.send(peer.mav.hil_actuator_controls_encode(latest, hover, 129, 1))
        nxt = newer(latest, 10.0)
        assert nxt == latest + 4000, (k, latest, nxt)
        latest = nxt
    assert spin_until(node, ex, lambda: any(time_us(c) == latest - 4000 for c in cmds), 5.0)
    assert spin_until(node, ex, lambda: any(time_us(s) == latest for s in states), 5.0)
    out = procs.output(plant)
    assert '[world_node]' in out and '[quad.mavlink_bridge]' in out   # both names kept
    assert 'Traceback' not in out
    node.destroy_node()


def test_composed_plant_publishes_the_sensor_topics_of_the_frames_it_sends(procs, ros_context):
    """world_plant with sensor_topics (sim_quad_hil's default; no sensors_node in the graph).

    Every HIL_SENSOR frame has its imu message, stamped with the frame's time_usec and holding
    the same sample (FLU on ROS, FRD on MAVLink); mag and baro where the frame flags them; the
    GNSS fixes are those of HIL_GPS.
    """
    from rclpy.qos import QoSProfile, ReliabilityPolicy
    from sensor_msgs.msg import FluidPressure, MagneticField, NavSatFix

    from aerosim_msgs.msg import IMU
    from mavlink_bridge.core.mav import BARO, MAG

    from conftest import spin_until

    node, ex, statuses = status_probe(ros_context, 'probe')
    got = {'imu': [], 'mag': [], 'baro': [], 'gnss/fix': []}
    deep = QoSProfile(depth=1000, reliability=ReliabilityPolicy.RELIABLE)
    for topic, typ in (('imu', IMU), ('mag', MagneticField), ('baro', FluidPressure),
                       ('gnss/fix', NavSatFix)):
        node.create_subscription(typ, topic, got[topic].append, deep)
    port = free_ports(2)
    peer = Peer(port + 1, port)
    plant = world_plant(procs, port, sensor_topics=True, gps_utc_start='2026-11-22T12:00:00Z')
    hover = [0.7213] * 4 + [0.0] * 12
    frames, fixes = {}, []

    def take(timeout_s, answer, after=-1):
        """Read up to the first datagram with a HIL_SENSOR newer than after [µs]: it or None.

        Answered if asked; older frames (the free run's backlog) are kept in frames only. A
        step's HIL_SENSOR and HIL_GPS may share one datagram: all of it is read.
        """
        for data in peer.datagrams(timeout_s):
            sensor = None
            for m in new_mav(0, 0).parse_buffer(data) or []:
                if m.get_type() == 'HIL_GPS':
                    fixes.append(m)
                elif m.get_type() == 'HIL_SENSOR':
                    frames[m.time_usec] = m
                    if m.time_usec > after:
                        sensor = m
            if sensor is not None:
                if answer:
                    peer.send(peer.mav.hil_actuator_controls_encode(sensor.time_usec, hover,
                                                                    129, 1))
                return sensor
        return None

    # Before the first answer the plant free-runs (thousands of frames a second: a probe that
    # does not keep up may lose some of their topics, as any KEEP_LAST reader may). The first
    # answer engages lockstep: the plant then waits for the answer to its latest frame, which
    # /sim/status tells (the link's silence does not: under load the plant pauses for a second
    # while free-running, and a reader's full socket drops the newest frames); the free-run
    # backlog is read unanswered meanwhile, and from that frame on each answer is one step:
    # those stepped frames are checked one by one.
    # the plant publishes a topic only to its subscribers: wait until the probe's are matched
    # (an imu message of the free run arrived; DDS discovery takes seconds on a busy machine,
    # and a stepped frame sent before it had no imu message for the probe)
    deadline = time.monotonic() + 60.0 * DEADLINE_SCALE
    while not got['imu'] and time.monotonic() < deadline and plant.poll() is None:
        take(0.05, answer=False)           # keep reading the free run: no kernel drops
        ex.spin_once(timeout_sec=0.0)
    assert got['imu'], procs.output(plant)[-2000:]
    assert take(30.0 * DEADLINE_SCALE, answer=True) is not None, procs.output(plant)[-2000:]
    awaited = awaited_frame(ex, statuses, lambda: take(0.05, answer=False), 60.0)
    assert awaited is not None, ([(s.lockstep, s.sim_time) for s in statuses[-3:]],
                                 procs.output(plant)[-2000:])
    stepped = [awaited]
    peer.send(peer.mav.hil_actuator_controls_encode(awaited, hover, 129, 1))
    deadline = time.monotonic() + 120.0 * DEADLINE_SCALE
    while time.monotonic() < deadline and (len(stepped) < 400 or len(fixes) < 4):
        m = take(0.1, answer=True, after=stepped[-1])
        if m is not None:
            stepped.append(m.time_usec)
        ex.spin_once(timeout_sec=0.0)
    assert len(stepped) >= 400 and len(fixes) >= 4, (
        {k: len(v) for k, v in got.items()}, len(stepped), procs.output(plant)[-2000:])
    assert stepped == sorted(set(stepped))
    assert spin_until(node, ex, lambda: got['imu'] and time_us(got['imu'][-1]) >= stepped[-1],
                      10.0)
    stamps = [time_us(x) for x in got['imu']]
    assert stamps == sorted(set(stamps))
    # every stepped frame has its imu message: none dropped, none extra
    assert [t for t in stamps if t >= stepped[0]] == stepped
    for im in got['imu']:
        f = frames.get(time_us(im))
        if f is None:
            continue                # a free-run frame the test did not read
        a, w = im.acceleration, im.gyroscope
        assert (a.x, -a.y, -a.z) == pytest.approx((f.xacc, f.yacc, f.zacc), abs=1e-5)
        assert (w.x, -w.y, -w.z) == pytest.approx((f.xgyro, f.ygyro, f.zgyro), abs=1e-6)
    for mg in got['mag']:
        f = frames.get(time_us(mg))
        if f is None:
            continue                # a frame read before the probe heard the plant
        b = mg.magnetic_field
        assert f.fields_updated & MAG
        assert (b.x * 1e4, -b.y * 1e4, -b.z * 1e4) == pytest.approx((f.xmag, f.ymag, f.zmag),
                                                                    abs=1e-6)
    assert sum(1 for mg in got['mag'] if time_us(mg) in frames) >= 10
    baro = [(fp, frames[time_us(fp)]) for fp in got['baro'] if time_us(fp) in frames]
    assert len(baro) >= 5
    for fp, f in baro:
        assert f.fields_updated & BARO
        assert fp.fluid_pressure == pytest.approx(f.abs_pressure * 100.0, abs=0.02)
    utc0 = int(datetime(2026, 11, 22, 12, tzinfo=timezone.utc).timestamp() * 1e6)
    gps = {g.time_usec - utc0: g for g in fixes}          # HIL_GPS time: UTC of the fix
    matched = [n for n in got['gnss/fix'] if time_us(n) in gps]
    assert len(matched) >= 3
    for n in matched:
        g = gps[time_us(n)]
        assert n.latitude == pytest.approx(g.lat * 1e-7, abs=1.5e-7)
        assert n.longitude == pytest.approx(g.lon * 1e-7, abs=1.5e-7)
        assert n.altitude == pytest.approx(g.alt * 1e-3, abs=1.5e-3)
    assert 'Traceback' not in procs.output(plant)
    node.destroy_node()


def time_us(msg) -> int:
    """A message's header stamp [µs]."""
    return msg.header.stamp.sec * 1_000_000 + msg.header.stamp.nanosec // 1000
