"""The IMC bridge's decisions, without ROS: what to send, take, refuse and log.

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
  bits / speed, range limit, a loss growing with range by the sonar equation, and a fixed
  loss); DATA for us goes to acoustic/rx, a PING is answered by a
  PING_REPLY from us after the two-way travel time. acoustic/tx sends ours the other way.
- DynamicsSimParam (53): REQUEST -> REPORT of the vehicle node's tas2acc_pgain/bank2p_pgain;
  SET range-checks, sets them on the vehicle node (ROS parameter services), answers REPORT.
- Control, one level at a time (control_level; imc_bridge.core.control): actuators =
  SetThrusterActuation (id thruster_id, -1..1, positive = ahead) and SetServoPosition (id
  rudder_servo_id, rad, positive = bow to port as DUNE's heading controller and plant take it)
  -> effector_command; an AUV's fins (vehicle_file with fins: kinds/auv/params) by servo id from
  ServoPosition (DUNE's Simulators.Servos, fin_source) or SetServoPosition, in rad as VSIM
  takes them, -> effector_command's rudder and elevator arrays (fin order); guidance =
  DesiredSpeed (m/s, or % of throttle) and DesiredHeading (rad) -> autopilot_command (the
  boat's speed/heading holds). A message of the other level switches the level only when
  addressed to our system id; broadcast copies (DUNE's telemetry of its Desired*) are counted
  as ignored_<level> and drive nothing.
- Heartbeat/Announce: the sender gets our messages while it keeps talking (dynamic_peers).

ImcBridgeCore owns the bridge's state (dynamic peers, leaks, the acoustic link, the control
arbiter, the last vehicle state, counters); the node (imc_bridge_node) calls it from its one
executor thread and carries out the Actions it returns: IMC messages to send (to an address,
or to every destination), effector/autopilot commands, acoustic receptions, log lines, the
reject, a DynamicsSimParam to take to the vehicle node's parameter services.

Every datagram that is not one valid IMC message for us is one reject of a kind: the codec's
kinds; 'peer' (a system not in allow_system_ids, or a control input (CONTROL_INPUTS) from an
address that is not the vehicle's peer: control_from); 'not_for_us' (addressed to another
system; housekeeping such as a Heartbeat DUNE relays is counted as relayed instead);
'value' (a valid message with values we refuse); 'unhandled' (addressed to us, not
handled here); the node adds 'unavailable' (the vehicle node did not answer), 'busy' (more
DynamicsSimParam requests waiting than the node queues) and 'invalid' (a handler raised).
Valid broadcast messages we do not use (DUNE's telemetry, 70-80 a second) are counted as
ignored, not refused.
"""

from dataclasses import dataclass, field
import math
from typing import Any, Callable, Dict, List, Optional, Tuple

import imcpy
import numpy as np

from imc_bridge.core import codec
from imc_bridge.core.acoustic import PING, PING_REPLY, AcousticLink
from imc_bridge.core.bridge_config import (  # noqa: F401 - re-exported: the node, tests, docs
    ANY_TYPE,
    DUNE_ASV_LEAKS,
    HARBOUR_GEOID_HEIGHT_M,
    NOTE_PERIOD_S,
    PARAMETERS,
    REJECT_KINDS,
    SYSTEM_TYPES,
    Addr,
    ImcConfig,
    ImcSetup,
    geoid_warning,
)
from imc_bridge.core.control import BROADCASTS, ControlArbiter, Stamper
from imc_bridge.core.control_in import (  # noqa: F401 - re-exported
    CONTROL_INPUTS,
    MAX_SPEED_MPS,
    MAX_SPEED_PCT,
    ControlInput,
)
from imc_bridge.core.discovery import DISCOVERY_GROUP, interface_addresses, service_uris
from imc_bridge.core.leaks import LeakState
from imc_bridge.core.state import ImcKinematics, imc_kinematics, rad_position, stream_velocity_ned
from sim_core.actions import Actions as BaseActions
from sim_core.clock import ResetDetector
from sim_core.config import checked
from sim_core.decimator import Decimator
from sim_core.errors import ConfigError
from sim_core.frames import VehicleSample
from sim_core.scenario import Scenario
from sim_core.timeutil import NS_PER_S
from sim_dynamics.core.auv import fin_table

