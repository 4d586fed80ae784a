"""The in-process autopilot's display parameters as data (pure): a frozen dataclass, its table.

A plane flown by its autopilot in the world's step (controller autopilot) has them on its own
node /<name>/plane_node (kinds/plane/ros.py), read with ``sim_ros.params.read_config`` (one
parameter per field from the table: description with units, range). What it flies is the
scenario's (the world's), and whether it RUNs it at start the world's ``autostart``.
``AutopilotConfig.trajectory`` is what trajectory/visualization shows.
"""

from dataclasses import dataclass
from typing import NamedTuple

from sim_core.config import Param

RATE_HZ = (0.1, 100.0)          # Hz (sim), of trajectory/*
TRACK_SAMPLE_S = (0.05, 60.0)   # s (sim), between two points of the track flown
MAX_FUTURE_WAYPOINTS = 1000     # waypoints ahead shown at most


class TrajectorySettings(NamedTuple):
    """What trajectory/visualization shows (its settings field)."""

    future: bool            # the waypoints ahead
    past: bool              # the track flown
    highlight: bool         # the plan's waypoints
    ahead: int              # how many waypoints ahead


@dataclass(frozen=True)
class AutopilotConfig:
    """The trajectory displays of the autopilot (trajectory/visualization, trajectory/past)."""

    display_future_trajectory: bool = True
    display_past_trajectory: bool = True
    highlight_user_defined_waypoints: bool = True
    number_of_future_waypoints: int = 3
    trajectory_rate_hz: float = 1.0
    track_sample_s: float = 1.0

    @property
    def trajectory(self) -> TrajectorySettings:
        """The display settings of trajectory/visualization."""
        return TrajectorySettings(self.display_future_trajectory, self.display_past_trajectory,
                                  self.highlight_user_defined_waypoints,
                                  self.number_of_future_waypoints)


PARAMETERS = {
    'display_future_trajectory': Param('Trajectory: show the waypoints ahead'),
    'display_past_trajectory': Param('Trajectory: show the track flown'),
    'highlight_user_defined_waypoints': Param("Trajectory: highlight the plan's waypoints"),
    'number_of_future_waypoints': Param('Trajectory: waypoints ahead shown', 0,
                                        MAX_FUTURE_WAYPOINTS),
    'trajectory_rate_hz': Param('trajectory/* rate [Hz] (sim)', *RATE_HZ),
    'track_sample_s': Param('trajectory/past: sim time between the track points [s]',
                            *TRACK_SAMPLE_S),
}
