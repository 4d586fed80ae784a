"""The plane's judge: its mission as PlaneJudge judges it, on ground truth (pure).

Waypoints within the acceptance radius (at least 150 m) or abeam; a landing item as a runway
landing (touchdown point, sink rate, rollout): a circuit flown from an airborne start with no
landing is complete at its last waypoint. Behind the world report's surface
(sim_report.core.vehicle_judge.VehicleJudge).
"""

import math
from typing import List, Sequence, Tuple

import numpy as np

from sim_core.frames import q_enu_flu_to_ned_frd, quat_to_euler_ned
from sim_core.members import Member
from sim_core.scenario import Scenario
from sim_core.units import KNOT_MPS
from sim_report.core.plane import PlaneJudge, PlaneSample
from sim_report.core.vehicle_judge import IDENTITY, VehicleJudge, plan_path
from sim_viz.core import scene


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
                                   float(np.linalg.norm(v - self.wind)) / KNOT_MPS,
                                   math.degrees(roll), math.degrees(pitch),
                                   math.degrees(yaw) % 360.0, float(v[2])))

    def path(self) -> Tuple[np.ndarray, np.ndarray]:
        """Sample times [s] and ENU positions [m]."""
        s = self.judge.samples
        return np.array([x.t for x in s]), np.array([x.p for x in s]).reshape(-1, 3)

    def plan(self) -> np.ndarray:
        """Start and items, ENU [m]."""
        return plan_path(self.judge.scenario, self.judge.points)

    def summary(self) -> dict:
        """PlaneJudge's figures, with items_reached and reached_at_s."""
        s = self.judge.summary()
        s.pop('vehicle')
        s.pop('scenario')
        s['items_reached'] = len(self.judge.flown)
        s['reached_at_s'] = self.reached_at_s
        return s


def plane_judge(member: Member) -> VehicleJudge:
    """The judge of a plane of a world (KindEntry.judge)."""
    return PlaneMissionJudge(member.scenario)
