"""MAVLink HIL bridge over real UDP with real peers, and the whole HIL graph.

MAVLink HIL bridge over real UDP: a pymavlink peer acting as a PX4-like flight controller in
lockstep, MAVSDK (a real MAVLink GCS library, not our code) downloading the mission and reading
home, garbage on the port, and the whole sim_quad_hil graph flying a mission with the built-in
flight controller.
"""

from datetime import datetime, timezone
import json
import os
import random
import socket
import subprocess
import sys
import time

import pytest

from mavlink_bridge.core.mav import mavlink, new_mav

from conftest import DEADLINE_SCALE, UdpPeer, free_ports, mavsdk_gcs, tcp_client, wait_line


def hil_nodes(procs, port, peer_port, **bridge):
    # The peers here answer every frame: a lockstep timeout could only come from a busy
    # machine (one was seen at 2 s with both cores loaded), so the wait is long enough never
    # to expire; timeouts and disengagement have tests of their own (test_clock, test_px4).
    procs.node('sim_dynamics.dynamics_node', 'dynamics_node',
               {'lockstep': True, 'time_scale': 0.0, 'lockstep_timeout_s': 30.0})
    params = {'bind': f'127.0.0.1:{port}', 'fc_address': f'127.0.0.1:{peer_port}',
              'gps_utc_start': '2026-11-22T12:00:00Z', 'mission_timeout_s': 0.5}
    params.update(bridge)
    return procs.node('mavlink_bridge.mavlink_bridge_node', 'mavlink_bridge', params)


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


class Peer(UdpPeer):
    """A UDP MAVLink endpoint played by the test with pymavlink."""

    def __init__(self, port, bridge_port, sysid=1, compid=1):
        super().__init__(port, bridge_port, poll_s=0.2)
        self.mav = new_mav(sysid, compid)

    def send(self, msg):
        self.sock.sendto(msg.pack(self.mav), self.bridge)

    def recv(self, timeout_s=10.0):
        for data in self.datagrams(timeout_s):
            rx = new_mav(0, 0)
            for m in rx.parse_buffer(data) or []:
                yield m


def test_pymavlink_fc_in_lockstep_heartbeat_home_mission_and_garbage(procs):
    port = free_ports(2)
    peer = Peer(port + 1, port)
    bridge = hil_nodes(procs, port, port + 1, warn_period_s=0.1)
    seen = {}
    times = []
    answered = 0
    hover = 0.7213
    for m in peer.recv(60.0 * DEADLINE_SCALE):
        t = m.get_type()
        seen.setdefault(t, m)
        if t == 'HEARTBEAT':
            seen[t] = m         # the latest: before /sim/status arrives the state is STOPPED
        if t == 'HIL_SENSOR':
            times.append(m.time_usec)
            if answered == 0:
                peer.send(peer.mav.heartbeat_encode(mavlink.MAV_TYPE_QUADROTOR,
                                                    mavlink.MAV_AUTOPILOT_PX4, 0, 0, 3))
            peer.send(peer.mav.hil_actuator_controls_encode(
                m.time_usec, [hover] * 4 + [0.0] * 12, 129, 1))
            answered += 1
        if answered >= 300 and 'HOME_POSITION' in seen and 'HIL_GPS' in seen:
            break
    assert answered >= 300, f'only {answered} HIL_SENSOR received; saw {sorted(seen)}'
    hb = seen['HEARTBEAT']
    assert (hb.type, hb.autopilot, hb.system_status, hb.base_mode) == (0, 8, 4, 136)
    assert (hb.get_srcSystem(), hb.get_srcComponent()) == (51, 1)
    home = seen['HOME_POSITION']
    assert (home.latitude, home.longitude, home.altitude) == (473977420, 85455940, 488000)
    assert seen['MISSION_COUNT'].count == 5
    gps = seen['HIL_GPS']
    assert gps.fix_type == 3 and gps.satellites_visible >= 6
    utc0 = int(datetime(2026, 11, 22, 12, tzinfo=timezone.utc).timestamp()) * 1_000_000
    assert 0 < gps.time_usec - utc0 < 60_000_000      # UTC = gps_utc_start + sim time
    # lockstep: after the first answer, one step (4000 us) per answer, strictly increasing
    tail = times[-200:]
    assert all(b - a == 4000 for a, b in zip(tail, tail[1:])), tail[:10]
    # garbage: random bytes, a truncated frame, a bad CRC, a request for another system
    good = peer.mav.mission_request_int_encode(51, 1, 0, 0).pack(peer.mav)
    rng = random.Random(7)
    # one kind at a time, each until its warning is logged: the warning is rate-limited
    # (warn_period_s 0.1 s) across kinds, and on a busy machine two kinds sent 0.3 s apart
    # can reach the bridge within 0.1 s (the second's warning held back)
    bad_crc = bytearray(good)
    bad_crc[-1] ^= 0xFF
    for kind, warning in (
            ([bytes(rng.getrandbits(8) for _ in range(rng.randint(1, 300)))
              for _ in range(50)], 'undecodable MAVLink input'),
            ([good[:7]], 'no complete MAVLink frame'),
            ([bytes(bad_crc)], 'undecodable MAVLink input'),
            ([peer.mav.mission_request_int_encode(99, 1, 0, 0).pack(peer.mav)],
             'is not for us'),
            ([peer.mav.hil_actuator_controls_encode(0, [v] * 16, 129, 1).pack(peer.mav)
              for v in (float('nan'), 2.0)], 'HIL_ACTUATOR_CONTROLS rejected')):
        deadline = time.monotonic() + 30.0 * DEADLINE_SCALE
        while time.monotonic() < deadline:
            for data in kind:
                peer.raw(data)
            if wait_line(bridge.lines, warning, 1.0, (bridge,)):
                break
        time.sleep(0.3)         # past the rate limit of this kind's warning, logged by now
    out = procs.output(bridge)
    assert 'undecodable MAVLink input' in out
    assert 'no complete MAVLink frame' in out
    assert 'is not for us' in out
    assert 'HIL_ACTUATOR_CONTROLS rejected' in out
    assert 'Traceback' not in out


