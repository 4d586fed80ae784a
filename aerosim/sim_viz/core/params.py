"""The configurations of the view nodes as data (pure): viz_node and foxglove_node.

Each is a frozen dataclass
(the defaults) and a table of sim_core.config.Param (description with units, range, choices)
that ``sim_ros.params.read_config`` declares. A node of two modes reads its mode first, then
the dataclass of that mode: a parameter of the other mode is not declared (``ros2 param list``
shows what the node uses).
"""

from dataclasses import dataclass

from sim_bag.core.bagio import DEFAULT_EXCLUDE
from sim_core.config import Param
from sim_core.members import world_source_parameters

MODES = ('vehicle', 'swarm')
MAX_BOATS = 100000          # the largest swarm drawn or summarized
VIEW_RATE_HZ = (0.1, 100.0)     # Hz (sim time), of markers, paths and summary samples
MAX_PATH_POINTS = 100000        # points kept per path or track
MAX_PATH_STEP_M = 1000.0        # m, the longest distance between two path points


@dataclass(frozen=True)
class ModeConfig:
    """One vehicle (odom) or a swarm (SwarmState)."""

    mode: str = 'vehicle'


MODE_PARAMETERS = {'mode': Param('vehicle (odom) or swarm (SwarmState)', choices=MODES)}


@dataclass(frozen=True)
class SwarmFilesConfig:
    """mode:=swarm: the init file and the type table."""

    sim_config: str = 'SimConfig.json'
    types_file: str = 'usv_types.yaml'


@dataclass(frozen=True)
class VizConfig:
    """viz_node: frame, rates and the bounds of what is kept and drawn."""

    world_frame_id: str = 'map'
    marker_rate_hz: float = 10.0
    path_max_points: int = 2000
    path_min_step_m: float = 0.2
    max_boats_drawn: int = 200


VIZ_PARAMETERS = {
    'world_frame_id': Param('World frame of markers and paths'),
    'marker_rate_hz': Param('Marker and path rate [Hz] (sim time)', *VIEW_RATE_HZ),
    'path_max_points': Param('Points kept per path/track', 10, MAX_PATH_POINTS),
    'path_min_step_m': Param('A path point every this distance [m]', 0.0, MAX_PATH_STEP_M),
    'max_boats_drawn': Param('Boats drawn (swarm mode)', 1, MAX_BOATS),
}
VIZ_WORLD_PARAMETERS = world_source_parameters('drawn')
VIZ_SWARM_PARAMETERS = {
    'sim_config': Param('Init file in force until the UI sends one'),
    'types_file': Param('Type table'),
}


@dataclass(frozen=True)
class FoxgloveConfig:
    """foxglove_node: the server's address and the topics it serves."""

    host: str = '127.0.0.1'
    port: int = 8765
    regex: str = ''
    exclude: str = DEFAULT_EXCLUDE
    discovery_period_s: float = 0.5


FOXGLOVE_PARAMETERS = {
    'host': Param('WebSocket server address (0.0.0.0: every interface)'),
    'port': Param('WebSocket server port (0: any free port)', 0, 65535),
    'regex': Param("Topics to serve ('' = the namespace, /sim/*, /clock, /diagnostics)"),
    'exclude': Param('Topics not to serve (regex)'),
    'discovery_period_s': Param('Topic discovery period [s] (wall)', 0.05, 10.0),
}
