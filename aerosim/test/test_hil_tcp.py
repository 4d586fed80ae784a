"""The HIL link over TCP belongs to its FC: strangers never take it, get nothing, are counted.

PX4 SITL connects to the simulator once and never again (SimulatorMavlink::run, v1.16: the
connect loop, then a receive loop on that one socket for ever; the PX4 stand-in does the same,
px4_simulator.py). Issue 46 measured what a local stranger did to a flight before: a bare
connect() took the link and ended the flight; one with the FC's ids and garbage had its
HIL_ACTUATOR_CONTROLS applied. Here: the first frame a connection sends decides whether it is
the FC's (endpoint.first_frame), a second connection while the FC's is open is closed at
once, and every refused connection is one rejected_connection on /diagnostics and a warning
naming its address.
"""

import json
import random
import socket
import threading
import time

from diagnostic_msgs.msg import DiagnosticArray
from hil_helpers import hil_nodes
from test_hil_bridge_core import hil_bridge
from test_px4 import px4_graph, px4_peer, report_of

from mavlink_bridge.core.mav import mavlink, new_mav, pack

from conftest import (
    DEADLINE_SCALE,
    free_ports,
    port_counts,
    probe_node,
    spin_until,
    tcp_client,
    wait_line,
)


def _px4_hello(mav):
    """What PX4 sends once connected, before any HIL_SENSOR (SimulatorMavlink.cpp, run()).

    send_heartbeat() (type 0, autopilot 12) and request_hil_state_quaternion().
    """
    return [pack(mav, mav.heartbeat_encode(0, mavlink.MAV_AUTOPILOT_PX4, 0, 0, 0)),
            pack(mav, mav.command_long_encode(
                0, 0, mavlink.MAV_CMD_SET_MESSAGE_INTERVAL, 0,
                mavlink.MAVLINK_MSG_ID_HIL_STATE_QUATERNION, 5000.0, 0, 0, 0, 0, 0))]


def _actuators(mav, t_us, value=1.0):
    """An armed HIL_ACTUATOR_CONTROLS, every motor at value."""
    return pack(mav, mav.hil_actuator_controls_encode(
        t_us, [value] * 4 + [0.0] * 12, mavlink.MAV_MODE_FLAG_SAFETY_ARMED
        | mavlink.MAV_MODE_FLAG_CUSTOM_MODE_ENABLED, 1))


def test_a_connection_is_the_fcs_when_its_first_frame_comes_from_the_fcs_ids():
    """endpoint.first_frame through HilBridge.vet_connection: PX4's first words are taken."""
    b, _ = hil_bridge()                         # fc_system_id 1, fc_component_id 1
    px4 = new_mav(1, 1)
    hb, cmd = _px4_hello(px4)
    assert b.vet_connection(hb[:7]).take is None            # a frame begun: wait for it
    assert b.vet_connection(hb).take is True
    assert b.vet_connection(cmd + hb).take is True          # PX4's two threads: either first
    stranger = new_mav(7, 1)
    v = b.vet_connection(_px4_hello(stranger)[0])
    assert v.take is False and 'HEARTBEAT from 7:1' in v.why and '1:1' in v.why, v
    v = b.vet_connection(b'GET / HTTP/1.0\r\n\r\n' + hb)
    assert v.take is False and 'no MAVLink frame' in v.why, v
    ours = new_mav(51, 1)                       # our own ids: an echo, not the FC
    assert b.vet_connection(_px4_hello(ours)[0]).take is False
    signer = new_mav(1, 1)
    signer.signing.secret_key = bytes(range(32))
    signer.signing.sign_outgoing = True
    signer.signing.link_id = 1
    v = b.vet_connection(signer.heartbeat_encode(0, 12, 0, 0, 0).pack(signer))
    assert v.take is False and 'signed' in v.why, v
    # fc_system_id 0: the first FC heard fixes the ids, and from then on only those
    b0, _ = hil_bridge(fc_system_id=0, fc_component_id=0)
    assert b0.vet_connection(_px4_hello(stranger)[0]).take is True
    b0.served.learn(1, 1)
    assert b0.vet_connection(_px4_hello(stranger)[0]).take is False
    assert b0.vet_connection(hb).take is True


def _nothing_but_the_end(sock, wait_s=10.0) -> bytes:
    """Everything sock receives until the server ends it (EOF or reset) or wait_s passes."""
    got = b''
    deadline = time.monotonic() + wait_s * DEADLINE_SCALE
    try:
        while time.monotonic() < deadline:
            sock.settimeout(max(0.01, deadline - time.monotonic()))
            data = sock.recv(65536)
            if not data:
                return got
            got += data
    except (ConnectionResetError, socket.timeout):
        pass
    return got


