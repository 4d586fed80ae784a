"""The configurations of the run's judge, the swarm's summary and the monitor (pure).

Each is a frozen dataclass (the defaults) and a table of sim_core.config.Param (description
with units, range) that ``sim_ros.params.read_config`` declares.
"""

from dataclasses import dataclass

from sim_core.config import Param
from sim_viz.core.params import MAX_BOATS

MAX_SIM_S = 1e6                     # s, the longest run a judge waits for
JUDGE_RATE_HZ = (1.0, 1000.0)       # Hz (sim), a judge's ground-truth sampling
SAMPLE_RATE_HZ = (0.1, 100.0)       # Hz (sim), the swarm summary's sampling


@dataclass(frozen=True)
class JudgeConfig:
    """The run's judge, in the world's process: when it ends the run, where it writes."""

    report: bool = False
    summary: bool = True
    output_dir: str = 'aerosim_runs'
    title: str = 'sim_world'
    max_sim_s: float = 900.0
    sample_rate_hz: float = 25.0
    command_timeout_s: float = 5.0


JUDGE_PARAMETERS = {
    'report': Param('End the run with the verdict once every vehicle is over (complete, or a '
                    'terminal failure: collided, its FC refused or lost, never commanded) or '
                    'at max_sim_s; the process exits 0 only if every mission is complete'),
    'summary': Param('Write the run summary at the end (a run stopped before its end says '
                     'stopped)'),
    'output_dir': Param('Folder of the runs: <output_dir>/<title>-<scenario>-<UTC time>/ '
                        'summary.json and plot.png; <output_dir>/latest links the last'),
    'title': Param("The run folder's first part and the plot's title (the graph's name)"),
    'max_sim_s': Param('report: give up at this sim time [s] (result incomplete, said why)',
                       1.0, MAX_SIM_S),
    'sample_rate_hz': Param('Ground-truth sampling rate of each vehicle [Hz] (sim), in the '
                            "world's step: no sample is lost at any time scale",
                            *JUDGE_RATE_HZ),
    'command_timeout_s': Param('A vehicle flown by any ROS node (controller topic) that '
                               'received no effector_command within this sim time [s] is '
                               'over, said why (no_command)', 0.5, 3600.0),
}


@dataclass(frozen=True)
class SwarmSummaryConfig:
    """The swarm's summary (usv_swarm_node): where it goes, how often the boats are sampled."""

    summary: bool = True
    output_dir: str = 'aerosim_runs'
    title: str = 'sim_usv_swarm'
    summary_rate_hz: float = 5.0
    summary_boats: int = 1000


SWARM_SUMMARY_PARAMETERS = {
    'summary': Param("Write the run summary (every boat's track, health) at the end"),
    'output_dir': Param('Folder of the runs (<output_dir>/<title>-<init>-<UTC time>/)'),
    'title': Param("The run folder's first part and the plot's title"),
    'summary_rate_hz': Param('Sampling rate of the summary [Hz] (sim time)', *SAMPLE_RATE_HZ),
    'summary_boats': Param('Boats sampled for the summary', 1, MAX_BOATS),
}


@dataclass(frozen=True)
class MonitorConfig:
    """monitor: how long it watches, and how long it waits for the graph."""

    stop_after_sim_s: float = 10.0
    startup_timeout_s: float = 60.0


MONITOR_PARAMETERS = {
    'stop_after_sim_s': Param('Report and exit at this sim time [s]', 0.0, 1e7),
    'startup_timeout_s': Param('Fail if /clock has not started after this wall time [s]',
                               1.0, 3600.0),
}
