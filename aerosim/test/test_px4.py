"""PX4 v1.16 as the flight controller: the mission on PX4's MAVLink instance, framing, lockstep.

The PX4 stand-in is px4_sitl.py, written from PX4's own source (see its docstring for the
files and functions it follows). The pure tests drive its mission manager and commander with
our bridge's cores through real pymavlink frames; the graph tests run it as a process against
`aerosim launch sim_quad_hil fc:=px4`, and a pymavlink/mavutil peer against the bridge alone.
"""

import json
import math
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time

from diagnostic_msgs.msg import DiagnosticArray
import pytest

from aerosim_msgs.msg import AircraftEffectorCommand, SimStatus
from mavlink_bridge.core.autostart import FAILED, STARTED, AutoStart
from mavlink_bridge.core.fc_params import load_params
from mavlink_bridge.core.mav import mavlink, new_mav, pack
from mavlink_bridge.core.mission import DONE, MissionServer, items_from_scenario
from mavlink_bridge.core.mission import FAILED as MISSION_FAILED
from sim_core.realtime import fifo_permitted, fifo_threads
from sim_core.scenario import MissionItem
from sim_ros import qos

from conftest import (
    DEADLINE_SCALE,
    PKG_DIR,
    UdpPeer,
    free_ports,
    output_lines,
    port_counts,
    probe_node,
    spin_until,
    wait_line,
)
from px4_sitl import RETRY_US, MissionManager, Px4Sitl, source

HERE = os.path.dirname(os.path.abspath(__file__))


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


# --- graph tests ----------------------------------------------------------------------------

def px4_peer(procs, sim_port, mav_port, remote_port, airframe='quad', sysid=1, gcs=None,
             extra=()):
    """The PX4 stand-in; gcs: (its GCS link port, the ground station's port) or None."""
    extra = list(extra) + (['--gcs-port', str(gcs[0]), '--gcs-remote', str(gcs[1])]
                           if gcs else [])
    return procs.start([sys.executable, os.path.join(HERE, 'px4_sitl.py'),
                        '--sim-port', str(sim_port), '--mavlink-port', str(mav_port),
                        '--mavlink-remote', str(remote_port), '--airframe', airframe,
                        '--sysid', str(sysid)] + extra, cwd=str(PKG_DIR))


class GroundStation:
    """A ground station on PX4's GCS link, as QGroundControl runs it: whom it would list.

    A GCS HEARTBEAT (255:190) every second to PX4's port; every frame PX4 sends is kept.

    QGroundControl (MultiVehicleManager::_vehicleHeartbeatInfo) makes a vehicle of a HEARTBEAT
    from component 1 (MAV_COMP_ID_AUTOPILOT1) whose type is not GCS, ONBOARD_CONTROLLER, GIMBAL
    or ADSB, system id not 0. MAVSDK (MavsdkImpl::receive_message) makes a system of any
    message of a new system id but 0, not from a telemetry radio (component 68), and as a
    ground station not from QGC itself (255:190).
    """

    NOT_VEHICLES = (mavlink.MAV_TYPE_GCS, mavlink.MAV_TYPE_ONBOARD_CONTROLLER,
                    mavlink.MAV_TYPE_GIMBAL, mavlink.MAV_TYPE_ADSB)

    def __init__(self, px4_port: int):
        """Bind a free port for PX4's GCS link to send to (its --gcs-remote)."""
        self.port = free_ports(1)
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind(('127.0.0.1', self.port))
        self.sock.settimeout(0.2)
        self.px4 = ('127.0.0.1', px4_port)
        self.mav = new_mav(255, 190)
        self.frames = []            # (type, sysid, compid, heartbeat type or None)
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        """Send our HEARTBEAT every second, keep what comes."""
        rx, next_hb = new_mav(255, 190), 0.0
        while not self.stop.is_set():
            if time.monotonic() >= next_hb:
                next_hb = time.monotonic() + 1.0
                self.sock.sendto(pack(self.mav, self.mav.heartbeat_encode(
                    mavlink.MAV_TYPE_GCS, mavlink.MAV_AUTOPILOT_INVALID, 0, 0, 0)), self.px4)
            try:
                data, _ = self.sock.recvfrom(65536)
            except socket.timeout:
                continue
            for m in rx.parse_buffer(data) or []:
                if m.get_type() == 'BAD_DATA':
                    continue
                sysid, compid = source(m)
                self.frames.append((m.get_type(), sysid, compid,
                                    m.type if m.get_type() == 'HEARTBEAT' else None))

    def close(self):
        self.stop.set()
        self.thread.join(2.0)
        self.sock.close()

    def qgc_vehicles(self) -> set:
        return {s for t, s, c, hb in self.frames if t == 'HEARTBEAT' and c == 1 and s != 0
                and hb not in self.NOT_VEHICLES}

    def mavsdk_systems(self) -> set:
        return {s for t, s, c, hb in self.frames if s != 0 and c != 68 and (s, c) != (255, 190)}


