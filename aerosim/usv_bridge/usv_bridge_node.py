"""usv_bridge: the USV UI protocol (seed 004) on UDP (or TCP) <-> the swarm's ROS topics.

The UI's inputs (init, commands 22 and 26) go to usv_swarm_node on `input` (SwarmInputs: a
burst costs one message), numbered, in the order received; its answers (`input_result`,
SwarmInputResults) go back to each input's sender; command 21 goes to the UI from every
SwarmState (`state`; the swarm sends them at state_rate_hz on sim time from each session
start). What is checked, refused, answered, held and sent, and in what order: the pipeline
(usv_bridge.core.pipeline); this node wires the socket, the topics and the timers. The state
topic is the pipeline's (reliable, deep): no state is skipped, so 21 stamps are exactly the
state period apart; a bridge that cannot keep up holds the swarm node back through DDS flow
control. Refusals are counted by kind on /diagnostics and logged (rate-limited). The links
(usv_bridge.ui_link): UDP with a receive buffer sized for the promised burst and the kernel's
drops counted (/diagnostics `kernel_drops`, a warning); TCP with one UI at a time (a second
is refused, both are told, the log says so).
"""

import datetime
import json
import random
import time

import numpy as np
from rclpy.clock import Clock, ClockType

from aerosim_msgs.msg import SwarmInput, SwarmInputResults, SwarmInputs, SwarmState
from sim_core.errors import ConfigError
from sim_core.link import CLOSED_BY_PEER, parse_endpoint
from sim_core.timeutil import NS_PER_S
from sim_dynamics.core.swarm_config import load_swarm_config
from sim_dynamics.core.usv_swarm import TypeTable
from sim_dynamics.swarm_msgs import order_to_msg
from sim_ros import qos
from sim_ros.bridge_node import BridgeNode
from sim_ros.convert import time_ns
from sim_ros.params import read_config
from sim_ros.run import run_node
from usv_bridge.core import pipeline as pl
from usv_bridge.core import protocol as P
from usv_bridge.ui_link import UiTcpLink, UiUdpLink

KINDS = {'init': SwarmInput.KIND_INIT, P.CMD_SESSION: SwarmInput.KIND_SESSION,
         P.CMD_CONTROL: SwarmInput.KIND_COMMAND}


