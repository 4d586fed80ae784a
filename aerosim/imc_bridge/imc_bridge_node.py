"""imc_bridge: the simulated vehicle as an IMC system on UDP, for LSTS DUNE and Neptus.

Out (to the configured peers, and to systems that talk to us while they do):
- SimulatedState (50) at simulated_state_rate_hz (sim time, decimating vehicle_state: at most
  the vehicle's step rate, stamped with the sample's sim time): the vehicle_state in NED/FRD
  around the scenario origin, the scenario's water current as stream velocity; header
  dst/dst_ent as parameters; timestamps UTC when sent (timestamps: utc | sim_utc | sim).
- EstimatedState (350) at estimated_state_rate_hz (what Neptus draws), Announce (151, services
  imc+udp://<our addresses>:port/) and Heartbeat (150) every announce_period_s (wall). The
  Announce also goes where DUNE's discovery listens (imc_bridge.core.discovery): the multicast
  group 224.0.75.69 and the discovery ports 30100-30104 of announce_hosts; DUNE takes nothing
  from a system it has not discovered. EntityList (5) REPORT when queried; EntityState (1) of
  each leak entity every announce period and on change (NORMAL "active" / FAILURE "leak
  detected", as DUNE's Simulators.Leaks reports them).
In:
- LeakSimulation (51): OFF/ON for the listed leak entities (empty = all); the leak state goes
  to the latched leaks topic (aerosim_msgs/LeakState) and back to the sender.
- UASimulation (52): DATA and PING through a simulated acoustic link (range / sound speed +
  bits / speed, range limit, loss); DATA for us goes to acoustic/rx, a PING is answered by a
  PING_REPLY from us after the two-way travel time. acoustic/tx sends ours the other way.
- DynamicsSimParam (53): REQUEST -> REPORT of the vehicle node's tas2acc_pgain/bank2p_pgain;
  SET range-checks, sets them on the vehicle node (ROS parameter services), answers REPORT.
- Control, one level at a time (control_level; imc_bridge.core.control): actuators =
  SetThrusterActuation (id thruster_id, -1..1, positive = ahead) and SetServoPosition (id
  rudder_servo_id, rad, positive = bow to port as DUNE's heading controller and plant take it)
  -> effector_command; guidance = DesiredSpeed (m/s, or % of throttle) and DesiredHeading
  (rad) -> autopilot_command (the boat's speed/heading holds). A message of the other level
  switches the level only when addressed to our system id; broadcast copies (DUNE's telemetry
  of its Desired*) are counted as ignored_<level> and drive nothing.
- Heartbeat/Announce: the sender gets our messages while it keeps talking (dynamic_peers).
Every datagram that is not one valid IMC message for us is counted by kind and logged at a
limited rate per kind; valid broadcast messages we do not use (DUNE's telemetry) are counted as
ignored, not warned about. Counts are on /diagnostics every second.
"""

import math
import socket
import time

import imcpy
import numpy as np
from rcl_interfaces.msg import Parameter as ParameterMsg
from rcl_interfaces.msg import ParameterType, ParameterValue
from rcl_interfaces.srv import GetParameters, SetParametersAtomically
from rclpy.clock import Clock, ClockType

from aerosim_msgs.msg import (
    AcousticData,
    AircraftEffectorCommand,
    AutopilotCommand,
    LeakState,
    VehicleState,
)
from imc_bridge.core import codec
from imc_bridge.core.acoustic import PING, PING_REPLY, AcousticLink, AcousticParams
from imc_bridge.core.control import (
    ACTUATORS,
    BROADCAST,
    BROADCASTS,
    GUIDANCE,
    RUDDER_SENSES,
    THRUSTER_SENSES,
    ControlArbiter,
    Stamper,
    rudder_aerosim,
    throttle_aerosim,
)
from imc_bridge.core.discovery import DISCOVERY_GROUP, parse_ports, service_uris
from imc_bridge.core.leaks import LeakState as Leaks
from imc_bridge.core.state import imc_kinematics, stream_velocity_ned
from sim_core.decimator import Decimator
from sim_core.errors import ConfigError
from sim_core.geodesy import KNOT_MPS
from sim_core.link import parse_endpoint, parse_id_list
from sim_core.scenario import load_scenario
from sim_core.timeutil import NS_PER_S
from sim_ros import qos
from sim_ros.convert import time_msg, time_ns, vehicle_state_arrays
from sim_ros.params import declare
from sim_ros.port_node import PortNode
from sim_ros.run import run_node

