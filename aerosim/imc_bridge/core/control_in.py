"""The IMC bridge's control input (pure): actuators and guidance, one level at a time.

A mixin of ImcBridgeCore (imc_bridge.core.bridge): the handlers of SetThrusterActuation,
SetServoPosition, ServoPosition (an AUV's fins), DesiredSpeed and DesiredHeading, each
deciding through the ControlArbiter whether the message drives now (control_level).
"""

import math
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Tuple

import imcpy

from imc_bridge.core.control import (
    ACTUATORS,
    GUIDANCE,
    ControlArbiter,
    rudder_aerosim,
    throttle_aerosim,
)
from sim_core.link import is_loopback
from sim_core.validate import number
from sim_dynamics.core.auv import ELEVATOR, RUDDER

if TYPE_CHECKING:     # the core's Actions: imc_bridge.core.bridge imports this module
    from imc_bridge.core.bridge import Actions

MAX_SPEED_MPS, MAX_SPEED_PCT = 50.0, 100.0      # DesiredSpeed accepted
Addr = Tuple[str, int]
# What drives the vehicle or changes the simulation: taken from its peers only (control_from).
# DUNE's UDP transport sends its actuator commands unaddressed (dst 0xFFFF), so the header's
# dst tells nothing of who may command; the source address does: the transport sends from the
# one socket it binds to its Local Port (6002) (LSTS/dune src/Transports/UDP/Task.cpp:
# onResourceAcquisition m_sock.bind, consume() m_sock.write), the address `peers` names.
CONTROL_INPUTS = frozenset((
    'SetThrusterActuation', 'SetServoPosition', 'ServoPosition', 'DesiredSpeed',
    'DesiredHeading', 'LeakSimulation', 'UASimulation', 'DynamicsSimParam'))


