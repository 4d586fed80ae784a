"""Line-of-sight guidance along a leg between waypoints (pure): a library of the kinds' pilots.

A surface or ground vehicle (a boat's waypoints, an AUV's pilot, a rover) steers along the leg
from the last waypoint to the next: the course is the leg's, corrected by the cross-track
error over a look-ahead distance (``line_of_sight``). Positions in ENU [m] (east, north),
courses on the compass [rad] (0 north, clockwise).
"""

import math
from typing import NamedTuple, Tuple


class LegStep(NamedTuple):
    """One line-of-sight step along a leg (line_of_sight)."""

    reached: str            # how the leg's end was reached ('within 3.2 m', 'passed at ...'),
    #                         '' if not yet
    course: float           # the course to steer [rad] (compass: 0 north, clockwise)
    dist: float             # to the leg's end [m]


def line_of_sight(prev: Tuple[float, float], end: Tuple[float, float], radius: float,
                  x: float, y: float, last: bool, lookahead_m: float) -> LegStep:
    """A step along the leg prev -> end (ENU east, north [m]) from (x, y).

    The end is reached within radius, or passed (beyond the leg's end, unless it is the last
    leg). Else the course is the leg's, corrected by the cross-track error e over the
    look-ahead: course = leg - atan(e / lookahead_m) (straight at the end for a leg of no
    length).
    """
    te, tn = end[0] - prev[0], end[1] - prev[1]
    leg = math.hypot(te, tn)
    dist = math.hypot(end[0] - x, end[1] - y)
    along = ((x - prev[0]) * te + (y - prev[1]) * tn) / leg if leg > 1e-6 else 0.0
    if dist <= radius:
        return LegStep(f'within {dist:.1f} m', 0.0, dist)
    if not last and leg > 1e-6 and along >= leg:
        return LegStep(f'passed at {dist:.1f} m', 0.0, dist)
    if leg > 1e-6:
        cross = ((x - prev[0]) * tn - (y - prev[1]) * te) / leg      # right of it
        return LegStep('', math.atan2(te, tn) - math.atan2(cross, lookahead_m), dist)
    return LegStep('', math.atan2(end[0] - x, end[1] - y), dist)
