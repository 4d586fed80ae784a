"""flight_report: follows the flight on ground truth, ends the run when the mission is done.

Subscribes odom (nav_msgs/Odometry, every step), effector_command (are the motors stopped?),
mavlink/status (the bridge says the FC will not fly: the run ends at once, result fc_refused,
with the reason) and /sim/status. A fleet (vehicles >= 2): each vehicle's /<prefix><i>/odom,
effector_command and mavlink/status (its FC heard, gone, or refusing), and /sim/collisions;
each mission is judged, the summary has one entry per vehicle and the closest approach of any
two, a vehicle that touched another is `collided` (its mission not complete), and the run
ends when every vehicle is over (sim_report.core.fleet). When every mission item of the
scenario has been reached (judged on ground truth, sim_report.core.mission) or max_sim_s
passed, it prints a summary (mission result, items reached, max tracking error, landing
error, real-time factor), writes it as JSON and a PNG plot, and exits: code 0 if the mission
is complete, 1 if not. In a graph it is the supervisor: the run ends with it.
"""

import math
from pathlib import Path
import time

from nav_msgs.msg import Odometry
from rclpy.node import Node

from aerosim_msgs.msg import AircraftEffectorCommand, Collision, MavlinkLinkStatus, SimStatus
from mavlink_bridge.core.peers import is_flight_controller
from sim_core.fleet import fleet_size, member_name, member_scenarios
from sim_core.scenario import LANDING_COMMANDS, load_scenario
from sim_report.core.fleet import FleetJudge
from sim_report.core.mission import MissionJudge, preload_plotting
from sim_report.core.output import write_summary
from sim_report.core.params import FLIGHT_REPORT_PARAMETERS, FlightReportConfig
from sim_report.core.report_lines import pacing, summary_lines
from sim_ros import qos
from sim_ros.convert import time_ns
from sim_ros.params import read_config
from sim_ros.run import run_node, until_finished


class Track:
    """One vehicle followed: its odometry sampled, its motors watched near a landing."""

    def __init__(self, node, index: int, prefix: str, scenario):
        """prefix: '' (the node's namespace) or '/quad1/' (a fleet's vehicle)."""
        self.node, self.index, self.prefix, self.scenario = node, index, prefix, scenario
        self.next_t = 0.0
        self.motors_off = False
        self.sub_command = None
        self.fc_heard = False
        node.create_subscription(Odometry, f'{prefix}odom', self.on_odom, qos.STATE)

    def on_odom(self, msg: Odometry):
        """Sample the ground truth at sample_rate_hz (sim) for the judge."""
        t = time_ns(msg.header.stamp) * 1e-9
        self.node.clock_seen(t)
        if t < self.next_t or self.node.finished is not None:
            return
        self.next_t = t + 1.0 / self.node.sample_hz
        p = msg.pose.pose.position
        v = msg.twist.twist.linear
        self.watch_motors(p.z)
        self.node.sample(self, t, (p.x, p.y, p.z), math.sqrt(v.x * v.x + v.y * v.y + v.z * v.z))

    def on_command(self, msg: AircraftEffectorCommand):
        """Note whether every motor is stopped."""
        self.motors_off = not any(x > 0.0 for x in msg.throttle_cmd)

    def watch_motors(self, z: float):
        """Subscribe effector_command below 1 m while a landing item is next; else not.

        The motor commands matter only for the landing (rest with motors stopped); they come
        every step, so they are subscribed near the ground only.
        """
        k = self.node.reached(self)
        mission = self.scenario.mission
        want = k < len(mission) and z < 1.0 and mission[k].command in LANDING_COMMANDS
        if want and self.sub_command is None:
            self.motors_off = False       # unknown until the first command arrives
            self.sub_command = self.node.create_subscription(
                AircraftEffectorCommand, f'{self.prefix}effector_command', self.on_command,
                qos.SENSOR_SUB)
        elif not want and self.sub_command is not None:
            self.node.destroy_subscription(self.sub_command)
            self.sub_command = None