class UsvBridge(BridgeNode):
    """USV UI protocol bridge node: socket, topics and timers around a UiPipeline."""

    OTHER_KIND = 'value'        # a refusal of another kind counts as value

    def __init__(self):
        """Declare parameters, open the socket, create the interfaces."""
        super().__init__('usv_bridge')
        cfg = self.cfg = pl.check(read_config(self, pl.UiConfig, pl.PARAMETERS))
        try:
            self.link = self._open_ui_link(cfg)
        except (ValueError, OSError) as exc:
            raise ConfigError(str(exc)) from exc
        self.tcp = cfg.transport == 'tcp'
        types = TypeTable.load(cfg.types_file)
        swarm, _ = load_swarm_config(cfg.sim_config, types.boats, types.obstacles,
                                     cfg.max_boats)
        self._init_port('USV UI', P.REJECT_KINDS, cfg.warn_period_s, max_text=300)
        self.core = pl.UiPipeline(cfg, types, swarm, random.getrandbits(32))
        try:
            self.core.fits([b.id for b in swarm.boats])
        except P.ProtocolError as exc:
            raise ConfigError(f'sim_config {cfg.sim_config}: {exc}') from None
        self.counts = self.core.counts
        self._buf = b''
        self._drops = 0                 # kernel drops already reported
        self._drops_rose = False        # since the last status
        self.pub_input = self.create_publisher(SwarmInputs, 'input', qos.INPUT)
        self.create_subscription(SwarmInputResults, 'input_result', self._on_results,
                                 qos.INPUT)
        self.create_subscription(SwarmState, 'state', lambda m: self._apply(
            self.core.on_state(m)), qos.STATE)
        wall = Clock(clock_type=ClockType.STEADY_TIME)
        self.create_timer(0.01, self._poll, clock=wall)
        self.create_timer(1.0, self._publish_diagnostics, clock=wall)
        out = 'one line' if self.tcp else \
            f'one datagram of at most {cfg.max_datagram_bytes} bytes'
        self.get_logger().info(
            f'USV UI {self.link.describe()}; command 21 as the swarm sends its state, {out}, '
            f'{cfg.timestamps} timestamps; inputs to the swarm in order, {cfg.window} '
            f'unanswered at most; {len(swarm.boats)} boats from {cfg.sim_config} until an '
            'init arrives')
        if not self.tcp:        # what burst the UDP receive buffer holds
            self._log_lines(self.link.buffer_lines())

    def _open_ui_link(self, cfg: pl.UiConfig):
        """The UI's link (ValueError/OSError if misconfigured), filtered by allow_peers."""
        if cfg.transport == 'udp':
            local = parse_endpoint(cfg.bind, 'bind')
            return UiUdpLink(local, parse_endpoint(cfg.ui_address, 'ui_address'),
                             self._allowlist([local[0]]), self._refused, cfg.udp_rcvbuf_bytes)
        local = parse_endpoint(cfg.tcp_bind, 'tcp_bind')
        # a UI that stops reading for 5 s is dropped (it may connect again), not waited for
        return UiTcpLink(local, self._allowlist([local[0]]), self._refused, 5.0,
                         self._on_link_event)

    def _on_link_event(self, what: str, addr, other):
        """The TCP link's connections: logged; a second UI refused, both told."""
        log = self.get_logger()
        if what == 'connected':
            self._buf = b''                     # a line begun by the UI before is not its
            log.info(f'UI connected from {pl.endpoint(addr)}')
        elif what == 'disconnected':             # other: why
            self._buf = b''
            self.core.ui_left(addr)
            # one call site per severity: rclpy refuses a site that logs at two (it raised
            # ValueError, and the node exited, on a close after a reset)
            if other == CLOSED_BY_PEER:
                log.info(f'UI disconnected: {pl.endpoint(addr)} ({other})')
            else:
                log.warning(f'UI disconnected: {pl.endpoint(addr)} ({other})')
        elif what == 'second':
            act, refusal = self.core.second_tcp_ui(addr, other)
            self._apply(act)
            return json.dumps(refusal).encode() + b'\n'
        return None

    def _listening(self) -> bool:
        return self.pub_input.get_subscription_count() > 0

    # --- input -----------------------------------------------------------------------------------
    def _poll(self):
        self._read_link(self._on_data)
        if not self.tcp:
            self._count_drops()
        now = time.monotonic()
        self._apply(self.core.flush(now, self._listening()))
        self._apply(self.core.check_answers(now, self._listening()))

    def _on_data(self, data: bytes, addr):
        if not self.tcp:
            return self._guarded(self.handle_input, data, addr, 'value')
        self._buf += data
        *lines, self._buf = self._buf.split(b'\n')
        if len(self._buf) > P.MAX_TEXT_BYTES:
            self._buf = b''
            self._apply(self.core.refuse(P.ProtocolError(
                'size', f'a line longer than {P.MAX_TEXT_BYTES} bytes'), addr))
        for line in lines:
            if line.strip():
                self._guarded(self.handle_input, line, addr, 'value')

    def _count_drops(self):
        """Warn (rate-limited) when the kernel dropped UI datagrams: they get no answer."""
        drops = self.link.kernel_drops()
        if drops <= self._drops:
            return
        new, self._drops, self._drops_rose = drops - self._drops, drops, True
        self.get_logger().warning(
            f'{new} UI datagrams dropped by the kernel ({drops} so far): the receive buffer '
            f'({self.link.rcvbuf_bytes} bytes, ~{self.link.burst()} small inputs) was full; '
            'they get no answer. Send larger bursts over transport tcp',
            throttle_duration_sec=self._warn_period)

    def handle_input(self, data: bytes, addr):
        """Decode and check one input, then queue it for the swarm; refusals answered."""
        act = self.core.on_input(data, addr, time.monotonic())
        if act.accepted and not self.tcp:
            self.link.learn(addr)
        self._apply(act)

    def _on_results(self, batch: SwarmInputResults):
        if batch.source != self.core.source:
            return
        self._apply(self.core.on_results(
            (r.seq, r.applied, r.refusal, r.text) for r in batch.results))
        self._apply(self.core.flush(time.monotonic(), self._listening()))

    # --- carrying out ----------------------------------------------------------------------------
    def _send(self, sends) -> None:
        """Answers and notices to their UIs (none without replies)."""
        for addr, obj in sends:
            self._reply(addr, obj)

    def _apply_own(self, act: pl.Actions, _sent) -> None:
        """Inputs to the swarm, in order, then the states' command 21."""
        for items in act.batches:
            self._publish_inputs(items)
        for state in act.states:
            self._emit(state)

    def _publish_inputs(self, items):
        """Publish inputs, in order, as one SwarmInputs."""
        batch = SwarmInputs(source=self.core.source)
        batch.header.stamp = self.get_clock().now().to_msg()
        for item in items:
            msg = SwarmInput(kind=KINDS[item.code], seq=item.seq)
            if item.code == 'init':
                msg.config_json = item.payload
            elif item.code == P.CMD_SESSION:
                msg.session = item.payload
            else:
                order_to_msg(item.payload, msg.command)
            batch.inputs.append(msg)
        self.pub_input.publish(batch)

    def _reply(self, addr, obj):
        if not self.cfg.replies:
            return
        data = json.dumps(obj).encode()
        if self.tcp:
            if addr == self.link.remote:        # not to a client that connected since
                self.link.send(data + b'\n')
        elif addr is not None:
            self.link.send_to(data, addr)

    def _emit(self, msg: SwarmState):
        """Command 21 of one state to the UI."""
        session_s = (time_ns(msg.header.stamp) - time_ns(msg.session_start)) / NS_PER_S
        cols = {name: np.asarray(getattr(msg, name)) for name, _ in P.CMD21_COLUMNS}
        data = self.core.frame_21(cols, session_s, datetime.datetime.now()
                                  if self.cfg.timestamps == 'wall' else None)
        if self.tcp:
            self.link.send(data + b'\n')
        elif len(data) > self.cfg.max_datagram_bytes:   # not for a swarm checked at its init
            self.get_logger().error(f'command 21 of {len(data)} bytes does not fit a datagram',
                                    throttle_duration_sec=self._warn_period)
            return
        else:
            self.link.send(data)
        self.counts['cmd21'] += 1

    def _publish_diagnostics(self):
        up = self.link.remote is not None
        c = self.core
        counts = dict(c.counts, pending=len(c.pending), unanswered=len(c.out),
                      held_states=len(c.held))
        extra = [('send_errors', self.link.send_errors)]
        message = f'{c.counts["rx"]} in, {sum(self.rejects.values())} rejected, ' \
            f'{c.counts["cmd21"]} states out' if up else 'no UI address yet'
        if self.tcp:
            extra.append(('refused_clients', self.link.refused_clients))
        else:
            counts['kernel_drops'] = self._drops
            extra += [('udp_rcvbuf_bytes', self.link.rcvbuf_bytes),
                      ('ui', pl.endpoint(c.ui) if c.ui else '')]
        rose, self._drops_rose = self._drops_rose, False
        if rose:
            message = f'UI datagrams dropped by the kernel: {self._drops} so far (receive ' \
                'buffer full; use transport tcp for larger bursts)'
        self._publish_port_status('USV UI link', 'usv_ui', up and not rose, message, counts,
                                  extra)


def main(args=None):
    """Run usv_bridge."""
    run_node(UsvBridge, 'usv_bridge', args)


if __name__ == '__main__':
    main()
