"""MAVLink protocol core: the mission state machines and the command protocol.

The mission state machines (sender and receiver) with lost, duplicated and out-of-order
requests, uploads and clears refused with their MISSION_ACK, and the COMMAND_ACK of commands to
the bridge. Messages go through real pymavlink framing. The HIL messages: test_hil_messages; the
bridge's decisions: test_hil_bridge_core.
"""

import itertools
import math
import random

from mavlink_helpers import FC, SIM, wire
import pytest

from mavlink_bridge.core.mav import mavlink, new_mav
from mavlink_bridge.core.mission import (
    DONE,
    FAILED,
    SENDING,
    MissionServer,
    items_from_scenario,
)
from mavlink_bridge.fc.mission_client import MissionClient
from sim_core.scenario import load_scenario


@pytest.fixture
def sim():
    return new_mav(*SIM)


@pytest.fixture
def fc():
    return new_mav(*FC)


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
