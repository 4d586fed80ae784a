"""The SUMMARY lines the run's judge logs at the end, as data (pure).

Written from the summary dict (sim_report.core.world.WorldJudge.summary and what the judge
adds), so a test reads them without ROS: one line per vehicle (its result, items, the reason
of a failure, its kind's main figures, its closest approach), then the run's.
"""

from typing import List

# the kinds' figures worth a place on the vehicle's line, where its judge gives them
FIGURES = (('max_tracking_error_m', 'max tracking error', 'm'),
           ('landing_error_m', 'landing error', 'm'), ('max_depth_m', 'max depth', 'm'))


def _figures(details: dict) -> str:
    out = [f'{label} {details[k]} {unit}' for k, label, unit in FIGURES
           if details.get(k) is not None]
    return (', ' + ', '.join(out)) if out else ''


def judge_lines(s: dict, title: str, js, png) -> List[str]:
    """The SUMMARY lines of a run's summary s (files js and png)."""
    lines = []
    for name, v in s['vehicles'].items():
        ca = v.get('closest_approach')
        lines.append(
            f'SUMMARY {name} ({v["kind"]}, {v["controller"]}): {v["result"]}, '
            f'{v["items_reached"]}/{v["items"]} items' + _figures(v.get('details', {}))
            + (f', {len(v["collisions"])} collisions' if v['collisions'] else '')
            + (f', closest {ca["distance_m"]} m to {ca["with"]}' if ca else '')
            + (f': {v["why"]}' if v.get('why') else ''))
    rtf = s.get('flight_real_time_factor')
    lines.append(
        f'SUMMARY {title}: {s["result"]}, {s["vehicles_complete"]}/{s["vehicle_count"]} '
        f'vehicles complete, {s["items_reached"]}/{s["items"]} items; {s["ended"]}; '
        f'{s["sim_time_s"]} s sim in {s["wall_time_s"]} s wall (real-time factor '
        f'{s["real_time_factor"]}' + (f', in motion {rtf}' if rtf is not None else '')
        + f'); wrote {js} and {png}')
    return lines
