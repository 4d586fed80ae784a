"""The sim_imc graph (the world's boat + imc_bridge) fed garbage and bursts over real UDP.

Garbage on the port and on the command topics is counted and changes nothing; a burst of
requests of each kind is answered in full; relayed housekeeping is counted, not warned about;
another system announcing our id or name is an error. The peer is imc_graph_peer's.
"""

import math
import os
import re
import struct
import time

import imcpy
import pytest
from test_imc_codec import forged

from conftest import (
    DEADLINE_SCALE,
    free_ports,
    port_counts,
    probe_node,
    spin_for,
    spin_until,
    wait_line,
)
from graph_start import start
from imc_graph_peer import (
    CLIENT_SYS,
    IDLE_U,
    SYS,
    ImcPeer,
    start_graph,
)


def test_garbage_is_counted_and_changes_nothing(procs, ros_context):
    from diagnostic_msgs.msg import DiagnosticArray
    port = free_ports(2)
    cport = port + 1
    bridge = start_graph(procs, port, cport)
    peer = ImcPeer(cport, port)
    node, ex = probe_node(ros_context, 'imc_test')
    diags = []
    node.create_subscription(DiagnosticArray, '/diagnostics', diags.append, 10)
    before = peer.wait_for('SimulatedState', 30.0)
    hb = imcpy.Heartbeat()
    hb.src, hb.dst = CLIENT_SYS, SYS
    good = hb.serialize()
    garbage = {
        'sync': [b'\x00\x00' + good[2:], os.urandom(64) * 3],
        # a byte-swapped sync makes a Heartbeat (no payload: size 0 either way) read big
        # endian: the CRC catches it
        'crc': [good[:-1] + bytes([good[-1] ^ 0x5A]), good[1::-1] + good[2:]],
        'truncated': [good[:10], good[:-1], good[:4] + struct.pack('<H', 300) + good[6:]],
        'size': [good + good, b'\x54\xfe' + b'\x00' * 65000],
        'unknown': [forged(4000, b'\x01\x02')],
    }
    for frames in garbage.values():
        for f in frames:
            peer.raw(f)
    other = imcpy.SetThrusterActuation()
    other.value = 1.0
    peer.send(other, dst=0x1234)                               # for another system
    bad = [(imcpy.SetThrusterActuation(), 'value', float('nan')),
           (imcpy.SetThrusterActuation(), 'value', 1.5),
           (imcpy.SetServoPosition(), 'value', 3.0),
           (imcpy.SetThrusterActuation(), 'id', 7)]
    for msg, field, value in bad:
        setattr(msg, field, value)
        if field == 'id':
            msg.value = 1.0
        peer.send(msg)
    peer.send(imcpy.Abort())                                    # valid IMC, not handled here

    def counts():
        return port_counts(diags, 'IMC link')

    expect = {f'rejected_{k}': len(v) for k, v in garbage.items()}
    expect.update(rejected_not_for_us=1, rejected_value=len(bad), rejected_unhandled=1)
    assert spin_until(node, ex, lambda: all(int(counts().get(k, -1)) >= v
                                            for k, v in expect.items()), 15.0), \
        {k: (counts().get(k), v) for k, v in expect.items()}
    got = counts()
    for k, v in expect.items():
        assert int(got[k]) == v, (k, got)
    assert int(got['commands']) == 0                           # nothing reached the boat
    after = peer.sim_time_after(5.0)
    # still idle, drifting only: no speed through the water, the start heading (r is not 0:
    # the body rates of the wave roll/pitch)
    assert abs(after.u) < IDLE_U and after.psi == pytest.approx(before.psi, abs=1e-6)
    assert after.timestamp > before.timestamp
    assert bridge.poll() is None                               # and the bridge is up
    node.destroy_node()
    out = procs.output(bridge)
    # logged, and rate-limited per kind: the burst gives one line per kind, not one per
    # datagram (a kind flooded does not hide the others)
    lines = re.findall(r'IMC input rejected from [\d.:]+ \((\w+),', out)
    assert sorted(lines) == sorted(k[len('rejected_'):] for k, v in expect.items() if v), out


