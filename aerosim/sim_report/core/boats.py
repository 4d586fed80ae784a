"""Run summaries of a boat swarm: tracks on the map, speed and health (pure, headless).

The USV swarm's figures (usv_swarm_node). matplotlib with the Agg backend: no display needed.
A boat's mission in a world is judged by its kind's judge (kinds/boat/judge.py, on
sim_report.core.waypoints.WaypointJudge).
"""

from dataclasses import dataclass, field
from typing import Dict, List

import numpy as np

from sim_core.clock import ResetDetector
from sim_report.core.mission import pyplot
from sim_viz.core import scene


@dataclass
class BoatTrack:
    """One boat's samples: sim time [s], east/north [m], speed [m/s], health."""

    t: List[float] = field(default_factory=list)
    e: List[float] = field(default_factory=list)
    n: List[float] = field(default_factory=list)
    speed: List[float] = field(default_factory=list)
    health: List[float] = field(default_factory=list)
    team: int = 0
    alive: bool = True
    clock_reset: ResetDetector = field(default_factory=ResetDetector, repr=False,
                                       compare=False)

    def add(self, t, e, n, speed, health=float('nan')):
        """Append a sample (time going back, a reset, starts over)."""
        if self.clock_reset.went_back(t):
            for a in (self.t, self.e, self.n, self.speed, self.health):
                a.clear()
        self.t.append(float(t))
        self.e.append(float(e))
        self.n.append(float(n))
        self.speed.append(float(speed))
        self.health.append(float(health))

    def distance_m(self) -> float:
        """Length of the track [m]."""
        if len(self.e) < 2:
            return 0.0
        return float(np.sum(np.hypot(np.diff(self.e), np.diff(self.n))))


def _map(ax, smap):
    if smap is None:
        return
    for (e, n), r, name in zip(smap.obstacles_en, smap.obstacle_radii, smap.obstacle_names):
        ax.add_patch(_circle(e, n, r))
        ax.plot(e, n, '+', color='0.3', ms=6)            # visible however small the radius
        ax.annotate(f'{name} ({r:g} m)', (e, n), fontsize=8, color='0.2',
                    textcoords='offset points', xytext=(5, -10))
    b = np.vstack([smap.bounds_en, smap.bounds_en[:1]])
    ax.plot(b[:, 0], b[:, 1], color=scene.BOUNDS[:3], lw=1.5, label='map bounds')


def _circle(e, n, r):
    from matplotlib.patches import Circle
    return Circle((e, n), r, color=scene.OBSTACLE[:3], alpha=0.5)


def boat_summary(track: BoatTrack, title: str) -> dict:
    """Figures of one boat's run."""
    return {'sim_time_s': round(track.t[-1], 3) if track.t else 0.0,
            'distance_m': round(track.distance_m(), 2),
            'max_speed_mps': round(max(track.speed), 3) if track.speed else 0.0,
            'final_position_en_m': [round(track.e[-1], 2), round(track.n[-1], 2)]
            if track.t else None, 'title': title}


def plot_boat(track: BoatTrack, path: str, title: str) -> dict:
    """PNG of one boat: track (top view) and speed over time; returns its summary."""
    plt = pyplot()
    s = boat_summary(track, title)
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(13, 5.5))
    a1.plot(track.e, track.n, 'C0', lw=1.5)
    if track.t:
        a1.plot(track.e[0], track.n[0], 'go', label='start')
        a1.plot(track.e[-1], track.n[-1], 'rs', label='end')
    a1.set_aspect('equal', adjustable='datalim')
    a1.set_xlabel('east [m]')
    a1.set_ylabel('north [m]')
    a1.grid(True, alpha=0.3)
    a1.legend(loc='best')
    a1.set_title('track (top view)')
    a2.plot(track.t, track.speed, 'C1')
    a2.set_xlabel('sim time [s]')
    a2.set_ylabel('speed over ground [m/s]')
    a2.grid(True, alpha=0.3)
    fig.suptitle(f'{title}: {s["distance_m"]:.1f} m in {s["sim_time_s"]:.1f} s sim, max speed '
                 f'{s["max_speed_mps"]:.2f} m/s')
    fig.tight_layout()
    fig.savefig(path, dpi=80)
    plt.close(fig)
    return s


