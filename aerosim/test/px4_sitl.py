"""A test peer that behaves as PX4 v1.16 SITL does towards a simulator, read from PX4's source.

Run as a process (`python px4_sitl.py --sim-port P --mavlink-port L --mavlink-remote R
[--gcs-port G --gcs-remote 14550]`), as PX4 runs beside aerosim. What it reproduces, and where
PX4 does it (PX4-Autopilot at v1.16):

Simulator link, src/modules/simulation/simulator_mavlink/SimulatorMavlink.cpp:
- a TCP client to the simulator's port (4560 + instance), retrying until it connects (run());
- PX4's MAVLink instances start only after the first HIL_SENSOR set the lockstep clock (rcS:
  simulator_mavlink, then px4-rc.mavlink; PX4 v1.16 logs "setting initial absolute time"
  before its first "[mavlink] mode: ..."): datagrams to its MAVLink ports before that are lost;
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

MAVLink links (UDP), src/modules/mavlink/mavlink_main.cpp, mavlink_receiver.cpp, px4-rc.mavlink:
- the onboard payload link (14280 + i -> 14030 + i) and, with --gcs-port, the GCS link
  (18570 + i -> 14550), both with forwarding (-f); bound to the local port, sending to the
  remote until a datagram arrives; the first sender becomes the partner for good;
- forwarding (Mavlink::forward_message): a message received on a link goes to every other
  forwarding link, unless it targets this system's component 1 (kept), unless it is a
  HEARTBEAT and MAV_HB_FORW_EN is 0, and only to a link where its target was seen before
  (component_was_seen: a broadcast needs any component heard there);
- HEARTBEAT at 1 Hz on every link (PX4 clock): type QUADROTOR or FIXED_WING, autopilot PX4,
  base_mode CUSTOM | AUTO | STABILIZE | GUIDED (+ SAFETY_ARMED), custom_mode main AUTO, sub
  LOITER/MISSION, system_status STANDBY when the pre-flight checks pass, else UNINIT; ACTIVE
  when armed (streams/HEARTBEAT.hpp); MAV_SYS_ID = instance + 1 (init.d-posix/rcS);
- STATUSTEXT only on a link where a HEARTBEAT of MAV_TYPE_GCS was heard within 3 s
  (streams/STATUSTEXT.hpp, is_gcs_connected()); every message also goes out as its event on
  every link (px4_events: EVENT, CURRENT_EVENT_SEQUENCE, REQUEST_EVENT; COMPONENT_METADATA and
  MAVLink FTP for the texts);
- parameters: PARAM_SET -> PARAM_VALUE, unknown names and other types unanswered (px4_params);
- the payload link's telemetry: onboard mode (configure_streams_to_default), each stream at
  its rate scaled to the link's 4000 B/s (update_rate_mult), one message per datagram, on PX4's
  clock; MAV_CMD_SET_MESSAGE_INTERVAL on that link sets or stops a stream (Streams).

Scheduling and cost, as PX4 SITL runs: with --realtime the simulator link thread runs
SCHED_FIFO 99, as PX4 started as root runs sim_rcv and its work queues (tasks.cpp; a normal
thread where not permitted, as PX4 falls back), while it waits for and answers a step; the
Python FC core, a cost PX4 does not have, runs at normal priority (Px4Sitl._fifo). PX4 v1.16
answers a HIL_SENSOR ~50 µs after it was sent (bench/bench_px4.py measures it), the Python FC
core here takes ~150 µs more: with --step-cost-us the stand-in answers each HIL_SENSOR that
long after it came in, with the outputs it computed from the previous one, and runs its FC
core after the answer (one step of extra control delay), so that its speed predicts the real
one's; without, it answers as PX4 does, from this step's sensors, as soon as it has them.

Mission manager, src/modules/mavlink/mavlink_mission.cpp (MavlinkMissionManager):
- MISSION_COUNT to our system and component 1 / 190 / 0; a transfer in progress elsewhere:
  ACK ERROR; count 0: ACK ACCEPTED; else GETLIST, request item 0 (MISSION_REQUEST: `_int_mode`
  starts false; a MISSION_ITEM_INT switches it to MISSION_REQUEST_INT);
- an item of another sequence is ignored; the item is parsed as parse_mavlink_mission_item()
  does (global frames for NAV commands; RTL only in MAV_FRAME_MISSION, else UNSUPPORTED and the
  transfer ends); the last one: ACK ACCEPTED with the mission's CRC32 as opaque_id;
- in IDLE, the last item again (our ACK lost): ACK ACCEPTED again;
- the request is re-sent every 250 ms (MAVLINK_MISSION_RETRY_TIMEOUT_DEFAULT) and the transfer
  aborted after 5 s without a message (MAVLINK_MISSION_PROTOCOL_TIMEOUT_DEFAULT), PX4 clock;
- the navigator checks a new mission (px4_params.feasibility: MIS_TKO_LAND_REQ, the
  fixed-wing landing's glide slope against FW_LND_ANG) and says why one is rejected.

Commander, src/modules/commander/Commander.cpp, HealthAndArmingChecks:
- the checks (reported as events when they change, and on an arming request): no global
  position estimate yet; no ground station (gcs_connection_lost: no GCS HEARTBEAT on any link
  within COM_DL_LOSS_T) blocks arming when NAV_DLL_ACT > 0 (rcAndDataLinkCheck.cpp); mission
  mode without a valid mission;
- COMPONENT_ARM_DISARM: ACCEPTED ("Armed by external command"), or TEMPORARILY_REJECTED when a
  check blocks ("Arming denied: Resolve system health failures first");
- MISSION_START: DENIED without a valid mission ("Mission start denied! No valid mission"),
  DENIED if param1 is not a valid first item, else mission mode + arm: ACCEPTED;
- the user's intended mode at boot is AUTO_LOITER (Hold), UserModeIntention.hpp;
- armed on the ground without taking off: disarmed after COM_DISARM_PRFLT (10 s; the fixed
  wing defaults disable it).

Precision landing (a land item's `deck:`, NAV_LAND param2 = 2):
- the simulator link's LANDING_TARGET (handle_message_landing_target): position_valid 1 is
  dropped with "Only landing targets relative to captured images are supported"; else angle_x
  / angle_y become irlock_report pos_x / pos_y (tangents; distance, frame, time ignored);
- DISTANCE_SENSOR (publish_distance_topic): cm -> m; only orientation PITCH_270 (downward)
  feeds EKF2's terrain estimate (dist_bottom, valid while readings in [min, max] come within
  2 x EKF2's RNG_MAX_INTERVAL 0.2 s); signal_quality 1 means invalid;
- landing_target_estimator runs only when started (airframe 1011 or `landing_target_estimator
  start`: --landing-target-estimator here); it converts an irlock_report only with a valid
  dist_bottom: the ray (pos_x, pos_y, 1) turned by LTEST_SENS_ROT (2: yaw 90, body forward =
  -pos_y, right = pos_x) and the attitude, scaled to dist_bottom (LandingTargetEstimator.cpp);
- navigator's precland (precland.cpp): the target's position, no velocity feed-forward; the
  descent once within PLD_HACC_RAD for 2 s, then for good (DescendAboveTarget); the land
  detector on the ground speed under LNDMC_XY_VEL_MAX (MulticopterLandDetector.cpp). The FC core
  flies this with NavConfig's PX4 options (mavlink_bridge.fc.autopilot).
  Not reproduced: a real PX4 v1.16 does not take off from a deck that is already moving (its
  takeoff holds the point where it began; held level by the deck it demanded a 45 deg tilt,
  saturated two motors and stayed on the deck, checked by hand); this stand-in lifts off.
  config/scenarios/deck_landing_px4.yaml has the boat wait for the takeoff.

The flying itself is a built-in FC's core, told to wait for the mission start instead of
arming itself: mavlink_bridge.fc.Autopilot for the quad (airframe 10016 none_iris, Quad X
outputs 0..3), mavlink_bridge.fc.plane.PlaneFc with `--airframe plane`: PX4's SITL plane
(ROMFS/px4fmu_common/init.d-posix/airframes/1030_gazebo-classic_plane: rc.fw_defaults sets
MAV_TYPE 1, fixed wing, in HEARTBEAT; outputs 3 rudder, 4 left flap, 5 motor, 6/7 ailerons,
8 elevator, 9 right flap reversed: controls[2..8]), its motor limited to FW_THR_MAX (0.6 in
airframe 1030) as the fixed-wing controllers limit it.
"""