def px4_graph(procs, graph, tmp_path, tcp, mav, remote, *extra):
    """Launch graph with fc:=px4 on the test's ports; (process, its output lines)."""
    run = procs.start([sys.executable, '-m', 'sim_launch.cli', 'launch', graph, 'fc:=px4',
                       'report:=true', 'time_scale:=0', f'output_dir:={tmp_path}',
                       f'tcp_bind:=127.0.0.1:{tcp}', f'mission_link:=127.0.0.1:{mav}',
                       f'mission_bind:=127.0.0.1:{remote}', 'sensor_topics:=false', *extra])
    return run, output_lines(run)


def report_of(text):
    line = next(x for x in text.splitlines() if x.startswith('PX4SITL hil_sensor='))
    return {k: int(v) for k, v in re.findall(r'(\w+)=(\d+)', line)}


def test_px4_flies_the_mission_served_on_its_instance_link(procs, tmp_path):
    """The quad with PX4: its mission, arming and words; one vehicle on its ground station.

    The stand-in has PX4's GCS link too, and a ground station on it (QGC's HEARTBEAT): what
    the bridge sends on PX4's payload link must not make a second vehicle appear there (PX4
    forwards the payload link's traffic, Mavlink::forward_message), and PX4's words reach
    our log through its events (it sends no STATUSTEXT where no GCS heartbeat is heard).
    """
    tcp = free_ports(1)
    mav = free_ports(2)                 # PX4's instance port, and ours (its remote port)
    gcs_port = free_ports(1)
    gcs = GroundStation(gcs_port)

    def stranger():
        """An untargeted HEARTBEAT of system 77 on the payload link.

        PX4 does forward it to the GCS link, where QGC and MAVSDK list it: the check below
        can fail.
        """
        mav77 = new_mav(77, 1)
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sk:
            for _ in range(8):
                time.sleep(1.0)
                sk.sendto(pack(mav77, mav77.heartbeat_encode(
                    mavlink.MAV_TYPE_QUADROTOR, mavlink.MAV_AUTOPILOT_GENERIC, 0, 0, 0)),
                    ('127.0.0.1', mav))
    try:
        peer = px4_peer(procs, tcp, mav, mav + 1, gcs=(gcs_port, gcs.port))
        run, lines = px4_graph(procs, 'sim_quad_hil', tmp_path, tcp, mav, mav + 1)
        # (PX4 takes the first sender on its link as its partner: the stranger comes later)
        assert wait_line(lines, 'mission: accepted', 60 * DEADLINE_SCALE, (run,))
        threading.Thread(target=stranger, daemon=True).start()
        assert run.wait(300) == 0, ''.join(lines[-40:])
    finally:
        gcs.close()
    summary = json.loads((tmp_path / 'sim_quad_hil_summary.json').read_text())
    assert summary['result'] == 'complete', summary
    out = ''.join(lines)
    assert 'mission: accepted: 5 items' in out
    assert 'autostart: mission start accepted' in out
    # PX4 sends one HEARTBEAT on the simulator link, then only HIL traffic: still alive
    assert 'silent on the HIL link' not in out, out
    # PX4's words, from its events and the texts it serves over MAVLink FTP
    assert 'events metadata read over MAVLink FTP' in out, out
    for said in ('Armed by external command', 'Executing Mission', 'Takeoff detected',
                 'Landing detected', 'Disarmed by landing'):
        assert f'FC 1:1 says: {said}' in out, said
    assert peer.wait(30) == 0
    r = report_of(procs.text(peer))
    assert r['mission_accepted'] == 1 and r['int_mode'] == 1 and r['done'] == 1
    assert r['answers'] == r['hil_sensor'] > 1000
    # sequence numbers: nothing lost on either link, counted as MAVProxy does
    assert r['sim_lost'] == 0 and r['mav_lost'] == 0 and r['mav_frames'] > 5
    assert r['arm_denied'] == 0 and r['start_denied'] == 0
    assert r['ftp_reads'] >= 2 and r['events'] > 5
    # PX4's onboard telemetry on the payload link (26 streams at 4000 B/s, ~62 messages a
    # second of its time, ~5,000 in this flight) was stopped once heard: the bridge reads none
    assert r['streams_active'] == 0 and r['stream_msgs'] < 400, r
    assert 'asked to stop 26 streams on the mission link' in out, out
    # one vehicle on the ground station: PX4 itself (the stranger shows the filter works)
    assert gcs.qgc_vehicles() == {1, 77}, gcs.frames[-20:]
    assert gcs.mavsdk_systems() == {1, 77}
    assert not any(s == 51 for _, s, _, _ in gcs.frames)      # nothing of ours went there


