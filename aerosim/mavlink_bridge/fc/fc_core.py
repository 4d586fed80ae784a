"""The built-in FC's link decisions, without ROS: what it answers, asks, refuses and says.

builtin_fc (mavlink_bridge.fc.fc_node) is a separate process with its own MAVLink UDP
endpoint, like an external autopilot. FcCore decides, on its one loop thread (rule 4 of
sim_ros.bridge_node):

- every HIL_SENSOR is answered with one HIL_ACTUATOR_CONTROLS stamped with the sensor frame's
  time_usec (lockstep), armed flag in its mode; a frame with non-finite values is refused
  ('value'): the estimate keeps the last good frame, the motors the last output;
- HIL_GPS, HOME_POSITION and LANDING_TARGET (refused: 'value', non-finite or no distance) feed
  the estimator and the autopilot;
- the mission comes by MISSION_COUNT / MISSION_ITEM_INT (ours or broadcast), and if none came
  mission_wait_s after the simulator was first heard, the FC asks for it once
  (MISSION_REQUEST_LIST);
- a HEARTBEAT once a second, and at once when its state changes: a quadrotor or fixed wing,
  generic autopilot, armed when flying; MAV_STATE_ACTIVE when armed, UNINIT while it says its
  pre-flight checks fail, else STANDBY (PX4's streams/HEARTBEAT.hpp);
- what keeps it from arming (fc.preflight: no compass, no GNSS fix, no mission, ...): a
  STATUSTEXT of severity CRITICAL each, in PX4's words ("Preflight Fail: ..."), from 3 s of
  sensor frames on, on every change and every 10 s while it fails, sent before the answer to
  the frame that found it (lockstep: the simulator hears it before its next step);
- the simulator is the first system heard sending HEARTBEAT or HIL_SENSOR, at `sim_address`:
  the FC's port belongs to its simulator as the bridge's HIL link to its FC (the bridge
  sends from its bound port); a datagram from another address or port is refused ('peer')
  before it is parsed: before, anyone could feed the FC sensors or a mission.

Reject kinds (REJECT_KINDS): a datagram without one complete frame ('truncated'); a frame
pymavlink refused ('undecodable'); values refused ('value'); not from `sim_address` ('peer');
the node adds 'invalid' (the handler raised) and 'peer' (not in allow_peers). The progress
lines (mission, phases) are Actions.said: the node logs them and publishes them on fc/progress.
"""

from dataclasses import dataclass, field
import time
from typing import Any, Dict, List, Optional, Tuple

from mavlink_bridge.core.endpoint import at_pin, pin_address
from mavlink_bridge.core.mav import mavlink, new_mav, reset_parser
from mavlink_bridge.fc.autopilot import DONE, MulticopterFc, NavConfig
from mavlink_bridge.fc.control import Gains
from mavlink_bridge.fc.mission_client import MissionClient
from mavlink_bridge.fc.plane import PlaneFc
from sim_autopilot.core.autopilot import Limits
from sim_core.actions import Actions as BaseActions
from sim_core.config import Param, checked
from sim_core.errors import ConfigError
from sim_core.kinds import KINDS, info
from sim_core.link import parse_endpoint

# The airframes the built-in FC flies, by their control laws (a kind names its own in its
# kind.yaml, sim_core.kinds KindInfo.airframe), and the MAVLink type its HEARTBEAT says for each
MULTICOPTER, FIXED_WING = 'multicopter', 'fixed_wing'
AIRFRAMES = {MULTICOPTER: mavlink.MAV_TYPE_QUADROTOR, FIXED_WING: mavlink.MAV_TYPE_FIXED_WING}
# The kinds it flies: those whose kind.yaml names one of its airframes
FLOWN = tuple(k for k, i in KINDS.items() if i.airframe in AIRFRAMES)
LOCKSTEP_FLAG = 1   # HIL_ACTUATOR_CONTROLS_FLAGS_LOCKSTEP
REJECT_KINDS = ('truncated', 'undecodable', 'value', 'invalid')
HEARTBEAT_PERIOD_S = 1.0        # [s, wall]
MAX_SPIN_WAIT_US = 20000


@dataclass(frozen=True)
class FcConfig:
    """The built-in FC's parameters, read once (units in the names; ranges in PARAMETERS)."""

    bind: str = '127.0.0.1:14561'
    sim_address: str = '127.0.0.1:14560'
    vehicle: str = 'multirotor'     # the FC's default airframe's kind (docs/extending.md)
    fw_rotate_kts: float = 55.0
    fw_climb_kts: float = 79.0
    fw_cruise_kts: float = 100.0
    fw_approach_kts: float = 65.0
    fw_bank_max_deg: float = 25.0
    system_id: int = 1
    component_id: int = 1
    hover_thrust: float = 0.52
    cruise_speed: float = 5.0
    acceptance_radius_m: float = 1.0
    mission_wait_s: float = 3.0
    exit_when_done: bool = False
    spin_wait_us: int = 1000
    warn_period_s: float = 2.0


