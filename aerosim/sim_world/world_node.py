"""world_node: one world of any mix of kinds on one clock (the time source of sim_world).

The scenario's vehicles (sim_core.members: quads, planes, boats, each with its controller)
are stepped together by a World (sim_world.core.world): every model at the node's rate,
the in-process controllers (a plane's autopilot, a boat's waypoint follower) inside the step,
one contact model over every pair of any kinds, ground impacts of air vehicles. The node is a
SimTimeNode (sim_ros.sim_time_node: pacing, lockstep, /clock, /sim/status, /sim/* services)
and a Plant (sim_ros.plant): the vehicles flown over MAVLink (a quad's built-in FC, PX4 or an
external FC; a plane's built-in FC or PX4) are served by bridges of the same process
(sim_world.world_plant), each answering through its member's ``answer``; run alone
(world_node), each takes /<name>/effector_command from a bridge in another process.

Per vehicle, in /<name>/ (quad0, quad1, plane0, boat0): vehicle_state every step, odom and
actor_state at odom_rate_hz (ENU/FLU). /sim/collisions (aerosim_msgs/Collision): every
contact between two vehicles (each new touching pair once) and every impact of a vehicle on
the ground or the water, each also a warning on the log.

Lockstep: one FleetGate member per MAVLink vehicle (its link index); the in-process
controllers answer inside the step and are never waited for. A boat flown over IMC
(controller imc: an imc_bridge in /<name> driven by DUNE) takes /<name>/effector_command and
/<name>/autopilot_command as usv_node does.
"""

from typing import Tuple

from aerosim_msgs.msg import AircraftEffectorCommand, AutopilotCommand, Collision, DeckContact
from sim_core.clock import SimState
from sim_core.errors import ConfigError
from sim_core.kinds import VehicleKind
from sim_core.members import Member, world_members
from sim_core.scenario import load_scenario
from sim_core.validate import FieldError
from sim_dynamics.core.plane import EffectorCommand
from sim_ros import qos
from sim_ros.convert import set_vec3, time_msg, time_ns
from sim_ros.params import read_config
from sim_ros.plant import Command, PlantMember
from sim_ros.run import run_node
from sim_ros.sim_time_node import SimTimeNode, serialized
from sim_ros.vehicle_pub import VehicleStatePublisher
from sim_world.core.decks import DeckEvent
from sim_world.core.kinds import IMC, entry, make_controller, make_model
from sim_world.core.node_io import collision_text, deck_text, imc_holds, members_text
from sim_world.core.params import LINK_PARAMETERS, PARAMETERS, LinkBase, WorldConfig
from sim_world.core.world import Event, World, open_water


