"""The FC's command side, pure: PX4's events, MAVLink FTP, parameters, autostart, liveness.

PX4's events and their texts, MAVLink FTP, parameter files, the autostart on the sim clock,
peers alive in sim time, the mission never sent to a flying FC.

The peer side is the PX4 stand-in's (px4_events, px4_params, px4_sitl), written from PX4's
sources independently of the bridge's receiving code: its own frame layouts and the CRC_EXTRA
values of PX4's generated headers.
"""

import lzma
import random
import struct

import px4_events
from px4_params import PARAMS, Params, feasibility
import pytest

from mavlink_bridge.core import ftp, mav_ext
from mavlink_bridge.core.autostart import ARMING, FAILED, STARTED, WAIT_READY, AutoStart
from mavlink_bridge.core.events import Formatter, Receiver, load_json
from mavlink_bridge.core.fc_params import (
    INT32,
    REAL32,
    Param,
    ParamUpload,
    load_params,
    parse_params,
)
from mavlink_bridge.core.fc_session import FcSession
from mavlink_bridge.core.fc_words import READY, FcWords
from mavlink_bridge.core.mav import mavlink, new_mav, pack
from mavlink_bridge.core.mission import DONE, items_from_scenario
from mavlink_bridge.core.peers import PeerTable
from sim_core.errors import ConfigError
from sim_core.scenario import load_scenario

from px4_sitl import ONBOARD_STREAMS, PAYLOAD_DATARATE, Item, Streams

PX4 = (1, 1)


def parsed(frames: bytes, receiver=None):
    """The messages a receiver (ours, 51:1) parses from frames."""
    rx = receiver or new_mav(51, 1)
    return [m for m in rx.parse_buffer(frames) or [] if m.get_type() != 'BAD_DATA']


def px4_event(sender, name, level='info', *args, sysid=1):
    """An EVENT frame of the stand-in (its own encoder), as the bridge's parser sees it."""
    body = sender.event(name, level, 1_000_000, *args)
    (m,) = parsed(px4_events.frame(410, body, 0, sysid, 1))
    return m


# --- the wire: messages pymavlink's dialect lacks ----------------------------------------------
def test_our_crc_extras_are_px4s_and_mavgens():
    """CRC_EXTRA as PX4 v1.16's generated headers say, and as pymavlink computes.

    EVENT 160, CURRENT_EVENT_SEQUENCE 106, REQUEST_EVENT 33, RESPONSE_EVENT_ERROR 77,
    COMPONENT_METADATA 182; the algorithm gives pymavlink's own values for messages it has.
    """
    assert {d.msgid: d.crc_extra for d in mav_ext.BY_ID.values()} == px4_events.CRC_EXTRA
    hb = mav_ext.MsgDef(0, 'HEARTBEAT', (
        ('type', 'uint8_t', 0), ('autopilot', 'uint8_t', 0), ('base_mode', 'uint8_t', 0),
        ('custom_mode', 'uint32_t', 0), ('system_status', 'uint8_t', 0),
        ('mavlink_version', 'uint8_t', 0)))
    assert hb.crc_extra == mavlink.MAVLink_heartbeat_message.crc_extra == 50
    ftp_def = mav_ext.MsgDef(110, 'FILE_TRANSFER_PROTOCOL', (
        ('target_network', 'uint8_t', 0), ('target_system', 'uint8_t', 0),
        ('target_component', 'uint8_t', 0), ('payload', 'uint8_t', 251)))
    assert ftp_def.crc_extra == mavlink.MAVLink_file_transfer_protocol_message.crc_extra
    # an ExtMessage frames as pymavlink does (same bytes for a message both know)
    a, b = new_mav(51, 1), new_mav(51, 1)
    ours = pack(a, mav_ext.ExtMessage(ftp_def, target_network=0, target_system=1,
                                      target_component=1, payload=bytes(range(40))))
    theirs = pack(b, b.file_transfer_protocol_encode(0, 1, 1, list(range(40)) + [0] * 211))
    assert ours == theirs