class FlightReport(Node):
    """Ground-truth mission judge and report writer: one vehicle, or each of a fleet."""

    def __init__(self):
        """Declare parameters, subscribe."""
        super().__init__('flight_report')
        cfg = read_config(self, FlightReportConfig, FLIGHT_REPORT_PARAMETERS)
        self.scenario = load_scenario(cfg.scenario_file)
        self.max_sim_s, self.sample_hz = cfg.max_sim_s, cfg.sample_rate_hz
        self.out_dir, self.title = Path(cfg.output_dir), cfg.title
        n = fleet_size(self.scenario, cfg.vehicles)
        scenarios = member_scenarios(self.scenario, n)
        self.names = [member_name(cfg.vehicle_prefix, i) for i in range(n)]
        self.fleet = FleetJudge(self.names, scenarios) if n > 1 else None
        self.judge = MissionJudge(scenarios[0]) if n == 1 else None
        self.finished = None
        self._wall0 = None
        self._liftoff = None      # (wall s, sim s) of the first airborne sample
        self.status = None        # last /sim/status: pacing figures for the summary
        self._status_liftoff = None
        self._t = 0.0             # latest sim time seen [s]
        self.tracks = [Track(self, i, f'/{self.names[i]}/' if n > 1 else '', sc)
                       for i, sc in enumerate(scenarios)]
        self.create_subscription(SimStatus, '/sim/status', self._on_status, qos.LATCHED)
        self.fc_failure = ''       # one vehicle: why its FC will not fly (its bridge's words)
        for tr in self.tracks:
            self.create_subscription(MavlinkLinkStatus, f'{tr.prefix}mavlink/status',
                                     lambda msg, tr=tr: self._on_link(tr, msg), qos.LATCHED)
        if self.fleet is not None:
            self.create_subscription(Collision, '/sim/collisions', self._on_collision, 100)
        preload_plotting()
        items = sum(len(sc.mission) for sc in scenarios)
        self.get_logger().info(
            f'judging {items} mission items of {self.scenario.name}'
            + (f' flown by {n} vehicles ({", ".join(self.names)})' if n > 1 else '')
            + f' on ground truth; giving up at {self.max_sim_s:g} s sim')

    def _on_status(self, msg: SimStatus):
        self.status = msg

    def clock_seen(self, t: float):
        """A sample of sim time t [s] arrived (the run's wall clock starts at the first)."""
        if self._wall0 is None:
            self._wall0 = time.monotonic()
        self._t = max(self._t, t)

    def reached(self, track: Track) -> int:
        """Items of track's vehicle reached so far."""
        j = self.judge if self.fleet is None else self.fleet.members[track.index].judge
        return len(j.reached)

    def sample(self, track: Track, t: float, p, speed: float):
        """A ground-truth sample of a vehicle: judged; the run ends when every mission is over."""
        if self._liftoff is None and p[2] > 0.1:
            self._liftoff = (time.monotonic(), t)
            self._status_liftoff = self.status
        n = self.reached(track)
        if self.fleet is None:
            self.judge.add(t, p, speed, track.motors_off)
        else:
            self.fleet.add(track.index, t, p, speed, track.motors_off)
        if self.reached(track) > n:
            it = track.scenario.mission[n]
            who = f'{self.names[track.index]} ' if self.fleet is not None else ''
            self.get_logger().info(f'[t={t:7.2f} s] truth: {who}item {n} ({it.command}) '
                                   'reached')
        over = self.judge.over if self.fleet is None else self.fleet.over
        if over or t >= self.max_sim_s:
            self.finish(time.monotonic() - self._wall0)

    def _on_link(self, track: Track, msg: MavlinkLinkStatus):
        """A vehicle's bridge link status: its FC heard, gone, or refusing to fly."""
        if msg.fc_failure and self.finished is None:
            self._fc_refused(track, msg.fc_failure)
            return
        if self.fleet is None:
            return
        fc = any(is_flight_controller(p.mav_type, p.autopilot) for p in msg.peers)
        if fc:
            track.fc_heard = True
        elif track.fc_heard and self.finished is None and \
                self.fleet.fc_lost(track.index, self._t):
            self.get_logger().warning(
                f'[t={self._t:7.2f} s] {self.names[track.index]}: its flight controller is '
                "gone (no HEARTBEAT within the bridge's peer timeout): not judged further; "
                'the other vehicles fly on')
            if self.fleet.over:
                self.finish(time.monotonic() - (self._wall0 or time.monotonic()))

    def _fc_refused(self, track: Track, why: str):
        """The bridge says the FC will not fly: say why; the vehicle (the run) is over."""
        who = f'{self.names[track.index]}: ' if self.fleet is not None else ''
        if self.fleet is None:
            if self.fc_failure:
                return
            self.fc_failure = why
        else:
            m = self.fleet.members[track.index]
            if m.fc_failure:
                return
            m.fc_failure = why
        self.get_logger().error(f'[t={self._t:7.2f} s] {who}the flight controller will not '
                                f'fly: {why}')
        if self.fleet is None or self.fleet.over:
            self.finish(time.monotonic() - (self._wall0 or time.monotonic()))

    def _on_collision(self, msg: Collision):
        """A contact: noted for its vehicles (one that touched another has collided)."""
        t = time_ns(msg.header.stamp) * 1e-9
        self.fleet.contact(t, msg.vehicle, msg.other, msg.closing_speed)
        self.get_logger().warning(f'[t={t:7.2f} s] collision: {msg.vehicle} and {msg.other} at '
                                  f'{msg.closing_speed:.1f} m/s')
        if self.fleet.over and self.finished is None:
            self.finish(time.monotonic() - (self._wall0 or time.monotonic()))

    def finish(self, wall_s: float):
        """Write the summary and the plot; remember the exit code."""
        judge = self.judge if self.fleet is None else self.fleet
        s = judge.summary(wall_s)
        if self.fc_failure:
            s.update(result='fc_refused', fc_failure=self.fc_failure)
        # real_time_factor covers the whole run, including the free-run before a flight
        # controller connects; this one covers only the flight (lockstep with the FC).
        s['flight_real_time_factor'] = None
        if self._liftoff is not None and time.monotonic() > self._liftoff[0]:
            s['flight_real_time_factor'] = round(
                (s['sim_time_s'] - self._liftoff[1]) / (time.monotonic() - self._liftoff[0]), 2)
        if self.status is not None:
            s.update(pacing(self.status, self._status_liftoff))
        js, png = write_summary(self.out_dir, self.title, s,
                                lambda path: judge.plot(path, self.title))
        for line in summary_lines(s, self.fleet is not None, js, png):
            self.get_logger().info(line)
        self.finished = 0 if judge.done and not self.fc_failure else 1


def main(args=None):
    """Run flight_report until the mission is judged; exit 0 if complete."""
    run_node(FlightReport, 'flight_report', args, body=until_finished)


if __name__ == '__main__':
    main()
