"""The configurations of the bag nodes as data (pure): recorder and player.

Each is a frozen dataclass (the defaults) and a table of sim_core.config.Param (description
with units, range, choices) that ``sim_ros.params.read_config`` declares; the storages are
bagio's.
"""

from dataclasses import dataclass
from typing import Tuple

from sim_bag.core.bagio import DEFAULT_EXCLUDE, STORAGES
from sim_core.config import Param

WAIT_S = (0.01, 600.0)      # s, the longest wait for readers or their acknowledgements


@dataclass(frozen=True)
class RecorderConfig:
    """recorder: the bag to write and the topics to record."""

    output: str = ''
    storage: str = 'mcap'
    topics: Tuple[str, ...] = ('',)
    regex: str = ''
    exclude: str = DEFAULT_EXCLUDE
    discovery_period_s: float = 0.2


RECORDER_PARAMETERS = {
    'output': Param("Bag directory to create ('' = rosbag2_<date>)"),
    'storage': Param('Storage: mcap or sqlite3', choices=tuple(STORAGES)),
    'topics': Param("Topics to record (names; relative names are resolved in the node's "
                    'namespace); empty = all'),
    'regex': Param('Also record topics matching this regex'),
    'exclude': Param('Do not record topics matching this regex (names given in topics are '
                     'always recorded)'),
    'discovery_period_s': Param('Topic discovery period [s] (wall)', 0.01, 10.0),
}


@dataclass(frozen=True)
class PlayerConfig:
    """player: the bag, its timing, the topics played, and the waits for readers."""

    bag: str = ''
    rate: float = 1.0
    loop: bool = False
    topics: Tuple[str, ...] = ('',)
    regex: str = ''
    exclude: str = DEFAULT_EXCLUDE
    clock: bool = False
    clock_rate_hz: float = 100.0
    start_paused: bool = False
    wait_for_acked: bool = True
    ack_timeout_s: float = 5.0
    wait_for_readers: int = 0
    readers_timeout_s: float = 30.0


PLAYER_PARAMETERS = {
    'bag': Param('rosbag2 directory to play'),
    'rate': Param('Playback rate (bag seconds per wall second)', 0.01, 100.0),
    'loop': Param('Start over at the end'),
    'topics': Param('Topics to play (absolute names); empty = all'),
    'regex': Param('Also play topics matching this regex'),
    'exclude': Param('Do not play topics matching this regex'),
    'clock': Param('Publish /clock from the bag timeline (for bags without a recorded /clock)'),
    'clock_rate_hz': Param('/clock rate [Hz] (wall) with clock:=true', 1.0, 1000.0),
    'start_paused': Param('Wait for ~/resume'),
    'wait_for_acked': Param('Reliable topics: before the publisher history could overwrite an '
                            'unacknowledged message, wait until every reader acknowledged (a '
                            'slow reader slows the replay instead of losing messages)'),
    'ack_timeout_s': Param('Longest such wait [s] (then a warning and the replay goes on)',
                           *WAIT_S),
    'wait_for_readers': Param("Before a topic's first message, wait until its publisher has "
                              'matched this many readers [-], bag time standing still (DDS '
                              'discovery can take seconds on a busy machine; a reader matched '
                              'late misses the start); 0 = do not wait', 0, 100),
    'readers_timeout_s': Param('Longest such wait per topic [s] (then a warning and the replay '
                               'goes on)', *WAIT_S),
}
