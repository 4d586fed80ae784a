"""plane_node: owns simulation time and steps a JSBSim aircraft (default the Cessna 172R).

The fixed-wing counterpart of dynamics_node (same base, sim_ros.sim_time_node: /clock,
/sim/status, /sim/* services, pacing, lockstep). The aircraft, its start (on the runway or
airborne), wind and turbulence come from a scenario with ``vehicle.kind: plane``.

Inputs (AeroSim's two command types, seed 002; the last one received is in force):
- effector_command (aerosim_msgs/AircraftEffectorCommand): surface angles [rad] in each
  surface's sign (aileron [left] or [left, right], positive trailing edge down; elevator
  positive trailing edge down; rudder positive trailing edge left; flaps positive down),
  throttle 0..1 per engine, wheel steer [rad] positive left, brakes [all] or [center, left,
  right] 0..1. Empty arrays leave that device's command as it is.
- flight_control_command (aerosim_msgs/FlightControlCommand): normalized power, roll, pitch,
  yaw (positive right wing down, nose up, nose right), flaps, steering, brakes: what the
  autopilot sends.
- autopilot/status (aerosim_msgs/AutopilotCommand): the autopilot's setpoints in force (target
  altitude and waypoint), for the PFD's target altitude and HSI.
In lockstep either command answers the state whose stamp it carries.

Outputs: vehicle_state and odom (ENU/FLU, REP-103), flight_display
(aerosim_msgs/PrimaryFlightDisplayData, seed 002's units), effector_states/<surface>
(aerosim_msgs/EffectorState: each surface's hinge pose in base_link, rotated by its actual
deflection), actor_model and physical_properties (latched: mass and inertia from JSBSim).
"""

import math
from typing import Tuple

from sim_world.core.kinds import require_kind

from aerosim_msgs.msg import (
    ActorModel,
    AircraftEffectorCommand,
    AutopilotCommand,
    EffectorState,
    FlightControlCommand,
    PhysicalProperties,
    PrimaryFlightDisplayData,
)
from sim_core.decimator import Decimator
from sim_core.kinds import VehicleKind, info
from sim_core.paths import resolve_config_path
from sim_core.scenario import load_scenario
from sim_core.validate import FieldError
from sim_dynamics.core.node_params import PLANE_PARAMETERS, PlaneNodeConfig
from sim_dynamics.core.pfd import FlightDisplay
from sim_dynamics.core.plane import (
    AircraftParams,
    EffectorCommand,
    FlightCommand,
    Plane,
    effector_poses,
)
from sim_ros import qos
from sim_ros.convert import set_quat, set_vec3, time_ns
from sim_ros.params import read_config
from sim_ros.plant import PlantMember
from sim_ros.run import run_node
from sim_ros.sim_time_node import SimTimeNode, serialized
from sim_ros.vehicle_pub import VehicleStatePublisher


