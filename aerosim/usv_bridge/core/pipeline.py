"""The USV UI bridge's decisions, without ROS: the ordered input stream, answers, states out.

In (from the UI): the init object, commands 22 and 26, one UTF-8 JSON text per datagram (TCP:
per line). Every input is numbered on arrival, valid or not, per UI (its sender address; on
TCP its connection), from 1: that number is the ``seq`` of its answer, and a UI's answers go
out in the order of its inputs (a refusal waits for the answers to the inputs before it).
Each input is checked against the wire (usv_bridge.core.protocol: types, ranges, ids, naming
the field); a refused input is counted by kind, logged (rate-limited), answered, and changes
nothing. An accepted input goes to the swarm numbered (the stream's own numbers), in the order
received: one ordered stream for init, 26 and 22, so an init, its 26 and the 22 after them are
applied in that order. At most `window` inputs are out without an answer; the rest wait here
(up to `max_pending`), so no burst can overflow the topic's history. Every input is answered
to its sender once the swarm applied or refused it: ``{"reply": 22, "seq": 7, "ok": true,
"boat": 3, "applied": "..."}`` or ``{"reply": 22, "seq": 8, "ok": false, "boat": 3, "kind":
"state", "error": "boat 3 is out of action (health 0)"}`` (an init: ``"reply": "init"`` with
its boat and obstacle counts; an answer to a 22 always names its boat, null if para1 is not
an integer).

One UI at a time (UDP; on TCP the link has one client and refuses a second): the sender of
the first valid input has control; a valid input from another address is refused (kind
``other_ui``) while the UI in control sent anything within `ui_timeout_s`, and the UI in
control is told (``{"notice": "other_ui", ...}``, at most once per `warn_period_s`). After
that silence, or once its ``[26, 0]`` is taken, the next UI takes control; the one before is
told (``{"notice": "ui_changed", ...}``) and the log says so. Garbage is refused for what it
is, whoever sends it (it changes nothing).

Out (to the UI): command 21 of every swarm state, ``[21, n, <n boats>, ts]``: one UDP datagram
(an init whose 21 could exceed `max_datagram_bytes` is refused over UDP: use TCP), or one TCP
line. After an init or a 26 is applied, states from before it are not forwarded: the first 21
a UI gets after the reply shows the new swarm. Nor does a state go out before the answers to
the inputs it reflects (its input_seq): the answers and the states come on two topics with no
order between them, so such a state waits here (at most MAX_HELD of them) until those answers
went out: the UI never sees a swarm before the reply to the init that made it, nor a boat on
its new order before the 22's reply.

UiPipeline is called from the node's one executor thread; a state is read by duck typing
(input_source, input_seq, session), so this module imports no message package.
"""

from collections import OrderedDict, deque
from dataclasses import dataclass, field
import datetime
import json
from typing import Any, Deque, Dict, List, Optional, Tuple

from sim_core.actions import Actions as BaseActions
from sim_core.validate import FieldError
from usv_bridge.core import protocol as P
from usv_bridge.core.ui_config import (  # noqa: F401 - re-exported: the node, tests, docs
    MAX_UDP_PAYLOAD,
    PARAMETERS,
    UiConfig,
    check,
)

# States held for answers not yet in (normally for milliseconds); beyond this many the answers
# are taken as lost and the oldest goes out without them (200 = 2 s of a 10 Hz swarm at 10x)
MAX_HELD = 200
# UIs (sender addresses) whose input numbers are kept; beyond, the longest idle one with no
# answer due is forgotten (it starts again at 1): only a flood of spoofed sources gets there
MAX_SENDERS = 4096


def endpoint(addr) -> str:
    """'host:port' of a socket address."""
    return f'{addr[0]}:{addr[1]}' if addr else '-'