def test_the_world_rejects_garbage_boat_commands_and_counts_them(procs, ros_context):
    from aerosim_msgs.msg import AircraftEffectorCommand, AutopilotCommand, SimStatus
    from sim_ros import qos
    port = free_ports(2)
    cport = port + 1
    start_graph(procs, port, cport)
    peer = ImcPeer(cport, port)
    node, ex = probe_node(ros_context, 'usv_probe', '/usv')
    status = []
    node.create_subscription(SimStatus, '/sim/status', status.append, qos.LATCHED)
    eff = node.create_publisher(AircraftEffectorCommand, 'effector_command', qos.COMMAND)
    ap = node.create_publisher(AutopilotCommand, 'autopilot_command', qos.COMMAND)
    peer.wait_for('SimulatedState', 30.0)
    assert spin_until(node, ex, lambda: eff.get_subscription_count() > 0
                      and ap.get_subscription_count() > 0 and status, 10.0)
    bad_eff = [AircraftEffectorCommand(),                                  # nothing commanded
               AircraftEffectorCommand(throttle_cmd=[math.nan]),
               AircraftEffectorCommand(throttle_cmd=[1.5]),
               AircraftEffectorCommand(throttle_cmd=[0.5, 0.5]),            # one thruster
               AircraftEffectorCommand(rudder_cmd_angle_rad=[math.inf])]
    bad_ap = [AutopilotCommand(airspeed_hold=True, airspeed_setpoint_kts=math.nan),
              AutopilotCommand(airspeed_hold=True, airspeed_setpoint_kts=500.0),
              AutopilotCommand(heading_hold=True, heading_setpoint_deg=math.inf)]
    for m in bad_eff:
        eff.publish(m)
    for m in bad_ap:
        ap.publish(m)
    n_bad = len(bad_eff) + len(bad_ap)
    assert spin_until(node, ex, lambda: status[-1].rejected_inputs == n_bad, 10.0), \
        status[-1].rejected_inputs
    s = peer.sim_time_after(5.0)
    assert abs(s.u) < IDLE_U and s.psi == pytest.approx(0.0, abs=1e-6)   # did not move the boat
    eff.publish(AircraftEffectorCommand(throttle_cmd=[0.5]))  # a valid one does
    s = peer.wait_for('SimulatedState', 10.0, lambda m: m.u > 0.3)
    assert status[-1].rejected_inputs == n_bad
    node.destroy_node()


def test_imc_bridge_bad_configuration_ends_the_node_with_the_core_message(procs):
    """A value the core refuses ends the node: exit code 2, 'configuration error' and its text.

    Every parameter's message is checked without ROS in test_bridge_config.
    """
    p = start(procs, 'sim_imc', {'imc_bind': f'127.0.0.1:{free_ports()}'},
              nodes=('imc_bridge',), params={'imc_bridge': {'system_type': 'submarine'}})
    p = p['imc_bridge']
    assert p.wait(30.0) == 2
    out = procs.output(p)
    assert 'configuration error' in out and 'system_type: one of' in out, out[-2000:]


def test_a_burst_of_50_requests_of_each_kind_gets_50_answers(procs, ros_context):
    """50 back-to-back datagrams of each request kind over real UDP: every one is answered.

    DynamicsSimParam answers come from the vehicle node's parameter services: a ROS service
    keeps only its last 10 requests, so 50 calls at once lost up to 40 (12 of 50 in a run
    before the bridge queued them) without a refusal or a log line.
    """
    from diagnostic_msgs.msg import DiagnosticArray
    port = free_ports(2)
    cport = port + 1
    bridge = start_graph(procs, port, cport)
    peer = ImcPeer(cport, port)
    node, ex = probe_node(ros_context, 'imc_burst')
    diags = []
    node.create_subscription(DiagnosticArray, '/diagnostics', diags.append, 10)
    peer.wait_for('SimulatedState', 30.0)
    dyn = imcpy.DynamicsSimParam.ActionOnTheVehicleSimulationParametersEnum

    def request(kind):
        if kind == 'DynamicsSimParam':
            m = imcpy.DynamicsSimParam()
            m.op = dyn.REQUEST
        elif kind == 'LeakSimulation':
            m = imcpy.LeakSimulation()
            m.op, m.entities = imcpy.LeakSimulation.OperationEnum.ON, ''
        elif kind == 'EntityList':
            m = imcpy.EntityList()
            m.op = imcpy.EntityList.OperationEnum.QUERY
        else:
            m = imcpy.UASimulation()
            m.type, m.speed = imcpy.UASimulation.TypeEnum.PING, 100
        return m

    for kind in ('LeakSimulation', 'EntityList', 'UASimulation', 'DynamicsSimParam'):
        peer.drain()
        for _ in range(50):
            peer.send(request(kind))
        answers, deadline = 0, time.monotonic() + 30.0 * DEADLINE_SCALE
        while answers < 50 and time.monotonic() < deadline:
            for m, _ in peer.recv(0.5):
                answers += m.msg_name == kind and m.dst == CLIENT_SYS
        assert answers == 50, (kind, answers, procs.output(bridge)[-3000:])

    c = {}
    assert spin_until(node, ex, lambda: c.update(port_counts(diags, 'IMC link')) or
                      int(c.get('rx', 0)) >= 200 and c.get('dynamics_params_pending') == '0',
                      10.0), c
    assert int(c['rejected']) == 0 and c['dynamics_params_pending'] == '0', c
    node.destroy_node()


