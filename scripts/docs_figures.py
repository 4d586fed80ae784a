"""Regenerate the README's swarm summary figure (docs/img/swarm_summary.png).

The swarm of config/SimConfig.json is driven offline by the simulation core the swarm node
runs (SwarmSim), with command 22s parsed by the bridge's codec, and drawn by the same
plot_swarm that summary_node uses at the end of a sim_usv_swarm run. The quad figure is the
demo's own output: `bash scripts/demo.sh` then copy aerosim_runs/sim_quad_hil.png.

    python scripts/docs_figures.py [output.png]
"""

import math
import sys

from sim_dynamics.core.swarm_config import load_swarm_config
from sim_dynamics.core.usv_swarm import SwarmParams, SwarmSim, TypeTable
from sim_report.core import boats
from sim_viz.core import scene
from usv_bridge.core import protocol as P

DT = 0.1
COMMANDS = {   # sim time [s] -> command 22 fields after the code (id, task..., mode, a, b, ...)
    0.0: [(1, 0, 0, 0, 0, 3, 2.0, 20, 0, 0), (2, 0, 0, 0, 0, 3, 2.0, 0, 0, 0),
          (3, 0, 0, 0, 0, 3, 1.5, 340, 0, 0), (11, 0, 0, 0, 0, 3, 2.0, 200, 0, 0),
          (12, 0, 0, 0, 0, 3, 1.5, 180, 0, 0)],
    120.0: [(1, 0, 0, 0, 0, 3, 2.0, 90, 0, 0), (11, 0, 0, 0, 0, 3, 2.0, 270, 0, 0),
            (12, 0, 0, 0, 0, 2, 80.0, 15.0, 0, 0)],
}


def main(out='docs/img/swarm_summary.png', seconds=300.0):
    """Run the swarm, sample it at 1 Hz like summary_node, plot."""
    types = TypeTable.load('usv_types.yaml')
    cfg = load_swarm_config('SimConfig.json', types.boats, types.obstacles, 1000)[0]
    sim = SwarmSim(cfg, types, SwarmParams())
    sim.damage_enabled = False
    tracks = {int(i): boats.BoatTrack(team=int(t)) for i, t in zip(sim.ids, sim.team)}
    for k in range(int(seconds / DT) + 1):
        t = k * DT
        for fields in COMMANDS.get(round(t, 1), ()):
            sim.command(P.parse_command22([22, *fields], cfg))
        if k % int(1.0 / DT) == 0:
            c = sim.columns()
            for i, bid in enumerate(c['id']):
                tr = tracks[int(bid)]
                tr.alive = bool(c['status'][i])
                tr.add(t, sim.boats.e[i], sim.boats.n[i],
                       math.hypot(c['speed_forward'][i], c['speed_lateral'][i]), c['health'][i])
        sim.step(DT)
    s = boats.plot_swarm(tracks, scene.swarm_map(cfg, types), sum(sim.collisions.values()),
                           out, 'sim_usv_swarm (SimConfig.json)')
    print(f'wrote {out}: {s["boats"]} boats, {s["sim_time_s"]} s, {s["collisions"]} collisions')


if __name__ == '__main__':
    main(*sys.argv[1:2])
