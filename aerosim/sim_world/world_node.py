"""world_node: the simulator. One world of any mix of kinds on one clock, and its judge.

The scenario's vehicles (sim_core.members: quads, planes, boats, AUVs, each with its
controller) are stepped together by a World (sim_world.core.world): every model at the node's
rate, the in-process controllers (a plane's autopilot, a boat's waypoint follower, an AUV's
pilot) inside the step, one contact model over every pair of any kinds, ground and water
impacts. The node is a SimTimeNode (sim_ros.sim_time_node: pacing, lockstep, /clock,
/sim/status, /sim/* services) and a Plant (sim_ros.plant): the vehicles flown over MAVLink
are served by bridges of the same process (sim_world.world_plant), each answering through its
member's ``answer``; run alone (composition:=split), each takes /<name>/effector_command
from its bridge in another process, as a vehicle flown by any ROS node (controller topic)
always does. A vehicle flown over IMC takes /<name>/effector_command and autopilot_command
from its imc_bridge (sim_world.world_inputs).

Per vehicle, in /<name>/: vehicle_state every step, odom and actor_state at odom_rate_hz
(ENU/FLU; the body frame base_link, or <name>/base_link in a world of several), and its
kind's own topics and parameters (sim_world.member_io: a plane's PFD and autopilot, a boat's
holds). /sim/collisions: every contact between two vehicles and every impact on the ground or
the water; /sim/deck_contacts: touchdowns on, lift-offs from and slides off a deck. The run's
judge (sim_world.judge_io) is fed by the step itself.

Lockstep: one FleetGate member per vehicle answering from outside the step (MAVLink, or
controller topic: Member.answers); the in-process controllers are never waited for.
"""

from typing import Tuple

from aerosim_msgs.msg import Collision, DeckContact
from kinds.entry import make_controller, make_model
from sim_core.errors import ConfigError
from sim_core.members import Member, world_members
from sim_core.scenario import load_scenario
from sim_ros import qos
from sim_ros.convert import set_vec3, time_msg
from sim_ros.params import read_config
from sim_ros.plant import PlantMember
from sim_ros.run import run_node, until_judged
from sim_ros.sim_time_node import SimTimeNode
from sim_ros.vehicle_pub import VehicleStatePublisher
from sim_world.core.decks import DeckEvent
from sim_world.core.links import LINK_PARAMETERS, LinkBase
from sim_world.core.node_io import collision_text, deck_text, members_text
from sim_world.core.params import PARAMETERS, WorldConfig
from sim_world.core.world import Event, World, open_water
from sim_world.judge_io import RunJudge
from sim_world.member_io import member_io
from sim_world.world_inputs import WorldInputs


