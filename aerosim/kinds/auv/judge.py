"""The AUV's judge: its dive plan judged on ground truth (pure, headless).

The plan is the AUV's `waypoint` items, each a point at a depth (alt_m = -depth). Judged in
order on the true position, not on the controller's word:
- an item at depth d > 0 is reached when the AUV comes within its acceptance radius
  horizontally (at least MIN_RADIUS_M) with its depth within DEPTH_TOLERANCE_M of d;
- an item at the surface (depth 0) is reached when the AUV is within its radius at the surface
  (its axis shallower than SURFACE_DEPTH_M); with hold_s it is complete once the AUV has stayed
  at the surface hold_s seconds on end (a GPS fix needs the antenna out of the water).
Complete when the last is. Failed (over) if the AUV goes deeper than its type's rated depth.
The summary has the depth figures: the deepest point, each item's depth when reached, and the
RMS depth error on the legs run at depth (from an item at depth d to the next item at d).
"""

import math
from typing import List, Optional, Sequence, Tuple

import numpy as np

from sim_core.scenario import Scenario
from sim_dynamics.core.auv import AuvType
from sim_report.core.mission import item_points
from sim_viz.core import scene

MIN_RADIUS_M = 1.0
DEPTH_TOLERANCE_M = 1.0
SURFACE_DEPTH_M = 0.3


class AuvJudge:
    """An AUV's plan followed on ground truth (module docstring); a world's VehicleJudge too."""

    marker = 'd'                    # the world plot: an AUV's marker and colour
    color = (0.95, 0.70, 0.10, 1.0)

    def __init__(self, scenario: Scenario):
        """The AUV's scenario (start, plan, its AUV type's rated depth)."""
        bad = [f'{k} {it.command}' for k, it in enumerate(scenario.mission)
               if it.command != 'waypoint']
        if bad:
            raise ValueError(f'an AUV follows waypoint items only, got {", ".join(bad)}')
        self.scenario = scenario
        self.max_depth_rated = AuvType.from_yaml(scenario.vehicle_file).max_depth_m
        self.points = [p[:2] for p in item_points(scenario)]        # east, north [m]
        self.depths = [max(0.0, -float(it.alt_m)) for it in scenario.mission]
        self.radii = [max(float(it.acceptance_radius_m), MIN_RADIUS_M)
                      for it in scenario.mission]
        self.holds = [float(it.hold_s) for it in scenario.mission]
        self.reached: List[float] = []
        self.depth_at: List[float] = []         # depth [m] when each was reached
        self.t: List[float] = []
        self.p: List[Tuple[float, float, float]] = []
        self._surface_since: Optional[float] = None
        self._held = False                      # the last reached item's hold is over
        self.crushed_at: Optional[float] = None
        self._leg_err: List[float] = []

    @property
    def items(self) -> int:
        """Items to reach."""
        return len(self.points)

    @property
    def reached_at_s(self) -> List[float]:
        """Sim time [s] each item was reached, in order."""
        return self.reached

    def _holding(self) -> bool:
        """The last item reached is a surfacing whose hold is not over yet."""
        k = len(self.reached) - 1
        return k >= 0 and self.depths[k] <= 0.0 and self.holds[k] > 0.0 and not self._held

    @property
    def done(self) -> bool:
        """Every item reached, the last one's hold at the surface over."""
        return len(self.reached) == len(self.points) and not self._holding()

    @property
    def over(self) -> bool:
        """Nothing more will happen: done, or deeper than its rated depth."""
        return self.done or self.crushed_at is not None

    def wants_motors(self) -> bool:
        """An AUV's judge needs no motor commands."""
        return False

    def feed(self, t: float, p_enu: Sequence[float], v_enu: Sequence[float],
             q_enu_flu: Sequence[float] = scene.IDENTITY, motors_off: bool = True) -> None:
        """One ground-truth sample: sim time [s], ENU position [m] and velocity [m/s]."""
        p = (float(p_enu[0]), float(p_enu[1]), float(p_enu[2]))
        t = float(t)
        self.t.append(t)
        self.p.append(p)
        depth = -p[2]
        if depth > self.max_depth_rated and self.crushed_at is None:
            self.crushed_at = t
        at_surface = depth <= SURFACE_DEPTH_M
        k = len(self.reached)
        if self._holding():
            if not at_surface:
                self._surface_since = None
            elif self._surface_since is None:
                self._surface_since = t
            elif t - self._surface_since >= self.holds[k - 1]:
                self._held = True
            return
        if k >= len(self.points):
            return
        if k > 0 and self.depths[k - 1] > 0.0 and self.depths[k] == self.depths[k - 1]:
            self._leg_err.append(depth - self.depths[k])
        d = math.hypot(p[0] - self.points[k][0], p[1] - self.points[k][1])
        if d > self.radii[k]:
            return
        if self.depths[k] > 0.0 and abs(depth - self.depths[k]) <= DEPTH_TOLERANCE_M or \
                self.depths[k] <= 0.0 and at_surface:
            self.reached.append(t)
            self.depth_at.append(depth)
            self._held = False
            self._surface_since = t if at_surface else None

    def path(self) -> Tuple[np.ndarray, np.ndarray]:
        """(sim times [s], shape (N,); ENU positions [m], shape (N, 3)) of the samples."""
        return np.array(self.t), np.array(self.p).reshape(-1, 3)

    def plan(self) -> np.ndarray:
        """The planned path, ENU [m], shape (K + 1, 3): the start, then each item at its depth."""
        start = np.array(self.scenario.initial_position_enu, dtype=float)
        pts = [np.array([e, n, -d]) for (e, n), d in zip(self.points, self.depths)]
        return np.vstack([start[None, :]] + [p[None, :] for p in pts])

    def summary(self) -> dict:
        """Result, items reached (when, at what depth), the depth figures."""
        k = len(self.reached)
        depths = [-p[2] for p in self.p]
        err = np.array(self._leg_err)
        return {
            'result': 'complete' if self.done else
            'crushed' if self.crushed_at is not None else 'incomplete',
            'items': len(self.points), 'items_reached': k,
            'reached_at_s': [round(x, 2) for x in self.reached],
            'depth_at_reach_m': [round(x, 2) for x in self.depth_at],
            'max_depth_m': round(max(depths), 2) if depths else 0.0,
            'rated_depth_m': self.max_depth_rated,
            'depth_rms_error_at_depth_m': round(float(np.sqrt(np.mean(err ** 2))), 3)
            if len(err) else None,
            'sim_time_s': round(self.t[-1], 3) if self.t else 0.0,
        }


def auv_judge(member) -> AuvJudge:
    """The judge of an AUV of a world (KindEntry.judge)."""
    return AuvJudge(member.scenario)
