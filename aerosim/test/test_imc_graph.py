"""The sim_imc graph (usv_node + imc_bridge) over real UDP, with an imcpy client as the peer.

The client plays DUNE/Neptus: it receives SimulatedState, EstimatedState, Announce and
Heartbeat, drives the boat with IMC actuation and guidance messages, and exercises leak,
acoustic and dynamics-parameter simulation; garbage on the port is counted and changes nothing.
"""

import math
import os
import re
import struct
import time

import imcpy
import pytest
from test_imc_codec import forged

from imc_bridge.core.codec import decode

from conftest import (
    DEADLINE_SCALE,
    UdpPeer,
    free_ports,
    port_counts,
    probe_node,
    spin_for,
    spin_until,
    wait_line,
)
from graph_start import start

SYS = 0x3F01
CLIENT_SYS = 0x0022
TIME_SCALE = 10.0
ORIGIN = (math.radians(41.185242), math.radians(-8.706139))


class ImcPeer(UdpPeer):
    """A UDP IMC endpoint played by the test with imcpy."""

    def __init__(self, port, bridge_port):
        super().__init__(port, bridge_port)
        self.last = {}

    def send(self, msg, dst=SYS):
        msg.src, msg.src_ent, msg.dst, msg.dst_ent = CLIENT_SYS, 3, dst, 0xFF
        self.sock.sendto(msg.serialize(), self.bridge)

    def recv(self, timeout_s):
        """Yield (message, datagram length) for timeout_s wall seconds."""
        for data in self.datagrams(timeout_s):
            m = decode(data)
            self.last[m.msg_name] = m
            yield m, len(data)

    def wait_for(self, name, timeout_s=10.0, pred=lambda m: True):
        for m, _ in self.recv(timeout_s):
            if m.msg_name == name and pred(m):
                return m
        raise AssertionError(f'no {name} within {timeout_s} s')

    def sim_time_after(self, seconds, timeout_s=30.0):
        """Wait until the SimulatedState timestamp moved seconds past its current value."""
        self.drain()
        t0 = self.wait_for('SimulatedState').timestamp
        return self.wait_for('SimulatedState', timeout_s, lambda m: m.timestamp >= t0 + seconds)


# u of an idle boat [m/s]: not 0 at sea state 2 (harbour): the hull's heave, up to 0.48 m/s,
# seen along the body x axis pitched by up to 1.75 deg (0.015 m/s)
IDLE_U = 0.03


def start_graph(procs, port, client_port, **bridge):
    """sim_imc's usv_node and imc_bridge (in /usv) as launched, on the test's ports; bridge.

    bridge: imc_bridge parameters on top of the test's.
    """
    # sim timestamps (the tests check the sample grid and acoustic delays on sim time);
    # no discovery traffic (test_imc_dune covers it, on ports of its own)
    params = {'simulated_state_rate_hz': 10.0, 'estimated_state_rate_hz': 5.0,
              'warn_period_s': 0.1, 'timestamps': 'sim', 'announce_multicast': False,
              'announce_hosts': ''}
    params.update(bridge)
    return start(procs, 'sim_imc', {'imc_bind': f'127.0.0.1:{port}',
                                    'imc_peers': f'127.0.0.1:{client_port}',
                                    'time_scale': TIME_SCALE},
                 nodes=('usv_node', 'imc_bridge'),
                 # /clock at 20 Hz (sim): 200 messages/s at 10x for the bridge
                 params={'usv_node': {'clock_rate_hz': 20.0}, 'imc_bridge': params})['imc_bridge']


def wrap_deg(a):
    return (a + 180.0) % 360.0 - 180.0