def test_px4s_event_frames_decode_and_garbage_does_not():
    sender = px4_events.EventSender(1)
    m = px4_event(sender, 'commander_armed_by', 'info', 4)
    assert m.get_type() == 'UNKNOWN_410'            # pymavlink's dialect lacks it
    assert mav_ext.source(m) == (1, 1) and m.get_srcSystem() == 0    # pymavlink leaves 0
    d = mav_ext.decode(m)
    assert d.get_type() == 'EVENT' and (d.sysid, d.compid) == PX4
    assert d.fields['id'] == px4_events.event_id('commander_armed_by')
    assert d.fields['sequence'] == sender.seq and d.fields['log_levels'] & 0x0F == 6
    assert d.fields['arguments'][:1] == b'\x04'
    # a flipped payload bit: the CRC with EVENT's CRC_EXTRA refuses it
    raw = bytearray(m.get_msgbuf())
    raw[14] ^= 0x01
    (bad,) = parsed(bytes(raw)) or [None]
    assert bad is None or mav_ext.decode(bad) is None
    rng = random.Random(7)
    for _ in range(300):                        # random frames of our ids: never a crash
        body = bytes(rng.randrange(256) for _ in range(rng.randrange(0, 60)))
        for mid in (397, 410, 411, 412, 413):
            for m in parsed(px4_events.frame(mid, body, 1, 1, 1)):
                d = mav_ext.decode(m)
                assert d is None or d.d.msgid == mid


# --- events: texts and the protocol ----------------------------------------------------------
def formatter():
    return Formatter(px4_events.metadata())


def test_the_formatter_renders_px4s_messages_with_their_arguments():
    f = formatter()
    eid = px4_events.event_id
    t = f.render(eid('commander_armed_by'), 6, px4_events.pack_args('commander_armed_by', 4))
    assert t.text == 'Armed by external command' and t.level == 6 and t.group == 'default'
    t = f.render(eid('navigator_mis_glide_slope_too_steep'), 3,
                 px4_events.pack_args('navigator_mis_glide_slope_too_steep', 5, 1))
    assert t.text == ('Mission rejected: the landing glide slope is steeper than the vehicle '
                      'setting of 5.1 degrees')
    t = f.render(eid('check_rc_dl_no_dllink'), 3, px4_events.pack_args(
        'check_rc_dl_no_dllink', 8 | 32, 0))
    assert (t.text, t.group, t.kind) == ('No connection to the ground control station',
                                        'arming_check', '')
    t = f.render(eid('commander_arming_check_summary'), 8, bytes(40))
    assert t.kind == 'summary' and t.name == 'commander_arming_check_summary'
    unknown = f.render(0x01ABCDEF, 4, b'')
    assert unknown.name == '' and '0x01abcdef' in unknown.text


def test_the_formatter_follows_libevents_message_rules():
    meta = {'version': 1, 'components': {'1': {'namespace': 'px4', 'enums': {
        'mode_t': {'type': 'uint8_t', 'entries': {'1': {'description': 'Mission'},
                                                  '2': {'description': 'Hold'}}},
        'bits_t': {'type': 'uint16_t', 'is_bitfield': True, 'separator': ', ',
                   'entries': {'1': {'description': 'GPS'}, '4': {'description': 'Baro'}}}},
        'event_groups': {'default': {'events': {'5': {
            'name': 'e',
            'message': 'a {1:.2m} b {2} c {3} d \\{4\\} <param>FW_X</param> '
                       '<profile name="dev">dev</profile><profile name="normal">'
                       'normal</profile><unknown>gone</unknown>{9} <a href="u">link</a>',
            'arguments': [{'name': 'x', 'type': 'float'}, {'name': 'm', 'type': 'mode_t'},
                          {'name': 'b', 'type': 'px4::bits_t'}]}}}}}}}
    f = Formatter(meta)
    args = struct.pack('<fBH', 12.3456, 2, 5)
    t = f.render((1 << 24) | 5, 4, args)
    assert t.text == 'a 12.35 m b Hold c GPS, Baro d {4} FW_X dev{9} link'
    with pytest.raises(ValueError):
        Formatter({'components': {}})                   # no version
    with pytest.raises(ValueError):
        load_json(b'\xfd7zXZ\x00garbage')
    assert load_json(lzma.compress(b'{"version": 1}')) == {'version': 1}


def test_the_receiver_takes_in_order_drops_duplicates_and_asks_for_what_is_missing():
    r = Receiver(history=0)
    assert r.on_event(10, 0.0) == (True, [])
    assert r.on_event(10, 0.1) == (False, [])                  # a duplicate
    assert r.on_event(13, 0.2) == (False, [(11, 11)])         # 11, 12 missing: ask for 11
    assert r.poll(0.25) == [] and r.poll(0.31) == [(11, 11)]  # again after 100 ms
    assert r.on_event(11, 0.4) == (True, [])
    assert r.on_current(13, False, 0.5) == [(12, 12)]         # the sender is at 13
    assert r.on_event(12, 0.6) == (True, [(13, 13)])
    assert r.on_event(13, 0.7) == (True, [])
    # a wrap of the uint16 numbering
    w = Receiver(history=0)
    w.on_event(65535, 0.0)
    assert w.on_event(0, 0.1) == (True, [])
    # gone from the sender's buffer: RESPONSE_EVENT_ERROR, go on from the oldest it holds
    g = Receiver(history=0)
    g.on_event(5, 0.0)
    g.on_current(20, False, 0.1)
    assert g.on_error(6, 15, 0.2) == [(15, 15)] and g.lost == 9
    # at first contact the history is asked for (PX4's buffer holds 20)
    h = Receiver()
    assert h.on_current(100, False, 0.0) == [(81, 81)]


