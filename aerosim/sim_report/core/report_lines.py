"""What flight_report adds to a summary and logs at the end, as data (pure).

The pacing figures come from /sim/status messages (any object with their fields); the log
lines are written from the summary dict the judges return, so a test reads them without ROS.
"""

from typing import List, Optional


def pacing(st, at_liftoff=None) -> dict:
    """The pacing figures of the last SimStatus st, for the summary.

    Time_scale > 0: the steps run late against the wall clock, the lockstep answers that never
    came; the flight's share of late steps from at_liftoff (the SimStatus in force at
    lift-off: start-up excluded) when it is known.
    """
    out = {'steps': st.steps, 'late_steps': st.late_steps,
           'late_step_share': round(st.late_steps / st.steps, 5) if st.steps else None,
           'lockstep_timeouts': st.lockstep_timeouts, 'time_scale': st.time_scale}
    lo = at_liftoff
    if lo is not None and st.steps > lo.steps:
        out['flight_late_step_share'] = round(
            (st.late_steps - lo.late_steps) / (st.steps - lo.steps), 5)
    return out


def _closest(ca: Optional[dict]) -> str:
    if not ca:
        return 'none'
    return (f'{ca["distance_m"]} m at t = {ca["t_s"]} s ({ca["vehicles"][0]} and '
            f'{ca["vehicles"][1]})')


def summary_lines(s: dict, fleet: bool, js, png) -> List[str]:
    """The SUMMARY lines of a mission (fleet: one per vehicle, then the fleet's); files js, png."""
    pace = (f'{s["sim_time_s"]} s sim in {s["wall_time_s"]} s wall (real-time factor '
            f'{s["real_time_factor"]}, in flight {s["flight_real_time_factor"]}); wrote {js} '
            f'and {png}')
    if not fleet:
        return [f'SUMMARY mission {s["result"]}: {s["items_reached"]}/{s["items"]} items, max '
                f'tracking error {s["max_tracking_error_m"]} m, landing error '
                f'{s["landing_error_m"]} m, {pace}']
    lines = [f'SUMMARY {name}: mission {v["result"]}, {v["items_reached"]}/{v["items"]} items, '
             f'max tracking error {v["max_tracking_error_m"]} m, landing error '
             f'{v["landing_error_m"]} m, {len(v["collisions"])} collisions'
             + (f', FC lost at {v["fc_lost_at_s"]:.1f} s' if v['fc_lost_at_s'] is not None
                else '') for name, v in s['vehicles'].items()]
    lines.append(f'SUMMARY fleet: {s["vehicles_complete"]}/{s["vehicle_count"]} missions '
                 f'complete, {s["vehicles_collided"]} collided, closest approach '
                 f'{_closest(s["closest_approach"])}, {pace}')
    return lines
