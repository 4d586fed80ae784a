"""usv_swarm_node: owns simulation time and simulates the USV swarm of the USV UI (seed 004).

The time source of sim_usv_swarm (base: sim_ros.sim_time_node). The swarm itself is
sim_dynamics.core.usv_swarm.SwarmSim: N boats, PID speed/heading control with the init's gains,
the motion modes and tasks of the orders, health/attack, obstacles, map bounds, collisions.

Input (relative names; the graph runs it in namespace ``swarm``): input
(aerosim_msgs/SwarmInput), every init, session change (command 26) and order (command 22) the
UI bridge accepted, in the order it received them, numbered. They are applied in that order,
each answered on input_result (SwarmInputResult: applied, with what; or refused, with why). An
init replaces the swarm, which restarts in the current session; a session start (1 practice,
2 simulation) restarts it from its init state and runs; 0 end and 3 real-boat pause it (in a
real-boat session orders go out on `command` for the boats' drivers, not simulated).
Outputs: state (aerosim_msgs/SwarmState, every boat, state_rate_hz on sim time from each
session start, with the last input applied), config (JsonData, latched: the init in force),
session (UInt8, latched), command (BoatCommand: every order applied or passed to drivers),
boat_<id>/vehicle_state and boat_<id>/odom for the first boat_topics_max boats. The run's
summary (every boat's track and health) is sampled in the step and written when the run stops
(sim_dynamics.swarm_summary).
"""

from std_msgs.msg import UInt8

from aerosim_msgs.msg import (
    BoatCommand,
    JsonData,
    SwarmInput,
    SwarmInputResult,
    SwarmInputResults,
    SwarmInputs,
    SwarmState,
)
from sim_core.clock import SimState
from sim_core.decimator import Decimator
from sim_core.validate import FieldError
from sim_dynamics.core.swarm_config import (
    SwarmConfig,
    json_object,
    load_swarm_config,
    parse_swarm_config,
)
from sim_dynamics.core.swarm_params import NODE_PARAMETERS, PARAMETERS, SwarmNodeConfig, checked
from sim_dynamics.core.usv_swarm import SwarmParams, SwarmSim, TypeTable
from sim_dynamics.swarm_msgs import order_from_msg
from sim_dynamics.swarm_state_msg import swarm_state
from sim_dynamics.swarm_summary import SwarmSummary
from sim_ros import qos
from sim_ros.convert import time_msg
from sim_ros.params import read_config
from sim_ros.run import run_node, until_judged
from sim_ros.sim_time_node import SimTimeNode, serialized
from sim_ros.vehicle_pub import VehicleStatePublisher

# At most this many event lines (collisions, waypoints) are logged per step; the rest counted.
MAX_EVENT_LINES = 5
# Results kept to answer an input the bridge sends again (its answer was lost).
KEPT_RESULTS = 2000
SESSION_END, SESSION_PRACTICE, SESSION_SIMULATION, SESSION_REAL = (
    SwarmState.SESSION_IDLE, SwarmState.SESSION_PRACTICE, SwarmState.SESSION_SIMULATION,
    SwarmState.SESSION_REAL)
SESSION_NAMES = {SESSION_END: 'end', SESSION_PRACTICE: 'practice',
                 SESSION_SIMULATION: 'simulation', SESSION_REAL: 'real-boat'}


