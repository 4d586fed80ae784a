"""MAVLink HIL protocol core: fields and units against the MAVLink tables, mixer, missions.

MAVLink HIL protocol core: message fields and units against the MAVLink common tables,
fields_updated groups, the mixer, and the mission state machines (sender and receiver) with
lost, duplicated and out-of-order requests. Messages go through real pymavlink framing.
"""

import itertools
import math
import random

import numpy as np
import pytest

from mavlink_bridge.core import hil
from mavlink_bridge.core.mav import mavlink, new_mav
from mavlink_bridge.core.mission import (
    DONE,
    FAILED,
    SENDING,
    MissionServer,
    items_from_scenario,
)
from mavlink_bridge.core.mixer import ActuatorError, Mixer
from mavlink_bridge.fc.mission_client import MissionClient
from sim_core.clock import SimState
from sim_core.errors import ConfigError
from sim_core.geodesy import GeoOrigin
from sim_core.scenario import load_scenario
from sim_sensors.core.gnss import GnssFix
from sim_sensors.core.suite import SensorSample

SIM = (51, 25)
FC = (1, 1)


def wire(msg, sender):
    """Pack with the sender's ids and parse back with a fresh MAVLink 2 parser."""
    data = msg.pack(sender)
    rx = new_mav(*FC)
    (out,) = rx.parse_buffer(data)
    assert data[0] == 0xFD   # MAVLink 2 frame
    return out


@pytest.fixture
def sim():
    return new_mav(*SIM)


@pytest.fixture
def fc():
    return new_mav(*FC)


def test_heartbeat_per_state(sim):
    cases = {SimState.RUNNING: (mavlink.MAV_STATE_ACTIVE, 136),
             SimState.PAUSED: (mavlink.MAV_STATE_STANDBY, mavlink.MAV_MODE_FLAG_GUIDED_ENABLED),
             SimState.STOPPED: (mavlink.MAV_STATE_POWEROFF, 0)}
    for state, (status, mode) in cases.items():
        m = wire(hil.heartbeat(sim, state), sim)
        assert (m.type, m.autopilot) == (0, 8)     # GENERIC, INVALID
        assert (m.system_status, m.base_mode) == (status, mode)
        assert (m.get_srcSystem(), m.get_srcComponent()) == SIM
    assert mavlink.MAV_STATE_ACTIVE == 4 and mavlink.MAV_STATE_STANDBY == 3
    assert mavlink.MAV_STATE_POWEROFF == 7


def test_home_position_units(sim):
    o = GeoOrigin(47.397742, 8.545594, 488.0)
    m = wire(hil.home_position(sim, o), sim)
    assert m.latitude == 473977420 and m.longitude == 85455940
    assert m.altitude == 488000                  # mm
    assert (m.x, m.y, m.z) == (0.0, 0.0, 0.0)
    assert list(m.q) == [1.0, 0.0, 0.0, 0.0]


def sample(imu=True, mag_new=False, baro=None):
    f = np.array([0.1, 0.2, 9.81])               # FLU
    w = np.array([0.01, 0.02, 0.03])
    return SensorSample(4000, (f, w) if imu else None, np.array([2e-5, 1e-6, -4.3e-5]),
                        mag_new, baro, [])


def test_hil_sensor_frames_units_and_groups(sim):
    enc = hil.HilSensorEncoder()
    m = wire(enc.encode(sim, sample(), 4000), sim)
    assert m.time_usec == 4000
    assert m.fields_updated == 0x7 | 0x38           # ACCEL | GYRO only
    # FLU -> FRD: y and z negated; at rest z reads -g
    assert (m.xacc, m.yacc, m.zacc) == pytest.approx((0.1, -0.2, -9.81), abs=1e-6)
    assert (m.xgyro, m.ygyro, m.zgyro) == pytest.approx((0.01, -0.02, -0.03), abs=1e-7)
    assert m.id == 0
    m = wire(enc.encode(sim, sample(mag_new=True, baro=(101325.0, 288.15, 0.0)), 8000), sim)
    assert m.fields_updated == 0x7 | 0x38 | 0x1C0 | 0x1A00
    assert (m.xmag, m.ymag, m.zmag) == pytest.approx((0.2, -0.01, 0.43), abs=1e-6)   # gauss
    assert m.abs_pressure == pytest.approx(1013.25)     # hPa
    assert m.temperature == pytest.approx(15.0)         # degC
    assert m.pressure_alt == pytest.approx(0.0)
    assert m.diff_pressure == 0.0
    assert not m.fields_updated & 0x400                 # no DIFF_PRESSURE
    # the next message without new mag/baro keeps the values but does not flag them
    m = wire(enc.encode(sim, sample(), 12000), sim)
    assert m.fields_updated == 0x3F and m.abs_pressure == pytest.approx(1013.25)


