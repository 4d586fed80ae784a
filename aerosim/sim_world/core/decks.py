"""Vehicles on moving decks: touchdown, resting with friction, lift-off (pure, no rclpy).

A boat whose type has a deck (sim_core.deck) carries the vehicles of the kinds that land on
decks (sim_core.kinds lands_on_decks: the multirotor) that come down on it. Each world step,
after every model stepped (sim_world.core.world):

- **touchdown**: a free vehicle whose landing gear (its model's reference point) crosses the
  deck's plane from above, over the deck's rectangle, is on the deck from then on. Its velocity
  relative to the deck point under it is recorded (the normal part is the vertical speed at
  touchdown, the rest becomes its slip along the deck);
- **resting**: the vehicle is carried (VehicleModel.carry): its position is its spot on the
  deck, its velocity the deck point's plus its slip, its attitude the deck's tilt with its own
  heading on the deck, its body rates the deck's, its acceleration the deck point's (what its
  IMU feels). The slip decays by Coulomb friction (friction x g per second) until it sticks;
  sliding past the deck's edge drops it off the deck (free again: it falls into the water);
- **lift-off**: each step a resting vehicle is first integrated freely from its carried state
  (its own thrust, gravity); if that leaves it moving away from the deck (its velocity
  relative to the deck point, along the deck's normal, > 0) it has lifted off and stays free.
  With its motors idle it falls back toward the deck, and is carried again: the deck holds it,
  whatever the deck's heave does (no sinking through, no bounce). The test is on velocities,
  not on heights: a boat steps at its own rate (50 Hz, kinds/boat/model.py), so its
  deck's pose holds between its steps while its velocity is the hull's.

The deck point's acceleration is the pad's velocity differenced over its boat's own step (the
hull's rotation adds w x (w x r), a few mm/s^2 here, not modelled). The deck takes no reaction
(a 1.5 kg quad on a 3.5 t hull). A decked boat and a vehicle that lands on decks meet through
the deck only: the world's sphere contact is off for that pair.

Events: ``DeckEvent(t_ns, vehicle, deck, what, rel_v_enu, pad_xy, point)``, what TOUCHDOWN,
LIFTOFF or SLID_OFF; rel_v_enu the velocity relative to the deck point [m/s] at touchdown;
pad_xy [m] the spot on the deck from the pad's centre (x forward, y to port).
"""

from dataclasses import dataclass
import math
from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np
from transforms3d import quaternions as tq

from sim_core.deck import DeckSpec, PadPose, on_deck, over_deck, pad_pose, point_velocity, yaw_of
from sim_core.frames import VehicleSample
from sim_core.kinds import Carried, VehicleModel

TOUCHDOWN, LIFTOFF, SLID_OFF = 'touchdown', 'liftoff', 'slid off'  # DeckContact.event
GRAVITY = 9.80665


@dataclass(frozen=True)
class DeckEvent:
    """A vehicle's touchdown on, lift-off from or slide off a deck."""

    t_ns: int
    vehicle: str
    deck: str                               # the boat's name
    what: str                               # TOUCHDOWN, LIFTOFF, SLID_OFF
    rel_v_enu: Tuple[float, float, float]   # m/s, relative to the deck point (touchdown)
    normal_speed: float                     # m/s, toward the deck at touchdown (>= 0)
    pad_xy: Tuple[float, float]             # m, from the pad's centre (x forward, y to port)
    point: Tuple[float, float, float]       # m, ENU


@dataclass
class Resting:
    """A vehicle carried by a deck: where on it, its heading on it, its slip."""

    deck: int                   # the boat's index in the world
    x: float                    # m, along the deck from the pad's centre
    y: float
    yaw: float                  # rad, its heading relative to the deck's
    slip: np.ndarray            # m/s, (x, y) along the deck


def _heading_on(pose: PadPose, s: VehicleSample) -> float:
    """A vehicle's heading relative to the deck's [rad] (ENU yaws)."""
    return yaw_of(tq.quat2mat(np.asarray(s.q_enu_flu, dtype=float))) - yaw_of(pose.R)


