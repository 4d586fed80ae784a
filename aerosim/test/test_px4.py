"""PX4 v1.16 as the flight controller: the mission on PX4's MAVLink instance, flown.

The PX4 stand-in is px4_sitl.py, written from PX4's own source (see its docstring and its
modules' for the files and functions it follows). These graph tests run it as a process
against `aerosim launch sim_quad_hil fc:=px4` (and sim_plane_hil): missions flown, a fleet,
its real-time threads, a ground station on its GCS link, an FC that will not arm. Its mission
manager and commander alone: test_px4_protocol.py; the bridge alone against a pymavlink FC:
test_px4_lockstep.py.
"""

import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time

import pytest

from mavlink_bridge.core.fc_params import load_params
from mavlink_bridge.core.mav import mavlink, new_mav, pack
from sim_core.realtime import fifo_permitted, fifo_threads

from conftest import DEADLINE_SCALE, PKG_DIR, free_ports, output_lines, wait_line
from px4_sitl import source

HERE = os.path.dirname(os.path.abspath(__file__))


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
    summary = json.loads((tmp_path / 'latest' / 'summary.json').read_text())
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
    # all 26 asked to stop: at once, or in batches as they are heard (each line says how many
    # in all; a loaded machine hears some streams seconds after the others)
    assert re.search(r'asked to stop \d+ streams on the mission link .*; 26 in all\)', out), out
    # one vehicle on the ground station: PX4 itself (the stranger shows the filter works)
    assert gcs.qgc_vehicles() == {1, 77}, gcs.frames[-20:]
    assert gcs.mavsdk_systems() == {1, 77}
    assert not any(s == 51 for _, s, _, _ in gcs.frames)      # nothing of ours went there


def quick_px4_graph(procs, tmp_path, peer_args, *extra):
    """The stand-in (peer_args) and sim_quad_hil fc:=px4 until the mission started.

    Returns (peer, runner, lines, world_plant's pid).
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
    pid = int(re.search(r'started world_plant \(pid (\d+)\)', ''.join(lines)).group(1))
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
    s = json.loads((tmp_path / 'latest' / 'summary.json').read_text())
    assert s['vehicles_complete'] == 2, s
    # the copies are placed so that their paths keep 3 m apart (two real PX4s flying copies
    # 5 m apart east met in mid-air at 2.3 m/s, and the report said complete)
    ca = s['vehicles']['quad0']['closest_approach']
    assert ca is not None and ca['with'] == 'quad1' and ca['distance_m'] >= 3.0, ca
    assert s['collided'] == [], s
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
    summary = json.loads((tmp_path / 'latest' / 'summary.json').read_text())
    plane = summary['vehicles']['plane']
    assert summary['result'] == 'complete' and plane['details']['items_flown'] == 6, summary
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
    assert plane['details']['landing']['verdict'] == 'landed', plane['details']['landing']


def test_a_px4_that_will_not_arm_is_reported_with_its_reason_and_ends_the_run(procs, tmp_path):
    """Airframe 1030 as it is (a parameter file setting nothing): NAV_DLL_ACT 2 wants a GCS.

    (px4_params:= means the vehicle's own file now, c172r for a plane: an empty file keeps
    the airframe's values.)

    PX4 is never ready (its checks fail: no GCS), refuses to arm and says why in its events;
    the bridge asks anyway after autostart_ready_s (5 s), logs the refusal with PX4's reason,
    gives up after autostart_timeout_s (30 s of sim time) and the run ends with the reason.
    """
    tcp = free_ports(1)
    mav = free_ports(2)
    peer = px4_peer(procs, tcp, mav, mav + 1, airframe='plane')
    nothing = tmp_path / 'nothing.params'
    nothing.write_text('# no parameter set: the airframe as it is\n')
    run, lines = px4_graph(procs, 'sim_plane_hil', tmp_path, tcp, mav, mav + 1,
                           f'px4_params:={nothing}')
    assert run.wait(300 * DEADLINE_SCALE) == 1, ''.join(lines[-40:])
    out = ''.join(lines)
    s = json.loads((tmp_path / 'latest' / 'summary.json').read_text())
    v = s['vehicles']['plane']
    assert s['result'] == 'incomplete' and v['result'] == 'fc_refused', s
    assert 'No connection to the ground control station' in v['fc_failure'], v['fc_failure']
    assert 'the FC would not arm within 30 s of taking the mission: arm refused ' \
        '(TEMPORARILY_REJECTED)' in v['fc_failure']
    assert s['sim_time_s'] < 60.0                  # said within seconds, not after 900 s
    assert 'FC 1:1 says: check: No connection to the ground control station' in out
    assert 'FC 1:1 says: Arming denied: Resolve system health failures first' in out
    assert 'autostart: arm refused (TEMPORARILY_REJECTED)' in out
    assert '[ERROR]' in out and 'the flight controller will not fly' in out
    assert peer.wait(30) == 0
    r = report_of(procs.text(peer))
    assert r['arm_denied'] > 1 and r['param_sets'] == 0


@pytest.mark.parametrize('args', [['fc:=px4', 'px4_instance:=two'],
                                  ['fc:=px4', 'mission_link:=nonsense']])
def test_bad_px4_arguments_are_a_clear_error(args):
    r = subprocess.run([sys.executable, '-m', 'sim_launch.cli', 'launch', 'sim_quad_hil'] + args,
                       capture_output=True, text=True, timeout=120, cwd=str(PKG_DIR))
    assert r.returncode == 2, r.stdout[-2000:] + r.stderr[-2000:]
    assert 'px4_instance' in r.stderr or 'mission_link' in (r.stdout + r.stderr)
