"""autopilot_node's configuration as data (pure): a frozen dataclass and its table.

``sim_ros.params.read_config`` declares one parameter per field from the table (description
with units, range); ``AutopilotConfig.trajectory`` is what trajectory/visualization shows.
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
    """The scenario (or aircraft) flown, autostart, and the trajectory displays."""

    scenario_file: str = 'circuit'
    aircraft_params: str = ''
    autostart: bool = True
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
    'scenario_file': Param('Scenario YAML (path, or name in config/scenarios): the aircraft, '
                           'the field and the mission'),
    'aircraft_params': Param('Aircraft YAML overriding the scenario (path or name in '
                             "config/aircraft); '' = from the scenario"),
    'autostart': Param("RUN the scenario's mission as the flight plan at start"),
    'display_future_trajectory': Param('Trajectory: show the waypoints ahead'),
    'display_past_trajectory': Param('Trajectory: show the track flown'),
    'highlight_user_defined_waypoints': Param("Trajectory: highlight the plan's waypoints"),
    'number_of_future_waypoints': Param('Trajectory: waypoints ahead shown', 0,
                                        MAX_FUTURE_WAYPOINTS),
    'trajectory_rate_hz': Param('trajectory/* rate [Hz] (sim)', *RATE_HZ),
    'track_sample_s': Param('trajectory/past: sim time between the track points [s]',
                            *TRACK_SAMPLE_S),
}
