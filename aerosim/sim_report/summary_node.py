"""summary_node: samples a run and writes its summary (JSON + PNG) when the run stops.

mode:=vehicle follows `odom` and judges the vehicle by its kind's judge (sim_world.core.kinds):
a multirotor against its scenario's mission (sim_report.core.mission.MissionJudge: top and side
views flown vs planned, altitude, speed and tracking error over time), a plane its circuit
(sim_report.core.plane.PlaneJudge, with the airspeed and attitude of `flight_display`), a boat
its waypoints (sim_report.core.boats.BoatWaypointJudge: its track and speed). mode:=swarm
follows `state` (SwarmState): every boat's track on the map with obstacles and bounds, health
over time. A fleet of quads (vehicles >= 2): each vehicle's /<prefix><i>/odom is judged
against its own mission, /sim/collisions noted (sim_report.core.fleet), one plot for all.
Files: <output_dir>/<title>_summary.json and <title>.png, written on SIGINT/SIGTERM (the end
of `aerosim launch` / `ros2 launch`) or when the node is destroyed.
"""

import json
import math
from pathlib import Path

from nav_msgs.msg import Odometry
from rclpy.node import Node
from sim_world.core.kinds import REGISTRY, entry

from aerosim_msgs.msg import Collision, DeckContact, PrimaryFlightDisplayData, SwarmState
from sim_core.decimator import Decimator
from sim_core.fleet import fleet_size, member_name, member_scenarios
from sim_core.frames import quat_rotate
from sim_core.members import world_members
from sim_core.scenario import kinds_in, load_scenario
from sim_dynamics.core.swarm_config import load_swarm_config
from sim_dynamics.core.usv_swarm import TypeTable
from sim_report.core import boats
from sim_report.core.fleet import FleetJudge
from sim_report.core.mission import MissionJudge, preload_plotting
from sim_report.core.output import report_paths, write_summary
from sim_report.core.params import (
    SUMMARY_FLEET_PARAMETERS,
    SUMMARY_PARAMETERS,
    SUMMARY_SWARM_PARAMETERS,
    SummaryConfig,
)
from sim_report.core.plane import PlaneJudge, PlaneSample
from sim_report.core.world import WorldJudge
from sim_ros import qos
from sim_ros.convert import time_ns
from sim_ros.params import read_config
from sim_ros.run import run_node, until_stopped
from sim_viz.core import scene
from sim_viz.core.params import (
    MAX_BOATS,
    MODE_PARAMETERS,
    FleetConfig,
    ModeConfig,
    SwarmFilesConfig,
)