def test_fc_words_reads_px4s_metadata_over_ftp_and_logs_its_events_in_order():
    """The whole path against the stand-in's server: events queue until the texts arrive."""
    sender = px4_events.EventSender(1)
    server = px4_events.FtpServer(px4_events.files())
    words, mav, px4 = FcWords(PX4), new_mav(51, 1), new_mav(1, 1)
    lines = []

    def deliver(out, now):
        """Carry our requests to the stand-in and its answers back (real frames)."""
        while out:
            nxt = []
            for msg in out:
                (m,) = parsed(pack(mav, msg), new_mav(1, 1))
                if m.get_type() == 'COMMAND_LONG':
                    assert m.command == mavlink.MAV_CMD_REQUEST_MESSAGE and m.param1 == 397
                    body = struct.pack('<II100s', 1000, 0,
                                       b'mftp://etc/extras/component_general.json.xz')
                    (meta,) = parsed(px4_events.frame(397, body, 0, 1, 1))
                    s, lg = words.on_ext(mav, mav_ext.decode(meta), now)
                elif m.get_type() == 'FILE_TRANSFER_PROTOCOL':
                    reply = pack(px4, px4.file_transfer_protocol_encode(
                        0, 51, 1, server.handle(m.payload)))
                    (r,) = parsed(reply)
                    s, lg = words.on_ftp(mav, r, now)
                else:                           # REQUEST_EVENT
                    tgt = px4_events.parse_request_event(bytes(m.get_msgbuf()))
                    s, lg = [], []
                    for mid, body in sender.answer((51, 1), tgt[2], tgt[3]):
                        (ev,) = parsed(px4_events.frame(mid, body, 0, 1, 1))
                        s2, lg2 = words.on_ext(mav, mav_ext.decode(ev), now)
                        s, lg = s + s2, lg + lg2
                nxt += s
                lines.extend(lg)
            out = nxt

    m = px4_event(sender, 'commander_armed_by', 'info', 4)
    out, lg = words.on_ext(mav, mav_ext.decode(m), 0.0)
    lines.extend(lg)
    deliver(out, 0.0)
    assert words.meta_state == READY and server.reads >= 2
    m = px4_event(sender, 'mission_execute', 'info')
    out, lg = words.on_ext(mav, mav_ext.decode(m), 1.0)
    lines.extend(lg)
    deliver(out, 1.0)
    texts = [t for _, t in lines]
    assert any('events metadata read over MAVLink FTP' in t for t in texts)
    said = [t for t in texts if 'says' in t]
    assert said == ['FC 1:1 says: Armed by external command', 'FC 1:1 says: Executing Mission']
    # an arming-check report: its failing checks are kept for the refusal's reason
    for name, level, args in (('commander_arming_check_summary', 'protocol', (0, 0, 0, 0, 0)),
                              ('check_modes_global_pos', 'error', (16384, 0)),   # offboard only
                              ('check_rc_dl_no_dllink', 'error', (0xFFFFFFFF, 0)),
                              ('commander_health_summary', 'protocol', (0, 0, 0, 0))):
        m = px4_event(sender, name, level, *args)
        _, lg = words.on_ext(mav, mav_ext.decode(m), 2.0)
        lines.extend(lg)
    # what blocks Hold and Mission, where the autostart arms and flies (not an offboard check)
    assert words.failing_checks() == ['No connection to the ground control station']
    assert len(words.failing_checks(16384)) == 2
    assert 'FC 1:1 says: check: No connection to the ground control station' in \
        [t for _, t in lines]


