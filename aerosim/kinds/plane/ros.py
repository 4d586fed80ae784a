"""A plane's own interfaces in a world: its MemberIo (sim_world.member_io finds ``Io`` here).

What plane_node and autopilot_node gave, under /<name>/, built once per plane in the world's
process with its PlaneModel and in-process controller. Its node /<name>/plane_node (spun with
the world's) holds the displays' parameters (PlaneNodeConfig) and, when the autopilot flies
it in the world's step (controller autopilot), the autopilot's (AutopilotConfig); the
autopilot RUNs its plan at start only with the world's autostart.

Out, stamped in sim time from ``publish`` (after each world step: the stepping thread, the
step lock held), decimated on sim time:
- flight_display (PrimaryFlightDisplayData, pfd_rate_hz): JSBSim's air data and the target
  of the autopilot (its status; flown otherwise, the autopilot/status an external one sends)
  and effector_states/<surface> (EffectorState, effector_rate_hz), while subscribed;
- actor_model and physical_properties (latched, at start: JSBSim's mass and inertia);
- with the autopilot: autopilot/status (AutopilotCommand, latched, on change),
  trajectory/visualization (latched) and trajectory/past at trajectory_rate_hz, /diagnostics
  (1 Hz).
In:
- flight_control_command (FlightControlCommand, normalized; the last one in force) checked
  by the model, a refusal counted on /sim/status and logged; from a controller answering
  outside the step (controller topic) a lockstep answer, as its effector_command is
  (sim_world.world_inputs);
- with the autopilot: autopilot_command (sim_autopilot.core.interface: a plan, setpoints,
  RUN/PAUSE/STOP; a refusal counted on /diagnostics and logged rate-limited).
Callbacks that touch the model or the autopilot take the world's step lock.
"""

import math
from typing import Tuple

from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
from rclpy.node import Node
from std_msgs.msg import Header

from aerosim_msgs.msg import (
    ActorModel,
    AutopilotCommand,
    EffectorState,
    FlightControlCommand,
    PhysicalProperties,
    PrimaryFlightDisplayData,
    TrajectoryVisualization,
    TrajectoryVisualizationSettings,
    TrajectoryWaypoints,
)
from sim_autopilot.core.interface import AutopilotInterface
from sim_autopilot.core.params import PARAMETERS, AutopilotConfig
from sim_core.clock import SimState
from sim_core.decimator import Decimator
from sim_core.errors import ConfigError
from sim_core.members import Member
from sim_core.units import FT_M
from sim_core.validate import FieldError
from sim_dynamics.core.node_params import PLANE_PARAMETERS, PlaneNodeConfig
from sim_dynamics.core.pfd import FlightDisplay
from sim_dynamics.core.plane import FlightCommand, effector_poses
from sim_ros import qos
from sim_ros.convert import set_quat, set_vec3, time_msg, time_ns
from sim_ros.params import read_config
from sim_ros.sim_time_node import serialized

from .controllers import PlaneAutopilot


def flight_command(msg: FlightControlCommand) -> FlightCommand:
    """The message's fields as the model's command (checked by the model)."""
    return FlightCommand(msg.power_cmd, msg.roll_cmd, msg.pitch_cmd, msg.yaw_cmd,
                         msg.thrust_tilt_cmd, msg.flap_cmd, msg.speedbrake_cmd,
                         msg.landing_gear_cmd, msg.wheel_steer_cmd, msg.wheel_brake_cmd)


@serialized
def take_flight(world, member: Member, model, cmd: FlightCommand, stamp_ns: int) -> None:
    """A FlightControlCommand for member's model (under world's step lock, as apply_command).

    From a controller answering outside the step: taken while the clock runs, the answer to
    the state of stamp_ns [ns] (lockstep) and a command for the judge.
    """
    answers = member.answers >= 0
    if answers and world.clock.state != SimState.RUNNING:
        return
    try:
        model.apply_flight(cmd)
    except FieldError as exc:
        return world._reject(f'/{member.name} flight_control_command', str(exc))
    if answers:
        world.judge.command(member.index)
        world._answered(stamp_ns, member.answers)


