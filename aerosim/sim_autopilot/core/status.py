"""autopilot/status as data (pure): the setpoints in force, as AutopilotCommand's fields.

autopilot_node publishes them (latched) when they change; plane_node's PFD reads them.
"""

import json
import math
from typing import Any, Dict, Tuple

STOP, RUN, PAUSE = 0, 1, 2      # AutopilotCommand.flight_plan_command


def _finite(x: float) -> float:
    return float(x) if math.isfinite(x) else 0.0


def status_key(st) -> Tuple:
    """What a listener sees change in a Status (an unchanged key is not published again)."""
    return (st.mode, st.step, st.target_altitude_ft, st.target_airspeed_kts,
            round(st.target_heading_deg) if math.isfinite(st.target_heading_deg) else 0,
            st.target_wp_lat_deg, st.target_wp_lon_deg)


def status_fields(st, steps: int) -> Dict[str, Any]:
    """AutopilotCommand's fields telling Status st of a plan of steps steps (no NaN: 0)."""
    return {
        'flight_plan': json.dumps({'mode': st.mode, 'step': st.step, 'phase': st.phase,
                                'steps': steps}),
        'flight_plan_command': (RUN if st.mode == 'plan' else PAUSE if st.mode == 'paused'
                             else STOP),
        'use_manual_setpoints': st.mode in ('manual', 'attitude'),
        'attitude_hold': st.mode == 'attitude',
        'altitude_setpoint_ft': _finite(st.target_altitude_ft),
        'airspeed_hold': math.isfinite(st.target_airspeed_kts),
        'airspeed_setpoint_kts': _finite(st.target_airspeed_kts),
        'heading_hold': math.isfinite(st.target_heading_deg),
        'heading_setpoint_deg': _finite(st.target_heading_deg),
        'heading_set_by_waypoint': st.target_wp_active,
        'target_wp_latitude_deg': _finite(st.target_wp_lat_deg),
        'target_wp_longitude_deg': _finite(st.target_wp_lon_deg)}
