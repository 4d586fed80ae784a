"""A world's run judged vehicle by vehicle, each by its kind's judge, in one summary (pure).

A world (sim_world) flies vehicles of any kinds (sim_core.members.Member). Each vehicle is
judged on ground truth by the judge its kind registers (a JudgeFactory, looked up in the
`judges` mapping the caller gives: the kind registry's world_judge, sim_world.core.kinds):

- a multirotor: its mission as MissionJudge judges it (items within their acceptance radius
  and 1 m vertically, in order; a landing at rest with the motors stopped);
- a plane: its mission as PlaneJudge judges it (waypoints within the acceptance radius, at
  least 150 m, or abeam; a landing item as a runway landing): a circuit flown from an
  airborne start with no landing is complete at its last waypoint;
- a boat: its waypoints in order within their acceptance radii (boats.BoatWaypointJudge).

On top of each kind's verdict, what the world reports (/sim/collisions, the bridges' links):

- collided: the vehicle touched another vehicle, the ground or the water (each contact the
  world reports is a collision; the world reports a ground touchdown only when harder than a
  landing). Terminal: the vehicle is not judged further (its track is still drawn), and the
  run is not complete whatever its mission did;
- fc_refused: its MAVLink bridge says the FC will not fly (a parameter, the mission or arming
  refused); fc_lost: its FC was heard, then went silent. Terminal too.

A vehicle is over when its kind's judge is (mission complete, or a failure of its own, such
as a quad at rest away from its landing point) or one of the above happened; the run is
over when every vehicle is. Each vehicle's closest approach to any other (the distance
between their positions [m], centre to centre, from samples within same_time_s of each
other, the older moved to the newer's time by its velocity) is followed while both are
sampled.
"""

from dataclasses import dataclass, field
import math
from typing import Callable, Dict, List, Mapping, Optional, Protocol, Sequence, Tuple

import numpy as np

from sim_core.deck import DeckSpec, pad_pose
from sim_core.frames import q_enu_flu_to_ned_frd, quat_to_euler_ned
from sim_core.kinds import VehicleKind, info
from sim_core.members import Member
from sim_core.scenario import LANDING_COMMANDS, Scenario
from sim_dynamics.core.usv import BoatType
from sim_report.core.boats import BoatWaypointJudge
from sim_report.core.mission import MissionJudge
from sim_report.core.plane import KT, PlaneJudge, PlaneSample
from sim_viz.core import scene

Color = Tuple[float, float, float, float]
IDENTITY = scene.IDENTITY
ZOOM_SPAN_M = 400.0         # the plot's second top view frames the tracks smaller than this [m]


class VehicleJudge(Protocol):
    """What the world report needs of a kind's judge (one vehicle's mission, on truth)."""

    marker: str                     # the kind's marker on the world plot (matplotlib)
    color: Color                    # the kind's colour (sim_viz.core.scene's palette)

    @property
    def items(self) -> int:
        """Mission items to reach."""

    @property
    def reached_at_s(self) -> List[float]:
        """Sim time [s] each item was reached, in order."""

    @property
    def done(self) -> bool:
        """Every item reached: the mission is complete."""

    @property
    def over(self) -> bool:
        """Nothing more will happen: done, or a failure of the kind's own."""

    def wants_motors(self) -> bool:
        """The next sample needs motors_off (its motor commands are to be followed)."""

    def feed(self, t: float, p_enu: Sequence[float], v_enu: Sequence[float],
             q_enu_flu: Sequence[float] = IDENTITY, motors_off: bool = True) -> None:
        """One ground-truth sample.

        Sim time [s], ENU position [m], velocity [m/s], attitude (w, x, y, z: FLU into ENU),
        every motor command zero.
        """

    def path(self) -> Tuple[np.ndarray, np.ndarray]:
        """(sim times [s], shape (N,); ENU positions [m], shape (N, 3)) of the samples."""

    def plan(self) -> np.ndarray:
        """The planned path, ENU [m], shape (K + 1, 3): the start, then each item."""

    def summary(self) -> dict:
        """The kind's figures (JSON-ready), with result, items, items_reached, reached_at_s."""


JudgeFactory = Callable[[Member], VehicleJudge]


def _plan(scenario: Scenario, points) -> np.ndarray:
    start = np.array(scenario.initial_position_enu, dtype=float)
    return np.vstack([start[None, :]] + [np.asarray(p, dtype=float)[None, :] for p in points])


