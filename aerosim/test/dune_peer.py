"""A test peer that behaves as LSTS DUNE does towards a simulator on IMC/UDP (imcpy).

Written from DUNE's sources (master f8080c0f, 2026-01), not from our bridge:

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
nodes get DUNE's messages, sent to the announced ip:port. Messages are dispatched with their
own timestamps (DF_KEEP_TIME).

Sensors and navigation (src/Simulators/GPS, IMU): the position is the GPS simulator's Initial
Position displaced by SimulatedState x/y (lat/lon of the message are not read), sog = |(u, v)|,
cog = psi; the AHRS copies phi/theta/psi and p/q/r with the message's timestamp.

Control (src/Control/ASV/Conventional/Heading, Speed; Simulators/Motor): on each EstimatedState
``rudder = -PID(psi_d - psi)`` within +-Maximum Rudder Actuation as SetServoPosition id 0 (a
positive value turns the bow to port); on each Rpm (the motor simulator, 20 Hz) thrust =
desired RPM / RPMs at Maximum Thrust as SetThrusterActuation id 0, the desired RPM from the
speed error (feedforward + PID on the ground speed). Everything goes out with dst 0xFFFF, and
DUNE's UDP transport also forwards its DesiredHeading/DesiredSpeed (telemetry for Neptus) to
every active node. asv/transports.ini rate-limits SetServoPosition (1 Hz stock; our shipped
configuration raises it to 10 Hz).

The guidance here is a plain pure pursuit to one waypoint (DUNE's VectorField path control
reduced to its point-to-point case): desired heading = bearing to the waypoint.
"""

import math
import select
import socket
import time

import imcpy

DUNE_ID = 0x3F02
CONTACT_TIMEOUT_S = 30.0
CONTACT_REFRESH_S = 5.0


def wrap(a):
    return (a + math.pi) % (2.0 * math.pi) - math.pi


class DunePeer:
    """DUNE's discovery + UDP transport + ASV heading/speed control, on two sockets."""

    def __init__(self, udp_port, discovery_port, waypoint_ne, speed_mps=1.6,
                 yaw_gain=1.0, max_rudder_deg=30.0, rudder_rate_hz=10.0, accept_radius=5.0):
        """udp_port: DUNE's transport port (6002); discovery_port: one of 30100-30104."""
        self.udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.udp.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 22)
        self.udp.bind(('127.0.0.1', udp_port))
        self.disc = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.disc.bind(('127.0.0.1', discovery_port))
        self.waypoint = waypoint_ne
        self.speed = speed_mps
        self.yaw_gain = yaw_gain
        self.max_rudder = math.radians(max_rudder_deg)
        self.rudder_period = 1.0 / rudder_rate_hz
        self.accept_radius = accept_radius
        self.nodes = {}            # system id -> {(ip, port)} of its announced imc+udp services
        self.contacts = {}         # system id -> [source address, last heard (monotonic)]
        self.active = {}           # system id -> (ip, port) DUNE sends to
        self.seen_announces = {}   # source address -> last Announce timestamp (dedupe)
        self.filtered = 0          # datagrams dropped: sender not discovered
        self.undecodable = 0       # datagrams dropped: not IMC (e.g. stray RTPS on a reused port)
        self.first_accepted = None
        self.announced_at = None
        self.states = []           # accepted SimulatedState
        self.sent = {'SetServoPosition': 0, 'SetThrusterActuation': 0, 'DesiredHeading': 0,
                     'DesiredSpeed': 0}
        self.rudders = []          # (psi error, rudder) sent
        self.arrived = False
        self._last_refresh = time.monotonic()
        self._last_rudder = -1e9
        self._last_rpm = -1e9

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
            self._control(msg)

    def _refresh_contacts(self):
        now = time.monotonic()
        for sid, (addr, heard) in self.contacts.items():
            if addr is not None and now - heard < CONTACT_TIMEOUT_S:
                match = [s for s in self.nodes.get(sid, ()) if s[0] == addr[0]]
                if match:
                    self.active[sid] = match[0]
                    continue
            self.active.pop(sid, None)

    def _send(self, msg, dst=0xFFFF):
        msg.src, msg.src_ent, msg.dst, msg.dst_ent = DUNE_ID, 5, dst, 0xFF
        msg.timestamp = time.time()
        data = msg.serialize()
        for target in self.active.values():
            self.udp.sendto(data, target)
        if self.active and msg.msg_name in self.sent:
            self.sent[msg.msg_name] += 1

    # --- navigation and control -------------------------------------------------------------
    def _control(self, s):
        """DUNE's navigation from SimulatedState, then its heading and speed controllers."""
        x, y, psi = s.x, s.y, s.psi                  # Initial Position + displacement
        sog = math.hypot(s.u, s.v)                   # the GPS simulator's sog
        dn, de = self.waypoint[0] - x, self.waypoint[1] - y
        now = time.monotonic()
        if math.hypot(dn, de) < self.accept_radius:
            self.arrived = True
        desired_heading = math.atan2(de, dn)
        desired_speed = 0.0 if self.arrived else self.speed
        dh, ds = imcpy.DesiredHeading(), imcpy.DesiredSpeed()
        dh.value = desired_heading
        ds.value, ds.speed_units = desired_speed, imcpy.SpeedUnits.METERS_PS
        self._send(dh)                               # telemetry copies, dst 0xFFFF
        self._send(ds)
        if now - self._last_rudder >= self.rudder_period:      # rate limiter
            self._last_rudder = now
            err = wrap(desired_heading - psi)
            rudder = -max(-self.max_rudder, min(self.max_rudder, self.yaw_gain * err))
            sv = imcpy.SetServoPosition()
            sv.id, sv.value = 0, rudder
            self._send(sv)
            self.rudders.append((err, rudder))
        if now - self._last_rpm >= 0.05:             # the motor simulator's Rpm, 20 Hz
            self._last_rpm = now
            rpm = 0.0 if desired_speed < 0.05 else min(1000.0, 435.0 * desired_speed
                                                         + 200.0 * (desired_speed - sog))
            th = imcpy.SetThrusterActuation()
            th.id, th.value = 0, max(0.0, rpm / 1000.0)
            self._send(th)

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