def test_hil_gps_units(sim):
    fix = GnssFix(100_000_000, 47.5, 8.5, 500.25, (3.0, 4.0, -1.0), 3, 0.3, 0.5, 12)
    m = wire(hil.hil_gps(sim, fix, 1_700_000_000_000_000), sim)
    assert m.time_usec == 1_700_000_000_000_000
    assert (m.lat, m.lon, m.alt) == (475000000, 85000000, 500250)
    assert (m.eph, m.epv) == (30, 50)                  # cm
    assert (m.vn, m.ve, m.vd) == (400, 300, 100)       # cm/s NED from ENU (3, 4, -1)
    assert m.vel == 500
    assert m.cog == round(math.degrees(math.atan2(3.0, 4.0)) * 100)
    assert m.fix_type == 3 and m.satellites_visible >= 6


def test_hil_state_quaternion_ground_truth(sim):
    o = GeoOrigin(47.0, 8.0, 400.0)
    # heading north (ENU yaw 90 deg), 2 m up, flying north at 5 m/s
    q = (math.cos(math.pi / 4), 0.0, 0.0, math.sin(math.pi / 4))
    m = wire(hil.hil_state_quaternion(sim, 1000, o, (0.0, 0.0, 2.0), (0.0, 5.0, 0.0), q,
                                      (0.0, 0.0, 0.0), (0.0, 0.0, 0.1), 9.80665), sim)
    assert list(m.attitude_quaternion) == pytest.approx([1.0, 0.0, 0.0, 0.0], abs=1e-6)
    assert m.yawspeed == pytest.approx(-0.1)            # FLU z up -> FRD z down
    assert (m.vx, m.vy, m.vz) == (500, 0, 0)
    assert m.alt == 402000 and m.lat == 470000000


def test_mixer_default_and_table():
    assert Mixer().throttles([0.1, 0.2, 0.3, 0.4] + [9.0] * 12) == (0.1, 0.2, 0.3, 0.4)
    assert Mixer((2, 0, 3, 1)).throttles([0.1, 0.2, 0.3, 0.4]) == (0.3, 0.1, 0.4, 0.2)
    assert Mixer().throttles([-1.0, 0.5, 1.0, 0.0]) == (0.0, 0.5, 1.0, 0.0)   # PX4 disarmed -1
    for bad in ([math.nan, 0, 0, 0], [0, math.inf, 0, 0], [0, 0, 1.5, 0], [0, 0, 0, -2], [0.5]):
        with pytest.raises(ActuatorError):
            Mixer().throttles(bad)
    for table in ((0, 1, 2), (0, 0, 1, 2), (0, 1, 2, 4)):
        with pytest.raises(ConfigError):
            Mixer(table)


def test_items_from_scenario():
    sc = load_scenario('default')
    items = items_from_scenario(sc.mission)
    assert [i.command for i in items] == [22, 16, 16, 16, 21]
    assert all(i.frame == 6 for i in items)           # GLOBAL_RELATIVE_ALT_INT
    assert items[1].x == 473980120 and items[1].y == 85455940 and items[1].z == 10.0
    assert items[0].x == 473977420                      # takeoff at the origin
    assert math.isnan(items[4].param4)


class Net:
    """Moves messages between a MissionServer and a MissionClient through real framing."""

    def __init__(self, n_items=5):
        sc = load_scenario('default')
        self.sim, self.fc = new_mav(*SIM), new_mav(*FC)
        self.server = MissionServer(items_from_scenario(sc.mission)[:n_items], 1.5, 5)
        self.client = MissionClient(1.5, 5)

    def to_fc(self, msgs, now, drop=lambda m: False):
        out = []
        for m in msgs:
            m = wire(m, self.sim)
            if drop(m):
                continue
            t = m.get_type()
            if t == 'MISSION_COUNT':
                out += self.client.on_count(self.fc, m, now)
            elif t == 'MISSION_ITEM_INT':
                out += self.client.on_item(self.fc, m, now)
        return out

    def to_sim(self, msgs, now, drop=lambda m: False):
        out = []
        for m in msgs:
            m = wire(m, self.fc)
            if drop(m):
                continue
            t = m.get_type()
            if t in ('MISSION_REQUEST_INT', 'MISSION_REQUEST'):
                out += self.server.on_request(self.sim, m, now)
            elif t == 'MISSION_ACK':
                self.server.on_ack(m)
            elif t == 'MISSION_REQUEST_LIST':
                out += self.server.on_request_list(self.sim, m, now)
        return out