def quick_px4_graph(procs, tmp_path, peer_args, *extra):
    """The stand-in (peer_args) and sim_quad_hil fc:=px4 until the mission started.

    Returns (peer, runner, lines, hil_plant's pid).
    """
    tcp = free_ports(1)
    mav = free_ports(2)
    peer = px4_peer(procs, tcp, mav, mav + 1, extra=peer_args)
    run = procs.start([sys.executable, '-m', 'sim_launch.cli', 'launch', 'sim_quad_hil',
                       'fc:=px4', 'time_scale:=0', f'tcp_bind:=127.0.0.1:{tcp}',
                       f'mission_link:=127.0.0.1:{mav}', f'mission_bind:=127.0.0.1:{mav + 1}',
                       *extra])
    lines = output_lines(run)
    assert wait_line(lines, 'autostart: mission start accepted', 120 * DEADLINE_SCALE,
                     (run, peer)), ''.join(lines[-40:])
    pid = int(re.search(r'started hil_plant \(pid (\d+)\)', ''.join(lines)).group(1))
    return peer, run, lines, pid


def test_a_px4_run_as_root_is_followed_by_the_receive_thread(procs, tmp_path):
    """PX4 started as root runs SCHED_FIFO 99 threads; the lockstep thread takes the same.

    realtime_priority -1 (the default): the bridge finds the FC's process behind its TCP
    connection and runs its receive thread (which steps the simulation) at the FC's highest
    priority, so the FC's threads, woken by every HIL_SENSOR, do not preempt it; its mission
    link's reader takes it too (PX4 times the transfer on its clock). Where this machine
    permits no SCHED_FIFO, the stand-in falls back to normal threads as PX4 does, and so does
    the bridge.
    """
    peer, run, lines, pid = quick_px4_graph(procs, tmp_path, ['--realtime'])
    if fifo_permitted() == '':
        assert wait_line(lines, 'MAVLink mission link thread: SCHED_FIFO priority 99 too',
                         30 * DEADLINE_SCALE, (run, peer))
        out = ''.join(lines)
        assert 'PX4SITL simulator link thread: SCHED_FIFO 99' in ''.join(peer.lines)
        assert re.search(r"MAVLink receive thread: SCHED_FIFO priority 99, as the FC's process "
                         r'\(python[\w.]*, pid %d\)' % peer.pid, out), out
        assert [p for _, p in fifo_threads(pid)] == [99, 99]     # those two threads only
    else:
        out = ''.join(lines)
        assert 'SCHED_FIFO not permitted, normal threads' in ''.join(peer.lines)
        assert 'runs normal threads: so does the MAVLink receive thread' in out, out
        assert fifo_threads(pid) == []


