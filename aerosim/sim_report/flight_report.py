"""flight_report: follows the flight on ground truth, ends the run when the mission is done.

Subscribes odom (nav_msgs/Odometry, every step), effector_command (are the motors stopped?)
and /sim/status. When every mission item of the
scenario has been reached (judged on ground truth, sim_report.core.mission) or max_sim_s passed, it
prints a summary (mission result, items reached, max tracking error, landing error, real-time
factor), writes it as JSON and a PNG plot, and exits: code 0 if the mission is complete, 1 if
not. In a graph it is the supervisor: the run ends with it.
"""

import math
from pathlib import Path
import time

from nav_msgs.msg import Odometry
from rclpy.node import Node

from aerosim_msgs.msg import AircraftEffectorCommand, SimStatus
from sim_core.scenario import LANDING_COMMANDS, load_scenario
from sim_report.core.mission import MissionJudge, preload_plotting
from sim_report.core.output import write_summary
from sim_ros import qos
from sim_ros.convert import time_ns
from sim_ros.params import declare
from sim_ros.run import run_node, until_finished


class FlightReport(Node):
    """Ground-truth mission judge and report writer."""

    def __init__(self):
        """Declare parameters, subscribe."""
        super().__init__('flight_report')
        self.scenario = load_scenario(declare(self, 'scenario_file', 'default', 'Scenario YAML'))
        self.max_sim_s = declare(self, 'max_sim_s', 300.0, 'Give up after this sim time [s]',
                                 1.0, 1e6)
        self.sample_hz = declare(self, 'sample_rate_hz', 25.0, 'Path sampling rate [Hz] (sim)',
                                 1.0, 1000.0)
        self.out_dir = Path(declare(self, 'output_dir', 'aerosim_runs',
                                    'Folder for <graph>_summary.json and .png'))
        self.title = declare(self, 'title', 'sim_quad_hil', 'Plot title and file prefix')
        self.judge = MissionJudge(self.scenario)
        self.finished = None
        self._next_t = 0.0
        self._wall0 = None
        self._liftoff = None      # (wall s, sim s) of the first airborne sample
        self.status = None        # last /sim/status: pacing figures for the summary
        self._status_liftoff = None
        self.create_subscription(Odometry, 'odom', self._on_odom, qos.STATE)
        self.create_subscription(SimStatus, '/sim/status', self._on_status, qos.LATCHED)
        # The motor commands matter only for the landing (rest with motors stopped); they come
        # every step, so they are subscribed near the ground only (see _watch_motors).
        self._sub_command = None
        self._motors_off = False
        preload_plotting()
        self.get_logger().info(f'judging {len(self.judge.points)} mission items of '
                               f'{self.scenario.name} on ground truth; giving up at '
                               f'{self.max_sim_s:g} s sim')

    def _on_status(self, msg: SimStatus):
        self.status = msg

    def _on_command(self, msg: AircraftEffectorCommand):
        self._motors_off = not any(x > 0.0 for x in msg.throttle_cmd)

    def _on_odom(self, msg: Odometry):
        t = time_ns(msg.header.stamp) * 1e-9
        if self._wall0 is None:
            self._wall0 = time.monotonic()
        if t < self._next_t or self.finished is not None:
            return
        self._next_t = t + 1.0 / self.sample_hz
        p = msg.pose.pose.position
        v = msg.twist.twist.linear
        if self._liftoff is None and p.z > 0.1:
            self._liftoff = (time.monotonic(), t)
            self._status_liftoff = self.status
        self._watch_motors(p.z)
        n = len(self.judge.reached)
        self.judge.add(t, (p.x, p.y, p.z), math.sqrt(v.x * v.x + v.y * v.y + v.z * v.z),
                       self._motors_off)
        if len(self.judge.reached) > n:
            it = self.scenario.mission[n]
            self.get_logger().info(f'[t={t:7.2f} s] truth: item {n} ({it.command}) reached')
        if self.judge.over or t >= self.max_sim_s:
            self.finish(time.monotonic() - self._wall0)

    def _watch_motors(self, z: float):
        """Subscribe effector_command below 1 m while a landing item is next; else not."""
        k = len(self.judge.reached)
        want = (k < len(self.scenario.mission) and z < 1.0
                and self.scenario.mission[k].command in LANDING_COMMANDS)
        if want and self._sub_command is None:
            self._motors_off = False       # unknown until the first command arrives
            self._sub_command = self.create_subscription(
                AircraftEffectorCommand, 'effector_command', self._on_command, qos.SENSOR_SUB)
        elif not want and self._sub_command is not None:
            self.destroy_subscription(self._sub_command)
            self._sub_command = None

    def finish(self, wall_s: float):
        """Write the summary and the plot; remember the exit code."""
        s = self.judge.summary(wall_s)
        # real_time_factor covers the whole run, including the free-run before a flight
        # controller connects; this one covers only the flight (lockstep with the FC).
        s['flight_real_time_factor'] = None
        if self._liftoff is not None and time.monotonic() > self._liftoff[0]:
            s['flight_real_time_factor'] = round(
                (s['sim_time_s'] - self._liftoff[1]) / (time.monotonic() - self._liftoff[0]), 2)
        st = self.status
        if st is not None:
            # Pacing (time_scale > 0): steps that ran late against the wall clock, and lockstep
            # answers that never came; from the last /sim/status (period status_period_s).
            s.update(steps=st.steps, late_steps=st.late_steps,
                     late_step_share=round(st.late_steps / st.steps, 5) if st.steps else None,
                     lockstep_timeouts=st.lockstep_timeouts, time_scale=st.time_scale)
            lo = self._status_liftoff
            if lo is not None and st.steps > lo.steps:
                # the flight alone: start-up (processes importing while the sim runs) excluded
                s['flight_late_step_share'] = round(
                    (st.late_steps - lo.late_steps) / (st.steps - lo.steps), 5)
        js, png = write_summary(self.out_dir, self.title, s,
                                lambda path: self.judge.plot(path, self.title))
        self.get_logger().info(
            f'SUMMARY mission {s["result"]}: {s["items_reached"]}/{s["items"]} items, max '
            f'tracking error {s["max_tracking_error_m"]} m, landing error '
            f'{s["landing_error_m"]} m, {s["sim_time_s"]} s sim in {s["wall_time_s"]} s wall '
            f'(real-time factor {s["real_time_factor"]}, in flight '
            f'{s["flight_real_time_factor"]}); wrote {js} and {png}')
        self.finished = 0 if self.judge.done else 1


def main(args=None):
    """Run flight_report until the mission is judged; exit 0 if complete."""
    run_node(FlightReport, 'flight_report', args, body=until_finished)


if __name__ == '__main__':
    main()