class Slot:
    """The answer to one input, in its UI's order: its number, and the answer once known."""

    __slots__ = ('seq', 'queue', 'reply')

    def __init__(self, seq: int, queue: deque) -> None:
        """seq: the input's number for its UI; queue: that UI's answers not yet sent."""
        self.seq, self.queue = seq, queue
        self.reply: Optional[dict] = None


class Sender:
    """A UI's input count and its answers waiting for those of its earlier inputs."""

    __slots__ = ('count', 'queue')

    def __init__(self) -> None:
        """No input yet."""
        self.count = 0
        self.queue: Deque[Slot] = deque()


@dataclass
class Input:
    """An accepted input on its way to the swarm.

    code: 'init', 26 or 22; seq: its number in the stream to the swarm; payload: the init
    object (its JSON), the session code, or the Order; addr: its sender; t: when it was
    queued or last sent [s, monotonic]; slot: its answer's place for its UI; info: what its
    answer adds (an init's counts and hour).
    """

    code: Any
    seq: int
    payload: Any
    addr: Any
    t: float
    slot: Slot
    info: dict = field(default_factory=dict)


@dataclass
class Actions(BaseActions):
    """A decision (sim_core.actions) with the pipeline's own fields.

    sends (also named replies): (address, JSON object), the answers in each UI's input order
    and the notices; rejects: (kind, text, address); logs: (level, text), 'throttled' a
    warning at most once per warn_period_s.
    """

    batches: List[List[Input]] = field(default_factory=list)   # each one SwarmInputs, in order
    states: list = field(default_factory=list)        # states whose 21 goes out now
    accepted: bool = False          # the input was queued (its sender is the UI now, UDP)

    @property
    def replies(self) -> list:
        """The sends: (address, JSON object) answers and notices, in order."""
        return self.sends