def test_a_px4_with_normal_threads_and_its_streams_kept_when_asked(procs, tmp_path):
    """PX4 run by a user: normal threads, and so is ours. quiet_streams false.

    PX4's telemetry keeps flowing on the payload link then (each message read and dropped).
    """
    params = tmp_path / 'mavlink.yaml'
    params.write_text('/**/mavlink_bridge:\n  ros__parameters:\n    quiet_streams: false\n')
    peer, run, lines, pid = quick_px4_graph(procs, tmp_path, [], f'mavlink_params:={params}')
    assert wait_line(lines, 'Takeoff detected', 60 * DEADLINE_SCALE, (run, peer))
    assert fifo_threads(pid) == []
    run.send_signal(signal.SIGINT)
    assert run.wait(60) == 0
    out = ''.join(lines)
    assert 'runs normal threads: so does the MAVLink receive thread' in out, out
    assert 'asked to stop' not in out
    assert peer.wait(30) == 0
    r = report_of(procs.text(peer))
    assert r['streams_active'] == 26 and r['stream_msgs'] > 200, r


def test_two_px4_instances_fly_a_fleet_each_on_its_own_instance_ports(procs, tmp_path):
    """A fleet of two PX4 instances: vehicle i is PX4 instance i (px4 -i i).

    TCP 4560 + i, its payload link 14280 + i (remote 14030 + i), system id i + 1, as
    px4-rc.mavlink and rcS set them; here every base port is the test's, moved by i the same
    way.
    """
    tcp, mav, rem = free_ports(2), free_ports(2), free_ports(2)
    peers = [px4_peer(procs, tcp + i, mav + i, rem + i, sysid=i + 1) for i in range(2)]
    run, lines = px4_graph(procs, 'sim_quad_hil', tmp_path, tcp, mav, rem, 'vehicles:=2')
    assert run.wait(300 * DEADLINE_SCALE) == 0, ''.join(lines[-60:])
    s = json.loads((tmp_path / 'sim_quad_hil_summary.json').read_text())
    assert s['vehicles_complete'] == 2, s
    # the copies are placed so that their paths keep 3 m apart (two real PX4s flying copies
    # 5 m apart east met in mid-air at 2.3 m/s, and the report said complete)
    ca = s['closest_approach']
    assert ca is not None and ca['distance_m'] >= 3.0 and s['vehicles_collided'] == 0, ca
    out = ''.join(lines)
    for i in range(2):
        assert f'[quad{i}.mavlink_bridge]: serving flight controller {i + 1}:1' in out
        # each bridge its own MAVLink system (51 + i): a ground station sees one per vehicle
        assert re.search(rf'\[quad{i}\.mavlink_bridge\]: MAVLink 2 .*, our id {51 + i}:1,', out)
    for i, peer in enumerate(peers):
        assert peer.wait(30) == 0
        r = report_of(procs.text(peer))
        assert r['mission_accepted'] == 1 and r['done'] == 1, (i, r)
        assert r['answers'] == r['hil_sensor'] > 1000 and r['sim_lost'] == 0