import argparse
import collections
from dataclasses import dataclass
import math
import os
import socket
import struct
import sys
import threading
import time
from typing import Optional
import zlib

import px4_events
from px4_params import PARAMS, Params, feasibility, to_wire

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
GCS_TIMEOUT_US = 3_000_000          # telemetry_status_s::HEARTBEAT_TIMEOUT_US
PLANE_THROTTLE = 4                  # controls[] of airframe 1030's motor (output 5)
SEVERITY_LEVEL = {mavlink.MAV_SEVERITY_CRITICAL: 'critical', mavlink.MAV_SEVERITY_ERROR: 'error',
                  mavlink.MAV_SEVERITY_WARNING: 'warning', mavlink.MAV_SEVERITY_INFO: 'info'}
ARM_REASONS = {4: 'external command', 5: 'mission start'}     # arm_disarm_reason_t
REALTIME_PRIORITY = 99      # PX4 SITL as root: sim_rcv and the work queue threads (wq:manager)


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
        """Count one decoded frame (an UNKNOWN_ one by its frame's header)."""
        key = source(msg)
        seq = msg.get_msgbuf()[4] if msg.get_type().startswith('UNKNOWN_') else msg.get_seq()
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


# The onboard-mode streams of PX4's payload link that a SITL quad has data for, at their
# configured rates [Hz] (mavlink_main.cpp, configure_streams_to_default, MAVLINK_MODE_ONBOARD;
# these are the ones v1.16 sent aerosim there). GPS_RAW_INT is "unlimited": every GPS update.
ONBOARD_STREAMS = {
    'TIMESYNC': 10.0, 'HIGHRES_IMU': 50.0, 'LOCAL_POSITION_NED': 30.0, 'ATTITUDE': 100.0,
    'ALTITUDE': 10.0, 'ODOMETRY': 30.0, 'ATTITUDE_QUATERNION': 50.0, 'ATTITUDE_TARGET': 10.0,
    'BATTERY_STATUS': 0.5, 'ESTIMATOR_STATUS': 1.0, 'EXTENDED_SYS_STATE': 5.0,
    'GLOBAL_POSITION_INT': 50.0, 'GPS_GLOBAL_ORIGIN': 1.0, 'GPS_RAW_INT': 10.0,
    'HOME_POSITION': 0.5, 'OPEN_DRONE_ID_LOCATION': 1.0, 'OPEN_DRONE_ID_SYSTEM': 1.0,
    'PING': 1.0, 'POSITION_TARGET_GLOBAL_INT': 10.0, 'POSITION_TARGET_LOCAL_NED': 10.0,
    'SCALED_PRESSURE': 1.0, 'SERVO_OUTPUT_RAW': 10.0, 'SYS_STATUS': 5.0, 'SYSTEM_TIME': 1.0,
    'VFR_HUD': 10.0, 'VIBRATION': 0.5,
}
CONST_RATE = ('PING',)              # const_rate() streams: not scaled to the data rate
PAYLOAD_DATARATE = 4000             # B/s: `mavlink start ... -r 4000` (px4-rc.mavlink)
NON_PAYLOAD_BYTES = 12              # MAVLINK_NUM_NON_PAYLOAD_BYTES (v2 header + checksum)


