"""imc_bridge: the simulated vehicle as an IMC system on UDP, for LSTS DUNE and Neptus.

What goes out and what comes in, message by message: imc_bridge.core.bridge. Topics:
vehicle_state and acoustic/tx in; effector_command, autopilot_command, leaks (latched) and
acoustic/rx out; DynamicsSimParam reaches the vehicle node's parameter services.
The decisions are ImcBridgeCore's (imc_bridge.core.bridge: what each message does, how input
is refused and counted); this node wires the socket, timers, topics and parameter services.
Counts are on /diagnostics every second.
"""

import time

from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
from rclpy.clock import Clock, ClockType
from std_msgs.msg import Header

from aerosim_msgs.msg import (
    AcousticData,
    AircraftEffectorCommand,
    AutopilotCommand,
    LeakState,
    VehicleState,
)
from imc_bridge.core import bridge as ib
from imc_bridge.core.discovery import DISCOVERY_GROUP
from imc_bridge.ros_io import (
    VehicleGains,
    acoustic_msg,
    autopilot_msg,
    discovery_listener,
    effector_msg,
    multicast_socket,
)
from sim_core.errors import ConfigError
from sim_core.scenario import load_scenario
from sim_core.timeutil import NS_PER_S
from sim_ros import qos
from sim_ros.bridge_node import BridgeNode
from sim_ros.convert import time_ns, vehicle_state_arrays
from sim_ros.params import read_config
from sim_ros.run import run_node