def test_px4_plane_flies_the_circuit_served_on_its_instance_link(procs, tmp_path):
    """sim_plane_hil fc:=px4: a fixed-wing PX4 (airframe 1030's outputs) over TCP + UDP."""
    tcp = free_ports(1)
    mav = free_ports(2)
    peer = px4_peer(procs, tcp, mav, mav + 1, airframe='plane')
    run, lines = px4_graph(procs, 'sim_plane_hil', tmp_path, tcp, mav, mav + 1)
    assert run.wait(600) == 0, ''.join(lines[-40:])
    summary = json.loads((tmp_path / 'sim_plane_hil_summary.json').read_text())
    assert summary['result'] == 'complete' and summary['items_flown'] == 6, summary
    out = ''.join(lines)
    assert 'mission: accepted: 6 items' in out
    assert 'autostart: mission start accepted' in out
    assert 'peer 1:1 on the mission link' in out and 'type 1, autopilot 12' in out
    # the C172's parameters went first (config/px4/c172r.params, confirmed one by one)
    _, params = load_params('c172r')
    assert f'FC parameters from {PKG_DIR}/config/px4/c172r.params: {len(params)} set and ' \
        'confirmed' in out
    assert out.index('set and confirmed') < out.index('mission: sending MISSION_COUNT')
    assert peer.wait(30) == 0
    r = report_of(procs.text(peer))
    assert r['mission_accepted'] == 1 and r['done'] == 1 and r['arm_denied'] == 0
    assert r['param_sets'] == len(params) and r['param_refused'] == 0
    assert r['mission_valid'] == 1            # PX4's landing rules: the circuit lands
    assert r['answers'] == r['hil_sensor'] > 10000
    assert r['sim_lost'] == 0 and r['mav_lost'] == 0
    assert summary['landing']['verdict'] == 'landed', summary['landing']


def test_a_px4_that_will_not_arm_is_reported_with_its_reason_and_ends_the_run(procs, tmp_path):
    """Airframe 1030 as it is (no parameter file): NAV_DLL_ACT 2 wants a ground station.

    PX4 is never ready (its checks fail: no GCS), refuses to arm and says why in its events;
    the bridge asks anyway after autostart_ready_s (5 s), logs the refusal with PX4's reason,
    gives up after autostart_timeout_s (30 s of sim time) and the run ends with the reason.
    """
    tcp = free_ports(1)
    mav = free_ports(2)
    peer = px4_peer(procs, tcp, mav, mav + 1, airframe='plane')
    run, lines = px4_graph(procs, 'sim_plane_hil', tmp_path, tcp, mav, mav + 1, 'px4_params:=')
    assert run.wait(300 * DEADLINE_SCALE) == 1, ''.join(lines[-40:])
    out = ''.join(lines)
    s = json.loads((tmp_path / 'sim_plane_hil_summary.json').read_text())
    assert s['result'] == 'fc_refused', s
    assert 'No connection to the ground control station' in s['fc_failure'], s['fc_failure']
    assert 'the FC would not arm within 30 s of taking the mission: arm refused ' \
        '(TEMPORARILY_REJECTED)' in s['fc_failure']
    assert s['sim_time_s'] < 60.0                  # said within seconds, not after 900 s
    assert 'FC 1:1 says: check: No connection to the ground control station' in out
    assert 'FC 1:1 says: Arming denied: Resolve system health failures first' in out
    assert 'autostart: arm refused (TEMPORARILY_REJECTED)' in out
    assert '[ERROR]' in out and 'the flight controller will not fly' in out
    assert peer.wait(30) == 0
    r = report_of(procs.text(peer))
    assert r['arm_denied'] > 1 and r['param_sets'] == 0


def hil_plant(procs, port, **params):
    """dynamics_node + mavlink_bridge composed (the default), over UDP to 127.0.0.1:port + 1."""
    p = {'lockstep': True, 'time_scale': 0.0, 'lockstep_timeout_s': 1.0,
         'lockstep_max_timeouts': 3, 'bind': f'127.0.0.1:{port}',
         'fc_address': f'127.0.0.1:{port + 1}', 'warn_period_s': 0.1}
    p.update(params)
    return procs.node('mavlink_bridge.hil_plant', None, p)


