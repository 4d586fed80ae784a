"""PX4's commander: src/modules/commander/Commander.cpp, HealthAndArmingChecks (v1.16).

Part of the PX4 stand-in (px4_sitl.py):
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
  wing defaults disable it);
- the navigator's check of a new mission (px4_params.feasibility; px4_mission.py);
- HEARTBEAT at 1 Hz on every link (PX4 clock): type QUADROTOR or FIXED_WING, autopilot PX4,
  base_mode CUSTOM | AUTO | STABILIZE | GUIDED (+ SAFETY_ARMED), custom_mode main AUTO, sub
  LOITER/MISSION, system_status STANDBY when the pre-flight checks pass, else UNINIT; ACTIVE
  when armed (streams/HEARTBEAT.hpp); MAV_SYS_ID = instance + 1 (init.d-posix/rcS).
  Its fields are the commander's state (_heartbeat); the simulator link's step sends it on
  every link (px4_simulator.py).
"""

import math

from mavlink_bridge.core.mav import mavlink
from mavlink_bridge.fc.autopilot import WAIT

import px4_events
from px4_params import feasibility

DISARM_PREFLIGHT_US = 10_000_000    # COM_DISARM_PRFLT
HOLD, MISSION_MODE = 3, 4           # PX4_CUSTOM_SUB_MODE_AUTO_LOITER / _MISSION
MAIN_AUTO = 4
ARM_REASONS = {4: 'external command', 5: 'mission start'}     # arm_disarm_reason_t


class Commander:
    """Px4Sitl's commander: checks, arming, commands, land and takeoff detection, HEARTBEAT.

    A mixin of Px4Sitl (px4_sitl.py), on its state: armed, armed_at_us, sub_mode, landed,
    airborne, checks, mission_valid (the commander's own), and ap, mm, params, plane, links,
    gcs, mav_type, now_us, counts; it speaks through say and _event (px4_links.py).
    """

    def gcs_lost(self) -> bool:
        """Commander's gcs_connection_lost: no GCS heartbeat on any link within COM_DL_LOSS_T."""
        t = [link.gcs_heard_us for link in self.links if link.gcs_heard_us is not None]
        return not t or self.now_us - max(t) > self.params['COM_DL_LOSS_T'] * 1e6

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

    def _altitude(self) -> float:
        est = self.ap.est
        return -float(est.position[2]) if getattr(est, 'home', None) is not None else 0.0

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