def filler_message(name: str):
    """A pymavlink message of that name with every field 1 (or 'x').

    Telemetry whose content no receiver here reads; not zeros: MAVLink 2 drops a payload's
    trailing zeros, and the frames would be shorter than PX4's.
    """
    cls = getattr(mavlink, f'MAVLink_{name.lower()}_message')
    lengths = dict(zip(cls.ordered_fieldnames, cls.array_lengths))
    args = []
    for field, ctype in zip(cls.fieldnames, cls.fieldtypes):
        n = lengths[field]
        if ctype == 'char':
            args.append(b'x' * max(n, 1))
        else:
            args.append([1] * n if n else 1)
    return cls(*args)


class Streams:
    """A PX4 MAVLink instance's telemetry streams (mavlink_stream.cpp, mavlink_main.cpp).

    Each stream is due every 1/rate s of PX4's clock, its interval divided by the link's rate
    multiplier unless it is constant-rate (Mavlink::update_rate_mult: the data rate over the
    streams' bytes per second, at most 1 without flow control; sizes are the full messages,
    get_size()). One message per datagram (send_start/send_finish). set_interval() is
    MavlinkReceiver::set_message_interval on this link: interval < 0 stops the stream, 0
    restores its default, > 0 sets it [µs]; HEARTBEAT, param3/param4/param7 set, or no such
    stream: refused (MAV_RESULT_FAILED).
    """

    def __init__(self, rates: dict, datarate: float):
        """rates: stream name -> Hz; datarate: the link's B/s."""
        self.default = dict(rates)
        self.rates = dict(rates)
        self.datarate = datarate
        self.ids = {getattr(mavlink, f'MAVLINK_MSG_ID_{n}'): n for n in rates}
        self.msgs = {n: filler_message(n) for n in rates}
        self.sizes = {n: m.unpacker.size + NON_PAYLOAD_BYTES for n, m in self.msgs.items()}
        self.last_us = dict.fromkeys(rates, 0)
        self.sent = collections.Counter()
        self.mult = 1.0
        self._rate_mult()

    def _rate_mult(self):
        scaled = sum(self.sizes[n] * r for n, r in self.rates.items()
                     if r > 0 and n not in CONST_RATE)
        const = sum(self.sizes[n] * r for n, r in self.rates.items()
                    if r > 0 and n in CONST_RATE)
        self.mult = min(1.0, (self.datarate - const) / scaled) if scaled > 0 else 1.0

    def due(self, now_us: int) -> list:
        """The messages due at PX4 time now_us (MavlinkStream::update).

        On time, the next one is due an interval after the last deadline: the average holds.
        """
        out = []
        for n, rate in self.rates.items():
            if rate <= 0.0:
                continue
            interval = 1e6 / rate / (1.0 if n in CONST_RATE else self.mult)
            dt = now_us - self.last_us[n]
            if dt >= interval:
                self.last_us[n] = self.last_us[n] + interval if dt < 1.5 * interval else now_us
                self.sent[n] += 1
                out.append(self.msgs[n])
        return out

    def set_interval(self, msgid: int, interval_us: float, p3: float, p4: float,
                     p7: float) -> bool:
        """MAV_CMD_SET_MESSAGE_INTERVAL on this link: True if done."""
        if msgid == mavlink.MAVLINK_MSG_ID_HEARTBEAT or msgid not in self.ids:
            return False
        if any(math.isfinite(p) and int(p + 0.5) != 0 for p in (p3, p4, p7)):
            return False
        n = self.ids[msgid]
        self.rates[n] = 0.0 if interval_us < -1e-5 else \
            1e6 / interval_us if interval_us > 1e-5 else self.default[n]
        self._rate_mult()
        return True

    def active(self) -> list:
        """The streams still sending."""
        return sorted(n for n, r in self.rates.items() if r > 0.0)


