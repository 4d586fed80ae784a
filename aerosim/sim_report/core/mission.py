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
import threading
from typing import Dict, List, Optional, Tuple

import numpy as np

from sim_core.scenario import LANDING_COMMANDS, Scenario
from sim_core.units import clamp

ALT_TOL_M = 1.0
GROUND_Z_M = 0.05
REST_SPEED = 0.1
# A landing on a deck (a land item's `deck:`), judged on the world's touchdown events
# (/sim/deck_contacts): within DECK_PAD_M of the pad's centre, slower than DECK_SPEED_MPS toward
# the deck, and still on it DECK_STAY_S later (sim time).
DECK_PAD_M = 0.5
DECK_SPEED_MPS = 1.0
DECK_STAY_S = 10.0


def pyplot():
    """matplotlib.pyplot on the headless Agg backend: every report's plot draws through it."""
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt
    return plt


def preload_plotting() -> threading.Thread:
    """Import matplotlib (Agg) in a background thread, started now.

    Its first import on a fresh machine builds the font cache (seconds): paid while the run
    goes on, not in the writer's grace period after SIGINT.
    """
    t = threading.Thread(target=pyplot, name='preload-matplotlib', daemon=True)
    t.start()
    return t


@dataclass
class Sample:
    """One ground-truth sample: sim time [s], ENU position [m], speed [m/s]."""

    t: float
    p: tuple
    speed: float
    track_err: float = math.nan      # horizontal distance from the planned path (airborne) [m]


def item_points(scenario: Scenario) -> List[np.ndarray]:
    """ENU position of each mission item (takeoff: above the start position).

    Altitudes are relative to home, the start (MAVLink's GLOBAL_RELATIVE_ALT): a start above
    z = 0 (a boat's deck) lifts them by its height; a landing is at z = 0 (a deck's: judged on
    its touchdown events, MissionJudge.deck_event).
    """
    o = scenario.origin
    pts = []
    prev = np.array(scenario.initial_position_enu, dtype=float)
    home_z = float(prev[2])
    for it in scenario.mission:
        if it.command == 'takeoff':
            p = np.array([prev[0], prev[1], it.alt_m + home_z])
        elif it.command == 'rtl':
            p = np.array([scenario.initial_position_enu[0], scenario.initial_position_enu[1],
                          0.0])
        else:
            e, n, _ = o.geodetic_to_enu(it.lat_deg, it.lon_deg, o.alt_m)
            p = np.array([e, n, 0.0 if it.command == 'land' else it.alt_m + home_z])
        pts.append(p)
        prev = p
    return pts