# Housekeeping every IMC system sends: addressed to another system (DUNE relays a console's
# Heartbeat to DUNE, and its EntityState/EntityList, to every node) it is counted as relayed,
# not refused or warned about.
HOUSEKEEPING = frozenset((
    'Heartbeat', 'Announce', 'AnnounceService', 'EntityList', 'EntityInfo', 'QueryEntityInfo',
    'EntityState', 'QueryEntityState', 'EntityActivationState', 'QueryEntityActivationState',
    'EntityParameters', 'CpuUsage', 'StorageUsage', 'Voltage', 'Current', 'FuelLevel',
    'Temperature', 'TransportBindings', 'RSSI', 'LinkLatency',
    # a vehicle's DUNE relays its plan traffic with the consoles and its own transmission
    # requests to every node (seen with DUNE's LAUV: a console's PlanSpecification to DUNE,
    # PlanControl replies to the console, TransmissionRequest and IridiumMsgTx to itself)
    'PlanControl', 'PlanControlState', 'PlanDB', 'PlanSpecification', 'TransmissionRequest',
    'TransmissionStatus', 'IridiumMsgTx', 'IridiumTxStatus'))


@dataclass
class Actions(BaseActions):
    """A decision (sim_core.actions) with the IMC link's own fields.

    sends: (IMC message, address or None = every destination); logs: info lines; limited:
    the frequent ones (acoustic traffic once a second, the expected ones once a minute per
    kind, an ID conflict loudly once a minute).
    """

    discovery: List[Tuple[bytes, Addr, bool]] = field(default_factory=list)  # multicast?
    # (throttle, rudder, elevators): None = not commanded; an AUV's rudder and elevators are
    # tuples of every fin of the role (fin order), a boat's rudder one angle
    effector: List[Tuple[Any, Any, Any]] = field(default_factory=list)
    autopilot: List[Tuple[Optional[float], Optional[float]]] = field(default_factory=list)
    acoustic_rx: list = field(default_factory=list)     # acoustic.Delivery for us
    leaks_changed: bool = False
    gains: Optional[Tuple[int, Any, Addr]] = None       # (op, DynamicsSimParam, sender)

    def reply(self, msg, req, addr: Addr) -> None:
        """Send msg to the system that sent req (its address and IMC id)."""
        msg.dst, msg.dst_ent = req.src, req.src_ent
        self.sends.append((msg, addr))


