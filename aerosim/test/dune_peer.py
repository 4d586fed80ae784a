"""A test peer that behaves as LSTS DUNE does towards a simulator on IMC/UDP (imcpy).

Written from DUNE's sources (master f8080c0f, 2026-01), not from our bridge, and run with the
rates and gains of a DUNE configuration file (by default ours, config/dune/aerosim-usv.ini, read
as DUNE reads it: src/DUNE/Parsers/Config.cpp; the stock ASV values that file builds on, by its
``[Require asv/basic.ini]``, are in STOCK_ASV with the DUNE file each comes from).

Discovery (src/Transports/Discovery/Task.cpp): a UDP socket on a discovery port takes only
Announce; it drops a repeat of the same (source address, timestamp), and a datagram that is not
IMC at all (``IMC::Packet::deserialize`` throws; onMain's ``catch (...) {}`` swallows it).
Each Announce goes to Transports.UDP's consume(Announce) (src/Transports/UDP/Task.cpp): the
system is added to the node table (its ``imc+udp://IP:port/`` services) and to the listener's
contact table.

UDP transport (src/Transports/UDP/Listener.hpp, ContactTable.hpp, Node.hpp): every datagram
on the transport port from a system *not* in the contact table is dropped ("message was
filtered"), before or whatever its content; from a contact, its address is recorded, and
every 5 s (Contact Refresh Periodicity) a contact heard within 30 s (Contact Timeout) is
activated if the datagram's source IP is one of its announced service addresses: only active
nodes get DUNE's messages, sent to the announced ip:port. Outgoing messages pass DUNE's rate
limiters ("Rate Limiters" of Transports.UDP; src/DUNE/Tasks/MessageFilter.cpp: a message is
dropped while its last one of the same source entity went out less than 1 / rate ago).

The chain that steers, one step per navigation update:
- Simulators.GPS (src/Simulators/GPS/Task.cpp) is a *periodic* task (``Execution Frequency``,
  1 Hz in DUNE's etc/asv/simulator.ini): each tick makes a GpsFix of the last SimulatedState
  (Initial Position displaced by x/y, sog = |(u, v)|, cog = psi; lat/lon/height of the message
  are not read).
- Simulators.IMU (src/Simulators/IMU/Task.cpp) makes EulerAngles of every SimulatedState (the
  AHRS; its 0.05 deg noise is left out here).
- Navigation.General.GPSNavigation (src/Navigation/General/GPSNavigation/Task.cpp) dispatches
  one EstimatedState per GpsFix (x/y from the fix, psi from the AHRS, vx/vy = sog along cog):
  the navigation runs at the GPS simulator's rate.
- Control.Path.VectorField (src/Control/Path/VectorField/Task.cpp, its base
  src/DUNE/Control/PathController.cpp) steps on an EstimatedState at most ``Control
  Frequency`` times a second: desired heading = track bearing - atan(tan(entry angle) /
  corridor width * cross-track); the track is near its end when its ETA (distance / speed minus
  General's ``Time Of Arrival Factor``) reaches 0, and the next Goto of a plan starts its track
  at this one's end.
- Control.ASV.Conventional.Heading (src/Control/ASV/Conventional/Heading/Task.cpp) answers each
  EstimatedState with one SetServoPosition: ``rudder = -PID(psi_d - psi)`` within +-Maximum
  Rudder Actuation (a positive value turns the bow to port), psi_d the last DesiredHeading.
- Control.ASV.Conventional.Speed (src/Control/ASV/Conventional/Speed/Task.cpp) turns the speed
  error into a desired RPM on each EstimatedState (MPS feedforward + PID on the ground speed,
  limited in acceleration and range) and answers each Rpm of the motor simulator
  (Simulators.Motor, periodic) with SetThrusterActuation = desired RPM / RPMs at Maximum Thrust
  (Hardware RPMs Control).
Everything goes out with dst 0xFFFF; DUNE's UDP transport also forwards its DesiredHeading/
DesiredSpeed (telemetry for Neptus) to every active node.

DUNE's clock here is the header timestamp of the SimulatedState it gets: with the bridge's
default UTC timestamps that is the wall clock, as DUNE's own; with ``timestamps: sim`` it is
the simulation time, so a test can run the sim faster than real time (or on a loaded machine)
and DUNE's periodic tasks still run at their rates per simulated second, as they would beside
a real-time sim.
"""

