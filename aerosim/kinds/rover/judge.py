"""The rover's judge: its waypoints in order within their radii, on ground truth (pure).

sim_report.core.waypoints.WaypointJudge (a waypoint is reached when the true position comes
within its acceptance radius, in order; not the controller's word) with the rover's marker and
colour on the world plot.
"""

from sim_core.members import Member
from sim_report.core.waypoints import WaypointJudge

COLOR = (0.55, 0.35, 0.15, 1.0)     # a rover's colour on the world plot (earth brown)


class RoverJudge(WaypointJudge):
    """A rover's waypoint mission followed on ground truth (WaypointJudge)."""

    marker = 's'
    color = COLOR


def rover_judge(member: Member) -> RoverJudge:
    """The judge of a rover of a world (KindEntry.judge)."""
    return RoverJudge(member.scenario)