class UsvSwarmNode(SimTimeNode):
    """The USV swarm simulation and sim clock."""

    def __init__(self, **node_kw):
        """Declare parameters, load the initial config, create the interfaces."""
        super().__init__('usv_swarm_node', default_rate_hz=50.0, scenario=None, **node_kw)
        node = read_config(self, SwarmNodeConfig, NODE_PARAMETERS)
        self.params = checked(read_config(self, SwarmParams, PARAMETERS))
        self.max_boats, self.boat_topics_max = node.max_boats, node.boat_topics_max
        self.types = TypeTable.load(node.types_file)
        cfg, self._config_json = load_swarm_config(node.sim_config, self.types.boats,
                                                   self.types.obstacles, self.max_boats)
        self.sim = None
        self.session = SESSION_END
        self._source, self._seq = None, 0       # the input stream: its sender, last applied
        self._session_start = time_msg(0)       # sim time the session (re)started
        self._results = {}                      # seq -> result, the last KEPT_RESULTS
        self.pub_swarm = self.create_publisher(SwarmState, 'state', qos.STATE)
        self.pub_result = self.create_publisher(SwarmInputResults, 'input_result', qos.INPUT)
        self.pub_config = self.create_publisher(JsonData, 'config', qos.LATCHED)
        self.pub_session = self.create_publisher(UInt8, 'session', qos.LATCHED)
        self.pub_command = self.create_publisher(BoatCommand, 'command', qos.INPUT)
        self._state_dec = Decimator(node.state_rate_hz)
        self._boat_dec = Decimator(node.boat_topics_rate_hz)
        self._boat_pubs = {}
        self.judge = SwarmSummary(self, node.sim_config)    # the run's summary (until_judged)
        self._load(cfg, self.cfg.time_scale)
        self.pub_config.publish(JsonData(data=self._config_json))
        self.create_subscription(SwarmInputs, 'input', self._on_inputs, qos.INPUT)
        self.clock.state = SimState.PAUSED
        self._start_time()
        self.get_logger().info(
            f'{len(cfg.boats)} boats, {len(cfg.obstacles)} obstacles from {node.sim_config}; '
            f'{self.describe_time()}' + ('; waiting for command 26' if node.session == 0 else ''))
        self._set_session(node.session)

    # --- config and session --------------------------------------------------------------------
    def _load(self, cfg: SwarmConfig, time_scale: float) -> None:
        """Replace the swarm by cfg (FieldError if its layout is refused: nothing changes)."""
        sim = SwarmSim(cfg, self.types, self.params)
        self.sim = sim
        self.judge.new_swarm(cfg, self.types)
        self.ids = cfg.boat_index()
        if time_scale > 0.0:
            self.set_time_scale(time_scale)
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

    def _set_session(self, code: int) -> None:
        """Reset the swarm to its init state; run in practice/simulation, pause otherwise.

        The state goes out at once and then every state period from now (the UI's 21 of the
        new session are state_rate_hz apart from the first).
        """
        self.sim.reset()
        self.sim.damage_enabled = code == SESSION_SIMULATION
        self.session = code
        self.stepper.pause(code not in (SESSION_PRACTICE, SESSION_SIMULATION), self._now())
        self._message = f'session {SESSION_NAMES[code]}'
        self.get_logger().info(f'{self._message} at t = {self.clock.t:.3f} s')
        self.pub_session.publish(UInt8(data=code))
        self._session_start = self._stamp()
        self._state_dec.restart_at(self.clock.t_ns)
        self._publish_state(self._session_start)
        self._publish_status()

    def _stamp(self):
        return time_msg(self.clock.t_ns)

    # --- the input stream ----------------------------------------------------------------------
    @serialized
    def _on_inputs(self, batch: SwarmInputs):
        """Apply a batch of inputs in order; answer them all in one SwarmInputResults."""
        if batch.source != self._source:
            self._source, self._seq, self._results = batch.source, 0, {}
        out = SwarmInputResults(source=batch.source)
        for msg in batch.inputs:
            if msg.seq <= self._seq:       # sent again: its answer was lost; answer again
                if msg.seq in self._results:
                    out.results.append(self._results[msg.seq])
                continue
            if msg.seq != self._seq + 1:
                self.get_logger().error(f'input stream of {batch.source}: '
                                        f'{msg.seq - self._seq - 1} inputs missing before '
                                        f'{msg.seq}')
            self._seq = msg.seq
            r = SwarmInputResult(seq=msg.seq, kind=msg.kind)
            try:
                r.text = self._apply_input(msg)
                r.applied = True
            except FieldError as exc:
                r.refusal, r.text = exc.kind, str(exc)
                self._reject(f'input {msg.seq}', r.text)
            except ValueError as exc:           # a bad code in a message from elsewhere
                r.refusal, r.text = 'value', str(exc)
                self._reject(f'input {msg.seq}', r.text)
            self._results[msg.seq] = r
            self._results.pop(msg.seq - KEPT_RESULTS, None)
            out.results.append(r)
            if r.applied and msg.kind != SwarmInput.KIND_COMMAND:
                self.get_logger().info(r.text)
        out.header.stamp = self._stamp()
        out.boats = self.sim.n_boats
        self.pub_result.publish(out)

    def _apply_input(self, msg: SwarmInput) -> str:
        """Apply one input; its description, or FieldError/ValueError (nothing changed)."""
        if msg.kind == SwarmInput.KIND_INIT:
            cfg = parse_swarm_config(json_object(msg.config_json), self.types.boats,
                                     self.types.obstacles, self.max_boats)
            self._load(cfg, cfg.time_scale)
            self._config_json = msg.config_json
            self.pub_config.publish(JsonData(data=msg.config_json))
            self._set_session(self.session)
            return (f'init: {len(cfg.boats)} boats, {len(cfg.obstacles)} obstacles, time '
                    f'scale {cfg.time_scale:g}; session {SESSION_NAMES[self.session]}')
        if msg.kind == SwarmInput.KIND_SESSION:
            if msg.session not in SESSION_NAMES:
                raise FieldError('value', f'session: code {msg.session}, expected 0..3')
            self._set_session(msg.session)
            return f'session {SESSION_NAMES[msg.session]}'
        if msg.kind != SwarmInput.KIND_COMMAND:
            raise FieldError('command', f'kind {msg.kind}: expected 1..3')
        order = order_from_msg(msg.command)
        if self.session == SESSION_END:
            raise FieldError('state', f'boat {order.boat_id}: no session (send 26: 1 practice, '
                             '2 simulation) first')
        c = msg.command
        c.header.stamp = self._stamp()
        if self.session == SESSION_REAL:
            self.pub_command.publish(c)
            return f"boat {order.boat_id}: for the real boat's driver (not simulated)"
        text = self.sim.command(order)
        self.pub_command.publish(c)
        return text

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

    def state_arrays(self, member: int = 0):
        """(t_ns, SwarmSim): the swarm itself for in-process listeners (benchmarks)."""
        return self.clock.t_ns, self.sim

    def _publish_state(self, stamp):
        t = self.clock.t_ns
        self.judge.sample(t, self.sim)
        if self._state_dec.due(t):
            self._publish_swarm(stamp)
        if self._boat_pubs and self._boat_dec.due(t):
            for bid, out in self._boat_pubs.items():
                out.publish_boat(stamp, self.sim.boats, self.ids[bid], True)

    def _publish_swarm(self, stamp):
        self.pub_swarm.publish(swarm_state(self.sim, stamp, self.cfg.world_frame_id, self.session,
                                           self._session_start, self._seq, self._source or 0))


def main(args=None):
    """Run usv_swarm_node until Ctrl-C; its summary is written then."""
    run_node(UsvSwarmNode, 'usv_swarm_node', args, body=until_judged)


if __name__ == '__main__':
    main()
