"""builtin_fc: a built-in flight controller that behaves like an external autopilot over MAVLink.

A separate process with its own MAVLink UDP endpoint (not a ROS pipeline stage): it downloads
the mission with MISSION_REQUEST_INT, estimates the state from HIL_SENSOR / HIL_GPS, flies the
mission, and answers every HIL_SENSOR with one HIL_ACTUATOR_CONTROLS (lockstep). It is an
rclpy node for parameters, logging, its progress topic `fc/progress` (std_msgs/String, one
line per event) and its port's /diagnostics (a PortNode, like the bridges: allow_peers, rejects
counted by kind and logged at a limited rate); its loop waits on the socket, and an executor
thread serves the parameter services (`ros2 param get /quad/builtin_fc ...`) and the 1 Hz
diagnostics timer.
"""

import time

from rclpy.clock import Clock, ClockType
import rclpy.logging
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from std_msgs.msg import String

from mavlink_bridge.core.mav import mavlink, new_mav, pack, reset_parser
from mavlink_bridge.fc.autopilot import DONE, Autopilot, NavConfig
from mavlink_bridge.fc.control import Gains
from mavlink_bridge.fc.mission_client import MissionClient
from mavlink_bridge.fc.plane import PlaneFc
from sim_autopilot.core.autopilot import Limits
from sim_core.errors import ConfigError
from sim_core.kinds import VehicleKind
from sim_core.link import SpinWait
from sim_ros.params import apply_realtime, declare, declare_realtime
from sim_ros.port_node import PortNode
from sim_ros.run import run_node

# The kinds the built-in FC flies (the controller 'builtin' of sim_core.kinds) and the MAVLink
# type it says in its HEARTBEAT for each
AIRFRAMES = {VehicleKind.MULTIROTOR: mavlink.MAV_TYPE_QUADROTOR,
             VehicleKind.PLANE: mavlink.MAV_TYPE_FIXED_WING}
PROGRESS_QOS = QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE,
                          durability=DurabilityPolicy.TRANSIENT_LOCAL)
LOCKSTEP_FLAG = 1   # HIL_ACTUATOR_CONTROLS_FLAGS_LOCKSTEP
# Reject kinds: a datagram without one complete frame; a frame pymavlink refused; HIL_SENSOR
# with non-finite values (the estimate keeps the last good frame); the handler raised.
# PortNode adds 'peer' (not in allow_peers).
REJECT_KINDS = ('truncated', 'undecodable', 'value', 'invalid')


