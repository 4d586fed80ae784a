"""usv_bridge: the USV UI protocol (seed 004) on UDP (or TCP) <-> the swarm's ROS topics.

In (from the UI): the init object, commands 22 and 26, one UTF-8 JSON text per datagram (TCP:
per line). Everything is validated here (usv_bridge.core.protocol, and the init's layout
against obstacles and other boats with the same code usv_swarm_node runs); a refused input
is counted by kind on /diagnostics, logged (rate-limited) and changes nothing. Accepted inputs
go to usv_swarm_node: config (JsonData, latched), session (UInt8, latched), command
(BoatCommand). An init is answered with ``{"reply": "init", "ok": ...}`` (ours; replies
parameter).
Out (to the UI): command 21 from the swarm's state topic at state_rate_hz (sim time), split
into several complete commands when one datagram would exceed max_datagram_bytes (TCP: one
line per command). The state topic is the pipeline's (reliable, deep): no state is skipped,
so 21 stamps are exactly 1 / state_rate_hz apart; a bridge that cannot keep up (encoding
takes ~15 ms per 1,000 boats) holds the swarm node back through DDS flow control.
"""

import datetime
import json

from aerosim_msgs.msg import BoatCommand, JsonData, SwarmState
import numpy as np
from rclpy.clock import Clock, ClockType
from std_msgs.msg import UInt8

from sim_core.decimator import Decimator
from sim_core.errors import ConfigError
from sim_core.ros import qos
from sim_core.ros.convert import time_ns
from sim_core.ros.params import declare
from sim_core.ros.port_node import PortNode
from sim_core.ros.run import run_node
from sim_core.timeutil import NS_PER_S
from sim_dynamics.core.usv_swarm import SwarmParams, SwarmSim
from sim_dynamics.usv_swarm_node import load_sim_config, load_types
from usv_bridge.core import protocol as P