def test_a_stranger_with_the_fcs_ids_on_another_port_does_not_drive_the_quad(procs,
                                                                              ros_context):
    """fc_address pins the FC, address and port: the FC's ids from elsewhere are refused.

    The quad on the ground, real time, over real UDP. The FC (at fc_address) answers every
    HIL_SENSOR with the motors off; a stranger on another port of the same host sends the
    FC's ids (1:1) and full throttle right after each answer. The quad stays on the ground,
    each of the stranger's frames is counted (rejected_peer) and the warning is rate-limited.
    Then the FC gives full throttle while the stranger says off: the quad climbs.
    """
    from diagnostic_msgs.msg import DiagnosticArray

    from conftest import port_counts, probe_node, spin_until

    node, ex = probe_node(ros_context, 'pin_probe')
    diags = []
    node.create_subscription(DiagnosticArray, '/diagnostics', diags.append, 50)
    port = free_ports(3)
    fc, stranger = Peer(port + 1, port), Peer(port + 2, port)      # both 1:1
    plant = procs.node('mavlink_bridge.hil_plant', None, {
        'lockstep': False, 'time_scale': 1.0, 'warn_period_s': 0.5,
        'bind': f'127.0.0.1:{port}', 'fc_address': f'127.0.0.1:{port + 1}'})
    off, full = [0.0] * 16, [1.0] * 4 + [0.0] * 12
    fc.send(fc.mav.heartbeat_encode(mavlink.MAV_TYPE_QUADROTOR, mavlink.MAV_AUTOPILOT_PX4,
                                    0, 0, 3))
    alts, sent, t_start = {}, 0, time.monotonic()

    def fly(fc_controls, stranger_controls, sim_s):
        """Answer every HIL_SENSOR for sim_s [s] of sim time; the altitudes [m] meanwhile."""
        nonlocal sent
        t0, got = None, []
        for m in fc.recv(30.0 * sim_s * DEADLINE_SCALE):
            if m.get_type() == 'HIL_STATE_QUATERNION':
                got.append(m.alt * 1e-3)
            if m.get_type() != 'HIL_SENSOR':
                continue
            t0 = m.time_usec if t0 is None else t0
            fc.send(fc.mav.hil_actuator_controls_encode(m.time_usec, fc_controls, 129, 1))
            stranger.send(stranger.mav.hil_actuator_controls_encode(
                m.time_usec, stranger_controls, 129, 1))
            sent += 1
            if m.time_usec - t0 >= sim_s * 1e6:
                return got
        raise AssertionError(f'the plant stopped sending sensors: {procs.output(plant)[-2000:]}')

    alts['ground'] = fly(off, full, 3.0)
    climbed = max(alts['ground']) - alts['ground'][0]
    assert climbed < 0.05, f'the stranger drove the motors: the quad rose {climbed:.2f} m'
    alts['fc'] = fly(full, off, 2.0)
    assert max(alts['fc']) - alts['ground'][0] > 1.0, 'the FC no longer drives the motors'
    wall_s = time.monotonic() - t_start
    assert spin_until(node, ex, lambda: port_counts(diags, 'MAVLink').get('rejected_peer')
                      == str(sent), 15.0), (sent, port_counts(diags, 'MAVLink'))
    out = procs.output(plant)
    why = (f'HIL_ACTUATOR_CONTROLS from 1:1 at 127.0.0.1:{port + 2}, but the flight '
           f'controller (1:1) is at 127.0.0.1:{port + 1} (fc_address)')
    warned = [x for x in out.splitlines() if why in x]
    assert warned and 'rejected from 127.0.0.1' in warned[0], out[-3000:]
    assert len(warned) <= wall_s / 0.5 + 2, (len(warned), wall_s)     # rate-limited
    assert 'Traceback' not in out
    node.destroy_node()


