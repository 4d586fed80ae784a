"""PX4 v1.16's mission manager and commander against our bridge's cores, frame by frame.

The PX4 stand-in is px4_sitl.py, written from PX4's own source (see its docstring and its
modules' for the files and functions it follows). These pure tests drive its mission manager
(px4_mission) and commander (px4_commander) with our bridge's MissionServer and AutoStart
through real pymavlink frames; no process, no socket traffic.
"""


from mavlink_bridge.core.autostart import FAILED, STARTED, AutoStart
from mavlink_bridge.core.mav import mavlink, new_mav, pack
from mavlink_bridge.core.mission import DONE, MissionServer, items_from_scenario
from mavlink_bridge.core.mission import FAILED as MISSION_FAILED
from sim_core.scenario import MissionItem

from conftest import free_ports
from px4_sitl import RETRY_US, MissionManager, Px4Sitl


def wire(msg, sender, receiver):
    """Return msg as the receiver decodes it after the sender framed it (real bytes)."""
    (m,) = receiver.parse_buffer(pack(sender, msg))
    return m


class Upload:
    """Our MissionServer (bridge side) and PX4's MissionManager, wired frame by frame."""

    def __init__(self, mission):
        self.sim, self.px4 = new_mav(51, 1), new_mav(1, 1)
        self.server = MissionServer(items_from_scenario(mission), timeout_s=1.0, retries=3)
        self.said = []
        self.mm = MissionManager(1, lambda sev, text: self.said.append(text))
        self.px4_sent = []

    def to_px4(self, msgs, now_us):
        out = []
        for msg in msgs:
            m = wire(msg, self.sim, self.px4)
            if m.get_type() == 'MISSION_COUNT':
                out += self.mm.on_count(self.px4, m, now_us)
            else:
                out += self.mm.on_item(self.px4, m, now_us)
        self.px4_sent += [o.get_type() for o in out]
        return out

    def to_sim(self, msgs):
        out = []
        for msg in msgs:
            m = wire(msg, self.px4, self.sim)
            if m.get_type() == 'MISSION_ACK':
                self.server.on_ack(m)
            else:
                out += self.server.on_request(self.sim, m, 0.0)
        return out

    def run(self, now_us=0):
        msgs = self.server.start(self.sim, 1, 1, 0.0)
        while msgs:
            msgs = self.to_sim(self.to_px4(msgs, now_us))


MISSION = [MissionItem('takeoff', 47.3977, 8.5456, 5.0),
           MissionItem('waypoint', 47.3979, 8.5456, 5.0, hold_s=1.0, acceptance_radius_m=2.0),
           MissionItem('rtl', 0.0, 0.0, 0.0)]


def test_px4s_mission_manager_takes_our_upload_and_switches_to_int_mode():
    up = Upload(MISSION)
    up.run()
    assert up.server.state == DONE, (up.server.result, up.said)
    # a fresh PX4 instance asks in float mode first, then in int mode (our answer is an
    # ITEM_INT): MISSION_REQUEST, MISSION_REQUEST_INT, ..., MISSION_ACK
    assert up.px4_sent == ['MISSION_REQUEST', 'MISSION_REQUEST_INT', 'MISSION_REQUEST_INT',
                           'MISSION_ACK']
    got = up.mm.mission
    assert [i.command for i in got] == [22, 16, 20]
    assert got[1].x == 473979000 and got[1].y == 85456000 and got[1].z == 5.0
    assert (got[1].param1, got[1].param2) == (1.0, 2.0)
    assert got[2].frame == mavlink.MAV_FRAME_MISSION      # RTL: no position, mission frame


def test_px4_refuses_an_rtl_in_a_global_frame_and_ends_the_transfer():
    up = Upload(MISSION)
    # the frame we sent before (PX4: MAV_MISSION_UNSUPPORTED, parse_mavlink_mission_item)
    up.server.items[2] = up.server.items[2].__class__(
        **{**up.server.items[2].__dict__, 'frame': mavlink.MAV_FRAME_GLOBAL_RELATIVE_ALT_INT})
    up.run()
    assert up.server.state == MISSION_FAILED
    assert 'MAV_MISSION_UNSUPPORTED' in up.server.result
    assert 'IGN MISSION_ITEM: Invalid item' in up.said and up.mm.state == 'idle'


def test_px4_re_requests_on_its_clock_acks_a_repeated_last_item_and_gives_up_after_5_s():
    up = Upload(MISSION)
    count = up.server.start(up.sim, 1, 1, 0.0)
    (req,) = up.to_px4(count, 0)
    assert req.get_type() == 'MISSION_REQUEST' and req.seq == 0
    assert up.mm.tick(up.px4, RETRY_US) == []                 # not yet: 250 ms exactly
    (again,) = up.mm.tick(up.px4, RETRY_US + 1)                # then the same request again
    assert again.get_type() == 'MISSION_REQUEST' and again.seq == 0
    # 5 s without a message: the next loop after a re-request aborts (PX4's send() order)
    assert up.mm.tick(up.px4, 5_000_001)[0].seq == 0
    assert up.mm.tick(up.px4, 5_004_000) == []
    assert up.mm.state == 'idle' and 'Operation timeout' in up.said
    # a whole transfer, then the last item once more (our side did not get the ACK)
    up2 = Upload(MISSION)
    up2.run()
    last = up2.server.items[-1]
    item = up2.sim.mission_item_int_encode(1, 1, last.seq, last.frame, last.command, 0, 1,
                                           last.param1, last.param2, last.param3, last.param4,
                                           last.x, last.y, last.z, 0)
    (ack,) = up2.to_px4([item], 10)
    assert ack.get_type() == 'MISSION_ACK' and ack.type == mavlink.MAV_MISSION_ACCEPTED