class Link:
    """One MAVLink instance of PX4 over UDP (mavlink_main.cpp, mavlink_receiver.cpp).

    Bound to its local port, sending to 127.0.0.1:remote until a datagram arrives; the first
    sender becomes the partner for good (set_client_source_initialized); messages from any
    address are still handled. `forwarding` (-f in px4-rc.mavlink: every SITL link has it).
    component_was_seen: the (system, component) pairs heard on this link
    (MavlinkReceiver::update_rx_stats). gcs_heard_us: PX4 time of the last HEARTBEAT of
    MAV_TYPE_GCS on this link (telemetry_status.heartbeat_type_gcs, 3 s timeout).
    """

    def __init__(self, name: str, port: int, remote: int, sysid: int, host: str = '127.0.0.1',
                  streams: Optional[Streams] = None):
        """name: for the report; port / remote: local port and default partner port.

        streams: the link's telemetry (Streams), None = none modelled.
        """
        self.name = name
        self.streams = streams
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind((host, port))
        self.partner = (host, remote)
        self.partner_locked = False
        self.mav = new_mav(sysid, 1)
        self.mav.robust_parsing = True
        self.rx = new_mav(sysid, 1)
        self.rx.robust_parsing = True
        self.forwarding = True
        self.seen = set()
        self.gcs_heard_us = None
        self.stats = LinkStats()
        self.forwarded = collections.Counter()      # msgid -> frames passed to this link
        self.send_errors = 0
        self.lock = threading.Lock()                # the sender (sequence numbers)

    def send(self, *msgs, raw: bytes = b''):
        """Frames of ours (pymavlink messages) and raw frames, in one datagram."""
        with self.lock:
            data = b''.join(pack(self.mav, m) for m in msgs) + raw
            if data:
                self._out(data)

    def send_ext(self, msgid: int, payload: bytes):
        """A frame of a message pymavlink's dialect lacks (px4_events.frame), our sequence."""
        with self.lock:
            data = px4_events.frame(msgid, payload, self.mav.seq, self.mav.srcSystem,
                                    self.mav.srcComponent)
            self.mav.seq = (self.mav.seq + 1) % 256
            self._out(data)

    def _out(self, data: bytes):
        try:
            self.sock.sendto(data, self.partner)
        except OSError:             # no partner to reach (a port 0 in the unit tests)
            self.send_errors += 1

    def component_was_seen(self, sysid: int, compid: int) -> bool:
        """MavlinkReceiver::component_was_seen: broadcast (0) needs any component seen."""
        if sysid == 0:
            return bool(self.seen)
        return any(s == sysid and (compid == 0 or c == compid) for s, c in self.seen)


def targets(m):
    """(target_system, target_component) of a message, 0 where it has none (meta->flags)."""
    if m.get_type() == 'UNKNOWN_412':
        r = px4_events.parse_request_event(bytes(m.get_msgbuf()))
        return (r[0], r[1]) if r else (0, 0)
    return getattr(m, 'target_system', 0), getattr(m, 'target_component', 0)


def source(m):
    """(sysid, compid) of a message; of an UNKNOWN_ one from its frame (pymavlink leaves 0)."""
    if m.get_type().startswith('UNKNOWN_'):
        b = m.get_msgbuf()
        return b[5], b[6]
    return m.get_srcSystem(), m.get_srcComponent()