def test_composed_plant_steps_only_on_the_answer_to_its_latest_sensor_frame(procs, ros_context):
    """hil_plant (dynamics + bridge in one process): lockstep keyed by time_usec, topics kept.

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
    plant = procs.node('mavlink_bridge.hil_plant', None, {
        'lockstep': True, 'time_scale': 0.0, 'lockstep_timeout_s': 30.0,
        'bind': f'127.0.0.1:{port}', 'fc_address': f'127.0.0.1:{port + 1}'})
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
    assert '[quad.dynamics_node]' in out and '[quad.mavlink_bridge]' in out   # both names kept
    assert 'Traceback' not in out
    node.destroy_node()


def test_a_plant_is_a_typed_contract_a_node_without_it_is_refused():
    """compose_with takes a sim_ros.plant.Plant: its members' answers, no method names.

    A time source that is not one (no plant_members, e.g. usv_node) is refused by name and
    destroyed; DynamicsNode and PlaneNode are Plants by their class.
    """
    from mavlink_bridge.hil_plant import compose_with
    from sim_dynamics.dynamics_node import DynamicsNode
    from sim_dynamics.plane_node import PlaneNode
    from sim_ros.plant import Plant

    class NotAPlant:
        destroyed = False
        fleet, fleet_start_timeout_s = False, 0.0

        def add_state_listener(self, fn, member=0):
            raise AssertionError('reached into a node that is not a Plant')

        def hold_start(self, missing, timeout_s):
            raise AssertionError('reached into a node that is not a Plant')

        def destroy_node(self):
            NotAPlant.destroyed = True
    with pytest.raises(TypeError, match='NotAPlant is not a sim_ros.plant.Plant'):
        compose_with(NotAPlant)
    assert NotAPlant.destroyed
    for cls in (DynamicsNode, PlaneNode):
        assert all(callable(getattr(cls, k, None)) for k in (
            'plant_members', 'add_state_listener', 'hold_start')), cls
    assert not isinstance(NotAPlant(), Plant)


def test_a_fleet_plant_moves_each_bridges_links_from_those_vehicle_0_was_given(procs, ros_context,
                                                                               tmp_path):
    """hil_plant vehicles:=2 with the links in a params file: each bridge's are its instance's.

    Vehicle 0's bridge declares the links as the process was given them (here the YAML's
    /**/mavlink_bridge section, as a user running hil_plant by hand would); vehicle 1's are
    moved from those (sim_core.fleet.member_ports: UDP ports + 2, system id + 1). Its
    parameters say the ports it uses. (The composition read the dynamics node's overrides
    through rclpy's private _parameter_overrides: a YAML for the bridge was not among them, and
    every bridge got the default ports.)
    """
    from rcl_interfaces.srv import GetParameters

    from conftest import call_service, probe_node, spin_until

    port = free_ports(4)
    yaml_file = tmp_path / 'links.yaml'
    yaml_file.write_text(
        '/**/mavlink_bridge:\n  ros__parameters:\n'
        f"    bind: '127.0.0.1:{port}'\n    fc_address: '127.0.0.1:{port + 1}'\n"
        '    fc_system_id: 7\n')
    plant = procs.start([sys.executable, '-m', 'mavlink_bridge.hil_plant', '--ros-args',
                         '-p', 'scenario_file:=fleet', '-p', 'vehicles:=2',
                         '-p', 'fleet_start_timeout_s:=0.0', '-p', 'sensor_topics:=false',
                         '--params-file', str(yaml_file)])
    node, ex = probe_node(ros_context, 'links_probe')
    names = ['bind', 'fc_address', 'fc_system_id', 'vehicle_index']
    got = {}
    for ns in ('/quad0', '/quad1'):
        cli = node.create_client(GetParameters, f'{ns}/mavlink_bridge/get_parameters')
        assert spin_until(node, ex, cli.service_is_ready, 60.0), procs.output(plant)[-3000:]
        values = call_service(ex, cli, GetParameters.Request(names=names), ns).values
        got[ns] = [v.string_value or v.integer_value for v in values]
    assert got == {'/quad0': [f'127.0.0.1:{port}', f'127.0.0.1:{port + 1}', 7, 0],
                   '/quad1': [f'127.0.0.1:{port + 2}', f'127.0.0.1:{port + 3}', 8, 1]}, got
    out = procs.output(plant)
    assert f'127.0.0.1:{port + 2}' in out and 'Traceback' not in out, out[-3000:]
    node.destroy_node()


def test_composed_plant_publishes_the_sensor_topics_of_the_frames_it_sends(procs, ros_context):
    """hil_plant with sensor_topics (sim_quad_hil's default; no sensors_node in the graph).

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
    plant = procs.node('mavlink_bridge.hil_plant', None, {
        'lockstep': True, 'time_scale': 0.0, 'lockstep_timeout_s': 30.0, 'sensor_topics': True,
        'gps_utc_start': '2026-11-22T12:00:00Z',
        'bind': f'127.0.0.1:{port}', 'fc_address': f'127.0.0.1:{port + 1}'})
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


def download_mission(mission_raw, attempts=3):
    """MissionRaw.download_mission(), again after a TIMEOUT (as a ground station retries).

    MAVSDK's transfer timeout is 0.5 s of wall time per message with no API to change it
    here: with both cores busy the bridge's answer can take longer. Any other error fails.
    """
    from mavsdk.plugins.mission_raw import MissionRawError
    for k in range(attempts):
        try:
            return mission_raw.download_mission()
        except MissionRawError as exc:
            if 'TIMEOUT' not in str(exc) or k == attempts - 1:
                raise


def test_a_gcs_on_another_port_gets_command_and_mission_acks(procs):
    """A ground station (pymavlink) on its own UDP port, apart from the FC's (fc_address).

    Every command addressed to the bridge is answered with a COMMAND_ACK (mavlink.io command
    protocol): UNSUPPORTED for what it does not handle, ACCEPTED and the message for
    MAV_CMD_REQUEST_MESSAGE of HOME_POSITION. The mission protocol's requests are answered
    with a MISSION_ACK (mavlink.io mission protocol, Errors): INVALID_SEQUENCE for an item the
    mission does not have, DENIED for an upload or a clear of the scenario's mission (the
    simulator is its source), ACCEPTED for clearing the fence it does not hold. The answers
    reach the ground station's port, and the mission is still there to download.
    """
    port = free_ports(3)
    fc = Peer(port + 1, port)                          # the FC's address: nothing answers
    gcs = Peer(port + 2, port, sysid=255, compid=190)
    bridge = hil_nodes(procs, port, port + 1)
    mav = gcs.mav
    asks = [
        ('DO_SET_MODE', mav.command_long_encode(51, 1, mavlink.MAV_CMD_DO_SET_MODE, 0,
                                                1, 4, 0, 0, 0, 0, 0),
         'COMMAND_ACK', lambda m: (m.command, m.result) == (176, 3)),
        ('REQUEST_MESSAGE(HOME_POSITION)', mav.command_long_encode(
            51, 1, mavlink.MAV_CMD_REQUEST_MESSAGE, 0, 242, 0, 0, 0, 0, 0, 0),
         'COMMAND_ACK', lambda m: (m.command, m.result) == (512, 0)),
        ('COMMAND_INT DO_REPOSITION', mav.command_int_encode(
            51, 1, 6, mavlink.MAV_CMD_DO_REPOSITION, 0, 0, -1, 0, 0, 0, 473977420, 85455940,
            20.0), 'COMMAND_ACK', lambda m: (m.command, m.result) == (192, 3)),
        ('request of item 99', mav.mission_request_int_encode(51, 1, 99, 0),
         'MISSION_ACK', lambda m: m.type == mavlink.MAV_MISSION_INVALID_SEQUENCE),
        ('upload', mav.mission_count_encode(51, 1, 3, 0),
         'MISSION_ACK', lambda m: (m.type, m.mission_type) == (mavlink.MAV_MISSION_DENIED, 0)),
        ('clear all', mav.mission_clear_all_encode(51, 1, 0),
         'MISSION_ACK', lambda m: (m.type, m.mission_type) == (mavlink.MAV_MISSION_DENIED, 0)),
        ('clear the fence', mav.mission_clear_all_encode(51, 1, 1),
         'MISSION_ACK', lambda m: (m.type, m.mission_type) == (mavlink.MAV_MISSION_ACCEPTED, 1)),
        ('download', mav.mission_request_list_encode(51, 1, 0),
         'MISSION_COUNT', lambda m: m.count == 5),
    ]
    seen = {}
    for what, msg, answer, ok in asks:
        got = None
        deadline = time.monotonic() + 30.0 * DEADLINE_SCALE
        while time.monotonic() < deadline:  # re-sent after a timeout, as the protocol says
            gcs.send(msg)
            for m in gcs.recv(3.0):
                seen.setdefault(m.get_type(), m)
                if m.get_type() == answer and (m.target_system, m.target_component) == \
                        (255, 190):
                    got = m
                    break
            if got is not None:
                break
        assert got is not None, f'{what}: no {answer}; {procs.output(bridge)[-2000:]}'
        assert ok(got), (what, got)
    assert seen['HOME_POSITION'].latitude == 473977420      # the message it asked for
    assert 'HIL_SENSOR' not in seen                          # the sensors go to the FC
    out = procs.output(bridge)
    assert 'COMMAND_LONG MAV_CMD_DO_SET_MODE from 255:190 on the HIL link: answered ' \
        'UNSUPPORTED' in out, out[-3000:]
    assert 'upload of 3 items (type 0) from 255:190: answered MAV_MISSION_DENIED' in out
    assert 'Traceback' not in out
    fc.sock.close()


def test_mavsdk_downloads_the_mission_and_reads_home(procs):
    from mavsdk.plugins.mission_raw import MissionRaw
    from mavsdk.plugins.telemetry import Telemetry
    port = free_ports(2)
    hil_nodes(procs, port, port + 1)
    deadline = time.monotonic() + 20.0 * DEADLINE_SCALE
    _gcs, system = mavsdk_gcs(port + 1, 20.0 * DEADLINE_SCALE)
    assert system.get_system_id() == 51
    items = download_mission(MissionRaw(system))
    assert [i.command for i in items] == [22, 16, 16, 16, 21]
    assert [i.frame for i in items] == [6] * 5
    assert items[1].x == 473980120 and items[1].y == 85455940
    assert items[2].z == pytest.approx(12.0)
    tel = Telemetry(system)
    home = tel.home()
    while time.monotonic() < deadline + 10.0 and home.latitude_deg != home.latitude_deg:
        time.sleep(0.2)
        home = tel.home()
    assert home.latitude_deg == pytest.approx(47.397742, abs=1e-7)
    assert home.longitude_deg == pytest.approx(8.545594, abs=1e-7)
    assert home.absolute_altitude_m == pytest.approx(488.0, abs=0.01)


def test_sim_quad_hil_graph_flies_a_mission_with_the_builtin_fc(tmp_path, domain_id):
    port = free_ports(2)
    env = os.environ.copy()
    env['ROS_DOMAIN_ID'] = str(domain_id)
    cmd = [sys.executable, '-m', 'sim_launch.cli', 'launch', 'sim_quad_hil', 'report:=true',
           'time_scale:=0', 'scenario:=short_hop', 'sensor_topics:=false',
           f'bind:=127.0.0.1:{port}', f'fc_address:=127.0.0.1:{port + 1}',
           f'output_dir:={tmp_path}']
    p = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       timeout=280 * DEADLINE_SCALE)
    out = p.stdout.decode('utf-8', 'replace')
    assert p.returncode == 0, out[-4000:]
    s = json.loads((tmp_path / 'sim_quad_hil_summary.json').read_text())
    assert s['result'] == 'complete' and s['items_reached'] == 3
    assert s['landing_error_m'] < 1.0
    assert s['flight_real_time_factor'] > 0.0          # measured from liftoff
    assert (tmp_path / 'sim_quad_hil.png').stat().st_size > 10_000
    assert 'mission: accepted: 3 items' in out
    assert 'item 2: landed' in out