class WorldNode(WorldInputs, SimTimeNode):
    """Fixed-step world of several vehicles of any kinds, the sim clock and the judge."""

    fleet = True            # sim_ros.plant.Plant: every vehicle in its own namespace

    def __init__(self, direct_commands: bool = False, **node_kw):
        """Declare parameters, build the members, their models and the world, the topics.

        direct_commands: the MAVLink vehicles' commands come through their plant member's
        answer from bridges of the same process (world_plant); otherwise each takes
        /<name>/effector_command (a bridge in another process). node_kw: rclpy's Node
        keywords (context=, parameter_overrides=, ...), as every time source takes them.
        """
        super().__init__('world_node', default_rate_hz=250.0, scenario='harbour_ops',
                         **node_kw)
        self.wcfg = wcfg = read_config(self, WorldConfig, PARAMETERS)
        self.fleet_start_timeout_s = wcfg.fleet_start_timeout_s
        self.link_base: LinkBase = read_config(self, LinkBase, LINK_PARAMETERS)
        cfg = self.cfg
        self.scenario = load_scenario(cfg.scenario_file)
        self.members: Tuple[Member, ...] = world_members(
            self.scenario, wcfg.vehicles, wcfg.vehicle_namespace, wcfg.controller)
        try:
            self.world = World.build(self.members, make_model, make_controller,
                                     open_water if self.scenario.environment.surface == 'water'
                                     else None)
        except ValueError as exc:       # a start on a deck, a landing on one: not possible
            raise ConfigError(f'scenario {self.scenario.name}: {exc}') from None
        self.models = [b.model for b in self.world.bodies]       # world order
        self.controllers = [b.controller for b in self.world.bodies]
        one = len(self.members) == 1
        self.outs = [VehicleStatePublisher(
            self, cfg.world_frame_id,
            cfg.body_frame_id if one else f'{m.name}/{cfg.body_frame_id}', f'/{m.name}/')
            for m in self.members]
        # lockstep member k: the vehicle answering from outside the step with answers k
        self.answering = sorted((m for m in self.members if m.answers >= 0),
                                key=lambda m: m.answers)
        self.collisions = 0
        self.pub_collision = self.create_publisher(Collision, '/sim/collisions', qos.COMMAND)
        self._msg_collision = Collision()
        self._msg_collision.header.frame_id = cfg.world_frame_id
        self.pub_deck = self.create_publisher(DeckContact, '/sim/deck_contacts', qos.COMMAND)
        self._msg_deck = DeckContact()
        self._msg_deck.header.frame_id = cfg.world_frame_id
        self._direct = direct_commands
        self.judge = RunJudge(self)
        self.io = [member_io(self, m) for m in self.members]
        self._subscribe_inputs(direct_commands)
        if self.answering:
            self._set_members(len(self.answering))
        self._reset_model()
        self._start_time()
        # As fast as possible a vehicle flown over a topic would fly, unanswered, until its
        # controller's publisher matched (5 s of sim went by in a fraction of a second, and
        # the judge said nothing flies it): t = 0 waits for it, as for an FC (hold_start)
        self._topic_held = cfg.time_scale == 0.0 and cfg.lockstep and any(
            m.over_topic for m in self.members)
        if self._topic_held:
            self.hold_start(lambda: [], 0.0)
        self.get_logger().info(f'world of {len(self.members)}: {members_text(self.members)}; '
                               f'scenario {self.scenario.name}; {self.describe_time()}')

    def nodes(self) -> tuple:
        """This node and the nodes of its vehicles' own (member_io), to spin together."""
        return (self,) + tuple(n for io in self.io for n in io.nodes)

    def hold_start(self, missing, timeout_s: float) -> None:
        """SimTimeNode.hold_start, and as fast as possible the topic controllers too.

        A vehicle flown over a topic is ready once its controller publishes one of its
        command topics (/<name>/..._command, any of them); at most readers_timeout_s.
        """
        if getattr(self, '_topic_held', False):
            fn = missing

            def missing():
                return self._topic_controllers_missing() + list(fn())
            timeout_s = max(timeout_s, self.readers_timeout_s)
        super().hold_start(missing, timeout_s)

    def _topic_controllers_missing(self) -> list:
        """The vehicles flown over a topic whose command topics have no publisher yet."""
        out = []
        for m in self.members:
            if not m.over_topic:
                continue
            mine = [sub.topic_name for n in self.nodes() for sub in n.subscriptions
                    if sub.topic_name.startswith(f'/{m.name}/')
                    and sub.topic_name.endswith('_command')]
            if not any(self.count_publishers(t) for t in mine):
                out.append(f'/{m.name} (no controller on ' + ', '.join(sorted(mine)) + ')')
        return out

    # --- sim_ros.plant.Plant -------------------------------------------------------------------
    def plant_members(self) -> Tuple[PlantMember, ...]:
        """Every vehicle, in world order, each answered by apply_command.

        Those flown over MAVLink have their link (>= 0): a composition gives them a bridge.
        """
        return tuple(PlantMember(m.index, m.name, m.kind, m.link,
                                 lambda cmd, t_ns, i=m.index: self.apply_command(cmd, t_ns, i))
                     for m in self.members)

    def member_name(self, member: int) -> str:
        """The namespace of lockstep member member."""
        return '/' + self.answering[member].name

    # --- model hooks ---------------------------------------------------------------------------
    def _reset_model(self):
        self.world.reset()
        for io in self.io:
            io.reset()

    def deck_poses(self) -> list:
        """The world's decks now: (DeckSpec, PadPose) pairs (a bridge's downward sensors)."""
        d = self.world.decks
        return [(d.decks[k], pose) for k, pose in d.poses.items()]

    def _integrate(self, dt: float):
        for event in self.world.step(dt, self.clock.t_ns):
            self._report(event)
        for de in self.world.deck_events:
            self._report_deck(de)
        for m, c in zip(self.members, self.controllers):
            if c is not None and c.log:
                for t, text in c.log:
                    self.get_logger().info(f'/{m.name} {m.controller}: [t = {t:.2f} s] {text}')
                c.log.clear()
        self.judge.on_step(self.clock.t_ns, self.world.samples, self.models)

    def state_arrays(self, member: int = 0):
        """The VehicleSample of vehicle member (world index) at the current step."""
        return self.world.samples[member]

    def _publish_state(self, stamp):
        odom = self._odom_due()
        t_ns = self.clock.t_ns
        for i, out in enumerate(self.outs):
            out.publish(stamp, self.state_arrays(i), self.models[i].angular_acceleration_flu(),
                        odom)
            self.io[i].publish(stamp, t_ns)

    def _report(self, event: Event):
        """Publish and log a contact or impact of the world (aerosim_msgs/Collision)."""
        self.collisions += 1
        m = self._msg_collision
        m.header.stamp = time_msg(event.t_ns)
        m.vehicle, m.other = event.vehicle, event.other
        m.closing_speed = float(event.closing_speed)
        set_vec3(m.position, event.point)
        self.pub_collision.publish(m)
        self.get_logger().warning(collision_text(event, self.collisions))
        self.judge.event(event.t_ns, event.vehicle, event.other, float(event.closing_speed))

    def _report_deck(self, e: DeckEvent):
        """Publish and log a touchdown on, lift-off from or slide off a deck."""
        m = self._msg_deck
        m.header.stamp = time_msg(e.t_ns)
        m.vehicle, m.deck, m.event = e.vehicle, e.deck, e.what
        set_vec3(m.relative_velocity, e.rel_v_enu)
        m.normal_speed = float(e.normal_speed)
        m.pad_x, m.pad_y = float(e.pad_xy[0]), float(e.pad_xy[1])
        set_vec3(m.position, e.point)
        self.pub_deck.publish(m)
        self.get_logger().info(deck_text(e))
        self.judge.deck_event(e)


def compose_alone() -> tuple:
    """The world node alone (its MAVLink vehicles' bridges in other processes) and its own."""
    return WorldNode().nodes()


def main(args=None):
    """Run world_node (composition:=split): until its judge ends the run, or Ctrl-C."""
    run_node(compose_alone, 'world_node', args, body=until_judged)


if __name__ == '__main__':
    main()
