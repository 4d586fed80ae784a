"""Replaying a recorded run into the IMC and MAVLink bridges reproduces what they sent live.

A live graph runs with its bridge talking to a UDP peer played by the test, while the recorder
writes the bridge's inputs to a bag. Then the graph is gone: a fresh bridge with the same
parameters is fed by the player from the bag, and what it sends is compared with the live
datagrams: IMC SimulatedState and EstimatedState byte for byte (header and CRC included: the
time stamps are the samples' sim times); MAVLink HIL_SENSOR, HIL_GPS and HIL_STATE_QUATERNION
payload byte for byte (the frames' sequence numbers count every message sent, heartbeats
included, so headers and CRCs differ; the payloads carry the data, sensor noise included).
"""

from datetime import datetime
import math
import os
import signal
import sys
import time

from hil_helpers import Peer
import imcpy
from rclpy.serialization import deserialize_message
from std_srvs.srv import Trigger

from aerosim_msgs.msg import VehicleState
from aerosim_msgs.srv import SetPaused, Step
from imc_bridge.core.codec import decode
from sim_bag.core.bagio import TopicFilter, bag_messages, open_reader
from sim_ros.convert import time_ns

from conftest import DEADLINE_SCALE, Procs, free_ports, probe_node, spin_for, spin_until
from graph_start import start
from imc_graph_peer import ImcPeer

HIL_OUT = ('HIL_SENSOR', 'HIL_GPS', 'HIL_STATE_QUATERNION')
IMC_OUT = ('SimulatedState', 'EstimatedState')
GPS_UTC = '2026-11-22T12:00:00Z'


def record(procs, bag, topics):
    """Start the recorder on topics; returns the process."""
    return procs.start([sys.executable, '-m', 'sim_bag.recorder', '--ros-args',
                        '-p', f'output:={bag}', '-p', f'topics:=[{", ".join(topics)}]',
                        '-p', 'discovery_period_s:=0.05'])


def stop(proc):
    """SIGINT a recorder; return its output after a clean exit."""
    os.killpg(proc.pid, signal.SIGINT)
    proc.wait(20)
    out = Procs.text(proc)
    assert proc.returncode == 0, out
    return out


def resume_when_recorded(node, ex, state_topic, readers):
    """Wait until state_topic has readers subscribers (bridge + recorder), then run the sim."""
    pause = node.create_client(SetPaused, '/sim/pause')
    assert spin_until(node, ex, lambda: pause.service_is_ready() and
                      node.count_subscribers(state_topic) >= readers, 30.0), \
        'graph/recorder did not come up'
    spin_for(node, ex, 1.0)       # matched both ways
    fut = pause.call_async(SetPaused.Request(paused=False))
    assert spin_until(node, ex, fut.done, 10.0) and fut.result().success
    return pause


def recorded_stamps(bag, topic):
    """Sim times [ns] of the states in the bag, in order."""
    return [time_ns(deserialize_message(bytes(d), VehicleState).header.stamp)
            for _t, _ns, d in bag_messages(open_reader(bag), TopicFilter(names=(topic,)))]


def replay(procs, ros_context, bag, state_topic, peer, keep, key):
    """Play the bag at 2x into the bridge already started; return {key: data} the peer got."""
    player = procs.start([sys.executable, '-m', 'sim_bag.player', '--ros-args',
                          '-p', f'bag:={bag}', '-p', 'rate:=2.0', '-p', 'start_paused:=true',
                          '-p', 'wait_for_readers:=1'])     # the bridge matched (a busy machine)
    node, ex = probe_node(ros_context, 'replay_probe')
    resume = node.create_client(Trigger, '/player/resume')
    assert spin_until(node, ex, lambda: resume.service_is_ready() and
                      node.count_publishers(state_topic) >= 1 and
                      node.count_subscribers(state_topic) >= 1, 30.0), 'player/bridge not up'
    spin_for(node, ex, 1.0)       # matched both ways
    fut = resume.call_async(Trigger.Request())
    assert spin_until(node, ex, fut.done, 10.0) and fut.result().message == 'playing'
    got = {}
    while player.poll() is None:
        for item in peer(1.0):
            if keep(item):
                got[key(item)] = item
    for item in peer(1.0):                         # what was still on its way
        if keep(item):
            got[key(item)] = item
    assert player.returncode == 0, procs.output(player)
    return got


