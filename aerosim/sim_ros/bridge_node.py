"""BridgeNode: the one way a bridge node carries out its core's decisions, and its threads.

A bridge is a pure core (a class in ``<name>/core/``: input in, sim_core.actions.Actions out)
and a node around it (a BridgeNode: the socket, topics, timers, parameters). The node calls
the core and hands the Actions it returns to ``_apply``, which does the common part here
(the lines to log, with their rate limits; the refusals, counted by kind and warned about per
kind, PortNode._reject) and then the bridge's own: ``_send(act.sends)`` (the wire) and
``_apply_own(act)`` (what only this bridge does: publish a command, a batch, a leak state).

The threading rule, for every bridge:

1. A core is called from one thread at a time and owns its state; the node never changes the
   core's state itself (it reads counters for /diagnostics).
2. By default that thread is the executor's: the socket is non-blocking and read by a 10 ms
   wall-clock poll timer (``_read_link``, at most MAX_DATAGRAMS_PER_POLL per tick), and the
   subscriptions and timers run on the same single-threaded executor: no lock is needed
   (imc_bridge, usv_bridge).
3. A bridge whose peer waits for each answer (a lockstep FC) reads its socket on a reader
   thread per link instead, and answers from that thread at once; its core then takes its own
   lock in every entry point (the executor calls it too), and ``_apply`` runs after the lock
   is released (mavlink_bridge: HilBridge.lock). The state ``_apply`` touches in the node
   (reject counters, the rate limits) is under PortNode's lock.
4. A process that is itself the peer's loop (builtin_fc) runs its core on its own loop thread
   (rule 3 with one reader and no executor callbacks into the core); an executor thread only
   serves the parameter services and the diagnostics timer, which read counters.
5. ``_apply`` is called on the thread that called the core, never later: what the core decided
   goes out in the order it was decided.
"""

import threading
import time

from sim_core.actions import Actions
from sim_ros.port_node import PortNode


class BridgeNode(PortNode):
    """A PortNode that applies a core's Actions (module docstring: the threading rule)."""

    OTHER_KIND = 'invalid'      # a refusal of a kind not in the node's REJECT_KINDS counts so

    def __init__(self, name: str, **node_kw):
        """Create the node (no link yet: PortNode._init_port, _open_link)."""
        super().__init__(name, **node_kw)
        self._limited_at: dict = {}     # key -> monotonic time it was last logged
        self._limited_lock = threading.Lock()

    def _apply(self, act: Actions, addr=None) -> None:
        """Carry out a decision: log, count the refusals, send, then the bridge's own part.

        addr: the sender of the input decided on, for refusals that name none.
        """
        if act.logs:
            self._log_lines(act.logs)
        for level, key, text, period_s in act.limited:
            self._log_limited(level, key, text, period_s)
        for kind, text, who in act.rejects:
            self._reject(kind if kind in self.rejects else self.OTHER_KIND, text,
                         who if who is not None else addr)
        sent = None
        if act.sends:
            t0 = time.time()
            self._send(act.sends)
            sent = (t0, time.time())
        self._apply_own(act, sent)

    def _log_limited(self, level: str, key: str, text: str, period_s: float) -> None:
        """Log text at most once per period_s [s] for key; the first at once."""
        now = time.monotonic()
        with self._limited_lock:
            if now - self._limited_at.get(key, -1e9) < period_s:
                return
            self._limited_at[key] = now
        self._log_lines([(level, text)])

    def _send(self, sends: list) -> None:
        """Put a decision's sends on the wire (each bridge's shape); the bridge overrides it."""
        raise NotImplementedError(f'{type(self).__name__} sends {len(sends)} items: no _send')

    def _apply_own(self, act: Actions, sent) -> None:
        """The bridge's own fields of its Actions (nothing by default).

        sent: (wall time [s] the sends began, when they were done), None if there were none.
        """