def test_mavutil_counts_no_loss_and_heartbeats_are_1_hz_then_poweroff(procs):
    from pymavlink import mavutil
    port = free_ports(2)
    # real time: ~300 frames a second, which a Python reader keeps up with on a busy machine
    # (as fast as possible, 8,000 a second overflowed its socket: kernel drops, not ours)
    bridge = hil_plant(procs, port, time_scale=1.0)
    conn = mavutil.mavlink_connection(f'udpin:127.0.0.1:{port + 1}', source_system=1,
                                      dialect='common')
    first = conn.recv_match(type='HEARTBEAT', blocking=True, timeout=60)
    assert first is not None, 'no heartbeat'
    t0, beats = time.monotonic(), 0
    frames = 0
    while time.monotonic() - t0 < 4.5:
        m = conn.recv_match(blocking=True, timeout=1.0)
        if m is None:
            continue
        frames += 1
        beats += m.get_type() == 'HEARTBEAT'
    # MAVProxy's loss figure is mavutil's: sequence gaps per sender
    assert frames > 200 and conn.mav_loss == 0, (frames, conn.mav_loss)
    # 1 Hz (a /sim/status update no longer adds one): 4-5 in 4.5 s, never 9
    assert 3 <= beats <= 6, beats
    os.killpg(bridge.pid, signal.SIGINT)
    last = None
    deadline = time.monotonic() + 10.0
    while time.monotonic() < deadline:
        m = conn.recv_match(type='HEARTBEAT', blocking=True, timeout=0.5)
        if m is not None:
            last = m
        if last is not None and last.system_status == mavlink.MAV_STATE_POWEROFF:
            break
    assert last is not None and last.system_status == mavlink.MAV_STATE_POWEROFF
    assert bridge.wait(10) == 0


class Fc(UdpPeer):
    """A lockstep FC played by the test over UDP (pymavlink), with real sequence numbers.

    UdpPeer's 4 MiB receive buffer holds the frames the free-running sensors send before the
    FC answers (a frame dropped here is an answer that never comes: a lockstep timeout).
    """

    def __init__(self, port, bridge_port, sysid=1, compid=1):
        super().__init__(port, bridge_port, poll_s=0.2)
        self.mav = new_mav(sysid, compid)
        self.rx = new_mav(0, 0)

    def send(self, msg, mav=None):
        self.sock.sendto(pack(mav or self.mav, msg), self.bridge)

    def frames(self, timeout_s):
        """Yield each HIL_SENSOR received within timeout_s wall seconds."""
        for data in self.datagrams(timeout_s):
            for m in self.rx.parse_buffer(data) or []:
                if m.get_type() == 'HIL_SENSOR':
                    yield m


def _answer(fc, m, value, mav=None):
    fc.send(fc.mav.hil_actuator_controls_encode(m.time_usec, [value] * 4 + [0.0] * 12, 129, 1),
            mav)


def test_only_the_served_fc_drives_the_motors(procs, ros_context):
    import threading
    port = free_ports(2)
    hil_plant(procs, port)
    fc = Fc(port + 1, port)
    stranger = new_mav(255, 190)
    signer = new_mav(1, 1)
    signer.signing.secret_key = bytes(range(32))
    signer.signing.sign_outgoing = True
    signer.signing.link_id = 1
    node, ex = probe_node(ros_context, 'served_probe', '/quad')
    cmds, diags = [], []
    sub = node.create_subscription(AircraftEffectorCommand, 'effector_command', cmds.append,
                                   qos.STATE)
    node.create_subscription(DiagnosticArray, '/diagnostics', diags.append, 50)
    assert spin_until(node, ex, lambda: sub.get_publisher_count() >= 1, 30.0)
    stop = threading.Event()

    def fc_loop():                      # the FC and two others answer every frame
        fc.send(fc.mav.heartbeat_encode(2, 12, 0, 0, 3))
        next(fc.frames(60.0))
        fc.drain()
        while not stop.is_set():
            for m in fc.frames(0.2):
                _answer(fc, m, 0.9, stranger)       # a stray ground station: refused
                _answer(fc, m, 0.8, signer)         # the FC's ids, signed: no key here
                _answer(fc, m, 0.3)                 # the FC
                break
    worker = threading.Thread(target=fc_loop, daemon=True)
    worker.start()
    try:
        assert spin_until(node, ex, lambda: int(port_counts(diags, 'MAVLink').get(
            'rejected_signed', 0)) >= 50 and len(cmds) >= 50, 30.0), \
            port_counts(diags, 'MAVLink')
    finally:
        stop.set()
        worker.join(2.0)
    c = port_counts(diags, 'MAVLink')
    assert int(c['rejected_peer']) >= 50 and int(c['rejected_signed']) >= 50, c
    assert {round(v, 3) for cmd in cmds for v in cmd.throttle_cmd} == {0.3}


