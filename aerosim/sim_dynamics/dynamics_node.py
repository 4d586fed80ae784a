"""dynamics_node: owns simulation time and integrates the multirotor model.

Publishes /clock, vehicle_state (aerosim_msgs/VehicleState), odom (nav_msgs/Odometry) every
step and /sim/status (latched); serves /sim/pause, /sim/step, /sim/reset, /sim/set_time_scale;
subscribes effector_command (aerosim_msgs/AircraftEffectorCommand).
This node is the time source (sim_ros.sim_time_node.SimTimeNode: pacing, lockstep,
services, status): it runs on the steady wall clock, never with use_sim_time.

Composition (mavlink_bridge.hil_plant): a Plant (sim_ros.plant): another node of the same
process may take the state of every step directly (``add_state_listener``, called before the
topics are published) and answer with its member's ``answer`` (``apply_command``) instead of
the effector_command topic; the lockstep loop then needs no middleware hop. Stepping is
serialized by a lock: the answer may come from another thread than the executor's.
"""

from dataclasses import dataclass
import math
from typing import Tuple

from sim_world.core.kinds import require_kind

from aerosim_msgs.msg import AircraftEffectorCommand, Collision
from sim_core.clock import SimState
from sim_core.fleet import fleet_size, member_name, member_scenarios
from sim_core.frames import VehicleSample
from sim_core.kinds import VehicleKind
from sim_core.paths import resolve_config_path
from sim_core.scenario import Scenario, load_scenario
from sim_core.validate import FieldError, number
from sim_dynamics.core.collision import body_radius, contacts, ground_impact
from sim_dynamics.core.multirotor import Multirotor, MultirotorParams
from sim_dynamics.core.node_params import DYNAMICS_PARAMETERS, DynamicsNodeConfig
from sim_ros import qos
from sim_ros.convert import set_vec3, time_msg, time_ns
from sim_ros.params import read_config
from sim_ros.plant import PlantMember
from sim_ros.run import run_node
from sim_ros.sim_time_node import SimTimeNode, serialized
from sim_ros.vehicle_pub import VehicleStatePublisher


@dataclass
class Vehicle:
    """One multirotor of the simulation: its model, command and publishers."""

    name: str                    # namespace (fleet) or the node's namespace
    scenario: Scenario           # as this vehicle sees it: its start and mission
    params: MultirotorParams
    model: Multirotor
    out: VehicleStatePublisher
    radius: float                # m, collision sphere
    throttles: list
    airborne: bool = False
    vz: float = 0.0              # m/s, vertical speed before the step (ground impacts)