def _hil_types(sock, want, wait_s=30.0):
    """The message types sock receives until want is among them (within the scaled deadline)."""
    rx, seen = new_mav(0, 0), set()
    sock.settimeout(1.0)
    deadline = time.monotonic() + wait_s * DEADLINE_SCALE
    while want not in seen and time.monotonic() < deadline:
        try:
            data = sock.recv(65536)
        except socket.timeout:
            continue
        assert data, 'the bridge closed the connection'
        seen |= {m.get_type() for m in rx.parse_buffer(data) or []}
    return seen


def test_strangers_on_the_tcp_port_never_take_the_link_nor_get_a_frame(procs, ros_context):
    """Before the FC, beside it and after it: only a connection proving itself the FC's is served.

    A bare connection, one sending garbage and one speaking as system 7 wait or are refused
    and get no byte; the FC (PX4's first words from 1:1) is served; a second connection with
    the FC's ids while it is connected is closed at once; once the FC's connection closed, a
    stranger's is refused and the FC connecting again is served. Each refusal is one
    rejected_connection, each warned with its address.
    """
    port = free_ports(2)
    bridge = hil_nodes(procs, port, port + 1, transport='tcp', tcp_bind=f'127.0.0.1:{port}',
                       warn_period_s=0.1)
    node, ex = probe_node(ros_context, 'tcp_probe')
    diags = []
    node.create_subscription(DiagnosticArray, '/diagnostics', diags.append, 50)

    def rejected():
        return int(port_counts(diags, 'MAVLink').get('rejected_connection', -1))
    bare = tcp_client(port, 1.0, 60.0 * DEADLINE_SCALE)     # waits for the bridge to listen
    ports = {bare: bare.getsockname()[1]}      # (a reset socket forgets its address)
    garbage = socket.create_connection(('127.0.0.1', port))
    ports[garbage] = garbage.getsockname()[1]
    garbage.sendall(bytes(random.Random(46).getrandbits(8) for _ in range(300)))
    assert _nothing_but_the_end(garbage) == b''
    # one refusal at a time, each seen on /diagnostics (1 Hz): each warned (warn_period_s 0.1)
    assert spin_until(node, ex, lambda: rejected() >= 1, 30.0), port_counts(diags, 'MAVLink')
    seven = socket.create_connection(('127.0.0.1', port))
    ports[seven] = seven.getsockname()[1]
    seven.sendall(b''.join(_px4_hello(new_mav(7, 1))))
    assert _nothing_but_the_end(seven) == b''
    assert spin_until(node, ex, lambda: rejected() >= 2, 30.0), port_counts(diags, 'MAVLink')
    px4 = new_mav(1, 1)
    fc = socket.create_connection(('127.0.0.1', port))
    for frame in _px4_hello(px4):
        fc.sendall(frame)
    assert 'HIL_SENSOR' in _hil_types(fc, 'HIL_SENSOR')
    assert _nothing_but_the_end(bare) == b''        # closed once the FC's was taken, unserved
    assert spin_until(node, ex, lambda: rejected() >= 3, 30.0), port_counts(diags, 'MAVLink')
    # a second connection with the FC's ids and its actuators: closed at once, nothing read
    second = socket.create_connection(('127.0.0.1', port))
    ports[second] = second.getsockname()[1]
    try:
        second.sendall(b''.join(_px4_hello(px4)) + _actuators(px4, 10_000_000) * 47)
    except OSError:
        pass                                        # already reset: closed at once
    assert _nothing_but_the_end(second) == b''
    assert spin_until(node, ex, lambda: rejected() >= 4, 30.0), port_counts(diags, 'MAVLink')
    assert 'HIL_SENSOR' in _hil_types(fc, 'HIL_SENSOR')     # the FC still served
    fc.shutdown(socket.SHUT_WR)                 # the FC ends its connection
    assert wait_line(bridge.lines, "the flight controller's connection from", 30 * DEADLINE_SCALE,
                     (bridge,))
    late = socket.create_connection(('127.0.0.1', port))
    ports[late] = late.getsockname()[1]
    late.sendall(_px4_hello(new_mav(7, 1))[0])
    assert _nothing_but_the_end(late) == b''
    again = socket.create_connection(('127.0.0.1', port))
    for frame in _px4_hello(px4):
        again.sendall(frame)
    assert 'HIL_SENSOR' in _hil_types(again, 'HIL_SENSOR')
    assert spin_until(node, ex, lambda: rejected() == 5, 30.0), port_counts(diags, 'MAVLink')
    again.close()
    out = procs.output(bridge)
    # the bare one waited until the FC's was taken, or its 5 s ran out before the FC came
    for s, whys in ((garbage, ['its first bytes are no MAVLink frame']),
                    (seven, ['its first frame, HEARTBEAT from 7:1, is not from the flight '
                             'controller 1:1 (not heard yet)']),
                    (bare, ['the link is taken', '0 bytes in 5 s without proving itself']),
                    (second, ['a second connection while the peer at']),
                    (late, ['HEARTBEAT from 7:1, is not from the flight controller 1:1'])):
        said = [x for x in out.splitlines() if f'rejected from 127.0.0.1:{ports[s]} '
                '(connection' in x]
        assert len(said) == 1 and any(why in said[0] for why in whys), (whys, out)
    assert 'ended (it closed the connection)' in out
    assert out.count('flight controller connected from') == 2
    assert 'Traceback' not in out
    for s in (bare, garbage, seven, second, late):
        s.close()


