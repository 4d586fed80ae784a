"""Flight report of a plane: the circuit judged on ground truth, and plotted (pure, no rclpy).

Independent of the autopilot's claims. The scenario's mission items in order: takeoff is
flown when the true altitude comes within TAKEOFF_TOL_M of its altitude; a waypoint when the
true position passes within its acceptance radius (at least MIN_RADIUS_M: a C172 turns on a
580 m radius at 100 kt) or passes abeam of it (the along-track distance on the leg from the
previous item's point (takeoff: above the start) reaches the leg's length) within
ABEAM_MAX_M. For each leg flown: the altitude error and the largest cross-track error.

A landing (land; rtl: at the start) is judged as a runway landing along the approach (the
leg from the previous item's point to the landing point): the touchdown (the first sample
back on the ground, within TOUCHDOWN_DZ_M of the height the aircraft stood at before its
takeoff run) must come within TD_ALONG_M of the point along the approach and TD_ACROSS_M
across it, sinking slower than TD_SINK_MPS (a hard landing otherwise: the C172's gear is
certified for 10 ft/s); the rollout must stay within RUNWAY_HALF_WIDTH_M of the centerline
(KEFD 04/22 is 46 m wide) and end at rest (slower than 1 m/s). Then the item is flown; the
figures (touchdown point, sink rate, airspeed, pitch, rollout) go in the summary either way.
"""

from dataclasses import dataclass, field
import math
from typing import List

import numpy as np

from sim_core.scenario import Scenario
from sim_core.units import FT_M
from sim_report.core.mission import item_points, pyplot

TAKEOFF_TOL_M = 15.0
MIN_RADIUS_M = 150.0
ABEAM_MAX_M = 1500.0
LANDED_Z_M = 2.0                # below: on the ground, for a start whose height is unknown [m]
TOUCHDOWN_DZ_M = 0.1            # wheels on the ground: within this of the standing height [m]
TD_ALONG_M = 300.0              # touchdown: within this of the point along the approach [m]
TD_ACROSS_M = 15.0              # ... and across it [m]
TD_SINK_MPS = 3.0               # ... sinking slower than this [m/s] (10 ft/s: a hard landing)
RUNWAY_HALF_WIDTH_M = 23.0      # the rollout stays within this of the centerline [m]
AT_REST_MPS = 1.0


@dataclass
class PlaneSample:
    """One ground-truth sample: sim time [s], ENU [m], airspeed [kt], attitude [deg]."""

    t: float
    p: tuple
    airspeed_kts: float
    roll_deg: float
    pitch_deg: float
    heading_deg: float
    vz: float = math.nan        # vertical speed, up [m/s] (nan: from the positions)


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
        self._ground_z = None       # the height the aircraft stands at on the ground [m]
        self._airborne = False
        self.landing: dict = {}     # the landing's figures (see the module docstring)

    @property
    def done(self) -> bool:
        """Every item flown."""
        return len(self.flown) == len(self.points)

    def add(self, s: PlaneSample) -> None:
        """Take one sample; judge the next item."""
        if not self.samples and s.p[2] < LANDED_Z_M:
            self._ground_z = s.p[2]
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
            self._landing(s, pos, p, leg / n if n > 1.0 else None)
            return
        radius = max(it.acceptance_radius_m, MIN_RADIUS_M)
        if d <= radius:
            self._flown(s, f'within {d:.0f} m', pos[2] - p[2], pos)
        elif n > 1.0 and d < ABEAM_MAX_M and \
                float(np.dot(pos[:2] - self._leg_from[:2], leg)) / n >= n:
            self._flown(s, f'abeam at {d:.0f} m', pos[2] - p[2], pos)

    def _on_ground(self, z: float) -> bool:
        if self._ground_z is None:
            return z < LANDED_Z_M
        return z <= self._ground_z + TOUCHDOWN_DZ_M

    def _landing(self, s, pos, point, course) -> None:
        """Touchdown, rollout, rest: the figures, and the item flown if they are a landing."""
        rel = pos[:2] - point[:2]
        if course is None:          # no approach leg: the aircraft's own heading
            h = math.radians(s.heading_deg)
            course = np.array([math.sin(h), math.cos(h)])
        along = float(rel @ course)
        across = float(course[0] * rel[1] - course[1] * rel[0])    # left of the course > 0
        L = self.landing
        if not self._on_ground(s.p[2]):
            self._airborne = True
            return
        if not self._airborne:
            return                  # still on the ground before the flight
        if 'touchdown_t_s' not in L:
            L.update(touchdown_t_s=round(s.t, 2), touchdown_along_m=round(along, 1),
                     touchdown_across_m=round(across, 1),
                     touchdown_sink_mps=round(self._sink(), 2),
                     touchdown_airspeed_kts=round(s.airspeed_kts, 1),
                     touchdown_pitch_deg=round(s.pitch_deg, 1), max_rollout_across_m=0.0)
        L['max_rollout_across_m'] = round(max(L['max_rollout_across_m'], abs(across)), 1)
        if self._speed() >= AT_REST_MPS:
            return
        L.update(stopped_along_m=round(along, 1),
                 rollout_m=round(along - L['touchdown_along_m'], 1))
        faults = []
        if abs(L['touchdown_along_m']) > TD_ALONG_M:
            faults.append(f'touchdown {L["touchdown_along_m"]:+.0f} m along (limit '
                          f'{TD_ALONG_M:g})')
        if abs(L['touchdown_across_m']) > TD_ACROSS_M:
            faults.append(f'touchdown {L["touchdown_across_m"]:+.1f} m across (limit '
                          f'{TD_ACROSS_M:g})')
        if L['touchdown_sink_mps'] > TD_SINK_MPS:
            faults.append(f'sink rate {L["touchdown_sink_mps"]:.1f} m/s (limit {TD_SINK_MPS:g})')
        if L['max_rollout_across_m'] > RUNWAY_HALF_WIDTH_M:
            faults.append(f'off the runway: {L["max_rollout_across_m"]:.0f} m from the '
                          'centerline')
        L['verdict'] = 'landed' if not faults else '; '.join(faults)
        if not faults:
            self._flown(s, f'landed: touchdown {L["touchdown_along_m"]:+.0f} m along, '
                        f'{L["touchdown_across_m"]:+.1f} m across, sink '
                        f'{L["touchdown_sink_mps"]:.2f} m/s; at rest after '
                        f'{L["rollout_m"]:.0f} m', pos[2] - (self._ground_z or 0.0), pos)

    def _sink(self) -> float:
        """Sink rate at touchdown [m/s, down > 0]: the largest in the last 0.5 s.

        The samples' vz, or the positions' slope: the gear's first contact already slows it.
        """
        b = self.samples[-1]
        recent = [a for a in self.samples if b.t - a.t <= 0.5]
        if all(math.isfinite(a.vz) for a in recent):
            return max(-a.vz for a in recent)
        rates = [-(y.p[2] - x.p[2]) / (y.t - x.t) for x, y in zip(recent, recent[1:])
                 if y.t > x.t]
        return max(rates) if rates else math.nan

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
            **({'landing': dict(self.landing)} if self.landing else {}),
        }

    def plot(self, path: str, title: str) -> None:
        """Write a PNG: ground track with the items, altitude, airspeed and attitude vs time."""
        plt = pyplot()
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
        ax[0, 1].plot(t, P[:, 2] / FT_M if len(P) else P, 'C0')
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
