"""A waypoint mission judged on ground truth (pure, headless): a library of the kinds' judges.

A vehicle on the surface (a boat on the water, a rover on the ground) follows its `waypoint`
items; WaypointJudge judges them on ground truth: in order, each reached when the true position
comes within its acceptance radius horizontally (at least MIN_RADIUS_M; the height is not
judged); complete when the last is reached. Not the controller's word: a waypoint the
controller gave up abeam (a line-of-sight follower passes a waypoint it overshot) is not
reached, and the mission stays incomplete. matplotlib (Agg) only when a plot is drawn.
"""

import math
from typing import List, Sequence, Tuple

import numpy as np

from sim_core.scenario import Scenario
from sim_report.core.mission import item_points, pyplot
from sim_viz.core import scene

MIN_RADIUS_M = 1.0          # a waypoint's acceptance radius is at least this [m]


class WaypointJudge:
    """A waypoint mission followed on ground truth, sample by sample (see the module).

    The same surface as MissionJudge where it applies: feed() a sample, done, over, reached
    (sim time [s] of each waypoint reached), summary(), plot(); and the world report's
    (sim_report.core.vehicle_judge.VehicleJudge). A kind's judge sets its marker and colour.
    """

    marker = 'o'                    # the world plot: the kind's marker and colour
    color = scene.TEAMS[3]

    def __init__(self, scenario: Scenario):
        """The vehicle's scenario (start, mission); only waypoint items: ValueError otherwise."""
        bad = [f'{k} {it.command}' for k, it in enumerate(scenario.mission)
               if it.command != 'waypoint']
        if bad:
            raise ValueError(f'waypoint items only are judged, got {", ".join(bad)}')
        self.scenario = scenario
        self.points = [p[:2] for p in item_points(scenario)]      # east, north [m]
        self.radii = [max(float(it.acceptance_radius_m), MIN_RADIUS_M)
                      for it in scenario.mission]
        self.reached: List[float] = []
        self.miss_m: List[float] = []           # distance when each was reached [m]
        self.t: List[float] = []
        self.p: List[Tuple[float, float, float]] = []
        self.speed: List[float] = []
        self._closest = math.inf                # to the next waypoint so far [m]

    @property
    def items(self) -> int:
        """Waypoints to reach."""
        return len(self.points)

    @property
    def reached_at_s(self) -> List[float]:
        """Sim time [s] each waypoint was reached, in order."""
        return self.reached

    @property
    def done(self) -> bool:
        """Every waypoint reached."""
        return len(self.reached) == len(self.points)

    @property
    def over(self) -> bool:
        """Nothing more will happen: the mission done (no failure of its own)."""
        return self.done

    def wants_motors(self) -> bool:
        """Its judge needs no motor commands."""
        return False

    def feed(self, t: float, p_enu: Sequence[float], v_enu: Sequence[float],
             q_enu_flu: Sequence[float] = scene.IDENTITY, motors_off: bool = True) -> None:
        """One ground-truth sample: sim time [s], ENU position [m] and velocity [m/s]."""
        p = (float(p_enu[0]), float(p_enu[1]), float(p_enu[2]))
        self.t.append(float(t))
        self.p.append(p)
        self.speed.append(math.hypot(float(v_enu[0]), float(v_enu[1])))
        k = len(self.reached)
        if k >= len(self.points):
            return
        d = math.hypot(p[0] - self.points[k][0], p[1] - self.points[k][1])
        self._closest = min(self._closest, d)
        if d <= self.radii[k]:
            self.reached.append(float(t))
            self.miss_m.append(d)
            self._closest = math.inf

    def path(self) -> Tuple[np.ndarray, np.ndarray]:
        """(sim times [s], shape (N,); ENU positions [m], shape (N, 3)) of the samples."""
        return np.array(self.t), np.array(self.p).reshape(-1, 3)

    def plan(self) -> np.ndarray:
        """The planned path, ENU [m], shape (K + 1, 3): the start, then each waypoint."""
        start = np.array(self.scenario.initial_position_enu, dtype=float)
        pts = [np.array([e, n, 0.0]) for e, n in self.points]
        return np.vstack([start[None, :]] + [p[None, :] for p in pts])

    def distance_m(self) -> float:
        """Length of the track [m] (horizontal)."""
        return float(sum(math.hypot(b[0] - a[0], b[1] - a[1])
                         for a, b in zip(self.p, self.p[1:])))

    def summary(self) -> dict:
        """Result, waypoints reached (when, how close), the next one's closest pass, figures."""
        k = len(self.reached)
        return {
            'result': 'complete' if self.done else 'incomplete',
            'items': len(self.points), 'items_reached': k,
            'reached_at_s': [round(x, 2) for x in self.reached],
            'reached_within_m': [round(x, 2) for x in self.miss_m],
            'next_closest_m': None if self.done or not math.isfinite(self._closest)
            else round(self._closest, 2),
            'sim_time_s': round(self.t[-1], 3) if self.t else 0.0,
            'distance_m': round(self.distance_m(), 1),
            'max_speed_mps': round(max(self.speed), 2) if self.speed else 0.0,
        }

    def plot(self, path: str, title: str) -> None:
        """Write a PNG: the track over the waypoints (acceptance circles), speed over time."""
        plt = pyplot()
        from matplotlib.patches import Circle
        s = self.summary()
        t, P = self.path()
        fig, (a1, a2) = plt.subplots(1, 2, figsize=(13, 5.5))
        plan = self.plan()
        a1.plot(plan[:, 0], plan[:, 1], 'k--', lw=1, label='planned')
        a1.plot(P[:, 0], P[:, 1], 'C0', lw=1.5, label='sailed (truth)')
        for k, ((e, n), r) in enumerate(zip(self.points, self.radii)):
            ok = k < len(self.reached)
            c = scene.MISSION[:3] if ok else 'C3'
            a1.add_patch(Circle((e, n), r, fill=False, color=c))
            a1.annotate(f'{k}' + (f' {self.reached[k]:.0f} s' if ok else ''), (e, n),
                        textcoords='offset points', xytext=(6, 6), fontsize=9)
        a1.set_aspect('equal', adjustable='datalim')
        a1.set_xlabel('east [m]')
        a1.set_ylabel('north [m]')
        a1.grid(True, alpha=0.3)
        a1.legend(loc='best', fontsize=8)
        a1.set_title('track (top view); waypoints: acceptance circles, green reached')
        a2.plot(t, self.speed, 'C1')
        for tr in self.reached:
            a2.axvline(tr, color='C2', lw=0.8, alpha=0.6)
        a2.set_xlabel('sim time [s]')
        a2.set_ylabel('speed over ground [m/s]')
        a2.grid(True, alpha=0.3)
        fig.suptitle(f'{title}: mission {s["result"]} ({s["items_reached"]}/{s["items"]} '
                     f'waypoints), {s["distance_m"]:.0f} m in {s["sim_time_s"]:.1f} s sim')
        fig.tight_layout()
        fig.savefig(path, dpi=80)
        plt.close(fig)