def test_px4_flies_on_while_strangers_try_its_tcp_port(procs, ros_context, tmp_path):
    """Issue 46 with the PX4 stand-in: a bare connect and a stranger with PX4's ids mid-flight.

    Before, the bare connect took the link from PX4 (which never connects again: the flight
    ended), and the stranger's HIL_ACTUATOR_CONTROLS, at full throttle with PX4's ids, were
    applied. Now both are closed at once, counted, and the mission flies to the end.
    """
    tcp = free_ports(1)
    mav = free_ports(2)
    node, ex = probe_node(ros_context, 'px4_tcp_probe')
    diags = []
    node.create_subscription(DiagnosticArray, '/diagnostics', diags.append, 50)
    peer = px4_peer(procs, tcp, mav, mav + 1)
    run, lines = px4_graph(procs, 'sim_quad_hil', tmp_path, tcp, mav, mav + 1)
    assert wait_line(lines, 'Takeoff detected', 120 * DEADLINE_SCALE, (run, peer)), \
        ''.join(lines[-40:])
    bare = socket.create_connection(('127.0.0.1', tcp))
    assert _nothing_but_the_end(bare) == b''
    time.sleep(2.5)                 # past warn_period_s: each refusal warned on its own
    stranger = socket.create_connection(('127.0.0.1', tcp))
    px4 = new_mav(1, 1)
    sent = 0
    try:
        stranger.sendall(bytes(random.Random(7).getrandbits(8) for _ in range(200)))
        for k in range(47):
            stranger.sendall(_actuators(px4, 10_000_000 + 4000 * k))
            sent += 1
    except OSError:
        pass                        # closed at once: the kernel resets what came after
    assert _nothing_but_the_end(stranger) == b''
    done = threading.Event()
    threading.Thread(target=lambda: (run.wait(600), done.set()), daemon=True).start()
    # PX4 ends only when the graph closes its link: an end before is the flight's
    spin_until(node, ex, lambda: done.is_set() or peer.poll() is not None, 300.0)
    assert run.wait(30) == 0, ''.join(lines[-40:])
    summary = json.loads((tmp_path / 'latest' / 'summary.json').read_text())
    assert summary['result'] == 'complete', summary
    c = port_counts(diags, 'MAVLink')
    assert c['rejected_connection'] == '2', c
    out = ''.join(lines)
    for s in (bare, stranger):
        assert f'MAVLink input rejected from 127.0.0.1:{s.getsockname()[1]} (connection' \
            in out, out
    assert 'a second connection while the peer at' in out
    assert out.count('flight controller connected from') == 1
    assert "the flight controller's connection from" not in out.split('Landing detected')[0]
    assert peer.wait(30) == 0
    r = report_of(procs.text(peer))
    assert r['done'] == 1 and r['answers'] == r['hil_sensor'] > 1000, r
    for s in (bare, stranger):
        s.close()


def test_the_builtin_fcs_port_takes_its_simulator_only():
    """builtin_fc's port belongs to its simulator (sim_address), as the bridge's to its FC.

    Before, a datagram from anywhere fed the FC: a stranger's HIL_SENSOR moved its estimate
    and was answered, its MISSION_COUNT started a mission download.
    """
    from mavlink_bridge.fc.fc_core import FcConfig, FcCore
    core = FcCore(FcConfig(sim_address='127.0.0.1:14560'))
    sim = new_mav(51, 1)
    sensor = pack(sim, sim.hil_sensor_encode(4000, 0.0, 0.0, -9.81, 0, 0, 0, 0.2, 0, 0.4,
                                             1013.0, 0.0, 0.0, 20.0, 0x1FFF, 0))
    count = pack(sim, sim.mission_count_encode(1, 1, 3, 0))
    for data in (sensor, count):
        act = core.on_datagram(data, 0.0, ('127.0.0.1', 40123))
        assert act.reject[0] == 'peer' and act.sends == [], act
        assert 'the simulator is at 127.0.0.1:14560 (sim_address)' in act.reject[1]
    assert core.sim_peer is None and core.answered == 0
    act = core.on_datagram(sensor, 0.0, ('127.0.0.1', 14560))
    assert act.reject is None and [m.get_type() for m in act.sends] == ['HIL_ACTUATOR_CONTROLS']
    assert core.sim_peer == (51, 1)
    # bound to 0.0.0.0: its datagrams come from a local address
    core = FcCore(FcConfig(sim_address='0.0.0.0:14560'))
    assert core.on_datagram(sensor, 0.0, ('127.0.0.1', 14560)).reject is None
