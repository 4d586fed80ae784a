"""The bridge alone against a lockstep FC played with pymavlink/mavutil, as PX4 meets it.

No PX4 stand-in here (px4_sitl.py flies in test_px4.py): the test is the FC, over UDP with
real sequence numbers. MAVProxy's loss count and the 1 Hz HEARTBEAT, only the served FC
driving the motors, a refused answer releasing its lockstep step and a silent FC disengaging
lockstep.
"""

import math
import os
import signal
import time

from diagnostic_msgs.msg import DiagnosticArray

from aerosim_msgs.msg import AircraftEffectorCommand, SimStatus
from mavlink_bridge.core.mav import mavlink, new_mav, pack
from sim_ros import qos

from conftest import UdpPeer, free_ports, port_counts, probe_node, spin_until
from graph_start import start


def hil_plant(procs, port, time_scale=0.0, **params):
    """sim_quad_hil's world_plant (world + bridge composed, the default), its FC at port + 1.

    The clock starts at once (fleet_start_timeout_s 0): the test's FC does not take the
    mission, which the world's start hold would wait for (60 s). params: more parameters
    of the process (its world node's and its bridge's).
    """
    p = {'lockstep_timeout_s': 1.0, 'lockstep_max_timeouts': 3, 'warn_period_s': 0.1}
    p.update(params)
    return start(procs, 'sim_quad_hil', {'time_scale': time_scale, 'summary': False,
                                         'sensor_topics': False, 'fleet_start_timeout_s': 0.0,
                                         'bind': f'127.0.0.1:{port}',
                                         'fc_address': f'127.0.0.1:{port + 1}'},
                 nodes=('world_plant',), params={'world_plant': p})['world_plant']


def test_mavutil_counts_no_loss_and_heartbeats_are_1_hz_then_poweroff(procs):
    from pymavlink import mavutil
    port = free_ports(2)
    # real time: ~300 frames a second, which a Python reader keeps up with on a busy machine
    # (as fast as possible, 8,000 a second overflowed its socket: kernel drops, not ours)
    bridge = hil_plant(procs, port, time_scale=1.0)
    conn = mavutil.mavlink_connection(f'udpin:127.0.0.1:{port + 1}', source_system=1,
                                      dialect='common')
    first = conn.recv_match(type='HEARTBEAT', blocking=True, timeout=60)
    assert first is not None, 'no heartbeat'
    t0, beats = time.monotonic(), 0
    frames = 0
    while time.monotonic() - t0 < 4.5:
        m = conn.recv_match(blocking=True, timeout=1.0)
        if m is None:
            continue
        frames += 1
        beats += m.get_type() == 'HEARTBEAT'
    # MAVProxy's loss figure is mavutil's: sequence gaps per sender
    assert frames > 200 and conn.mav_loss == 0, (frames, conn.mav_loss)
    # 1 Hz (a /sim/status update no longer adds one): 4-5 in 4.5 s, never 9
    assert 3 <= beats <= 6, beats
    os.killpg(bridge.pid, signal.SIGINT)
    last = None
    deadline = time.monotonic() + 10.0
    while time.monotonic() < deadline:
        m = conn.recv_match(type='HEARTBEAT', blocking=True, timeout=0.5)
        if m is not None:
            last = m
        if last is not None and last.system_status == mavlink.MAV_STATE_POWEROFF:
            break
    assert last is not None and last.system_status == mavlink.MAV_STATE_POWEROFF
    assert bridge.wait(10) == 0


class Fc(UdpPeer):
    """A lockstep FC played by the test over UDP (pymavlink), with real sequence numbers.

    UdpPeer's 4 MiB receive buffer holds the frames the free-running sensors send before the
    FC answers (a frame dropped here is an answer that never comes: a lockstep timeout).
    """

    def __init__(self, port, bridge_port, sysid=1, compid=1):
        super().__init__(port, bridge_port, poll_s=0.2)
        self.mav = new_mav(sysid, compid)
        self.rx = new_mav(0, 0)

    def send(self, msg, mav=None):
        self.sock.sendto(pack(mav or self.mav, msg), self.bridge)

    def frames(self, timeout_s):
        """Yield each HIL_SENSOR received within timeout_s wall seconds."""
        for data in self.datagrams(timeout_s):
            for m in self.rx.parse_buffer(data) or []:
                if m.get_type() == 'HIL_SENSOR':
                    yield m


def _answer(fc, m, value, mav=None):
    fc.send(fc.mav.hil_actuator_controls_encode(m.time_usec, [value] * 4 + [0.0] * 12, 129, 1),
            mav)


