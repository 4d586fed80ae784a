"""usv_node: owns simulation time and integrates a surface vessel (the USV model, one boat).

The marine counterpart of dynamics_node (same base, sim_ros.sim_time_node: /clock,
/sim/status, /sim/* services, pacing, lockstep). The boat and its environment (current, wind,
sea state) come from a scenario with ``vehicle.kind: boat``.

Inputs (either, last writer wins per axis):
- effector_command (aerosim_msgs/AircraftEffectorCommand): throttle_cmd[0] in [-1, 1]
  (negative = astern), rudder_cmd_angle_rad[0] [rad] (AeroSim sign: positive = trailing edge
  to port, the bow turns to port). An effector command releases the holds it overrides.
- autopilot_command (aerosim_msgs/AutopilotCommand): heading_hold + heading_setpoint_deg
  (compass) and airspeed_hold + airspeed_setpoint_kts (speed through the water [kn]) engage
  the boat's own speed and heading holds (sim_dynamics.core.usv_control).
Outputs: vehicle_state (aerosim_msgs/VehicleState, ENU/FLU), odom (nav_msgs/Odometry).
The hold gains tas2acc_pgain and bank2p_pgain are parameters that may change at run time
(ros2 param set, or IMC DynamicsSimParam through imc_bridge).
"""

import math

from rcl_interfaces.msg import SetParametersResult
from sim_world.core.kinds import require_kind

from aerosim_msgs.msg import AircraftEffectorCommand, AutopilotCommand
from sim_core.kinds import VehicleKind, info
from sim_core.paths import resolve_config_path
from sim_core.scenario import load_scenario
from sim_core.units import KNOT_MPS
from sim_core.validate import FieldError, number
from sim_dynamics.core.node_params import USV_GAINS, USV_PARAMETERS, UsvNodeConfig
from sim_dynamics.core.usv import BoatSwarm, BoatType, boat_state_ned, rudder_aerosim_starboard
from sim_dynamics.core.usv_control import HeadingSpeedControl, check_manual
from sim_ros import qos
from sim_ros.convert import time_ns
from sim_ros.params import read_config
from sim_ros.run import run_node
from sim_ros.sim_time_node import SimTimeNode, serialized
from sim_ros.vehicle_pub import VehicleStatePublisher

MAX_SPEED_KT = 100.0       # largest |airspeed_setpoint_kts| taken [kn]


