"""The HIL bridge's decisions without ROS (HilBridge), and the lockstep step's time split.

HilBridge frames each step and takes the FC's answer to it, refuses strangers, garbage and bad
values by kind, takes the FC only from fc_address, and uploads the mission when the simulation
first runs; StepSplit divides a lockstep step between us, the send, the FC and the wait.
"""

import numpy as np

from mavlink_bridge.core.mav import mavlink, new_mav
from sim_core.clock import SimState
from sim_core.scenario import load_scenario


# --- HilBridge: the bridge node's decisions, without ROS --------------------------------------
def hil_bridge(**cfg):
    """A HilBridge on a UDP link of 127.0.0.1 (nothing listens at its remote)."""
    from mavlink_bridge.core.bridge import BridgeConfig, HilBridge
    from mavlink_bridge.core.endpoint import Endpoint
    from sim_core.link import UdpLink
    from sim_sensors.core.suite import SuiteConfig
    c = BridgeConfig(gps_utc_start='2026-11-22T12:00:00Z', **cfg)
    link = UdpLink(('127.0.0.1', 0), FC_AT)
    ep = Endpoint(link, c.system_id, c.component_id, 'HIL link', c.peer_timeout_s)
    return HilBridge(c, load_scenario('default'), SuiteConfig(), ep), ep


FC_AT = ('127.0.0.1', 9)    # hil_bridge()'s fc_address: the FC's frames come from there


def at_rest(t_ns):
    from sim_core.frames import VehicleSample
    z = np.zeros(3)
    return VehicleSample(t_ns, z, z, np.array([1.0, 0.0, 0.0, 0.0]), z, z)


def test_hil_bridge_frames_each_step_and_takes_the_answer_to_it():
    b, ep = hil_bridge()
    fc = new_mav(1, 1)
    controls = [0.5] * 4 + [0.0] * 12
    # an answer before any frame was sent answers nothing
    act = b.on_datagram(ep, fc.hil_actuator_controls_encode(0, controls, 129, 1).pack(fc),
                        FC_AT, 0.0)
    assert act.commands == [] and act.reject is None and b.count['ignored'] == 1
    b.on_sim_status(SimState.RUNNING, 0.0, 0.0)
    act = b.on_state(at_rest(4_000_000))
    sent = [m for _, msgs in act.sends for m in msgs]
    assert [m.get_type() for m in sent][:1] == ['HIL_SENSOR'] and sent[0].time_usec == 4000
    assert act.sample[1] == 4_000_000 and b.count['sensor'] == 1
    act = b.on_datagram(ep, fc.hil_actuator_controls_encode(4000, controls, 129, 1).pack(fc),
                        FC_AT, 0.1)
    assert act.commands == [((0.5, 0.5, 0.5, 0.5), 4_000_000)] and act.reject is None
    assert any('drives the motors' in text for _, text in act.logs)
    # the same state again is no new step: no frame
    assert b.on_state(at_rest(4_000_000)).sends == []


def test_hil_bridge_refuses_strangers_garbage_and_bad_values_with_their_kind():
    b, ep = hil_bridge()
    b.on_sim_status(SimState.RUNNING, 1.0, 0.0)
    b.on_state(at_rest(4_000_000))
    other = new_mav(7, 1)
    controls = [0.5] * 4 + [0.0] * 12
    act = b.on_datagram(ep, other.hil_actuator_controls_encode(4000, controls, 129, 1)
                        .pack(other), ('127.0.0.1', 5000), 0.1)
    assert act.commands == [] and act.reject[0] == 'peer' and '7:1' in act.reject[1]
    assert b.on_datagram(ep, b'\x00garbage', ('127.0.0.1', 5000), 0.1).reject[0] == 'undecodable'
    half = other.heartbeat_encode(2, 12, 0, 0, 3).pack(other)[:9]
    assert b.on_datagram(ep, half, ('127.0.0.1', 5000), 0.1).reject[0] == 'truncated'
    fc = new_mav(1, 1)
    bad = [float('nan')] * 4 + [0.0] * 12
    act = b.on_datagram(ep, fc.hil_actuator_controls_encode(4000, bad, 129, 1).pack(fc),
                        FC_AT, 0.2)
    # refused values still answer the step: the motors hold the last valid command (none: 0)
    assert act.reject[0] == 'value' and act.commands == [((0.0,) * 4, 4_000_000)]
    ping = other.mission_request_list_encode(99, 1)
    assert b.on_datagram(ep, ping.pack(other), ('127.0.0.1', 5000), 0.3).reject[0] == 'target'


