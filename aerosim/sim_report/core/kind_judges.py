"""Each kind's judge of one vehicle's mission, behind one surface (VehicleJudge; pure).

The world report (sim_report.core.world) judges every vehicle of a world by the judge its
kind registers (a JudgeFactory, from the kind registry's world_judge, sim_world.core.kinds):

- a multirotor: its mission as MissionJudge judges it (items within their acceptance radius
  and 1 m vertically, in order; a landing at rest with the motors stopped);
- a plane: its mission as PlaneJudge judges it (waypoints within the acceptance radius, at
  least 150 m, or abeam; a landing item as a runway landing): a circuit flown from an
  airborne start with no landing is complete at its last waypoint;
- a boat: its waypoints in order within their acceptance radii (boats.BoatWaypointJudge).
"""

import math
from typing import Callable, List, Protocol, Sequence, Tuple

import numpy as np

from sim_core.frames import q_enu_flu_to_ned_frd, quat_to_euler_ned
from sim_core.members import Member
from sim_core.scenario import LANDING_COMMANDS, Scenario
from sim_core.units import KNOT_MPS
from sim_report.core.boats import BoatWaypointJudge
from sim_report.core.mission import MissionJudge
from sim_report.core.plane import PlaneJudge, PlaneSample
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
                                   float(np.linalg.norm(v - self.wind)) / KNOT_MPS,
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