def _dist_to_polyline(xy, poly) -> float:
    best = math.inf
    for a, b in zip(poly[:-1], poly[1:]):
        ab = b - a
        L2 = float(ab @ ab)
        s = 0.0 if L2 == 0.0 else clamp(float((xy - a) @ ab) / L2, 0.0, 1.0)
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
    deck_landing: Optional[dict] = None     # the touchdown on a deck judged (deck items)
    deck_failed: str = ''                   # why a deck landing failed
    _deck_hardest: float = 0.0              # the hardest touchdown on the deck so far [m/s]

    def __post_init__(self):
        """Place the items."""
        self.points = item_points(self.scenario)
        start = np.array(self.scenario.initial_position_enu, dtype=float)
        self.poly = [start[0:2]] + [p[0:2] for p in self.points]

    @property
    def over(self) -> bool:
        """Nothing more will happen: mission done, or landed for good outside the target."""
        return self.done or self.landed_outside or bool(self.deck_failed)

    def _deck_item(self) -> str:
        """The deck the next item lands on ('' if it is not a landing on a deck)."""
        k = len(self.reached)
        return self.scenario.mission[k].deck if k < len(self.points) else ''

    def deck_event(self, t: float, deck: str, what: str, normal_speed: float,
                   pad_xy: Tuple[float, float]) -> None:
        """A touchdown on / lift-off from / slide off a deck (DeckContact), at sim time t [s].

        While a landing on a deck is next: a touchdown on its deck is judged (a touchdown
        on another deck, or harder than DECK_SPEED_MPS, fails the item); a lift-off or a slide
        off before DECK_STAY_S cancels it (the next touchdown is judged).
        """
        want = self._deck_item()
        if not want or self.deck_failed:
            return
        if what != 'touchdown':
            self.deck_landing = None
            return
        err = math.hypot(pad_xy[0], pad_xy[1])
        self._deck_hardest = max(self._deck_hardest, normal_speed)
        self.deck_landing = {'deck': deck, 't_s': round(t, 3), 'pad_error_m': round(err, 3),
                             'pad_xy_m': [round(pad_xy[0], 3), round(pad_xy[1], 3)],
                             'normal_speed_mps': round(normal_speed, 3),
                             'hardest_touchdown_mps': round(self._deck_hardest, 3)}
        if deck != want:
            self.deck_failed = f'touched down on the deck of {deck}, not {want}'
        elif normal_speed >= DECK_SPEED_MPS:
            self.deck_failed = (f'touched down at {normal_speed:.2f} m/s toward the deck '
                                f'(at most {DECK_SPEED_MPS:g})')

    @property
    def done(self) -> bool:
        """All items reached (the last one resting on the ground if it is a landing)."""
        return len(self.reached) == len(self.points)

    def add(self, t: float, p, speed: float, motors_off: bool = True) -> None:
        """Feed one ground-truth sample (ENU [m], speed [m/s], all motor commands zero)."""
        p = np.asarray(p, dtype=float)
        err = _dist_to_polyline(p[0:2], self.poly) if p[2] > 0.5 else math.nan
        self.samples.append(Sample(t, tuple(p), speed, err))
        if p[2] > 0.5:
            self.max_track_err = max(self.max_track_err, err)
        k = len(self.reached)
        if k >= len(self.points):
            return
        it = self.scenario.mission[k]
        tgt = self.points[k]
        if it.deck:                 # on a deck: the touchdown events judge it (deck_event)
            td = self.deck_landing
            if td is not None and not self.deck_failed and t - td['t_s'] >= DECK_STAY_S:
                if td['pad_error_m'] <= DECK_PAD_M:
                    td['on_deck_after_s'] = DECK_STAY_S
                    self.reached.append(t)
                else:
                    self.deck_failed = (f"touched down {td['pad_error_m']:.2f} m from the pad "
                                        f'centre (at most {DECK_PAD_M:g})')
            return
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
        landing = self.landing_error()
        return {
            'result': 'complete' if self.done else 'incomplete',
            'items_reached': len(self.reached), 'items': len(self.points),
            'reached_at_s': [round(x, 2) for x in self.reached],
            'max_tracking_error_m': round(self.max_track_err, 3),
            'landing_error_m': None if landing is None else round(landing, 3),
            **({'deck_landing': self.deck_landing} if self.deck_landing else {}),
            **({'deck_failed': self.deck_failed} if self.deck_failed else {}),
            'sim_time_s': round(t, 3), 'wall_time_s': round(wall_s, 3),
            'real_time_factor': round(t / wall_s, 2) if wall_s > 0 else None,
        }

    def plot(self, path: str, title: str) -> None:
        """Write a PNG of the flight.

        Top and side views (flown vs planned), altitude, speed and tracking error over time
        (items reached marked), and the figures.
        """
        plt = pyplot()
        s = self.samples
        ts = np.array([x.t for x in s])
        P = np.array([x.p for x in s]) if s else np.zeros((0, 3))
        v = np.array([x.speed for x in s])
        err = np.array([x.track_err for x in s])
        pts = np.array(self.points) if self.points else np.zeros((0, 3))
        start = np.array(self.scenario.initial_position_enu, dtype=float)
        plan = np.vstack([start[None, :], pts])
        fig, axes = plt.subplots(2, 3, figsize=(15, 8))
        for ax, (i, j, xl, yl, name) in zip(axes[:, 0], ((0, 1, 'east [m]', 'north [m]',
                                                           'top view'),
                                                          (0, 2, 'east [m]', 'up [m]',
                                                           'side view (looking north)'))):
            ax.plot(plan[:, i], plan[:, j], 'k--', lw=1, label='planned')
            ax.plot(P[:, i], P[:, j], 'C0', lw=1.5, label='flown (truth)')
            labels: Dict[Tuple[float, float], List[str]] = {}  # items at one place: one label
            for k, p in enumerate(pts):
                ok = k < len(self.reached)
                ax.plot(p[i], p[j], 'o', ms=9, mfc='C2' if ok else 'none',
                        mec='C2' if ok else 'C3')
                key = (round(p[i] * 2) / 2, round(p[j] * 2) / 2)
                labels.setdefault(key, []).append(f'{k} {self.scenario.mission[k].command}')
            for (x, y), texts in labels.items():
                ax.annotate(', '.join(texts), (x, y), textcoords='offset points',
                            xytext=(6, 6), fontsize=9)
            ax.set_xlabel(xl)
            ax.set_ylabel(yl)
            ax.set_aspect('equal', adjustable='datalim')
            ax.grid(True, alpha=0.3)
            ax.legend(loc='best', fontsize=8)
            ax.set_title(name)
        series = ((axes[0, 1], P[:, 2] if len(P) else P, 'altitude [m]', 'C0'),
                  (axes[1, 1], v, 'speed [m/s]', 'C1'),
                  (axes[0, 2], err, 'tracking error [m] (airborne)', 'C3'))
        for ax, ys, name, c in series:
            ax.plot(ts, ys, c)
            for tr in self.reached:
                ax.axvline(tr, color='C2', lw=0.8, alpha=0.6)
            ax.set_ylabel(name)
            ax.set_xlabel('sim time [s]')
            ax.grid(True, alpha=0.3)
        axes[0, 1].set_title('items reached: green lines')
        axes[1, 2].axis('off')
        sm = self.summary(0.0)
        land = sm['landing_error_m']
        reached = '\n'.join(f'  {k} {self.scenario.mission[k].command:9s} at {x:6.1f} s'
                             for k, x in enumerate(self.reached)) or '  none'
        axes[1, 2].text(0.0, 1.0, f'mission: {sm["result"]}\nitems reached: '
                        f'{sm["items_reached"]}/{sm["items"]}\n{reached}\nmax tracking '
                        f'error: {sm["max_tracking_error_m"]:.2f} m\nlanding error: '
                        f'{"-" if land is None else f"{land:.2f} m"}\nsim time: '
                        f'{sm["sim_time_s"]:.1f} s', va='top', family='monospace', fontsize=10)
        fig.suptitle(f'{title}: mission {sm["result"]} ({sm["items_reached"]}/{sm["items"]} '
                     f'items), max tracking error {sm["max_tracking_error_m"]:.2f} m')
        fig.tight_layout()
        fig.savefig(path, dpi=80)
        plt.close(fig)