class MultirotorJudge:
    """A quad's mission: MissionJudge behind the VehicleJudge surface."""

    marker = 'o'
    color = scene.TEAMS[0]

    def __init__(self, scenario: Scenario):
        """The vehicle's scenario (start, mission)."""
        self.judge = MissionJudge(scenario)
        self._z = math.inf

    @property
    def items(self) -> int:
        """Mission items to reach."""
        return len(self.judge.points)

    @property
    def reached_at_s(self) -> List[float]:
        """Sim time [s] each item was reached."""
        return self.judge.reached

    @property
    def done(self) -> bool:
        """Every item reached (a landing: at rest, motors stopped)."""
        return self.judge.done

    @property
    def over(self) -> bool:
        """Done, or at rest for good away from the landing point."""
        return self.judge.over

    def wants_motors(self) -> bool:
        """A landing item is next and the vehicle is below 1 m (as flight_report watches)."""
        k = len(self.judge.reached)
        mission = self.judge.scenario.mission
        return k < len(mission) and self._z < 1.0 and mission[k].command in LANDING_COMMANDS

    def feed(self, t: float, p_enu: Sequence[float], v_enu: Sequence[float],
             q_enu_flu: Sequence[float] = IDENTITY, motors_off: bool = True) -> None:
        """One ground-truth sample (see VehicleJudge)."""
        self._z = float(p_enu[2])
        self.judge.add(t, p_enu, math.sqrt(sum(float(x) * float(x) for x in v_enu)),
                       motors_off)

    def path(self) -> Tuple[np.ndarray, np.ndarray]:
        """Sample times [s] and ENU positions [m]."""
        s = self.judge.samples
        return np.array([x.t for x in s]), np.array([x.p for x in s]).reshape(-1, 3)

    def plan(self) -> np.ndarray:
        """Start and items, ENU [m]."""
        return _plan(self.judge.scenario, self.judge.points)

    def summary(self) -> dict:
        """MissionJudge's figures (no wall time: the world's)."""
        s = self.judge.summary(0.0)
        for k in ('wall_time_s', 'real_time_factor'):
            s.pop(k)
        if self.judge.landed_outside:
            s['landed_outside'] = True
        return s


class PlaneMissionJudge:
    """A plane's mission: PlaneJudge behind the VehicleJudge surface.

    Odometry carries no air data: the airspeed is the true airspeed against the scenario's
    mean wind (|v_enu - wind_enu|, gusts and turbulence not known here); attitude and heading
    from the attitude quaternion.
    """

    marker = '>'
    color = scene.TEAMS[1]

    def __init__(self, scenario: Scenario):
        """The aircraft's scenario (start, mission, wind)."""
        self.judge = PlaneJudge(scenario)
        self.wind = np.array(scenario.environment.wind_enu, dtype=float)

    @property
    def items(self) -> int:
        """Mission items to fly."""
        return len(self.judge.points)

    @property
    def reached_at_s(self) -> List[float]:
        """Sim time [s] each item was flown."""
        return [f[1] for f in self.judge.flown]

    @property
    def done(self) -> bool:
        """Every item flown (a landing: touchdown, rollout on the runway, at rest)."""
        return self.judge.done

    @property
    def over(self) -> bool:
        """Done, or a landing judged and refused (at rest after a bad touchdown)."""
        v = self.judge.landing.get('verdict')
        return self.judge.done or (v is not None and v != 'landed')

    def wants_motors(self) -> bool:
        """The plane's judge needs no motor commands."""
        return False

    def feed(self, t: float, p_enu: Sequence[float], v_enu: Sequence[float],
             q_enu_flu: Sequence[float] = IDENTITY, motors_off: bool = True) -> None:
        """One ground-truth sample (see VehicleJudge and the class)."""
        v = np.asarray(v_enu, dtype=float)
        roll, pitch, yaw = quat_to_euler_ned(q_enu_flu_to_ned_frd(np.asarray(q_enu_flu,
                                                                             dtype=float)))
        self.judge.add(PlaneSample(float(t), tuple(float(x) for x in p_enu),
                                   float(np.linalg.norm(v - self.wind)) / KT,
                                   math.degrees(roll), math.degrees(pitch),
                                   math.degrees(yaw) % 360.0, float(v[2])))

    def path(self) -> Tuple[np.ndarray, np.ndarray]:
        """Sample times [s] and ENU positions [m]."""
        s = self.judge.samples
        return np.array([x.t for x in s]), np.array([x.p for x in s]).reshape(-1, 3)

    def plan(self) -> np.ndarray:
        """Start and items, ENU [m]."""
        return _plan(self.judge.scenario, self.judge.points)

    def summary(self) -> dict:
        """PlaneJudge's figures, with items_reached and reached_at_s."""
        s = self.judge.summary()
        s.pop('vehicle')
        s.pop('scenario')
        s['items_reached'] = len(self.judge.flown)
        s['reached_at_s'] = self.reached_at_s
        return s