class UsvNode(SimTimeNode):
    """Fixed-step surface-vessel simulation and sim clock."""

    def __init__(self, **node_kw):
        """Declare parameters, load the scenario and boat, create the interfaces.

        node_kw: rclpy Node's keywords (context=, parameter_overrides=).
        """
        super().__init__('usv_node', default_rate_hz=50.0, scenario='harbour', **node_kw)
        own = read_config(self, UsvNodeConfig, USV_PARAMETERS)
        boat_params = own.boat_params
        gains = {attr: getattr(own, name) for name, attr in USV_GAINS.items()}
        self.scenario = load_scenario(self.cfg.scenario_file)
        if not boat_params:
            require_kind(self.scenario, VehicleKind.BOAT, 'usv_node', 'boat_params')
        bfile = self.scenario.vehicle_file
        if boat_params:
            bfile = resolve_config_path(boat_params, self.scenario.path.parent,
                                        info(VehicleKind.BOAT).folder)
        self.boat_type = BoatType.from_yaml(bfile)
        self.boat = BoatSwarm([self.boat_type])
        env = self.scenario.environment
        self.boat.set_environment(current_ne=(env.current_enu[1], env.current_enu[0]),
                                  wind_ne=(env.wind_enu[1], env.wind_enu[0]),
                                  sea_state=env.sea_state, wave_seed=env.wave_seed)
        self.control = HeadingSpeedControl(self.boat, **gains)
        self._reset_model()
        self.add_on_set_parameters_callback(self._on_set_parameters)
        self.out = VehicleStatePublisher(self, self.cfg.world_frame_id, self.cfg.body_frame_id)
        self.create_subscription(AircraftEffectorCommand, 'effector_command', self._on_effector,
                                 qos.COMMAND)
        self.create_subscription(AutopilotCommand, 'autopilot_command', self._on_autopilot,
                                 qos.COMMAND)
        self._start_time()
        t = self.boat_type
        self.get_logger().info(
            f'boat {t.name} ({t.length_m:g} m, {t.mass_kg:g} kg, top speed '
            f'{t.top_speed_mps:g} m/s); scenario {self.scenario.name} (current '
            f'{env.current_enu[0]:g}/{env.current_enu[1]:g} m/s E/N, sea state '
            f'{env.sea_state}); {self.describe_time()}')

    # --- model ---------------------------------------------------------------------------------
    def _reset_model(self):
        s, b = self.scenario, self.boat
        b.n[:], b.e[:] = s.initial_position_enu[1], s.initial_position_enu[0]
        b.psi[:] = math.radians(s.initial_yaw_deg)
        for a in (b.u, b.v, b.r, b.u_dot, b.v_dot, b.r_dot, b.throttle, b.rudder,
                  b.throttle_cmd, b.rudder_cmd):
            a[:] = 0.0
        b.t = 0.0
        self.control.release()

    def _integrate(self, dt: float):
        self.control.update(dt)
        self.boat.step(dt)

    def state_arrays(self, member: int = 0):
        """(t_ns, p_ned, v_ned, euler (roll, pitch, yaw), w_frd, a_ned) of the boat."""
        return (self.clock.t_ns,) + boat_state_ned(self.boat)

    # --- inputs --------------------------------------------------------------------------------
    @serialized
    def _on_set_parameters(self, params):
        for p in params:
            if p.name in USV_GAINS:
                lo, hi = USV_PARAMETERS[p.name].lo, USV_PARAMETERS[p.name].hi
                v = p.value
                if isinstance(v, bool) or not isinstance(v, (int, float)) or \
                        not lo <= v <= hi:
                    return SetParametersResult(successful=False,
                                               reason=f'{p.name}: must be in [{lo}, {hi}]')
        for p in params:
            if p.name in USV_GAINS:
                getattr(self.control, USV_GAINS[p.name])[:] = float(p.value)
                self.get_logger().info(f'{p.name} = {p.value:g} 1/s')
        return SetParametersResult(successful=True)

    @serialized
    def _on_effector(self, msg: AircraftEffectorCommand):
        try:
            throttle, rudder = check_manual(msg.throttle_cmd, msg.rudder_cmd_angle_rad)
        except FieldError as exc:
            return self._reject('effector_command', str(exc))
        b, c = self.boat, self.control
        if throttle is not None:
            c.speed_hold[0] = False
        if rudder is not None:
            c.heading_hold[0] = False
        b.command(b.throttle_cmd[0] if throttle is None else throttle,
                  b.rudder_cmd[0] if rudder is None else rudder_aerosim_starboard(rudder), 0)
        self._answered(time_ns(msg.header.stamp))

    @serialized
    def _on_autopilot(self, msg: AutopilotCommand):
        try:
            if msg.airspeed_hold:
                number(msg.airspeed_setpoint_kts, 'airspeed_setpoint_kts', -MAX_SPEED_KT,
                       MAX_SPEED_KT)
            if msg.heading_hold:
                number(msg.heading_setpoint_deg, 'heading_setpoint_deg')
        except FieldError as exc:
            return self._reject('autopilot_command', str(exc))
        c = self.control
        if msg.airspeed_hold:
            c.hold_speed(msg.airspeed_setpoint_kts * KNOT_MPS, 0)
        if msg.heading_hold:
            c.hold_heading(math.radians(msg.heading_setpoint_deg), 0)

    # --- outputs -------------------------------------------------------------------------------
    def _publish_state(self, stamp):
        self.out.publish_boat(stamp, self.boat, 0, self._odom_due())


def main(args=None):
    """Run usv_node."""
    run_node(UsvNode, 'usv_node', args)


if __name__ == '__main__':
    main()
