"""dynamics_node: owns simulation time and integrates the multirotor model.

Publishes /clock, vehicle_state (aerosim_msgs/VehicleState), odom (nav_msgs/Odometry) every
step and /sim/status (latched); serves /sim/pause, /sim/step, /sim/reset, /sim/set_time_scale;
subscribes effector_command (aerosim_msgs/AircraftEffectorCommand).
This node is the time source (sim_ros.sim_time_node.SimTimeNode: pacing, lockstep,
services, status): it runs on the steady wall clock, never with use_sim_time.

Composition (mavlink_bridge.hil_plant): another node of the same process may take the state
of every step directly (``state_listeners``, called before the topics are published) and
answer with ``apply_command`` instead of the effector_command topic; the lockstep loop then
needs no middleware hop. Stepping is serialized by a lock: the answer may come from another
thread than the executor's.
"""

import math

from aerosim_msgs.msg import AircraftEffectorCommand
from sim_core.clock import SimState
from sim_core.errors import ConfigError
from sim_core.frames import VehicleSample
from sim_core.paths import resolve_config_path
from sim_core.scenario import load_scenario
from sim_core.validate import FieldError, number
from sim_dynamics.core.multirotor import Multirotor, MultirotorParams
from sim_ros import qos
from sim_ros.convert import time_ns
from sim_ros.params import declare
from sim_ros.run import run_node
from sim_ros.sim_time_node import SimTimeNode, serialized
from sim_ros.vehicle_pub import VehicleStatePublisher


class DynamicsNode(SimTimeNode):
    """Fixed-step multirotor simulation and sim clock."""

    def __init__(self, direct_commands: bool = False):
        """Declare parameters, load the scenario and vehicle, create the interfaces.

        direct_commands: commands come through apply_command() from a node of the same
        process; the effector_command topic is not subscribed.
        """
        super().__init__('dynamics_node')
        vehicle_params = declare(self, 'vehicle_params', '',
                                 'Vehicle YAML overriding the scenario (path or name in '
                                 'config/vehicles); empty = from the scenario')
        self.scenario = load_scenario(self.cfg.scenario_file)
        if self.scenario.vehicle_kind != 'multirotor':
            raise ConfigError(f'scenario {self.scenario.name}: vehicle.kind is '
                              f'{self.scenario.vehicle_kind}; dynamics_node simulates '
                              'multirotors (boats: usv_node)')
        vfile = str(self.scenario.vehicle_file)
        if vehicle_params:
            vfile = str(resolve_config_path(vehicle_params, self.scenario.path.parent,
                                            'vehicles'))
        self.params = MultirotorParams.from_yaml(vfile)
        env = self.scenario.environment
        self.model = Multirotor(self.params, wind_enu=env.wind_enu, gravity=env.gravity)
        self._reset_vehicle()
        self._throttles = [0.0] * len(self.params.rotors)
        self._direct = direct_commands
        self.out = VehicleStatePublisher(self, self.cfg.world_frame_id, self.cfg.body_frame_id)
        if not direct_commands:
            self.create_subscription(AircraftEffectorCommand, 'effector_command',
                                     self._on_command, qos.COMMAND)
        self._start_time()
        self.get_logger().info(
            f'vehicle {self.params.name} ({self.params.mass} kg, {len(self.params.rotors)} '
            f'rotors, hover throttle {self.params.hover_throttle():.3f}); scenario '
            f'{self.scenario.name}; {self.describe_time()}')

    def _reset_vehicle(self):
        s = self.scenario
        self.model.reset(p_enu=s.initial_position_enu,
                         yaw=math.radians(90.0 - s.initial_yaw_deg))

    def _reset_model(self):
        self._reset_vehicle()
        self._throttles = [0.0] * len(self.params.rotors)

    def _integrate(self, dt: float):
        self.model.step(dt, self._throttles)

    def state_arrays(self) -> VehicleSample:
        """The VehicleSample of the current step."""
        s, acc = self.model.raw, self.model.acceleration
        return VehicleSample(self.clock.t_ns, s[0:3], s[3:6], s[6:10], acc[0:3], s[10:13])

    # --- inputs --------------------------------------------------------------------------------
    def _on_command(self, msg: AircraftEffectorCommand):
        self.apply_command(msg.throttle_cmd, time_ns(msg.header.stamp))

    @serialized
    def apply_command(self, throttles, stamp_ns: int) -> None:
        """Take the motor command answering the state of sim time stamp_ns [ns].

        throttles: one value per rotor in [0, 1]; anything else is rejected and counted. In
        lockstep the answer to the awaited step integrates the next step(s) at once. Safe to
        call from any thread and from a state listener.
        """
        if self.clock.state != SimState.RUNNING:
            return
        thr = list(throttles)
        n = len(self.params.rotors)
        if len(thr) != n:
            return self._reject('effector_command',
                                f'throttle_cmd has {len(thr)} values, vehicle has {n} motors')
        try:
            for i, x in enumerate(thr):
                number(x, f'throttle_cmd[{i}]', 0.0, 1.0)
        except FieldError as exc:
            return self._reject('effector_command', str(exc))
        self._throttles = thr
        self._answered(stamp_ns)

    # --- outputs -------------------------------------------------------------------------------
    def _publish_state(self, stamp):
        self.out.publish(stamp, self.state_arrays(), self.model.acceleration[3:6],
                         self._odom_due())


def main(args=None):
    """Run dynamics_node."""
    run_node(DynamicsNode, 'dynamics_node', args)


if __name__ == '__main__':
    main()
