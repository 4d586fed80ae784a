"""Flight report: judge a flown mission from ground truth, and plot it (pure, no rclpy).

Independent of any flight controller's claims: the mission items are placed in the local ENU
frame of the scenario origin; an item is reached when the true position comes within its
acceptance radius horizontally and 1 m vertically, in mission order (takeoff: its altitude);
a landing item is complete when the vehicle rests on the ground with its motors stopped (the
flight controller disarmed). The tracking error is the
horizontal distance from the planned path (the polyline through the items, from the takeoff
point) while airborne.
"""

from dataclasses import dataclass, field
import math
from typing import List, Optional

import numpy as np

from sim_core.scenario import LANDING_COMMANDS, Scenario

ALT_TOL_M = 1.0
GROUND_Z_M = 0.05
REST_SPEED = 0.1


@dataclass
class Sample:
    """One ground-truth sample: sim time [s], ENU position [m], speed [m/s]."""

    t: float
    p: tuple
    speed: float


def item_points(scenario: Scenario) -> List[np.ndarray]:
    """ENU position of each mission item (takeoff: above the start position)."""
    o = scenario.origin
    pts = []
    prev = np.array(scenario.initial_position_enu, dtype=float)
    for it in scenario.mission:
        if it.command == 'takeoff':
            p = np.array([prev[0], prev[1], it.alt_m])
        elif it.command == 'rtl':
            p = np.array([scenario.initial_position_enu[0], scenario.initial_position_enu[1],
                          0.0])
        else:
            e, n, _ = o.geodetic_to_enu(it.lat_deg, it.lon_deg, o.alt_m)
            p = np.array([e, n, 0.0 if it.command == 'land' else it.alt_m])
        pts.append(p)
        prev = p
    return pts


def _dist_to_polyline(xy, poly) -> float:
    best = math.inf
    for a, b in zip(poly[:-1], poly[1:]):
        ab = b - a
        L2 = float(ab @ ab)
        s = 0.0 if L2 == 0.0 else min(1.0, max(0.0, float((xy - a) @ ab) / L2))
        best = min(best, float(np.linalg.norm(xy - (a + s * ab))))
    return best


