"""usv_swarm_node: owns simulation time and simulates the USV swarm of the USV UI (seed 004).

The time source of sim_usv_swarm (base: sim_core.ros.sim_time_node). The swarm itself is
sim_dynamics.core.usv_swarm.SwarmSim: N boats, PID speed/heading control with the init's gains,
the motion modes and tasks of command 22, health/attack, obstacles, map bounds, collisions.

Inputs (relative names; the graph runs it in namespace ``swarm``), published by usv_bridge:
- config (aerosim_msgs/JsonData, latched): the init object (SimConfig.json). Validated again
  here (same code as the bridge); an accepted config replaces the swarm, which restarts in the
  current session (so init and 26 may arrive in either order).
- session (std_msgs/UInt8, latched): command 26. 1 practice / 2 simulation: the swarm restarts
  from its init state and runs (practice: attacks deal no damage); 0 end and 3 real-boat: the
  swarm is reset and the clock paused (real-boat: the commands are for real boats' drivers).
- command (aerosim_msgs/BoatCommand): command 22, validated again, applied while running
  (one that overtakes the session start on the other topic is applied at the start).
Outputs: state (aerosim_msgs/SwarmState, every boat, state_rate_hz on sim time),
boat_<id>/vehicle_state and boat_<id>/odom for the first boat_topics_max boats (rviz, bags).
"""

import array
import math

from aerosim_msgs.msg import BoatCommand, JsonData, SwarmState
import numpy as np
from std_msgs.msg import UInt8

from sim_core.clock import SimState
from sim_core.decimator import Decimator
from sim_core.errors import ConfigError
from sim_core.paths import resolve_config_path
from sim_core.ros import qos
from sim_core.ros.convert import time_msg
from sim_core.ros.params import declare
from sim_core.ros.run import run_node
from sim_core.ros.sim_time_node import serialized, SimTimeNode
from sim_core.ros.vehicle_pub import VehicleStatePublisher
from sim_dynamics.core.usv_swarm import SwarmParams, SwarmSim, TypeTable
from usv_bridge.core import protocol as P

# At most this many event lines (collisions, waypoints) are logged per step; the rest counted.
MAX_EVENT_LINES = 5
# Commands held while no session runs (they overtook the session start), at most.
MAX_PENDING = 10000
INT_COLUMNS = ('id', 'team', 'status', 'task', 'target_id', 'control_mode')


def load_types(types_file: str) -> TypeTable:
    """The type table (config/usv_types.yaml or a path); boat files from config/boats."""
    path = resolve_config_path(types_file)
    boats_dir = resolve_config_path('wamv', None, 'boats').parent
    return TypeTable.from_yaml(path, boats_dir)


def parse_init(data: bytes, types: TypeTable, max_boats: int) -> P.SimConfig:
    """An init (SimConfig) from JSON bytes, with the wire's parser.

    No NaN/Infinity, UTF-8 checked; ValueError (ProtocolError) naming what is wrong.
    """
    code, obj = P.decode(data)
    if code != 'init':
        raise ValueError(f'must be an object (the init), got command {code}')
    return P.parse_config(obj, types.boats, types.obstacles, max_boats)


def load_sim_config(name: str, types: TypeTable, max_boats: int) -> P.SimConfig:
    """Read and validate a SimConfig.json file (path or name in config/); ConfigError if bad."""
    path = resolve_config_path(name)
    try:
        return parse_init(path.read_bytes(), types, max_boats)
    except (OSError, ValueError) as exc:      # ProtocolError is a ValueError
        raise ConfigError(f'{path}: {exc}') from exc


def as_array(values, typecode: str) -> array.array:
    """A numpy array as array.array (what rclpy takes for sequence fields without a copy loop)."""
    a = array.array(typecode)
    a.frombytes(np.ascontiguousarray(values, dtype='q' if typecode == 'q' else 'd').tobytes())
    return a