def test_ftp_reads_a_file_through_lost_replies_and_names_what_fails():
    server = px4_events.FtpServer({'etc/a.bin': bytes(range(256)) * 3})
    mav, px4 = new_mav(51, 1), new_mav(1, 1)
    r = ftp.FtpRead(PX4, 'etc/a.bin', timeout_s=0.5, retries=3)
    out, now, dropped = r.start(mav, 0.0), 0.0, 0
    while r.state in (ftp.OPENING, ftp.READING):
        for msg in out:
            (m,) = parsed(pack(mav, msg), new_mav(1, 1))
            reply = server.handle(m.payload)
            if dropped < 2 and len(r.data) > 200:       # two replies lost on the way
                dropped += 1
                out = []
                break
            (rm,) = parsed(pack(px4, px4.file_transfer_protocol_encode(0, 51, 1, reply)))
            out = r.on_message(mav, rm, now)
        else:
            continue
        now += 0.6
        out = r.poll(mav, now)
    assert r.state == ftp.DONE and bytes(r.data) == bytes(range(256)) * 3
    assert r.resent == 2
    (term,) = out                                       # the session is closed at the end
    (m,) = parsed(pack(mav, term), new_mav(1, 1))
    server.handle(m.payload)
    assert server.open is None
    # PX4 has one session: one left open by someone else is waited for, then used
    server.open = 'etc/a.bin'
    busy = ftp.FtpRead(PX4, 'etc/a.bin', timeout_s=0.5, retries=3)
    (m,) = parsed(pack(mav, busy.start(mav, 0.0)[0]), new_mav(1, 1))
    (rm,) = parsed(pack(px4, px4.file_transfer_protocol_encode(0, 51, 1,
                                                               server.handle(m.payload))))
    assert busy.on_message(mav, rm, 0.1) == [] and busy.state == ftp.OPENING
    server.open = None
    (again,) = busy.poll(mav, 1.2)
    (m,) = parsed(pack(mav, again), new_mav(1, 1))
    (rm,) = parsed(pack(px4, px4.file_transfer_protocol_encode(0, 51, 1,
                                                               server.handle(m.payload))))
    busy.on_message(mav, rm, 1.3)
    assert busy.state == ftp.READING
    server.open = None
    missing = ftp.FtpRead(PX4, 'etc/none', retries=1)
    (m,) = parsed(pack(mav, missing.start(mav, 0.0)[0]), new_mav(1, 1))
    (rm,) = parsed(pack(px4, px4.file_transfer_protocol_encode(0, 51, 1,
                                                               server.handle(m.payload))))
    missing.on_message(mav, rm, 0.1)
    assert missing.state == ftp.FAILED and 'file not found' in missing.error
    silent = ftp.FtpRead(PX4, 'etc/a.bin', timeout_s=0.5, retries=2)
    silent.start(mav, 0.0)
    for t in (0.6, 1.2, 1.8):
        silent.poll(mav, t)
    assert silent.state == ftp.FAILED and 'no reply after 2 retries' in silent.error
    assert ftp.path_of_uri('mftp://[;comp=1]etc/x.xz') == 'etc/x.xz'
    assert ftp.path_of_uri('https://example.com/x') is None


# --- parameter files ----------------------------------------------------------------------------
def test_parameter_files_are_checked_line_by_line():
    ok = parse_params('# c\n1\t1\tNAV_DLL_ACT\t0\t6\n1 1 FW_THR_MAX 1.0 9  # full power\n', 'f')
    assert ok == (Param('NAV_DLL_ACT', 0, INT32), Param('FW_THR_MAX', 1.0, REAL32))
    for text, why in (('1 1 NAV_DLL_ACT 0', 'f:1: expected'),
                      ('1 1 NAV-DLL 0 6', 'not a parameter name'),
                      ('1 1 NAV_DLL_ACT 0.5 6', 'not a number of type 6'),
                      ('1 1 FW_THR_MAX nan 9', 'out of range'),
                      ('1 1 FW_THR_MAX 1 8', 'type must be'),
                      ('1 1 A 1 6\n1 1 A 2 6', 'f:2: A given twice'),
                      ('1 1 ABCDEFGHIJKLMNOPQ 1 6', 'not a parameter name')):
        with pytest.raises(ConfigError, match=why):
            parse_params(text, 'f')
    path, params = load_params('c172r')
    assert path.endswith('config/px4/c172r.params') and params


def test_the_shipped_c172_parameters_are_px4_v116s_with_their_types():
    """Every parameter of config/px4/c172r.params exists in PX4 v1.16 with that type.

    The stand-in's table, from PX4's parameters.json.
    """
    _, params = load_params('c172r')
    for p in params:
        assert p.name in PARAMS, f'{p.name} is not a PX4 v1.16 parameter the stand-in knows'
        assert PARAMS[p.name][0] == p.ptype, p.name
    names = {p.name for p in params}
    # the two that kept airframe 1030 from flying the C172 (issue: never ready, never lifts)
    assert {'NAV_DLL_ACT', 'FW_THR_MAX'} <= names


