"""world_report: judges every vehicle of a world by its kind; ends the run when all are judged.

The vehicles are the scenario's (sim_core.members.world_members: quad0, plane0, boat0, ...).
Subscribes each vehicle's /<name>/odom (ground truth, sampled at sample_rate_hz of sim time),
/<name>/mavlink/status for those flown over MAVLink (their FC heard, gone, or refusing to
fly), /<name>/effector_command for a quad about to land (are its motors stopped?),
/sim/collisions and /sim/status. Each vehicle is judged by its kind's judge
(sim_report.core.world: a quad's mission, a plane's circuit, a boat's waypoints); a
collision makes the vehicle `collided` and the run not complete. When every vehicle is over
(complete, or a terminal failure: collided, fc_lost, fc_refused, ...) or max_sim_s passed,
it writes <output_dir>/<title>_summary.json (a row per vehicle) and <title>.png (every
track), and exits: code 0 if every vehicle is complete, 1 if not. In sim_world with
report:=true it is the supervisor: the run ends with it.
"""

import math
from pathlib import Path
import time
from typing import List, Optional

from nav_msgs.msg import Odometry
from rclpy.node import Node
from sim_world.core.kinds import REGISTRY

from aerosim_msgs.msg import (
    AircraftEffectorCommand,
    Collision,
    DeckContact,
    MavlinkLinkStatus,
    SimStatus,
)
from mavlink_bridge.core.peers import is_flight_controller
from sim_core.frames import quat_rotate
from sim_core.members import Member, world_members
from sim_core.scenario import load_scenario
from sim_report.core.mission import preload_plotting
from sim_report.core.output import write_summary
from sim_report.core.params import WORLD_REPORT_PARAMETERS, WorldReportConfig
from sim_report.core.world import WorldJudge
from sim_ros import qos
from sim_ros.convert import time_ns
from sim_ros.params import read_config
from sim_ros.run import run_node, until_finished


class Follow:
    """One vehicle followed: its odometry sampled, its FC's link, its motors near a landing."""

    def __init__(self, node: 'WorldReport', member: Member):
        """Subscribe the member's topics (its namespace /<name>/)."""
        self.node, self.member, self.i = node, member, member.index
        self.ns = f'/{member.name}/'
        self.next_t = 0.0
        self.motors_off = False
        self.fc_heard = False
        self.sub_command = None
        node.create_subscription(Odometry, f'{self.ns}odom', self.on_odom, qos.STATE)
        if member.over_mavlink:
            node.create_subscription(MavlinkLinkStatus, f'{self.ns}mavlink/status',
                                     self.on_link, qos.LATCHED)

    def on_odom(self, msg: Odometry):
        """Sample the ground truth at sample_rate_hz (sim) for the judge."""
        node = self.node
        t = time_ns(msg.header.stamp) * 1e-9
        node.clock_seen(t)
        if t < self.next_t or node.finished is not None:
            return
        self.next_t = t + 1.0 / node.sample_hz
        p, o = msg.pose.pose.position, msg.pose.pose.orientation
        q = (o.w, o.x, o.y, o.z)
        v = msg.twist.twist.linear          # FLU (the odometry's child frame): into ENU
        v_enu = quat_rotate(q, (v.x, v.y, v.z))
        node.sample(self, t, (p.x, p.y, p.z), v_enu, q)
        self.watch_motors()

    def watch_motors(self):
        """Subscribe effector_command while the judge wants the motors (a landing next).

        The motor commands come every step: subscribed near the landing only.
        """
        want = self.node.world.entries[self.i].judge.wants_motors()
        if want and self.sub_command is None:
            self.motors_off = False         # unknown until the first command arrives
            self.sub_command = self.node.create_subscription(
                AircraftEffectorCommand, f'{self.ns}effector_command', self.on_command,
                qos.SENSOR_SUB)
        elif not want and self.sub_command is not None:
            self.node.destroy_subscription(self.sub_command)
            self.sub_command = None

    def on_command(self, msg: AircraftEffectorCommand):
        """Note whether every motor is stopped."""
        self.motors_off = not any(x > 0.0 for x in msg.throttle_cmd)

    def on_link(self, msg: MavlinkLinkStatus):
        """The vehicle's bridge: its FC heard, gone, or refusing to fly."""
        node = self.node
        if node.finished is not None:
            return
        name = self.member.name
        if msg.fc_failure:
            if node.world.fc_refused(self.i, msg.fc_failure):
                node.get_logger().error(f'[t={node.world.t:7.2f} s] {name}: the flight '
                                        f'controller will not fly: {msg.fc_failure}')
                node.check_over()
            return
        if any(is_flight_controller(p.mav_type, p.autopilot) for p in msg.peers):
            self.fc_heard = True
        elif self.fc_heard and node.world.fc_lost(self.i, node.world.t):
            node.get_logger().warning(
                f'[t={node.world.t:7.2f} s] {name}: its flight controller is gone (no '
                "HEARTBEAT within the bridge's peer timeout): not judged further; the others "
                'go on')
            node.check_over()


