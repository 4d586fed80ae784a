"""The multirotor's judge: its mission as MissionJudge judges it, on ground truth (pure).

Items within their acceptance radius and 1 m vertically, in order; a landing at rest with the
motors stopped; a landing on a deck by the world's deck events (DeckJudge.deck_event). Behind
the world report's surface (sim_report.core.vehicle_judge.VehicleJudge).
"""

import math
from typing import List, Sequence, Tuple

import numpy as np

from sim_core.members import Member
from sim_core.scenario import LANDING_COMMANDS, Scenario
from sim_report.core.mission import MissionJudge
from sim_report.core.vehicle_judge import IDENTITY, DeckJudge, plan_path
from sim_viz.core import scene


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

    def deck_event(self, t: float, deck: str, what: str, normal_speed: float,
                   pad_xy: Tuple[float, float]) -> None:
        """A deck's touchdown, lift-off or slide-off (DeckJudge): MissionJudge judges it."""
        self.judge.deck_event(t, deck, what, normal_speed, pad_xy)

    def path(self) -> Tuple[np.ndarray, np.ndarray]:
        """Sample times [s] and ENU positions [m]."""
        s = self.judge.samples
        return np.array([x.t for x in s]), np.array([x.p for x in s]).reshape(-1, 3)

    def plan(self) -> np.ndarray:
        """Start and items, ENU [m]."""
        return plan_path(self.judge.scenario, self.judge.points)

    def summary(self) -> dict:
        """MissionJudge's figures (no wall time: the world's)."""
        s = self.judge.summary(0.0)
        for k in ('wall_time_s', 'real_time_factor'):
            s.pop(k)
        if self.judge.landed_outside:
            s['landed_outside'] = True
        return s


def multirotor_judge(member: Member) -> DeckJudge:
    """The judge of a multirotor of a world (KindEntry.judge)."""
    return MultirotorJudge(member.scenario)