def multirotor_judge(member: Member) -> VehicleJudge:
    """The judge of a multirotor member."""
    return MultirotorJudge(member.scenario)


def plane_judge(member: Member) -> VehicleJudge:
    """The judge of a plane member."""
    return PlaneMissionJudge(member.scenario)


def boat_judge(member: Member) -> VehicleJudge:
    """The judge of a boat member."""
    return BoatWaypointJudge(member.scenario)


@dataclass
class Entry:
    """One vehicle of the world: its judge and what the world reported about it."""

    member: Member
    judge: VehicleJudge
    collisions: List[dict] = field(default_factory=list)
    fc_lost_at: Optional[float] = None        # sim time [s] its FC was found gone
    fc_failure: str = ''                      # why its FC will not fly (its bridge's words)
    closest: Optional[dict] = None            # {'distance_m', 'with', 't_s'}
    tail: List[Tuple[float, Tuple[float, float, float]]] = field(default_factory=list)
    deck: Optional[DeckSpec] = None           # a boat's landing deck
    pad_track: List[Tuple[float, float]] = field(default_factory=list)   # its pad, ENU (e, n)
    last: Optional[Tuple[float, np.ndarray, np.ndarray]] = None   # t [s], ENU [m], [m/s]

    @property
    def over(self) -> bool:
        """Nothing more will be judged for this vehicle."""
        return self.judge.over or bool(self.collisions) or self.fc_lost_at is not None \
            or bool(self.fc_failure)

    @property
    def result(self) -> str:
        """collided, complete, fc_refused, fc_lost or the kind's own (incomplete)."""
        if self.collisions:
            return 'collided'
        if self.judge.done:
            return 'complete'
        if self.fc_failure:
            return 'fc_refused'
        if self.fc_lost_at is not None:
            return 'fc_lost'
        return str(self.judge.summary().get('result', 'incomplete'))