# DUNE's ASV leak entities (etc/asv/simulator.ini, Simulators.Leaks).
DUNE_ASV_LEAKS = ['Leak Sensor - Port Pontoon', 'Leak Sensor - Starboard Pontoon']
# IMC SystemType by lower-case name (usv, uuv, uav, ugv, ccu, ...), from imcpy.
SYSTEM_TYPES = {k.lower(): int(v) for k, v in imcpy.SystemType.__members__.items()}
# Reject kinds beyond the codec's: addressed to another system; a valid message with values
# we refuse; an IMC message this bridge does not handle; the vehicle node did not answer.
REJECT_KINDS = codec.KINDS + ('not_for_us', 'value', 'unhandled', 'unavailable')


def rad_position(origin, p_ned):
    """(lat, lon [rad], height [m]) of a NED offset [m] from a GeoOrigin."""
    lat, lon, h = origin.enu_to_geodetic(p_ned[1], p_ned[0], -p_ned[2])
    return math.radians(lat), math.radians(lon), float(h)


class ImcBridge(PortNode):
    """IMC UDP bridge node."""

    def __init__(self):
        """Declare parameters, bind the socket, create the interfaces."""
        super().__init__('imc_bridge')
        d = self._d
        scenario_file = d('scenario_file', 'default', 'Scenario YAML (origin, current)')
        bind = d('bind', '127.0.0.1:6003', 'Our IMC UDP address host:port')
        peers = d('peers', '127.0.0.1:6002', 'IMC peers that get our messages: host:port, '
                  "comma-separated (DUNE listens on 6002); '' = none")
        self.dynamic_peers = d('dynamic_peers', True,
                               'Also send to systems that send us Heartbeat/Announce')
        self.peer_timeout_s = d('peer_timeout_s', 30.0,
                                'Silence after which a dynamic peer is dropped [s]', 1.0, 3600.0)
        self.system_id = d('system_id', 0x3F01, 'Our IMC system id (address)', 1, 0xFFFE)
        self.entity_id = d('entity_id', 1, 'IMC entity id of the simulation', 0, 0xFE)
        self.entity_label = d('entity_label', 'Simulation Engine', 'Label of entity_id')
        self.system_name = d('system_name', 'aerosim-usv', 'IMC system name (Announce)')
        sys_type = d('system_type', 'usv', f'IMC system type: {", ".join(SYSTEM_TYPES)}')
        self.state_dst = d('state_dst', BROADCAST, 'SimulatedState header dst (0xFFFF: any)',
                           0, 0xFFFF)
        self.state_dst_ent = d('state_dst_ent', 0xFF, 'SimulatedState header dst_ent', 0, 0xFF)
        sim_rate = d('simulated_state_rate_hz', 10.0, 'SimulatedState rate [Hz] (sim)',
                     0.1, 1000.0)
        est_rate = d('estimated_state_rate_hz', 5.0,
                     'EstimatedState rate [Hz] (sim); 0 = off', 0.0, 1000.0)
        announce_period = d('announce_period_s', 1.0, 'Announce and Heartbeat period [s] '
                            '(wall)', 0.1, 60.0)
        self.multicast = d('announce_multicast', True,
                           f'Also send Announce to the IMC discovery group {DISCOVERY_GROUP} '
                           '(DUNE takes nothing from a system it has not discovered)')
        announce_hosts = d('announce_hosts', '127.0.0.1',
                           'Hosts whose discovery ports get our Announce unicast (a DUNE '
                           "without a multicast route), comma-separated; '' = none",
                           any_type=True)
        ports = d('discovery_ports', '30100-30104', "IMC discovery ports (DUNE's "
                  'Transports.Discovery), e.g. 30100-30104', any_type=True)
        timestamps = d('timestamps', 'utc', "IMC timestamps: 'utc' (the UTC time when sent, "
                       "for DUNE's logs and Neptus), 'sim_utc' (UTC at start + sim time) or "
                       "'sim' (sim seconds)")
        leak_entities = d('leak_entities', DUNE_ASV_LEAKS,
                          "Leak entity labels (LeakSimulation), DUNE's ASV ones by default")
        self.thruster_id = d('thruster_id', 0, 'SetThrusterActuation id of the thruster', 0, 255)
        self.rudder_id = d('rudder_servo_id', 0, 'SetServoPosition id of the rudder', 0, 255)
        rudder_positive = d('rudder_positive', 'port', 'Sense of a positive SetServoPosition: '
                            "'port' (bow to port: DUNE's heading controller and plant) or "
                            "'starboard'")
        thruster_positive = d('thruster_positive', 'ahead', 'Sense of a positive '
                              "SetThrusterActuation: 'ahead' or 'astern'")
        control_level = d('control_level', 'actuators', "IMC control level at start: "
                          "'actuators' (SetThrusterActuation/SetServoPosition, DUNE's own "
                          "controllers) or 'guidance' (DesiredSpeed/DesiredHeading, our holds); "
                          'a message of the other level addressed to our system id switches')
        self.max_rudder_rad = d('max_rudder_rad', math.pi / 2,
                                'Largest |SetServoPosition| accepted [rad]', 0.01, math.pi)
        acoustic = AcousticParams(
            sound_speed_mps=d('sound_speed_mps', 1500.0, 'Sound speed [m/s]', 1300.0, 1700.0),
            max_range_m=d('acoustic_range_m', 1000.0, 'Acoustic link range [m]', 1.0, 1e5),
            loss_probability=d('acoustic_loss', 0.0, 'Loss probability per leg [-]', 0.0, 1.0),
            seed=d('seed', 0, 'Random seed (acoustic losses)', 0, 2**31 - 1))
        topside = d('topside_position_enu', [0.0, 0.0, 0.0],
                    'Position of the remote modem (senders of UASimulation) [m], ENU')
        self.vehicle_node = d('vehicle_node', 'usv_node',
                              'Node whose tas2acc_pgain/bank2p_pgain DynamicsSimParam sets')
        warn_period = d('warn_period_s', 2.0, 'Minimum period of repeated warnings [s]',
                              0.1, 600.0)
        allow_ids = d('allow_system_ids', '', 'IMC systems (header src) whose messages are '
                      "taken, comma-separated (0x3F02 or 16130); '' = any. Others are counted "
                      'as rejected_peer', any_type=True)
        try:
            if sys_type not in SYSTEM_TYPES:
                raise ValueError(f'system_type: one of {", ".join(SYSTEM_TYPES)}, got '
                                 f'{sys_type!r}')
            self.stamper = Stamper(timestamps)
            if rudder_positive not in RUDDER_SENSES:
                raise ValueError(f"rudder_positive: 'port' or 'starboard', got "
                                 f'{rudder_positive!r}')
            if thruster_positive not in THRUSTER_SENSES:
                raise ValueError(f"thruster_positive: 'ahead' or 'astern', got "
                                 f'{thruster_positive!r}')
            self.arbiter = ControlArbiter(control_level, self.system_id)
            self.discovery_ports = parse_ports(ports)
            self.announce_hosts = [h.strip() for h in str(announce_hosts).split(',')
                                   if h.strip()]
            for h in self.announce_hosts:
                try:
                    socket.getaddrinfo(h, None, socket.AF_INET, socket.SOCK_DGRAM)
                except (OSError, UnicodeError):
                    raise ValueError(f'announce_hosts: {h!r} is not an IPv4 address or a '
                                     'known host name') from None
            if len(topside) != 3 or not all(math.isfinite(x) for x in topside):
                raise ValueError(f'topside_position_enu: 3 finite numbers, got {topside}')
            self.leaks = Leaks(leak_entities)
            self.static_peers = [parse_endpoint(p, 'peers') for p in peers.split(',')
                                 if p.strip()]
            self.allow_ids = parse_id_list(allow_ids, 'allow_system_ids', 0, 0xFFFE)
            self.link = self._open_link('udp', bind)
            self.mcast = self._multicast_socket() if self.multicast else None
        except (ValueError, OSError) as exc:
            raise ConfigError(str(exc)) from exc
        self.rudder_positive, self.thruster_positive = rudder_positive, thruster_positive
        self.sys_type = SYSTEM_TYPES[sys_type]
        self.addr = codec.Address(self.system_id, self.entity_id)
        self.scenario = load_scenario(scenario_file)
        o = self.scenario.origin
        self.origin = o
        self.origin_rad = (math.radians(o.lat_deg), math.radians(o.lon_deg), o.alt_m)
        self.stream = stream_velocity_ned(self.scenario.environment.current_enu)
        self.topside_ned = np.array([topside[1], topside[0], -topside[2]], dtype=float)
        self.acoustic = AcousticLink(acoustic)
        self.imc_services = service_uris(*self.link.local)
        self.dynamic = {}            # (host, port) -> last seen (wall, monotonic)
        self._init_port('IMC', REJECT_KINDS, warn_period)
        self.counts = dict(rx=0, tx=0, simulated_state=0, estimated_state=0, commands=0,
                           ignored=0, ignored_actuators=0, ignored_guidance=0,
                           level_switches=0, announce_errors=0)
        self._noted = {}             # what -> monotonic time of its last info line
        self._state = None           # the last vehicle_state, its sim time [ns], kinematics
        self._t_ns = None
        self._kin = None
        self._gains = None

        self.pub_effector = self.create_publisher(AircraftEffectorCommand, 'effector_command',
                                                  qos.COMMAND)
        self.pub_autopilot = self.create_publisher(AutopilotCommand, 'autopilot_command',
                                                   qos.COMMAND)
        self.pub_leaks = self.create_publisher(LeakState, 'leaks', qos.LATCHED)
        self.pub_rx = self.create_publisher(AcousticData, 'acoustic/rx', qos.COMMAND)
        self.create_subscription(VehicleState, 'vehicle_state', self._on_state, qos.STATE)
        self.create_subscription(AcousticData, 'acoustic/tx', self._on_acoustic_tx,
                                 qos.COMMAND)
        self.cli_get = self.create_client(GetParameters, f'{self.vehicle_node}/get_parameters')
        self.cli_set = self.create_client(SetParametersAtomically,
                                         f'{self.vehicle_node}/set_parameters_atomically')
        wall = Clock(clock_type=ClockType.STEADY_TIME)
        self.create_timer(0.01, self._poll, clock=wall)
        self.create_timer(announce_period, self._send_presence, clock=wall)
        self.create_timer(1.0, self._publish_diagnostics, clock=wall)
        self._dec_sim = Decimator(sim_rate)
        self._dec_est = Decimator(est_rate) if est_rate > 0.0 else None
        self.create_timer(0.01, self._deliver_acoustic)
        self._handlers = {
            'Heartbeat': self._on_presence, 'Announce': self._on_presence,
            'EntityList': self._on_entity_list, 'LeakSimulation': self._on_leak,
            'UASimulation': self._on_ua, 'DynamicsSimParam': self._on_dynamics_param,
            'SetThrusterActuation': self._on_thruster, 'SetServoPosition': self._on_servo,
            'DesiredSpeed': self._on_speed, 'DesiredHeading': self._on_heading,
        }
        self._publish_leaks()
        self.get_logger().info(
            f'IMC udp {self.link.local[0]}:{self.link.local[1]} as {self.system_name} '
            f'(0x{self.system_id:04X}, entity {self.entity_id}) -> '
            f'{", ".join(f"{h}:{p}" for h, p in self.static_peers) or "no static peers"}'
            f'{" + dynamic peers" if self.dynamic_peers else ""}; SimulatedState {sim_rate:g} '
            f'Hz, EstimatedState {est_rate:g} Hz; origin {o.lat_deg:.6f} {o.lon_deg:.6f}; '
            f'leak entities {list(self.leaks.entities)}')
        self.get_logger().info(
            f'IMC discovery: Announce {" ".join(self.imc_services)} to '
            f'{DISCOVERY_GROUP if self.multicast else "no multicast"}'
            f'{" + " + ", ".join(self.announce_hosts) if self.announce_hosts else ""} on ports '
            f'{self.discovery_ports[0]}-{self.discovery_ports[-1]}; control level '
            f'{self.arbiter.level} (rudder positive = bow to {rudder_positive}, thruster '
            f'positive = {thruster_positive}); timestamps {timestamps}')

    def _d(self, *a, **k):
        return declare(self, *a, **k)

    # --- time and sending ------------------------------------------------------------------------
    def _sim_s(self) -> float:
        return self.get_clock().now().nanoseconds / NS_PER_S

    def _stamp_s(self) -> float:
        return self.stamper(self._sim_s())

    def _note(self, what: str, text: str):
        """Info line for expected, frequent events: at most once a minute per `what`."""
        now = time.monotonic()
        if now - self._noted.get(what, -1e9) >= max(60.0, self._warn_period):
            self._noted[what] = now
            self.get_logger().info(text)

    def _multicast_socket(self):
        """A socket for the discovery group: a socket bound to 127.0.0.1 cannot reach it.

        Bound to the bind host if that is a routable address (its interface), else to any.
        """
        host = self.link.local[0]
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_TTL, 1)
        s.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_LOOP, 1)
        s.bind((host if host not in ('0.0.0.0', '') and not host.startswith('127.')
                else '0.0.0.0', 0))
        s.setblocking(False)
        return s

    def destinations(self):
        """Static peers plus the dynamic peers heard within peer_timeout_s."""
        now = time.monotonic()
        for a in [a for a, t in self.dynamic.items() if now - t > self.peer_timeout_s]:
            del self.dynamic[a]
            self.get_logger().info(f'IMC peer {a[0]}:{a[1]} silent, dropped')
        return list(dict.fromkeys(self.static_peers + list(self.dynamic)))

    def _send(self, msg, to=None):
        """Serialize msg and send it to `to` (an address) or every destination."""
        data = msg.serialize()
        for a in ([to] if to else self.destinations()):
            if self.link.send_to(data, a):
                self.counts['tx'] += 1

    def _reply(self, msg, req, addr):
        """Send msg to the system that sent req (its address and IMC id)."""
        msg.dst, msg.dst_ent = req.src, req.src_ent
        self._send(msg, addr)

    # --- vehicle state out -----------------------------------------------------------------------
    def _on_state(self, msg: VehicleState):
        # Every step arrives here (1000/s at 20x a 50 Hz boat): keep it cheap, convert only
        # the samples that go out (and on demand, kinematics()).
        t_ns = time_ns(msg.header.stamp)
        if self._t_ns is not None and t_ns < self._t_ns:
            self.acoustic.clear()           # the sim was reset: frames in flight are gone
            self.leaks.reset()
            self._publish_leaks()
            for dec in (self._dec_sim, self._dec_est):
                if dec is not None:
                    dec.reset()
        self._t_ns, self._state, self._kin = t_ns, msg, None
        # Rates on the state's own sim time: exact periods, stamped with the sample's time.
        stamp = self.stamper(t_ns / NS_PER_S)
        if self._dec_sim.due(t_ns):
            self._send_simulated_state(stamp)
        if self._dec_est is not None and self._dec_est.due(t_ns):
            self._send_estimated_state(stamp)

    @property
    def kin(self):
        """ImcKinematics of the last vehicle_state (None before the first)."""
        if self._kin is None and self._state is not None:
            _t, p, v, q, _a, w = vehicle_state_arrays(self._state)
            self._kin = imc_kinematics(p, v, q, w, self.stream)
        return self._kin

    def _send_simulated_state(self, stamp_s: float):
        k = self.kin
        m = codec.simulated_state(self.addr, stamp_s, self.origin_rad, k.ned, k.euler,
                                  k.uvw_water, k.pqr, self.stream, self.state_dst,
                                  self.state_dst_ent)
        self._send(m)
        self.counts['simulated_state'] += 1

    def _send_estimated_state(self, stamp_s: float):
        k = self.kin
        self._send(codec.estimated_state(self.addr, stamp_s, self.origin_rad, k,
                                         depth=max(0.0, k.ned[2])))
        self.counts['estimated_state'] += 1

    def _send_presence(self):
        t = self._stamp_s()
        pos = rad_position(self.origin, self.kin.ned) if self.kin else self.origin_rad
        ann = codec.announce(self.addr, t, self.system_name, self.sys_type, pos,
                             self.imc_services)
        self._send(codec.stamp(imcpy.Heartbeat(), self.addr, t))
        self._send(ann)
        data = ann.serialize()
        for port in self.discovery_ports:
            if self.mcast is not None:
                try:
                    self.mcast.sendto(data, (DISCOVERY_GROUP, port))
                except OSError as exc:
                    self._announce_failed(f'{DISCOVERY_GROUP}:{port}', exc)
            for host in self.announce_hosts:
                if not self.link.send_to(data, (host, port)):
                    self._announce_failed(f'{host}:{port}', 'send error')
        self._send_leak_states()

    def _announce_failed(self, where, exc):
        self.counts['announce_errors'] += 1
        self._note('announce', f'Announce to {where} failed ({exc}); '
                   f'{self.counts["announce_errors"]} so far (no route to the discovery group: '
                   'announce_hosts still reaches a DUNE on those hosts)')

    # --- datagrams in ----------------------------------------------------------------------------
    def _poll(self):
        self._read_link(lambda data, addr: self._guarded(self.handle_datagram, data, addr,
                                                         'invalid'))

    def handle_datagram(self, data: bytes, addr):
        """Decode one datagram and act on it; every refusal is counted by kind."""
        try:
            msg = codec.decode(data)
        except codec.ImcError as exc:
            return self._reject(exc.kind, str(exc), addr)
        if msg.src == self.system_id:
            return                          # our own (multicast/broadcast echo)
        if self.allow_ids and msg.src not in self.allow_ids:
            return self._reject('peer', f'{msg.msg_name} from system 0x{msg.src:04X}, not in '
                                'allow_system_ids', addr)
        if msg.dst != self.system_id and msg.dst not in BROADCASTS:
            return self._reject('not_for_us', f'{msg.msg_name} for system 0x{msg.dst:04X}',
                                addr)
        self.counts['rx'] += 1
        handler = self._handlers.get(msg.msg_name)
        if handler is None:
            if msg.dst != self.system_id:     # a peer's telemetry (DUNE sends 70-80 a second)
                self.counts['ignored'] += 1
                return
            return self._reject('unhandled', f'{msg.msg_name} ({msg.msg_id}) is not handled '
                                'here', addr)
        try:
            handler(msg, addr)
        except ValueError as exc:
            self._reject('value', f'{msg.msg_name}: {exc}', addr)

    def _on_presence(self, msg, addr):
        if self.dynamic_peers and addr not in self.static_peers:
            if addr not in self.dynamic:
                self.get_logger().info(f'IMC peer {addr[0]}:{addr[1]} (system '
                                       f'0x{msg.src:04X}) gets our messages')
            self.dynamic[addr] = time.monotonic()

    def _on_entity_list(self, msg, addr):
        if msg.op != imcpy.EntityList.OperationEnum.QUERY:
            return
        ents = [(self.entity_label, self.entity_id)] + [
            (label, self.entity_id + 1 + i) for i, label in enumerate(self.leaks.entities)]
        self._reply(codec.entity_list_report(self.addr, self._stamp_s(), ents), msg, addr)

    # --- leaks -----------------------------------------------------------------------------------
    def _on_leak(self, msg, addr):
        named = self.leaks.apply(int(msg.op), msg.entities)     # ValueError: unknown entity
        self.get_logger().info(f'leak simulation {"ON" if int(msg.op) else "OFF"} for '
                               f'{list(named)}; leaking now: {list(self.leaks.active())}')
        self._publish_leaks()
        self._send_leak_states(named)
        active = self.leaks.active()
        rep = imcpy.LeakSimulation()
        rep.op = (imcpy.LeakSimulation.OperationEnum.ON if active
                  else imcpy.LeakSimulation.OperationEnum.OFF)
        rep.entities = ','.join(active)
        self._reply(codec.stamp(rep, self.addr, self._stamp_s()), msg, addr)

    def _send_leak_states(self, which=None):
        """EntityState of the leak entities (which: labels; None = all), to every peer."""
        t = self._stamp_s()
        for i, label in enumerate(self.leaks.entities):
            if which is None or label in which:
                leaking = self.leaks.leaking[label]
                self._send(codec.entity_state(self.addr, t, self.entity_id + 1 + i, leaking,
                                              'leak detected' if leaking else 'active'))

    def _publish_leaks(self):
        m = LeakState()
        m.header.stamp = self.get_clock().now().to_msg()
        m.entities = list(self.leaks.entities)
        m.leaking = [self.leaks.leaking[e] for e in self.leaks.entities]
        self.pub_leaks.publish(m)

    # --- acoustics -------------------------------------------------------------------------------
    def _range_to_topside(self) -> float:
        if self.kin is None:
            raise ValueError('no vehicle state yet: the vehicle position is unknown')
        return float(np.linalg.norm(np.asarray(self.kin.ned) - self.topside_ned))

    def _on_ua(self, msg, addr):
        kind = int(msg.type)
        if kind == PING_REPLY:
            raise ValueError('PING_REPLY: this system sent no ping to answer')
        t = self._sim_s()
        what = self.acoustic.transmit(t, kind, msg.src, self.system_id, int(msg.speed),
                                      bytes(msg.data), self._range_to_topside(),
                                      reply_to=(addr, msg.src_ent))
        self.get_logger().info(f'acoustic {"PING" if kind == PING else "DATA"} from '
                               f'0x{msg.src:04X} ({len(msg.data)} bytes) at t = {t:.3f} s: '
                               f'{what}', throttle_duration_sec=1.0)

    def _on_acoustic_tx(self, msg: AcousticData):
        try:
            what = self.acoustic.transmit(self._sim_s(), int(msg.type), self.system_id,
                                          int(msg.dst), int(msg.speed_bps), bytes(msg.data),
                                          self._range_to_topside())
        except ValueError as exc:
            return self._reject('value', f'acoustic/tx: {exc}')
        self.get_logger().info(f'acoustic tx to 0x{msg.dst:04X}: {what}',
                               throttle_duration_sec=1.0)

    def _deliver_acoustic(self):
        t = self._sim_s()
        for dl in self.acoustic.due(t):
            if dl.dst == self.system_id:            # for us: DATA, or the reply to our PING
                m = AcousticData(type=dl.kind, src=dl.src, dst=dl.dst, speed_bps=dl.speed_bps,
                                 range_m=dl.range_m, delay_s=dl.delay_s, data=list(dl.data))
                m.header.stamp = time_msg(int(dl.t_s * NS_PER_S))
                self.pub_rx.publish(m)
                continue
            ua = imcpy.UASimulation()               # from us to a system on the IMC network
            ua.type = imcpy.UASimulation.TypeEnum(dl.kind)
            ua.speed, ua.data = dl.speed_bps, dl.data
            to, dst_ent = dl.reply_to if dl.reply_to else (None, 0xFF)
            self._send(codec.stamp(ua, self.addr, self.stamper(dl.t_s), dl.dst, dst_ent),
                       to)               # stamped with its arrival time (sim)

    # --- vehicle dynamics parameters -------------------------------------------------------------
    def _on_dynamics_param(self, msg, addr):
        op = int(msg.op)
        if op == 2:             # REPORT: someone else's answer
            return
        if op not in (0, 1):
            raise ValueError(f'op {op}: REQUEST (0), SET (1) or REPORT (2)')
        if not (self.cli_get.service_is_ready() and self.cli_set.service_is_ready()):
            return self._reject('unavailable', f'DynamicsSimParam: {self.vehicle_node} '
                                'parameter services not available', addr)
        if op == 1:
            # The vehicle node range-checks (its parameter descriptors and callback); both
            # gains are set at once or not at all, and the REPORT tells the gains in force.
            req = SetParametersAtomically.Request()
            req.parameters = [
                ParameterMsg(name=n, value=ParameterValue(type=ParameterType.PARAMETER_DOUBLE,
                                                          double_value=float(v)))
                for n, v in (('tas2acc_pgain', msg.tas2acc_pgain),
                             ('bank2p_pgain', msg.bank2p_pgain))]
            fut = self.cli_set.call_async(req)
            fut.add_done_callback(lambda f: self._after_set(f, msg, addr))
        else:
            self._report_gains(msg, addr)

    def _after_set(self, fut, req, addr):
        res = fut.result()
        if res is None or not res.result.successful:
            self._reject('value', f'DynamicsSimParam SET refused by {self.vehicle_node}: '
                         f'{res.result.reason if res else "no answer"}', addr)
        else:
            self.get_logger().info(f'DynamicsSimParam SET tas2acc_pgain '
                                   f'{req.tas2acc_pgain:g}, bank2p_pgain {req.bank2p_pgain:g}')
        self._report_gains(req, addr)

    def _report_gains(self, req, addr):
        fut = self.cli_get.call_async(GetParameters.Request(
            names=['tas2acc_pgain', 'bank2p_pgain']))

        def done(f):
            res = f.result()
            if res is None or len(res.values) != 2:
                return self._reject('unavailable', 'DynamicsSimParam: no gains from '
                                    f'{self.vehicle_node}', addr)
            rep = imcpy.DynamicsSimParam()
            rep.op = imcpy.DynamicsSimParam.ActionOnTheVehicleSimulationParametersEnum.REPORT
            rep.tas2acc_pgain, rep.bank2p_pgain = (v.double_value for v in res.values)
            self._reply(codec.stamp(rep, self.addr, self._stamp_s()), req, addr)
        fut.add_done_callback(done)

    # --- control in ------------------------------------------------------------------------------
    def _effector(self, throttle=None, rudder=None):
        m = AircraftEffectorCommand()
        m.header.stamp = self.get_clock().now().to_msg()
        if throttle is not None:
            m.throttle_cmd = [float(throttle)]
        if rudder is not None:
            m.rudder_cmd_angle_rad = [float(rudder)]
        self.pub_effector.publish(m)
        self.counts['commands'] += 1

    def _autopilot(self, speed_mps=None, heading_rad=None):
        m = AutopilotCommand()
        m.header.stamp = self.get_clock().now().to_msg()
        m.flight_plan_command = AutopilotCommand.RUN
        m.use_manual_setpoints = True
        if speed_mps is not None:
            m.airspeed_hold, m.airspeed_setpoint_kts = True, speed_mps / KNOT_MPS
        if heading_rad is not None:
            m.heading_hold = True
            m.heading_setpoint_deg = math.degrees(heading_rad) % 360.0
        self.pub_autopilot.publish(m)
        self.counts['commands'] += 1

    def _level(self, level: str, msg) -> bool:
        """Whether msg (of control `level`) may drive now; logs and counts the decision."""
        take, switched = self.arbiter.decide(level, msg.dst)
        if switched:
            self.counts['level_switches'] += 1
            self.get_logger().info(
                f'IMC control level -> {level}: {msg.msg_name} addressed to us by '
                f'0x{msg.src:04X}; the other level is ignored until one of its messages is '
                'addressed to us (holds released, actuators at 0 until commanded)')
            self._effector(throttle=0.0, rudder=0.0)
        elif not take:
            self.counts[f'ignored_{level}'] += 1
            self._note(f'ignored_{level}', f'{msg.msg_name} (broadcast, from 0x{msg.src:04X}) '
                       f"ignored: control level is {self.arbiter.level} (e.g. DUNE's telemetry "
                       f'copies of its Desired*); address it to 0x{self.system_id:04X} to '
                       f'switch ({self.counts[f"ignored_{level}"]} ignored so far)')
        return take

    def _on_thruster(self, msg, addr):
        if msg.id != self.thruster_id:
            raise ValueError(f'thruster id {msg.id}: this vehicle has thruster '
                             f'{self.thruster_id}')
        if not (math.isfinite(msg.value) and -1.0 <= msg.value <= 1.0):
            raise ValueError(f'value {msg.value!r} outside [-1, 1]')
        if self._level(ACTUATORS, msg):
            self._effector(throttle=throttle_aerosim(msg.value, self.thruster_positive))

    def _on_servo(self, msg, addr):
        if msg.id != self.rudder_id:
            raise ValueError(f'servo id {msg.id}: the rudder is servo {self.rudder_id}')
        if not (math.isfinite(msg.value) and abs(msg.value) <= self.max_rudder_rad):
            raise ValueError(f'value {msg.value!r} rad outside +-{self.max_rudder_rad:g}')
        if self._level(ACTUATORS, msg):
            self._effector(rudder=rudder_aerosim(msg.value, self.rudder_positive))

    def _on_speed(self, msg, addr):
        units, v = int(msg.speed_units), msg.value
        if not math.isfinite(v):
            raise ValueError(f'value {v!r}')
        if units == int(imcpy.SpeedUnits.METERS_PS):
            if abs(v) > 50.0:
                raise ValueError(f'{v} m/s outside +-50')
        elif units == int(imcpy.SpeedUnits.PERCENTAGE):
            if abs(v) > 100.0:
                raise ValueError(f'{v} % outside +-100')
        else:
            raise ValueError('speed in RPM: this vehicle takes m/s or % (no motor model)')
        if not self._level(GUIDANCE, msg):
            return
        if units == int(imcpy.SpeedUnits.METERS_PS):
            self._autopilot(speed_mps=v)
        else:
            self._effector(throttle=v / 100.0)

    def _on_heading(self, msg, addr):
        if not (math.isfinite(msg.value) and abs(msg.value) <= 2.0 * math.pi):
            raise ValueError(f'value {msg.value!r} rad outside +-2 pi')
        if self._level(GUIDANCE, msg):
            self._autopilot(heading_rad=msg.value)

    def destroy_node(self):
        """Close the discovery socket too."""
        if getattr(self, 'mcast', None) is not None:
            self.mcast.close()
        super().destroy_node()

    # --- status ----------------------------------------------------------------------------------
    def _publish_diagnostics(self):
        up = self.kin is not None
        self._publish_port_status(
            'IMC link', self.system_name, up,
            f'{len(self.destinations())} peers, {self.counts["rx"]} in, '
            f'{sum(self.rejects.values())} rejected' if up else 'no vehicle_state yet',
            self.counts, [('acoustic_in_flight', len(self.acoustic)),
                          ('control_level', self.arbiter.level),
                          ('leaking', ','.join(self.leaks.active()) or 'none')])


def main(args=None):
    """Run imc_bridge."""
    run_node(ImcBridge, 'imc_bridge', args)


if __name__ == '__main__':
    main()