class PlaneNode(SimTimeNode):
    """Fixed-step JSBSim aircraft and sim clock."""

    def __init__(self, direct_commands: bool = False, **node_kw):
        """Declare parameters, load the scenario and aircraft, create the interfaces.

        direct_commands: the surfaces come through apply_effectors() from a node of the same
        process (mavlink_bridge.plane_plant); effector_command is then not subscribed.
        node_kw: rclpy Node's keywords (context=, parameter_overrides=).
        """
        super().__init__('plane_node', default_rate_hz=125.0, scenario='circuit', **node_kw)
        own = read_config(self, PlaneNodeConfig, PLANE_PARAMETERS)
        aircraft, pfd_hz, eff_hz = own.aircraft_params, own.pfd_rate_hz, own.effector_rate_hz
        self.scenario = sc = load_scenario(self.cfg.scenario_file)
        if not aircraft:
            require_kind(sc, VehicleKind.PLANE, 'plane_node', 'aircraft_params')
        afile = sc.vehicle_file
        if aircraft:
            afile = resolve_config_path(aircraft, sc.path.parent, info(VehicleKind.PLANE).folder)
        self.params = AircraftParams.from_yaml(afile)
        env = sc.environment
        self.plane = Plane(self.params, sc.origin, self.clock.dt, env.wind_enu, env.turbulence)
        self.start = self.plane.reset(sc.initial_position_enu, sc.initial_yaw_deg,
                                      sc.initial_speed_mps)
        self.display = FlightDisplay(own.altimeter_setting_inhg, own.hsi_mode)
        self._sample = (None, None)     # ((steps, t_ns), VehicleSample) of the current step
        self._target = (math.nan, False, math.nan, math.nan)
        self._pfd_dec = Decimator(pfd_hz) if pfd_hz > 0.0 else None
        self._eff_dec = Decimator(eff_hz) if eff_hz > 0.0 else None
        self.out = VehicleStatePublisher(self, self.cfg.world_frame_id, self.cfg.body_frame_id)
        self.pub_pfd = self.create_publisher(PrimaryFlightDisplayData, 'flight_display',
                                             qos.SENSOR_PUB)
        self._poses = effector_poses()
        self.pub_eff = {name: self.create_publisher(EffectorState, f'effector_states/{name}',
                                                    qos.VIEW_PUB) for name in self._poses}
        self._publish_model()
        self._direct = direct_commands
        if not direct_commands:
            self.create_subscription(AircraftEffectorCommand, 'effector_command',
                                     self._on_effector, qos.COMMAND)
        self.create_subscription(FlightControlCommand, 'flight_control_command',
                                 self._on_flight, qos.COMMAND)
        self.create_subscription(AutopilotCommand, 'autopilot/status', self._on_autopilot,
                                 qos.LATCHED)
        self._start_time()
        m, _, _ = self.plane.mass_properties()
        self.get_logger().info(
            f'aircraft {self.params.name} (JSBSim {self.params.jsbsim_model}, {m:.0f} kg) '
            f'{"on the runway" if self.start == "ground" else "airborne, trimmed"}, heading '
            f'{sc.initial_yaw_deg:g} deg; scenario {sc.name}; {self.describe_time()}')

    def _publish_model(self):
        m, moi, products = self.plane.mass_properties()
        pp = PhysicalProperties()
        pp.header.frame_id = self.cfg.body_frame_id
        pp.mass = m
        set_vec3(pp.moment_of_inertia, moi)
        set_vec3(pp.inertia_tensor, products)
        am = ActorModel()
        am.physical_properties = pp
        am.asset_link = self.params.asset_link
        self.create_publisher(PhysicalProperties, 'physical_properties',
                              qos.LATCHED).publish(pp)
        self.create_publisher(ActorModel, 'actor_model', qos.LATCHED).publish(am)

    # --- SimTimeNode hooks --------------------------------------------------------------------
    def _reset_model(self):
        sc = self.scenario
        self.plane.reset(sc.initial_position_enu, sc.initial_yaw_deg, sc.initial_speed_mps)
        for dec in (self._pfd_dec, self._eff_dec):
            if dec is not None:
                dec.reset()

    def _integrate(self, dt: float):
        self.plane.step()

    def state_arrays(self, member: int = 0):
        """The VehicleSample of the current step.

        Made once per step: the composed bridge takes it first, the topics then.
        """
        key = (self.plane.steps, self.clock.t_ns)
        if self._sample[0] != key:
            self._sample = (key, self.plane.sample(self.clock.t_ns))
        return self._sample[1]

    def _publish_state(self, stamp):
        t_ns = self.clock.t_ns
        self.out.publish(stamp, self.state_arrays(), self.plane.angular_acceleration_flu(),
                         self._odom_due())
        if self._pfd_dec is None or self._pfd_dec.due(t_ns):
            self._publish_pfd(stamp)
        if self._eff_dec is None or self._eff_dec.due(t_ns):
            self._publish_effectors(stamp)

    def _publish_pfd(self, stamp):
        alt, active, lat, lon = self._target
        d = self.display.update(self.plane.air_data(), alt, active, lat, lon)
        m = PrimaryFlightDisplayData()
        m.header.stamp = stamp
        for k, v in d._asdict().items():
            setattr(m, k, v if k == 'hsi_mode' else float(v))
        self.pub_pfd.publish(m)

    def _publish_effectors(self, stamp):
        s = self.plane.surfaces()
        for name, (pos, q) in self._poses.items():
            m = EffectorState()
            m.header.stamp = stamp
            m.header.frame_id = self.cfg.body_frame_id
            set_vec3(m.pose.position, pos)
            set_quat(m.pose.orientation, q(s))
            self.pub_eff[name].publish(m)

    # --- inputs --------------------------------------------------------------------------------
    def _on_effector(self, msg: AircraftEffectorCommand):
        self.apply_effectors(EffectorCommand(
            msg.throttle_cmd, msg.aileron_cmd_angle_rad, msg.elevator_cmd_angle_rad,
            msg.rudder_cmd_angle_rad, msg.thrust_tilt_cmd_angle_rad, msg.flap_cmd_angle_rad,
            msg.speedbrake_cmd_angle_rad, msg.landing_gear_cmd, msg.wheel_steer_cmd_angle_rad,
            msg.wheel_brake_cmd), time_ns(msg.header.stamp))

    def _on_flight(self, msg: FlightControlCommand):
        self.apply_flight(FlightCommand(
            msg.power_cmd, msg.roll_cmd, msg.pitch_cmd, msg.yaw_cmd, msg.thrust_tilt_cmd,
            msg.flap_cmd, msg.speedbrake_cmd, msg.landing_gear_cmd, msg.wheel_steer_cmd,
            msg.wheel_brake_cmd), time_ns(msg.header.stamp))

    def _on_autopilot(self, msg: AutopilotCommand):
        self._target = (msg.altitude_setpoint_ft, msg.heading_set_by_waypoint,
                        msg.target_wp_latitude_deg, msg.target_wp_longitude_deg)

    def plant_members(self) -> Tuple[PlantMember, ...]:
        """Its aircraft for a composition (sim_ros.plant.Plant), answered by apply_effectors."""
        return (PlantMember(0, '', VehicleKind.PLANE, 0, self.apply_effectors),)

    @serialized
    def apply_effectors(self, cmd: EffectorCommand, stamp_ns: int) -> None:
        """Take an AircraftEffectorCommand answering the state of stamp_ns (checked first).

        Safe to call from any thread and from a state listener (the composed bridge's mixer).
        """
        try:
            cmd = self.plane.check_effectors(cmd)
        except FieldError as exc:
            return self._reject('effector_command', str(exc))
        self.plane.apply_effectors(cmd)
        self._answered(stamp_ns)

    @serialized
    def apply_flight(self, cmd: FlightCommand, stamp_ns: int) -> None:
        """Take a FlightControlCommand answering the state of stamp_ns (checked first)."""
        try:
            cmd = self.plane.check_flight(cmd)
        except FieldError as exc:
            return self._reject('flight_control_command', str(exc))
        self.plane.apply_flight(cmd)
        self._answered(stamp_ns)


def main(args=None):
    """Run plane_node."""
    run_node(PlaneNode, 'plane_node', args)


if __name__ == '__main__':
    main()