def test_the_upload_sets_every_parameter_and_names_those_px4_does_not_take():
    px4_params = Params('plane')
    mav, px4 = new_mav(51, 1), new_mav(1, 1)
    plist = [Param('NAV_DLL_ACT', 0, INT32), Param('FW_THR_MAX', 1.0, REAL32),
             Param('NOT_A_PARAM', 3, INT32), Param('FW_LND_ANG', 5, INT32)]   # wrong type
    up = ParamUpload(plist, PX4, 'test.params', timeout_s=1.0, retries=2)
    out, now = up.start(mav, 0.0), 0.0
    while up.state == 'sending' and now < 10.0:
        replies = []
        for msg in out:
            (m,) = parsed(pack(mav, msg), new_mav(1, 1))
            v = px4_params.set(m.param_id, m.param_value, m.param_type)
            if v is not None:
                from px4_params import to_wire
                (r,) = parsed(pack(px4, px4.param_value_encode(
                    m.param_id.encode(), to_wire(v, m.param_type), m.param_type, 9, 0)))
                replies.append(r)
        out = []
        for r in replies:
            out += up.on_value(mav, r, now)
        now += 0.5
        out += up.poll(mav, now)
    assert up.state == 'failed' and up.failed_names() == ['NOT_A_PARAM', 'FW_LND_ANG']
    assert px4_params['NAV_DLL_ACT'] == 0 and px4_params['FW_THR_MAX'] == 1.0
    assert 'NOT_A_PARAM, FW_LND_ANG' in up.result
    # INT32 travels bytewise: 2 is not 2.0 in the float field
    wire = Param('NAV_DLL_ACT', 2, INT32).wire()
    assert struct.pack('<f', wire) == struct.pack('<i', 2)


# --- PX4's mission feasibility (the stand-in) and our circuit -----------------------------------
def items_of(scenario):
    return [Item(i.seq, i.command, i.frame, i.param1, i.param2, i.param3, i.param4, i.x, i.y,
                 i.z) for i in items_from_scenario(load_scenario(scenario).mission)]


def test_px4_accepts_the_circuits_landing_and_refuses_a_steep_or_missing_one():
    plane = Params('plane')
    assert plane['MIS_TKO_LAND_REQ'] == 2 and plane['FW_LND_ANG'] == 8.0
    assert feasibility(items_of('circuit'), plane, True) == (True, [])
    # the circuit before this round: no landing
    no_land = items_of('circuit')[:-1]
    assert feasibility(no_land, plane, True) == (False, [('navigator_mis_land_missing', ())])
    # the approach fix at 500 m: 8.6 deg on 3.3 km, steeper than 8 deg
    steep = items_of('circuit')
    steep[-2] = steep[-2].__class__(**{**steep[-2].__dict__, 'z': 500.0})
    ok, said = feasibility(steep, plane, True)
    assert not ok and said[0] == ('navigator_mis_glide_slope_too_steep', (8, 0))
    assert said[1][0] == 'navigator_mis_correct_glide_slope'
    # a quad's default mission (no landing required by 10016)
    assert feasibility(items_of('default'), Params('quad'), False)[0]


# --- autostart on the sim clock, peers alive on either clock ---------------------------------
class Hb:
    def __init__(self, status, armed=False):
        self.system_status = status
        self.base_mode = mavlink.MAV_MODE_FLAG_SAFETY_ARMED if armed else 0


def test_autostart_asks_an_fc_that_never_gets_ready_and_gives_up_with_its_reason():
    auto = AutoStart(PX4, 6, retry_s=1.0, ready_s=5.0, timeout_s=30.0)
    sim = new_mav(51, 1)
    auto.mission_accepted(100.0)
    auto.heartbeat(Hb(mavlink.MAV_STATE_UNINIT))
    assert auto.poll(sim, 104.9) == [] and auto.state == WAIT_READY
    (arm,) = auto.poll(sim, 105.0)               # 5 s of sim time: ask anyway, to hear why
    assert auto.state == ARMING and arm.command == mavlink.MAV_CMD_COMPONENT_ARM_DISARM
    ack = type('Ack', (), {'command': arm.command,
                           'result': mavlink.MAV_RESULT_TEMPORARILY_REJECTED})
    t = 105.0
    while auto.state != FAILED:
        auto.command_ack(ack, t)
        t += 1.0
        auto.poll(sim, t)
    assert 129.0 < t <= 131.5                     # 30 s after the mission was taken
    assert auto.reason == ('the FC would not arm within 30 s of taking the mission: arm '
                           'refused (TEMPORARILY_REJECTED)')
    # the refusal was said once, not every second
    assert sum(e.startswith('autostart: arm refused') for e in auto.events) == 1