class Px4Sitl:
    """The simulator link, the MAVLink links, commander, mission manager; see the docstring."""

    def __init__(self, sim_port: int, mav_port: int, mav_remote: int, sysid: int = 1,
                 host: str = '127.0.0.1', airframe: str = 'quad', gcs_port: int = 0,
                 gcs_remote: int = 14550):
        """sim_port: the simulator's TCP port; mav_port / mav_remote: the payload link's ports.

        airframe: quad or plane (the FC core flying, its outputs, MAV_TYPE, the airframe's
        parameter defaults); gcs_port: the GCS link's port (18570 + instance; 0 = none),
        sending to gcs_remote (14550).
        """
        self.sysid = sysid
        self.sim_addr = (host, sim_port)
        self.sim = new_mav(sysid, 1)
        self.sim.robust_parsing = True
        self.payload = Link('payload', mav_port, mav_remote, sysid, host,
                            Streams(ONBOARD_STREAMS, PAYLOAD_DATARATE))
        self.links = [self.payload]
        if gcs_port:
            self.links.append(Link('gcs', gcs_port, gcs_remote, sysid, host))
        self.gcs = self.payload.mav           # the payload link's encoder (the tests' name)
        self.plane = airframe == 'plane'
        self.params = Params(airframe)
        self.ap = PlaneFc(auto_arm=False) if self.plane else \
            Autopilot(Gains(hover_thrust=0.52), NavConfig(auto_arm=False))
        self.mav_type = mavlink.MAV_TYPE_FIXED_WING if self.plane else \
            mavlink.MAV_TYPE_QUADROTOR
        self.mm = MissionManager(sysid, self.say)
        self.mission_valid = False
        self.events = px4_events.EventSender(sysid)
        self.ftp = px4_events.FtpServer(px4_events.files())
        self.lock = threading.Lock()        # the FC's state (every receive thread)
        self.tcp = None
        self.now_us = 0
        self.armed = False
        self.sub_mode = HOLD
        self.armed_at_us = None
        self.landed = False
        self.airborne = False
        self.next_hb_us = 0
        self.checks: tuple = ()             # the failing checks last reported
        self.sim_stats = LinkStats()
        self.counts = collections.Counter()
        self.log = []
        self.stop = threading.Event()
        self.step_cost_s = 0.0              # --step-cost-us
        self.realtime = False               # --realtime, and permitted
        self._next_thr = None               # the FC core's outputs for the next answer
        self.lte = False                    # landing_target_estimator started
        self.range = None                   # (PX4 time [us], distance [m]) downward, valid
        self._nav_from_params()

    # --- output ----------------------------------------------------------------------------------
    def say(self, severity: int, text: str, event=None, *args):
        """A message of PX4: STATUSTEXT where a GCS is, its event on every link.

        STATUSTEXT.hpp sends only on links with a GCS heartbeat; event: the event's name,
        args its arguments.
        """
        self.log.append(text)
        for link in self.links:
            if self._gcs_on(link):
                self.counts['statustext'] += 1
                link.send(link.mav.statustext_encode(severity, text.encode()[:50]))
        if event is not None:
            self._event(event, SEVERITY_LEVEL.get(severity, 'info'), *args)

    def _event(self, name: str, level: str, *args):
        body = self.events.event(name, level, self.now_us, *args)
        self.counts['events'] += 1
        for link in self.links:
            link.send_ext(410, body)

    def _gcs_on(self, link) -> bool:
        return link.gcs_heard_us is not None and \
            self.now_us - link.gcs_heard_us <= GCS_TIMEOUT_US

    def gcs_lost(self) -> bool:
        """Commander's gcs_connection_lost: no GCS heartbeat on any link within COM_DL_LOSS_T."""
        t = [link.gcs_heard_us for link in self.links if link.gcs_heard_us is not None]
        return not t or self.now_us - max(t) > self.params['COM_DL_LOSS_T'] * 1e6

    def _udp_send(self, *msgs):
        """Send on the payload link (the link the simulator's mission side talks to)."""
        self.payload.send(*msgs)

    def _heartbeat(self):
        base = mavlink.MAV_MODE_FLAG_CUSTOM_MODE_ENABLED | mavlink.MAV_MODE_FLAG_AUTO_ENABLED \
            | mavlink.MAV_MODE_FLAG_STABILIZE_ENABLED | mavlink.MAV_MODE_FLAG_GUIDED_ENABLED
        if self.armed:
            base |= mavlink.MAV_MODE_FLAG_SAFETY_ARMED
            status = mavlink.MAV_STATE_ACTIVE
        else:
            status = mavlink.MAV_STATE_STANDBY if not self._blocking() else \
                mavlink.MAV_STATE_UNINIT
        custom = (MAIN_AUTO << 16) | (self.sub_mode << 24)
        return self.gcs.heartbeat_encode(self.mav_type, mavlink.MAV_AUTOPILOT_PX4, base, custom,
                                         status)

    # --- health and arming checks (HealthAndArmingChecks, Report::report) ---------------------
    def _failing(self):
        """The failing checks: (event name, level, blocks arming)."""
        out = []
        if not self.ap.ready:
            out.append(('check_modes_global_pos', 'error', True))
        if self.gcs_lost():
            needed = self.params['NAV_DLL_ACT'] > 0
            out.append(('check_rc_dl_no_dllink', 'error' if needed else 'info', needed))
        if self.sub_mode == MISSION_MODE and not self.mission_valid:
            out.append(('check_modes_mission', 'error', True))
        return tuple(out)

    def _blocking(self) -> bool:
        return any(b for _, _, b in self._failing())

    def _report(self, force: bool = False):
        """The checks as events when they changed (summary, each check, health summary)."""
        now = self._failing()
        if now == self.checks and not force:
            return
        self.checks = now
        self._event('commander_arming_check_summary', 'protocol', 0, 0, 0, 0, 0)
        for name, level, _ in now:
            self._event(name, level, 0xFFFFFFFF, 0)
        self._event('commander_health_summary', 'protocol', 0, 0, 0, 0)

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
            t_in = time.perf_counter()
            for m in self.sim.parse_buffer(data) or []:
                if m.get_type() == 'BAD_DATA':
                    continue
                self.sim_stats.add(m)
                t = m.get_type()
                if t == 'HIL_SENSOR':
                    self._hil_sensor(m, t_in)
                elif t == 'HIL_GPS':
                    with self.lock:
                        self.ap.hil_gps(m)
                elif t == 'LANDING_TARGET':
                    with self.lock:
                        self._landing_target(m)
                elif t == 'DISTANCE_SENSOR':
                    with self.lock:
                        self._distance(m)
                elif t not in ('HIL_STATE_QUATERNION',):
                    self.counts['ignored_on_sim_link'] += 1

    def _hil_sensor(self, m, t_in: float = 0.0):
        """One lockstep step: PX4's clock to the sensors' time, the FC's answer, its links.

        As PX4 does, the answer carries the outputs computed from this HIL_SENSOR. With
        --step-cost-us it goes out that long after the sensors came in, with the outputs
        computed from the previous HIL_SENSOR, and the FC core runs after it: the Python core
        takes longer per step than PX4 (module docstring), and the calibrated pace is the
        point there (one step, 4 ms, of extra control delay; the missions fly the same).
        """
        pipelined = self.step_cost_s > 0.0
        if not pipelined:
            self._fifo(False)
        with self.lock:
            self.now_us = m.time_usec            # px4_clock_settime
            if not pipelined:
                self._next_thr = self.ap.hil_sensor(m)
                self._commander()
            out = self._controls(self._next_thr)
        if pipelined:
            while time.perf_counter() - t_in < self.step_cost_s:
                pass
        self.tcp.sendall(pack(self.sim, out))
        if pipelined:
            self._fifo(False)
        try:
            self._after_answer(m, pipelined)
        finally:
            self._fifo(True)

    def _fifo(self, on: bool):
        """--realtime: SCHED_FIFO while waking for and answering a step, normal for the FC core.

        PX4's threads at priority 99 work ~50 µs per step and sleep; the Python FC core's
        ~150 µs more is not a real-time load PX4 puts on the machine. Run at 99 too, it and the
        bridge's receive thread (spinning for the answer at PX4's priority) would hold both
        cores of a 2-core machine under SCHED_FIFO, and every normal thread would wait for the
        kernel's real-time throttling (the bridge's topics, its executor, flight_report), where
        with PX4 they share the core PX4 leaves idle between steps.
        """
        if self.realtime:
            os.sched_setscheduler(0, os.SCHED_FIFO if on else os.SCHED_OTHER,
                                  os.sched_param(REALTIME_PRIORITY if on else 0))

    def _after_answer(self, m, pipelined: bool):
        """After the answer went out: the FC core (pipelined), PX4's mission and other links."""
        with self.lock:
            if pipelined:
                self._next_thr = self.ap.hil_sensor(m)
                self._commander()
            tick = self.mm.tick(self.gcs, self.now_us)
            beat = self.now_us >= self.next_hb_us
            if beat:
                self.next_hb_us = self.now_us + 1_000_000
                self._report()
            cur = self.events.current(self.now_us)
        self._udp_send(*tick)
        for link in self.links:
            if link.streams is not None:
                for msg in link.streams.due(self.now_us):
                    link.send(msg)
            if beat:
                link.send(self._heartbeat())
            if cur is not None:
                link.send_ext(411, cur)

    def _commander(self):
        """The land detector, the preflight disarm and the takeoff detection, after a step."""
        if self.armed and not self.ap.armed and self.ap.phase != WAIT:
            self.armed = False               # landed: the land detector disarmed
            self.landed = True
            self.sub_mode = HOLD
            self.say(mavlink.MAV_SEVERITY_INFO, 'Landing detected',
                     'commander_landing_detected')
            self.say(mavlink.MAV_SEVERITY_INFO, 'Disarmed by landing',
                     'commander_disarmed_by', 6)
        if self.armed and self.ap.phase == WAIT and self.armed_at_us is not None \
                and self.params['COM_DISARM_PRFLT'] > 0 \
                and self.now_us - self.armed_at_us > self.params['COM_DISARM_PRFLT'] * 1e6:
            self.armed = False
            self.say(mavlink.MAV_SEVERITY_INFO, 'Disarmed by auto preflight disarming',
                     'commander_disarmed_by', 7)
        if self.armed and not self.airborne and self._altitude() > 2.0:
            self.airborne = True
            self.say(mavlink.MAV_SEVERITY_INFO, 'Takeoff detected',
                     'commander_takeoff_detected')

    def _controls(self, thr):
        """HIL_ACTUATOR_CONTROLS at PX4's time: the outputs if armed, else 0 (send_controls)."""
        controls = list(thr) if self.armed and thr is not None else [0.0] * 16
        if self.plane and self.armed:        # fixed-wing throttle limit (TECS, FW_THR_MAX)
            controls[PLANE_THROTTLE] = min(controls[PLANE_THROTTLE], self.params['FW_THR_MAX'])
        controls += [0.0] * (16 - len(controls))
        mode = mavlink.MAV_MODE_FLAG_CUSTOM_MODE_ENABLED | (
            mavlink.MAV_MODE_FLAG_SAFETY_ARMED if self.armed else 0)
        self.counts['hil_sensor'] += 1
        self.counts['answers'] += 1
        return self.sim.hil_actuator_controls_encode(self.now_us, controls, mode, 1)

    def _altitude(self) -> float:
        est = self.ap.est
        return -float(est.position[2]) if getattr(est, 'home', None) is not None else 0.0

    # --- MAVLink links (UDP) ------------------------------------------------------------------
    def run_link(self, link: Link):
        """Receive loop of one MAVLink link."""
        link.sock.settimeout(0.2)
        while not self.stop.is_set():
            try:
                data, addr = link.sock.recvfrom(65536)
            except socket.timeout:
                continue
            except OSError:
                return
            if self.now_us == 0:
                # PX4's MAVLink instances start after the first HIL_SENSOR: rcS starts
                # simulator_mavlink, which waits for the simulator and the first sensors to
                # set the lockstep clock ("setting initial absolute time"), then mavlink
                # (px4-rc.mavlink): until then nothing listens on the port
                self.counts['before_mavlink_start'] += 1
                continue
            # the first sender is the partner for good (replies go there); datagrams from
            # anyone are still handled (mavlink_receiver.cpp does not filter by address)
            if not link.partner_locked:
                link.partner, link.partner_locked = addr, True
            for m in link.rx.parse_buffer(data) or []:
                if m.get_type() != 'BAD_DATA':
                    link.stats.add(m)
                    link.seen.add(source(m))
                    self._forward(link, m)
                    self._on_message(link, m)

    def run_mavlink(self):
        """Receive loop of the payload link (the tests' entry point)."""
        self.run_link(self.payload)

    def _forward(self, link: Link, m):
        """Mavlink::forward_message: to every other forwarding link, as PX4 does."""
        if not link.forwarding:
            return
        ts, tc = targets(m)
        if (ts, tc) == (self.sysid, 1):
            return                                # only for us: kept
        if m.get_type() == 'HEARTBEAT' and not self.params['MAV_HB_FORW_EN']:
            return
        for other in self.links:
            if other is not link and other.forwarding and other.component_was_seen(ts, tc):
                other.forwarded[m.get_msgId()] += 1
                other.send(raw=bytes(m.get_msgbuf()))

    def _on_message(self, link: Link, m):
        t = m.get_type()
        if t == 'HEARTBEAT':
            if m.type == mavlink.MAV_TYPE_GCS:
                with self.lock:
                    link.gcs_heard_us = self.now_us
            return
        with self.lock:
            now = self.now_us
            out, ext = [], []
            if t == 'MISSION_COUNT':
                out = self.mm.on_count(link.mav, m, now)
            elif t in ('MISSION_ITEM', 'MISSION_ITEM_INT'):
                before = self.mm.accepted
                out = self.mm.on_item(link.mav, m, now)
                if self.mm.accepted > before:
                    self._new_mission()
            elif t == 'COMMAND_LONG' and m.target_system in (0, self.sysid):
                out = [self._command(m, link)]
                if m.command == mavlink.MAV_CMD_REQUEST_MESSAGE and \
                        int(m.param1) == px4_events.COMPONENT_METADATA_ID:
                    ext.append((397, struct.pack('<II100s', now // 1000, 0,
                                                 b'mftp://etc/extras/component_general.json.xz')))
            elif t == 'PARAM_SET' and m.target_system == self.sysid and \
                    m.target_component in (1, 0):
                name = m.param_id.rstrip('\x00') if isinstance(m.param_id, str) else \
                    bytes(m.param_id).split(b'\0', 1)[0].decode()
                v = self.params.set(name, m.param_value, m.param_type)
                if v is None:
                    self.counts['param_refused'] += 1
                else:
                    self.counts['param_sets'] += 1
                    self._nav_from_params()
                    out = [link.mav.param_value_encode(name.encode(), to_wire(v, m.param_type),
                                                       m.param_type, len(PARAMS), 0)]
            elif t == 'FILE_TRANSFER_PROTOCOL' and m.target_system in (0, self.sysid):
                self.counts['ftp'] += 1
                src = source(m)
                out = [link.mav.file_transfer_protocol_encode(0, src[0], src[1],
                                                              self.ftp.handle(m.payload))]
            elif t == 'UNKNOWN_412':
                r = px4_events.parse_request_event(bytes(m.get_msgbuf()))
                if r and r[0] == self.sysid:
                    ext = self.events.answer(source(m), r[2], r[3])
        link.send(*out)
        for msgid, body in ext:
            link.send_ext(msgid, body)

    # --- precision landing ---------------------------------------------------------------------
    def _nav_from_params(self):
        """The FC core's precision landing as PX4's parameters set it (module docstring)."""
        if self.plane:
            return
        nav = self.ap.nav
        nav.prec_velocity_ff = False
        nav.prec_dwell_s = 2.0
        nav.prec_radius_m = float(self.params['PLD_HACC_RAD'])
        nav.prec_radius_frac = 0.0
        nav.prec_search_s = float(self.params['PLD_SRCH_TOUT'])
        nav.prec_lost_s = float(self.params['PLD_BTOUT'])
        nav.land_xy_vel_max = float(self.params['LNDMC_XY_VEL_MAX'])

    def _distance(self, m):
        """DISTANCE_SENSOR: a downward reading in range is EKF2's terrain distance."""
        self.counts['distance_sensor'] += 1
        if m.orientation != mavlink.MAV_SENSOR_ROTATION_PITCH_270:
            return                          # not ROTATION_DOWNWARD_FACING: not for EKF2
        d = m.current_distance / 100.0
        ok = m.signal_quality != 1 and m.min_distance / 100.0 <= d <= m.max_distance / 100.0
        self.range = (self.now_us, d) if ok else None

    def _landing_target(self, m):
        """LANDING_TARGET -> irlock_report -> landing_target_estimator -> the FC core."""
        if m.position_valid:
            self.counts['landing_target_dropped'] += 1
            if self.counts['landing_target_dropped'] == 1:
                self.log.append('WARN Only landing targets relative to captured images are '
                                'supported')
            return
        if not self.lte:
            self.counts['irlock_unused'] += 1      # nobody subscribes irlock_report
            return
        if self.range is None or self.now_us - self.range[0] > 400_000:
            self.counts['irlock_no_dist_bottom'] += 1
            return
        R = self.ap.est.R                      # body FRD -> NED
        ray_frd = [-m.angle_y, m.angle_x, 1.0]  # LTEST_SENS_ROT 2 (yaw 90)
        if self.params['LTEST_SENS_ROT'] != 2 or not all(map(math.isfinite, ray_frd)):
            self.counts['irlock_refused'] += 1
            return
        ray_z = sum(float(R[2][k]) * ray_frd[k] for k in range(3))
        if abs(ray_z) < 1e-6:
            return
        dist_bottom = self.range[1] * float(R[2][2])   # EKF2's HAGL from a tilted range
        norm = math.sqrt(sum(x * x for x in ray_frd))
        self.counts['irlock'] += 1
        self.ap.tracker.measure(self.now_us * 1e-6, m.angle_x, m.angle_y,
                                dist_bottom * norm / ray_z, self.ap.est.position, R)

    def _new_mission(self):
        """navigator: the feasibility check of a new mission (px4_params.feasibility)."""
        self.mission_valid, said = feasibility(self.mm.mission, self.params, self.plane)
        for name, args in said:
            text = px4_events.EVENTS[name][2]
            self.say(mavlink.MAV_SEVERITY_CRITICAL, text, name, *args)

    def _command(self, m, link=None):
        """Commander::handle_command() for the commands a simulator may send."""
        self.counts['commands'] += 1
        ok, tmp, denied = (mavlink.MAV_RESULT_ACCEPTED, mavlink.MAV_RESULT_TEMPORARILY_REJECTED,
                           mavlink.MAV_RESULT_DENIED)
        if m.command == mavlink.MAV_CMD_COMPONENT_ARM_DISARM:
            if round(m.param1) == 1:
                result = ok if self._arm(4) else tmp
            elif round(m.param1) == 0:
                self.armed, self.armed_at_us = False, None
                result = ok
            else:
                result = denied
        elif m.command == mavlink.MAV_CMD_MISSION_START:
            if not (self.mm.mission and self.mission_valid):
                self.say(mavlink.MAV_SEVERITY_CRITICAL, 'Mission start denied! No valid mission',
                         'commander_mission_start_denied_no_mission')
                self.counts['start_denied'] += 1
                result = denied
            elif not (math.isfinite(m.param1) and -1 <= m.param1 < len(self.mm.mission)):
                result = denied
            else:
                self.sub_mode = MISSION_MODE
                if self.ap.phase == WAIT:           # the navigator reads the stored mission
                    self.ap.set_mission(self.mm.mission)
                if self._arm(5) and self.ap.start():
                    result = ok
                    self.say(mavlink.MAV_SEVERITY_INFO, 'Executing Mission', 'mission_execute')
                else:
                    result = tmp
        elif m.command == mavlink.MAV_CMD_REQUEST_MESSAGE and \
                int(m.param1) == px4_events.COMPONENT_METADATA_ID:
            result = ok
        elif m.command == mavlink.MAV_CMD_SET_MESSAGE_INTERVAL:
            # MavlinkReceiver: on the link the command came in on; FAILED if not done
            done = link is not None and link.streams is not None and link.streams.set_interval(
                int(m.param1 + 0.5), m.param2, m.param3, m.param4, m.param7)
            result = ok if done else mavlink.MAV_RESULT_FAILED
        else:
            result = mavlink.MAV_RESULT_UNSUPPORTED
        return self.gcs.command_ack_encode(m.command, result, 0, 0, m.get_srcSystem(),
                                           m.get_srcComponent())

    def _arm(self, reason: int) -> bool:
        if self.armed:
            return True
        self._report(force=True)          # the checks run on an arming request
        if self._blocking():
            self.counts['arm_denied'] += 1
            self.say(mavlink.MAV_SEVERITY_CRITICAL, 'Arming denied: Resolve system health '
                     'failures first', 'commander_arm_denied_resolve_failures')
            return False
        self.armed, self.armed_at_us = True, self.now_us
        self.say(mavlink.MAV_SEVERITY_INFO, f'Armed by {ARM_REASONS[reason]}',
                 'commander_armed_by', reason)
        return True

    def report(self) -> str:
        """One line of counts for the test to read."""
        c = self.counts
        gcs = self.links[1] if len(self.links) > 1 else None
        return (f'PX4SITL hil_sensor={c["hil_sensor"]} answers={c["answers"]} '
                f'sim_frames={self.sim_stats.frames} sim_lost={self.sim_stats.lost} '
                f'mav_frames={self.payload.stats.frames} mav_lost={self.payload.stats.lost} '
                f'mission_accepted={self.mm.accepted} requests={self.mm.requests} '
                f'int_mode={int(self.mm.int_mode)} commands={c["commands"]} '
                f'arm_denied={c["arm_denied"]} start_denied={c["start_denied"]} '
                f'ignored_on_sim_link={c["ignored_on_sim_link"]} '
                f'param_sets={c["param_sets"]} param_refused={c["param_refused"]} '
                f'events={c["events"]} event_requests={self.events.requests} '
                f'ftp={c["ftp"]} ftp_reads={self.ftp.reads} statustext={c["statustext"]} '
                f'streams_active={len(self.payload.streams.active())} '
                f'stream_msgs={sum(self.payload.streams.sent.values())} '
                f'forwarded_to_gcs={sum(gcs.forwarded.values()) if gcs else 0} '
                f'mission_valid={int(self.mission_valid)} irlock={c["irlock"]} '
                f'irlock_unused={c["irlock_unused"]} '
                f'irlock_no_dist_bottom={c["irlock_no_dist_bottom"]} '
                f'distance_sensor={c["distance_sensor"]} '
                f'done={int(self.ap.phase == DONE or self.landed)}')


