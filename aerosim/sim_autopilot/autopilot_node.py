"""autopilot_node: AeroSim's autopilot (AutopilotCommand in, FlightControlCommand out).

Flies the aircraft of plane_node (sim_autopilot.core.autopilot): a flight plan in AeroSim's
JSON (by default the scenario's mission, run at start with autostart), or the manual
setpoints and holds of AutopilotCommand.

Subscribes vehicle_state (answered, every step, by a flight_control_command stamped with the
state's stamp: the lockstep answer), flight_display (the calibrated airspeed) and
autopilot_command (aerosim_msgs/AutopilotCommand: flight_plan JSON, RUN/PAUSE/STOP, manual
setpoints; every number checked, a bad command refused and counted on /diagnostics).
Publishes flight_control_command (aerosim_msgs/FlightControlCommand), autopilot/status
(AutopilotCommand, latched: the setpoints in force: target altitude, airspeed, heading and
waypoint; plane_node's PFD reads them), trajectory/visualization
(TrajectoryVisualization: the plan's waypoints and the next number_of_future_waypoints) and
trajectory/past (TrajectoryWaypoints: the track flown), both at trajectory_rate_hz (sim) and
as the display settings ask.
"""

import json

from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
from rclpy.node import Node
from sim_world.core.kinds import require_kind

from aerosim_msgs.msg import (
    AutopilotCommand,
    FlightControlCommand,
    PrimaryFlightDisplayData,
    TrajectoryVisualization,
    TrajectoryWaypoints,
    VehicleState,
)
from sim_autopilot.core import flight_plan as fp
from sim_autopilot.core.autopilot import (
    Autopilot,
    Limits,
    Setpoints,
    check_setpoints,
    flight_state,
)
from sim_autopilot.core.params import PARAMETERS, AutopilotConfig
from sim_autopilot.core.status import status_fields, status_key
from sim_core.decimator import Decimator
from sim_core.errors import ConfigError
from sim_core.kinds import VehicleKind, info
from sim_core.paths import resolve_config_path
from sim_core.scenario import load_scenario
from sim_dynamics.core.plane import AircraftParams
from sim_ros import qos
from sim_ros.convert import time_msg, time_ns, vehicle_state_arrays
from sim_ros.params import read_config
from sim_ros.run import run_node

PLAN_COMMANDS = {AutopilotCommand.STOP: 'STOP', AutopilotCommand.RUN: 'RUN',
                 AutopilotCommand.PAUSE: 'PAUSE'}
MAX_TRACK_POINTS = 10000