def test_replay_into_the_imc_bridge_resends_its_states_byte_for_byte(procs, ros_context,
                                                                    tmp_path):
    port = free_ports(4)
    # sim timestamps: a replay resends the same bytes only if the header stamps come from the
    # states (utc, the default, stamps the time of sending)
    bridge = {'simulated_state_rate_hz': 10.0, 'estimated_state_rate_hz': 5.0,
              'timestamps': 'sim', 'announce_multicast': False, 'announce_hosts': ''}
    # sim_imc (the harbour's boat in the world, its imc_bridge in /usv) as launched
    start(procs, 'sim_imc', {'imc_bind': f'127.0.0.1:{port}',
                             'imc_peers': f'127.0.0.1:{port + 1}', 'time_scale': 4.0},
          params={'world_plant': {'start_paused': True}, 'imc_bridge': bridge})
    live_peer = ImcPeer(port + 1, port)
    bag = tmp_path / 'imc_run'
    rec = record(procs, bag, ['/usv/vehicle_state'])
    node, ex = probe_node(ros_context, 'rec_probe')
    pause = resume_when_recorded(node, ex, '/usv/vehicle_state', 2)
    # drive the boat over IMC (DUNE's guidance): speed up, then turn, so the states change
    ds, dh = imcpy.DesiredSpeed(), imcpy.DesiredHeading()
    ds.value, ds.speed_units = 1.5, imcpy.SpeedUnits.METERS_PS
    dh.value = math.radians(60.0)
    live_peer.send(ds)
    live_peer.send(dh)
    live = {}
    # 24 s of sim (6 s of wall at 4x on a quiet machine; a loaded one takes longer)
    for data in live_peer.datagrams(60.0 * DEADLINE_SCALE):
        m = decode(data)
        if m.msg_name in IMC_OUT:
            live[(m.msg_name, round(m.timestamp * 1e3))] = data
        if m.msg_name == 'SimulatedState' and m.timestamp >= 24.0:
            break
    fut = pause.call_async(SetPaused.Request(paused=True))
    assert spin_until(node, ex, fut.done, 10.0) and fut.result().success
    for data in live_peer.datagrams(0.5):
        m = decode(data)
        if m.msg_name in IMC_OUT:
            live[(m.msg_name, round(m.timestamp * 1e3))] = data
    stop(rec)
    procs.stop()                                   # the live graph is gone
    procs.items.clear()
    stamps = recorded_stamps(bag, '/usv/vehicle_state')
    assert stamps[0] <= 20_000_000 and len(stamps) > 800, (stamps[:3], len(stamps))  # 50 Hz

    start(procs, 'sim_imc', {'imc_bind': f'127.0.0.1:{port + 2}',
                             'imc_peers': f'127.0.0.1:{port + 3}'},
          nodes=('imc_bridge',), params={'imc_bridge': bridge})
    replay_peer = ImcPeer(port + 3, port + 2)
    got = replay(procs, ros_context, bag, '/usv/vehicle_state', replay_peer.datagrams,
                 lambda d: decode(d).msg_name in IMC_OUT,
                 lambda d: (decode(d).msg_name, round(decode(d).timestamp * 1e3)))
    # the live samples of the recorded span, all of them, and the same bytes (a bridge samples
    # the first state it gets: the live one got t = 0 before the recorder was there)
    t0_ms, t_end_ms = stamps[0] // 1_000_000, stamps[-1] // 1_000_000
    want = {k: v for k, v in live.items() if t0_ms < k[1] <= t_end_ms}
    got = {k: v for k, v in got.items() if t0_ms < k[1]}
    assert len([k for k in want if k[0] == 'SimulatedState']) > 160
    assert sorted(got) == sorted(want), sorted(set(got) ^ set(want))[:10]
    differ = [k for k in want if got[k] != want[k]]
    assert not differ, f'{len(differ)} datagrams differ, first {differ[:3]}'
    # and the boat did move and turn (a replay of a still boat would prove little)
    last = decode(want[max(k for k in want if k[0] == 'EstimatedState')])
    assert last.u > 1.0 and abs(math.degrees(last.psi) - 60.0) < 10.0, (last.u, last.psi)


def hil_args(port):
    """sim_quad_hil split, lockstep at real time, the bridge on port and its FC on port + 1."""
    return {'composition': 'split', 'lockstep': True, 'time_scale': 1.0, 'seed': 7,
            'bind': f'127.0.0.1:{port}', 'fc_address': f'127.0.0.1:{port + 1}'}