class WorldReport(Node):
    """Ground-truth judge of every vehicle of a world, and the report writer."""

    def __init__(self):
        """Declare parameters, build the judges, subscribe."""
        super().__init__('world_report')
        cfg = read_config(self, WorldReportConfig, WORLD_REPORT_PARAMETERS)
        self.scenario = load_scenario(cfg.scenario_file)
        self.max_sim_s, self.sample_hz = cfg.max_sim_s, cfg.sample_rate_hz
        self.out_dir, self.title = Path(cfg.output_dir), cfg.title
        self.members = world_members(self.scenario, cfg.vehicles)
        # each kind's judge: the kind registry's (sim_world.core.kinds)
        self.world = WorldJudge(self.members, {k: e.world_judge for k, e in REGISTRY.items()},
                                same_time_s=1.5 / self.sample_hz)
        self.finished: Optional[int] = None
        self.status: Optional[SimStatus] = None
        self._wall0: Optional[float] = None
        self.follows: List[Follow] = [Follow(self, m) for m in self.members]
        self.create_subscription(Collision, '/sim/collisions', self._on_collision, 100)
        self.create_subscription(DeckContact, '/sim/deck_contacts', self._on_deck, 100)
        self.create_subscription(SimStatus, '/sim/status', self._on_status, qos.LATCHED)
        preload_plotting()
        self.get_logger().info(
            f'judging the {len(self.members)} vehicles of {self.scenario.name} on ground '
            'truth, each by its kind: ' + ', '.join(
                f'{m.name} ({m.kind.value}, {m.controller}, {len(m.scenario.mission)} items)'
                for m in self.members) + f'; giving up at {self.max_sim_s:g} s sim')

    def _on_status(self, msg: SimStatus):
        self.status = msg

    def clock_seen(self, t: float):
        """A sample of sim time t [s] arrived (the run's wall clock starts at the first)."""
        if self._wall0 is None:
            self._wall0 = time.monotonic()

    def sample(self, follow: Follow, t: float, p, v_enu, q):
        """A ground-truth sample of a vehicle: judged; the run ends when every one is over."""
        j = self.world.entries[follow.i].judge
        n = len(j.reached_at_s)
        self.world.feed(follow.i, t, p, v_enu, q, follow.motors_off)
        if len(j.reached_at_s) > n:
            it = follow.member.scenario.mission[n]
            self.get_logger().info(f'[t={t:7.2f} s] truth: {follow.member.name} item {n} '
                                   f'({it.command}) reached')
        if t >= self.max_sim_s:
            self.finish()
        else:
            self.check_over()

    def _on_collision(self, msg: Collision):
        if self.finished is not None:
            return
        t = time_ns(msg.header.stamp) * 1e-9
        hit = self.world.contact(t, msg.vehicle, msg.other, msg.closing_speed)
        self.get_logger().warning(
            f'[t={t:7.2f} s] collision: {msg.vehicle} and {msg.other} at '
            f'{msg.closing_speed:.1f} m/s' + (f': {" and ".join(hit)} collided' if hit else
                                              ' (not a vehicle of this world)'))
        self.check_over()

    def _on_deck(self, msg: DeckContact):
        """A touchdown on, lift-off from or slide off a deck: the vehicle's judge."""
        if self.finished is not None:
            return
        t = time_ns(msg.header.stamp) * 1e-9
        self.world.deck_event(t, msg.vehicle, msg.deck, msg.event, msg.normal_speed,
                              (msg.pad_x, msg.pad_y))
        self.get_logger().info(
            f'[t={t:7.2f} s] {msg.vehicle} {msg.event} on the deck of {msg.deck}'
            + (f': {msg.normal_speed:.2f} m/s down, {math.hypot(msg.pad_x, msg.pad_y):.2f} m '
               'from the pad centre' if msg.event == 'touchdown' else ''))
        self.check_over()

    def check_over(self):
        """Finish once every vehicle is over."""
        if self.finished is None and self.world.over:
            self.finish()

    def finish(self):
        """Write the summary and the plot; remember the exit code."""
        if self.finished is not None:
            return
        wall_s = time.monotonic() - (self._wall0 or time.monotonic())
        s = self.world.summary(wall_s)
        st = self.status
        if st is not None:
            s.update(steps=st.steps, late_steps=st.late_steps,
                     lockstep_timeouts=st.lockstep_timeouts, time_scale=st.time_scale)
        js, png = write_summary(self.out_dir, self.title, s,
                                lambda path: self.world.plot(path, self.title))
        log = self.get_logger()
        for name, v in s['vehicles'].items():
            ca = v['closest_approach']
            log.info(f'SUMMARY {name} ({v["kind"]}, {v["controller"]}): {v["result"]}, '
                     f'{v["items_reached"]}/{v["items"]} items, {len(v["collisions"])} '
                     'collisions' + (f', closest {ca["distance_m"]} m to {ca["with"]}'
                                     if ca else '')
                     + (f', FC lost at {v["fc_lost_at_s"]:.1f} s'
                        if v['fc_lost_at_s'] is not None else ''))
        log.info(f'SUMMARY world: {s["result"]}, {s["vehicles_complete"]}/{s["vehicle_count"]} '
                 f'vehicles complete, {s["sim_time_s"]} s sim in {s["wall_time_s"]} s wall '
                 f'(real-time factor {s["real_time_factor"]}); wrote {js} and {png}')
        self.finished = 0 if self.world.done else 1


def main(args=None):
    """Run world_report until every vehicle is judged; exit 0 if all are complete."""
    run_node(WorldReport, 'world_report', args, body=until_finished)


if __name__ == '__main__':
    main()