def test_builtin_fc_survives_garbage_on_its_port(procs):
    port = free_ports(2)
    fc = procs.node('mavlink_bridge.fc.fc_node', 'builtin_fc',
                    {'bind': f'127.0.0.1:{port}', 'sim_address': f'127.0.0.1:{port + 1}'})
    sim = Peer(port + 1, port, sysid=51, compid=1)
    next(m for m in sim.recv(30.0 * DEADLINE_SCALE) if m.get_type() == 'HEARTBEAT')  # it is up
    rng = random.Random(3)
    for _ in range(200):
        sim.raw(bytes(rng.getrandbits(8) for _ in range(rng.randint(1, 400))))
    good = sim.mav.mission_count_encode(1, 1, 3, 0).pack(sim.mav)
    sim.raw(good[:-3])
    # a valid frame with nonsense content: NaN sensors must not kill the FC
    sim.send(sim.mav.hil_sensor_encode(4000, *[float('nan')] * 13, 0x1FFF, 0))
    sim.send(sim.mav.hil_sensor_encode(8000, *[float('nan')] * 13, 0x1FFF, 0))
    sim.send(sim.mav.mission_count_encode(1, 1, 3, 0))
    req = next((m for m in sim.recv(10.0 * DEADLINE_SCALE)
                if m.get_type() == 'MISSION_REQUEST_INT'), None)
    assert req is not None and req.seq == 0          # still serving the protocol
    assert fc.poll() is None
    out = procs.output(fc)
    assert 'undecodable MAVLink input' in out and 'Traceback' not in out
    assert 'HIL_SENSOR with non-finite values refused (1 so far)' in out