class WorldJudge:
    """Every vehicle of a world judged by its kind's judge; collisions and FC losses noted."""

    def __init__(self, members: Sequence[Member], judges: Mapping[VehicleKind, JudgeFactory],
                 same_time_s: float = 0.1):
        """members: the world's (sim_core.members.world_members); judges: a factory per kind.

        same_time_s: two vehicles' samples this close in sim time [s] are compared for the
        closest approach (the sampling period). ValueError for a kind without a judge.
        """
        missing = sorted({m.kind.value for m in members} - {k.value for k in judges})
        if missing:
            raise ValueError(f'no judge for the kind(s) {", ".join(missing)}')
        self.entries = [Entry(m, judges[m.kind](m)) for m in members]
        for e in self.entries:
            if e.member.kind == VehicleKind.BOAT:
                e.deck = BoatType.from_yaml(e.member.scenario.vehicle_file).deck
        self.names = [m.name for m in members]
        self.same_time_s = same_time_s
        self.t = 0.0                 # the latest sim time seen [s]

    def index(self, name: str) -> int:
        """The index of the vehicle named name (without '/'); ValueError if none."""
        return self.names.index(name)

    def feed(self, i: int, t: float, p_enu: Sequence[float], v_enu: Sequence[float],
             q_enu_flu: Sequence[float] = IDENTITY, motors_off: bool = True) -> int:
        """A ground-truth sample of vehicle i (see VehicleJudge.feed); its items reached."""
        e = self.entries[i]
        p = (float(p_enu[0]), float(p_enu[1]), float(p_enu[2]))
        self.t = max(self.t, float(t))
        if e.over:
            e.tail.append((float(t), p))          # drawn, not judged
        else:
            e.judge.feed(t, p, v_enu, q_enu_flu, motors_off)
        e.last = (float(t), np.array(p), np.array([float(x) for x in v_enu[:3]]))
        if e.deck is not None:
            pad = pad_pose(e.deck, p, v_enu, q_enu_flu, (0.0, 0.0, 0.0)).p_enu
            e.pad_track.append((float(pad[0]), float(pad[1])))
        for j, o in enumerate(self.entries):
            if j != i and o.last is not None and abs(o.last[0] - t) <= self.same_time_s:
                # the other's position at t, from its latest sample and velocity
                d = float(np.linalg.norm(e.last[1] - o.last[1] - o.last[2] * (t - o.last[0])))
                for a, b in ((e, o), (o, e)):
                    if a.closest is None or d < a.closest['distance_m']:
                        a.closest = {'distance_m': round(d, 2), 'with': b.member.name,
                                     't_s': round(float(t), 2)}
        return len(e.judge.reached_at_s)

    def contact(self, t: float, vehicle: str, other: str, speed: float) -> List[str]:
        """A Collision message (vehicle, other: a vehicle, 'ground' or 'water'); who collided.

        Noted for each of its names that is a vehicle of the world.
        """
        hit = []
        for name, with_ in ((vehicle, other), (other, vehicle)):
            if name in self.names:
                self.entries[self.index(name)].collisions.append(
                    {'t_s': round(float(t), 3), 'with': with_, 'speed_mps': round(speed, 2)})
                hit.append(name)
        return hit

    def deck_event(self, t: float, vehicle: str, deck: str, what: str, normal_speed: float,
                   pad_xy: Tuple[float, float]) -> None:
        """A DeckContact message: to the vehicle's judge if its kind lands on decks."""
        if vehicle not in self.names:
            return
        e = self.entries[self.index(vehicle)]
        if info(e.member.kind).lands_on_decks and isinstance(e.judge, MultirotorJudge):
            e.judge.judge.deck_event(t, deck, what, normal_speed, pad_xy)

    def fc_lost(self, i: int, t: float) -> bool:
        """Vehicle i's FC is gone at sim time t [s]; True the first time it counts."""
        e = self.entries[i]
        if e.over:
            return False
        e.fc_lost_at = float(t)
        return True

    def fc_refused(self, i: int, why: str) -> bool:
        """Vehicle i's FC will not fly (its bridge's words); True the first time it counts."""
        e = self.entries[i]
        if e.over:
            return False
        e.fc_failure = why
        return True

    @property
    def over(self) -> bool:
        """Every vehicle is over."""
        return all(e.over for e in self.entries)

    @property
    def done(self) -> bool:
        """Every vehicle complete."""
        return all(e.result == 'complete' for e in self.entries)

    def row(self, e: Entry) -> dict:
        """One vehicle's row of the summary."""
        s = e.judge.summary()
        return {
            'name': e.member.name, 'kind': e.member.kind.value,
            'controller': e.member.controller, 'result': e.result,
            'items': e.judge.items, 'items_reached': len(e.judge.reached_at_s),
            'reached_at_s': [round(x, 2) for x in e.judge.reached_at_s],
            'collisions': e.collisions, 'closest_approach': e.closest,
            'fc_lost_at_s': e.fc_lost_at,
            **({'fc_failure': e.fc_failure} if e.fc_failure else {}),
            'details': {k: v for k, v in s.items()
                        if k not in ('result', 'items', 'items_reached', 'reached_at_s')},
        }

    def summary(self, wall_s: float) -> dict:
        """The run's result and a row per vehicle (JSON-ready)."""
        rows = {e.member.name: self.row(e) for e in self.entries}
        results = [r['result'] for r in rows.values()]
        complete = results.count('complete')
        result = 'complete' if complete == len(results) else \
            'collided' if 'collided' in results else 'incomplete'
        return {
            'result': result, 'vehicles_complete': complete, 'vehicle_count': len(results),
            'collided': [n for n, r in rows.items() if r['result'] == 'collided'],
            'sim_time_s': round(self.t, 3), 'wall_time_s': round(wall_s, 3),
            'real_time_factor': round(self.t / wall_s, 2) if wall_s > 0 else None,
            'vehicles': rows,
        }

    def plot(self, path: str, title: str) -> None:
        """Write a PNG of the world's run.

        Every track (top view, the kind's marker and colour) over its plan, a close-up of the
        small tracks, altitude over time, and the results.
        """
        import matplotlib
        matplotlib.use('Agg')
        import matplotlib.pyplot as plt
        fig, axes = plt.subplots(1, 4, figsize=(22, 6.5),
                                 gridspec_kw={'width_ratios': [1.2, 1.2, 1.0, 0.9]})
        top, zoom, alt, txt = axes
        styles = ('-', '--', ':', '-.')
        counts: Dict[VehicleKind, int] = {}
        small: List[np.ndarray] = []
        lines = []
        for e in self.entries:
            j, m = e.judge, e.member
            k = counts.get(m.kind, 0)
            counts[m.kind] = k + 1
            c, ls = j.color[:3], styles[k % len(styles)]
            ts, P = j.path()
            if e.tail:
                ts = np.concatenate([ts, [x[0] for x in e.tail]])
                P = np.vstack([P, np.array([x[1] for x in e.tail])])
            plan = j.plan()
            for ax in (top, zoom):
                ax.plot(plan[:, 0], plan[:, 1], ls=':', color=c, lw=0.8, alpha=0.7)
                ax.plot(plan[1:, 0], plan[1:, 1], 'o', mfc='none', mec=c, ms=5)
                ax.plot(P[:, 0], P[:, 1], ls=ls, color=c, lw=1.5,
                        label=f'{m.name} ({m.kind.value})')
                ax.plot(plan[0, 0], plan[0, 1], j.marker, mfc='none', mec=c, ms=9)
                if len(P):
                    ax.plot(P[-1, 0], P[-1, 1], j.marker, color=c, ms=9)
                td = e.judge.summary().get('deck_landing')
                if td and len(ts):
                    q = P[min(int(np.searchsorted(ts, td['t_s'])), len(P) - 1)]
                    ax.plot(q[0], q[1], '*', color='k', ms=12,
                            label=f"{m.name} touchdown on {td['deck']}: "
                                  f"{td['pad_error_m']:.2f} m from the pad")
                for x in e.collisions:
                    i = int(np.searchsorted(ts, x['t_s'])) if len(ts) else 0
                    if len(P):
                        q = P[min(i, len(P) - 1)]
                        ax.plot(q[0], q[1], 'x', color='k', ms=11, mew=2)
            if e.pad_track:
                track = np.array(e.pad_track)
                for ax in (top, zoom):
                    ax.plot(track[:, 0], track[:, 1], ls='--', color=(0.95, 0.55, 0.10), lw=1.0,
                            label=f'{m.name} deck pad')
            pts = np.vstack([P[:, :2], plan[:, :2]])
            if float(np.max(np.ptp(pts, axis=0))) < ZOOM_SPAN_M:
                small.append(pts)
            alt.plot(ts, P[:, 2] if len(P) else ts, ls=ls, color=c, label=m.name)
            for tr in j.reached_at_s:
                alt.axvline(tr, color=c, lw=0.5, alpha=0.5)
            r = self.row(e)
            ca = r['closest_approach']
            lines.append(f'{m.name} ({m.kind.value}, {m.controller}): {r["result"]}, '
                         f'{r["items_reached"]}/{r["items"]} items'
                         + (f'\n  closest {ca["distance_m"]:.1f} m to {ca["with"]} at '
                            f'{ca["t_s"]:.1f} s' if ca else '')
                         + (f'\n  FC lost at {e.fc_lost_at:.1f} s'
                            if e.fc_lost_at is not None else '')
                         + (f'\n  FC refused: {e.fc_failure[:50]}' if e.fc_failure else '')
                         + ''.join(f'\n  collision with {x["with"]} at {x["t_s"]:.1f} s, '
                                   f'{x["speed_mps"]:.1f} m/s' for x in e.collisions))
        for ax, name in ((top, 'top view: every track (truth) over its plan (dotted); '
                          'x: collision'),
                         (zoom, f'close-up: the tracks within {ZOOM_SPAN_M:g} m')):
            ax.set_xlabel('east [m]')
            ax.set_ylabel('north [m]')
            ax.set_aspect('equal', adjustable='box' if ax is zoom and small else 'datalim')
            ax.grid(True, alpha=0.3)
            ax.set_title(name, fontsize=10)
        top.legend(loc='best', fontsize=8)
        if small:
            pts = np.vstack(small)
            lo, hi = pts.min(axis=0), pts.max(axis=0)
            pad = max(5.0, 0.1 * float(np.max(hi - lo)))
            zoom.set_xlim(lo[0] - pad, hi[0] + pad)
            zoom.set_ylim(lo[1] - pad, hi[1] + pad)
        alt.set_xlabel('sim time [s]')
        alt.set_ylabel('up [m]')
        alt.grid(True, alpha=0.3)
        alt.legend(loc='best', fontsize=8)
        alt.set_title('height; items reached: thin lines', fontsize=10)
        txt.axis('off')
        txt.text(0.0, 1.0, '\n'.join(lines), va='top', family='monospace', fontsize=8)
        s = self.summary(0.0)
        fig.suptitle(f'{title}: {s["result"]}, {s["vehicles_complete"]}/{s["vehicle_count"]} '
                     'vehicles complete' + (f'; collided: {", ".join(s["collided"])}'
                                            if s['collided'] else ''))
        fig.tight_layout()
        fig.savefig(path, dpi=80)
        plt.close(fig)