def run_transfer(net, drop_fc=lambda m: False, drop_sim=lambda m: False, start=True):
    now = 0.0
    down = net.server.start(net.sim, *FC, now) if start else []
    up = [] if start else net.client.request_list(net.fc, SIM, now)
    for _ in range(2000):
        up += net.to_fc(down, now, drop_fc)
        down = net.to_sim(up, now, drop_sim)
        up = []
        now += 0.1
        down += net.server.poll(now)
        up += net.client.poll(net.fc, now)
        if net.server.state in (DONE, FAILED) and not down and not up:
            break
    return net


def test_mission_upload_clean():
    net = run_transfer(Net())
    assert net.server.state == DONE and net.client.complete
    assert [m.seq for m in net.client.items] == [0, 1, 2, 3, 4]
    assert [m.command for m in net.client.items] == [22, 16, 16, 16, 21]
    assert net.server.resent == 0 and net.client.rerequests == 0


def test_mission_upload_with_losses_recovers_by_retries():
    lost = {'count': 1, 'item2': 1, 'req3': 2, 'ack': 1}

    def drop_fc(m):
        t = m.get_type()
        if t == 'MISSION_COUNT' and lost['count']:
            lost['count'] -= 1
            return True
        if t == 'MISSION_ITEM_INT' and m.seq == 2 and lost['item2']:
            lost['item2'] -= 1
            return True
        return False

    def drop_sim(m):
        t = m.get_type()
        if t == 'MISSION_REQUEST_INT' and m.seq == 3 and lost['req3']:
            lost['req3'] -= 1
            return True
        if t == 'MISSION_ACK' and lost['ack']:
            lost['ack'] -= 1
            return True
        return False
    net = run_transfer(Net(), drop_fc, drop_sim)
    assert net.client.complete and [m.seq for m in net.client.items] == [0, 1, 2, 3, 4]
    assert net.server.resent >= 1          # the lost count was re-sent after the timeout
    assert net.server.rerequests >= 1      # the lost item was requested again
    # the lost ACK: the server re-sent the last item and the client ACKed it again
    assert net.server.state == DONE, net.server.result


def test_mission_server_ignores_an_early_accepted_ack():
    """An ACCEPTED ACK before the last item (a late ACK of an earlier transfer) is ignored."""
    net = Net()
    net.server.start(net.sim, *FC, 0.0)
    ack = wire(net.fc.mission_ack_encode(*SIM, mavlink.MAV_MISSION_ACCEPTED, 0), net.fc)
    assert net.server.on_ack(ack) is None and net.server.state != DONE
    net = run_transfer(net, start=False)
    assert net.server.state == DONE and net.client.complete


def lossy_transfer(seed, loss, max_delay_s=0.05, n_items=5):
    """One mission upload through a lossy, reordering link.

    Each message is dropped with probability loss and delayed by U(0, max_delay_s), so
    messages overtake each other.

    Returns the Net when both ends stopped (or after 60 s of simulated time).
    """
    rng = random.Random(seed)
    net = Net(n_items)
    now, tick = 0.0, 0.01
    flight = []                                  # (arrival time, order, to_fc, message)
    order = itertools.count()

    def send(msgs, to_fc):
        for m in msgs:
            if rng.random() >= loss:
                flight.append((now + rng.uniform(0.0, max_delay_s), next(order), to_fc, m))
    send(net.server.start(net.sim, *FC, now), True)
    while now < 60.0:
        flight.sort(key=lambda f: (f[0], f[1]))
        while flight and flight[0][0] <= now:
            _t, _k, to_fc, m = flight.pop(0)
            if to_fc:
                send(net.to_fc([m], now), False)
            else:
                send(net.to_sim([m], now), True)
        now += tick
        send(net.server.poll(now), True)
        send(net.client.poll(net.fc, now), False)
        if net.server.state in (DONE, FAILED) and not flight:
            break
    return net


