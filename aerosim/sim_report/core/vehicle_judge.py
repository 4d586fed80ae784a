"""The surface a kind's judge gives the world report (VehicleJudge), and its helpers (pure).

The world report (sim_report.core.world.WorldJudge) judges every vehicle of a world by the
judge its kind brings (KindEntry.judge, kinds/<name>/judge.py: a JudgeFactory, member ->
VehicleJudge), on ground truth. Each kind's judge uses the library judges of this package
(MissionJudge, PlaneJudge, WaypointJudge) behind this one surface. A kind whose vehicles rest
on decks (its kind.yaml's lands_on_decks) has a DeckJudge: the world's deck events go to it.
"""

from typing import Callable, List, Protocol, Sequence, Tuple

import numpy as np

from sim_core.members import Member
from sim_core.scenario import Scenario
from sim_viz.core import scene

Color = Tuple[float, float, float, float]
IDENTITY = scene.IDENTITY


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


class DeckJudge(VehicleJudge, Protocol):
    """The judge of a kind that lands on decks: the world's deck events reach it."""

    def deck_event(self, t: float, deck: str, what: str, normal_speed: float,
                   pad_xy: Tuple[float, float]) -> None:
        """A touchdown on, lift-off from or slide off a deck (sim_world.core.decks).

        t: sim time [s]; deck: the decked vehicle's name; what: the event; normal_speed: the
        relative speed along the deck's normal [m/s]; pad_xy: where on the pad [m].
        """


JudgeFactory = Callable[[Member], VehicleJudge]


def plan_path(scenario: Scenario, points) -> np.ndarray:
    """A planned path, ENU [m], shape (K + 1, 3): the scenario's start, then each point."""
    start = np.array(scenario.initial_position_enu, dtype=float)
    return np.vstack([start[None, :]] + [np.asarray(p, dtype=float)[None, :] for p in points])