class SummaryNode(Node):
    """Samples the run on message stamps; writes the summary at the end."""

    # destroy_node() may run on a half-built node (rclpy's context shutdown destroys every
    # node it made, also one whose __init__ raised): it then has nothing to write
    _built = False
    written = None
    _sampling = False

    def __init__(self):
        """Declare parameters, subscribe."""
        super().__init__('summary_node')
        self.mode = read_config(self, ModeConfig, MODE_PARAMETERS).mode
        cfg = read_config(self, SummaryConfig, SUMMARY_PARAMETERS)
        self.out_dir, self.title = Path(cfg.output_dir), cfg.title
        self.sample_hz, self.max_boats = cfg.sample_rate_hz, cfg.max_boats
        self.dec = Decimator(self.sample_hz)
        self.judge = self.track = self.smap = self.plane = self._pfd = self.fleet = None
        self.world = None
        self.tracks = {}
        self.collisions = 0
        self.written = None
        if self.mode == 'vehicle':
            fleet = read_config(self, FleetConfig, SUMMARY_FLEET_PARAMETERS)
            sc = load_scenario(fleet.scenario_file)
            n = fleet_size(sc, fleet.vehicles)
            if len(kinds_in(sc)) > 1:       # a world of several kinds: each by its kind
                self._init_world(world_members(sc, fleet.vehicles))
            elif n > 1:
                names = [member_name(fleet.vehicle_prefix, i) for i in range(n)]
                self.fleet = FleetJudge(names, member_scenarios(sc, n))
                self._fleet_decs = [Decimator(self.sample_hz) for _ in names]
                for i, name in enumerate(names):
                    self.create_subscription(Odometry, f'/{name}/odom',
                                             lambda msg, i=i: self._on_member(msg, i),
                                             qos.SENSOR_SUB)
                self.create_subscription(Collision, '/sim/collisions', self._on_collision, 100)
            else:
                # the vehicle's kind's judge (sim_world.core.kinds), on the scenario as it sees it
                judge = entry(sc.vehicle_kind).judge(member_scenarios(sc, 1)[0])
                if isinstance(judge, PlaneJudge):
                    self.plane = judge          # fed airspeed and attitude from the PFD too
                    self.create_subscription(PrimaryFlightDisplayData, 'flight_display',
                                             self._on_pfd, qos.SENSOR_SUB)
                elif isinstance(judge, MissionJudge):
                    self.judge = judge
                else:
                    self.track = judge          # fed ground truth (feed), e.g. a boat's
            if n == 1 and self.world is None:
                self.create_subscription(Odometry, 'odom', self._on_odom, qos.SENSOR_SUB)
        else:
            files = read_config(self, SwarmFilesConfig, SUMMARY_SWARM_PARAMETERS)
            types = TypeTable.load(files.types_file)
            init, _ = load_swarm_config(files.sim_config, types.boats, types.obstacles,
                                        MAX_BOATS)
            self.smap = scene.swarm_map(init, types)
            self.create_subscription(SwarmState, 'state', self._on_swarm, qos.SENSOR_SUB)
        preload_plotting()
        self.get_logger().info(f'summarizing the run ({self.mode}); written to '
                               f'{self.out_dir}/{self.title}.png when it stops')
        self._built = True

    def _init_world(self, members):
        """Each vehicle of a world of several kinds (sim_world) judged by its kind's judge.

        As world_report judges them (sim_report.core.world.WorldJudge), in their namespaces
        /<name>/ (quad0, plane0, boat0): not as a fleet of quads named <vehicle_prefix><i>.
        """
        self.world = WorldJudge(members, {k: e.world_judge for k, e in REGISTRY.items()},
                                same_time_s=1.5 / self.sample_hz)
        self._fleet_decs = [Decimator(self.sample_hz) for _ in members]
        for i, m in enumerate(members):
            self.create_subscription(Odometry, f'/{m.name}/odom',
                                     lambda msg, i=i: self._on_member(msg, i), qos.SENSOR_SUB)
        self.create_subscription(Collision, '/sim/collisions', self._on_collision, 100)
        self.create_subscription(DeckContact, '/sim/deck_contacts', self._on_deck, 100)

    def _first_sample(self, t_ns: int):
        """Say once when the first sample of the run arrives (subscribed and matched)."""
        self._sampling = True
        self.get_logger().info(f'first sample at sim t = {t_ns * 1e-9:.3f} s')

    def _on_pfd(self, msg: PrimaryFlightDisplayData):
        self._pfd = msg

    def _on_odom(self, msg: Odometry):
        t_ns = time_ns(msg.header.stamp)
        if not self.dec.due(t_ns):
            return
        if not self._sampling:
            self._first_sample(t_ns)
        p, v = msg.pose.pose.position, msg.twist.twist.linear
        speed = math.sqrt(v.x * v.x + v.y * v.y + v.z * v.z)
        if self.judge is not None:
            self.judge.add(t_ns * 1e-9, (p.x, p.y, p.z), speed)
        elif self.plane is not None:
            f = self._pfd
            if f is not None:
                self.plane.add(PlaneSample(t_ns * 1e-9, (p.x, p.y, p.z), f.airspeed_kts,
                                           f.roll_deg, f.pitch_deg, f.heading_deg))
        else:
            q = msg.pose.pose.orientation   # odom's twist is in the body frame (REP-105)
            self.track.feed(t_ns * 1e-9, (p.x, p.y, p.z),
                            quat_rotate((q.w, q.x, q.y, q.z), (v.x, v.y, v.z)))

    def _on_member(self, msg: Odometry, i: int):
        """A fleet vehicle's ground truth."""
        t_ns = time_ns(msg.header.stamp)
        if not self._fleet_decs[i].due(t_ns):
            return
        if not self._sampling:
            self._first_sample(t_ns)
        p, v = msg.pose.pose.position, msg.twist.twist.linear
        if self.world is not None:
            o = msg.pose.pose.orientation   # odom's twist is in the body frame (REP-105)
            q = (o.w, o.x, o.y, o.z)
            self.world.feed(i, t_ns * 1e-9, (p.x, p.y, p.z), quat_rotate(q, (v.x, v.y, v.z)), q)
            return
        self.fleet.add(i, t_ns * 1e-9, (p.x, p.y, p.z), math.sqrt(v.x * v.x + v.y * v.y
                                                                    + v.z * v.z))

    def _on_collision(self, msg: Collision):
        (self.fleet or self.world).contact(time_ns(msg.header.stamp) * 1e-9, msg.vehicle,
                                           msg.other, msg.closing_speed)

    def _on_deck(self, msg: DeckContact):
        self.world.deck_event(time_ns(msg.header.stamp) * 1e-9, msg.vehicle, msg.deck,
                              msg.event, msg.normal_speed, (msg.pad_x, msg.pad_y))

    def _on_swarm(self, msg: SwarmState):
        t_ns = time_ns(msg.header.stamp)
        if not self.dec.due(t_ns):
            return
        if not self._sampling:
            self._first_sample(t_ns)
        self.collisions = msg.collisions
        for i in range(min(len(msg.id), self.max_boats)):
            bid = int(msg.id[i])
            tr = self.tracks.get(bid)
            if tr is None:
                tr = self.tracks[bid] = boats.BoatTrack(team=int(msg.team[i]))
            tr.alive = msg.status[i] != 0
            tr.add(t_ns * 1e-9, msg.x_east_m[i], msg.y_north_m[i],
                   math.hypot(msg.speed_forward[i], msg.speed_lateral[i]), msg.health[i])

    def write(self) -> dict:
        """Write the JSON summary and the PNG (idempotent); return the summary."""
        if self.written is not None:
            return self.written
        png = str(report_paths(self.out_dir, self.title)[1])
        if self.judge is not None or self.fleet is not None or self.world is not None:
            judge = self.judge or self.fleet or self.world
            s = judge.summary(0.0)
            for k in ('wall_time_s', 'real_time_factor'):
                s.pop(k, None)
            judge.plot(png, self.title)
        elif self.plane is not None:
            s = self.plane.summary()
            self.plane.plot(png, self.title)
        elif self.track is not None:
            s = self.track.summary()
            self.track.plot(png, self.title)
        else:
            s = boats.plot_swarm(self.tracks, self.smap, self.collisions, png, self.title)
        write_summary(self.out_dir, self.title, s)
        self.get_logger().info(f'SUMMARY {json.dumps(s)[:300]}; wrote {png}')
        self.written = s
        return s

    def destroy_node(self):
        """Write the summary (if the node was built), then destroy."""
        try:
            if self._built:
                self.write()
        except Exception as exc:  # noqa: BLE001 - a failed plot must not hide the run's end
            self.get_logger().error(f'summary not written: {exc}')
        return super().destroy_node()


def main(args=None):
    """Run summary_node until SIGINT/SIGTERM, then write the summary."""
    def body(node):
        until_stopped(node)
        node.write()
    run_node(SummaryNode, 'summary_node', args, body=body)


if __name__ == '__main__':
    main()
