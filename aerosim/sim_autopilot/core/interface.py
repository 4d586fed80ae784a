"""AeroSim's autopilot interface around an Autopilot as data (pure, no rclpy).

What autopilot_node did around its Autopilot, for one flown in a world's step
(kinds/plane/controllers.py, PlaneAutopilot); kinds/plane/ros.py turns it into messages:

- ``command(msg)``: an AutopilotCommand (read by its fields, duck typed) checked, then
  applied: a flight plan in AeroSim's JSON (loaded: stopped at its first step), the manual
  setpoints and holds, or the plan's STOP / RUN / PAUSE. Every number is checked
  (check_setpoints, parse_plan); a bad command changes nothing: ConfigError naming the
  field, counted by kind in ``rejected``;
- ``status()``: autopilot/status's fields (status_fields) when what it flies changed, else
  None;
- ``track_due(t_ns)``, ``add_track(lat, lon, alt)``: the track flown, a point every
  track_sample_s of sim time, at most MAX_TRACK_POINTS;
- ``future()``, ``highlighted()``, ``past()``: trajectory/* as AeroSim's JSON waypoints
  ([[lat deg, lon deg, alt m MSL], ...]);
- ``diagnostics()``: the summary and key values of its /diagnostics status.

The Autopilot is asked for each time (``autopilot()``): the world's reset makes a new one.
"""

import json
import math
from typing import Callable, Dict, List, Optional, Tuple

from sim_autopilot.core import flight_plan as fp
from sim_autopilot.core.autopilot import Autopilot, Setpoints, check_setpoints
from sim_autopilot.core.params import AutopilotConfig
from sim_autopilot.core.status import PAUSE, RUN, STOP, status_fields, status_key
from sim_core.decimator import Decimator
from sim_core.errors import ConfigError
from sim_core.validate import FieldError

PLAN_COMMANDS = {STOP: 'STOP', RUN: 'RUN', PAUSE: 'PAUSE'}
MAX_TRACK_POINTS = 10000        # the track flown keeps at most this many points


def setpoints_text(sp: Setpoints) -> str:
    """The manual setpoints for the log ('manual setpoints: 1500 ft, 90 kt, heading 270')."""
    if sp.attitude_hold:
        return 'attitude hold'
    return (f'manual setpoints: {sp.altitude_setpoint_ft:g} ft'
            + (f', {sp.airspeed_setpoint_kts:g} kt' if sp.airspeed_hold else '')
            + (', heading to the waypoint' if sp.heading_hold and sp.heading_set_by_waypoint
               else f', heading {sp.heading_setpoint_deg:g}' if sp.heading_hold else ''))


class AutopilotInterface:
    """AutopilotCommand in; status, trajectory and diagnostics out (module docstring)."""

    def __init__(self, autopilot: Callable[[], Autopilot], cfg: AutopilotConfig):
        """autopilot(): the Autopilot flown now; cfg: the trajectory displays."""
        self.autopilot = autopilot
        self.cfg = cfg
        self.rejected: Dict[str, int] = {}      # refused commands by kind
        self.reset()

    def reset(self) -> None:
        """The world went back to t = 0: no track; the status is new again."""
        self.track: List[List[float]] = []
        self._track_dec = Decimator(1.0 / self.cfg.track_sample_s)
        self._last_status: Optional[Tuple] = None

    # --- in -----------------------------------------------------------------------------------
    def command(self, msg) -> str:
        """Check and apply an AutopilotCommand; what it did (for the log).

        ConfigError (naming the field) if refused: nothing is applied, the refusal counted.
        """
        try:
            plan_cmd = msg.flight_plan_command
            if plan_cmd not in PLAN_COMMANDS:
                raise FieldError('flight_plan_command', 'flight_plan_command: must be 0 '
                                 f'(STOP), 1 (RUN) or 2 (PAUSE), got {plan_cmd}')
            sp = check_setpoints(Setpoints(
                bool(msg.use_manual_setpoints), bool(msg.attitude_hold),
                msg.altitude_setpoint_ft, bool(msg.airspeed_hold), msg.airspeed_setpoint_kts,
                bool(msg.heading_hold), bool(msg.heading_set_by_waypoint),
                msg.heading_setpoint_deg, msg.target_wp_latitude_deg,
                msg.target_wp_longitude_deg))
            plan = fp.parse_plan(msg.flight_plan) if msg.flight_plan.strip() else None
        except ConfigError as exc:
            kind = getattr(exc, 'kind', 'value')
            self.rejected[kind] = self.rejected.get(kind, 0) + 1
            raise
        ap = self.autopilot()
        said = []
        if plan is not None:
            ap.load_plan(plan)
            said.append(f'flight plan of {len(plan)} steps loaded')
        if sp.use_manual_setpoints or sp.attitude_hold:
            ap.set_manual(sp)
            said.append(setpoints_text(sp))
        else:
            name = PLAN_COMMANDS[plan_cmd]
            {'RUN': ap.run, 'PAUSE': ap.pause, 'STOP': ap.stop}[name]()
            said.append(f'flight plan {name}: mode {ap.mode}, step {ap.step}')
        return '; '.join(said)

    # --- out ----------------------------------------------------------------------------------
    def status(self) -> Optional[dict]:
        """AutopilotCommand's fields of what the autopilot flies, if changed since the last."""
        ap = self.autopilot()
        st = ap.status()
        key = status_key(st)
        if key == self._last_status:
            return None
        self._last_status = key
        return status_fields(st, len(ap.plan))

    def track_due(self, t_ns: int) -> bool:
        """Whether a point of the track is due at sim time t_ns [ns] (then add_track it)."""
        return len(self.track) < MAX_TRACK_POINTS and self._track_dec.due(t_ns)

    def add_track(self, lat_deg: float, lon_deg: float, alt_m: float) -> None:
        """A point of the track flown: position WGS-84 [deg], altitude MSL [m] (finite)."""
        if all(map(math.isfinite, (lat_deg, lon_deg, alt_m))):
            self.track.append([round(lat_deg, 7), round(lon_deg, 7), round(alt_m, 1)])

    def highlighted(self) -> str:
        """The plan's waypoints (JSON), if the settings highlight them, else []."""
        return json.dumps(fp.waypoints(self.autopilot().plan)
                          if self.cfg.highlight_user_defined_waypoints else [])

    def future(self) -> str:
        """The next number_of_future_waypoints waypoints of the plan (JSON); [] when done."""
        ap = self.autopilot()
        if not self.cfg.display_future_trajectory or ap.mode == 'done':
            return '[]'
        return json.dumps(fp.waypoints(ap.plan, max(ap.step, 0),
                                       self.cfg.number_of_future_waypoints))

    def past(self) -> str:
        """The track flown (JSON)."""
        return json.dumps(self.track)

    def diagnostics(self) -> Tuple[str, List[Tuple[str, str]]]:
        """(message, [(key, value)]) of the autopilot's /diagnostics status."""
        ap = self.autopilot()
        st = ap.status()
        values = [('mode', st.mode), ('step', str(st.step)),
                  ('legs_done', str(len(ap.legs_done()))),
                  ('rejected', str(sum(self.rejected.values())))]
        values += [(f'rejected_{k}', str(v)) for k, v in self.rejected.items()]
        return f'{st.mode}, step {st.step}/{len(ap.plan)}, {st.phase}', values
