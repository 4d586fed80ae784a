"""A fleet's flight judged vehicle by vehicle on ground truth, and plotted together (pure).

Each vehicle has its MissionJudge (its own start and mission). A vehicle is over when its
mission is done, when it came to rest on the ground for good away from its target, when its
flight controller was lost (a crashed or killed FC: the vehicle flies on the last command, it
is not judged further), when its FC will not fly (its bridge says why: a parameter or
arming refused), when it touched another vehicle (`collided`, whatever it flies after: its
mission is not complete), or when it rests on the ground CRASH_REST_S after a hard ground
impact (`crashed`). The fleet is over when every vehicle is; its result is complete only if
every vehicle's is.

The closest approach of any two vehicles (distance, sim time, pair) is measured on the same
ground-truth samples: each sample against the other vehicles' positions at its time
(interpolated between their two latest samples, or their latest if it is at most
APPROACH_SKEW_S away), so to within the sample period's motion.
"""

from dataclasses import dataclass, field
import math
from typing import Dict, List, Optional, Sequence, Tuple

from sim_core.scenario import Scenario
from sim_report.core.mission import GROUND_Z_M, REST_SPEED, MissionJudge, Sample, pyplot

CRASH_REST_S = 5.0      # s at rest on the ground after a collision: the vehicle is down
APPROACH_SKEW_S = 0.1   # s: another vehicle's latest sample this close in time stands for now
GROUND = 'ground'       # the `other` of a ground impact (sim_dynamics.core.collision)


@dataclass
class Member:
    """One vehicle of the fleet: its judge and what happened to it."""

    name: str
    judge: MissionJudge
    fc_lost_at: Optional[float] = None        # sim time [s] its FC was found gone
    collisions: List[dict] = field(default_factory=list)
    down_at: Optional[float] = None           # sim time [s] it was found down after a collision
    fc_failure: str = ''                      # why its FC will not fly (its bridge's words)
    collided_at: Optional[float] = None       # sim time [s] it first touched another vehicle
    _rest_since: Optional[float] = None

    @property
    def over(self) -> bool:
        """Nothing more will be judged for this vehicle."""
        return self.judge.over or self.fc_lost_at is not None or self.down_at is not None \
            or bool(self.fc_failure) or self.collided_at is not None

    @property
    def result(self) -> str:
        """collided, complete, fc_refused, fc_lost, crashed or incomplete."""
        if self.collided_at is not None:
            return 'collided'
        if self.judge.done:
            return 'complete'
        if self.fc_failure:
            return 'fc_refused'
        if self.fc_lost_at is not None:
            return 'fc_lost'
        if self.down_at is not None:
            return 'crashed'
        return 'incomplete'