def test_builtin_fc_port_reports_its_rejects_and_refuses_strangers(procs, ros_context):
    """builtin_fc is a PortNode: /diagnostics counts its rejects by kind, allow_peers holds."""
    from diagnostic_msgs.msg import DiagnosticArray

    from conftest import port_counts, probe_node, spin_until
    port = free_ports(2)
    procs.node('mavlink_bridge.fc.fc_node', 'builtin_fc',
               {'bind': f'127.0.0.1:{port}', 'sim_address': f'127.0.0.1:{port + 1}',
                'allow_peers': '127.0.0.1'})
    node, ex = probe_node(ros_context, 'fc_diag_probe')
    diags = []
    node.create_subscription(DiagnosticArray, '/diagnostics', diags.append, 50)
    assert spin_until(node, ex, lambda: port_counts(diags, 'MAVLink FC link'), 30.0)
    sim = Peer(port + 1, port, sysid=51, compid=1)
    good = sim.mav.heartbeat_encode(6, 8, 0, 0, 3).pack(sim.mav)
    sim.raw(good[:-1] + bytes([good[-1] ^ 0xFF]))          # a bad CRC
    sim.raw(good[:7])                                       # no complete frame
    sim.send(sim.mav.hil_sensor_encode(4000, *[float('nan')] * 13, 0x1FFF, 0))
    stranger = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    stranger.bind(('127.0.0.2', 0))
    stranger.sendto(sim.mav.heartbeat_encode(6, 8, 0, 0, 3).pack(sim.mav), ('127.0.0.1', port))

    def counted():
        c = port_counts(diags, 'MAVLink FC link')
        return c and int(c['rejected_undecodable']) == 1 and int(c['rejected_truncated']) == 1 \
            and int(c['rejected_value']) == 1 and int(c['rejected_peer']) == 1
    assert spin_until(node, ex, counted, 20.0), {
        k: v for k, v in port_counts(diags, 'MAVLink FC link').items() if 'rejected' in k}
    stranger.close()
    node.destroy_node()


