"""A test peer that behaves as PX4 v1.16 SITL does towards a simulator, read from PX4's source.

Run as a process (`python px4_sitl.py --sim-port P --mavlink-port L --mavlink-remote R`), as
PX4 runs beside aerosim. What it reproduces, and where PX4 does it (PX4-Autopilot at v1.16):

Simulator link, src/modules/simulation/simulator_mavlink/SimulatorMavlink.cpp:
- a TCP client to the simulator's port (4560 + instance), retrying until it connects (run());
- exactly one HEARTBEAT at start (send(): `send_heartbeat()`, type 0, autopilot 12, base_mode
  128 if armed), then COMMAND_LONG SET_MESSAGE_INTERVAL(HIL_STATE_QUATERNION, 5000 us)
  (request_hil_state_quaternion());
- handle_message() takes HIL_SENSOR, HIL_GPS, HIL_STATE_QUATERNION, ... and nothing else:
  mission and command messages on this link are ignored;
- lockstep: HIL_SENSOR (id 0) sets PX4's clock to its time_usec (px4_clock_settime); every
  module runs on that clock, so PX4's own timeouts are in sim time;
- one HIL_ACTUATOR_CONTROLS per HIL_SENSOR (send_controls()): time_usec = hrt_absolute_time()
  (the sensor's time), controls = actuator outputs if armed else 0, mode = CUSTOM_MODE_ENABLED
  | SAFETY_ARMED if armed, flags = 1 (lockstep), from MAV_SYS_ID:MAV_COMP_ID.

MAVLink instance (UDP), src/modules/mavlink/mavlink_main.cpp, mavlink_receiver.cpp:
- bound to its local port, sending to 127.0.0.1:remote until a datagram arrives; the first
  sender (any, while the default partner is localhost) becomes the partner for good
  (`set_client_source_initialized`): replies go there, while messages from any address are
  still handled (MavlinkReceiver::run() does not filter them);
- HEARTBEAT stream at 1 Hz (PX4 clock): type QUADROTOR, autopilot PX4, base_mode CUSTOM |
  AUTO | STABILIZE | GUIDED (+ SAFETY_ARMED), custom_mode main AUTO, sub LOITER/MISSION,
  system_status UNINIT until the pre-flight checks pass, STANDBY, ACTIVE when armed
  (streams/HEARTBEAT.hpp); MAV_SYS_ID = instance + 1 (ROMFS init.d-posix/rcS).

Mission manager, src/modules/mavlink/mavlink_mission.cpp (MavlinkMissionManager):
- MISSION_COUNT to our system and component 1 / 190 / 0; a transfer in progress elsewhere:
  ACK ERROR; count 0: ACK ACCEPTED; else GETLIST, request item 0 (MISSION_REQUEST: `_int_mode`
  starts false; a MISSION_ITEM_INT switches it to MISSION_REQUEST_INT);
- an item of another sequence is ignored; the item is parsed as parse_mavlink_mission_item()
  does (global frames for NAV commands; RTL only in MAV_FRAME_MISSION, else UNSUPPORTED and the
  transfer ends); the last one: ACK ACCEPTED with the mission's CRC32 as opaque_id;
- in IDLE, the last item again (our ACK lost): ACK ACCEPTED again;
- the request is re-sent every 250 ms (MAVLINK_MISSION_RETRY_TIMEOUT_DEFAULT) and the transfer
  aborted after 5 s without a message (MAVLINK_MISSION_PROTOCOL_TIMEOUT_DEFAULT), PX4 clock.

Commander, src/modules/commander/Commander.cpp:
- COMPONENT_ARM_DISARM: ACCEPTED, or TEMPORARILY_REJECTED when the checks fail (in mission
  mode without a mission: `auto_mission_missing`);
- MISSION_START: DENIED without a valid mission ("Mission start denied! No valid mission"),
  DENIED if param1 is not a valid first item, else mission mode + arm: ACCEPTED;
- the user's intended mode at boot is AUTO_LOITER (Hold), UserModeIntention.hpp;
- armed on the ground without taking off: disarmed after COM_DISARM_PRFLT (10 s).

The flying itself is a built-in FC's core, told to wait for the mission start instead of
arming itself: mavlink_bridge.fc.Autopilot for the quad (airframe 4001-like, Quad X outputs
0..3), mavlink_bridge.fc.plane.PlaneFc with `--airframe plane`: PX4's SITL plane
(ROMFS/px4fmu_common/init.d-posix/airframes/1030_gazebo-classic_plane: rc.fw_defaults sets
MAV_TYPE 1, fixed wing, in HEARTBEAT; outputs 3 rudder, 4 left flap, 5 motor, 6/7 ailerons,
8 elevator, 9 right flap reversed: controls[2..8]).
"""