class ImcBridge(BridgeNode):
    """IMC UDP bridge node: socket, timers, topics and services around an ImcBridgeCore."""

    core = mcast = listen = None    # destroy_node() may run on a half-built node

    def __init__(self):
        """Declare parameters, bind the socket, create the interfaces."""
        super().__init__('imc_bridge')
        cfg = self.cfg = read_config(self, ib.ImcConfig, ib.PARAMETERS, ib.ANY_TYPE)
        self._init_port('IMC', ib.REJECT_KINDS, cfg.warn_period_s)
        try:
            self.link = self._open_link('udp', cfg.bind)
            self.mcast = multicast_socket(self.link.local[0]) if cfg.announce_multicast \
                else None
        except (ValueError, OSError) as exc:
            raise ConfigError(str(exc)) from exc
        self.core = c = ib.ImcBridgeCore(cfg, load_scenario(cfg.scenario_file), self.link.local)
        if self.mcast is not None:
            c.own_ports.add(self.mcast.getsockname()[1])
            self.listen = discovery_listener(c.discovery_ports[-1], self.get_logger())
        self.pub_effector = self.create_publisher(AircraftEffectorCommand, 'effector_command',
                                                  qos.COMMAND)
        self.pub_autopilot = self.create_publisher(AutopilotCommand, 'autopilot_command',
                                                   qos.COMMAND)
        self.pub_leaks = self.create_publisher(LeakState, 'leaks', qos.LATCHED)
        self.pub_rx = self.create_publisher(AcousticData, 'acoustic/rx', qos.COMMAND)
        self.create_subscription(VehicleState, 'vehicle_state', self._on_state, qos.STATE)
        self.create_subscription(AcousticData, 'acoustic/tx', self._on_acoustic_tx,
                                 qos.COMMAND)
        self.gains = VehicleGains(self, cfg.vehicle_node, self._gains_report)
        wall = Clock(clock_type=ClockType.STEADY_TIME)
        self.create_timer(0.01, self._poll, clock=wall)
        self.create_timer(cfg.announce_period_s, lambda: self._apply(
            c.presence(self._sim_s(), self.mcast is not None)), clock=wall)
        self.create_timer(1.0, self._publish_diagnostics, clock=wall)
        self.create_timer(0.01, lambda: self._apply(c.deliver_acoustic(self._sim_s())))
        self._publish_leaks()
        for text in c.warnings:
            self.get_logger().warning(text)
        peers = ', '.join(f'{h}:{p}' for h, p in c.static_peers) or 'no static peers'
        self.get_logger().info(
            f'IMC udp {self.link.local[0]}:{self.link.local[1]} as {cfg.system_name} '
            f'(0x{cfg.system_id:04X}, entity {cfg.entity_id}) -> {peers}'
            f'{" + dynamic peers" if cfg.dynamic_peers else ""}; SimulatedState '
            f'{cfg.simulated_state_rate_hz:g} Hz, EstimatedState {cfg.estimated_state_rate_hz:g}'
            f' Hz; origin {c.origin.lat_deg:.6f} {c.origin.lon_deg:.6f}, height '
            f'{c.origin_rad[2]:.2f} m above the ellipsoid; leak entities '
            f'{list(c.leaks.entities)}')
        self.get_logger().info(
            f'IMC discovery: Announce {" ".join(c.imc_services)} to '
            f'{DISCOVERY_GROUP if self.mcast else "no multicast"}'
            f'{" + " + ", ".join(c.announce_hosts) if c.announce_hosts else ""} on ports '
            f'{c.discovery_ports[0]}-{c.discovery_ports[-1]}; control level '
            f'{c.arbiter.level} (rudder positive = bow to {cfg.rudder_positive}, thruster '
            f'positive = {cfg.thruster_positive}); control from {c.control_from()}; '
            f'timestamps {cfg.timestamps}')

    def _sim_s(self) -> float:
        return self.get_clock().now().nanoseconds / NS_PER_S

    def _destinations(self):
        dests, gone = self.core.destinations(time.monotonic())
        for a in gone:
            self.get_logger().info(f'IMC peer {a[0]}:{a[1]} silent, dropped')
        return dests

    def _send(self, sends) -> None:
        """IMC messages to their address, or (None) to every destination."""
        dests = None
        for msg, to in sends:
            if to is None and dests is None:
                dests = self._destinations()
            data = msg.serialize()
            for a in ([to] if to else dests):
                if self.link.send_to(data, a):
                    self.core.counts['tx'] += 1

    def _apply_own(self, act: ib.Actions, _sent) -> None:
        """Announce to discovery, commands, acoustic receptions, leaks, gains to the vehicle."""
        for data, to, multicast in act.discovery:
            try:
                ok = self.mcast.sendto(data, to) if multicast else self.link.send_to(data, to)
            except OSError as exc:
                ok = exc
            if ok is False or isinstance(ok, OSError):
                self.core.counts['announce_errors'] += 1
                self._log_limited('info', 'announce', (
                    f'Announce to {to[0]}:{to[1]} failed '
                    f'({ok if ok is not False else "send error"}); '
                    f'{self.core.counts["announce_errors"]} so far (no route to the discovery '
                    'group: announce_hosts still reaches a DUNE on those hosts)'),
                    self.core.note_s)
        for throttle, rudder, elevators in act.effector:
            self.pub_effector.publish(effector_msg(self._header(), throttle, rudder, elevators))
            self.core.counts['commands'] += 1
        for speed_mps, heading_rad in act.autopilot:
            self.pub_autopilot.publish(autopilot_msg(self._header(), speed_mps, heading_rad))
            self.core.counts['commands'] += 1
        for dl in act.acoustic_rx:
            self.pub_rx.publish(acoustic_msg(dl))
        if act.leaks_changed:
            self._publish_leaks()
        if act.gains:
            self.gains.handle(*act.gains)

    def _gains_report(self, tas2acc_pgain: float, bank2p_pgain: float, req, addr):
        act = ib.Actions()
        act.reply(self.core.gains_report(tas2acc_pgain, bank2p_pgain, self._sim_s()), req, addr)
        self._apply(act)

    def _header(self) -> Header:
        return Header(stamp=self.get_clock().now().to_msg())

    # --- inputs ----------------------------------------------------------------------------------
    def _on_state(self, msg: VehicleState):
        self._apply(self.core.on_state(time_ns(msg.header.stamp),
                                       lambda: vehicle_state_arrays(msg)))

    def _poll(self):
        self._read_link(lambda data, addr: self._guarded(self.handle_datagram, data, addr,
                                                         'invalid'))
        for _ in range(100 if self.listen is not None else 0):
            try:
                data, addr = self.listen.recvfrom(65535)
            except OSError:
                break
            self._apply(self.core.on_discovery(data, addr, time.monotonic()))

    def handle_datagram(self, data: bytes, addr):
        """Decode one datagram and act on it; every refusal is counted by kind."""
        self._apply(self.core.on_datagram(data, addr, self._sim_s(), time.monotonic()), addr)

    def _on_acoustic_tx(self, msg: AcousticData):
        try:
            what = self.core.acoustic_tx(int(msg.type), int(msg.dst), int(msg.speed_bps),
                                         bytes(msg.data), self._sim_s())
        except ValueError as exc:
            return self._reject('value', f'acoustic/tx: {exc}')
        self.get_logger().info(f'acoustic tx to 0x{msg.dst:04X}: {what}',
                               throttle_duration_sec=1.0)

    def _publish_leaks(self):
        leaks = self.core.leaks
        self.pub_leaks.publish(LeakState(header=self._header(), entities=list(leaks.entities),
                                         leaking=[leaks.leaking[e] for e in leaks.entities]))

    # --- status ----------------------------------------------------------------------------------
    def _publish_diagnostics(self):
        c = self.core
        conflicts = c.active_conflicts(time.monotonic())
        self._publish_port_status(
            'IMC link', self.cfg.system_name, c.kin is not None,
            f'{len(self._destinations())} peers, {c.counts["rx"]} in, '
            f'{sum(self.rejects.values())} rejected' if c.kin is not None
            else 'no vehicle_state yet',
            c.counts, [('acoustic_in_flight', len(c.acoustic)),
                       ('dynamics_params_pending', len(self.gains)),
                       ('control_level', c.arbiter.level),
                       ('leaking', ','.join(c.leaks.active()) or 'none'),
                       ('id_conflict', '; '.join(conflicts) or 'none')])
        if conflicts:           # loud: a status of its own at ERROR
            arr = DiagnosticArray()
            arr.header.stamp = self.get_clock().now().to_msg()
            arr.status = [DiagnosticStatus(
                level=DiagnosticStatus.ERROR, name=f'{self.get_name()}: IMC id conflict',
                hardware_id=self.cfg.system_name,
                message=f'another system announces our IMC id 0x{self.cfg.system_id:04X} or '
                        f'name {self.cfg.system_name}: {"; ".join(conflicts)}',
                values=[KeyValue(key='id_conflicts', value=str(c.counts['id_conflicts']))])]
            self.pub_diag.publish(arr)

    def destroy_node(self):
        """Close the discovery socket too."""
        for s in (self.mcast, self.listen):
            if s is not None:
                s.close()
        super().destroy_node()


def main(args=None):
    """Run imc_bridge."""
    run_node(ImcBridge, 'imc_bridge', args)


if __name__ == '__main__':
    main()