def test_replay_into_the_mavlink_bridge_resends_its_hil_frames(procs, ros_context, tmp_path):
    port = free_ports(4)
    bridge = {'gps_utc_start': GPS_UTC, 'mission_timeout_s': 0.5}
    # sim_quad_hil split: the world alone (world_node) and the quad's bridge its own process
    # over the vehicle_state and effector_command topics; the test plays the FC
    start(procs, 'sim_quad_hil', hil_args(port), nodes=('world_node', 'mavlink_bridge'),
          params={'world_node': {'start_paused': True}, 'mavlink_bridge': bridge})
    fc = Peer(port + 1, port)
    bag = tmp_path / 'hil_run'
    rec = record(procs, bag, ['/quad/vehicle_state', '/sim/status'])
    node, ex = probe_node(ros_context, 'rec_probe')
    pause = resume_when_recorded(node, ex, '/quad/vehicle_state', 2)
    live, answered, t_last = {}, 0, None
    for m in fc.recv(30.0):
        if m.get_type() in HIL_OUT:
            live[(m.get_type(), m.time_usec)] = m.get_payload()
        if m.get_type() == 'HIL_SENSOR' and answered < 500:     # 2 s of 250 Hz steps
            # a climb with a yaw torque (motors 0/1 against 2/3): every state changes
            fc.send(fc.mav.hil_actuator_controls_encode(
                m.time_usec, [0.80, 0.80, 0.70, 0.70] + [0.0] * 12, 129, 1))
            answered += 1
            t_last = time.monotonic() if answered == 500 else None
        if t_last and time.monotonic() - t_last > 0.3:
            break      # the lockstep sim waits for the next answer (heartbeats still come)
    assert answered == 500, f'only {answered} HIL_SENSOR frames'
    fut = pause.call_async(SetPaused.Request(paused=True))
    assert spin_until(node, ex, fut.done, 10.0) and fut.result().success
    # frames of steps taken before the pause landed (a lockstep timeout after the last answer,
    # with both cores busy) are still on the socket: read them first
    for m in fc.recv(0.5):
        if m.get_type() in HIL_OUT:
            live[(m.get_type(), m.time_usec)] = m.get_payload()
    # paused: /sim/step still reaches the FC, one HIL_SENSOR per step taken
    t_paused = max(t for (typ, t) in live if typ == 'HIL_SENSOR')
    step = node.create_client(Step, '/sim/step')
    fut = step.call_async(Step.Request(steps=3))
    assert spin_until(node, ex, fut.done, 10.0) and fut.result().success
    for m in fc.recv(1.0):
        if m.get_type() in HIL_OUT:
            live[(m.get_type(), m.time_usec)] = m.get_payload()
    stepped = sorted(t for (typ, t) in live if typ == 'HIL_SENSOR' and t > t_paused)
    assert stepped == [t_paused + 4000 * k for k in (1, 2, 3)], (t_paused, stepped)
    stop(rec)
    procs.stop()
    procs.items.clear()
    stamps = recorded_stamps(bag, '/quad/vehicle_state')
    # from the first step on (t = 0 is not sampled): the noise depends on every sample before
    assert stamps[0] <= 4_000_000 and len(stamps) >= 500, (stamps[:3], len(stamps))

    start(procs, 'sim_quad_hil', hil_args(port + 2), nodes=('mavlink_bridge',),
          params={'mavlink_bridge': bridge})
    fc2 = Peer(port + 3, port + 2)
    got = replay(procs, ros_context, bag, '/quad/vehicle_state', fc2.recv,
                 lambda m: m.get_type() in HIL_OUT,
                 lambda m: (m.get_type(), m.time_usec))
    got = {k: m.get_payload() for k, m in got.items()}
    t_end_us = stamps[-1] // 1000
    utc0 = int(datetime.fromisoformat(GPS_UTC.replace('Z', '+00:00')).timestamp()) * 1_000_000
    want = {k: v for k, v in live.items()
            if k[1] - (utc0 if k[0] == 'HIL_GPS' else 0) <= t_end_us}
    kinds = {typ: sum(1 for k in want if k[0] == typ) for typ in HIL_OUT}
    assert kinds['HIL_SENSOR'] >= 503 and kinds['HIL_GPS'] >= 8 and \
        kinds['HIL_STATE_QUATERNION'] >= 90, kinds
    assert sorted(got) == sorted(want), sorted(set(got) ^ set(want))[:10]
    differ = [k for k in want if got[k] != want[k]]
    assert not differ, f'{len(differ)} payloads differ, first {differ[:3]}'