import math
from pathlib import Path
import re
import select
import socket
import time

import imcpy

DUNE_ID = 0x3F02
CONTACT_TIMEOUT_S = 30.0
CONTACT_REFRESH_S = 5.0
SHIPPED_INI = Path(__file__).resolve().parent.parent / 'config' / 'dune' / 'aerosim-usv.ini'
# The stock values of DUNE's ASV configuration (etc/asv/*.ini, master f8080c0f) that the
# stand-in uses and a file requiring asv/basic.ini inherits unless it sets them.
STOCK_ASV = {
    ('Simulators.GPS', 'Execution Frequency'): '1',                 # etc/asv/simulator.ini
    ('Simulators.Motor/Port', 'Execution Frequency'): '20',         # etc/asv/simulator.ini
    ('Control.Path.VectorField', 'Control Frequency'): '10',        # etc/asv/control.ini
    ('Control.Path.VectorField', 'Corridor -- Width'): '2.0',       # etc/asv/control.ini
    ('Control.Path.VectorField', 'Corridor -- Entry Angle'): '15',  # etc/asv/control.ini
    ('Control.Path.VectorField', 'ETA Minimum Speed'): '0.1',       # etc/asv/control.ini
    ('General', 'Time Of Arrival Factor'): '3.0',                   # etc/asv/general.ini
    # etc/common/transports.ini, then etc/asv/transports.ini's "Rate Limiters+"
    ('Transports.UDP', 'Rate Limiters'): 'CpuUsage:0.2, Distance:0.2, EntityState:1, '
                                         'EstimatedState:2, FuelLevel:0.1, Rpm:1, '
                                         'SimulatedState:0.5, StorageUsage:0.05, '
                                         'Temperature:0.1, AlignmentState:0.5, Rpm:1, '
                                         'SetServoPosition:1',
}
# The stock files a ``[Require ...]`` section stands for (dune_lauv_peer adds DUNE's LAUV).
STOCK = {'Require asv/basic.ini': STOCK_ASV}
# Defaults in DUNE's sources where etc/ sets nothing.
TASK_DEFAULTS = {
    ('Control.ASV.Conventional.Speed', 'MPS PID Gains'): '0, 0, 0',
    ('Control.ASV.Conventional.Speed', 'MPS Integral Limit'): '-1',
    ('Control.ASV.Conventional.Speed', 'Maximum RPM Acceleration'): '0',
}


def wrap(a):
    return (a + math.pi) % (2.0 * math.pi) - math.pi


def read_dune_ini(path) -> dict:
    """{section: {option: value}} of a DUNE configuration file, as src/DUNE/Parsers/Config.cpp.

    '#'/';' comment lines; ``[Section]``; ``Option = value``; ``Option+ = value`` appends to
    a value set before (', '); an indented line without '=' continues the last value. A
    ``[Require asv/basic.ini]`` section stands for DUNE's stock ASV files: STOCK_ASV first
    (each ``[Require ...]`` of STOCK likewise).
    """
    data: dict = {}
    section = option = None
    for raw in Path(path).read_text().splitlines():
        line = raw.strip()
        if not line or line[0] in '#;':
            continue
        m = re.fullmatch(r'\[([^\]]+)\]', line)
        if m:
            section = m.group(1).strip()
            for (sec, opt), value in STOCK.get(section, {}).items():
                data.setdefault(sec, {})[opt] = value
            continue
        if '=' in line:
            option, _, value = (s.strip() for s in line.partition('='))
            value = re.split(r'\s[#;]', value)[0].strip()
            opts = data.setdefault(section, {})
            if option.endswith('+'):
                option = option[:-1].strip()
                opts[option] = f'{opts[option]}, {value}' if option in opts else value
            else:
                opts[option] = value
        elif section is not None and option is not None:
            data[section][option] += ' ' + re.split(r'\s*[#;]', line)[0].strip()
    return data