def test_an_fc_that_flies_on_its_own_and_answers_no_command_is_started():
    """The built-in FC arms itself and takes no commands: not an FC that refuses to fly."""
    auto = AutoStart(PX4, 3, ready_s=5.0, timeout_s=30.0)
    sim = new_mav(51, 1)
    auto.mission_accepted(0.0)
    auto.heartbeat(Hb(mavlink.MAV_STATE_STANDBY))
    assert auto.poll(sim, 0.5)                          # arm: no answer
    auto.heartbeat(Hb(mavlink.MAV_STATE_ACTIVE, armed=True))
    auto.poll(sim, 1.5)
    assert auto.state == STARTED and any('flies on its own' in e for e in auto.events)


def test_autostart_times_are_sim_times():
    auto = AutoStart(PX4, 3, ready_s=5.0, timeout_s=30.0)
    sim = new_mav(51, 1)
    auto.mission_accepted(0.0)
    auto.heartbeat(Hb(mavlink.MAV_STATE_STANDBY))
    assert auto.poll(sim, 0.5)                      # ready: arm at once
    auto.command_ack(type('A', (), {'command': mavlink.MAV_CMD_COMPONENT_ARM_DISARM,
                                    'result': mavlink.MAV_RESULT_ACCEPTED}), 0.6)
    (start,) = auto.poll(sim, 0.6)
    auto.command_ack(type('A', (), {'command': start.command,
                                    'result': mavlink.MAV_RESULT_ACCEPTED}), 0.7)
    assert auto.state == STARTED


def test_a_peer_on_the_simulation_clock_is_not_dropped_for_wall_time_silence():
    """A lockstep FC's HEARTBEAT is 1 Hz of sim time: alive while either clock says so.

    At a real-time factor of 0.2 that is 5 s of wall time between two heartbeats.
    """
    t = PeerTable(timeout_s=3.0)
    t.heartbeat(type('H', (), {'get_srcSystem': lambda s: 1, 'get_srcComponent': lambda s: 1,
                               'type': 2, 'autopilot': 12, 'system_status': 3})(),
                '127.0.0.1:1', now=100.0, sim_s=10.0)
    assert t.expire(now=105.0, sim_s=11.0) == []            # 5 s wall, 1 s sim: alive
    assert t.expire(now=101.0, sim_s=20.0) == []            # fast sim, 1 s wall: alive
    assert t.expire(now=129.0, sim_s=10.5) == []            # a sim held still: 29 s alive
    assert [p.sysid for p in t.expire(now=130.5, sim_s=10.5)] == [1]  # 30 s of wall: gone


def test_the_mission_is_never_sent_again_to_a_flying_fc():
    se = FcSession(items_from_scenario(load_scenario('default').mission), (51, 1), PX4)
    mav = new_mav(51, 1)
    (count,) = se.begin(mav, 0.0)
    assert count.get_type() == 'MISSION_COUNT'
    se.mission.state, se.accepted_on = DONE, 1
    # back on the link after a silence: armed -> never; disarmed with the mission -> no
    out, lines = se.fc_back(mav, 5.0, armed=True, hil_connection=1)
    assert out == [] and 'armed: it flies; the mission is not sent again' in lines[0][1]
    out, lines = se.fc_back(mav, 6.0, armed=False, hil_connection=1)
    assert out == [] and 'has the mission already' in lines[0][1]
    # a PX4 restarted (its HIL link connected anew), disarmed: it gets the mission
    out, _ = se.fc_back(mav, 7.0, armed=False, hil_connection=2)
    assert [m.get_type() for m in out] == ['MISSION_COUNT']


def test_an_upload_under_way_is_taking_until_done_or_the_fc_goes_quiet():
    """FcSession.taking (a fleet's clock waits on it): under way while the FC answers.

    An FC answering on the wall clock (the built-in FC's MissionClient) is taking its mission
    until the ACK; one that stops answering (PX4 in lockstep, waiting for sim time) no longer
    counts after TAKING_S of silence; a session not begun or done takes nothing.
    """
    from mavlink_bridge.core.fc_session import TAKING_S
    items = items_from_scenario(load_scenario('default').mission)
    se = FcSession(items, (51, 1), PX4)
    mav, fc = new_mav(51, 1), new_mav(1, 1)
    assert not se.taking(0.0)                       # not begun
    se.begin(mav, 10.0)
    assert se.taking(10.0) and se.taking(10.0 + 0.9 * TAKING_S)
    assert not se.taking(10.0 + 1.1 * TAKING_S)     # the FC went quiet
    t = 20.0
    for seq in range(len(items)):
        (req,) = parsed(pack(fc, fc.mission_request_int_encode(51, 1, seq, 0)), mav)
        out, _, _ = se.on_message(mav, req, t, 0.0, True, 1)
        assert [m.get_type() for m in out] == ['MISSION_ITEM_INT']
        assert se.taking(t + 0.5 * TAKING_S)        # answered again: under way
        t += 0.01
    (ack,) = parsed(pack(fc, fc.mission_ack_encode(51, 1, 0, 0)), mav)
    se.on_message(mav, ack, t, 0.0, True, 1)
    assert se.mission.state == DONE and not se.taking(t)
    # parameters first: taking them is taking too
    withp = FcSession(items, (51, 1), PX4, params=('x.params', (Param('NAV_DLL_ACT', 0, INT32),)))
    withp.begin(mav, 0.0)
    assert withp.params.state == 'sending' and withp.taking(0.5 * TAKING_S)


