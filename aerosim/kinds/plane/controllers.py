"""The plane's controller in the world's process: AeroSim's autopilot on truth (pure, no rclpy).

PlaneAutopilot: sim_autopilot.core's Autopilot flying the member's mission as a flight plan
(flight_plan.from_mission), fed the state as AeroSim's autopilot is fed (autopilot.flight_state
of the true VehicleSample and JSBSim's calibrated airspeed, the PFD's), its output set as a
FlightCommand (PlaneModel.apply_flight). With autostart (the world's, handed over by its
MemberIo, kinds/plane/ros.py) RUN at its first update; without, the plan stays loaded, stopped,
until an autopilot_command RUNs it. At JSBSim's rate (125 Hz): it answers each state.

It reports ``done`` and ``item``: the index of the mission item it flies (len(mission) when
done), as every in-process controller (sim_world.core.world.Controller).
"""

from typing import List, Optional, Tuple

from sim_autopilot.core import flight_plan as fp
from sim_autopilot.core.autopilot import Autopilot, Limits, flight_state
from sim_core.members import Member
from sim_dynamics.core.plane import FlightCommand

from .model import JSBSIM_DT_S, PlaneModel


def flight_command(out) -> FlightCommand:
    """An autopilot Output as the FlightCommand it stands for (autopilot_node's message)."""
    return FlightCommand((float(out.power),), float(out.roll), float(out.pitch),
                         float(out.yaw), 0.0, float(out.flap), 0.0, 1.0,
                         float(out.wheel_steer), float(out.wheel_brake))


class PlaneAutopilot:
    """AeroSim's autopilot flying a plane member's mission on truth (module docstring)."""

    def __init__(self, member: Member, model: PlaneModel, rate_hz: float = 1.0 / JSBSIM_DT_S,
                 autostart: bool = True):
        """The plan of member's mission for model's aircraft; rate_hz [Hz] of its updates.

        autostart: RUN the plan at the first update (False: loaded, stopped).
        """
        sc = member.scenario
        a = model.params
        self.model = model
        self.rate_hz = float(rate_hz)
        self.autostart = autostart
        self.origin = sc.origin
        self.limits = Limits(a.rotate_kts, a.climb_kts, a.cruise_kts, a.approach_kts,
                             a.max_bank_deg)
        self.plan = fp.from_mission(sc.mission, sc.origin.alt_m, sc.initial_yaw_deg,
                                    a.rotate_kts) if sc.mission else ()
        self.log: List[Tuple[float, str]] = []      # (t [s], text): the autopilot's lines
        self.reset()

    def reset(self) -> None:
        """A fresh autopilot with the plan loaded (RUN at the next update with autostart)."""
        self.ap = Autopilot(self.limits, self.origin.alt_m)
        if self.plan:
            self.ap.load_plan(self.plan)
        self._last_t: Optional[float] = None
        self.log = []

    @property
    def done(self) -> bool:
        """The plan is complete (a plane without a mission has nothing to do)."""
        return not self.plan or self.ap.mode == 'done'

    @property
    def item(self) -> int:
        """The plan step flown: mission item i is step i (from_mission maps them 1:1)."""
        return max(self.ap.step, 0)

    def update(self, t_ns: int) -> None:
        """One autopilot step on the model's state at t_ns; its FlightCommand applied."""
        m = self.model
        s = flight_state(m.sample(t_ns), self.origin, m.air_data().vc_kts)
        if self._last_t is None and self.plan:
            if self.autostart:
                self.ap.run(s)
                self.log.append((s.t, f'flight plan RUN: {len(self.plan)} steps'))
            else:
                self.log.append((s.t, f'flight plan of {len(self.plan)} steps loaded, '
                                      'stopped (autostart off): RUN it on autopilot_command'))
        dt = 0.0 if self._last_t is None else max(0.0, s.t - self._last_t)
        self._last_t = s.t
        m.apply_flight(flight_command(self.ap.update(s, dt)))
        self.log.extend(self.ap.log)
        self.ap.log.clear()
