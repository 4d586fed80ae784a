"""plane_report: follows a plane's flight on ground truth, ends the run when the circuit is flown.

Subscribes vehicle_state (position), flight_display (airspeed, attitude), /sim/status and, in
HIL, mavlink/status: when the bridge says the FC will not fly (a parameter, the mission or
arming refused, with the FC's reasons) the run ends at once with result fc_refused.
When every mission item of the scenario has been flown (sim_report.core.plane, judged on
ground truth, not on the autopilot's word) or max_sim_s passed, it writes the summary (JSON:
items flown with their altitude and cross-track errors, airspeeds, bank, distance, real-time
factor) and a PNG (ground track, altitude, airspeed, attitude), and exits: 0 if the circuit
is complete, 1 if not. In sim_plane with report:=true it is the supervisor.
"""

from pathlib import Path
import time

from rclpy.node import Node

from aerosim_msgs.msg import MavlinkLinkStatus, PrimaryFlightDisplayData, SimStatus, VehicleState
from sim_core.scenario import load_scenario
from sim_report.core.mission import preload_plotting
from sim_report.core.output import write_summary
from sim_report.core.params import PLANE_REPORT_PARAMETERS, PlaneReportConfig
from sim_report.core.plane import PlaneJudge, PlaneSample
from sim_ros import qos
from sim_ros.convert import time_ns
from sim_ros.params import read_config
from sim_ros.run import run_node, until_finished


class PlaneReport(Node):
    """Ground-truth judge of a plane's mission and report writer."""

    def __init__(self):
        """Declare parameters, subscribe."""
        super().__init__('plane_report')
        cfg = read_config(self, PlaneReportConfig, PLANE_REPORT_PARAMETERS)
        self.scenario = load_scenario(cfg.scenario_file)
        self.max_sim_s, self.period_s = cfg.max_sim_s, 1.0 / cfg.sample_rate_hz
        self.out_dir, self.title = Path(cfg.output_dir), cfg.title
        self.judge = PlaneJudge(self.scenario)
        self.finished = None
        self.status = None
        self._pfd = None
        self._next_t = 0.0
        self._wall0 = None
        self.create_subscription(VehicleState, 'vehicle_state', self._on_state, qos.STATE)
        self.create_subscription(PrimaryFlightDisplayData, 'flight_display', self._on_pfd,
                                 qos.SENSOR_SUB)
        self.create_subscription(SimStatus, '/sim/status', self._on_status, qos.LATCHED)
        self.fc_failure = ''
        self.create_subscription(MavlinkLinkStatus, 'mavlink/status', self._on_link, qos.LATCHED)
        preload_plotting()
        self.get_logger().info(f'judging {len(self.judge.points)} mission items of '
                               f'{self.scenario.name} on ground truth; giving up at '
                               f'{self.max_sim_s:g} s sim')

    def _on_status(self, msg: SimStatus):
        self.status = msg

    def _on_link(self, msg: MavlinkLinkStatus):
        """The HIL bridge's status: a flight controller that will not fly ends the run."""
        if msg.fc_failure and not self.fc_failure and self.finished is None:
            self.fc_failure = msg.fc_failure
            self.get_logger().error(f'the flight controller will not fly: {msg.fc_failure}')
            self.finish(time.monotonic() - (self._wall0 or time.monotonic()))

    def _on_pfd(self, msg: PrimaryFlightDisplayData):
        self._pfd = msg

    def _on_state(self, msg: VehicleState):
        t = time_ns(msg.header.stamp) * 1e-9
        if self._wall0 is None:
            self._wall0 = time.monotonic()
        if t < self._next_t or self.finished is not None or self._pfd is None:
            return
        self._next_t = t + self.period_s
        p, f = msg.state.pose.position, self._pfd
        n = len(self.judge.flown)
        self.judge.add(PlaneSample(t, (p.x, p.y, p.z), f.airspeed_kts, f.roll_deg, f.pitch_deg,
                                   f.heading_deg, msg.velocity.z))
        if len(self.judge.flown) > n:
            _, tf, how, err = self.judge.flown[-1]
            it = self.scenario.mission[n]
            self.get_logger().info(f'[t={tf:7.2f} s] truth: item {n} ({it.command}) flown, '
                                   f'{how}, altitude error {err:+.1f} m')
        if self.judge.done or t >= self.max_sim_s:
            self.finish(time.monotonic() - self._wall0)

    def finish(self, wall_s: float):
        """Write the summary and the plot; remember the exit code."""
        s = self.judge.summary()
        if self.fc_failure:
            s.update(result='fc_refused', fc_failure=self.fc_failure)
        s['wall_time_s'] = round(wall_s, 2)
        s['real_time_factor'] = round(s['sim_time_s'] / wall_s, 2) if wall_s > 0 else None
        st = self.status
        if st is not None:
            s.update(steps=st.steps, lockstep_timeouts=st.lockstep_timeouts,
                     time_scale=st.time_scale, rejected_inputs=st.rejected_inputs)
        js, png = write_summary(self.out_dir, self.title, s,
                                lambda path: self.judge.plot(path, self.title))
        self.get_logger().info(
            f'SUMMARY circuit {s["result"]}: {s["items_flown"]}/{s["items"]} items, '
            f'{s["distance_flown_km"]} km, max bank {s["max_bank_deg"]} deg, '
            f'{s["sim_time_s"]} s sim in {s["wall_time_s"]} s wall (real-time factor '
            f'{s["real_time_factor"]}); wrote {js} and {png}')
        self.finished = 0 if self.judge.done and not self.fc_failure else 1


def main(args=None):
    """Run plane_report until the flight is judged; exit 0 if complete."""
    run_node(PlaneReport, 'plane_report', args, body=until_finished)


if __name__ == '__main__':
    main()
