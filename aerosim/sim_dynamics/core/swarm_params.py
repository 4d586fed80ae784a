"""usv_swarm_node's parameters as data (pure): its own config and SwarmParams' table.

Read by sim_ros.params.read_config (the one configuration style): ``SwarmNodeConfig`` with
``NODE_PARAMETERS`` (what the node loads and how often it publishes), and the swarm's
behaviour parameters ``swarm_types.SwarmParams`` with ``PARAMETERS``; ``checked`` refuses a
current that is not two finite numbers (a ROS array has any length).
"""

from dataclasses import dataclass
import math

from sim_core.config import Param
from sim_core.errors import ConfigError
from sim_dynamics.core.swarm_types import SwarmParams

# Sessions a node may start in (SwarmState's codes): wait for command 26, practice, simulation.
FIRST_SESSION, LAST_START_SESSION = 0, 2
MAX_BOATS = 100000          # most boats the max_boats parameter allows
MAX_BOAT_TOPICS = 10000     # most boats with their own topics
MAX_TOPIC_RATE_HZ = 1000.0  # sim
MIN_TOPIC_RATE_HZ = 0.1
MAX_DISTANCE_M = 1e4        # the task distances' upper bound


@dataclass(frozen=True)
class SwarmNodeConfig:
    """What usv_swarm_node loads at start and how often it publishes."""

    sim_config: str = 'SimConfig.json'
    types_file: str = 'usv_types.yaml'
    session: int = 0
    max_boats: int = 10000
    state_rate_hz: float = 10.0
    boat_topics_max: int = 50
    boat_topics_rate_hz: float = 10.0


NODE_PARAMETERS = {
    'sim_config': Param('Initial init object (path, or name in config/); the UI replaces it'),
    'types_file': Param('Boat/obstacle type codes (path, or name in config/)'),
    'session': Param('Session at start: 0 wait for command 26, 1 practice, 2 simulation',
                     FIRST_SESSION, LAST_START_SESSION),
    'max_boats': Param('Most boats an init may have', 1, MAX_BOATS),
    'state_rate_hz': Param('SwarmState rate [Hz] (sim)', MIN_TOPIC_RATE_HZ, MAX_TOPIC_RATE_HZ),
    'boat_topics_max': Param('Boats (the first in the init) that get their own '
                             'vehicle_state/odom topics', 0, MAX_BOAT_TOPICS),
    'boat_topics_rate_hz': Param('Per-boat topic rate [Hz] (sim)', MIN_TOPIC_RATE_HZ,
                                 MAX_TOPIC_RATE_HZ),
}

PARAMETERS = {
    'waypoint_radius_m': Param('Waypoint reached within [m]', 0.5, 1000.0),
    'station_gain': Param('Task slot error to velocity [1/s]', 0.01, 5.0),
    'escort_distance_m': Param('Escort: distance beside the target [m]', 1.0, MAX_DISTANCE_M),
    'defend_distance_m': Param('Defend: distance from the target toward the threat [m]', 1.0,
                               MAX_DISTANCE_M),
    'ring_radius_m': Param('Ring guard radius [m]', 1.0, MAX_DISTANCE_M),
    'formation_spacing_m': Param('Formation slot spacing [m]', 1.0, MAX_DISTANCE_M),
    'cruise_ratio': Param('Task speed / top speed when the command gives none', 0.05, 1.0),
    'wind_from_deg': Param('Direction the wind comes from (compass) [deg]; its speed is the '
                           'init weather (Beaufort)', 0.0, 360.0),
    'current_ne': Param('Water current (north, east) [m/s]'),
    'boat_collisions': Param('Detect boat-boat collisions'),
}


def checked(params: SwarmParams) -> SwarmParams:
    """Params with current_ne as two floats; ConfigError unless two finite numbers."""
    cur = list(params.current_ne)
    if len(cur) != 2 or not all(math.isfinite(x) for x in cur):
        raise ConfigError(f'current_ne: two finite numbers (north, east) [m/s], got {cur}')
    return SwarmParams(**{**params.__dict__, 'current_ne': (float(cur[0]), float(cur[1]))})
