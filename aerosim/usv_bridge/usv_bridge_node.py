"""usv_bridge: the USV UI protocol (seed 004) on UDP (or TCP) <-> the swarm's ROS topics.

In (from the UI): the init object, commands 22 and 26, one UTF-8 JSON text per datagram (TCP:
per line). Each is checked against the wire (usv_bridge.core.protocol: types, ranges, ids,
naming the field); a refused input is counted by kind on /diagnostics, logged (rate-limited),
answered, and changes nothing. An accepted input goes to usv_swarm_node on `input`
(SwarmInput), numbered, in the order received: one ordered stream for init, 26 and 22, so an
init, its 26 and the 22 after them are applied in that order. At most `window` inputs are out
without an answer (`input_result`); the rest wait here (up to `max_pending`), so no burst can
overflow the topic's history. Every input is answered to its sender once the swarm applied or
refused it: ``{"reply": 22, "seq": 7, "ok": true, "applied": "..."}`` or ``{"reply": 22,
"seq": 7, "ok": false, "kind": "state", "error": "boat 3 is out of action (health 0)"}`` (an
init: ``"reply": "init"`` with its boat and obstacle counts). Inputs go out and answers come
back several per message (SwarmInputs, SwarmInputResults): a burst costs one message.

Out (to the UI): command 21 from every SwarmState (the swarm sends them at state_rate_hz on sim
time from each session start), ``[21, n, <n boats>, ts]`` with n the swarm's boat count: one
UDP datagram (an init whose 21 could exceed `max_datagram_bytes` is refused over UDP: use
TCP), or one TCP line. After an init or a 26 is applied, states from before it are not
forwarded: the first 21 a UI gets after the reply shows the new swarm. Nor does a state go out
before the answers to the inputs it reflects (its `input_seq`): the answers and the states
come on two topics with no order between them, so such a state waits here (at most
`MAX_HELD` of them) until those answers went out: the UI never sees a swarm before the reply
to the init that made it, nor a boat on its new order before the 22's reply. The state topic
is the pipeline's (reliable, deep): no state is skipped, so 21 stamps are exactly the state
period apart; a bridge that cannot keep up holds the swarm node back through DDS flow
control.
"""

from collections import deque
from dataclasses import dataclass, field
import datetime
import json
import random
import time

import numpy as np
from rclpy.clock import Clock, ClockType

from aerosim_msgs.msg import SwarmInput, SwarmInputResults, SwarmInputs, SwarmState
from sim_core.errors import ConfigError
from sim_core.timeutil import NS_PER_S
from sim_core.validate import FieldError
from sim_dynamics.core.swarm_config import load_swarm_config
from sim_dynamics.core.usv_swarm import TypeTable
from sim_dynamics.swarm_msgs import order_to_msg
from sim_ros import qos
from sim_ros.convert import time_ns
from sim_ros.params import declare
from sim_ros.port_node import PortNode
from sim_ros.run import run_node
from usv_bridge.core import protocol as P

KINDS = {'init': SwarmInput.KIND_INIT, P.CMD_SESSION: SwarmInput.KIND_SESSION,
         P.CMD_CONTROL: SwarmInput.KIND_COMMAND}
REPLY = {v: k for k, v in KINDS.items()}     # the "reply" of an answer: 'init', 22 or 26
# States held for answers not yet in (normally for milliseconds); beyond this many the answers
# are taken as lost and the oldest goes out without them (200 = 2 s of a 10 Hz swarm at 10x)
MAX_HELD = 200