class AutopilotNode(Node):
    """The autopilot between plane_node's state and its flight control command."""

    def __init__(self):
        """Declare parameters, load the scenario's plan, subscribe."""
        super().__init__('autopilot_node')
        self.cfg = cfg = read_config(self, AutopilotConfig, PARAMETERS)
        self.autostart, self.track_period_s = cfg.autostart, cfg.track_sample_s
        self.sc = sc = load_scenario(cfg.scenario_file)
        aircraft = cfg.aircraft_params
        if not aircraft:
            require_kind(sc, VehicleKind.PLANE, 'autopilot_node', 'aircraft_params')
        afile = sc.vehicle_file
        if aircraft:
            afile = resolve_config_path(aircraft, sc.path.parent, info(VehicleKind.PLANE).folder)
        a = AircraftParams.from_yaml(afile)
        self.ap = Autopilot(Limits(a.rotate_kts, a.climb_kts, a.cruise_kts, a.approach_kts,
                                   a.max_bank_deg), sc.origin.alt_m)
        self.mission_plan = fp.from_mission(sc.mission, sc.origin.alt_m, sc.initial_yaw_deg,
                                            a.rotate_kts) if sc.mission else ()
        if self.mission_plan:
            self.ap.load_plan(self.mission_plan)
        self.rejected = {}
        self._airspeed = None
        self._last_t = None
        self._started = False
        self._last_status = None
        self._track = []
        self._next_track_t = 0.0
        self._traj = Decimator(cfg.trajectory_rate_hz)
        self.pub_cmd = self.create_publisher(FlightControlCommand, 'flight_control_command',
                                             qos.COMMAND)
        self.pub_status = self.create_publisher(AutopilotCommand, 'autopilot/status',
                                                qos.LATCHED)
        self.pub_traj = self.create_publisher(TrajectoryVisualization,
                                              'trajectory/visualization', qos.LATCHED)
        self.pub_past = self.create_publisher(TrajectoryWaypoints, 'trajectory/past',
                                              qos.VIEW_PUB)
        self.pub_diag = self.create_publisher(DiagnosticArray, '/diagnostics', qos.VIEW_PUB)
        self._cmd = FlightControlCommand()
        self._cmd.landing_gear_cmd = 1.0
        self.create_subscription(VehicleState, 'vehicle_state', self._on_state, qos.STATE)
        self.create_subscription(PrimaryFlightDisplayData, 'flight_display', self._on_pfd,
                                 qos.SENSOR_SUB)
        self.create_subscription(AutopilotCommand, 'autopilot_command', self._on_command,
                                 qos.COMMAND)
        self.create_timer(1.0, self._publish_diagnostics)
        self.get_logger().info(
            f'{a.name}: {len(self.mission_plan)} plan steps from scenario {sc.name}'
            f'{" (RUN at the first state)" if self.autostart and self.mission_plan else ""}; '
            f'cruise {a.cruise_kts:g} kt, climb {a.climb_kts:g} kt, bank <= '
            f'{a.max_bank_deg:g} deg')

    # --- inputs -------------------------------------------------------------------------------
    def _on_pfd(self, msg: PrimaryFlightDisplayData):
        self._airspeed = msg.airspeed_kts

    def _on_state(self, msg: VehicleState):
        s = flight_state(vehicle_state_arrays(msg), self.sc.origin, self._airspeed)
        if not self._started:
            self._started = True
            if self.autostart and self.mission_plan:
                self.ap.run(s)
                self.get_logger().info(f'[t={s.t:7.2f} s] flight plan RUN: '
                                       f'{len(self.mission_plan)} steps')
        dt = 0.0 if self._last_t is None else max(0.0, s.t - self._last_t)
        self._last_t = s.t
        out = self.ap.update(s, dt)
        c = self._cmd
        c.header.stamp = msg.header.stamp
        c.power_cmd = [float(out.power)]
        c.roll_cmd, c.pitch_cmd, c.yaw_cmd = float(out.roll), float(out.pitch), float(out.yaw)
        c.flap_cmd, c.wheel_steer_cmd = float(out.flap), float(out.wheel_steer)
        c.wheel_brake_cmd = float(out.wheel_brake)
        self.pub_cmd.publish(c)
        for t, text in self.ap.log:
            self.get_logger().info(f'[t={t:7.2f} s] {text}')
        self.ap.log.clear()
        self._publish_status()
        if s.t >= self._next_track_t:
            self._next_track_t = s.t + self.track_period_s
            if len(self._track) < MAX_TRACK_POINTS:
                self._track.append([round(s.lat_deg, 7), round(s.lon_deg, 7),
                                    round(s.alt_msl_m, 1)])
        if self._traj.due(time_ns(msg.header.stamp)):
            self._publish_trajectory(msg.header.stamp)

    def _on_command(self, msg: AutopilotCommand):
        try:
            if msg.flight_plan_command not in PLAN_COMMANDS:
                raise ConfigError(f'flight_plan_command: must be 0 (STOP), 1 (RUN) or 2 '
                                  f'(PAUSE), got {msg.flight_plan_command}')
            sp = check_setpoints(Setpoints(
                msg.use_manual_setpoints, msg.attitude_hold, msg.altitude_setpoint_ft,
                msg.airspeed_hold, msg.airspeed_setpoint_kts, msg.heading_hold,
                msg.heading_set_by_waypoint, msg.heading_setpoint_deg,
                msg.target_wp_latitude_deg, msg.target_wp_longitude_deg))
            plan = fp.parse_plan(msg.flight_plan) if msg.flight_plan.strip() else None
        except ConfigError as exc:
            kind = getattr(exc, 'kind', 'value')
            self.rejected[kind] = self.rejected.get(kind, 0) + 1
            self.get_logger().warning(
                f'autopilot_command rejected ({sum(self.rejected.values())} so far): {exc}',
                throttle_duration_sec=1.0)
            return
        if plan is not None:
            self.ap.load_plan(plan)
            self.get_logger().info(f'flight plan of {len(plan)} steps loaded')
        if sp.use_manual_setpoints or sp.attitude_hold:
            self.ap.set_manual(sp)
            self.get_logger().info(
                'attitude hold' if sp.attitude_hold else
                f'manual setpoints: {sp.altitude_setpoint_ft:g} ft'
                + (f', {sp.airspeed_setpoint_kts:g} kt' if sp.airspeed_hold else '')
                + (', heading to the waypoint' if sp.heading_hold and sp.heading_set_by_waypoint
                   else f', heading {sp.heading_setpoint_deg:g}' if sp.heading_hold else ''))
            return
        cmd = PLAN_COMMANDS[msg.flight_plan_command]
        {'RUN': self.ap.run, 'PAUSE': self.ap.pause, 'STOP': self.ap.stop}[cmd]()
        self.get_logger().info(f'flight plan {cmd}: mode {self.ap.mode}, step {self.ap.step}')

    # --- outputs ------------------------------------------------------------------------------
    def _publish_status(self):
        st = self.ap.status()
        key = status_key(st)
        if key == self._last_status:
            return
        self._last_status = key
        m = AutopilotCommand(**status_fields(st, len(self.ap.plan)))
        m.header.stamp = time_msg(int((self._last_t or 0.0) * 1e9))
        self.pub_status.publish(m)

    def _publish_trajectory(self, stamp):
        future, past, highlight, n = self.cfg.trajectory
        plan = self.ap.plan
        m = TrajectoryVisualization()
        m.header.stamp = stamp
        m.settings.header.stamp = stamp
        m.settings.display_future_trajectory = future
        m.settings.display_past_trajectory = past
        m.settings.highlight_user_defined_waypoints = highlight
        m.settings.number_of_future_waypoints = n
        m.user_defined_waypoints.header.stamp = stamp
        m.user_defined_waypoints.waypoints = json.dumps(fp.waypoints(plan) if highlight else [])
        m.future_trajectory.header.stamp = stamp
        ahead = [] if not future or self.ap.mode == 'done' else \
            fp.waypoints(plan, max(self.ap.step, 0), n)
        m.future_trajectory.waypoints = json.dumps(ahead)
        self.pub_traj.publish(m)
        if past:
            t = TrajectoryWaypoints()
            t.header.stamp = stamp
            t.waypoints = json.dumps(self._track)
            self.pub_past.publish(t)

    def _publish_diagnostics(self):
        arr = DiagnosticArray()
        arr.header.stamp = self.get_clock().now().to_msg()
        st = self.ap.status()
        d = DiagnosticStatus(name=f'{self.get_name()}: autopilot', hardware_id='autopilot')
        d.level = DiagnosticStatus.OK
        d.message = f'{st.mode}, step {st.step}/{len(self.ap.plan)}, {st.phase}'
        d.values = [KeyValue(key='mode', value=st.mode), KeyValue(key='step', value=str(st.step)),
                    KeyValue(key='legs_done', value=str(len(self.ap.legs_done()))),
                    KeyValue(key='rejected', value=str(sum(self.rejected.values())))] + [
            KeyValue(key=f'rejected_{k}', value=str(v)) for k, v in self.rejected.items()]
        arr.status = [d]
        self.pub_diag.publish(arr)


def main(args=None):
    """Run autopilot_node."""
    run_node(AutopilotNode, 'autopilot_node', args)


if __name__ == '__main__':
    main()