class WorldNode(SimTimeNode):
    """Fixed-step world of several vehicles of any kinds, and the sim clock."""

    fleet = True            # sim_ros.plant.Plant: every vehicle in its own namespace

    def __init__(self, direct_commands: bool = False):
        """Declare parameters, build the members, their models and the world, the topics.

        direct_commands: the MAVLink vehicles' commands come through their plant member's
        answer from bridges of the same process (world_plant); otherwise each takes
        /<name>/effector_command (a bridge in another process).
        """
        super().__init__('world_node', default_rate_hz=250.0, scenario='harbour_ops')
        wcfg = read_config(self, WorldConfig, PARAMETERS)
        self.fleet_start_timeout_s = wcfg.fleet_start_timeout_s
        self.link_base: LinkBase = read_config(self, LinkBase, LINK_PARAMETERS)
        cfg = self.cfg
        self.scenario = load_scenario(cfg.scenario_file)
        self.members: Tuple[Member, ...] = world_members(self.scenario, wcfg.vehicles)
        try:
            self.world = World.build(self.members, make_model, make_controller,
                                     open_water if self.scenario.environment.surface == 'water'
                                     else None)
        except ValueError as exc:       # a start on a deck, a landing on one: not possible
            raise ConfigError(f'scenario {self.scenario.name}: {exc}') from None
        self.models = [b.model for b in self.world.bodies]       # world order
        self.controllers = [b.controller for b in self.world.bodies]
        self.outs = [VehicleStatePublisher(self, cfg.world_frame_id,
                                           f'{m.name}/{cfg.body_frame_id}', f'/{m.name}/')
                     for m in self.members]
        # lockstep member k: the vehicle of MAVLink link k
        self.linked = sorted((m for m in self.members if m.over_mavlink), key=lambda m: m.link)
        self.collisions = 0
        self.pub_collision = self.create_publisher(Collision, '/sim/collisions', qos.COMMAND)
        self._msg_collision = Collision()
        self._msg_collision.header.frame_id = cfg.world_frame_id
        self.pub_deck = self.create_publisher(DeckContact, '/sim/deck_contacts', qos.COMMAND)
        self._msg_deck = DeckContact()
        self._msg_deck.header.frame_id = cfg.world_frame_id
        for m in self.members:
            if entry(m.kind).controllers[m.controller].link == IMC:
                self._subscribe_imc(m)
        self._direct = direct_commands
        if not direct_commands:
            for m in self.linked:
                self.create_subscription(
                    AircraftEffectorCommand, f'/{m.name}/effector_command',
                    lambda msg, i=m.index: self._on_effector(msg, i), qos.COMMAND)
        if self.linked:
            self._set_members(len(self.linked))
        self._reset_model()
        self._start_time()
        self.get_logger().info(f'world of {len(self.members)}: {members_text(self.members)}; '
                               f'scenario {self.scenario.name}; {self.describe_time()}')

    # --- sim_ros.plant.Plant -------------------------------------------------------------------
    def plant_members(self) -> Tuple[PlantMember, ...]:
        """Every vehicle, in world order, each answered by apply_command.

        Those flown over MAVLink have their link (>= 0): a composition gives them a bridge.
        """
        return tuple(PlantMember(m.index, m.name, m.kind, m.link,
                                 lambda cmd, t_ns, i=m.index: self.apply_command(cmd, t_ns, i))
                     for m in self.members)

    def member_name(self, member: int) -> str:
        """The namespace of lockstep member (MAVLink link) member."""
        return '/' + self.linked[member].name

    # --- model hooks ---------------------------------------------------------------------------
    def _reset_model(self):
        self.world.reset()

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

    def state_arrays(self, member: int = 0):
        """The VehicleSample of vehicle member (world index) at the current step."""
        return self.world.samples[member]

    def _publish_state(self, stamp):
        odom = self._odom_due()
        for i, out in enumerate(self.outs):
            out.publish(stamp, self.state_arrays(i), self.models[i].angular_acceleration_flu(),
                        odom)

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

    # --- inputs --------------------------------------------------------------------------------
    @serialized
    def apply_command(self, cmd: Command, stamp_ns: int, member: int) -> None:
        """Take the command of vehicle member (world index) answering the state of stamp_ns.

        Checked by its model (VehicleModel.apply_command: a quad's throttles, a plane's
        EffectorCommand); a refusal is counted and logged. In lockstep the answer completing
        the awaited step integrates the next step(s). Safe from any thread and from a state
        listener.
        """
        if self.clock.state != SimState.RUNNING:
            return
        m = self.members[member]
        try:
            self.models[member].apply_command(cmd)      # its kind's check (VehicleModel)
        except FieldError as exc:
            return self._reject(f'/{m.name} command', str(exc))
        self._answered(stamp_ns, m.link)

    def _on_effector(self, msg: AircraftEffectorCommand, i: int):
        """A MAVLink vehicle's command from a bridge in another process."""
        if self.members[i].kind == VehicleKind.PLANE:
            cmd: Command = EffectorCommand(
                msg.throttle_cmd, msg.aileron_cmd_angle_rad, msg.elevator_cmd_angle_rad,
                msg.rudder_cmd_angle_rad, msg.thrust_tilt_cmd_angle_rad, msg.flap_cmd_angle_rad,
                msg.speedbrake_cmd_angle_rad, msg.landing_gear_cmd,
                msg.wheel_steer_cmd_angle_rad, msg.wheel_brake_cmd)
        else:
            cmd = list(msg.throttle_cmd)
        self.apply_command(cmd, time_ns(msg.header.stamp), i)

    def _subscribe_imc(self, m: Member):
        """A vehicle flown from outside over IMC (imc_bridge in /<name>): its command topics.

        effector_command goes to its model's effector() (a boat: throttle and rudder; an
        AUV: thruster and fins), autopilot_command to its holds() (a boat's heading and
        speed; an AUV refuses them).
        """
        i = m.index
        self.create_subscription(AircraftEffectorCommand, f'/{m.name}/effector_command',
                                 lambda msg: self._on_imc_effector(msg, i), qos.COMMAND)
        self.create_subscription(AutopilotCommand, f'/{m.name}/autopilot_command',
                                 lambda msg: self._on_imc_autopilot(msg, i), qos.COMMAND)

    @serialized
    def _on_imc_effector(self, msg: AircraftEffectorCommand, i: int):
        """throttle_cmd[0] in [-1, 1]; rudder (AeroSim: + bow to port) and elevator angles."""
        try:
            self.models[i].effector(msg.throttle_cmd, msg.rudder_cmd_angle_rad,
                                    msg.elevator_cmd_angle_rad)
        except (FieldError, ValueError) as exc:
            return self._reject(f'/{self.members[i].name} effector_command', str(exc))

    @serialized
    def _on_imc_autopilot(self, msg: AutopilotCommand, i: int):
        """heading_hold + heading_setpoint_deg, airspeed_hold + airspeed_setpoint_kts [kn]."""
        what = f'/{self.members[i].name} autopilot_command'
        try:
            self.models[i].holds(*imc_holds(msg.heading_hold, msg.heading_setpoint_deg,
                                            msg.airspeed_hold, msg.airspeed_setpoint_kts))
        except (FieldError, ValueError) as exc:
            return self._reject(what, str(exc))


def main(args=None):
    """Run world_node (the MAVLink vehicles' bridges in other processes: effector_command)."""
    run_node(WorldNode, 'world_node', args)


if __name__ == '__main__':
    main()
