"""The sim_imc graph (the world's boat, imc_bridge) over real UDP, with an imcpy client as peer.

The client plays DUNE/Neptus: it receives SimulatedState, EstimatedState, Announce and
Heartbeat, drives the boat with IMC actuation and guidance messages, and exercises leak,
acoustic and dynamics-parameter simulation; garbage on the port is counted and changes nothing.
"""

import math
import re
import time

import imcpy
import pytest

from sim_core.units import wrap_180 as wrap_deg

from conftest import (
    free_ports,
    probe_node,
    spin_until,
    wait_line,
)
from imc_graph_peer import (
    CLIENT_SYS,
    IDLE_U,
    ORIGIN,
    SYS,
    ImcPeer,
    start_graph,
)


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