class UsvSwarmNode(SimTimeNode):
    """The USV swarm simulation and sim clock."""

    def __init__(self):
        """Declare parameters, load the initial config, create the interfaces."""
        super().__init__('usv_swarm_node', default_rate_hz=50.0, scenario=False)
        d = self._d
        sim_config = d('sim_config', 'SimConfig.json',
                       'Initial init object (path, or name in config/); the UI replaces it')
        types_file = d('types_file', 'usv_types.yaml', 'Boat/obstacle type codes (path, or '
                       'name in config/)')
        session = d('session', 0, 'Session at start: 0 wait for command 26, 1 practice, '
                    '2 simulation', 0, 2)
        self.max_boats = d('max_boats', 10000, 'Most boats an init may have', 1, 100000)
        state_rate = d('state_rate_hz', 10.0, 'SwarmState rate [Hz] (sim)', 0.1, 1000.0)
        self.boat_topics_max = d('boat_topics_max', 50, 'Boats (the first in the init) that '
                                 'get their own vehicle_state/odom topics', 0, 10000)
        boat_rate = d('boat_topics_rate_hz', 10.0, 'Per-boat topic rate [Hz] (sim)', 0.1,
                      1000.0)
        cur = d('current_ne', [0.0, 0.0], 'Water current (north, east) [m/s]')
        self.params = SwarmParams(
            waypoint_radius_m=d('waypoint_radius_m', 5.0, 'Waypoint reached within [m]',
                                0.5, 1000.0),
            station_gain=d('station_gain', 0.2, 'Task slot error to velocity [1/s]', 0.01, 5.0),
            escort_distance_m=d('escort_distance_m', 30.0, 'Escort: distance beside the '
                                'target [m]', 1.0, 1e4),
            defend_distance_m=d('defend_distance_m', 50.0, 'Defend: distance from the target '
                                'toward the threat [m]', 1.0, 1e4),
            ring_radius_m=d('ring_radius_m', 60.0, 'Ring guard radius [m]', 1.0, 1e4),
            ring_lead_deg=d('ring_lead_deg', 30.0, 'Ring guard: lead of the chased point [deg]',
                            1.0, 90.0),
            formation_spacing_m=d('formation_spacing_m', 25.0, 'Formation slot spacing [m]',
                                  1.0, 1e4),
            cruise_ratio=d('cruise_ratio', 0.8, 'Task speed / top speed when the command '
                           'gives none', 0.05, 1.0),
            wind_from_deg=d('wind_from_deg', 0.0, 'Direction the wind comes from (compass) '
                            '[deg]; its speed is the init weather (Beaufort)', 0.0, 360.0),
            current_ne=tuple(float(x) for x in cur),
            boat_collisions=d('boat_collisions', True, 'Detect boat-boat collisions'))
        if len(cur) != 2 or not all(math.isfinite(x) for x in cur):
            raise ConfigError(f'current_ne: two finite numbers (north, east) [m/s], got {cur}')
        self.types = load_types(types_file)
        cfg = load_sim_config(sim_config, self.types, self.max_boats)
        self.sim = None
        self.session = P.SESSION_END
        self._pending = []
        self.pub_swarm = self.create_publisher(SwarmState, 'state', qos.STATE)
        self._state_dec = Decimator(state_rate)
        self._boat_dec = Decimator(boat_rate)
        self._boat_pubs = {}
        self._load(cfg, self.cfg.time_scale)
        self.create_subscription(JsonData, 'config', self._on_config, qos.LATCHED)
        self.create_subscription(UInt8, 'session', self._on_session, qos.LATCHED)
        self.create_subscription(BoatCommand, 'command', self._on_command, qos.COMMAND)
        self.clock.state = SimState.PAUSED
        self._start_time()
        self.get_logger().info(
            f'{len(cfg.boats)} boats, {len(cfg.obstacles)} obstacles from {sim_config}; '
            f'{self.describe_time()}' + ('; waiting for command 26' if session == 0 else ''))
        if session:
            self._set_session(session)

    def _d(self, *a, **k):
        return declare(self, *a, **k)

    # --- config and session --------------------------------------------------------------------
    def _load(self, cfg: P.SimConfig, time_scale: float) -> None:
        """Replace the swarm by cfg (raises ProtocolError if its layout is refused)."""
        sim = SwarmSim(cfg, self.types, self.params)
        self.sim = sim
        self.ids = cfg.boat_index()
        if time_scale > 0.0:
            self._set_time_scale(time_scale)
        keep = {int(b.id) for b in cfg.boats[:self.boat_topics_max]}
        for bid in list(self._boat_pubs):
            if bid not in keep:
                out = self._boat_pubs.pop(bid)
                self.destroy_publisher(out.pub_state)
                self.destroy_publisher(out.pub_odom)
        for bid in keep:
            if bid not in self._boat_pubs:
                self._boat_pubs[bid] = VehicleStatePublisher(
                    self, self.cfg.world_frame_id, f'boat_{bid}/{self.cfg.body_frame_id}',
                    prefix=f'boat_{bid}/', state_qos=qos.VIEW_PUB)

    @serialized
    def _on_config(self, msg: JsonData):
        try:
            cfg = parse_init(msg.data.encode('utf-8'), self.types, self.max_boats)
            self._load(cfg, cfg.time_scale)
        except ValueError as exc:
            return self._reject('config', str(exc))
        self._set_session(self.session, f'new config: {len(cfg.boats)} boats, '
                          f'{len(cfg.obstacles)} obstacles, time scale {cfg.time_scale:g}')

    @serialized
    def _on_session(self, msg: UInt8):
        if msg.data not in P.SESSION_NAMES:
            return self._reject('session', f'code {msg.data}: expected 0..3')
        self._set_session(msg.data)

    def _set_session(self, code: int, why: str = '') -> None:
        """Reset the swarm to its init state; run in practice/simulation, pause otherwise."""
        now = self._now()
        self.sim.reset()
        self.sim.damage_enabled = code == P.SESSION_SIMULATION
        self.session = code
        if self.clock.state != SimState.STOPPED:
            running = code in (P.SESSION_PRACTICE, P.SESSION_SIMULATION)
            self.clock.set_state(SimState.RUNNING if running else SimState.PAUSED, now)
        self._message = f'session {P.SESSION_NAMES[code]}' + (f' ({why})' if why else '')
        self.get_logger().info(f'{self._message} at t = {self.clock.t:.3f} s')
        pending, self._pending = self._pending, []
        if code in (P.SESSION_PRACTICE, P.SESSION_SIMULATION):
            for msg in pending:
                self._apply(msg)
        self._publish_swarm(self._stamp())
        self._publish_status()

    def _stamp(self):
        return time_msg(self.clock.t_ns)

    @serialized
    def _on_command(self, msg: BoatCommand):
        if self.session == P.SESSION_REAL:
            return                          # for the real boats' drivers, not simulated
        if self.session == P.SESSION_END:
            # usv_bridge forwards a 22 only after a 26 start: this one overtook the session
            # message (topics are not ordered with each other); apply it at the start
            if len(self._pending) >= MAX_PENDING:
                return self._reject('command', f'boat {msg.boat_id}: no session running')
            self._pending.append(msg)
            return
        self._apply(msg)

    def _apply(self, msg: BoatCommand):
        n = len(msg.waypoint_lon_deg)
        if not len(msg.waypoint_lat_deg) == len(msg.waypoint_value) == n:
            return self._reject('command', 'waypoint arrays of different lengths')
        wire = [P.CMD_CONTROL, msg.boat_id, msg.task, msg.target_id, msg.route_id, 0,
                msg.control_mode, msg.throttle_or_speed, msg.rudder_or_heading,
                int(msg.waypoints_changed), n]
        for k in range(n):
            wire += [msg.waypoint_lon_deg[k], msg.waypoint_lat_deg[k], msg.waypoint_value[k]]
        try:
            cmd = P.parse_command22(wire, self.sim.cfg, self.ids)
            self.get_logger().info(self.sim.command(cmd))
        except ValueError as exc:
            self._reject('command', str(exc))

    # --- model hooks ---------------------------------------------------------------------------
    def _integrate(self, dt: float):
        self.sim.step(dt)
        events = self.sim.take_events()
        for line in events[:MAX_EVENT_LINES]:
            self.get_logger().info(line)
        if len(events) > MAX_EVENT_LINES:
            self.get_logger().info(f'... and {len(events) - MAX_EVENT_LINES} more events')

    def _reset_model(self):
        self.sim.reset()

    def state_arrays(self):
        """(t_ns, SwarmSim): the swarm itself for in-process listeners (benchmarks)."""
        return self.clock.t_ns, self.sim

    def _publish_state(self, stamp):
        t = self.clock.t_ns
        if self._state_dec.due(t):
            self._publish_swarm(stamp)
        if self._boat_pubs and self._boat_dec.due(t):
            for bid, out in self._boat_pubs.items():
                out.publish_boat(stamp, self.sim.boats, self.ids[bid], True)

    def _publish_swarm(self, stamp):
        sim = self.sim
        m = SwarmState()
        m.header.stamp = stamp
        m.header.frame_id = self.cfg.world_frame_id
        m.session = self.session
        m.collisions = sum(sim.collisions.values())
        cols = sim.columns()
        cols['team'] = sim.team
        cols['x_east_m'] = sim.boats.e
        cols['y_north_m'] = sim.boats.n
        for name, values in cols.items():
            setattr(m, name, as_array(values, 'q' if name in INT_COLUMNS else 'd'))
        self.pub_swarm.publish(m)


def main(args=None):
    """Run usv_swarm_node."""
    run_node(UsvSwarmNode, 'usv_swarm_node', args)


if __name__ == '__main__':
    main()