class ControlInput:
    """ImcBridgeCore's control handlers (its attributes: see ImcBridgeCore.__init__)."""

    cfg: Any
    system_id: int
    controllers: Optional[Tuple[Addr, ...]]
    arbiter: ControlArbiter
    counts: Dict[str, int]
    fins: Any
    fin_angles: List[float]
    note_s: float

    def from_controller(self, addr: Addr) -> bool:
        """True if control inputs from addr are taken (control_from: the peers, or any)."""
        if self.controllers is None:
            return True
        return any(addr[1] == port and (addr[0] == host or (
            host == '0.0.0.0' and is_loopback(addr[0]))) for host, port in self.controllers)

    def control_from(self) -> str:
        """Who may drive the vehicle over IMC, as a log line says it."""
        if self.controllers is None:
            return 'any system (control_from: any)'
        if not self.controllers:
            return 'nobody (control_from: peers, and peers is empty)'
        return ', '.join(f'{h}:{p}' for h, p in self.controllers) + ' only'

    def _level(self, act: 'Actions', level: str, msg) -> bool:
        """Whether msg (of control `level`) may drive now; logs and counts the decision."""
        take, switched = self.arbiter.decide(level, msg.dst)
        if switched:
            self.counts['level_switches'] += 1
            act.log(
                f'IMC control level -> {level}: {msg.msg_name} addressed to us by '
                f'0x{msg.src:04X}; the other level is ignored until one of its messages is '
                'addressed to us (holds released, actuators at 0 until commanded)')
            act.effector.append(self._at_rest())
        elif not take:
            n = self.counts[f'ignored_{level}'] = self.counts[f'ignored_{level}'] + 1
            act.log_every(f'ignored_{level}', (
                f'{msg.msg_name} (broadcast, from 0x{msg.src:04X}) ignored: control level is '
                f"{self.arbiter.level} (e.g. DUNE's telemetry copies of its Desired*); address "
                f'it to 0x{self.system_id:04X} to switch ({n} ignored so far)'), self.note_s)
        return take

    def _on_thruster(self, act: 'Actions', msg, _addr: Addr, _sim_s: float, _now: float):
        if msg.id != self.cfg.thruster_id:
            raise ValueError(f'thruster id {msg.id}: this vehicle has thruster '
                             f'{self.cfg.thruster_id}')
        number(msg.value, 'value', -1.0, 1.0)
        if self._level(act, ACTUATORS, msg):
            act.effector.append((throttle_aerosim(msg.value, self.cfg.thruster_positive), None,
                                 None))

    def _at_rest(self) -> Tuple[Any, Any, Any]:
        """Thruster and every control surface at 0 (a control level switch)."""
        if not self.fins:
            return (0.0, 0.0, None)
        self.fin_angles = [0.0] * len(self.fins)
        return (0.0,) + self._fin_arrays()

    def _fin_arrays(self) -> Tuple[Tuple[float, ...], Tuple[float, ...]]:
        """The fins' angles as AeroSim's (rudder, elevator) arrays, each in fin order."""
        return tuple(tuple(a for (_, surf), a in zip(self.fins, self.fin_angles) if surf == s)
                     for s in (RUDDER, ELEVATOR))       # type: ignore[return-value]

    def _on_servo_position(self, act: 'Actions', msg, addr: Addr, sim_s: float, now: float):
        """DUNE's Simulators.Servos: an AUV's fin where its servo has moved it (fin_source)."""
        if not self.fins or self.cfg.fin_source != 'ServoPosition':
            self.counts['ignored'] += 1         # DUNE's telemetry (a boat has no fins)
            return
        self._fin(act, msg)

    def _fin(self, act: 'Actions', msg) -> None:
        """Fin of servo id msg.id to msg.value [rad] (VSIM's sense), if actuators are in force."""
        ids = [servo for servo, _ in self.fins]
        if msg.id not in ids:
            raise ValueError(f'servo id {msg.id}: the fins are servos '
                             f'{", ".join(map(str, ids))}')
        number(msg.value, 'value [rad]', -self.cfg.max_rudder_rad, self.cfg.max_rudder_rad)
        if self._level(act, ACTUATORS, msg):
            self.fin_angles[ids.index(msg.id)] = float(msg.value)
            act.effector.append((None,) + self._fin_arrays())

    def _on_servo(self, act: 'Actions', msg, _addr: Addr, _sim_s: float, _now: float):
        if self.fins:           # an AUV's fins: SetServoPosition id k moves the fin of id k
            if self.cfg.fin_source != 'SetServoPosition':
                self.counts['ignored'] += 1     # the allocator's command: ServoPosition rules
                return
            self._fin(act, msg)
            return
        if msg.id != self.cfg.rudder_servo_id:
            raise ValueError(f'servo id {msg.id}: the rudder is servo {self.cfg.rudder_servo_id}')
        number(msg.value, 'value [rad]', -self.cfg.max_rudder_rad, self.cfg.max_rudder_rad)
        if self._level(act, ACTUATORS, msg):
            act.effector.append((None, rudder_aerosim(msg.value, self.cfg.rudder_positive), None))

    def _on_speed(self, act: 'Actions', msg, _addr: Addr, _sim_s: float, _now: float):
        units = int(msg.speed_units)
        if units == int(imcpy.SpeedUnits.METERS_PS):
            v = number(msg.value, 'value [m/s]', -MAX_SPEED_MPS, MAX_SPEED_MPS)
        elif units == int(imcpy.SpeedUnits.PERCENTAGE):
            v = number(msg.value, 'value [%]', -MAX_SPEED_PCT, MAX_SPEED_PCT)
        else:
            raise ValueError('speed in RPM: this vehicle takes m/s or % (no motor model)')
        if not self._level(act, GUIDANCE, msg):
            return
        if units == int(imcpy.SpeedUnits.METERS_PS):
            act.autopilot.append((v, None))
        else:
            act.effector.append((v / 100.0, None, None))

    def _on_heading(self, act: 'Actions', msg, _addr: Addr, _sim_s: float, _now: float):
        number(msg.value, 'value [rad]', -2.0 * math.pi, 2.0 * math.pi)
        if self._level(act, GUIDANCE, msg):
            act.autopilot.append((None, msg.value))