PARAMETERS: Dict[str, Any] = {
    'bind': Param('Our UDP address host:port'),
    'sim_address': Param('The simulator (mavlink_bridge) host:port'),
    'vehicle': Param("The vehicle's kind; its kind.yaml names the airframe flown: multicopter "
                     '(PX4 Quad X outputs 0..3) or fixed_wing (PX4 SITL plane outputs, airframe '
                     '1030)', choices=FLOWN),
    'fw_rotate_kts': Param('Plane: rotation speed [kt] (calibrated)', 20.0, 200.0),
    'fw_climb_kts': Param('Plane: climb speed [kt]', 30.0, 300.0),
    'fw_cruise_kts': Param('Plane: cruise speed [kt]', 30.0, 400.0),
    'fw_approach_kts': Param('Plane: approach speed [kt]', 30.0, 300.0),
    'fw_bank_max_deg': Param('Plane: bank limit [deg]', 5.0, 60.0),
    'system_id': Param('Our MAVLink system id', 1, 255),
    'component_id': Param('Our component id (1 = autopilot)', 1, 255),
    'hover_thrust': Param('Normalized thrust that hovers (PX4 MPC_THR_HOVER) [0..1]',
                          0.05, 0.95),
    'cruise_speed': Param('Horizontal speed limit [m/s]', 0.5, 20.0),
    'acceptance_radius_m': Param('Minimum waypoint acceptance radius [m]', 0.1, 50.0),
    'mission_wait_s': Param('Ask for the mission (MISSION_REQUEST_LIST) if none came after '
                            'this long [s]', 0.1, 600.0),
    'exit_when_done': Param('Exit (code 0) once the mission is complete'),
    'spin_wait_us': Param('Poll the socket this long before sleeping on it [µs] while sensor '
                          'frames come that fast (lockstep as fast as possible; a sleeping '
                          'receiver is woken by an interrupt that costs tens of µs on a VM); '
                          '0 = never', 0, MAX_SPIN_WAIT_US),
    'warn_period_s': Param('Minimum period of repeated warnings [s]', 0.1, 600.0),
}


@dataclass
class Actions(BaseActions):
    """A decision (sim_core.actions): sends are MAVLink messages to the simulator.

    said: progress lines (logged and published on fc/progress); answered: a HIL_SENSOR was
    answered.
    """

    said: List[str] = field(default_factory=list)
    answered: bool = False