@dataclass
class Input:
    """An accepted input on its way to the swarm.

    msg, its sender addr, t: when it was queued or last sent [s, monotonic], info: what its
    answer adds (an init's counts and hour).
    """

    msg: SwarmInput
    addr: tuple
    t: float
    info: dict = field(default_factory=dict)


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
        self.max_bytes = d('max_datagram_bytes', 65000, 'Largest command-21 datagram [bytes] '
                           '(UDP): an init whose 21 could be larger is refused (use TCP)',
                           1000, 65507)
        stamps = d('timestamps', 'sim', "Command 21 timestamp: 'sim' (the init's hour today + "
                   "session sim time) or 'wall' (local time now)")
        self.replies = d('replies', True, 'Answer every input: {"reply": ..., "ok": ...}')
        self.window = d('window', 200, 'Inputs out to the swarm without an answer, at most '
                        '(the input topic keeps 1000)', 1, 900)
        self.max_pending = d('max_pending', 100000, 'Inputs waiting for the window, at most '
                             '(beyond: refused as busy)', 1, 10000000)
        self.answer_timeout_s = d('answer_timeout_s', 5.0, 'Wall time without an answer after '
                                  'which the inputs out are sent again (a swarm restarted) '
                                  'or, with no swarm, refused [s]', 0.1, 600.0)
        warn_period = d('warn_period_s', 2.0, 'Minimum period of repeated warnings [s]',
                        0.1, 600.0)
        try:
            if stamps not in ('sim', 'wall'):
                raise ValueError(f"timestamps: 'sim' or 'wall', got {stamps!r}")
            # a UI that stops reading for 5 s is dropped (it may connect again), not waited for
            self.link = self._open_link(transport, bind, tcp_bind, ui, 'ui_address',
                                        send_timeout_s=5.0)
        except (ValueError, OSError) as exc:
            raise ConfigError(str(exc)) from exc
        self.tcp = transport == 'tcp'
        self.wall_stamps = stamps == 'wall'
        self.types = TypeTable.load(types_file)
        cfg, _ = load_swarm_config(sim_config, self.types.boats, self.types.obstacles,
                                   self.max_boats)
        self._init_port('USV UI', P.REJECT_KINDS, warn_period, max_text=300)
        if not self.tcp and P.max_21_bytes([b.id for b in cfg.boats]) > self.max_bytes:
            raise ConfigError(f'sim_config {sim_config}: {len(cfg.boats)} boats do not fit one '
                              f'command-21 datagram ({self.max_bytes} bytes): use transport tcp')
        self._set_config(cfg)
        self._hour = cfg.hour                   # of the init in force (applied)
        self.source = random.getrandbits(32)    # this bridge's input stream
        self._seq = 0
        self._pending = deque()                 # Inputs waiting for the window
        self._out = {}                          # seq -> Input sent, not answered yet
        self._accept_from = 0                   # states from before this input are stale
        self._held = deque()                    # states waiting for their inputs' answers
        self._buf = b''
        self.counts = dict(rx=0, init=0, cmd22=0, cmd26=0, applied=0, refused=0, resent=0,
                           cmd21=0, released_unanswered=0)
        self.pub_input = self.create_publisher(SwarmInputs, 'input', qos.INPUT)
        self.create_subscription(SwarmInputResults, 'input_result', self._on_results,
                                 qos.INPUT)
        self.create_subscription(SwarmState, 'state', self._on_state, qos.STATE)
        wall = Clock(clock_type=ClockType.STEADY_TIME)
        self.create_timer(0.01, self._poll, clock=wall)
        self.create_timer(1.0, self._publish_diagnostics, clock=wall)
        self.get_logger().info(
            f'USV UI {self.link.describe()}; command 21 as the swarm sends its state, '
            f'{"one line" if self.tcp else f"one datagram of at most {self.max_bytes} bytes"}, '
            f'{stamps} timestamps; inputs to the swarm in order, {self.window} unanswered at '
            f'most; {len(cfg.boats)} boats from {sim_config} until an init arrives')

    def _d(self, *a, **k):
        return declare(self, *a, **k)

    def _set_config(self, cfg):
        """The config the next inputs are checked against (the latest init queued)."""
        self.config = cfg
        self.ids = cfg.boat_index()

    # --- input -----------------------------------------------------------------------------------
    def _poll(self):
        self._read_link(self._on_data)
        self._flush()
        self._check_answers()

    def _on_data(self, data: bytes, addr):
        if not self.tcp:
            return self._guarded(self.handle_input, data, addr, 'value')
        self._buf += data
        *lines, self._buf = self._buf.split(b'\n')
        if len(self._buf) > P.MAX_TEXT_BYTES:
            self._buf = b''
            self._refuse(None, P.ProtocolError('size', f'a line longer than {P.MAX_TEXT_BYTES} '
                                               'bytes'), addr)
        for line in lines:
            if line.strip():
                self._guarded(self.handle_input, line, addr, 'value')

    def handle_input(self, data: bytes, addr):
        """Decode and check one input, then queue it for the swarm; refusals answered."""
        code = None
        try:
            code, obj = P.decode(data)
            if code == P.CMD_STATE:
                raise P.ProtocolError('command', '21 is sent by the simulator, not to it')
            msg = SwarmInput(kind=KINDS[code])
            info = {}
            if code == 'init':
                cfg = P.parse_init(obj, self.types.boats, self.types.obstacles,
                                   self.max_boats)
                need = P.max_21_bytes([b.id for b in cfg.boats])
                if not self.tcp and need > self.max_bytes:
                    raise P.ProtocolError('size', f'{len(cfg.boats)} boats: command 21 could '
                                          f'take {need} bytes, more than one UDP datagram '
                                          f'({self.max_bytes}): use transport tcp')
                self._set_config(cfg)
                msg.config_json = json.dumps(obj)
                info = {'boats': len(cfg.boats), 'obstacles': len(cfg.obstacles),
                        'ignored': list(cfg.ignored), 'hour': cfg.hour}
                if cfg.ignored:
                    self.get_logger().warning(f'init: ignored fields {list(cfg.ignored)[:10]}')
            elif code == P.CMD_SESSION:
                msg.session = P.parse_command26(obj)
            else:
                order_to_msg(P.parse_command22(obj, self.config, self.ids), msg.command)
        except FieldError as exc:
            return self._refuse(code, exc, addr)
        if len(self._pending) >= self.max_pending:
            return self._refuse(code, P.ProtocolError(
                'busy', f'{len(self._pending)} inputs already wait for the simulation'), addr)
        self.counts['rx'] += 1
        if not self.tcp:
            self.link.learn(addr)
        self._seq += 1
        msg.seq = self._seq
        self._pending.append(Input(msg, addr, time.monotonic(), info))

    def _refuse(self, code, exc: FieldError, addr, seq=None):
        """Count, log and answer an input that is refused (nothing changed)."""
        self._reject(exc.kind if exc.kind in self.rejects else 'value', str(exc), addr)
        self._reply(addr, {'reply': code if code is not None else 'unknown',
                           **({'seq': seq} if seq else {}), 'ok': False, 'kind': exc.kind,
                           'error': str(exc)})

    def _send(self, items):
        """Publish inputs, in order, as one SwarmInputs."""
        batch = SwarmInputs(source=self.source, inputs=[item.msg for item in items])
        batch.header.stamp = self.get_clock().now().to_msg()
        self.pub_input.publish(batch)

    def _flush(self):
        """Send queued inputs (one message) while the window has room and a swarm listens."""
        if not self._pending or len(self._out) >= self.window or \
                self.pub_input.get_subscription_count() == 0:
            return
        now = time.monotonic()
        items = []
        while self._pending and len(self._out) < self.window:
            item = self._pending.popleft()
            item.t = now
            self._out[item.msg.seq] = item
            items.append(item)
        self._send(items)

    def _check_answers(self):
        """Send again what got no answer in time (a swarm restarted); with no swarm, refuse."""
        now = time.monotonic()
        if self._out:
            oldest = min(item.t for item in self._out.values())
            if now - oldest > self.answer_timeout_s and \
                    self.pub_input.get_subscription_count() > 0:
                self.counts['resent'] += len(self._out)
                self.get_logger().warning(
                    f'{len(self._out)} inputs without an answer for '
                    f'{self.answer_timeout_s:g} s: sending them again',
                    throttle_duration_sec=self._warn_period)
                for item in self._out.values():
                    item.t = now
                self._send([self._out[seq] for seq in sorted(self._out)])
        if self._pending and self.pub_input.get_subscription_count() == 0:
            while self._pending and now - self._pending[0].t > self.answer_timeout_s:
                item = self._pending.popleft()
                self._refuse(REPLY[item.msg.kind], P.ProtocolError(
                    'state', 'no swarm simulation (usv_swarm_node) is listening'), item.addr,
                    item.msg.seq)

    def _on_results(self, batch: SwarmInputResults):
        if batch.source != self.source:
            return
        for r in batch.results:
            self._answered(r)
        self._release()
        self._flush()

    def _answered(self, r):
        """The swarm's answer to one input: counted, and forwarded to its sender."""
        item = self._out.pop(r.seq, None)
        if item is None:
            return                              # an answer to an input sent twice
        msg, addr = item.msg, item.addr
        code = REPLY[msg.kind]
        if not r.applied:
            self.counts['refused'] += 1
            return self._refuse(code, P.ProtocolError(r.refusal or 'state', r.text), addr,
                                r.seq)
        self.counts['applied'] += 1
        self.counts[{SwarmInput.KIND_INIT: 'init', SwarmInput.KIND_SESSION: 'cmd26'}.get(
            msg.kind, 'cmd22')] += 1
        reply = {'reply': code, 'seq': r.seq, 'ok': True}
        if msg.kind == SwarmInput.KIND_COMMAND:
            reply.update(boat=msg.command.boat_id, applied=r.text)
        else:
            self._accept_from = r.seq
            if msg.kind == SwarmInput.KIND_INIT:
                self._hour = item.info['hour']
                reply.update(boats=item.info['boats'], obstacles=item.info['obstacles'],
                             ignored=item.info['ignored'])
            else:
                reply['session'] = P.SESSION_NAMES[msg.session]
            self.get_logger().info(f'{code}: {r.text}')
        self._reply(addr, reply)

    def _reply(self, addr, obj):
        if not self.replies:
            return
        data = json.dumps(obj).encode()
        if self.tcp:
            self.link.send(data + b'\n')
        elif addr is not None:
            self.link.send_to(data, addr)

    # --- output ----------------------------------------------------------------------------------
    def _waits(self, msg: SwarmState) -> bool:
        """True if msg reflects an input of ours whose answer has not gone out yet."""
        return msg.input_source == self.source and bool(self._out) and \
            min(self._out) <= msg.input_seq

    def _on_state(self, msg: SwarmState):
        if self._held or self._waits(msg):      # in order: behind any state already held
            self._held.append(msg)
            if len(self._held) > MAX_HELD:      # answers lost for good: states go out anyway
                self.counts['released_unanswered'] += 1
                self.get_logger().warning(
                    f'{MAX_HELD} states wait for answers that do not come (inputs '
                    f'{sorted(self._out)[:5]}...): sending the oldest without them',
                    throttle_duration_sec=self._warn_period)
                self._emit(self._held.popleft())
            return
        self._emit(msg)

    def _release(self):
        """Send the held states whose inputs are answered now, oldest first."""
        while self._held and not self._waits(self._held[0]):
            self._emit(self._held.popleft())

    def _emit(self, msg: SwarmState):
        """Command 21 of one state to the UI, unless it is stale or of an ended session."""
        if msg.input_source == self.source and msg.input_seq < self._accept_from:
            return              # from before the last init/26 applied: not the swarm now
        if msg.session == P.SESSION_END:
            return
        session_s = (time_ns(msg.header.stamp) - time_ns(msg.session_start)) / NS_PER_S
        cols = {name: np.asarray(getattr(msg, name)) for name, _ in P.CMD21_COLUMNS}
        if self.wall_stamps:
            when = datetime.datetime.now()
        else:
            start = datetime.datetime.combine(datetime.date.today(), datetime.time(self._hour))
            when = start + datetime.timedelta(seconds=session_s)
        data = P.encode_21(cols, P.timestamp(when))
        if self.tcp:
            self.link.send(data + b'\n')
        elif len(data) > self.max_bytes:        # not for a swarm checked at its init
            self.get_logger().error(f'command 21 of {len(data)} bytes does not fit a datagram',
                                    throttle_duration_sec=self._warn_period)
            return
        else:
            self.link.send(data)
        self.counts['cmd21'] += 1

    def _publish_diagnostics(self):
        up = self.link.remote is not None
        counts = dict(self.counts, pending=len(self._pending), unanswered=len(self._out),
                      held_states=len(self._held))
        self._publish_port_status(
            'USV UI link', 'usv_ui', up,
            f'{self.counts["rx"]} in, {sum(self.rejects.values())} rejected, '
            f'{self.counts["cmd21"]} states out' if up else 'no UI address yet', counts,
            [('send_errors', self.link.send_errors)])


def main(args=None):
    """Run usv_bridge."""
    run_node(UsvBridge, 'usv_bridge', args)


if __name__ == '__main__':
    main()
