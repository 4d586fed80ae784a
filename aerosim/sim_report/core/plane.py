"""Flight report of a plane: the circuit judged on ground truth, and plotted (pure, no rclpy).

Independent of the autopilot's claims. The scenario's mission items in order: takeoff is
flown when the true altitude comes within TAKEOFF_TOL_M of its altitude; a waypoint when the
true position passes within its acceptance radius (at least MIN_RADIUS_M: a C172 turns on a
580 m radius at 100 kt) or passes abeam of it (the along-track distance on the leg from the
previous item's point (takeoff: above the start) reaches the leg's length) within
ABEAM_MAX_M; a landing when the aircraft
stands on the ground (below LANDED_Z_M, slower than 1 m/s) within 300 m of its point. For each
leg flown: the altitude error and the largest cross-track error.
"""

from dataclasses import dataclass, field
import math
from typing import List

import numpy as np

from sim_core.scenario import Scenario
from sim_report.core.mission import item_points

TAKEOFF_TOL_M = 15.0
MIN_RADIUS_M = 150.0
ABEAM_MAX_M = 1500.0
LANDED_Z_M = 2.0
FT = 0.3048
KT = 1852.0 / 3600.0


@dataclass
class PlaneSample:
    """One ground-truth sample: sim time [s], ENU [m], airspeed [kt], attitude [deg]."""

    t: float
    p: tuple
    airspeed_kts: float
    roll_deg: float
    pitch_deg: float
    heading_deg: float