import argparse
from dataclasses import dataclass
import math
import os
import socket
import struct
import sys
import threading
import time
import zlib

from mavlink_bridge.core.mav import mavlink, new_mav, pack
from mavlink_bridge.fc.autopilot import DONE, WAIT, Autopilot, NavConfig
from mavlink_bridge.fc.control import Gains
from mavlink_bridge.fc.plane import PlaneFc

RETRY_US = 250_000          # MAVLINK_MISSION_RETRY_TIMEOUT_DEFAULT
PROTOCOL_TIMEOUT_US = 5_000_000
DISARM_PREFLIGHT_US = 10_000_000    # COM_DISARM_PRFLT
HOLD, MISSION_MODE = 3, 4           # PX4_CUSTOM_SUB_MODE_AUTO_LOITER / _MISSION
MAIN_AUTO = 4
MISSION_COMPONENTS = (1, mavlink.MAV_COMP_ID_MISSIONPLANNER, mavlink.MAV_COMP_ID_ALL)
GLOBAL_FRAMES = (mavlink.MAV_FRAME_GLOBAL, mavlink.MAV_FRAME_GLOBAL_RELATIVE_ALT)
GLOBAL_INT_FRAMES = (mavlink.MAV_FRAME_GLOBAL_INT, mavlink.MAV_FRAME_GLOBAL_RELATIVE_ALT_INT)
NAV_GLOBAL = (mavlink.MAV_CMD_NAV_WAYPOINT, mavlink.MAV_CMD_NAV_LOITER_UNLIM,
              mavlink.MAV_CMD_NAV_LOITER_TIME, mavlink.MAV_CMD_NAV_LAND,
              mavlink.MAV_CMD_NAV_TAKEOFF, mavlink.MAV_CMD_NAV_LOITER_TO_ALT)
NAV_NO_POSITION = (mavlink.MAV_CMD_NAV_RETURN_TO_LAUNCH, mavlink.MAV_CMD_NAV_DELAY)


@dataclass
class Item:
    """A stored mission item, as the Autopilot reads it (x, y degE7; z m)."""

    seq: int
    command: int
    frame: int
    param1: float
    param2: float
    param3: float
    param4: float
    x: int
    y: int
    z: float


class LinkStats:
    """Frames received per sender and the sequence gaps, as MAVProxy/mavutil count loss."""

    def __init__(self):
        """No frames yet."""
        self.last = {}
        self.frames = 0
        self.lost = 0

    def add(self, msg):
        """Count one decoded frame."""
        key = (msg.get_srcSystem(), msg.get_srcComponent())
        seq = msg.get_seq()
        if key in self.last:
            self.lost += (seq - self.last[key] - 1) % 256
        self.last[key] = seq
        self.frames += 1