class BuiltinFc(PortNode):
    """Parameters, link and the receive loop around the Autopilot core."""

    _cost = ''                  # the cost line logged at the end

    def __init__(self):
        """Declare parameters and open the UDP endpoint."""
        super().__init__('builtin_fc')
        d = self._d
        bind = d('bind', '127.0.0.1:14561', 'Our UDP address host:port')
        sim = d('sim_address', '127.0.0.1:14560', 'The simulator (mavlink_bridge) host:port')
        self.vehicle = d('vehicle', VehicleKind.MULTIROTOR.value,
                         'The airframe flown: multirotor (PX4 Quad X outputs 0..3) or plane '
                         '(PX4 SITL plane outputs, airframe 1030)')
        kind = next((k for k in AIRFRAMES if k.value == self.vehicle), None)
        if kind is None:
            raise ConfigError(f'vehicle: the built-in FC flies a '
                              f'{" or a ".join(k.value for k in AIRFRAMES)}, got '
                              f'{self.vehicle!r}')
        fw = Limits(d('fw_rotate_kts', 55.0, 'Plane: rotation speed [kt] (calibrated)', 20.0,
                      200.0),
                    d('fw_climb_kts', 79.0, 'Plane: climb speed [kt]', 30.0, 300.0),
                    d('fw_cruise_kts', 100.0, 'Plane: cruise speed [kt]', 30.0, 400.0),
                    d('fw_approach_kts', 65.0, 'Plane: approach speed [kt]', 30.0, 300.0),
                    d('fw_bank_max_deg', 25.0, 'Plane: bank limit [deg]', 5.0, 60.0))
        self.sysid = d('system_id', 1, 'Our MAVLink system id', 1, 255)
        self.compid = d('component_id', 1, 'Our component id (1 = autopilot)', 1, 255)
        self.hover_thrust = d('hover_thrust', 0.52,
                              'Normalized thrust that hovers (PX4 MPC_THR_HOVER) [0..1]',
                              0.05, 0.95)
        self.cruise_speed = d('cruise_speed', 5.0, 'Horizontal speed limit [m/s]', 0.5, 20.0)
        self.accept_radius = d('acceptance_radius_m', 1.0,
                               'Minimum waypoint acceptance radius [m]', 0.1, 50.0)
        self.mission_wait_s = d('mission_wait_s', 3.0,
                                'Ask for the mission (MISSION_REQUEST_LIST) if none came after '
                                'this long [s]', 0.1, 600.0)
        self.exit_when_done = d('exit_when_done', False,
                                'Exit (code 0) once the mission is complete')
        spin_us = d('spin_wait_us', 1000, 'Poll the socket this long before sleeping on it [µs] '
                    'while sensor frames come that fast (lockstep as fast as possible; a '
                    'sleeping receiver is woken by an interrupt that costs tens of µs on a VM); '
                    '0 = never', 0, 20000)
        warn_period = d('warn_period_s', 2.0, 'Minimum period of repeated warnings [s]',
                        0.1, 600.0)
        self.realtime_priority = declare_realtime(self)
        self.spin = SpinWait(spin_us * 1e-6)
        self._init_port('MAVLink FC', REJECT_KINDS, warn_period)
        try:
            self.link = self._open_link('udp', bind, remote=sim, remote_what='sim_address')
        except (ValueError, OSError) as exc:
            raise ConfigError(str(exc)) from exc
        self.mav = new_mav(self.sysid, self.compid)
        if kind == VehicleKind.PLANE:
            self.ap = PlaneFc(fw)
        else:
            self.ap = Autopilot(Gains(hover_thrust=self.hover_thrust,
                                      max_speed_xy=self.cruise_speed),
                                NavConfig(accept_radius_m=self.accept_radius))
        self.mav_type = AIRFRAMES[kind]
        self.mission = MissionClient()
        self.pub = self.create_publisher(String, 'fc/progress', PROGRESS_QOS)
        self.sim_peer = None
        self.answered = 0
        self.busy_s = 0.0               # wall time handling the simulator's datagrams [s]
        self._cpu0 = 0.0
        self._first_sim_wall = None
        self._asked = False
        self._last_hb = 0.0
        self.create_timer(1.0, self._publish_diagnostics,
                          clock=Clock(clock_type=ClockType.STEADY_TIME))
        self.get_logger().info(f'built-in FC {self.sysid}:{self.compid} ({self.vehicle}) on '
                               f'{self.link.describe()}')

    def _d(self, *a, **k):
        return declare(self, *a, **k)

    def say(self, text: str):
        """Log and publish a progress line."""
        self.get_logger().info(text)
        self.pub.publish(String(data=text))

    def send(self, msgs):
        """Pack and send MAVLink messages to the simulator."""
        for m in msgs:
            self.link.send(pack(self.mav, m))

    def heartbeat(self, now):
        """1 Hz HEARTBEAT: a quadrotor or fixed wing, generic autopilot, armed when flying."""
        if now - self._last_hb < 1.0:
            return
        self._last_hb = now
        mode = mavlink.MAV_MODE_FLAG_HIL_ENABLED | mavlink.MAV_MODE_FLAG_AUTO_ENABLED
        if self.ap.armed:
            mode |= mavlink.MAV_MODE_FLAG_SAFETY_ARMED
        state = mavlink.MAV_STATE_ACTIVE if self.ap.armed else mavlink.MAV_STATE_STANDBY
        self.send([self.mav.heartbeat_encode(self.mav_type, mavlink.MAV_AUTOPILOT_GENERIC, mode,
                                             0, state)])

    def run(self):
        """Receive loop until shutdown (or mission done with exit_when_done).

        An executor thread serves the parameter services meanwhile; it stops before the loop
        returns, so the node is never destroyed under a waiting executor.
        """
        import threading

        from rclpy.executors import SingleThreadedExecutor
        services = SingleThreadedExecutor()
        services.add_node(self)         # parameter services and the diagnostics timer

        def serve():
            try:
                services.spin()
            except Exception:  # noqa: BLE001 - shutdown under a waiting executor: nothing to do
                if self.context.ok():
                    raise
        thread = threading.Thread(target=serve, name='parameter services', daemon=True)
        thread.start()
        try:
            self._loop()
        finally:
            services.shutdown(timeout_sec=1.0)
            thread.join(1.0)
            if self.answered:
                self._cost = (
                    f'answered {self.answered} HIL_SENSOR: '
                    f'{1e6 * self.busy_s / self.answered:.0f} µs of work per answer (parse, '
                    'estimate, control, send), loop thread CPU '
                    f'{1e6 * (time.thread_time() - self._cpu0) / self.answered:.0f} µs per '
                    'answer (with its polling while waiting)')

    def _loop(self):
        import rclpy
        if self.realtime_priority > 0:
            apply_realtime(self, self.realtime_priority, 'FC loop')
        self._cpu0 = time.thread_time()
        while rclpy.ok():
            now = time.monotonic()
            self.heartbeat(now)
            self.send(self.mission.poll(self.mav, now))
            if (not self.mission.complete and not self._asked and self.sim_peer
                    and self.mission.count is None
                    and now - self._first_sim_wall > self.mission_wait_s):
                self._asked = True
                self.send(self.mission.request_list(self.mav, self.sim_peer, now))
            self._drain_events()
            data, addr = self.link.recv(0.05, self.spin.start())
            self.spin.done(data is not None)
            if data is None:
                continue
            t0 = time.perf_counter()
            self._guarded(self._on_datagram, data, addr, 'invalid')
            reset_parser(self.mav)
            self.busy_s += time.perf_counter() - t0
            if self.exit_when_done and self.ap.phase == DONE:   # both cores: 'done'
                self._drain_events()
                self.say('mission done: exiting')
                return

    def _on_datagram(self, data: bytes, addr):
        msgs = self.mav.parse_buffer(data) or []
        if not msgs:
            return self._reject('truncated', f'{len(data)} bytes and no complete MAVLink '
                                'frame', addr)
        for m in msgs:
            self.on_message(m, time.monotonic(), addr)

    def on_message(self, m, now, addr=None):
        """Dispatch one decoded message."""
        t = m.get_type()
        if t == 'BAD_DATA':
            return self._reject('undecodable', f'undecodable MAVLink input: {m.reason}', addr)
        if self.sim_peer is None and t in ('HEARTBEAT', 'HIL_SENSOR'):
            self.sim_peer = (m.get_srcSystem(), m.get_srcComponent())
            self._first_sim_wall = now
        if t == 'HIL_SENSOR':
            refused = self.ap.rejected
            thr = self.ap.hil_sensor(m)
            if self.ap.rejected > refused:
                self._reject('value', f'HIL_SENSOR with non-finite values refused '
                             f'({self.ap.rejected} so far): the estimate keeps the last good '
                             'frame, the motors the last output', addr)
            controls = list(thr) + [0.0] * (16 - len(thr))
            mode = mavlink.MAV_MODE_FLAG_HIL_ENABLED | (
                mavlink.MAV_MODE_FLAG_SAFETY_ARMED if self.ap.armed else 0)
            self.send([self.mav.hil_actuator_controls_encode(m.time_usec, controls, mode,
                                                             LOCKSTEP_FLAG)])
            self.answered += 1
        elif t == 'HIL_GPS':
            self.ap.hil_gps(m)
        elif t == 'LANDING_TARGET':
            refused = self.ap.tracker.rejected
            self.ap.landing_target(m)
            if self.ap.tracker.rejected > refused:
                self._reject('value', f'LANDING_TARGET with non-finite angles or no distance '
                             f'refused ({self.ap.tracker.rejected} so far)', addr)
        elif t == 'HOME_POSITION':
            self.ap.home_position(m)
        elif t == 'MISSION_COUNT':
            if m.target_system in (0, self.sysid):
                self.send(self.mission.on_count(self.mav, m, now))
        elif t == 'MISSION_ITEM_INT':
            if m.target_system in (0, self.sysid):
                was = self.mission.complete
                self.send(self.mission.on_item(self.mav, m, now))
                if self.mission.complete and not was:
                    self.ap.set_mission(self.mission.items)

    def _publish_diagnostics(self):
        up = self.sim_peer is not None
        self._publish_port_status(
            'MAVLink FC link', self.link.describe(), up,
            f'simulator {self.sim_peer[0]}:{self.sim_peer[1]}, {self.answered} answered, '
            f'{sum(self.rejects.values())} rejected' if up else 'no simulator heard',
            {'answered': self.answered, 'mission_items': len(self.mission.items)},
            [('phase', self.ap.phase), ('armed', self.ap.armed)])

    def destroy_node(self):
        """Log the FC's own cost per answer (a peer's, measured apart); PortNode closes the link.

        Logged once the node is gone: after Ctrl-C the context is shut down, and a node's
        logger would then fail to publish the line on /rosout.
        """
        log = self.get_logger().name
        super().destroy_node()
        if self._cost:
            rclpy.logging.get_logger(log).info(self._cost)

    def _drain_events(self):
        for src in (self.mission.events, self.ap.events):
            while src:
                self.say(src.pop(0))


def main(args=None):
    """Run builtin_fc: its own receive loop instead of spinning."""
    run_node(BuiltinFc, 'builtin_fc', args, body=BuiltinFc.run)


if __name__ == '__main__':
    main()