@dataclass
class PlaneJudge:
    """Follows the flight sample by sample; knows which items were flown."""

    scenario: Scenario
    samples: List[PlaneSample] = field(default_factory=list)
    flown: list = field(default_factory=list)     # (item, t, how, altitude error m)
    max_xtrack: list = field(default_factory=list)

    def __post_init__(self):
        """Place the items in ENU."""
        self.points = item_points(self.scenario)
        self._leg_from = np.array(self.scenario.initial_position_enu, dtype=float)
        self._xt = 0.0

    @property
    def done(self) -> bool:
        """Every item flown."""
        return len(self.flown) == len(self.points)

    def add(self, s: PlaneSample) -> None:
        """Take one sample; judge the next item."""
        self.samples.append(s)
        k = len(self.flown)
        if k >= len(self.points):
            return
        it, p, pos = self.scenario.mission[k], self.points[k], np.array(s.p, dtype=float)
        if it.command == 'takeoff':
            if pos[2] >= p[2] - TAKEOFF_TOL_M:
                self._flown(s, 'altitude reached', pos[2] - p[2], pos)
            return
        d = float(np.hypot(*(pos[:2] - p[:2])))
        leg = p[:2] - self._leg_from[:2]
        n = float(np.hypot(*leg))
        if n > 1.0:
            rel = pos[:2] - self._leg_from[:2]
            self._xt = max(self._xt, abs(float(leg[0] * rel[1] - leg[1] * rel[0]) / n))
        if it.command in ('land', 'rtl'):
            if pos[2] < LANDED_Z_M and d < 300.0 and len(self.samples) > 1 and \
                    self._speed() < 1.0:
                self._flown(s, f'landed {d:.0f} m from the point', pos[2] - p[2], pos)
            return
        radius = max(it.acceptance_radius_m, MIN_RADIUS_M)
        if d <= radius:
            self._flown(s, f'within {d:.0f} m', pos[2] - p[2], pos)
        elif n > 1.0 and d < ABEAM_MAX_M and \
                float(np.dot(pos[:2] - self._leg_from[:2], leg)) / n >= n:
            self._flown(s, f'abeam at {d:.0f} m', pos[2] - p[2], pos)

    def _speed(self):
        a, b = self.samples[-2], self.samples[-1]
        dt = b.t - a.t
        return math.dist(a.p, b.p) / dt if dt > 0 else 0.0

    def _flown(self, s, how, alt_err, pos):
        self.flown.append((len(self.flown), round(s.t, 2), how, round(float(alt_err), 1)))
        self.max_xtrack.append(round(self._xt, 1))
        self._xt = 0.0
        self._leg_from = self.points[len(self.flown) - 1]     # the leg: planned point to point

    def summary(self) -> dict:
        """The run's figures (JSON-ready)."""
        s = self.samples
        air = [x for x in s if x.p[2] > 5.0]
        items = []
        for i, it in enumerate(self.scenario.mission):
            d = {'item': i, 'command': it.command, 'flown': i < len(self.flown)}
            if i < len(self.flown):
                _, t, how, alt_err = self.flown[i]
                d.update(t_s=t, how=how, altitude_error_m=alt_err,
                         max_cross_track_m=self.max_xtrack[i])
            items.append(d)
        return {
            'result': 'complete' if self.done else 'incomplete',
            'vehicle': 'plane', 'scenario': self.scenario.name,
            'items': len(self.points), 'items_flown': len(self.flown), 'legs': items,
            'sim_time_s': round(s[-1].t, 2) if s else 0.0,
            'max_altitude_m': round(max((x.p[2] for x in s), default=0.0), 1),
            'max_airspeed_kts': round(max((x.airspeed_kts for x in s), default=0.0), 1),
            'mean_airborne_airspeed_kts': round(float(np.mean([x.airspeed_kts for x in air])), 1)
            if air else None,
            'max_bank_deg': round(max((abs(x.roll_deg) for x in s), default=0.0), 1),
            'distance_flown_km': round(sum(math.dist(a.p[:2], b.p[:2])
                                           for a, b in zip(s, s[1:])) / 1000.0, 2),
        }

    def plot(self, path: str, title: str) -> None:
        """Write a PNG: ground track with the items, altitude, airspeed and attitude vs time."""
        import matplotlib
        matplotlib.use('Agg')
        import matplotlib.pyplot as plt
        s = self.samples
        t = np.array([x.t for x in s])
        P = np.array([x.p for x in s]) if s else np.zeros((0, 3))
        fig, ax = plt.subplots(2, 2, figsize=(13, 9))
        a = ax[0, 0]
        a.plot(P[:, 0], P[:, 1], 'C0', lw=1.5, label='flown (truth)')
        pts = np.array(self.points) if self.points else np.zeros((0, 3))
        if len(pts):
            plan = np.vstack([np.array(self.scenario.initial_position_enu)[None, :], pts])
            a.plot(plan[:, 0], plan[:, 1], 'k--', lw=1, label='planned')
        for k, p in enumerate(pts):
            ok = k < len(self.flown)
            a.plot(p[0], p[1], 'o', ms=9, mfc='C2' if ok else 'none', mec='C2' if ok else 'C3')
            a.annotate(f'{k} {self.scenario.mission[k].command}', (p[0], p[1]),
                       textcoords='offset points', xytext=(6, 6), fontsize=9)
        a.set_xlabel('east [m]')
        a.set_ylabel('north [m]')
        a.set_aspect('equal', adjustable='datalim')
        a.legend(fontsize=8)
        a.set_title('ground track')
        ax[0, 1].plot(t, P[:, 2] / FT if len(P) else P, 'C0')
        ax[0, 1].set_ylabel('height above the field [ft]')
        ax[1, 0].plot(t, [x.airspeed_kts for x in s], 'C1')
        ax[1, 0].set_ylabel('calibrated airspeed [kt]')
        ax[1, 1].plot(t, [x.roll_deg for x in s], 'C2', label='roll')
        ax[1, 1].plot(t, [x.pitch_deg for x in s], 'C3', label='pitch')
        ax[1, 1].set_ylabel('attitude [deg]')
        ax[1, 1].legend(fontsize=8)
        for a in (ax[0, 1], ax[1, 0], ax[1, 1]):
            a.set_xlabel('sim time [s]')
            for _, tf, _, _ in self.flown:
                a.axvline(tf, color='C2', lw=0.6, alpha=0.6)
        for a in ax.flat:
            a.grid(True, alpha=0.3)
        sm = self.summary()
        fig.suptitle(f'{title}: {sm["result"]}, {sm["items_flown"]}/{sm["items"]} items, '
                     f'{sm["distance_flown_km"]} km in {sm["sim_time_s"]} s sim')
        fig.tight_layout()
        fig.savefig(path, dpi=80)
        plt.close(fig)