def test_state_presence_and_driving_the_boat_over_imc(procs):
    port = free_ports(2)
    cport = port + 1
    start_graph(procs, port, cport)
    peer = ImcPeer(cport, port)
    states, counts, t_wall = [], {}, None
    for m, n in peer.recv(25.0):
        counts[m.msg_name] = counts.get(m.msg_name, 0) + 1
        if m.msg_name == 'SimulatedState':
            assert n == 102                                   # the spec's message size
            states.append(m)
            t_wall = t_wall or time.monotonic()
        if t_wall and time.monotonic() - t_wall > 3.0:
            break
    assert len(states) > 20, counts
    s = states[-1]
    assert (s.src, s.src_ent, s.dst, s.dst_ent) == (SYS, 1, 0xFFFF, 0xFF)
    # heights are above the WGS-84 ellipsoid: the harbour origin at sea level, where the geoid
    # (EGM96) is 55.46 m above the ellipsoid
    assert (s.lat, s.lon) == pytest.approx(ORIGIN) and s.height == pytest.approx(55.46)
    # the harbour scenario's current: 0.1 m/s to the south; the idle boat drifts with it and
    # does not move through the water (DUNE reads u/v/w as water-relative)
    assert (s.svx, s.svy, s.svz) == pytest.approx((-0.1, 0.0, 0.0), abs=1e-6)
    assert abs(s.u) < IDLE_U and s.x < 0.0
    # the rate is in sim time: 10 Hz -> stamps on the 0.1 s grid of the 50 Hz steps (a state
    # the bridge missed under load moves a sample to the next step, never off the step grid)
    stamps = [round(m.timestamp / 0.02) for m in states]
    assert all(abs(m.timestamp - 0.02 * k) < 1e-6 for m, k in zip(states, stamps))
    steps = [b - a for a, b in zip(stamps, stamps[1:])]
    assert sorted(steps)[len(steps) // 2] == 5, steps      # 10 Hz on the 50 Hz step grid
    # the schedule is on sim time: one sample per 0.1 s slot, never two (a state the bridge
    # got late puts its sample later in the same slot; the next is back on the slot start)
    slots = [k // 5 for k in stamps]
    assert all(b > a for a, b in zip(slots, slots[1:])), stamps
    # Announce and Heartbeat at 1 Hz (wall), EstimatedState at half the SimulatedState rate
    assert 2 <= counts['Heartbeat'] <= 6 and 2 <= counts['Announce'] <= 6, counts
    ann = peer.last['Announce']
    assert ann.sys_name == 'aerosim-usv' and ann.sys_type == imcpy.SystemType.USV
    assert ann.services == f'imc+udp://127.0.0.1:{port}/'
    # the Announce and the state are of other moments: the hull heaves +-0.15 m (sea state 2)
    assert ann.height == pytest.approx(55.46 - s.z, abs=0.35)
    assert peer.last['EstimatedState'].height == pytest.approx(55.46)
    # EstimatedState at half the rate on sim time: half the 0.1 s slots spanned (a state the
    # bridge missed under load leaves a SimulatedState slot empty, not the sim time it spans)
    assert counts['EstimatedState'] == pytest.approx((slots[-1] - slots[0] + 1) / 2, abs=3)

    q = imcpy.EntityList()
    q.op = imcpy.EntityList.OperationEnum.QUERY
    peer.send(q)
    rep = peer.wait_for('EntityList')
    assert rep.op == imcpy.EntityList.OperationEnum.REPORT and rep.dst == CLIENT_SYS
    assert rep.list == ('Simulation Engine=1;Leak Sensor - Port Pontoon=2;'
                        'Leak Sensor - Starboard Pontoon=3')

    # guidance: 1.5 m/s heading east (DUNE's DesiredSpeed / DesiredHeading). Broadcast copies
    # (DUNE's telemetry) drive nothing at the actuator level in force at start; addressed to
    # us they switch the level to guidance
    ds, dh = imcpy.DesiredSpeed(), imcpy.DesiredHeading()
    ds.value, ds.speed_units = 1.5, imcpy.SpeedUnits.METERS_PS
    dh.value = math.pi / 2
    peer.send(ds, dst=0xFFFF)
    peer.send(dh, dst=0xFFF0)
    s = peer.sim_time_after(5.0)
    assert abs(s.u) < IDLE_U and s.psi == pytest.approx(0.0, abs=1e-6)   # ignored: still idle
    peer.send(ds)
    peer.send(dh)
    s = peer.sim_time_after(60.0)
    e = peer.wait_for('EstimatedState')
    assert abs(wrap_deg(math.degrees(e.psi) - 90.0)) < 2.0
    assert s.u == pytest.approx(1.5, abs=0.2)                 # through the water
    assert e.vy > 1.2 and e.y > 50.0                          # going east over ground

    # actuation, addressed to us: back to the actuator level. A positive rudder turns the bow
    # to port (DUNE's convention), so the yaw rate is negative (NED)
    th, sv = imcpy.SetThrusterActuation(), imcpy.SetServoPosition()
    th.id, th.value = 0, 0.6
    sv.id, sv.value = 0, 0.25
    peer.send(th)
    peer.send(sv)
    s = peer.sim_time_after(20.0)
    assert s.r < -0.04                                         # yaw rate to port (NED)
    # broadcast Desired* now are telemetry again: the boat keeps turning on its actuators
    peer.send(dh, dst=0xFFFF)
    s = peer.sim_time_after(10.0)
    assert s.r < -0.04


def test_leaks_acoustics_and_dynamics_parameters(procs, ros_context):
    from aerosim_msgs.msg import AcousticData, LeakState, SimStatus
    from aerosim_msgs.srv import SetPaused
    from sim_ros import qos
    from sim_ros.convert import time_ns
    port = free_ports(2)
    cport = port + 1
    # the remote modem 1500 m north of the origin
    bridge = start_graph(procs, port, cport, topside_position_enu=[0.0, 1500.0, 0.0],
                         acoustic_range_m=3000.0)
    peer = ImcPeer(cport, port)
    node, ex = probe_node(ros_context, 'imc_test', '/usv')
    leaks, rx = [], []
    node.create_subscription(LeakState, 'leaks', leaks.append, qos.LATCHED)
    node.create_subscription(AcousticData, 'acoustic/rx', rx.append, qos.COMMAND)
    peer.wait_for('SimulatedState', 30.0)
    assert spin_until(node, ex, lambda: leaks, 10.0)
    assert leaks[-1].leaking == [False, False]

    leak = imcpy.LeakSimulation()
    leak.op = imcpy.LeakSimulation.OperationEnum.ON
    leak.entities = 'Leak Sensor - Starboard Pontoon'
    peer.send(leak)
    try:
        rep = peer.wait_for('LeakSimulation')
    except AssertionError:
        raise AssertionError(procs.output(bridge)) from None
    assert rep.op == imcpy.LeakSimulation.OperationEnum.ON
    assert rep.entities == 'Leak Sensor - Starboard Pontoon' and rep.dst == CLIENT_SYS
    # DUNE's monitors and Neptus read the leak from our EntityState (entity 3: the second)
    st = peer.wait_for('EntityState', 10.0, lambda m: m.src_ent == 3)
    assert st.state == imcpy.EntityState.StateEnum.FAILURE
    assert st.description == 'leak detected' and st.dst == 0xFFFF
    assert spin_until(node, ex, lambda: leaks[-1].leaking == [False, True], 10.0)
    n_leaks = len(leaks)
    leak.entities = 'Bilge'                                   # unknown: refused, no change
    peer.send(leak)
    leak.op, leak.entities = imcpy.LeakSimulation.OperationEnum.OFF, ''
    peer.send(leak)                                           # all off
    rep = peer.wait_for('LeakSimulation')
    assert rep.op == imcpy.LeakSimulation.OperationEnum.OFF and rep.entities == ''
    assert spin_until(node, ex, lambda: leaks[-1].leaking == [False, False], 10.0)
    assert len(leaks) == n_leaks + 1                          # the refused one published nothing

    # PING: answered by the vehicle after the two-way travel time (2 x 1500 m / 1500 m/s).
    # The sim is paused while the ping goes in, so the bridge's (wall) latency does not move
    # its sim arrival time: the reply is stamped 2 s after the pause time.
    pause = node.create_client(SetPaused, '/sim/pause')
    assert pause.wait_for_service(timeout_sec=10.0)

    def set_paused(paused):
        fut = pause.call_async(SetPaused.Request(paused=paused))
        assert spin_until(node, ex, fut.done, 10.0) and fut.result().success

    # the pause time from the time source itself (SimStatus is published on every change):
    # reading it from the bridge's telemetry failed on a loaded machine (the socket held old
    # states, or none arrived in time)
    statuses = []
    node.create_subscription(SimStatus, '/sim/status', statuses.append, qos.LATCHED)
    set_paused(True)
    assert spin_until(node, ex, lambda: statuses and statuses[-1].state == SimStatus.PAUSED,
                      10.0)
    t_paused = time_ns(statuses[-1].sim_time) * 1e-9
    ping = imcpy.UASimulation()
    ping.type, ping.speed = imcpy.UASimulation.TypeEnum.PING, 100
    peer.send(ping)
    time.sleep(0.3)                                           # the bridge takes it, still paused
    set_paused(False)
    rep = peer.wait_for('UASimulation')
    assert rep.type == imcpy.UASimulation.TypeEnum.PING_REPLY
    assert (rep.src, rep.dst, rep.dst_ent) == (SYS, CLIENT_SYS, 3)
    # The ping arrives at the bridge's sim time, which the pause froze: not after the pause
    # time (no wall latency added). Its clock may lag the pause by the /clock messages it has
    # not processed yet: one period (0.05 s) on a quiet machine, more under load (0.12 s seen
    # with both cores busy), so that lag is bounded loosely. The reply leaves after the
    # two-way travel time of 2 s from the arrival, at the first bridge tick after it (<= 0.1 s
    # sample + 0.05 s).
    assert wait_line(bridge.lines, 'acoustic PING from', 10.0, (bridge,))
    out = ''.join(bridge.lines)          # the bridge runs on: not procs.output(), which stops it
    (t_arr,) = [float(x) for x in re.findall(r'acoustic PING from 0x0022 \(0 bytes\) at t = '
                                              r'([0-9.]+) s: queued', out)]
    assert t_paused - 1.0 <= t_arr <= t_paused + 0.001, out
    assert 2.0 - 0.001 <= rep.timestamp - t_arr <= 2.0 + 0.16, out
    # DATA: delivered to the vehicle's acoustic/rx after travel + 8 * 5 bits / 400 bit/s
    data = imcpy.UASimulation()
    data.type, data.speed, data.data = imcpy.UASimulation.TypeEnum.DATA, 400, b'hello'
    peer.send(data)
    assert spin_until(node, ex, lambda: rx, 15.0)
    d = rx[-1]
    assert bytes(d.data) == b'hello' and (d.src, d.dst) == (CLIENT_SYS, SYS)
    # the boat drifts south with the current (0.1 m/s): a little over 1500 m from the modem
    assert d.type == AcousticData.DATA and 1500.0 <= d.range_m < 1510.0
    assert d.delay_s == pytest.approx(d.range_m / 1500.0 + 40 / 400, abs=1e-9)

    # DynamicsSimParam: REQUEST -> REPORT; SET -> REPORT of the new gains; bad SET refused
    e = imcpy.DynamicsSimParam.ActionOnTheVehicleSimulationParametersEnum
    req = imcpy.DynamicsSimParam()
    req.op = e.REQUEST
    peer.send(req)
    rep = peer.wait_for('DynamicsSimParam')
    assert rep.op == e.REPORT and (rep.tas2acc_pgain, rep.bank2p_pgain) == (0.5,
                                                                             pytest.approx(0.8))
    req.op, req.tas2acc_pgain, req.bank2p_pgain = e.SET, 1.25, 0.5
    peer.send(req)
    rep = peer.wait_for('DynamicsSimParam')
    assert (rep.tas2acc_pgain, rep.bank2p_pgain) == (1.25, 0.5)
    req.tas2acc_pgain, req.bank2p_pgain = 50.0, 2.0             # the first outside [0.01, 10]
    peer.send(req)
    rep = peer.wait_for('DynamicsSimParam')
    assert (rep.tas2acc_pgain, rep.bank2p_pgain) == (1.25, 0.5)   # neither changed
    node.destroy_node()


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


def test_usv_node_rejects_garbage_commands_and_counts_them(procs, ros_context):
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