class UsvBridge(PortNode):
    """USV UI protocol bridge node."""

    def __init__(self):
        """Declare parameters, open the socket, create the interfaces."""
        super().__init__('usv_bridge')
        d = self._d
        transport = d('transport', 'udp', "'udp' (one JSON per datagram) or 'tcp' (a server, "
                      'one JSON per line)')
        bind = d('bind', '127.0.0.1:9921', 'Our UDP address host:port')
        ui = d('ui_address', '127.0.0.1:9922', "The UI's UDP address host:port ('' = the last "
               'sender of a valid input)')
        tcp_bind = d('tcp_bind', '127.0.0.1:9921', 'TCP server address (transport tcp)')
        sim_config = d('sim_config', 'SimConfig.json', 'Init object in force until the UI '
                       'sends one (path, or name in config/); as usv_swarm_node')
        types_file = d('types_file', 'usv_types.yaml', 'Boat/obstacle type codes')
        self.max_boats = d('max_boats', 10000, 'Most boats an init may have', 1, 100000)
        rate = d('state_rate_hz', 10.0, 'Command 21 rate [Hz] (sim)', 0.1, 1000.0)
        self.max_bytes = d('max_datagram_bytes', 60000, 'Largest command-21 datagram [bytes]; '
                           'more boats are split over several', 1000, 65000)
        stamps = d('timestamps', 'sim', "Command 21 timestamp: 'sim' (the init's hour today + "
                   "session sim time) or 'wall' (local time now)")
        self.replies = d('replies', True, 'Answer an init with {"reply": "init", "ok": ...}')
        warn_period = d('warn_period_s', 2.0, 'Minimum period of repeated warnings [s]',
                              0.1, 600.0)
        try:
            if stamps not in ('sim', 'wall'):
                raise ValueError(f"timestamps: 'sim' or 'wall', got {stamps!r}")
            self.link = self._open_link(transport, bind, tcp_bind, ui, 'ui_address')
        except (ValueError, OSError) as exc:
            raise ConfigError(str(exc)) from exc
        self.tcp = transport == 'tcp'
        self.wall_stamps = stamps == 'wall'
        self.types = load_types(types_file)
        self._set_config(load_sim_config(sim_config, self.types, self.max_boats))
        self.session = P.SESSION_END
        self._session_t0 = None             # sim time [ns] of the session's first state
        self._buf = b''
        self._init_port('USV UI', P.REJECT_KINDS, warn_period, max_text=300)
        self.counts = dict(rx=0, init=0, cmd22=0, cmd26=0, cmd21=0, datagrams21=0)
        self.pub_config = self.create_publisher(JsonData, 'config', qos.LATCHED)
        self.pub_session = self.create_publisher(UInt8, 'session', qos.LATCHED)
        self.pub_command = self.create_publisher(BoatCommand, 'command', qos.COMMAND)
        self.create_subscription(SwarmState, 'state', self._on_state, qos.STATE)
        self._dec = Decimator(rate)
        wall = Clock(clock_type=ClockType.STEADY_TIME)
        self.create_timer(0.01, self._poll, clock=wall)
        self.create_timer(1.0, self._publish_diagnostics, clock=wall)
        self.get_logger().info(
            f'USV UI {self.link.describe()}; command 21 at {rate:g} Hz (sim), datagrams up to '
            f'{self.max_bytes} bytes, {stamps} timestamps; {len(self.config.boats)} boats '
            f'from {sim_config} until an init arrives')

    def _d(self, *a, **k):
        return declare(self, *a, **k)

    def _set_config(self, cfg: P.SimConfig):
        self.config = cfg
        self.ids = cfg.boat_index()
        self._hour = cfg.hour

    # --- input -----------------------------------------------------------------------------------
    def _poll(self):
        self._read_link(self._on_data)

    def _on_data(self, data: bytes, addr):
        if not self.tcp:
            return self._guarded(self.handle_input, data, addr, 'value')
        self._buf += data
        *lines, self._buf = self._buf.split(b'\n')
        if len(self._buf) > P.MAX_TEXT_BYTES:
            self._buf = b''
            self._reject('size', f'a line longer than {P.MAX_TEXT_BYTES} bytes', addr)
        for line in lines:
            if line.strip():
                self._guarded(self.handle_input, line, addr, 'value')

    def handle_input(self, data: bytes, addr):
        """Decode, validate and forward one input; refusals counted by kind."""
        code = None
        try:
            code, obj = P.decode(data)
            if code == 'init':
                return self._on_init(obj, addr)
            if code == P.CMD_CONTROL:
                return self._on_22(obj, addr)
            if code == P.CMD_SESSION:
                return self._on_26(obj, addr)
            raise P.ProtocolError('command', '21 is sent by the simulator, not to it')
        except P.ProtocolError as exc:
            if code == 'init' and self.replies:
                self._reply(addr, {'reply': 'init', 'ok': False, 'kind': exc.kind,
                                   'error': str(exc)})
            self._reject(exc.kind, str(exc), addr)

    def _accepted(self, addr):
        self.counts['rx'] += 1
        if not self.tcp:
            self.link.learn(addr)

    def _on_init(self, obj, addr):
        cfg = P.parse_config(obj, self.types.boats, self.types.obstacles, self.max_boats)
        SwarmSim(cfg, self.types, SwarmParams())       # the layout check usv_swarm_node runs
        self._accepted(addr)
        self.counts['init'] += 1
        self._set_config(cfg)
        self._session_t0 = None                 # the swarm restarts in the current session
        self.pub_config.publish(JsonData(data=json.dumps(obj)))
        if cfg.ignored:
            self.get_logger().warning(f'init: ignored fields {list(cfg.ignored)[:10]}')
        self.get_logger().info(f'init accepted: {len(cfg.boats)} boats, {len(cfg.obstacles)} '
                               f'obstacles, time scale {cfg.time_scale:g}, sea state '
                               f'{cfg.wave_degree}, weather {cfg.weather}')
        if self.replies:
            self._reply(addr, {'reply': 'init', 'ok': True, 'boats': len(cfg.boats),
                               'obstacles': len(cfg.obstacles), 'ignored': list(cfg.ignored)})

    def _on_22(self, arr, addr):
        cmd = P.parse_command22(arr, self.config, self.ids)
        if self.session == P.SESSION_END:
            raise P.ProtocolError('state', f'22 for boat {cmd.boat_id}: no session (send 26 '
                                  'first)')
        self._accepted(addr)
        self.counts['cmd22'] += 1
        m = BoatCommand(boat_id=cmd.boat_id, task=cmd.task, target_id=cmd.target_id,
                        route_id=cmd.route_id, control_mode=cmd.mode,
                        throttle_or_speed=cmd.throttle_or_speed,
                        rudder_or_heading=cmd.rudder_or_heading,
                        waypoints_changed=cmd.changed)
        m.header.stamp = self.get_clock().now().to_msg()
        if cmd.waypoints:
            w = np.array(cmd.waypoints, dtype=float)
            m.waypoint_lon_deg, m.waypoint_lat_deg, m.waypoint_value = \
                w[:, 0].tolist(), w[:, 1].tolist(), w[:, 2].tolist()
        self.pub_command.publish(m)

    def _on_26(self, arr, addr):
        code = P.parse_command26(arr)
        self._accepted(addr)
        self.counts['cmd26'] += 1
        self.session = code
        self._session_t0 = None
        self._dec.reset()
        self.pub_session.publish(UInt8(data=code))
        self.get_logger().info(f'command 26: session {P.SESSION_NAMES[code]}')

    def _reply(self, addr, obj):
        data = json.dumps(obj).encode()
        if self.tcp:
            self.link.send(data + b'\n')
        elif addr is not None:
            self.link.send_to(data, addr)

    # --- output ----------------------------------------------------------------------------------
    def _on_state(self, msg: SwarmState):
        t = time_ns(msg.header.stamp)
        if msg.session == P.SESSION_END:
            return
        if self._session_t0 is None or t < self._session_t0:
            self._session_t0 = t
            self._dec.reset()
        if not self._dec.due(t - self._session_t0):
            return
        cols = {name: np.asarray(getattr(msg, name)) for name, _ in P.CMD21_COLUMNS}
        if self.wall_stamps:
            when = datetime.datetime.now()
        else:
            start = datetime.datetime.combine(datetime.date.today(), datetime.time(self._hour))
            when = start + datetime.timedelta(seconds=(t - self._session_t0) / NS_PER_S)
        stamp = P.timestamp(when)
        if self.tcp:
            parts = [p + b'\n' for p in P.encode_21(cols, stamp)]
        else:
            parts = P.encode_21(cols, stamp, self.max_bytes)
        for p in parts:
            self.link.send(p)
        self.counts['cmd21'] += 1
        self.counts['datagrams21'] += len(parts)

    def _publish_diagnostics(self):
        up = self.link.remote is not None
        self._publish_port_status(
            'USV UI link', 'usv_ui', up,
            f'{self.counts["rx"]} in, {sum(self.rejects.values())} rejected, '
            f'{self.counts["cmd21"]} states out' if up else 'no UI address yet', self.counts,
            [('session', P.SESSION_NAMES[self.session]),
             ('send_errors', self.link.send_errors)])

def main(args=None):
    """Run usv_bridge."""
    run_node(UsvBridge, 'usv_bridge', args)


if __name__ == '__main__':
    main()