def main(argv=None):
    """Run the peer until the simulator closes the link (or SIGINT); print the report."""
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--sim-port', type=int, default=4560)
    ap.add_argument('--mavlink-port', type=int, default=14280)
    ap.add_argument('--mavlink-remote', type=int, default=14030)
    ap.add_argument('--gcs-port', type=int, default=0, help='GCS link port (18570 + i)')
    ap.add_argument('--gcs-remote', type=int, default=14550)
    ap.add_argument('--sysid', type=int, default=1)
    ap.add_argument('--airframe', choices=('quad', 'plane'), default='quad')
    ap.add_argument('--realtime', action='store_true',
                    help='as PX4 started as root: the simulator link thread under SCHED_FIFO '
                    '99 (normal threads if not permitted, as PX4 falls back)')
    ap.add_argument('--landing-target-estimator', action='store_true',
                    help='as `landing_target_estimator start` (airframe 1011): precision '
                    'landing on LANDING_TARGET')
    ap.add_argument('--step-cost-us', type=float, default=0.0,
                    help="answer each HIL_SENSOR no sooner than this after it came in [µs]: "
                    "a real PX4's time per step (bench_px4 measures it)")
    a = ap.parse_args(argv)
    px4 = Px4Sitl(a.sim_port, a.mavlink_port, a.mavlink_remote, a.sysid, airframe=a.airframe,
                  gcs_port=a.gcs_port, gcs_remote=a.gcs_remote)
    px4.step_cost_s = max(0.0, a.step_cost_us) * 1e-6
    px4.lte = a.landing_target_estimator
    if a.realtime:
        # platforms/posix/src/px4/common/tasks.cpp: SCHED_FIFO, or normal threads on EPERM
        try:
            os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(REALTIME_PRIORITY))
            px4.realtime = True
            print(f'PX4SITL simulator link thread: SCHED_FIFO {REALTIME_PRIORITY} (the FC '
                  'core at normal priority)', flush=True)
        except PermissionError:
            print('PX4SITL simulator link thread: SCHED_FIFO not permitted, normal threads',
                  flush=True)
    for link in px4.links:
        threading.Thread(target=px4.run_link, args=(link,), daemon=True).start()
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