class DuneConfig:
    """The rates and gains DUNE runs with, from a configuration file (read_dune_ini)."""

    def __init__(self, path=SHIPPED_INI):
        """Read path; a value it does not set is DUNE's task default (TASK_DEFAULTS)."""
        self.path = Path(path)
        self.data = read_dune_ini(path)

    def get(self, section, option):
        value = self.data.get(section, {}).get(option)
        if value is None:
            value = TASK_DEFAULTS[(section, option)]
        return value

    def num(self, section, option) -> float:
        return float(self.get(section, option))

    def nums(self, section, option):
        return [float(v) for v in self.get(section, option).replace(',', ' ').split()]

    @property
    def gps_hz(self) -> float:
        """Simulators.GPS Execution Frequency: the rate of DUNE's navigation and control."""
        return self.num('Simulators.GPS', 'Execution Frequency')

    def rate_limits(self) -> dict:
        """Transports.UDP Rate Limiters: {message name: minimum period [s]} (the last wins)."""
        out = {}
        for item in self.get('Transports.UDP', 'Rate Limiters').split(','):
            name, _, hz = item.strip().partition(':')
            if name:
                out[name] = 1.0 / float(hz)
        return out


class Periodic:
    """A DUNE periodic task's schedule (src/DUNE/Tasks/Periodic.cpp) on DUNE's clock."""

    def __init__(self, hz):
        self.period = 1.0 / hz
        self.next = None

    def due(self, now) -> bool:
        if self.next is None:
            self.next = now
        if now < self.next - 1e-6:
            return False
        self.next += self.period
        if self.next <= now:                   # late by a period or more: the next from now
            self.next = now + self.period
        return True