def test_a_fleet_member_is_ready_when_its_mission_is_accepted_and_its_checks_pass():
    """FcSession.waiting_for (a fleet's clock stays at 0 until every member is ready).

    An FC on the wall clock (the built-in FC, autopilot GENERIC) is not ready while it is
    silent mid-upload (it fell behind on a loaded machine: the clock must not start, as it did
    after 1 s of silence), nor after the mission until its HEARTBEAT says STANDBY. PX4 (which
    waits for sim time in lockstep) is ready once its upload went quiet.
    """
    from mavlink_bridge.core.fc_session import TAKING_S
    items = items_from_scenario(load_scenario('default').mission)
    mav, fc = new_mav(51, 1), new_mav(1, 1)

    def hb(se, autopilot, status):
        (m,) = parsed(pack(fc, fc.heartbeat_encode(mavlink.MAV_TYPE_QUADROTOR, autopilot, 0, 0,
                                                   status)), mav)
        se.heartbeat(m)

    se = FcSession(items, (51, 1), PX4)
    assert se.waiting_for(0.0)                          # not begun
    hb(se, mavlink.MAV_AUTOPILOT_GENERIC, mavlink.MAV_STATE_UNINIT)
    se.begin(mav, 10.0)
    assert 'mission' in se.waiting_for(10.0)
    assert 'mission' in se.waiting_for(10.0 + 5 * TAKING_S)     # silent: still not ready
    for seq in range(len(items)):
        (req,) = parsed(pack(fc, fc.mission_request_int_encode(51, 1, seq, 0)), mav)
        se.on_message(mav, req, 20.0, 0.0, True, 1)
    (ack,) = parsed(pack(fc, fc.mission_ack_encode(51, 1, 0, 0)), mav)
    se.on_message(mav, ack, 20.0, 0.0, True, 1)
    assert 'pre-flight' in se.waiting_for(20.0)         # accepted, checks not passed yet
    hb(se, mavlink.MAV_AUTOPILOT_GENERIC, mavlink.MAV_STATE_STANDBY)
    assert se.waiting_for(20.0) == ''
    # a lockstep FC (PX4): ready unless an upload is under way with answers; it is silent on
    # the mission link while time is held, so the session may not even have begun
    px = FcSession(items, (51, 1), PX4)
    assert px.waiting_for(10.0, lockstep=True) == ''
    px.begin(mav, 10.0)
    assert px.waiting_for(10.0 + 0.5 * TAKING_S, lockstep=True)
    assert px.waiting_for(10.0 + 1.1 * TAKING_S, lockstep=True) == ''


def test_the_session_sets_the_parameters_before_the_mission_and_stops_on_a_refused_one():
    plist = (Param('NAV_DLL_ACT', 0, INT32),)
    se = FcSession(items_from_scenario(load_scenario('default').mission), (51, 1), PX4,
                   autostart={}, params=('x.params', plist))
    mav = new_mav(51, 1)
    (ps,) = se.begin(mav, 0.0)
    assert ps.get_type() == 'PARAM_SET' and se.mission.state == 'idle'
    px4 = new_mav(1, 1)
    (pv,) = parsed(pack(px4, px4.param_value_encode(b'NAV_DLL_ACT', plist[0].wire(), INT32, 1,
                                                    0)))
    out, lines, _ = se.on_message(mav, pv, 0.1, 0.1, True, 1)
    assert [m.get_type() for m in out] == ['MISSION_COUNT']
    assert any('1 set and confirmed' in t for _, t in lines)
    refused = FcSession(items_from_scenario(load_scenario('default').mission), (51, 1), PX4,
                        params=('x.params', (Param('NOPE', 1, INT32),)))
    refused.params.retries = 0
    refused.begin(mav, 0.0)
    _, lines = refused.poll(mav, 5.0, 1.0, True)
    assert refused.mission.state == 'idle'          # no mission after a refused parameter
    assert ('error', 'the flight controller will not fly: FC parameters from x.params: 1 of '
            '1 not confirmed by the FC after 0 retries (unknown to it, or of another type): '
            'NOPE') in lines


