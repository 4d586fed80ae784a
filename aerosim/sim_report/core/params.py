"""The configurations of the report nodes as data (pure): the judges, summary_node, monitor.

Each is a frozen dataclass (the defaults) and a table of sim_core.config.Param (description
with units, range) that ``sim_ros.params.read_config`` declares. summary_node takes its mode,
fleet and swarm parameters from sim_viz.core.params, as viz_node does.
"""

from dataclasses import dataclass

from sim_core.config import Param
from sim_core.scenario import MAX_FLEET
from sim_viz.core.params import MAX_BOATS, VIEW_RATE_HZ, fleet_parameters

MAX_SIM_S = 1e6                     # s, the longest run a judge waits for
JUDGE_RATE_HZ = (1.0, 1000.0)       # Hz (sim), a judge's ground-truth sampling
SAMPLE_RATE_HZ = (0.1, 100.0)       # Hz (sim), a plot's sampling (summary_node, plane_report)
TITLE = 'Plot title and file prefix'


def _output(what: str) -> Param:
    return Param(f'Folder for {what}_summary.json and .png')


@dataclass(frozen=True)
class FlightReportConfig:
    """flight_report: a quad's (or a fleet's) missions, judged on ground truth."""

    scenario_file: str = 'default'
    max_sim_s: float = 300.0
    sample_rate_hz: float = 25.0
    output_dir: str = 'aerosim_runs'
    title: str = 'sim_quad_hil'
    vehicles: int = 1
    vehicle_prefix: str = 'quad'


FLIGHT_REPORT_PARAMETERS = {
    'max_sim_s': Param('Give up after this sim time [s]', 1.0, MAX_SIM_S),
    'sample_rate_hz': Param('Path sampling rate [Hz] (sim)', *JUDGE_RATE_HZ),
    'output_dir': _output('<graph>'),
    'title': Param(TITLE),
    **fleet_parameters('judged'),
}


@dataclass(frozen=True)
class PlaneReportConfig:
    """plane_report: a plane's circuit, judged on ground truth."""

    scenario_file: str = 'circuit'
    max_sim_s: float = 900.0
    sample_rate_hz: float = 5.0
    output_dir: str = 'aerosim_runs'
    title: str = 'sim_plane'


PLANE_REPORT_PARAMETERS = {
    'scenario_file': Param('Scenario YAML'),
    'max_sim_s': Param('Give up after this sim time [s]', 1.0, MAX_SIM_S),
    'sample_rate_hz': Param('Sampling rate [Hz] (sim)', *SAMPLE_RATE_HZ),
    'output_dir': _output('<title>'),
    'title': Param(TITLE),
}


@dataclass(frozen=True)
class WorldReportConfig:
    """world_report: every vehicle of a world, each by its kind's judge."""

    scenario_file: str = 'harbour_ops'
    vehicles: int = 0
    max_sim_s: float = 900.0
    sample_rate_hz: float = 25.0
    output_dir: str = 'aerosim_runs'
    title: str = 'sim_world'


WORLD_REPORT_PARAMETERS = {
    'scenario_file': Param('Scenario YAML'),
    'vehicles': Param(f"Vehicles judged [-], 0..{MAX_FLEET}: 0 = the scenario's vehicles: "
                      "list (any mix of kinds) or its one vehicle; N: copies of the scenario's "
                      "one vehicle (as the world's)", 0, MAX_FLEET),
    'max_sim_s': Param('Give up after this sim time [s]', 1.0, MAX_SIM_S),
    'sample_rate_hz': Param('Ground-truth sampling rate of each vehicle [Hz] (sim)',
                            *JUDGE_RATE_HZ),
    'output_dir': _output('<title>'),
    'title': Param(TITLE),
}


@dataclass(frozen=True)
class SummaryConfig:
    """summary_node: where the summary goes, and how often the run is sampled."""

    output_dir: str = 'aerosim_runs'
    title: str = 'run'
    sample_rate_hz: float = 5.0
    max_boats: int = 1000


SUMMARY_PARAMETERS = {
    'output_dir': Param('Folder for <title>_summary.json and <title>.png'),
    'title': Param(TITLE),
    'sample_rate_hz': Param('Sampling rate [Hz] (sim time)', *VIEW_RATE_HZ),
    'max_boats': Param('Boats sampled (swarm)', 1, MAX_BOATS),
}
SUMMARY_FLEET_PARAMETERS = fleet_parameters('summarized')
SUMMARY_SWARM_PARAMETERS = {'sim_config': Param('Init file'), 'types_file': Param('Type table')}


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