class FcCore:
    """The built-in FC's link: the autopilot core behind MAVLink (module docstring)."""

    def __init__(self, cfg: FcConfig):
        """Check cfg (ConfigError naming the parameter) and build the airframe's autopilot."""
        self.cfg = cfg = checked(cfg, PARAMETERS)
        self.kind = cfg.vehicle
        self.airframe = info(cfg.vehicle).airframe
        self.mav = new_mav(cfg.system_id, cfg.component_id)
        self.ap: Any
        if self.airframe == FIXED_WING:
            self.ap = PlaneFc(Limits(cfg.fw_rotate_kts, cfg.fw_climb_kts, cfg.fw_cruise_kts,
                                     cfg.fw_approach_kts, cfg.fw_bank_max_deg))
        else:
            self.ap = MulticopterFc(Gains(hover_thrust=cfg.hover_thrust,
                                      max_speed_xy=cfg.cruise_speed),
                                NavConfig(accept_radius_m=cfg.acceptance_radius_m))
        self.mav_type = AIRFRAMES[self.airframe]
        self.mission = MissionClient()
        self.sim_peer: Optional[Tuple[int, int]] = None    # (sysid, compid) of the simulator
        # where the simulator's datagrams come from (None: sim_address '', any)
        try:
            self.sim_pin = pin_address(parse_endpoint(cfg.sim_address, 'sim_address'))
        except ValueError as exc:
            raise ConfigError(str(exc)) from exc
        self.answered = 0
        self._first_sim_wall = 0.0      # when the simulator was first heard [s, monotonic]
        self._asked = False
        self._last_hb = -1e9
        self._state = mavlink.MAV_STATE_STANDBY     # the state the last HEARTBEAT said

    @property
    def done(self) -> bool:
        """exit_when_done and the mission is flown (both airframes' phase 'done')."""
        return self.cfg.exit_when_done and self.ap.phase == DONE

    def tick(self, now: float) -> Actions:
        """The loop's periodic part: HEARTBEAT, mission retries, asking for it, progress."""
        act = Actions()
        if now - self._last_hb >= HEARTBEAT_PERIOD_S:
            self._last_hb = now
            act.sends.append(self._heartbeat())
        act.sends += self.mission.poll(self.mav, now)
        if (not self.mission.complete and not self._asked and self.sim_peer
                and self.mission.count is None
                and now - self._first_sim_wall > self.cfg.mission_wait_s):
            self._asked = True
            act.sends += self.mission.request_list(self.mav, self.sim_peer, now)
        self.drain(act)
        return act

    def state(self) -> int:
        """MAV_STATE: ACTIVE armed, UNINIT while its checks are said to fail, else STANDBY."""
        if self.ap.armed:
            return mavlink.MAV_STATE_ACTIVE
        return mavlink.MAV_STATE_UNINIT if self.ap.preflight.declared else \
            mavlink.MAV_STATE_STANDBY

    def _heartbeat(self):
        """HEARTBEAT: a quadrotor or fixed wing, generic autopilot, armed when flying."""
        mode = mavlink.MAV_MODE_FLAG_HIL_ENABLED | mavlink.MAV_MODE_FLAG_AUTO_ENABLED
        if self.ap.armed:
            mode |= mavlink.MAV_MODE_FLAG_SAFETY_ARMED
        self._state = self.state()
        return self.mav.heartbeat_encode(self.mav_type, mavlink.MAV_AUTOPILOT_GENERIC, mode, 0,
                                         self._state)

    def _preflight(self, act: Actions, t_s: float, now: float) -> None:
        """What the checks say (STATUSTEXT), and a HEARTBEAT at once if the state changed."""
        out = self.ap.preflight.out
        while out:
            severity, text = out.pop(0)
            act.sends.append(self.mav.statustext_encode(severity, text.encode()[:50]))
            act.said.append(f'[t={t_s:7.2f} s] says: {text}')
        if self.state() != self._state:
            self._last_hb = now
            act.sends.append(self._heartbeat())

    def drain(self, act: Actions) -> None:
        """The mission's and the autopilot's progress lines, into act.said."""
        for src in (self.mission.events, self.ap.events):
            while src:
                act.said.append(src.pop(0))

    def on_datagram(self, data: bytes, now: Optional[float] = None, addr=None) -> Actions:
        """One datagram from the simulator: each message acted on; refusals by kind.

        addr: where it came from; from elsewhere than sim_address it is refused unparsed.
        """
        act = Actions()
        if addr is not None and not at_pin(self.sim_pin, addr):
            pin = f'{self.sim_pin[0]}:{self.sim_pin[1]}' if self.sim_pin else '?'
            act.refuse('peer', f'{len(data)} bytes from {addr[0]}:{addr[1]}, but the simulator '
                       f'is at {pin} (sim_address): ignored')
            return act
        try:
            msgs = self.mav.parse_buffer(data) or []
            if not msgs:
                act.refuse('truncated', f'{len(data)} bytes and no complete MAVLink frame')
            for m in msgs:
                self.on_message(act, m, time.monotonic() if now is None else now)
        finally:
            reset_parser(self.mav)
        if self.done:
            self.drain(act)
        return act

    def on_message(self, act: Actions, m, now: float) -> None:
        """Act on one decoded message."""
        t = m.get_type()
        if t == 'BAD_DATA':
            act.refuse('undecodable', f'undecodable MAVLink input: {m.reason}')
            return
        if self.sim_peer is None and t in ('HEARTBEAT', 'HIL_SENSOR'):
            self.sim_peer = (m.get_srcSystem(), m.get_srcComponent())
            self._first_sim_wall = now
        if t == 'HIL_SENSOR':
            act.sends.append(self._answer(act, m, now))
        elif t == 'HIL_GPS':
            self.ap.hil_gps(m)
        elif t == 'LANDING_TARGET':
            refused = self.ap.tracker.rejected
            self.ap.landing_target(m)
            if self.ap.tracker.rejected > refused:
                act.refuse('value', f'LANDING_TARGET with non-finite angles or no distance '
                           f'refused ({self.ap.tracker.rejected} so far)')
        elif t == 'HOME_POSITION':
            self.ap.home_position(m)
        elif t in ('MISSION_COUNT', 'MISSION_ITEM_INT') and \
                m.target_system in (0, self.cfg.system_id):
            if t == 'MISSION_COUNT':
                act.sends += self.mission.on_count(self.mav, m, now)
                return
            was = self.mission.complete
            act.sends += self.mission.on_item(self.mav, m, now)
            if self.mission.complete and not was:
                self.ap.set_mission(self.mission.items)

    def _answer(self, act: Actions, m, now: float):
        """The HIL_ACTUATOR_CONTROLS answering HIL_SENSOR m (lockstep: its time_usec).

        What the pre-flight checks said of this frame goes into act.sends first.
        """
        refused = self.ap.rejected
        thr = self.ap.hil_sensor(m)
        self._preflight(act, m.time_usec * 1e-6, now)
        if self.ap.rejected > refused:
            act.refuse('value', f'HIL_SENSOR with non-finite values refused '
                       f'({self.ap.rejected} so far): the estimate keeps the last good '
                       'frame, the motors the last output')
        controls = list(thr) + [0.0] * (16 - len(thr))
        mode = mavlink.MAV_MODE_FLAG_HIL_ENABLED | (
            mavlink.MAV_MODE_FLAG_SAFETY_ARMED if self.ap.armed else 0)
        self.answered += 1
        act.answered = True
        return self.mav.hil_actuator_controls_encode(m.time_usec, controls, mode, LOCKSTEP_FLAG)