def test_hil_bridge_takes_the_fc_only_from_fc_address_address_and_port():
    """fc_address pins the FC: its ids, actuators or an FC HEARTBEAT from elsewhere: refused."""
    b, ep = hil_bridge()
    b.on_sim_status(SimState.RUNNING, 1.0, 0.0)
    b.on_state(at_rest(4_000_000))
    fc, gcs = new_mav(1, 1), new_mav(255, 190)
    full = [1.0] * 4 + [0.0] * 12
    for addr in (('127.0.0.1', 5000), ('127.0.0.2', 9)):          # another port, another host
        act = b.on_datagram(ep, fc.hil_actuator_controls_encode(4000, full, 129, 1).pack(fc),
                            addr, 0.1)
        assert act.commands == [] and act.reject[0] == 'peer', act.reject
        assert f'at {addr[0]}:{addr[1]}' in act.reject[1] and '127.0.0.1:9 (fc_address)' in \
            act.reject[1]
        hb = fc.heartbeat_encode(mavlink.MAV_TYPE_QUADROTOR, mavlink.MAV_AUTOPILOT_PX4, 0, 0, 3)
        assert b.on_datagram(ep, hb.pack(fc), addr, 0.1).reject[0] == 'peer'
        ack = fc.mission_ack_encode(51, 1, 0, 0)           # nor does it speak for the FC
        assert b.on_datagram(ep, ack.pack(fc), addr, 0.1).reject[0] == 'peer'
    assert b.count['actuators'] == 0 and not ep.peers.active()
    assert b.mission.state == 'sending'
    # a ground station elsewhere is no FC: it is served (mission download)
    act = b.on_datagram(ep, gcs.mission_request_list_encode(51, 1).pack(gcs),
                        ('127.0.0.1', 5000), 0.2)
    assert act.reject is None
    # the FC itself, at fc_address, drives
    act = b.on_datagram(ep, fc.hil_actuator_controls_encode(4000, full, 129, 1).pack(fc),
                        FC_AT, 0.3)
    assert act.reject is None and act.commands == [((1.0,) * 4, 4_000_000)]
    # fc 0:0 (the first FC heard): an FC HEARTBEAT from elsewhere is not learned as the FC
    b, ep = hil_bridge(fc_system_id=0, fc_component_id=0)
    other = new_mav(7, 1)
    hb = other.heartbeat_encode(mavlink.MAV_TYPE_QUADROTOR, mavlink.MAV_AUTOPILOT_PX4, 0, 0, 3)
    assert b.on_datagram(ep, hb.pack(other), ('127.0.0.1', 5000), 0.1).reject[0] == 'peer'
    assert b.served.ids is None
    b.on_datagram(ep, hb.pack(other), FC_AT, 0.2)
    assert b.served.ids == (7, 1)
    # fc_address '' (reply to the first sender): nothing pinned, the FC known by its ids
    from mavlink_bridge.core.endpoint import Endpoint
    from sim_core.link import UdpLink
    free = Endpoint(UdpLink(('127.0.0.1', 0)), 51, 1, 'HIL link', 3.0)
    assert free.pinned is None and free.at_pin(('10.0.0.1', 1234))
    named = Endpoint(UdpLink(('127.0.0.1', 0), ('localhost', 9)), 51, 1, 'HIL link', 3.0)
    assert named.pinned == FC_AT and named.at_pin(FC_AT)
    for e in (free, named, ep):
        e.link.close()


def test_hil_bridge_uploads_the_mission_when_the_simulation_first_runs():
    b, ep = hil_bridge()
    act = b.on_sim_status(SimState.RUNNING, 1.0, 0.0)
    types = [m.get_type() for _, msgs in act.sends for m in msgs]
    assert types == ['MISSION_COUNT', 'HEARTBEAT']
    count = act.sends[0][1][0]
    assert count.count == len(b.mission.items) > 0 and count.target_system == 1
    assert b.on_sim_status(SimState.RUNNING, 1.0, 0.5).sends == []      # no change: nothing
    paused = b.on_sim_status(SimState.PAUSED, 1.0, 1.0)
    assert any('PAUSED' in text for _, text in paused.logs)


def test_the_step_split_adds_up_to_the_step():
    """StepSplit: ours + send + the FC's side + waited = the step, per step (µs)."""
    from mavlink_bridge.core.step_split import StepSplit
    sp = StepSplit()
    t = 100.0
    for _ in range(10):
        # an answer in at t: 80 µs of ours, a 30 µs send, 50 µs of topics after it; the FC's
        # answer reaches our socket 60 µs after the send and is read 20 µs after the topics
        t_in = t
        sp.sent(t_in + 80e-6, t_in + 110e-6)
        sp.answered(t_in, stamp=t_in - 70e-6 if sp.n else 0.0, t_done=t_in + 160e-6)
        t = t_in + 110e-6 + 60e-6 + 70e-6         # the next answer read
    # the first answer has no send before it; the 9 others each follow one
    assert sp.n == 10 and sp.stamped == 9 and sp.paired == 9
    text = sp.summary()
    assert 'ours 80 µs' in text and 'send 30 µs' in text
    assert "the FC's side 60 µs" in text and 'waited 70 µs' in text
    assert 'topics after the send 50 µs' in text
    # without kernel stamps: the FC's side and the wait as one figure
    sp2 = StepSplit()
    for k in range(3):
        sp2.sent(k + 80e-6, k + 110e-6)
        sp2.answered(k, 0.0, k + 160e-6)
    assert "the FC's side and our wait" in sp2.summary()
    assert StepSplit().summary() == 'no lockstep step measured'


def test_the_step_split_of_a_fleet_counts_ours_only_where_this_answer_sent_the_sensors():
    """A fleet's step runs when its last FC answered (ours was -110..-310 µs before).

    The other bridges' sensors were sent by that answer's thread before their own next
    answer arrived: those answers pair with the FC's side only.
    """
    from mavlink_bridge.core.step_split import StepSplit
    sp = StepSplit()
    t = 100.0
    for _ in range(10):
        sp.answered(t, 0.0, t + 5e-6)             # our FC answers first: the step waits
        sp.sent(t + 200e-6, t + 230e-6)            # the other vehicle's answer stepped it
        t += 500e-6
    assert sp.n == 0 and sp.paired == 8 and sp.summary() == 'no lockstep step measured'
    sp.sent(t + 80e-6, t + 100e-6)                 # now our answer completes the step: its
    sp.answered(t, 0.0, t + 150e-6)                # handling sends the sensors, then returns
    assert sp.n == 1 and 'ours 80 µs' in sp.summary()
