"""The swarm's run summary, in usv_swarm_node's process (node side; sim_report's one output).

The swarm graph is not the world (its boats are numpy rows, up to 10,000), but it ends the same
way: its time source samples every boat's track in its own step (at summary_rate_hz of sim
time, at most summary_boats boats: nothing is lost to DDS), and when the run stops it writes
summary.json and plot.png into the run's folder (sim_report.core.output: <output_dir>/<title>-
<init file>-<UTC time>/, latest linked), result stopped: a swarm run has no mission to judge.
It is the process's `judge` for sim_ros.run.until_judged (it never ends the run itself).
"""

from datetime import datetime, timezone
from pathlib import Path
from typing import Dict, Optional

import numpy as np

from sim_core.decimator import Decimator
from sim_report.core import boats
from sim_report.core.mission import preload_plotting
from sim_report.core.output import run_folder, write_summary
from sim_report.core.params import SWARM_SUMMARY_PARAMETERS, SwarmSummaryConfig
from sim_ros.params import read_config
from sim_viz.core import scene


class SwarmSummary:
    """Samples a SwarmSim in its node's step; writes the run's summary at the end."""

    def __init__(self, node, init_file: str):
        """Read the summary's parameters on node (a UsvSwarmNode); init_file names the run."""
        self.node = node
        self.cfg = cfg = read_config(node, SwarmSummaryConfig, SWARM_SUMMARY_PARAMETERS)
        self.name = Path(init_file).stem
        self.dec = Decimator(cfg.summary_rate_hz)
        self.tracks: Dict[int, boats.BoatTrack] = {}
        self.smap = None
        self.collisions = 0
        self.started = datetime.now(timezone.utc)
        self.finished: Optional[int] = None        # never set: a swarm run ends when stopped
        self.folder = None
        if cfg.summary:
            preload_plotting()

    def new_swarm(self, cfg, types) -> None:
        """An init replaced the swarm: its map (obstacles, bounds) for the plot."""
        self.smap = scene.swarm_map(cfg, types)

    def sample(self, t_ns: int, sim) -> None:
        """In the node's step: every boat's position, speed and health when due (sim time)."""
        if not self.cfg.summary or not self.dec.due(t_ns):
            return
        b = sim.boats
        self.collisions = sum(sim.collisions.values())
        t = t_ns * 1e-9
        k = min(sim.n_boats, self.cfg.summary_boats)
        speed = np.hypot(b.u[:k], b.v[:k])
        for i in range(k):
            bid = int(sim.ids[i])
            tr = self.tracks.get(bid)
            if tr is None:
                tr = self.tracks[bid] = boats.BoatTrack(team=int(sim.team[i]))
            tr.alive = sim.status[i] != 0
            tr.add(t, float(b.e[i]), float(b.n[i]), float(speed[i]), float(sim.health[i]))

    def stop(self) -> None:
        """The run stopped: write its summary and plot (once)."""
        if self.folder is not None or not self.cfg.summary:
            return
        self.folder = run_folder(self.cfg.output_dir, self.cfg.title, self.name, self.started)
        png = str(self.folder / 'plot.png')
        s = boats.plot_swarm(self.tracks, self.smap, self.collisions, png, self.cfg.title)
        s.update(result='stopped', ended='stopped: a swarm run has no mission to judge')
        js, _ = write_summary(self.folder, s)
        self.node.get_logger().info(
            f'SUMMARY {self.cfg.title}: {s["boats"]} boats, {s["collisions"]} collisions, '
            f'{len(s["out_of_action"])} out of action, {s["sim_time_s"]} s sim; wrote {js} '
            f'and {png}')