def test_mission_upload_under_10_percent_loss_and_reordering():
    """200 uploads (fixed seeds) over a link losing 10 % each way and reordering."""
    done = 0
    for seed in range(200):
        net = lossy_transfer(seed, 0.10)
        ok = net.server.state == DONE and net.client.complete
        if ok:
            assert [m.seq for m in net.client.items] == [0, 1, 2, 3, 4]
            assert [m.command for m in net.client.items] == [22, 16, 16, 16, 21]
        done += ok
    assert done >= 198, f'{done} of 200 uploads completed'


def test_mission_out_of_sequence_and_duplicates(sim, fc):
    server = MissionServer(items_from_scenario(load_scenario('default').mission))
    server.start(sim, *FC, 0.0)

    def req(seq, mav=fc, kind='int'):
        enc = mav.mission_request_int_encode if kind == 'int' else mav.mission_request_encode
        return wire(enc(*SIM, seq, 0), mav)
    assert server.on_request(sim, req(3), 0.1) == []           # ahead: ignored
    assert server.out_of_sequence == 1
    (it0,) = server.on_request(sim, req(0), 0.2)
    (dup,) = server.on_request(sim, req(0), 0.3)               # duplicate: answered again
    assert it0.seq == dup.seq == 0 and server.rerequests == 1
    (it1,) = server.on_request(sim, req(1, kind='legacy'), 0.4)   # deprecated MISSION_REQUEST
    assert it1.get_type() == 'MISSION_ITEM_INT' and it1.seq == 1
    other = new_mav(7, 1)
    assert server.on_request(sim, req(2, mav=other), 0.5) == []  # not the transfer's peer
    assert server.out_of_sequence == 2
    # an item the mission does not have: MISSION_ACK INVALID_SEQUENCE, to whoever asks; from
    # the transfer's peer it ends the transfer (an error ends the operation)
    (nack,) = server.on_request(sim, req(5, mav=other), 0.55)
    assert (nack.get_type(), nack.type, nack.target_system) == ('MISSION_ACK', 13, 7)
    assert server.state == SENDING
    (nack,) = server.on_request(sim, req(99), 0.6)
    assert (nack.type, nack.target_system, nack.target_component) == (13, *FC)
    assert server.state == FAILED and 'INVALID_SEQUENCE' in server.result
    assert server.refused == 2 and server.out_of_sequence == 2


def test_mission_uploads_and_clears_are_answered_not_ignored(sim):
    """The simulator is the mission's source: each upload or clear gets its MISSION_ACK."""
    server = MissionServer(items_from_scenario(load_scenario('default').mission))
    gcs = new_mav(255, 190)
    M, F, R, ALL = (mavlink.MAV_MISSION_TYPE_MISSION, mavlink.MAV_MISSION_TYPE_FENCE,
                    mavlink.MAV_MISSION_TYPE_RALLY, mavlink.MAV_MISSION_TYPE_ALL)
    cases = [(gcs.mission_count_encode(*SIM, 3, M), server.on_count, 'DENIED'),
             (gcs.mission_count_encode(*SIM, 0, M), server.on_count, 'DENIED'),
             (gcs.mission_count_encode(*SIM, 2, F), server.on_count, 'NO_SPACE'),
             (gcs.mission_count_encode(*SIM, 0, R), server.on_count, 'ACCEPTED'),
             (gcs.mission_count_encode(*SIM, 1, 7), server.on_count, 'INVALID'),
             (gcs.mission_clear_all_encode(*SIM, M), server.on_clear_all, 'DENIED'),
             (gcs.mission_clear_all_encode(*SIM, ALL), server.on_clear_all, 'DENIED'),
             (gcs.mission_clear_all_encode(*SIM, F), server.on_clear_all, 'ACCEPTED')]
    for msg, handler, want in cases:
        m = wire(msg, gcs)
        (ack,) = handler(sim, m)
        assert ack.get_type() == 'MISSION_ACK', ack
        assert mavlink.enums['MAV_MISSION_RESULT'][ack.type].name == f'MAV_MISSION_{want}'
        assert (ack.target_system, ack.target_component) == (255, 190)
        assert ack.mission_type == m.mission_type
    assert server.refused == 6 and len(server.items) == 5 and server.state == 'idle'
    lines = list(server.events)
    assert any('upload of 3 items (type 0) from 255:190: answered MAV_MISSION_DENIED' in e
               for e in lines), lines
    # said once per peer and kind: an insisting client is counted, not logged again
    server.events.clear()
    server.on_count(sim, wire(gcs.mission_count_encode(*SIM, 3, M), gcs))
    assert server.events == [] and server.refused == 7