# --- PX4's telemetry on the mission link: stopped where nothing reads it ----------------------
def test_the_session_stops_the_fc_streams_it_does_not_read():
    """PX4's onboard streams (the stand-in's Streams, from mavlink_main.cpp) all stop.

    Each message type the session does not read, heard from the served FC, gets one targeted
    MAV_CMD_SET_MESSAGE_INTERVAL with interval -1; PX4's receiver (the stand-in's
    set_interval) stops that stream on the link. What the session reads (HEARTBEAT, the
    mission protocol, COMMAND_ACK, STATUSTEXT, ...), PX4's COMMAND_LONG stream and other
    systems' messages are never asked for. The stops are logged once, together.
    """
    streams = Streams(ONBOARD_STREAMS, PAYLOAD_DATARATE)
    assert abs(sum(streams.sizes[n] * r * streams.mult for n, r in streams.rates.items()
                   if n != 'PING') + streams.sizes['PING'] - PAYLOAD_DATARATE) < 1.0
    se = FcSession(items_from_scenario(load_scenario('default').mission), (51, 1), PX4,
                   quiet_streams=True)
    px4, ours = new_mav(1, 1), new_mav(51, 1)
    asked, heard = [], 0
    for k in range(2000):                        # 8 s of PX4 time, 4 ms steps
        now_us = k * 4000
        msgs = [px4.heartbeat_encode(2, 12, 0, 0, 3)] if k % 250 == 0 else []
        msgs += [px4.statustext_encode(6, b'Takeoff detected')] if k == 700 else []
        msgs += [px4.command_long_encode(1, 100, 2000, 0, 0, 0, 0, 0, 0, 0, 0)] if k == 5 \
            else []
        for m in parsed(b''.join(pack(px4, x) for x in msgs + streams.due(now_us)), ours):
            heard += 1
            out, _, _ = se.on_message(ours, m, now_us * 1e-6, now_us * 1e-6, True, 1)
            for c in out:
                assert c.get_type() == 'COMMAND_LONG'
                assert (c.target_system, c.target_component) == PX4
                assert c.command == mavlink.MAV_CMD_SET_MESSAGE_INTERVAL and c.param2 == -1.0
                assert streams.set_interval(int(c.param1), c.param2, c.param3, c.param4,
                                            c.param7)
                asked.append(int(c.param1))
    assert streams.active() == [] and len(asked) == len(set(asked)) == 26
    assert sorted(se.stopped.values()) == sorted(ONBOARD_STREAMS)
    _, lines = se.poll(ours, 20.0, 20.0, False)
    said = [t for _, t in lines if 'asked to stop' in t]
    assert len(said) == 1 and 'asked to stop 26 streams' in said[0] and 'ATTITUDE' in said[0]
    assert se.poll(ours, 30.0, 30.0, False)[1] == []              # said once
    # another system's telemetry forwarded by PX4: not PX4's stream to stop
    m = parsed(pack(new_mav(77, 1), new_mav(77, 1).attitude_encode(0, 0, 0, 0, 0, 0, 0)))[0]
    assert se.on_message(ours, m, 31.0, 31.0, False, 1)[0] == []
    # quiet_streams off: nothing asked
    keep = FcSession(items_from_scenario(load_scenario('default').mission), (51, 1), PX4)
    m = parsed(pack(px4, px4.attitude_encode(0, 0, 0, 0, 0, 0, 0)), ours)[0]
    assert keep.on_message(ours, m, 0.0, 0.0, True, 1)[0] == [] and keep.stopped == {}


def test_px4s_stream_interval_command_as_its_receiver_takes_it():
    """MavlinkReceiver::set_message_interval (the stand-in): stop, default, rate; refusals."""
    s = Streams(ONBOARD_STREAMS, PAYLOAD_DATARATE)
    att = mavlink.MAVLINK_MSG_ID_ATTITUDE
    assert not s.set_interval(mavlink.MAVLINK_MSG_ID_HEARTBEAT, -1, 0, 0, 0)
    assert not s.set_interval(mavlink.MAVLINK_MSG_ID_STATUSTEXT, -1, 0, 0, 0)   # no stream
    assert not s.set_interval(att, -1, 1, 0, 0)                  # param3 not supported
    assert s.set_interval(att, -1, 0, 0, float('nan'))
    assert 'ATTITUDE' not in s.active() and s.mult > 0.15        # the others get its share
    assert s.set_interval(att, 0, 0, 0, 0) and s.rates['ATTITUDE'] == 100.0
    assert s.set_interval(att, 20000, 0, 0, 0) and s.rates['ATTITUDE'] == 50.0