class DunePeer:
    """DUNE's discovery + UDP transport + GPS/navigation + ASV path/heading/speed control."""

    def __init__(self, udp_port, discovery_port, plan, speed_mps=1.6, ini=SHIPPED_INI):
        """udp_port: DUNE's transport port (6002); discovery_port: one of 30100-30104.

        plan: waypoints (north, east) [m] of a plan of Gotos at speed_mps; the first track
        starts where the boat is when the plan starts. ini: DUNE's configuration file.
        """
        cfg = self.cfg = DuneConfig(ini)
        self._open_transport(udp_port, discovery_port, DUNE_ID)
        self.plan = [tuple(map(float, wp)) for wp in plan]
        self.speed = speed_mps
        hd, sp, pc = ('Control.ASV.Conventional.Heading', 'Control.ASV.Conventional.Speed',
                      'Control.Path.VectorField')
        self.yaw_gains = cfg.nums(hd, 'Yaw PID Gains')
        self.max_rudder = math.radians(cfg.num(hd, 'Maximum Rudder Actuation'))
        self.mps_ff = cfg.num(sp, 'MPS Feedforward Gain')
        self.mps_gains = cfg.nums(sp, 'MPS PID Gains')
        self.mps_int_limit = cfg.num(sp, 'MPS Integral Limit')
        self.rpm_limits = (cfg.num(sp, 'Minimum RPM Limit'), cfg.num(sp, 'Maximum RPM Limit'))
        self.max_rpm_accel = cfg.num(sp, 'Maximum RPM Acceleration')
        self.rpms_eos = cfg.num(sp, 'RPMs at Maximum Thrust')
        self.thrust_limits = (cfg.num(sp, 'Minimum Thrust Limit'),
                              cfg.num(sp, 'Maximum Thrust Limit'))
        self.path_period = 1.0 / cfg.num(pc, 'Control Frequency')
        self.path_gain = (math.tan(math.radians(cfg.num(pc, 'Corridor -- Entry Angle')))
                          / cfg.num(pc, 'Corridor -- Width'))
        self.eta_min_speed = cfg.num(pc, 'ETA Minimum Speed')
        self.time_factor = cfg.num('General', 'Time Of Arrival Factor')
        self.gps = Periodic(cfg.gps_hz)
        self.motor = Periodic(cfg.num('Simulators.Motor/Port', 'Execution Frequency'))
        self.sent = {'SetServoPosition': 0, 'SetThrusterActuation': 0, 'DesiredHeading': 0,
                     'DesiredSpeed': 0}
        self.navigations = 0       # EstimatedState made (one per GPS fix)
        self.rudders = []          # (psi error, rudder) of the heading controller
        self.track = []            # (leg, along-track, cross-track [m]) of each SimulatedState
        self.leg = None            # index of the Goto in progress (None: plan not started)
        self.legs = []             # (start, end) of each track, north/east [m]
        self.arrived = False       # the plan completed
        self._psi = None           # the AHRS's last heading
        self._sstate = None
        self._estate = None        # (x, y, psi, vx, vy, u)
        self._track = None         # (start, end, bearing, length)
        self._path_t = None        # DUNE time of the last path control step
        self._heading_on = False
        self._desired_heading = 0.0
        self._delta = {}           # task -> DUNE time of its last step (Time::Delta)
        self._mps_int = 0.0
        self._desired_rpm = self._previous_rpm = 0.0

    def _open_transport(self, udp_port, discovery_port, dune_id):
        """DUNE's UDP transport and discovery sockets and tables, as system dune_id."""
        self.udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.udp.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 22)
        self.udp.bind(('127.0.0.1', udp_port))
        self.disc = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.disc.bind(('127.0.0.1', discovery_port))
        self.dune_id = dune_id
        self.limits = self.cfg.rate_limits()
        self.nodes = {}            # system id -> {(ip, port)} of its announced imc+udp services
        self.contacts = {}         # system id -> [source address, last heard (monotonic)]
        self.active = {}           # system id -> (ip, port) DUNE sends to
        self.seen_announces = {}   # source address -> last Announce timestamp (dedupe)
        self.filtered = 0          # datagrams dropped: sender not discovered
        self.undecodable = 0       # datagrams dropped: not IMC (e.g. stray RTPS on a reused port)
        self.first_accepted = None
        self.announced_at = None
        self.states = []           # accepted SimulatedState
        self.rate_limited = 0      # messages the rate limiters kept from the network
        self._last_refresh = time.monotonic()
        self._stimes = {}          # rate limiter: message name -> DUNE time last sent

    # --- discovery --------------------------------------------------------------------------
    def _decode(self, data):
        """IMC::Packet::deserialize, or None for a datagram it cannot unpack.

        DUNE catches what it throws (Discovery: ``catch (...)``, UDP Listener: "error while
        unpacking message"), so a bad datagram is dropped.
        """
        try:
            return imcpy.Packet.deserialize(data)
        except RuntimeError:
            self.undecodable += 1
            return None

    def _on_discovery(self, data, addr):
        msg = self._decode(data)
        if msg is None or msg.msg_name != 'Announce':
            return                                   # "discarding spurious message"
        if self.seen_announces.get(addr) == msg.timestamp:
            return
        self.seen_announces[addr] = msg.timestamp
        services = set()
        for uri in msg.services.split(';'):
            if uri.startswith('imc+udp://'):
                host, _, port = uri[len('imc+udp://'):].rstrip('/').partition(':')
                services.add((host, int(port)))
        self.nodes[msg.src] = services
        self.contacts.setdefault(msg.src, [None, None])
        self.announced_at = self.announced_at or time.monotonic()

    # --- UDP transport ----------------------------------------------------------------------
    def _on_udp(self, data, addr):
        msg = self._decode(data)
        if msg is None:
            return
        c = self.contacts.get(msg.src)
        if c is None:
            self.filtered += 1                       # "message was filtered"
            return
        c[0], c[1] = addr, time.monotonic()
        self.first_accepted = self.first_accepted or time.monotonic()
        if msg.msg_name == 'SimulatedState':
            self.states.append(msg)
            self._on_simulated_state(msg)

    def _refresh_contacts(self):
        now = time.monotonic()
        for sid, (addr, heard) in self.contacts.items():
            if addr is not None and now - heard < CONTACT_TIMEOUT_S:
                match = [s for s in self.nodes.get(sid, ()) if s[0] == addr[0]]
                if match:
                    self.active[sid] = match[0]
                    continue
            self.active.pop(sid, None)

    def _send(self, msg, now):
        """Dispatch msg: out to every active node unless a rate limiter holds it."""
        name = msg.msg_name
        period = self.limits.get(name)
        if period is not None:
            if self._stimes.get(name, -1e18) + period > now + 1e-9:
                self.rate_limited += 1
                return
            self._stimes[name] = now
        msg.src, msg.src_ent, msg.dst, msg.dst_ent = self.dune_id, 5, 0xFFFF, 0xFF
        msg.timestamp = time.time()
        data = msg.serialize()
        for target in self.active.values():
            self.udp.sendto(data, target)
        if self.active and name in self.sent:
            self.sent[name] += 1

    def _dt(self, task, now):
        """Time::Delta of a task: seconds since its last step, -1 on its first."""
        last, self._delta[task] = self._delta.get(task), now
        return -1.0 if last is None else now - last

    # --- sensors and navigation -------------------------------------------------------------
    def _on_simulated_state(self, s):
        now = s.timestamp                            # DUNE's clock (see the module docstring)
        self._psi = s.psi                            # Simulators.IMU: EulerAngles per state
        self._sstate = s
        self._record_track(s)
        if self.gps.due(now):                        # Simulators.GPS tick: GpsFix
            sog, cog = math.hypot(s.u, s.v), s.psi
            vx, vy = math.cos(cog) * sog, math.sin(cog) * sog
            psi = self._psi
            # GPSNavigation: one EstimatedState per GpsFix
            self._estate = (s.x, s.y, psi, vx, vy, vx * math.cos(psi) + vy * math.sin(psi))
            self.navigations += 1
            self._on_estimated_state(now)
        if self.motor.due(now):                      # Simulators.Motor: Rpm
            self._on_rpm(now)

    def _record_track(self, s):
        if self._track is None:
            return
        (sn, se), _, bearing, _ = self._track
        b = math.atan2(s.y - se, s.x - sn) - bearing
        r = math.hypot(s.x - sn, s.y - se)
        self.track.append((self.leg, r * math.cos(b), r * math.sin(b)))

    # --- control ----------------------------------------------------------------------------
    def _on_estimated_state(self, now):
        # Both tasks get the same EstimatedState; the heading controller's DesiredHeading of
        # this step comes after it in its queue, so it steers with the previous one.
        if self._heading_on:
            self._heading_step(now)
        self._speed_step(now)
        self._path_step(now)

    def _start_leg(self, leg, start, now):
        end = self.plan[leg]
        self.leg = leg
        self.legs.append((start, end))
        self._track = (start, end, math.atan2(end[1] - start[1], end[0] - start[0]),
                       math.hypot(end[0] - start[0], end[1] - start[1]))
        ds = imcpy.DesiredSpeed()                    # PathController: the path's speed
        ds.value, ds.speed_units = self.speed, imcpy.SpeedUnits.METERS_PS
        self._send(ds, now)

    def _path_step(self, now):
        if self.arrived or not self.plan:
            return
        x, y, psi, vx, vy, u = self._estate
        if self.leg is None:                         # the plan starts: a track from here
            self._start_leg(0, (x, y), now)
            # onPathActivation: ControlLoops CL_YAW -> the heading controller starts (reset:
            # rudder 0) before it takes this step's DesiredHeading
            self._heading_on = True
            self._send_rudder(0.0, now)
        if self._path_t is not None and now < self._path_t + self.path_period - 1e-6:
            return                                   # at most Control Frequency
        self._path_t = now
        (sn, se), end, bearing, length = self._track
        b = math.atan2(y - se, x - sn) - bearing
        r = math.hypot(x - sn, y - se)
        along, cross = r * math.cos(b), r * math.sin(b)
        # updateTrackingState / getEta: near the end when the ETA reaches 0
        errx, erry = abs(length - along), abs(cross)
        speed = max(self.eta_min_speed, u)
        dist = errx if errx <= erry < 1.75 * self.time_factor * speed else math.hypot(errx,
                                                                                       erry)
        if dist / speed - self.time_factor <= 0.0:
            if self.leg + 1 < len(self.plan):        # the next Goto: its track from this end
                return self._start_leg(self.leg + 1, end, now)
            self.arrived = True                      # plan complete: the loops stop (reset)
            self._heading_on = False
            self._send_rudder(0.0, now)
            self._send_thrust(0.0, now)
            return
        self._vector_field(now, along, cross, bearing, length, end)

    def _vector_field(self, now, along, cross, bearing, length, end):
        x, y = self._estate[:2]
        if along > length:                           # past the track's end
            ref = math.atan2(end[1] - y, end[0] - x)
        else:
            ref = bearing - math.atan(self.path_gain * cross)
        dh = imcpy.DesiredHeading()
        dh.value = wrap(ref)
        self._desired_heading = dh.value
        self._send(dh, now)

    def _send_rudder(self, value, now):
        sv = imcpy.SetServoPosition()
        sv.id, sv.value = 0, value
        self._send(sv, now)

    def _send_thrust(self, value, now):
        th = imcpy.SetThrusterActuation()
        th.id, th.value = 0, value
        self._send(th, now)

    def _heading_step(self, now):
        if self._dt('heading', now) < 0.0:
            return
        psi = self._estate[2]
        err = wrap(self._desired_heading - psi)
        kp = self.yaw_gains[0]
        rudder = max(-self.max_rudder, min(self.max_rudder, -kp * err))
        self.rudders.append((err, rudder))
        self._send_rudder(rudder, now)

    def _speed_step(self, now):
        """The speed controller's mpsToRpm: the desired RPM from the ground speed error."""
        dt = self._dt('speed', now)
        if self.leg is None or self.arrived or dt <= 0.0:
            return
        vx, vy = self._estate[3:5]
        kp, ki, _ = self.mps_gains
        err = self.speed - math.hypot(vx, vy)
        rpm = kp * err + self._mps_int + self.speed * self.mps_ff
        self._mps_int += ki * err * dt
        if self.mps_int_limit > 0.0:
            self._mps_int = max(-self.mps_int_limit, min(self.mps_int_limit, self._mps_int))
        if self.max_rpm_accel > 0.0:
            rpm = max(self._previous_rpm - self.max_rpm_accel * dt,
                      min(self._previous_rpm + self.max_rpm_accel * dt, rpm))
        rpm = max(self.rpm_limits[0], min(self.rpm_limits[1], rpm))
        self._desired_rpm = self._previous_rpm = rpm

    def _on_rpm(self, now):
        """The speed controller's rpmToThrust (Hardware RPMs Control): RPM / RPMs at max."""
        if self.leg is None or self.arrived:
            return
        lo, hi = self.thrust_limits
        self._send_thrust(max(lo, min(hi, self._desired_rpm / self.rpms_eos)), now)

    # --- the plan's figures -----------------------------------------------------------------
    def cross_track_after_half(self):
        """Largest |cross-track| [m] of each leg once half of it is behind the boat."""
        out = {}
        for leg, along, cross in self.track:
            if along >= 0.5 * math.dist(*self.legs[leg]):
                out[leg] = max(out.get(leg, 0.0), abs(cross))
        return out

    def poll(self, timeout_s):
        """Serve both sockets for timeout_s wall seconds."""
        deadline = time.monotonic() + timeout_s
        while True:
            left = deadline - time.monotonic()
            if left <= 0.0:
                return
            r, _, _ = select.select([self.udp, self.disc], [], [], min(left, 0.05))
            for sock in r:
                data, addr = sock.recvfrom(65535)
                (self._on_discovery if sock is self.disc else self._on_udp)(data, addr)
            if time.monotonic() - self._last_refresh >= CONTACT_REFRESH_S:
                self._last_refresh = time.monotonic()
                self._refresh_contacts()

    def close(self):
        self.udp.close()
        self.disc.close()