def test_a_refused_answer_releases_its_step_and_a_silent_fc_disengages_lockstep(procs,
                                                                                ros_context):
    import threading
    port = free_ports(2)
    bridge = hil_plant(procs, port)
    fc = Fc(port + 1, port)
    node, ex = probe_node(ros_context, 'lockstep_probe', '/quad')
    status = []
    node.create_subscription(SimStatus, '/sim/status', status.append, qos.LATCHED)
    answer = {'value': 0.3, 'n': 0, 'last_us': 0}     # value None: the FC is silent
    stop = threading.Event()

    def fc_loop():                          # the FC answers from its own thread, as PX4 does
        fc.send(fc.mav.heartbeat_encode(2, 12, 0, 0, 3))
        next(fc.frames(60.0))
        fc.drain()                          # it joins the running sim: the newest frames on
        while not stop.is_set():
            for m in fc.frames(0.2):
                if answer['value'] is not None:
                    _answer(fc, m, answer['value'])
                    answer['n'] += 1
                answer['last_us'] = m.time_usec
                break
    worker = threading.Thread(target=fc_loop, daemon=True)
    worker.start()

    def status_after(t_us):
        assert spin_until(node, ex, lambda: status and status[-1].sim_time.sec * 10**6 +
                          status[-1].sim_time.nanosec // 1000 >= t_us, 30.0)
        return status[-1]
    try:
        assert spin_until(node, ex, lambda: answer['n'] >= 100, 60.0), answer
        before = status_after(answer['last_us'])
        assert before.lockstep, before
        answer['value'] = math.nan          # from now on, only refused answers
        n0 = answer['n']
        assert spin_until(node, ex, lambda: answer['n'] >= n0 + 300, 60.0), answer
        # 300 refused answers, each released its step: no lockstep timeout for them (before:
        # one each, 300). A busy machine may still delay an answer past 1 s now and then.
        after = status_after(answer['last_us'])
        assert after.lockstep and after.lockstep_timeouts - before.lockstep_timeouts <= 5, after
        # the FC falls silent: after 3 timeouts in a row lockstep disengages, sensors run on
        answer['value'] = None
        assert spin_until(node, ex, lambda: not status[-1].lockstep, 30.0), status[-1]
        assert status[-1].lockstep_timeouts >= after.lockstep_timeouts + 3
        t_free = answer['last_us']
        assert spin_until(node, ex, lambda: answer['last_us'] > t_free + 1_000_000, 30.0)
        # and it answers again: lockstep engages again
        answer['value'] = 0.3
        assert spin_until(node, ex, lambda: status[-1].lockstep, 30.0), status[-1]
    finally:
        stop.set()
        worker.join(2.0)
    out = procs.output(bridge)
    assert 'HIL_ACTUATOR_CONTROLS rejected' in out
    assert 'lockstep disengaged' in out and 'lockstep engaged again' in out


@pytest.mark.parametrize('args', [['fc:=px4', 'px4_instance:=two'],
                                  ['fc:=px4', 'mission_link:=nonsense']])
def test_bad_px4_arguments_are_a_clear_error(args):
    r = subprocess.run([sys.executable, '-m', 'sim_launch.cli', 'launch', 'sim_quad_hil'] + args,
                       capture_output=True, text=True, timeout=120, cwd=str(PKG_DIR))
    assert r.returncode == 2, r.stdout[-2000:] + r.stderr[-2000:]
    assert 'px4_instance' in r.stderr or 'mission_link' in (r.stdout + r.stderr)
