"""The boat's judge: its waypoints in order within their radii, on ground truth (pure).

sim_report.core.waypoints.WaypointJudge with the boat's marker and colour on the world plot.
"""

from sim_core.members import Member
from sim_report.core.waypoints import WaypointJudge
from sim_viz.core import scene


class BoatJudge(WaypointJudge):
    """A boat's waypoint mission followed on ground truth (WaypointJudge)."""

    marker = 'v'
    color = scene.TEAMS[3]


def boat_judge(member: Member) -> BoatJudge:
    """The judge of a boat of a world (KindEntry.judge)."""
    return BoatJudge(member.scenario)