@pytest.mark.parametrize('param,value,message', [
    ('bind', 'nonsense', 'bind: expected host:port'),
    ('transport', 'serial', "transport: must be 'udp' or 'tcp'"),
    ('mixer_motor_channels', '[0, 0, 1, 2]', 'permutation of 0..3'),
    ('gps_utc_start', 'yesterday', 'gps_utc_start: expected ISO-8601'),
    ('realtime_priority', '100', 'realtime_priority out of range. Min: -1, Max: 99'),
    ('realtime_priority', 'high', "expecting type 'INTEGER': realtime_priority"),
    # after the links are open: the half-built node is destroyed without a second error
    ('scenario_file', 'no_such_scenario', "file 'no_such_scenario' not found"),
])
def test_bridge_bad_configuration_is_a_clear_error(procs, param, value, message):
    port = free_ports(2)          # not the default 14560 another run on the machine may hold
    params = {'bind': f'127.0.0.1:{port}', 'fc_address': f'127.0.0.1:{port + 1}'}
    params[param] = value
    p = procs.node('mavlink_bridge.mavlink_bridge_node', 'mavlink_bridge', params)
    assert p.wait(30.0 * DEADLINE_SCALE) == 2
    out = procs.output(p)
    assert 'configuration error' in out and message in out, out[-2000:]
    assert 'Traceback' not in out