def test_only_the_served_fc_drives_the_motors(procs, ros_context):
    import threading
    port = free_ports(2)
    hil_plant(procs, port)
    fc = Fc(port + 1, port)
    stranger = new_mav(255, 190)
    signer = new_mav(1, 1)
    signer.signing.secret_key = bytes(range(32))
    signer.signing.sign_outgoing = True
    signer.signing.link_id = 1
    node, ex = probe_node(ros_context, 'served_probe', '/quad')
    cmds, diags = [], []
    sub = node.create_subscription(AircraftEffectorCommand, 'effector_command', cmds.append,
                                   qos.STATE)
    node.create_subscription(DiagnosticArray, '/diagnostics', diags.append, 50)
    assert spin_until(node, ex, lambda: sub.get_publisher_count() >= 1, 30.0)
    stop = threading.Event()

    def fc_loop():                      # the FC and two others answer every frame
        fc.send(fc.mav.heartbeat_encode(2, 12, 0, 0, 3))
        next(fc.frames(60.0))
        fc.drain()
        while not stop.is_set():
            for m in fc.frames(0.2):
                _answer(fc, m, 0.9, stranger)       # a stray ground station: refused
                _answer(fc, m, 0.8, signer)         # the FC's ids, signed: no key here
                _answer(fc, m, 0.3)                 # the FC
                break
    worker = threading.Thread(target=fc_loop, daemon=True)
    worker.start()
    try:
        assert spin_until(node, ex, lambda: int(port_counts(diags, 'MAVLink').get(
            'rejected_signed', 0)) >= 50 and len(cmds) >= 50, 30.0), \
            port_counts(diags, 'MAVLink')
    finally:
        stop.set()
        worker.join(2.0)
    c = port_counts(diags, 'MAVLink')
    assert int(c['rejected_peer']) >= 50 and int(c['rejected_signed']) >= 50, c
    assert {round(v, 3) for cmd in cmds for v in cmd.throttle_cmd} == {0.3}


def test_a_refused_answer_releases_its_step_and_a_silent_fc_disengages_lockstep(procs,
                                                                                ros_context):
    import threading
    port = free_ports(2)
    bridge = hil_plant(procs, port)
    fc = Fc(port + 1, port)
    node, ex = probe_node(ros_context, 'lockstep_probe', '/quad')
    status = []
    node.create_subscription(SimStatus, '/sim/status', status.append, qos.LATCHED)
    answer = {'value': 0.3, 'n': 0, 'last_us': 0}     # value None: the FC is silent
    stop = threading.Event()

    def fc_loop():                          # the FC answers from its own thread, as PX4 does
        fc.send(fc.mav.heartbeat_encode(2, 12, 0, 0, 3))
        next(fc.frames(60.0))
        fc.drain()                          # it joins the running sim: the newest frames on
        while not stop.is_set():
            for m in fc.frames(0.2):
                if answer['value'] is not None:
                    _answer(fc, m, answer['value'])
                    answer['n'] += 1
                answer['last_us'] = m.time_usec
                break
    worker = threading.Thread(target=fc_loop, daemon=True)
    worker.start()

    def status_after(t_us):
        assert spin_until(node, ex, lambda: status and status[-1].sim_time.sec * 10**6 +
                          status[-1].sim_time.nanosec // 1000 >= t_us, 30.0)
        return status[-1]
    try:
        assert spin_until(node, ex, lambda: answer['n'] >= 100, 60.0), answer
        before = status_after(answer['last_us'])
        assert before.lockstep, before
        answer['value'] = math.nan          # from now on, only refused answers
        n0 = answer['n']
        assert spin_until(node, ex, lambda: answer['n'] >= n0 + 300, 60.0), answer
        # 300 refused answers, each released its step: no lockstep timeout for them (before:
        # one each, 300). A busy machine may still delay an answer past 1 s now and then.
        after = status_after(answer['last_us'])
        assert after.lockstep and after.lockstep_timeouts - before.lockstep_timeouts <= 5, after
        # the FC falls silent: after 3 timeouts in a row lockstep disengages, sensors run on
        answer['value'] = None
        assert spin_until(node, ex, lambda: not status[-1].lockstep, 30.0), status[-1]
        assert status[-1].lockstep_timeouts >= after.lockstep_timeouts + 3
        t_free = answer['last_us']
        assert spin_until(node, ex, lambda: answer['last_us'] > t_free + 1_000_000, 30.0)
        # and it answers again: lockstep engages again
        answer['value'] = 0.3
        assert spin_until(node, ex, lambda: status[-1].lockstep, 30.0), status[-1]
    finally:
        stop.set()
        worker.join(2.0)
    out = procs.output(bridge)
    assert 'HIL_ACTUATOR_CONTROLS rejected' in out
    assert 'lockstep disengaged' in out and 'lockstep engaged again' in out