class ImcBridgeCore(ControlInput):
    """The IMC link's state and rules (see the module docstring); control: ControlInput."""

    def __init__(self, cfg: ImcConfig, scenario: Scenario, local: Addr):
        """Check the configuration (ConfigError naming the parameter); local: our address."""
        self.cfg = cfg = checked(cfg, PARAMETERS)
        setup = ImcSetup(cfg)
        try:
            self.stamper = Stamper(cfg.timestamps)
            self.arbiter = ControlArbiter(cfg.control_level, cfg.system_id)
            self.leaks = LeakState(cfg.leak_entities)
        except ValueError as exc:
            raise ConfigError(str(exc)) from exc
        self.discovery_ports, self.announce_hosts = setup.discovery_ports, setup.announce_hosts
        self.static_peers, self.allow_ids = setup.static_peers, setup.allow_ids
        self.controllers = setup.controllers
        self.acoustic = AcousticLink(setup.acoustic)
        self.topside_ned = setup.topside_ned
        self.note_s = max(NOTE_PERIOD_S, cfg.warn_period_s)     # expected events' log period
        # an AUV's fins (servo id, surface) in fin order; a boat: none (one rudder)
        self.fins = fin_table(cfg.vehicle_file) if cfg.vehicle_file else ()
        self.fin_angles = [0.0] * len(self.fins)
        self.system_id = cfg.system_id
        self.sys_type = SYSTEM_TYPES[cfg.system_type]
        self.addr = codec.Address(cfg.system_id, cfg.entity_id)
        self.scenario = scenario
        o = self.origin = scenario.origin
        # IMC's height is above the WGS-84 ellipsoid: the origin's altitude above mean sea
        # level plus the geoid's height there
        self.origin_rad = (math.radians(o.lat_deg), math.radians(o.lon_deg),
                           o.alt_m + cfg.origin_geoid_height_m)
        warning = geoid_warning(cfg, o)
        self.warnings: List[str] = [warning] if warning else []    # for the node to log
        if self.controllers == ():
            self.warnings.append('no system may drive this vehicle over IMC: control_from is '
                                 "'peers' and peers is empty (set control_from)")
        self.stream = stream_velocity_ned(scenario.environment.current_enu)
        self.imc_services = service_uris(*local)
        self.dynamic: Dict[Addr, float] = {}    # dynamic peer -> last heard (monotonic)
        # where our own datagrams come from (an Announce from elsewhere with our id or name is
        # another system's); the node adds its multicast socket's port
        self.own_ports = {local[1]}
        self.own_ips = set(interface_addresses()) | {local[0], '127.0.0.1'}
        self.conflicts: Dict[Addr, Tuple[int, str, float]] = {}    # addr -> (id, name, heard)
        self.counts = {'rx': 0, 'tx': 0, 'simulated_state': 0, 'estimated_state': 0, 'commands': 0,
                       'ignored': 0, 'relayed': 0, 'ignored_actuators': 0, 'ignored_guidance': 0,
                       'level_switches': 0, 'announce_errors': 0, 'id_conflicts': 0}
        self._t_ns: Optional[int] = None
        self._clock_reset = ResetDetector()
        self._dec_sim = Decimator(cfg.simulated_state_rate_hz)
        self._dec_est = Decimator(cfg.estimated_state_rate_hz) \
            if cfg.estimated_state_rate_hz > 0.0 else None
        self._arrays: Optional[Callable[[], VehicleSample]] = None  # the last state, lazily
        self._kin: Optional[ImcKinematics] = None
        self._handlers = {
            'Heartbeat': self._on_presence, 'Announce': self._on_presence,
            'EntityList': self._on_entity_list, 'LeakSimulation': self._on_leak,
            'UASimulation': self._on_ua, 'DynamicsSimParam': self._on_dynamics_param,
            'SetThrusterActuation': self._on_thruster, 'SetServoPosition': self._on_servo,
            'ServoPosition': self._on_servo_position,
            'DesiredSpeed': self._on_speed, 'DesiredHeading': self._on_heading,
        }

    def destinations(self, now: float) -> Tuple[List[Addr], List[Addr]]:
        """(static peers plus the dynamic peers heard within peer_timeout_s, those dropped)."""
        gone = [a for a, t in self.dynamic.items() if now - t > self.cfg.peer_timeout_s]
        for a in gone:
            del self.dynamic[a]
        return list(dict.fromkeys(self.static_peers + list(self.dynamic))), gone

    # --- vehicle state out -----------------------------------------------------------------------
    def on_state(self, t_ns: int, arrays: Callable[[], VehicleSample]) -> Actions:
        """A vehicle_state of sim time t_ns; arrays() gives its VehicleSample.

        Every step arrives here (1000/s at 20x a 50 Hz boat): kept cheap, the state is
        converted only for the samples that go out, at their rates on the state's own sim time
        (exact periods, stamped with the sample's time). Time going back is a reset: the
        acoustic frames in flight and the leaks are cleared.
        """
        act = Actions()
        if self._clock_reset.went_back(t_ns):
            self.acoustic.clear()
            self.leaks.reset()
            act.leaks_changed = True
            for dec in (self._dec_sim, self._dec_est):
                if dec is not None:
                    dec.reset()
        self._t_ns, self._arrays, self._kin = t_ns, arrays, None
        stamp = self.stamper(t_ns / NS_PER_S)
        if self._dec_sim.due(t_ns):
            act.sends.append((self.simulated_state(stamp), None))
        if self._dec_est is not None and self._dec_est.due(t_ns):
            act.sends.append((self.estimated_state(stamp), None))
        return act

    @property
    def kin(self) -> Optional[ImcKinematics]:
        """ImcKinematics of the last vehicle_state (None before the first)."""
        if self._kin is None and self._arrays is not None:
            s = self._arrays()
            self._kin = imc_kinematics(s.p_enu, s.v_enu, s.q_enu_flu, s.w_flu, self.stream)
        return self._kin

    def simulated_state(self, stamp_s: float):
        """SimulatedState (50) of the last vehicle state, stamped stamp_s."""
        k = self.kin
        assert k is not None            # called for a vehicle state (on_state)
        self.counts['simulated_state'] += 1
        return codec.simulated_state(self.addr, stamp_s, self.origin_rad, k.ned, k.euler,
                                     k.uvw_water, k.pqr, self.stream, self.cfg.state_dst,
                                     self.cfg.state_dst_ent)

    def estimated_state(self, stamp_s: float):
        """EstimatedState (350) of the last vehicle state, stamped stamp_s."""
        k = self.kin
        assert k is not None            # called for a vehicle state (on_state)
        self.counts['estimated_state'] += 1
        return codec.estimated_state(self.addr, stamp_s, self.origin_rad, k,
                                     depth=max(0.0, k.ned[2]))

    def presence(self, sim_s: float, multicast: bool) -> Actions:
        """Heartbeat and Announce to the peers, Announce to discovery, the leak states."""
        act = Actions()
        t = self.stamper(sim_s)
        pos = (rad_position(self.origin, self.kin.ned, self.cfg.origin_geoid_height_m)
               if self.kin else self.origin_rad)
        ann = codec.announce(self.addr, t, self.cfg.system_name, self.sys_type, pos,
                             self.imc_services)
        act.sends += [(codec.stamp(imcpy.Heartbeat(), self.addr, t), None), (ann, None)]
        data = ann.serialize()
        for port in self.discovery_ports:
            if multicast:
                act.discovery.append((data, (DISCOVERY_GROUP, port), True))
            act.discovery += [(data, (host, port), False) for host in self.announce_hosts]
        self._leak_states(act, sim_s)
        return act

    # --- datagrams in ----------------------------------------------------------------------------
    def on_datagram(self, data: bytes, addr: Addr, sim_s: float, now: float) -> Actions:
        """Decode one datagram and act on it; a refusal is Actions.reject (kind, text)."""
        act = Actions()
        try:
            msg = codec.decode(data)
        except codec.ImcError as exc:
            act.refuse(exc.kind, str(exc))
            return act
        if msg.msg_name == 'Announce' and self._check_announce(act, msg, addr, now):
            return act
        if msg.src == self.system_id:
            return act                      # our own (multicast/broadcast echo)
        if self.allow_ids and msg.src not in self.allow_ids:
            act.refuse('peer', f'{msg.msg_name} from system 0x{msg.src:04X}, not in '
                       'allow_system_ids')
            return act
        if msg.dst != self.system_id and msg.dst not in BROADCASTS:
            if msg.msg_name in HOUSEKEEPING:    # relayed housekeeping: normal IMC traffic
                self.counts['relayed'] += 1
                return act
            act.refuse('not_for_us', f'{msg.msg_name} for system 0x{msg.dst:04X}')
            return act
        if msg.msg_name in CONTROL_INPUTS and not self.from_controller(addr):
            act.refuse('peer', f'{msg.msg_name} from system 0x{msg.src:04X} at {addr[0]}:'
                       f'{addr[1]}: the vehicle takes control inputs from '
                       f'{self.control_from()} (control_from)')
            return act
        self.counts['rx'] += 1
        handler = self._handlers.get(msg.msg_name)
        if handler is None:
            if msg.dst != self.system_id:     # a peer's telemetry (DUNE sends 70-80 a second)
                self.counts['ignored'] += 1
            else:
                act.refuse('unhandled', f'{msg.msg_name} ({msg.msg_id}) is not handled here')
            return act
        try:
            handler(act, msg, addr, sim_s, now)
        except ValueError as exc:
            act.refuse('value', f'{msg.msg_name}: {exc}')
        return act

    def on_discovery(self, data: bytes, addr: Addr, now: float) -> Actions:
        """A datagram on the IMC discovery group: only an Announce matters (our id, name)."""
        act = Actions()
        try:
            msg = codec.decode(data)
        except codec.ImcError:
            return act                      # DUNE's discovery drops it too
        if msg.msg_name == 'Announce':
            self._check_announce(act, msg, addr, now)
        return act

    def _check_announce(self, act: Actions, msg, addr: Addr, now: float) -> bool:
        """Whether msg is another system's Announce of our id or name (then logged, counted).

        Two systems with one IMC id break the network: DUNE takes either's SimulatedState (the
        boat jumped 50-83 m). An Announce of our id or name that did not come from our sockets
        is another system's.
        """
        # a multicast route on lo without a source address: our own Announce comes back
        # from 0.0.0.0 (checked with a real DUNE's machine set up so)
        ours = addr[1] in self.own_ports and (addr[0] in self.own_ips or addr[0] == '0.0.0.0')
        same_id, same_name = msg.src == self.system_id, msg.sys_name == self.cfg.system_name
        if ours or not (same_id or same_name):
            return False
        self.counts['id_conflicts'] += 1
        self.conflicts[addr] = (msg.src, msg.sys_name, now)
        what = ('our IMC system id' if same_id else 'our system name') + (
            ' and name' if same_id and same_name else '')
        act.log_every(f'conflict {addr[0]}:{addr[1]}', (
            f'IMC conflict: {msg.sys_name!r} (0x{msg.src:04X}) at {addr[0]}:{addr[1]} announces '
            f'{what} ({self.cfg.system_name!r}, 0x{self.system_id:04X}): peers will mix the '
            "two systems (DUNE takes either one's SimulatedState). Give each instance its own "
            'system_id and system_name (imc_params, docs/imc_bridge.md); '
            f'{self.counts["id_conflicts"]} conflicting Announce so far'), NOTE_PERIOD_S, 'error')
        return True

    def active_conflicts(self, now: float) -> List[str]:
        """'name (0xID) at ip:port' of the conflicting systems heard within peer_timeout_s."""
        return [f'{name} (0x{sid:04X}) at {a[0]}:{a[1]}'
                for a, (sid, name, t) in self.conflicts.items()
                if now - t <= self.cfg.peer_timeout_s]

    def _on_presence(self, act: Actions, msg, addr: Addr, _sim_s: float, now: float):
        if self.cfg.dynamic_peers and addr not in self.static_peers:
            if addr not in self.dynamic:
                act.log(f'IMC peer {addr[0]}:{addr[1]} (system 0x{msg.src:04X}) gets '
                                'our messages')
            self.dynamic[addr] = now

    def _on_entity_list(self, act: Actions, msg, addr: Addr, sim_s: float, _now: float):
        if msg.op != imcpy.EntityList.OperationEnum.QUERY:
            return
        eid = self.cfg.entity_id
        ents = [(self.cfg.entity_label, eid)] + [
            (label, eid + 1 + i) for i, label in enumerate(self.leaks.entities)]
        act.reply(codec.entity_list_report(self.addr, self.stamper(sim_s), ents), msg, addr)

    # --- leaks -----------------------------------------------------------------------------------
    def _on_leak(self, act: Actions, msg, addr: Addr, sim_s: float, _now: float):
        named = self.leaks.apply(int(msg.op), msg.entities)     # ValueError: unknown entity
        act.log(f'leak simulation {"ON" if int(msg.op) else "OFF"} for {list(named)}; '
                        f'leaking now: {list(self.leaks.active())}')
        act.leaks_changed = True
        self._leak_states(act, sim_s, named)
        active = self.leaks.active()
        rep = imcpy.LeakSimulation()
        rep.op = (imcpy.LeakSimulation.OperationEnum.ON if active
                  else imcpy.LeakSimulation.OperationEnum.OFF)
        rep.entities = ','.join(active)
        act.reply(codec.stamp(rep, self.addr, self.stamper(sim_s)), msg, addr)

    def _leak_states(self, act: Actions, sim_s: float, which=None) -> None:
        """EntityState of the leak entities (which: labels; None = all), to every peer."""
        t = self.stamper(sim_s)
        for i, label in enumerate(self.leaks.entities):
            if which is None or label in which:
                leaking = self.leaks.leaking[label]
                act.sends.append((codec.entity_state(
                    self.addr, t, self.cfg.entity_id + 1 + i, leaking,
                    'leak detected' if leaking else 'active'), None))

    # --- acoustics -------------------------------------------------------------------------------
    def _range_to_topside(self) -> float:
        if self.kin is None:
            raise ValueError('no vehicle state yet: the vehicle position is unknown')
        return float(np.linalg.norm(np.asarray(self.kin.ned) - self.topside_ned))

    def _on_ua(self, act: Actions, msg, addr: Addr, sim_s: float, _now: float):
        kind = int(msg.type)
        if kind == PING_REPLY:
            raise ValueError('PING_REPLY: this system sent no ping to answer')
        what = self.acoustic.transmit(sim_s, kind, msg.src, self.system_id, int(msg.speed),
                                      bytes(msg.data), self._range_to_topside(),
                                      reply_to=(addr, msg.src_ent))
        act.log_every('acoustic', f'acoustic {"PING" if kind == PING else "DATA"} from '
                      f'0x{msg.src:04X} ({len(msg.data)} bytes) at t = {sim_s:.3f} s: {what}',
                      1.0)

    def acoustic_tx(self, kind: int, dst: int, speed_bps: int, data: bytes, sim_s: float) -> str:
        """Our transmission (acoustic/tx): what happens to it; ValueError if refused."""
        return self.acoustic.transmit(sim_s, kind, self.system_id, dst, speed_bps, data,
                                      self._range_to_topside())

    def deliver_acoustic(self, sim_s: float) -> Actions:
        """Frames arriving by sim_s: ours to acoustic/rx, the others as UASimulation."""
        act = Actions()
        for dl in self.acoustic.due(sim_s):
            if dl.dst == self.system_id:            # for us: DATA, or the reply to our PING
                act.acoustic_rx.append(dl)
                continue
            ua = imcpy.UASimulation()               # from us to a system on the IMC network
            ua.type = imcpy.UASimulation.TypeEnum(dl.kind)
            ua.speed, ua.data = dl.speed_bps, dl.data
            to, dst_ent = dl.reply_to if dl.reply_to else (None, 0xFF)
            # stamped with its arrival time (sim)
            act.sends.append((codec.stamp(ua, self.addr, self.stamper(dl.t_s), dl.dst,
                                          dst_ent), to))
        return act

    # --- vehicle dynamics parameters -------------------------------------------------------------
    def _on_dynamics_param(self, act: Actions, msg, addr: Addr, _sim_s: float, _now: float):
        op = int(msg.op)
        if op == 2:             # REPORT: someone else's answer
            return
        if op not in (0, 1):
            raise ValueError(f'op {op}: REQUEST (0), SET (1) or REPORT (2)')
        act.gains = (op, msg, addr)     # the vehicle node range-checks and answers (the node)

    def gains_report(self, tas2acc_pgain: float, bank2p_pgain: float, sim_s: float):
        """DynamicsSimParam REPORT of the gains in force."""
        rep = imcpy.DynamicsSimParam()
        rep.op = imcpy.DynamicsSimParam.ActionOnTheVehicleSimulationParametersEnum.REPORT
        rep.tas2acc_pgain, rep.bank2p_pgain = tas2acc_pgain, bank2p_pgain
        return codec.stamp(rep, self.addr, self.stamper(sim_s))
