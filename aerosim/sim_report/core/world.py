"""A world's run judged vehicle by vehicle, each by its kind's judge, in one summary (pure).

A world (sim_world) flies vehicles of any kinds (sim_core.members.Member). Each vehicle is
judged on ground truth by the judge its kind brings (a JudgeFactory, looked up in the `judges`
mapping the caller gives: each kind's KindEntry.judge, kinds/<name>/judge.py, behind the
surface of sim_report.core.vehicle_judge; the figure in world_plot). A vehicle that carries a
deck (its model's ``deck``, given by the caller) has its pad's track drawn; the deck events
go to the judge of a vehicle whose kind lands on decks (a DeckJudge).

On top of each kind's verdict, what the world reports (/sim/collisions, the bridges' links):

- collided: the vehicle touched another vehicle, the ground or the water (each contact the
  world reports is a collision; the world reports a ground touchdown only when harder than a
  landing). Terminal: the vehicle is not judged further (its track is still drawn), and the
  run is not complete whatever its mission did;
- fc_refused: its MAVLink bridge says the FC will not fly (a parameter, the mission or arming
  refused); fc_lost: its FC was heard, then went silent; no_command: its controller never
  commanded it (a vehicle flown by any ROS node on its effector_command topic: nothing came
  within the judge's command_timeout_s of sim). Terminal too.

A vehicle without a mission is not judged (no_mission: over from the start, never complete).
A vehicle is over when its kind's judge is (mission complete, or a failure of its own, such
as a quad at rest away from its landing point) or one of the above happened; the run is
over when every vehicle is. Its result: complete when every vehicle with a mission is
(and one has a mission), collided when one collided, no_mission when none has a mission,
stopped when the run was stopped before it was over, else incomplete. Each vehicle's
closest approach to any other (the distance between their positions [m], centre to
centre, from samples within same_time_s of each other, the older moved to the newer's time
by its velocity) is followed while both are sampled.
"""

from dataclasses import dataclass, field
from typing import List, Mapping, Optional, Sequence, Tuple

import numpy as np

from sim_core.deck import DeckSpec, pad_pose
from sim_core.kinds import info
from sim_core.members import Member
from sim_report.core.vehicle_judge import IDENTITY, Color, JudgeFactory, VehicleJudge
from sim_report.core.world_plot import ZOOM_SPAN_M, plot_world

# The judges' surface lives in vehicle_judge and the figure in world_plot; their names are
# importable from here too.
__all__ = ['WorldJudge', 'Entry', 'VehicleJudge', 'JudgeFactory', 'Color', 'IDENTITY',
           'ZOOM_SPAN_M']


@dataclass
class Entry:
    """One vehicle of the world: its judge and what the world reported about it."""

    member: Member
    judge: VehicleJudge
    collisions: List[dict] = field(default_factory=list)
    fc_lost_at: Optional[float] = None        # sim time [s] its FC was found gone
    fc_failure: str = ''                      # why its FC will not fly (its bridge's words)
    no_command: str = ''                      # why it is taken as flown by nobody
    closest: Optional[dict] = None            # {'distance_m', 'with', 't_s'}
    tail: List[Tuple[float, Tuple[float, float, float]]] = field(default_factory=list)
    deck: Optional[DeckSpec] = None           # the landing deck it carries (its model's)
    pad_track: List[Tuple[float, float]] = field(default_factory=list)   # its pad, ENU (e, n)
    last: Optional[Tuple[float, np.ndarray, np.ndarray]] = None   # t [s], ENU [m], [m/s]

    @property
    def over(self) -> bool:
        """Nothing more will be judged for this vehicle."""
        return self.judge.items == 0 or self.judge.over or bool(self.collisions) \
            or self.fc_lost_at is not None or bool(self.fc_failure) or bool(self.no_command)

    @property
    def result(self) -> str:
        """collided, complete, no_mission, fc_refused, fc_lost, no_command or the kind's own."""
        if self.collisions:
            return 'collided'
        if self.judge.items == 0:
            return 'no_mission'
        if self.judge.done:
            return 'complete'
        if self.fc_failure:
            return 'fc_refused'
        if self.fc_lost_at is not None:
            return 'fc_lost'
        if self.no_command:
            return 'no_command'
        return str(self.judge.summary().get('result', 'incomplete'))

    @property
    def why(self) -> str:
        """The reason of a terminal failure in words ('' if none)."""
        if self.collisions:
            c = self.collisions[0]
            return (f'collided with {c["with"]} at {c["speed_mps"]} m/s at t = {c["t_s"]} s')
        if self.fc_failure:
            return f'its flight controller will not fly: {self.fc_failure}'
        if self.fc_lost_at is not None:
            return f'its flight controller went silent at t = {self.fc_lost_at:.1f} s'
        return self.no_command


