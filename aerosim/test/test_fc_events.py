"""PX4's events and their texts, read over MAVLink FTP, pure.

The messages pymavlink's dialect lacks (EVENT and its protocol, their CRC_EXTRA), the texts of
PX4's events by libevents' rules, the receiver's ordering and re-requests, FcWords reading the
metadata over MAVLink FTP, and FTP reads through losses.

The peer side is the PX4 stand-in's (px4_events), written from PX4's sources independently of
the bridge's receiving code: its own frame layouts and the CRC_EXTRA values of PX4's generated
headers.
"""

import lzma
import random
import struct

from fc_helpers import PX4, parsed
import pytest

from mavlink_bridge.core import ftp, mav_ext
from mavlink_bridge.core.events import Formatter, Receiver, load_json
from mavlink_bridge.core.fc_words import READY, FcWords
from mavlink_bridge.core.mav import mavlink, new_mav, pack

import px4_events


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