class MissionManager:
    """PX4's MavlinkMissionManager, upload half (the simulator sends us the mission)."""

    def __init__(self, sysid: int, say):
        """sysid: ours; say(severity, text): a STATUSTEXT of ours."""
        self.sysid = sysid
        self.say = say
        self.state = 'idle'
        self.int_mode = False
        self.partner = None
        self.count = 0
        self.seq = 0
        self.items = []
        self.crc = 0
        self.mission = []           # the accepted mission
        self.mission_crc = 0
        self.requests = 0
        self.rerequests = 0
        self.accepted = 0
        self.last_sent_us = 0
        self.last_recv_us = 0

    def _for_me(self, m) -> bool:
        return m.target_system == self.sysid and m.target_component in MISSION_COMPONENTS

    def _ack(self, mav, target, result, opaque=0):
        # PX4 puts the mission's CRC32 in opaque_id; pymavlink's common dialect here predates
        # that extension field, so the ACK goes out without it (receivers ignore it)
        return mav.mission_ack_encode(target[0], target[1], result,
                                      mavlink.MAV_MISSION_TYPE_MISSION)

    def _request(self, mav, now_us):
        self.last_sent_us = now_us
        self.requests += 1
        enc = mav.mission_request_int_encode if self.int_mode else mav.mission_request_encode
        return enc(self.partner[0], self.partner[1], self.seq, mavlink.MAV_MISSION_TYPE_MISSION)

    def on_count(self, mav, m, now_us):
        """MISSION_COUNT: handle_mission_count()."""
        if not self._for_me(m):
            return []
        src = (m.get_srcSystem(), m.get_srcComponent())
        if self.state == 'idle':
            self.last_recv_us = now_us
            if m.mission_type != mavlink.MAV_MISSION_TYPE_MISSION:
                return [self._ack(mav, src, mavlink.MAV_MISSION_UNSUPPORTED)]
            self.partner = src
            if m.count == 0:
                self.mission, self.mission_crc = [], 0
                return [self._ack(mav, src, mavlink.MAV_MISSION_ACCEPTED)]
            self.state, self.seq, self.count, self.items, self.crc = 'getlist', 0, m.count, [], 0
        elif self.state == 'getlist':
            self.last_recv_us = now_us
            if src != self.partner:
                return [self._ack(mav, src, mavlink.MAV_MISSION_ERROR)]
            if self.seq != 0:
                self.say(mavlink.MAV_SEVERITY_CRITICAL, 'WPM: REJ. CMD: Busy')
                return [self._ack(mav, self.partner, mavlink.MAV_MISSION_ERROR)]
        return [self._request(mav, now_us)]

    def _parse(self, m):
        """parse_mavlink_mission_item(): an Item, or the MAV_MISSION_RESULT that refuses it."""
        if m.frame in GLOBAL_FRAMES or (self.int_mode and m.frame in GLOBAL_INT_FRAMES):
            if m.frame in GLOBAL_INT_FRAMES:
                self.int_mode = True
            if m.command not in NAV_GLOBAL:
                return mavlink.MAV_MISSION_UNSUPPORTED
            x, y = (int(m.x), int(m.y)) if self.int_mode else \
                (int(round(m.x * 1e7)), int(round(m.y * 1e7)))
        elif m.frame == mavlink.MAV_FRAME_MISSION:
            if m.command not in NAV_NO_POSITION:
                return mavlink.MAV_MISSION_UNSUPPORTED
            x = y = 0
        else:
            return mavlink.MAV_MISSION_UNSUPPORTED_FRAME
        return Item(m.seq, m.command, m.frame, m.param1, m.param2, m.param3, m.param4, x, y,
                    float(m.z))

    def on_item(self, mav, m, now_us):
        """MISSION_ITEM / MISSION_ITEM_INT: handle_mission_item_both()."""
        self.int_mode = m.get_type() == 'MISSION_ITEM_INT'
        if not self._for_me(m):
            return []
        src = (m.get_srcSystem(), m.get_srcComponent())
        if src != self.partner:
            self.say(mavlink.MAV_SEVERITY_CRITICAL, 'REJ. MIS ITEM: partner id mismatch')
            return []
        if m.mission_type != mavlink.MAV_MISSION_TYPE_MISSION:
            return [self._ack(mav, src, mavlink.MAV_MISSION_ERROR)]
        if self.state == 'idle':
            if self.seq == m.seq + 1:       # the last item again: our ACK was lost
                return [self._ack(mav, src, mavlink.MAV_MISSION_ACCEPTED, self.crc)]
            self.say(mavlink.MAV_SEVERITY_CRITICAL, 'IGN MISSION_ITEM: No transfer')
            return [self._ack(mav, src, mavlink.MAV_MISSION_ERROR)]
        self.last_recv_us = now_us
        if m.seq != self.seq:
            if m.seq < self.seq:
                self.rerequests += 1
            return []                        # not the expected item: ignored
        item = self._parse(m)
        if not isinstance(item, Item):
            self.say(mavlink.MAV_SEVERITY_CRITICAL, 'IGN MISSION_ITEM: Invalid item')
            self.state = 'idle'
            return [self._ack(mav, src, item)]
        self.crc = zlib.crc32(struct.pack('<HHffffiif', item.command, item.frame, item.param1,
                                          item.param2, item.param3, item.param4, item.x, item.y,
                                          item.z), self.crc)
        self.items.append(item)
        self.seq = m.seq + 1
        if self.seq < self.count:
            return [self._request(mav, now_us)]
        self.state = 'idle'
        self.mission, self.mission_crc = list(self.items), self.crc
        self.accepted += 1
        return [self._ack(mav, src, mavlink.MAV_MISSION_ACCEPTED, self.crc)]

    def tick(self, mav, now_us):
        """MavlinkMissionManager::send(): re-request after 250 ms, give up after 5 s."""
        if self.state == 'getlist' and now_us - self.last_sent_us > RETRY_US:
            return [self._request(mav, now_us)]
        if self.state != 'idle' and now_us - self.last_recv_us > PROTOCOL_TIMEOUT_US:
            self.say(mavlink.MAV_SEVERITY_CRITICAL, 'Operation timeout')
            self.state = 'idle'
        return []