class PlaneIo:
    """A plane's topics and parameters in a world (module docstring)."""

    def __init__(self, world, member: Member, model, controller):
        """The interfaces of member's aircraft (model: a PlaneModel; controller or None)."""
        self.world, self.member, self.model = world, member, model
        self.node = node = Node('plane_node', namespace=f'/{member.name}', context=world.context)
        self.nodes: Tuple[Node, ...] = (node,)
        self.cfg = cfg = read_config(node, PlaneNodeConfig, PLANE_PARAMETERS)
        body = world.cfg.body_frame_id
        self.frame = body if len(world.members) == 1 else f'{member.name}/{body}'
        self._pfd = Decimator(cfg.pfd_rate_hz) if cfg.pfd_rate_hz > 0.0 else None
        self._eff = Decimator(cfg.effector_rate_hz) if cfg.effector_rate_hz > 0.0 else None
        self.display = FlightDisplay(cfg.altimeter_setting_inhg, cfg.hsi_mode)
        self._target = (0.0, False, math.nan, math.nan)     # the PFD's target: none yet
        self.pub_pfd = node.create_publisher(PrimaryFlightDisplayData, 'flight_display',
                                             qos.SENSOR_PUB)
        self._poses = effector_poses()
        self.pub_eff = {name: node.create_publisher(EffectorState, f'effector_states/{name}',
                                                    qos.VIEW_PUB) for name in self._poses}
        self._publish_model()
        node.create_subscription(FlightControlCommand, 'flight_control_command',
                                 self._on_flight, qos.COMMAND)
        self.autopilot = controller if isinstance(controller, PlaneAutopilot) else None
        if self.autopilot is None:
            node.create_subscription(AutopilotCommand, 'autopilot/status', self._on_status,
                                     qos.LATCHED)
            return
        self.autopilot.autostart = world.link_base.autostart
        self.acfg = acfg = read_config(node, AutopilotConfig, PARAMETERS)
        self.api = AutopilotInterface(lambda: self.autopilot.ap, acfg)
        self._traj = Decimator(acfg.trajectory_rate_hz)
        self.pub_status = node.create_publisher(AutopilotCommand, 'autopilot/status',
                                                qos.LATCHED)
        self.pub_traj = node.create_publisher(TrajectoryVisualization,
                                              'trajectory/visualization', qos.LATCHED)
        self.pub_past = node.create_publisher(TrajectoryWaypoints, 'trajectory/past',
                                              qos.VIEW_PUB)
        self.pub_diag = node.create_publisher(DiagnosticArray, '/diagnostics', qos.VIEW_PUB)
        node.create_subscription(AutopilotCommand, 'autopilot_command', self._on_command,
                                 qos.COMMAND)
        node.create_timer(1.0, self._publish_diagnostics)

    def _publish_model(self) -> None:
        """actor_model and physical_properties, latched: JSBSim's mass and inertia (FLU)."""
        m, moi, products = self.model.plane.mass_properties()
        pp = PhysicalProperties()
        pp.header.frame_id = self.frame
        pp.mass = float(m)
        set_vec3(pp.moment_of_inertia, moi)
        set_vec3(pp.inertia_tensor, products)
        am = ActorModel(physical_properties=pp, asset_link=self.model.params.asset_link)
        self.node.create_publisher(PhysicalProperties, 'physical_properties',
                                   qos.LATCHED).publish(pp)
        self.node.create_publisher(ActorModel, 'actor_model', qos.LATCHED).publish(am)

    # --- out (the stepping thread, step lock held) --------------------------------------------
    def publish(self, stamp, t_ns: int) -> None:
        """After each world step: what is due of the PFD, the surfaces, the autopilot's."""
        if self._pfd is None or self._pfd.due(t_ns):
            self._publish_pfd(stamp)
        if self._eff is None or self._eff.due(t_ns):
            self._publish_effectors(stamp)
        if self.autopilot is not None:
            self._publish_autopilot(stamp, t_ns)

    def _publish_pfd(self, stamp) -> None:
        if self.autopilot is not None:
            st = self.autopilot.ap.status()
            alt = st.target_altitude_ft if math.isfinite(st.target_altitude_ft) else 0.0
            target = (alt, st.target_wp_active, st.target_wp_lat_deg, st.target_wp_lon_deg)
        else:
            target = self._target
        d = self.display.update(self.model.air_data(), *target)    # the HSI follows it
        if not self.pub_pfd.get_subscription_count():
            return
        m = PrimaryFlightDisplayData()
        m.header.stamp = stamp
        for k, v in d._asdict().items():
            setattr(m, k, v if k == 'hsi_mode' else float(v))
        self.pub_pfd.publish(m)

    def _publish_effectors(self, stamp) -> None:
        wanted = [(n, p) for n, p in self.pub_eff.items() if p.get_subscription_count()]
        if not wanted:
            return
        s = self.model.plane.surfaces()
        for name, pub in wanted:
            pos, q = self._poses[name]
            m = EffectorState()
            m.header.stamp = stamp
            m.header.frame_id = self.frame
            set_vec3(m.pose.position, pos)
            set_quat(m.pose.orientation, q(s))
            pub.publish(m)

    def _publish_autopilot(self, stamp, t_ns: int) -> None:
        api = self.api
        fields = api.status()
        if fields is not None:
            m = AutopilotCommand(**fields)
            m.header.stamp = stamp
            self.pub_status.publish(m)
        if api.track_due(t_ns):
            a = self.model.air_data()
            api.add_track(a.lat_deg, a.lon_deg, a.h_sl_ft * FT_M)
        if not self._traj.due(t_ns):
            return
        c, h = self.acfg, Header(stamp=stamp)
        self.pub_traj.publish(TrajectoryVisualization(
            header=h, settings=TrajectoryVisualizationSettings(
                header=h, display_future_trajectory=c.display_future_trajectory,
                display_past_trajectory=c.display_past_trajectory,
                highlight_user_defined_waypoints=c.highlight_user_defined_waypoints,
                number_of_future_waypoints=c.number_of_future_waypoints),
            user_defined_waypoints=TrajectoryWaypoints(header=h, waypoints=api.highlighted()),
            future_trajectory=TrajectoryWaypoints(header=h, waypoints=api.future())))
        if c.display_past_trajectory:
            self.pub_past.publish(TrajectoryWaypoints(header=h, waypoints=api.past()))

    def _publish_diagnostics(self) -> None:
        """1 Hz (wall): the autopilot's mode, step, legs done and refused commands."""
        with self.world.step_lock:
            text, values = self.api.diagnostics()
            t_ns = self.world.clock.t_ns
        d = DiagnosticStatus(name=f'{self.node.get_fully_qualified_name()}: autopilot',
                             hardware_id='autopilot', level=DiagnosticStatus.OK, message=text,
                             values=[KeyValue(key=k, value=v) for k, v in values])
        self.pub_diag.publish(DiagnosticArray(header=Header(stamp=time_msg(t_ns)), status=[d]))

    # --- in (the executor) ---------------------------------------------------------------------
    def _on_flight(self, msg: FlightControlCommand) -> None:
        take_flight(self.world, self.member, self.model, flight_command(msg),
                    time_ns(msg.header.stamp))

    def _on_status(self, msg: AutopilotCommand) -> None:
        """An external autopilot's setpoints in force: the PFD's target."""
        self._target = (msg.altitude_setpoint_ft, msg.heading_set_by_waypoint,
                        msg.target_wp_latitude_deg, msg.target_wp_longitude_deg)

    def _on_command(self, msg: AutopilotCommand) -> None:
        log = self.node.get_logger()
        try:
            with self.world.step_lock:
                text = self.api.command(msg)
        except ConfigError as exc:
            log.warning(f'autopilot_command rejected ({sum(self.api.rejected.values())} so '
                        f'far): {exc}', throttle_duration_sec=1.0)
            return
        log.info(f'autopilot_command: {text}')

    def reset(self) -> None:
        """The world went back to t = 0: the schedules, the HSI, the track start over."""
        for dec in (d for d in (self._pfd, self._eff) if d is not None):
            dec.reset()
        self.display = FlightDisplay(self.cfg.altimeter_setting_inhg, self.cfg.hsi_mode)
        if self.autopilot is not None:
            self._traj.reset()
            self.api.reset()


# its kind's MemberIo factory (world node, member, model, in-process controller or None)
Io = PlaneIo