class WorldJudge:
    """Every vehicle of a world judged by its kind's judge; collisions and FC losses noted."""

    def __init__(self, members: Sequence[Member], judges: Mapping[str, JudgeFactory],
                 same_time_s: float = 0.1,
                 decks: Optional[Sequence[Optional[DeckSpec]]] = None):
        """members: the world's (sim_core.members.world_members); judges: a factory per kind.

        same_time_s: two vehicles' samples this close in sim time [s] are compared for the
        closest approach (the sampling period). decks: the deck each member carries (its
        model's VehicleModel.deck; None: none carries one). ValueError for a kind without a
        judge, or decks not one per member.
        """
        missing = sorted({m.kind for m in members} - set(judges))
        if missing:
            raise ValueError(f'no judge for the kind(s) {", ".join(missing)}')
        if decks is not None and len(decks) != len(members):
            raise ValueError(f'{len(members)} members, {len(decks)} decks')
        self.entries = [Entry(m, judges[m.kind](m)) for m in members]
        for e, deck in zip(self.entries, decks or [None] * len(members)):
            e.deck = deck
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
        """A DeckContact message: to the vehicle's judge if its kind lands on decks.

        That judge is a DeckJudge (kinds.entry.missing checks every such kind's).
        """
        if vehicle not in self.names:
            return
        e = self.entries[self.index(vehicle)]
        if info(e.member.kind).lands_on_decks:
            e.judge.deck_event(t, deck, what, normal_speed, pad_xy)  # type: ignore[attr-defined]

    def fc_lost(self, i: int, t: float) -> bool:
        """Vehicle i's FC is gone at sim time t [s]; True the first time it counts."""
        e = self.entries[i]
        if e.over:
            return False
        e.fc_lost_at = float(t)
        return True

    def not_commanded(self, i: int, why: str) -> bool:
        """Vehicle i's controller never commanded it (why, in words); True the first time."""
        e = self.entries[i]
        if e.over:
            return False
        e.no_command = why
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
        """Every vehicle with a mission complete (and one has a mission)."""
        results = [e.result for e in self.entries]
        return 'complete' in results and all(r in ('complete', 'no_mission') for r in results)

    def row(self, e: Entry) -> dict:
        """One vehicle's row of the summary."""
        s = e.judge.summary()
        return {
            'name': e.member.name, 'kind': e.member.kind,
            'controller': e.member.controller, 'result': e.result,
            'items': e.judge.items, 'items_reached': len(e.judge.reached_at_s),
            'reached_at_s': [round(x, 2) for x in e.judge.reached_at_s],
            'collisions': e.collisions, 'closest_approach': e.closest,
            'fc_lost_at_s': e.fc_lost_at,
            **({'fc_failure': e.fc_failure} if e.fc_failure else {}),
            **({'why': e.why} if e.why else {}),
            'details': {k: v for k, v in s.items()
                        if k not in ('result', 'items', 'items_reached', 'reached_at_s')},
        }

    def result(self, stopped: bool = False) -> str:
        """The run's result (module docstring); stopped: the run was stopped by the user."""
        results = [e.result for e in self.entries]
        if stopped and not self.over:
            return 'stopped'
        if self.done:
            return 'complete'
        if 'collided' in results:
            return 'collided'
        if all(r == 'no_mission' for r in results):
            return 'no_mission'
        return 'incomplete'

    def summary(self, wall_s: float, stopped: bool = False) -> dict:
        """The run's result and a row per vehicle (JSON-ready); stopped: see result()."""
        rows = {e.member.name: self.row(e) for e in self.entries}
        results = [r['result'] for r in rows.values()]
        complete = results.count('complete')
        return {
            'result': self.result(stopped), 'vehicles_complete': complete,
            'vehicle_count': len(results),
            'items': sum(r['items'] for r in rows.values()),
            'items_reached': sum(r['items_reached'] for r in rows.values()),
            'collided': [n for n, r in rows.items() if r['result'] == 'collided'],
            'sim_time_s': round(self.t, 3), 'wall_time_s': round(wall_s, 3),
            'real_time_factor': round(self.t / wall_s, 2) if wall_s > 0 else None,
            'vehicles': rows,
        }

    def plot(self, path: str, title: str) -> None:
        """Write a PNG of the world's run (world_plot.plot_world).

        Every track (top view, the kind's marker and colour) over its plan, a close-up of the
        small tracks, altitude over time, and the results.
        """
        plot_world(self, path, title)