class UiPipeline:
    """The input stream to the swarm and the states back to the UI (module docstring)."""

    def __init__(self, cfg: UiConfig, types, swarm_config, source: int):
        """types: the TypeTable; swarm_config: the init in force; source: our stream's id."""
        self.cfg, self.types, self.source = check(cfg), types, source
        self.tcp = cfg.transport == 'tcp'
        self.counts = {'inputs': 0, 'rx': 0, 'init': 0, 'cmd22': 0, 'cmd26': 0, 'applied': 0,
                       'refused': 0, 'resent': 0, 'cmd21': 0, 'released_unanswered': 0,
                       'answers_unsent': 0}
        self._set_config(swarm_config)
        self._hour = swarm_config.hour          # of the init in force (applied)
        self._seq = 0
        self.pending: Deque[Input] = deque()    # waiting for the window
        self.out: Dict[int, Input] = {}         # seq -> sent, not answered yet
        self._accept_from = 0                   # states from before this input are stale
        self.held: deque = deque()              # states waiting for their inputs' answers
        self.senders: 'OrderedDict[Any, Sender]' = OrderedDict()   # by address, idlest first
        self.ui = None                          # UDP: the address of the UI in control
        self._ended = None                      # UDP: the UI that released it ([26, 0])
        self._ui_seen = 0.0                     # its last input [s, monotonic]
        self._told_at = -1e9                    # the last other_ui notice to it [s]

    def _set_config(self, cfg) -> None:
        """The config the next inputs are checked against (the latest init queued)."""
        self.config = cfg
        self.ids = cfg.boat_index()

    def fits(self, boat_ids) -> int:
        """Bytes a command 21 of these boats may take; ProtocolError if over UDP's budget."""
        need = P.max_21_bytes(boat_ids)
        if not self.tcp and need > self.cfg.max_datagram_bytes:
            raise P.ProtocolError('size', f'{len(boat_ids)} boats: command 21 could take {need} '
                                  'bytes, more than one UDP datagram '
                                  f'({self.cfg.max_datagram_bytes}): use transport tcp')
        return need

    # --- input -----------------------------------------------------------------------------------
    def _number(self, addr) -> Slot:
        """The next number of addr's inputs, and its answer's place in addr's order."""
        self.counts['inputs'] += 1
        sender = self.senders.pop(addr, None)
        if sender is None:
            sender = Sender()
            if len(self.senders) >= MAX_SENDERS:
                idle = next((a for a, s in self.senders.items() if not s.queue), None)
                if idle is not None:
                    del self.senders[idle]
        self.senders[addr] = sender             # the most recent last
        sender.count += 1
        slot = Slot(sender.count, sender.queue)
        sender.queue.append(slot)
        return slot

    def _answer(self, act: Actions, addr, slot: Slot, reply: dict) -> None:
        """The answer to slot is known: out with those after it, once all before it went."""
        slot.reply = reply
        q = slot.queue
        while q and q[0].reply is not None:
            act.replies.append((addr, q.popleft().reply))

    def on_input(self, data: bytes, addr, now: float) -> Actions:
        """Number one input, decode and check it, then queue it for the swarm.

        Refusals are answered (in the UI's order); a valid input from a UI other than the one
        in control (UDP) is refused as other_ui.
        """
        act = Actions()
        slot = self._number(addr)
        if addr == self.ui:
            self._ui_seen = now
        code = boat = None
        try:
            code, obj = P.decode(data)
            if code == P.CMD_CONTROL:
                boat = P.boat_of(obj)
            if code == P.CMD_STATE:
                raise P.ProtocolError('command', '21 is sent by the simulator, not to it')
            info: Dict[str, Any] = {}
            if code == 'init':
                cfg = P.parse_init(obj, self.types.boats, self.types.obstacles,
                                   self.cfg.max_boats)
                self.fits([b.id for b in cfg.boats])
                payload: Any = json.dumps(obj)
                info = {'boats': len(cfg.boats), 'obstacles': len(cfg.obstacles),
                        'ignored': list(cfg.ignored), 'hour': cfg.hour}
                if cfg.ignored:
                    act.logs.append(('warning', f'init: ignored fields {list(cfg.ignored)[:10]}'))
            elif code == P.CMD_SESSION:
                payload = P.parse_command26(obj)
            else:
                payload = P.parse_command22(obj, self.config, self.ids)
            if len(self.pending) >= self.cfg.max_pending:
                raise P.ProtocolError('busy', f'{len(self.pending)} inputs already wait for '
                                      'the simulation')
            if not self.tcp:
                self._take_control(act, addr, slot, now, code == P.CMD_SESSION and
                                   payload == P.SESSION_END)
        except FieldError as exc:
            self._refuse(act, code, exc, addr, slot, boat)
            return act
        if code == 'init':
            self._set_config(cfg)           # the next inputs are checked against it
        self.counts['rx'] += 1
        self._seq += 1
        self.pending.append(Input(code, self._seq, payload, addr, now, slot, info))
        act.accepted = True
        return act

    def _take_control(self, act: Actions, addr, slot: Slot, now: float, ends: bool) -> None:
        """A valid input of addr: it has control, takes it, or is refused (ProtocolError).

        ends: the input is [26, 0], which releases control once taken.
        """
        ui, timeout = self.ui, self.cfg.ui_timeout_s
        idle = now - self._ui_seen
        if ui is not None and addr != ui:
            if idle <= timeout:
                if now - self._told_at >= self.cfg.warn_period_s:
                    self._told_at = now
                    act.replies.append((ui, {
                        'notice': 'other_ui', 'ui': endpoint(addr),
                        'text': f'input {slot.seq} of {endpoint(addr)} refused: you have '
                                'control'}))
                raise P.ProtocolError(
                    'other_ui', f'{endpoint(ui)} has control (its last input {idle:.1f} s '
                    f'ago): one UI at a time; it is released by its [26, 0] or after '
                    f'{timeout:g} s without input')
            act.replies.append((ui, {'notice': 'ui_changed', 'ui': endpoint(addr),
                                     'text': f'{endpoint(addr)} has control now: yours ended '
                                             f'after {idle:.0f} s without input'}))
        ended = self._ended if ui is None and self._ended not in (None, addr) else None
        if ended is not None:       # the UI before released control: told who took it
            act.replies.append((ended, {'notice': 'ui_changed', 'ui': endpoint(addr),
                                        'text': f'{endpoint(addr)} has control now: yours '
                                                'ended with your [26, 0]'}))
        if addr != ui:
            before = f' ({endpoint(ui)} sent nothing for {idle:.0f} s)' if ui else \
                f' ({endpoint(ended)} ended its session with [26, 0])' if ended else ''
            act.logs.append(('warning' if ui else 'info',
                             f'UI {endpoint(addr)} has control now{before}'))
        self.ui, self._ui_seen, self._ended = addr, now, None
        if ends:
            self.ui, self._ended = None, addr
            act.logs.append(('info', f'UI {endpoint(addr)} ended the session ([26, 0]): '
                             'another UI may take control'))

    def refuse(self, exc: FieldError, addr) -> Actions:
        """An input refused before it was decoded (a TCP line too long)."""
        act = Actions()
        self._refuse(act, None, exc, addr, self._number(addr))
        return act

    def ui_left(self, addr) -> None:
        """TCP: addr's connection ended; its numbering and the answers still due end with it.

        A connection from the same address starts again at 1; the inputs it sent that were
        taken are applied all the same, their answers counted in answers_unsent.
        """
        sender = self.senders.pop(addr, None)
        if sender is not None:
            self.counts['answers_unsent'] += len(sender.queue)
            sender.queue.clear()

    def second_tcp_ui(self, addr, current) -> Tuple[Actions, dict]:
        """A second TCP client while current is connected: (its notice to current, refusal).

        The refusal is what the link sends the second client before closing it.
        """
        act = Actions()
        text = f'refused a second UI: {endpoint(current)} is connected (one UI at a time)'
        act.rejects.append(('other_ui', text, addr))
        act.replies.append((current, {'notice': 'other_ui', 'ui': endpoint(addr),
                                      'text': f'{endpoint(addr)} tried to connect: refused, '
                                              'you keep control'}))
        return act, {'notice': 'refused', 'ok': False, 'kind': 'other_ui',
                     'error': f'{endpoint(current)} is connected: one UI at a time; connect '
                              'again when it has gone'}

    def _refuse(self, act: Actions, code, exc: FieldError, addr, slot: Slot,
                boat=None) -> None:
        """Count, log and answer an input that is refused (nothing changed).

        An answer to a 22 names its boat (boat: para1 as sent, None if not an integer).
        """
        act.rejects.append((exc.kind, str(exc), addr))
        self._answer(act, addr, slot, {
            'reply': code if code is not None else 'unknown', 'seq': slot.seq, 'ok': False,
            **({'boat': boat} if code == P.CMD_CONTROL else {}), 'kind': exc.kind,
            'error': str(exc)})

    def flush(self, now: float, listening: bool) -> Actions:
        """Send queued inputs (one batch) while the window has room and a swarm listens."""
        act = Actions()
        if not self.pending or len(self.out) >= self.cfg.window or not listening:
            return act
        items = []
        while self.pending and len(self.out) < self.cfg.window:
            item = self.pending.popleft()
            item.t = now
            self.out[item.seq] = item
            items.append(item)
        act.batches.append(items)
        return act

    def check_answers(self, now: float, listening: bool) -> Actions:
        """Send again what got no answer in time (a swarm restarted); with no swarm, refuse."""
        act = Actions()
        timeout = self.cfg.answer_timeout_s
        if self.out and now - min(item.t for item in self.out.values()) > timeout \
                and listening:
            self.counts['resent'] += len(self.out)
            act.logs.append(('throttled', f'{len(self.out)} inputs without an answer for '
                             f'{timeout:g} s: sending them again'))
            for item in self.out.values():
                item.t = now
            act.batches.append([self.out[seq] for seq in sorted(self.out)])
        if self.pending and not listening:
            while self.pending and now - self.pending[0].t > timeout:
                item = self.pending.popleft()
                self._refuse(act, item.code, P.ProtocolError(
                    'state', 'no swarm simulation (usv_swarm_node) is listening'), item.addr,
                    item.slot, _boat(item))
        return act

    def on_results(self, results) -> Actions:
        """The swarm's answers (seq, applied, refusal, text), then the states they free."""
        act = Actions()
        for seq, applied, refusal, text in results:
            self._answered(act, seq, applied, refusal, text)
        while self.held and not self._waits(self.held[0]):
            self._emit(act, self.held.popleft())
        return act

    def _answered(self, act: Actions, seq: int, applied: bool, refusal: str, text: str):
        """The swarm's answer to one input: counted, and forwarded to its sender."""
        item = self.out.pop(seq, None)
        if item is None:
            return                              # an answer to an input sent twice
        if not applied:
            self.counts['refused'] += 1
            return self._refuse(act, item.code, P.ProtocolError(refusal or 'state', text),
                                item.addr, item.slot, _boat(item))
        self.counts['applied'] += 1
        self.counts[{'init': 'init', P.CMD_SESSION: 'cmd26'}.get(item.code, 'cmd22')] += 1
        reply: Dict[str, Any] = {'reply': item.code, 'seq': item.slot.seq, 'ok': True}
        if item.code == P.CMD_CONTROL:
            reply.update(boat=item.payload.boat_id, applied=text)
        else:
            self._accept_from = seq
            if item.code == 'init':
                self._hour = item.info['hour']
                reply.update(boats=item.info['boats'], obstacles=item.info['obstacles'],
                             ignored=item.info['ignored'])
            else:
                reply['session'] = P.SESSION_NAMES[item.payload]
            act.logs.append(('info', f'{item.code}: {text}'))
        self._answer(act, item.addr, item.slot, reply)

    # --- output ----------------------------------------------------------------------------------
    def _waits(self, state) -> bool:
        """True if state reflects an input of ours whose answer has not gone out yet."""
        return state.input_source == self.source and bool(self.out) and \
            min(self.out) <= state.input_seq

    def on_state(self, state) -> Actions:
        """A swarm state: out now, or held (in order) until its inputs are answered."""
        act = Actions()
        if self.held or self._waits(state):     # in order: behind any state already held
            self.held.append(state)
            if len(self.held) > MAX_HELD:       # answers lost for good: states go out anyway
                self.counts['released_unanswered'] += 1
                act.logs.append(('throttled', f'{MAX_HELD} states wait for answers that do not '
                                 f'come (inputs {sorted(self.out)[:5]}...): sending the oldest '
                                 'without them'))
                self._emit(act, self.held.popleft())
            return act
        self._emit(act, state)
        return act

    def _emit(self, act: Actions, state) -> None:
        """Command 21 of the state goes out, unless it is stale or of an ended session."""
        if state.input_source == self.source and state.input_seq < self._accept_from:
            return              # from before the last init/26 applied: not the swarm now
        if state.session != P.SESSION_END:
            act.states.append(state)

    def frame_21(self, columns, session_s: float, wall: Optional[datetime.datetime]) -> bytes:
        """Command 21 of a state's columns.

        Stamped wall ('wall' timestamps), or if None the init's hour today plus the session's
        sim time session_s [s].
        """
        if wall is None:
            start = datetime.datetime.combine(datetime.date.today(), datetime.time(self._hour))
            wall = start + datetime.timedelta(seconds=session_s)
        return P.encode_21(columns, P.timestamp(wall))


def _boat(item: Input):
    """The boat of a queued 22 (None for init and 26)."""
    return item.payload.boat_id if item.code == P.CMD_CONTROL else None