def swarm_summary(tracks: Dict[int, BoatTrack], collisions: int) -> dict:
    """Figures of a swarm run."""
    t = max((tr.t[-1] for tr in tracks.values() if tr.t), default=0.0)
    return {'sim_time_s': round(t, 3), 'boats': len(tracks),
            'out_of_action': sorted(int(i) for i, tr in tracks.items() if not tr.alive),
            'collisions': int(collisions),
            'distance_m': {int(i): round(tr.distance_m(), 1) for i, tr in tracks.items()},
            'final_health': {int(i): tr.health[-1] for i, tr in tracks.items() if tr.health}}


def plot_swarm(tracks: Dict[int, BoatTrack], smap, collisions: int, path: str,
               title: str, max_labels: int = 50) -> dict:
    """Write the PNG of a swarm run and return its summary.

    Every boat's track on the map (team colours, grey when out of action) with obstacles and
    bounds; health over time.
    """
    plt = pyplot()
    s = swarm_summary(tracks, collisions)
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(15, 7), gridspec_kw={'width_ratios': [3, 2]})
    _map(a1, smap)
    for k, (bid, tr) in enumerate(sorted(tracks.items())):
        c = scene.team_color(tr.team, tr.alive)[:3]
        a1.plot(tr.e, tr.n, color=c, lw=1.0, alpha=0.8)
        if tr.t:
            a1.plot(tr.e[-1], tr.n[-1], 'o' if tr.alive else 'x', color=c, ms=5)
            if k < max_labels:
                a1.annotate(str(bid), (tr.e[-1], tr.n[-1]), fontsize=8,
                            textcoords='offset points', xytext=(4, 4))
        if k < max_labels:
            a2.plot(tr.t, tr.health, color=c, lw=1.0)
    # frame the boats (the map may be far larger than where they went)
    es = [x for tr in tracks.values() for x in tr.e]
    ns = [x for tr in tracks.values() for x in tr.n]
    if es and smap is not None and len(smap.obstacles_en):
        es += [e + sg * r for (e, _), r in zip(smap.obstacles_en, smap.obstacle_radii)
               for sg in (-1, 1)]
        ns += [n + sg * r for (_, n), r in zip(smap.obstacles_en, smap.obstacle_radii)
               for sg in (-1, 1)]
    if es:
        pad = max(50.0, 0.1 * max(max(es) - min(es), max(ns) - min(ns)))
        a1.set_xlim(min(es) - pad, max(es) + pad)
        a1.set_ylim(min(ns) - pad, max(ns) + pad)
    a1.set_aspect('equal', adjustable='box')
    a1.set_xlabel('east [m] (from the map centre)')
    a1.set_ylabel('north [m]')
    a1.grid(True, alpha=0.3)
    teams = sorted({tr.team for tr in tracks.values()})
    for tm in teams:
        a1.plot([], [], color=scene.team_color(tm)[:3], label=f'team {tm}')
    a1.plot([], [], 'x', color=scene.DEAD[:3], label='out of action')
    a1.legend(loc='best', fontsize=8)
    a1.set_title('tracks (end: o, out of action: x)')
    a2.set_xlabel('sim time [s]')
    a2.set_ylabel('health')
    a2.set_ylim(bottom=0.0)
    a2.grid(True, alpha=0.3)
    a2.set_title('health')
    fig.suptitle(f'{title}: {s["boats"]} boats, {s["sim_time_s"]:.1f} s sim, '
                 f'{len(s["out_of_action"])} out of action, {s["collisions"]} collisions')
    fig.tight_layout()
    fig.savefig(path, dpi=80)
    plt.close(fig)
    return s