class DynamicsNode(SimTimeNode):
    """Fixed-step multirotor simulation and sim clock: one vehicle, or a fleet of them."""

    def __init__(self, direct_commands: bool = False, **node_kw):
        """Declare parameters, load the scenario and vehicle(s), create the interfaces.

        direct_commands: commands come through apply_command() from nodes of the same
        process; the effector_command topic is not subscribed.
        node_kw: rclpy Node's keywords (context=, parameter_overrides=).
        """
        super().__init__('dynamics_node', **node_kw)
        own = read_config(self, DynamicsNodeConfig, DYNAMICS_PARAMETERS)
        vehicle_params, prefix = own.vehicle_params, own.vehicle_prefix
        self.fleet_start_timeout_s = own.fleet_start_timeout_s
        self.scenario = load_scenario(self.cfg.scenario_file)
        require_kind(self.scenario, VehicleKind.MULTIROTOR, 'dynamics_node')
        n = fleet_size(self.scenario, own.vehicles)
        self.fleet = n > 1
        env = self.scenario.environment
        self.vehicles = []
        cfg = self.cfg
        for i, sc in enumerate(member_scenarios(self.scenario, n)):
            vfile = str(sc.vehicle_file)
            if vehicle_params:
                vfile = str(resolve_config_path(vehicle_params, self.scenario.path.parent,
                                                'vehicles'))
            params = MultirotorParams.from_yaml(vfile)
            name = member_name(prefix, i) if self.fleet else self.get_namespace().strip('/')
            ns = f'/{name}/' if self.fleet else ''
            body = f'{name}/{cfg.body_frame_id}' if self.fleet else cfg.body_frame_id
            self.vehicles.append(Vehicle(
                name, sc, params, Multirotor(params, wind_enu=env.wind_enu, gravity=env.gravity),
                VehicleStatePublisher(self, cfg.world_frame_id, body, ns),
                body_radius([r.position for r in params.rotors]), [0.0] * len(params.rotors)))
        self.params = self.vehicles[0].params
        self.model = self.vehicles[0].model
        self._touching = set()          # pairs in contact at the last step
        self.collisions = 0
        self.pub_collision = self.create_publisher(Collision, '/sim/collisions', qos.COMMAND)
        self._msg_collision = Collision()
        self._msg_collision.header.frame_id = cfg.world_frame_id
        self._reset_model()
        self._direct = direct_commands
        if self.fleet:
            self._set_members(n)
        self.out = self.vehicles[0].out
        if not direct_commands:
            for i, v in enumerate(self.vehicles):
                self.create_subscription(
                    AircraftEffectorCommand,
                    f'/{v.name}/effector_command' if self.fleet else 'effector_command',
                    lambda msg, i=i: self._on_command(msg, i), qos.COMMAND)
        self._start_time()
        p = self.params
        what = (f'a fleet of {n}: {", ".join("/" + v.name for v in self.vehicles)}, '
                f'collision radius {self.vehicles[0].radius:.2f} m'
                if self.fleet else f'vehicle {p.name}')
        self.get_logger().info(
            f'{what} ({p.mass} kg, {len(p.rotors)} rotors, hover throttle '
            f'{p.hover_throttle():.3f}); scenario {self.scenario.name}; {self.describe_time()}')

    def member_name(self, member: int) -> str:
        """The namespace of vehicle member."""
        return '/' + self.vehicles[member].name

    def plant_members(self) -> Tuple[PlantMember, ...]:
        """Its quads for a composition (sim_ros.plant.Plant): each answered by apply_command.

        Vehicle i is MAVLink instance i (a fleet's bridges and FCs: sim_core.fleet).
        """
        return tuple(
            PlantMember(i, v.name if self.fleet else '', VehicleKind.MULTIROTOR, i,
                        lambda cmd, t_ns, i=i: self.apply_command(cmd, t_ns, i))
            for i, v in enumerate(self.vehicles))

    def _reset_model(self):
        for v in self.vehicles:
            sc = v.scenario
            v.model.reset(p_enu=sc.initial_position_enu,
                          yaw=math.radians(90.0 - sc.initial_yaw_deg))
            v.throttles = [0.0] * len(v.params.rotors)
            v.airborne, v.vz = sc.initial_position_enu[2] > 0.0, 0.0
        self._touching = set()

    def _integrate(self, dt: float):
        for v in self.vehicles:
            v.vz = v.model.raw[5]
            v.model.step(dt, v.throttles)
        self._contacts()

    def _contacts(self):
        """Vehicles touching each other, and hard ground impacts: resolved and reported."""
        vs = self.vehicles
        t_ns = self.clock.t_ns + self.clock.step_ns       # the time of the step just taken
        for v in vs:
            on_ground = v.model.on_ground
            speed = ground_impact(v.airborne, on_ground, v.vz)
            v.airborne = not on_ground
            if speed is not None:
                self._report(t_ns, v.name, 'ground', speed, v.model.raw[0:3])
        if len(vs) < 2:
            return
        found = contacts([v.model.raw[0:3] for v in vs], [v.model.raw[3:6] for v in vs],
                         [v.params.mass for v in vs], [v.radius for v in vs])
        touching = set()
        for c in found:
            vs[c.i].model.push(c.dp_i, c.dv_i)
            vs[c.j].model.push(c.dp_j, c.dv_j)
            touching.add((c.i, c.j))
            if (c.i, c.j) not in self._touching:
                self._report(t_ns, vs[c.i].name, vs[c.j].name, c.closing_speed, c.point)
        self._touching = touching

    def _report(self, t_ns: int, vehicle: str, other: str, speed: float, point):
        self.collisions += 1
        m = self._msg_collision
        m.header.stamp = time_msg(t_ns)
        m.vehicle, m.other, m.closing_speed = vehicle, other, float(speed)
        set_vec3(m.position, point)
        self.pub_collision.publish(m)
        self.get_logger().warning(
            f'collision at t = {t_ns * 1e-9:.3f} s: /{vehicle} and '
            f'{"the ground" if other == "ground" else "/" + other} at {speed:.1f} m/s '
            f'({self.collisions} so far)')

    def state_arrays(self, member: int = 0) -> VehicleSample:
        """The VehicleSample of vehicle member at the current step."""
        m = self.vehicles[member].model
        s, acc = m.raw, m.acceleration
        return VehicleSample(self.clock.t_ns, s[0:3], s[3:6], s[6:10], acc[0:3], s[10:13])

    # --- inputs --------------------------------------------------------------------------------
    def _on_command(self, msg: AircraftEffectorCommand, member: int = 0):
        self.apply_command(msg.throttle_cmd, time_ns(msg.header.stamp), member)

    @serialized
    def apply_command(self, throttles, stamp_ns: int, member: int = 0) -> None:
        """Take the motor command of vehicle member answering the state of stamp_ns [ns].

        throttles: one value per rotor in [0, 1]; anything else is rejected and counted. In
        lockstep the answer completing the awaited step integrates the next step(s) at once.
        Safe to call from any thread and from a state listener.
        """
        if self.clock.state != SimState.RUNNING:
            return
        v = self.vehicles[member]
        thr = list(throttles)
        n = len(v.params.rotors)
        what = f'/{v.name} effector_command' if self.fleet else 'effector_command'
        if len(thr) != n:
            return self._reject(what, f'throttle_cmd has {len(thr)} values, vehicle has {n} '
                                'motors')
        try:
            for i, x in enumerate(thr):
                number(x, f'throttle_cmd[{i}]', 0.0, 1.0)
        except FieldError as exc:
            return self._reject(what, str(exc))
        v.throttles = thr
        self._answered(stamp_ns, member)

    # --- outputs -------------------------------------------------------------------------------
    def _publish_state(self, stamp):
        odom = self._odom_due()
        for i, v in enumerate(self.vehicles):
            v.out.publish(stamp, self.state_arrays(i), v.model.acceleration[3:6], odom)


def main(args=None):
    """Run dynamics_node."""
    run_node(DynamicsNode, 'dynamics_node', args)


if __name__ == '__main__':
    main()