def _yaw_q(yaw: float) -> np.ndarray:
    return np.array([math.cos(0.5 * yaw), 0.0, 0.0, math.sin(0.5 * yaw)])


class Decks:
    """The decks of a world's boats and the vehicles on them (see the module docstring)."""

    def __init__(self, names: Sequence[str], models: Sequence[VehicleModel],
                 decks: Dict[int, DeckSpec], riders: Sequence[int]):
        """names, models: the world's members (world order).

        decks: the boats with a deck, by index; riders: the members that land on decks.
        """
        self.names, self.models = tuple(names), list(models)
        self.decks = dict(decks)
        self.riders = tuple(riders)
        self.resting: Dict[int, Resting] = {}
        self._h: Dict[Tuple[int, int], float] = {}        # (rider, deck) -> last height
        self._v_pad: Dict[int, np.ndarray] = {}
        self._a_pad: Dict[int, np.ndarray] = {}
        self.poses: Dict[int, PadPose] = {}

    def pairs(self) -> List[Tuple[int, int]]:
        """(i, j), i < j: the pairs that meet through a deck only (no sphere contact)."""
        return sorted({(min(r, d), max(r, d)) for r in self.riders for d in self.decks
                       if r != d})

    def reset(self, samples: Sequence[VehicleSample]) -> None:
        """Nobody on a deck; the decks' poses at samples (the world's start)."""
        self.resting.clear()
        self._h.clear()
        self._a_pad = {d: np.zeros(3) for d in self.decks}
        self._since = dict.fromkeys(self.decks, 0.0)     # s since the pad's velocity changed
        self._poses(samples)
        self._v_pad = {d: p.v_enu.copy() for d, p in self.poses.items()}

    def _poses(self, samples: Sequence[VehicleSample]) -> None:
        self.poses = {d: pad_pose(spec, samples[d].p_enu, samples[d].v_enu,
                                  samples[d].q_enu_flu, samples[d].w_flu)
                      for d, spec in self.decks.items()}

    def place(self, rider: int, deck: int, samples: List[VehicleSample], t_ns: int) -> None:
        """Put rider on deck where it stands (its start: start_on), at rest on it.

        ValueError if its position is not over the deck's rectangle.
        """
        pose = self.poses[deck]
        s = samples[rider]
        xyh = on_deck(pose, s.p_enu)
        if not over_deck(self.decks[deck], xyh):
            raise ValueError(
                f'{self.names[rider]} starts at ({s.p_enu[0]:.2f}, {s.p_enu[1]:.2f}) m, not over '
                f'the deck of {self.names[deck]} (its pad at ({pose.p_enu[0]:.2f}, '
                f'{pose.p_enu[1]:.2f}) m, the deck {self.decks[deck].size_m[0]:g} x '
                f'{self.decks[deck].size_m[1]:g} m)')
        self.resting[rider] = Resting(deck, float(xyh[0]), float(xyh[1]),
                                      _heading_on(pose, s), np.zeros(2))
        self._carry(rider, samples, t_ns)

    def step(self, samples: List[VehicleSample], dt_s: float, t_ns: int) -> List[DeckEvent]:
        """After the models' step of dt_s [s] ending at t_ns: contacts with the decks.

        samples: the world's fresh samples, replaced for the vehicles carried. Returns the
        events.
        """
        if not self.decks:
            return []
        self._poses(samples)
        for d, pose in self.poses.items():
            self._since[d] += dt_s
            if not np.array_equal(pose.v_enu, self._v_pad[d]):     # its boat stepped
                self._a_pad[d] = (pose.v_enu - self._v_pad[d]) / self._since[d]
                self._v_pad[d] = pose.v_enu.copy()
                self._since[d] = 0.0
        out: List[DeckEvent] = []
        for r in self.riders:
            s = samples[r]
            rs = self.resting.get(r)
            if rs is not None:
                out += self._resting(r, rs, samples, dt_s, t_ns)
                continue
            for d, pose in self.poses.items():
                if d == r:
                    continue
                xyh = on_deck(pose, s.p_enu)
                h_prev = self._h.get((r, d))
                self._h[(r, d)] = float(xyh[2])
                if xyh[2] <= 0.0 and h_prev is not None and h_prev > 0.0 and \
                        over_deck(self.decks[d], xyh):
                    out.append(self._touchdown(r, d, xyh, samples, t_ns))
                    break
        return out

    def _touchdown(self, r: int, d: int, xyh, samples: List[VehicleSample], t_ns: int
                   ) -> DeckEvent:
        pose, s = self.poses[d], samples[r]
        rel = np.asarray(s.v_enu, dtype=float) - point_velocity(pose, s.p_enu)
        rel_deck = pose.R.T @ rel
        self.resting[r] = Resting(d, float(xyh[0]), float(xyh[1]), _heading_on(pose, s),
                                  np.array(rel_deck[0:2], dtype=float))
        self._carry(r, samples, t_ns)
        p = samples[r].p_enu
        return DeckEvent(t_ns, self.names[r], self.names[d], TOUCHDOWN,
                         (float(rel[0]), float(rel[1]), float(rel[2])),
                         max(0.0, -float(rel_deck[2])), (float(xyh[0]), float(xyh[1])),
                         (float(p[0]), float(p[1]), float(p[2])))

    def _resting(self, r: int, rs: Resting, samples: List[VehicleSample], dt_s: float,
                 t_ns: int) -> List[DeckEvent]:
        pose, spec, s = self.poses[rs.deck], self.decks[rs.deck], samples[r]
        rel = np.asarray(s.v_enu, dtype=float) - point_velocity(pose, s.p_enu)
        if float(pose.R[:, 2] @ rel) > 0.0:     # its own thrust: away from the deck
            return [self._free(r, rs, LIFTOFF, s, t_ns)]
        speed = float(np.hypot(*rs.slip))
        if speed > 0.0:             # Coulomb friction: the slip decays at friction x g
            rs.slip *= max(0.0, speed - spec.friction * GRAVITY * dt_s) / speed
            rs.x += float(rs.slip[0]) * dt_s
            rs.y += float(rs.slip[1]) * dt_s
        if not over_deck(spec, (rs.x, rs.y, 0.0)):
            return [self._free(r, rs, SLID_OFF, s, t_ns)]
        self._carry(r, samples, t_ns)
        return []

    def _free(self, r: int, rs: Resting, what: str, s: VehicleSample, t_ns: int) -> DeckEvent:
        del self.resting[r]
        self.models[r].carry(None)
        self._h[(r, rs.deck)] = 0.0 if what == SLID_OFF else 1e-6
        p = tuple(float(x) for x in s.p_enu)
        return DeckEvent(t_ns, self.names[r], self.names[rs.deck], what, (0.0, 0.0, 0.0), 0.0,
                         (rs.x, rs.y), (p[0], p[1], p[2]))

    def _carry(self, r: int, samples: List[VehicleSample], t_ns: int) -> None:
        rs = self.resting[r]
        pose = self.poses[rs.deck]
        p = pose.p_enu + pose.R @ np.array([rs.x, rs.y, 0.0])
        v = point_velocity(pose, p) + pose.R @ np.array([rs.slip[0], rs.slip[1], 0.0])
        q = tq.qmult(pose.q_enu_flu, _yaw_q(rs.yaw))
        w_flu = tq.quat2mat(q).T @ pose.w_enu
        self.models[r].carry(Carried(p, v, q, w_flu, self._a_pad[rs.deck]))
        samples[r] = self.models[r].sample(t_ns)

    def on_deck_of(self, rider: int) -> Optional[str]:
        """The name of the boat whose deck carries rider (None: not on a deck)."""
        rs = self.resting.get(rider)
        return None if rs is None else self.names[rs.deck]