def test_relayed_housekeeping_is_counted_not_warned_about(procs, ros_context):
    """DUNE relays a console's Heartbeat (addressed to DUNE) and its housekeeping to every node.

    That is IMC traffic for another system, not bad input: counted as relayed on
    /diagnostics, no warning (it was one warning every warn_period_s: 580 in 13 min). A
    command for another system is still refused (not_for_us) and warned about.
    """
    from diagnostic_msgs.msg import DiagnosticArray
    port = free_ports(2)
    cport = port + 1
    bridge = start_graph(procs, port, cport, warn_period_s=2.0)
    peer = ImcPeer(cport, port)
    node, ex = probe_node(ros_context, 'imc_relay')
    diags = []
    node.create_subscription(DiagnosticArray, '/diagnostics', diags.append, 10)
    peer.wait_for('SimulatedState', 30.0)
    dune, console = 0x3F02, 0x4001
    for i in range(30):
        for msg in (imcpy.Heartbeat(), imcpy.EntityState(), imcpy.EntityList()):
            msg.src, msg.src_ent, msg.dst, msg.dst_ent = console, 0, dune, 0xFF
            peer.sock.sendto(msg.serialize(), peer.bridge)
        if i % 10 == 0:
            spin_for(node, ex, 2.1)              # past warn_period_s: a warning would repeat
    other = imcpy.SetThrusterActuation()
    other.value = 1.0
    peer.send(other, dst=dune)                               # a command for DUNE: refused

    def counts():
        return port_counts(diags, 'IMC link')
    assert spin_until(node, ex, lambda: int(counts().get('rejected_not_for_us', 0)) >= 1,
                      15.0), counts()
    c = counts()
    assert int(c['relayed']) == 90 and int(c['rejected_not_for_us']) == 1, c
    assert int(c['rejected']) == 1 and int(c['commands']) == 0, c
    node.destroy_node()
    out = procs.output(bridge)
    warnings = re.findall(r'IMC input rejected from [\d.:]+ \((\w+),.*', out)
    assert warnings == ['not_for_us'], out[-3000:]
    assert 'SetThrusterActuation for system 0x3F02' in out


def test_another_system_announcing_our_id_or_name_is_an_error(procs, ros_context):
    """Two default sim_imc share IMC id 0x3F01: each says so (error log, /diagnostics ERROR).

    The second bridge has the first as a peer, so its Announce reaches the first from another
    address; then a system with another id but our name announces itself.
    """
    from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus
    port = free_ports(3)
    cport, port_b = port + 1, port + 2
    bridge = start_graph(procs, port, cport)
    # a second sim_imc's bridge (in /other) with the first as its peer
    start(procs, 'sim_imc', {'namespace': 'other', 'imc_bind': f'127.0.0.1:{port_b}',
                             'imc_peers': f'127.0.0.1:{port}'}, nodes=('imc_bridge',),
          params={'imc_bridge': {'announce_multicast': False, 'announce_hosts': ''}})
    node, ex = probe_node(ros_context, 'imc_conflict')
    diags = []
    node.create_subscription(DiagnosticArray, '/diagnostics', diags.append, 50)

    def errors():
        return [st for arr in diags for st in arr.status
                if st.name == 'usv/imc_bridge: IMC id conflict' or
                st.name == 'imc_bridge: IMC id conflict']
    assert spin_until(node, ex, errors, 30.0), [s.name for a in diags for s in a.status]
    st = errors()[-1]
    assert st.level == DiagnosticStatus.ERROR and f'127.0.0.1:{port_b}' in st.message, st
    assert wait_line(bridge.lines, f'at 127.0.0.1:{port_b} announces our IMC system id and '
                     'name', 10.0, (bridge,))
    # another id, our name: from a socket of the test
    ann = imcpy.Announce()
    ann.src, ann.dst, ann.sys_name, ann.services = 0x3F09, 0xFFFF, 'aerosim-usv', ''
    peer = ImcPeer(cport, port)
    peer.sock.sendto(ann.serialize(), peer.bridge)
    assert wait_line(bridge.lines, "'aerosim-usv' (0x3F09) at 127.0.0.1:", 10.0, (bridge,))
    assert spin_until(node, ex, lambda: f'127.0.0.1:{cport}' in errors()[-1].message, 10.0)
    c = port_counts(diags, 'IMC link')
    assert int(c['id_conflicts']) >= 2 and 'aerosim-usv (0x3F09)' in c['id_conflict'], c
    node.destroy_node()
    out = procs.output(bridge)
    # loud but not a flood: one error line per conflicting address within a minute
    assert len(re.findall(r'IMC conflict: .* at 127\.0\.0\.1:%d ' % port_b, out)) == 1, out