class Px4Sitl:
    """The simulator link, the MAVLink instance, commander and mission manager; see above."""

    def __init__(self, sim_port: int, mav_port: int, mav_remote: int, sysid: int = 1,
                 host: str = '127.0.0.1', airframe: str = 'quad'):
        """sim_port: the simulator's TCP port; mav_port / mav_remote: the instance's ports.

        airframe: quad or plane (the FC core flying, its outputs and MAV_TYPE).
        """
        self.sysid = sysid
        self.sim_addr = (host, sim_port)
        self.sim = new_mav(sysid, 1)
        self.gcs = new_mav(sysid, 1)
        self.sim.robust_parsing = self.gcs.robust_parsing = True
        self.udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.udp.bind((host, mav_port))
        self.partner = (host, mav_remote)
        self.partner_locked = False
        self.plane = airframe == 'plane'
        self.ap = PlaneFc(auto_arm=False) if self.plane else \
            Autopilot(Gains(hover_thrust=0.52), NavConfig(auto_arm=False))
        self.mav_type = mavlink.MAV_TYPE_FIXED_WING if self.plane else \
            mavlink.MAV_TYPE_QUADROTOR
        self.mm = MissionManager(sysid, self.say)
        self.lock = threading.Lock()        # the FC's state (both receive threads)
        self.tx_lock = threading.Lock()     # the instance link's sender (sequence numbers)
        self.tcp = None
        self.now_us = 0
        self.armed = False
        self.sub_mode = HOLD
        self.armed_at_us = None
        self.landed = False
        self.next_hb_us = 0
        self.sim_stats, self.mav_stats = LinkStats(), LinkStats()
        self.counts = {'hil_sensor': 0, 'answers': 0, 'ignored_on_sim_link': 0, 'arm_denied': 0,
                       'start_denied': 0, 'commands': 0}
        self.log = []
        self.stop = threading.Event()

    # --- output ----------------------------------------------------------------------------------
    def say(self, severity: int, text: str):
        """STATUSTEXT on the MAVLink instance (and our log)."""
        self.log.append(text)
        self._udp_send(self.gcs.statustext_encode(severity, text.encode()[:50]))

    def _udp_send(self, *msgs):
        with self.tx_lock:
            data = b''.join(pack(self.gcs, m) for m in msgs)
            if data:
                self.udp.sendto(data, self.partner)

    def _heartbeat(self):
        base = mavlink.MAV_MODE_FLAG_CUSTOM_MODE_ENABLED | mavlink.MAV_MODE_FLAG_AUTO_ENABLED \
            | mavlink.MAV_MODE_FLAG_STABILIZE_ENABLED | mavlink.MAV_MODE_FLAG_GUIDED_ENABLED
        if self.armed:
            base |= mavlink.MAV_MODE_FLAG_SAFETY_ARMED
            status = mavlink.MAV_STATE_ACTIVE
        else:
            status = mavlink.MAV_STATE_STANDBY if self.ap.ready else mavlink.MAV_STATE_UNINIT
        custom = (MAIN_AUTO << 16) | (self.sub_mode << 24)
        return self.gcs.heartbeat_encode(self.mav_type, mavlink.MAV_AUTOPILOT_PX4, base, custom,
                                         status)

    # --- simulator link (TCP) ----------------------------------------------------------------
    def connect(self, timeout_s: float = 60.0):
        """Connect to the simulator as PX4 does, then say hello once."""
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                self.tcp = socket.create_connection(self.sim_addr, timeout=1.0)
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.05)
        self.tcp.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        hb = self.sim.heartbeat_encode(0, mavlink.MAV_AUTOPILOT_PX4, 0, 0, 0)
        cmd = self.sim.command_long_encode(0, 0, mavlink.MAV_CMD_SET_MESSAGE_INTERVAL, 0,
                                           mavlink.MAVLINK_MSG_ID_HIL_STATE_QUATERNION, 5000.0,
                                           0, 0, 0, 0, 0)
        self.tcp.sendall(pack(self.sim, hb) + pack(self.sim, cmd))

    def run_sim_link(self):
        """Receive loop of the simulator link until the simulator closes it."""
        self.tcp.settimeout(0.2)
        while not self.stop.is_set():
            try:
                data = self.tcp.recv(65536)
            except socket.timeout:
                continue
            except OSError:
                return
            if not data:
                return
            for m in self.sim.parse_buffer(data) or []:
                if m.get_type() == 'BAD_DATA':
                    continue
                self.sim_stats.add(m)
                t = m.get_type()
                if t == 'HIL_SENSOR':
                    self._hil_sensor(m)
                elif t == 'HIL_GPS':
                    with self.lock:
                        self.ap.hil_gps(m)
                elif t not in ('HIL_STATE_QUATERNION',):
                    self.counts['ignored_on_sim_link'] += 1

    def _hil_sensor(self, m):
        with self.lock:
            self.now_us = m.time_usec            # px4_clock_settime
            thr = self.ap.hil_sensor(m)
            if self.armed and not self.ap.armed and self.ap.phase != WAIT:
                self.armed = False               # landed: the land detector disarmed
                self.landed = True
                self.sub_mode = HOLD
            if self.armed and self.ap.phase == WAIT and self.armed_at_us is not None \
                    and self.now_us - self.armed_at_us > DISARM_PREFLIGHT_US:
                self.armed = False
                self.say(mavlink.MAV_SEVERITY_INFO, 'Disarmed by auto preflight disarming')
            controls = list(thr) if self.armed else [0.0] * len(thr)
            controls += [0.0] * (16 - len(controls))
            mode = mavlink.MAV_MODE_FLAG_CUSTOM_MODE_ENABLED | (
                mavlink.MAV_MODE_FLAG_SAFETY_ARMED if self.armed else 0)
            out = self.sim.hil_actuator_controls_encode(self.now_us, controls, mode, 1)
            self.counts['hil_sensor'] += 1
            self.counts['answers'] += 1
            tick = self.mm.tick(self.gcs, self.now_us)
            hb = None
            if self.now_us >= self.next_hb_us:
                self.next_hb_us = self.now_us + 1_000_000
                hb = self._heartbeat()
        self.tcp.sendall(pack(self.sim, out))
        self._udp_send(*tick, *([hb] if hb else []))

    # --- MAVLink instance (UDP) ---------------------------------------------------------------
    def run_mavlink(self):
        """Receive loop of the MAVLink instance."""
        self.udp.settimeout(0.2)
        while not self.stop.is_set():
            try:
                data, addr = self.udp.recvfrom(65536)
            except socket.timeout:
                continue
            except OSError:
                return
            # the first sender is the partner for good (replies go there); datagrams from
            # anyone are still handled (mavlink_receiver.cpp does not filter by address)
            if not self.partner_locked:
                self.partner, self.partner_locked = addr, True
            for m in self.gcs.parse_buffer(data) or []:
                if m.get_type() != 'BAD_DATA':
                    self.mav_stats.add(m)
                    self._on_gcs_message(m)

    def _on_gcs_message(self, m):
        t = m.get_type()
        with self.lock:
            now = self.now_us
            if t == 'MISSION_COUNT':
                out = self.mm.on_count(self.gcs, m, now)
            elif t in ('MISSION_ITEM', 'MISSION_ITEM_INT'):
                out = self.mm.on_item(self.gcs, m, now)
                if self.mm.mission and self.mm.state == 'idle':
                    self.ap.set_mission(self.mm.mission)
            elif t == 'COMMAND_LONG' and m.target_system in (0, self.sysid):
                out = [self._command(m)]
            else:
                out = []
        self._udp_send(*out)

    def _command(self, m):
        """Commander::handle_command() for the commands a simulator may send."""
        self.counts['commands'] += 1
        ok, tmp, denied = (mavlink.MAV_RESULT_ACCEPTED, mavlink.MAV_RESULT_TEMPORARILY_REJECTED,
                           mavlink.MAV_RESULT_DENIED)
        if m.command == mavlink.MAV_CMD_COMPONENT_ARM_DISARM:
            if round(m.param1) == 1:
                result = ok if self._arm() else tmp
            elif round(m.param1) == 0:
                self.armed, self.armed_at_us = False, None
                result = ok
            else:
                result = denied
        elif m.command == mavlink.MAV_CMD_MISSION_START:
            if not self.mm.mission:
                self.say(mavlink.MAV_SEVERITY_CRITICAL, 'Mission start denied! No valid mission')
                self.counts['start_denied'] += 1
                result = denied
            elif not (math.isfinite(m.param1) and -1 <= m.param1 < len(self.mm.mission)):
                result = denied
            else:
                self.sub_mode = MISSION_MODE
                if self.ap.phase == WAIT:           # the navigator reads the stored mission
                    self.ap.set_mission(self.mm.mission)
                if self._arm() and self.ap.start():
                    result = ok
                else:
                    result = tmp
        else:
            result = mavlink.MAV_RESULT_UNSUPPORTED
        return self.gcs.command_ack_encode(m.command, result, 0, 0, m.get_srcSystem(),
                                           m.get_srcComponent())

    def _arm(self) -> bool:
        if self.armed:
            return True
        if not self.ap.ready or (self.sub_mode == MISSION_MODE and not self.mm.mission):
            self.counts['arm_denied'] += 1
            self.say(mavlink.MAV_SEVERITY_CRITICAL, 'Arming denied: Resolve system health '
                     'failures first')
            return False
        self.armed, self.armed_at_us = True, self.now_us
        return True

    def report(self) -> str:
        """One line of counts for the test to read."""
        c = self.counts
        return (f'PX4SITL hil_sensor={c["hil_sensor"]} answers={c["answers"]} '
                f'sim_frames={self.sim_stats.frames} sim_lost={self.sim_stats.lost} '
                f'mav_frames={self.mav_stats.frames} mav_lost={self.mav_stats.lost} '
                f'mission_accepted={self.mm.accepted} requests={self.mm.requests} '
                f'int_mode={int(self.mm.int_mode)} commands={c["commands"]} '
                f'arm_denied={c["arm_denied"]} start_denied={c["start_denied"]} '
                f'ignored_on_sim_link={c["ignored_on_sim_link"]} '
                f'done={int(self.ap.phase == DONE or self.landed)}')


def main(argv=None):
    """Run the peer until the simulator closes the link (or SIGINT); print the report."""
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--sim-port', type=int, default=4560)
    ap.add_argument('--mavlink-port', type=int, default=14280)
    ap.add_argument('--mavlink-remote', type=int, default=14030)
    ap.add_argument('--sysid', type=int, default=1)
    ap.add_argument('--airframe', choices=('quad', 'plane'), default='quad')
    a = ap.parse_args(argv)
    px4 = Px4Sitl(a.sim_port, a.mavlink_port, a.mavlink_remote, a.sysid, airframe=a.airframe)
    threading.Thread(target=px4.run_mavlink, daemon=True).start()
    try:
        px4.connect()
        print(f'PX4SITL connected to {a.sim_port}', flush=True)
        px4.run_sim_link()
    except KeyboardInterrupt:
        pass
    finally:
        px4.stop.set()
        for line in px4.log + px4.ap.events:
            print(f'PX4SITL says: {line}')
        print(px4.report(), flush=True)
    return 0


if __name__ == '__main__':
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    sys.exit(main())