def test_commands_to_the_bridge_get_their_command_ack():
    """COMMAND_LONG / COMMAND_INT for us: ACK with a result; others' not ours to answer."""
    from mavlink_bridge.core import commands
    sim, gcs = new_mav(51, 1), new_mav(255, 190)
    home = wire(sim.home_position_encode(1, 2, 3, 0, 0, 0, [1, 0, 0, 0], 0, 0, 0), sim)
    offers = {mavlink.MAVLINK_MSG_ID_HOME_POSITION: lambda: home}

    def ask(cmd, p1=0.0, kind='long', offers=offers):
        if kind == 'long':
            m = gcs.command_long_encode(51, 1, cmd, 0, p1, 0, 0, 0, 0, 0, 0)
        else:
            m = gcs.command_int_encode(51, 1, 0, cmd, 0, 0, p1, 0, 0, 0, 0, 0, 0)
        out, result = commands.answer(sim, wire(m, gcs), offers)
        ack = out[-1]
        assert ack.get_type() == 'COMMAND_ACK' and ack.command == cmd and ack.result == result
        assert (ack.target_system, ack.target_component) == (255, 190)
        return [o.get_type() for o in out], result
    assert ask(mavlink.MAV_CMD_DO_SET_MODE) == (['COMMAND_ACK'], mavlink.MAV_RESULT_UNSUPPORTED)
    assert ask(mavlink.MAV_CMD_NAV_RETURN_TO_LAUNCH, kind='int') == (
        ['COMMAND_ACK'], mavlink.MAV_RESULT_UNSUPPORTED)
    home_id = float(mavlink.MAVLINK_MSG_ID_HOME_POSITION)
    assert ask(mavlink.MAV_CMD_REQUEST_MESSAGE, home_id) == (
        ['HOME_POSITION', 'COMMAND_ACK'], mavlink.MAV_RESULT_ACCEPTED)
    assert ask(mavlink.MAV_CMD_GET_HOME_POSITION) == (
        ['HOME_POSITION', 'COMMAND_ACK'], mavlink.MAV_RESULT_ACCEPTED)
    assert ask(mavlink.MAV_CMD_REQUEST_MESSAGE, 30.0) == (['COMMAND_ACK'],
                                                          mavlink.MAV_RESULT_DENIED)
    assert ask(mavlink.MAV_CMD_REQUEST_MESSAGE, home_id, offers={}) == (
        ['COMMAND_ACK'], mavlink.MAV_RESULT_DENIED)
    # addressed to us: our system, our component or all (PX4's evaluate_target_ok)
    for target, ours in (((51, 1), True), ((51, 0), True), ((51, 25), False), ((0, 0), False),
                         ((1, 1), False)):
        m = wire(gcs.command_long_encode(*target, 176, 0, 0, 0, 0, 0, 0, 0, 0), gcs)
        assert commands.for_us(m, (51, 1)) == ours, target


def test_mission_timeout_fails_after_retries(sim):
    server = MissionServer(items_from_scenario(load_scenario('default').mission), 1.5, 5)
    server.start(sim, *FC, 0.0)
    sent = 0
    t = 0.0
    while server.state != FAILED and t < 100.0:
        t += 0.05
        sent += len(server.poll(t))
    assert sent == 5
    assert 9.0 <= t <= 9.4                  # 1 + 5 attempts of 1.5 s (0.05 s polling)
    assert 'timed out' in server.result


def test_mission_download_by_request_list():
    net = run_transfer(Net(), start=False)
    assert net.server.state == DONE and net.client.complete
    assert len(net.client.items) == 5


def test_request_list_for_fence_answers_empty(sim, fc):
    server = MissionServer(items_from_scenario(load_scenario('default').mission))
    m = wire(fc.mission_request_list_encode(*SIM, mavlink.MAV_MISSION_TYPE_FENCE), fc)
    (count,) = server.on_request_list(sim, m, 0.0)
    assert count.count == 0 and count.mission_type == mavlink.MAV_MISSION_TYPE_FENCE


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