@dataclass
class MissionJudge:
    """Follows the mission on ground truth as samples arrive."""

    scenario: Scenario
    rest_s: float = 2.0
    samples: List[Sample] = field(default_factory=list)
    reached: List[float] = field(default_factory=list)       # sim time each item was reached
    max_track_err: float = 0.0
    landed_outside: bool = False       # came to rest on the ground away from the land point
    _rest_since: Optional[float] = None

    def __post_init__(self):
        """Place the items."""
        self.points = item_points(self.scenario)
        start = np.array(self.scenario.initial_position_enu, dtype=float)
        self.poly = [start[0:2]] + [p[0:2] for p in self.points]

    @property
    def over(self) -> bool:
        """Nothing more will happen: mission done, or landed for good outside the target."""
        return self.done or self.landed_outside

    @property
    def done(self) -> bool:
        """All items reached (the last one resting on the ground if it is a landing)."""
        return len(self.reached) == len(self.points)

    def add(self, t: float, p, speed: float, motors_off: bool = True) -> None:
        """Feed one ground-truth sample (ENU [m], speed [m/s], all motor commands zero)."""
        p = np.asarray(p, dtype=float)
        self.samples.append(Sample(t, tuple(p), speed))
        if p[2] > 0.5:
            self.max_track_err = max(self.max_track_err, _dist_to_polyline(p[0:2], self.poly))
        k = len(self.reached)
        if k >= len(self.points):
            return
        it = self.scenario.mission[k]
        tgt = self.points[k]
        if it.command in LANDING_COMMANDS:
            if not (p[2] < GROUND_Z_M and speed < REST_SPEED and motors_off):
                self._rest_since = None
                return
            if self._rest_since is None:
                self._rest_since = t
            if t - self._rest_since >= self.rest_s:
                if np.linalg.norm(p[0:2] - tgt[0:2]) <= max(it.acceptance_radius_m, 1.0):
                    self.reached.append(t)
                elif t - self._rest_since >= 5.0 * self.rest_s:
                    self.landed_outside = True
            return
        if it.command == 'takeoff':
            ok = abs(p[2] - tgt[2]) <= ALT_TOL_M
        else:
            ok = (np.linalg.norm(p[0:2] - tgt[0:2]) <= max(it.acceptance_radius_m, 1.0) + 0.5
                  and abs(p[2] - tgt[2]) <= ALT_TOL_M)
        if ok:
            self.reached.append(t)

    def landing_error(self) -> Optional[float]:
        """Horizontal distance of the final position from the last item [m]."""
        if not self.samples or not self.points:
            return None
        return float(np.linalg.norm(np.asarray(self.samples[-1].p[0:2]) - self.points[-1][0:2]))

    def summary(self, wall_s: float) -> dict:
        """Mission result, reached items, errors, sim and wall time, real-time factor."""
        t = self.samples[-1].t if self.samples else 0.0
        return {
            'result': 'complete' if self.done else 'incomplete',
            'items_reached': len(self.reached), 'items': len(self.points),
            'reached_at_s': [round(x, 2) for x in self.reached],
            'max_tracking_error_m': round(self.max_track_err, 3),
            'landing_error_m': None if self.landing_error() is None
            else round(self.landing_error(), 3),
            'sim_time_s': round(t, 3), 'wall_time_s': round(wall_s, 3),
            'real_time_factor': round(t / wall_s, 2) if wall_s > 0 else None,
        }

    def plot(self, path: str, title: str) -> None:
        """Write a PNG: top view (path vs mission), altitude and speed over time."""
        import matplotlib
        matplotlib.use('Agg')
        import matplotlib.pyplot as plt
        s = self.samples
        t = np.array([x.t for x in s])
        P = np.array([x.p for x in s]) if s else np.zeros((0, 3))
        v = np.array([x.speed for x in s])
        fig = plt.figure(figsize=(12, 6.5))
        ax = fig.add_subplot(1, 2, 1)
        poly = np.array(self.poly)
        ax.plot(poly[:, 0], poly[:, 1], 'k--', lw=1, label='planned')
        ax.plot(P[:, 0], P[:, 1], 'C0', lw=1.5, label='flown (truth)')
        for i, p in enumerate(self.points):
            ok = i < len(self.reached)
            ax.plot(p[0], p[1], 'o', ms=9, mfc='C2' if ok else 'none', mec='C2' if ok else 'C3')
            ax.annotate(f'{i} {self.scenario.mission[i].command}', (p[0], p[1]),
                        textcoords='offset points', xytext=(6, 6), fontsize=9)
        ax.set_xlabel('east [m]')
        ax.set_ylabel('north [m]')
        ax.set_aspect('equal', adjustable='datalim')
        ax.grid(True, alpha=0.3)
        ax.legend(loc='best')
        ax.set_title('top view')
        a2 = fig.add_subplot(2, 2, 2)
        a2.plot(t, P[:, 2], 'C0')
        for i, tr in enumerate(self.reached):
            a2.axvline(tr, color='C2', lw=0.8, alpha=0.6)
            a2.text(tr, max(P[:, 2].max(), 1.0) * 0.95, str(i), fontsize=8, color='C2')
        a2.set_ylabel('altitude [m]')
        a2.grid(True, alpha=0.3)
        a2.set_title('altitude (items reached: green lines)')
        a3 = fig.add_subplot(2, 2, 4)
        a3.plot(t, v, 'C1')
        a3.set_xlabel('sim time [s]')
        a3.set_ylabel('speed [m/s]')
        a3.grid(True, alpha=0.3)
        sm = self.summary(0.0)
        land = sm['landing_error_m']
        land = float('nan') if land is None else land
        fig.suptitle(f'{title}: mission {sm["result"]} ({sm["items_reached"]}/{sm["items"]} '
                     f'items), max tracking error {sm["max_tracking_error_m"]:.2f} m, landing '
                     f'error {land:.2f} m')
        fig.tight_layout()
        fig.savefig(path, dpi=90)
        plt.close(fig)