def _px4_commander():
    """The PX4 stand-in without its sockets' traffic: commander and mission manager only."""
    px4 = Px4Sitl(0, 0, 0)
    px4._udp_send = lambda *msgs: None
    return px4


def _ack_of(px4, sim, cmd):
    return wire(px4._command(wire(cmd, sim, px4.gcs)), px4.gcs, sim)


def test_autostart_follows_px4s_commander_answers():
    px4 = _px4_commander()
    sim = new_mav(51, 1)
    auto = AutoStart((1, 1), item_count=3, retry_s=1.0, timeout_s=10.0)
    # not ready yet: nothing is sent before the mission is accepted and the FC says STANDBY
    auto.heartbeat(wire(px4._heartbeat(), px4.gcs, sim))
    assert auto.poll(sim, 0.0) == []
    auto.mission_accepted()
    assert auto.poll(sim, 0.1) == []                      # UNINIT: checks not passed
    # MISSION_START without a mission: PX4 denies it (and says why)
    start = sim.command_long_encode(1, 1, mavlink.MAV_CMD_MISSION_START, 0, 0, 2, 0, 0, 0, 0, 0)
    ack = _ack_of(px4, sim, start)
    assert ack.result == mavlink.MAV_RESULT_DENIED
    assert 'Mission start denied! No valid mission' in px4.log
    # arming before the pre-flight checks pass: TEMPORARILY_REJECTED; the request is retried
    px4.ap._ready_since, px4.ap._last_us = 0.0, 0
    up = Upload(MISSION)
    up.mm = px4.mm
    up.run()
    assert px4.mm.mission
    px4._new_mission()                  # the navigator's check of the new mission
    assert px4.mission_valid
    px4.ap._ready_since, px4.ap._last_us = 0.0, 10_000_000     # ready (settled 10 s)
    hb = wire(px4._heartbeat(), px4.gcs, sim)
    assert hb.system_status == mavlink.MAV_STATE_STANDBY
    auto.heartbeat(hb)
    (arm,) = auto.poll(sim, 1.0)
    assert arm.command == mavlink.MAV_CMD_COMPONENT_ARM_DISARM and arm.param1 == 1.0
    assert auto.poll(sim, 1.5) == []                      # waits for the ACK (retry_s)
    (arm2,) = auto.poll(sim, 2.0)                         # no ACK: again, confirmation + 1
    assert arm2.confirmation == arm.confirmation + 1
    auto.command_ack(_ack_of(px4, sim, arm2), 2.0)
    assert px4.armed
    (start,) = auto.poll(sim, 2.0)
    assert start.command == mavlink.MAV_CMD_MISSION_START and start.param2 == 2.0
    ack = _ack_of(px4, sim, start)
    assert ack.result == mavlink.MAV_RESULT_ACCEPTED
    auto.command_ack(ack, 2.1)
    assert auto.state == STARTED and px4.sub_mode == 4    # AUTO_MISSION


def test_px4_says_statustext_only_where_a_ground_station_is():
    """STATUSTEXT.hpp: sent only on a link with a GCS HEARTBEAT within 3 s; the event always."""
    px4 = Px4Sitl(0, 0, 0, gcs_port=free_ports(1), gcs_remote=free_ports(1))
    sent = {link.name: [] for link in px4.links}
    for link in px4.links:
        link._out = lambda data, name=link.name: sent[name].append(data)
    px4.say(mavlink.MAV_SEVERITY_INFO, 'hello', 'mission_execute')
    texts = {n: [m.get_type() for d in v for m in new_mav(51, 1).parse_buffer(d) or []]
             for n, v in sent.items()}
    assert texts == {'payload': ['UNKNOWN_410'], 'gcs': ['UNKNOWN_410']}
    gcs = px4.links[1]
    gcs.gcs_heard_us = px4.now_us = 10_000_000
    px4.say(mavlink.MAV_SEVERITY_INFO, 'hello again', 'mission_execute')
    assert px4.counts['statustext'] == 1
    px4.now_us = 13_000_001                 # 3 s later: the GCS is gone again
    px4.say(mavlink.MAV_SEVERITY_INFO, 'and again', 'mission_execute')
    assert px4.counts['statustext'] == 1 and px4.counts['events'] == 3


def test_px4_refuses_to_arm_in_mission_mode_without_a_mission_and_autostart_gives_up():
    px4 = _px4_commander()
    sim = new_mav(51, 1)
    px4.ap._ready_since, px4.ap._last_us = 0.0, 10_000_000
    px4.sub_mode = 4                                      # the user switched to mission mode
    arm = sim.command_long_encode(1, 1, mavlink.MAV_CMD_COMPONENT_ARM_DISARM, 0, 1, 0, 0, 0, 0,
                                  0, 0)
    assert _ack_of(px4, sim, arm).result == mavlink.MAV_RESULT_TEMPORARILY_REJECTED
    assert not px4.armed
    auto = AutoStart((1, 1), item_count=0, retry_s=1.0, timeout_s=3.0, ready_s=1.0)
    auto.mission_accepted()
    auto.heartbeat(wire(px4._heartbeat(), px4.gcs, sim))
    t = 0.0
    while auto.state != FAILED and t < 10.0:
        for cmd in auto.poll(sim, t):
            auto.command_ack(_ack_of(px4, sim, cmd), t)
        t += 0.5
    assert auto.state == FAILED and t <= 4.5
    assert any('refused (TEMPORARILY_REJECTED)' in e for e in auto.events)