class FleetJudge:
    """The missions of every vehicle, judged on ground truth."""

    def __init__(self, names: Sequence[str], scenarios: Sequence[Scenario]):
        """names: the vehicles' namespaces; scenarios: each as it sees the world."""
        self.members = [Member(n, MissionJudge(s)) for n, s in zip(names, scenarios)]
        # each vehicle's two latest samples (t [s], ENU [m]) for the closest approach
        self._last: Dict[int, List[Tuple[float, tuple]]] = {}
        self.closest: Optional[Tuple[float, float, int, int]] = None   # (m, s, i, j), i < j

    def add(self, i: int, t: float, p, speed: float, motors_off: bool = True) -> int:
        """A ground-truth sample of vehicle i; returns how many of its items are reached."""
        self._approach(i, t, tuple(float(x) for x in p))
        m = self.members[i]
        if not m.over:
            m.judge.add(t, p, speed, motors_off)
            if m.collisions and p[2] < GROUND_Z_M and speed < REST_SPEED:
                m._rest_since = t if m._rest_since is None else m._rest_since
                if t - m._rest_since >= CRASH_REST_S:
                    m.down_at = t
            else:
                m._rest_since = None
        else:
            m.judge.samples.append(Sample(t, tuple(p), speed))     # the plot goes on
        return len(m.judge.reached)

    def _approach(self, i: int, t: float, p: tuple) -> None:
        """Vehicle i at p at sim time t: against every other vehicle's position then."""
        for j, hist in self._last.items():
            if j == i:
                continue
            q = _position_at(hist, t)
            if q is None:
                continue
            d = math.dist(p, q)
            if self.closest is None or d < self.closest[0]:
                self.closest = (d, t, min(i, j), max(i, j))
        hist = self._last.setdefault(i, [])
        hist.append((t, p))
        if len(hist) > 2:
            del hist[0]

    def fc_lost(self, i: int, t: float) -> bool:
        """Vehicle i's flight controller is gone at sim time t; True the first time."""
        m = self.members[i]
        if m.fc_lost_at is not None or m.judge.done:
            return False
        m.fc_lost_at = t
        return True

    def collision(self, i: int, t: float, other: str, speed: float) -> None:
        """Vehicle i touched other (a vehicle's name, or 'ground') at speed [m/s].

        Another vehicle: i has collided (over, not complete), unless its mission was complete
        already (landed and disarmed: something ran into it; the other one collided).
        """
        m = self.members[i]
        m.collisions.append({'t_s': round(t, 3), 'with': other, 'speed_mps': round(speed, 2)})
        if other != GROUND and m.collided_at is None and not m.judge.done:
            m.collided_at = t

    def contact(self, t: float, vehicle: str, other: str, speed: float) -> None:
        """A Collision message's contact: noted for each of its vehicles in the fleet."""
        names = [m.name for m in self.members]
        for name, with_ in ((vehicle, other), (other, vehicle)):
            if name in names:
                self.collision(names.index(name), t, with_, speed)

    @property
    def over(self) -> bool:
        """Every vehicle is over."""
        return all(m.over for m in self.members)

    @property
    def done(self) -> bool:
        """Every mission complete (none collided)."""
        return all(m.result == 'complete' for m in self.members)

    def closest_approach(self) -> Optional[dict]:
        """The closest two vehicles came: distance [m], sim time [s], their names; None yet."""
        if self.closest is None:
            return None
        d, t, i, j = self.closest
        return {'distance_m': round(d, 3), 't_s': round(t, 3),
                'vehicles': [self.members[i].name, self.members[j].name]}

    def summary(self, wall_s: float) -> dict:
        """The fleet's result and each vehicle's summary (MissionJudge's, and its events)."""
        vehicles = {}
        for m in self.members:
            s = m.judge.summary(wall_s)
            s.update(result=m.result, fc_lost_at_s=m.fc_lost_at, collisions=m.collisions,
                     collided_at_s=m.collided_at,
                     **({'fc_failure': m.fc_failure} if m.fc_failure else {}))
            vehicles[m.name] = s
        t = max((v['sim_time_s'] for v in vehicles.values()), default=0.0)
        return {
            'result': 'complete' if self.done else 'incomplete',
            'vehicles_complete': sum(m.result == 'complete' for m in self.members),
            'vehicles_collided': sum(m.collided_at is not None for m in self.members),
            'vehicle_count': len(self.members),
            'closest_approach': self.closest_approach(),
            'sim_time_s': round(t, 3), 'wall_time_s': round(wall_s, 3),
            'real_time_factor': round(t / wall_s, 2) if wall_s > 0 else None,
            'vehicles': vehicles,
        }

    def plot(self, path: str, title: str) -> None:
        """Write a PNG: every track over its plan (top view), altitudes, and the results."""
        import numpy as np
        plt = pyplot()
        fig, axes = plt.subplots(1, 3, figsize=(16, 6),
                                 gridspec_kw={'width_ratios': [1.2, 1.2, 0.8]})
        top, alt, txt = axes
        lines = []
        for k, m in enumerate(self.members):
            c = f'C{k % 10}'
            j = m.judge
            start = np.array(j.scenario.initial_position_enu, dtype=float)
            plan = np.vstack([start[None, :]] + [p[None, :] for p in j.points])
            P = np.array([x.p for x in j.samples]) if j.samples else np.zeros((0, 3))
            ts = np.array([x.t for x in j.samples])
            top.plot(plan[:, 0], plan[:, 1], '--', color=c, lw=0.8)
            top.plot(P[:, 0], P[:, 1], color=c, lw=1.5, label=m.name)
            top.plot(start[0], start[1], 's', color=c)
            for e in m.collisions:
                i = int(np.searchsorted(ts, e['t_s'])) if len(ts) else 0
                if len(P):
                    q = P[min(i, len(P) - 1)]
                    top.plot(q[0], q[1], 'x', color='k', ms=10, mew=2)
            alt.plot(ts, P[:, 2] if len(P) else ts, color=c, label=m.name)
            for tr in j.reached:
                alt.axvline(tr, color=c, lw=0.5, alpha=0.5)
            s = j.summary(0.0)
            lines.append(f'{m.name}: {m.result}, {s["items_reached"]}/{s["items"]} items'
                         + (f'\n  FC lost at {m.fc_lost_at:.1f} s' if m.fc_lost_at else '')
                         + (f'\n  FC refused: {m.fc_failure[:60]}' if m.fc_failure else '')
                         + ''.join(f'\n  collision with {e["with"]} at {e["t_s"]:.1f} s, '
                                   f'{e["speed_mps"]:.1f} m/s' for e in m.collisions)
                         + f'\n  max tracking error {s["max_tracking_error_m"]:.2f} m')
        top.set_xlabel('east [m]')
        top.set_ylabel('north [m]')
        top.set_aspect('equal', adjustable='datalim')
        top.grid(True, alpha=0.3)
        top.legend(loc='best', fontsize=8)
        top.set_title('top view: flown (truth) over planned (dashed); x: collision')
        alt.set_xlabel('sim time [s]')
        alt.set_ylabel('altitude [m]')
        alt.grid(True, alpha=0.3)
        alt.set_title('altitude; items reached: thin lines')
        ca = self.closest_approach()
        if ca is not None and self.closest is not None:
            _, t_ca, a, b = self.closest
            for k in (a, b):
                after = [x for x in self.members[k].judge.samples if x.t >= t_ca]
                if after:
                    top.plot(after[0].p[0], after[0].p[1], 'o', mfc='none', color='k', ms=9)
            lines.append(f'closest approach {ca["distance_m"]:.2f} m at {ca["t_s"]:.1f} s: '
                         f'{ca["vehicles"][0]} and {ca["vehicles"][1]} (circles)')
        txt.axis('off')
        txt.text(0.0, 1.0, '\n'.join(lines), va='top', family='monospace', fontsize=9)
        done = sum(m.result == 'complete' for m in self.members)
        fig.suptitle(f'{title}: {done}/{len(self.members)} missions complete')
        fig.tight_layout()
        fig.savefig(path, dpi=80)
        plt.close(fig)


def _position_at(hist: List[Tuple[float, tuple]], t: float) -> Optional[tuple]:
    """A vehicle's position at sim time t from its latest samples (hist, oldest first).

    Interpolated between the two if t lies between them, the latest if at most APPROACH_SKEW_S
    from t, else None (no sample near enough in time).
    """
    if len(hist) == 2:
        (t0, p0), (t1, p1) = hist
        if t0 <= t <= t1 and t1 > t0:
            s = (t - t0) / (t1 - t0)
            return tuple(a + s * (b - a) for a, b in zip(p0, p1))
    t1, p1 = hist[-1]
    return p1 if abs(t - t1) <= APPROACH_SKEW_S else None