@pytest.mark.parametrize('module,name', [('mavlink_bridge.fc.fc_node', 'builtin_fc'),
                                         ('sim_dynamics.dynamics_node', 'dynamics_node')])
def test_realtime_priority_out_of_range_is_a_clear_error(procs, module, name):
    p = procs.node(module, name, {'realtime_priority': -2})
    assert p.wait(30.0 * DEADLINE_SCALE) == 2
    out = procs.output(p)
    assert 'configuration error' in out and 'realtime_priority out of range' in out, out[-2000:]
    assert 'Traceback' not in out


def test_tcp_transport_counts_garbage_and_serves_heartbeats(procs):
    port = free_ports(2)
    bridge = hil_nodes(procs, port, port + 1, transport='tcp', tcp_bind=f'127.0.0.1:{port}')
    c = tcp_client(port, 1.0)
    c.settimeout(5.0)
    rx = new_mav(1, 1)
    peer = new_mav(1, 1)
    rng = random.Random(5)
    c.sendall(bytes(rng.getrandbits(8) for _ in range(3000)))    # a stream of garbage
    # then valid frames: the stream parser may swallow some of them while it resynchronizes
    # (a garbage 0xFD header claims up to 280 bytes), as a real link does
    for _ in range(20):
        c.sendall(peer.heartbeat_encode(2, 12, 0, 0, 3).pack(peer))
        time.sleep(0.1)
    types = set()
    t_end = time.monotonic() + 8.0 * DEADLINE_SCALE
    while time.monotonic() < t_end and not {'HEARTBEAT', 'HIL_SENSOR'} <= types:
        for m in rx.parse_buffer(c.recv(65535)) or []:
            types.add(m.get_type())
    c.close()
    assert {'HEARTBEAT', 'HIL_SENSOR'} <= types
    for line in ('undecodable MAVLink input', 'peer 1:1'):     # logged: no fixed wait
        assert wait_line(bridge.lines, line, 30.0 * DEADLINE_SCALE, (bridge,)), line
    out = procs.output(bridge)
    assert 'undecodable MAVLink input' in out
    assert 'peer 1:1' in out                  # the valid heartbeat after the garbage was heard
    assert 'Traceback' not in out, out
