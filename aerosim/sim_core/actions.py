"""What a bridge's core decided, as data (pure, no rclpy): the common part of every bridge.

A bridge's core (the MAVLink HIL link's HilBridge, the IMC link's ImcBridgeCore, the USV UI's
UiPipeline, the built-in FC's FcCore) takes one input (a datagram, a vehicle state, a timer
tick) and returns an Actions: what the node is to do, which it carries out after the core
returned (sim_ros.bridge_node.BridgeNode._apply). The common part is here:

- ``sends``: what goes out on the bridge's wire, in order (each bridge says its shape: MAVLink
  (endpoint, messages), IMC (message, address or None = every peer), USV (address, JSON));
- ``logs``: (level, text) lines, level one of LEVELS: 'info', 'warning', 'error', or
  'throttled' (a warning at most once per the node's warn_period_s);
- ``limited``: (level, key, text, period_s) lines logged at most once per period_s for each
  key, the first at once (an expected, frequent event; an error that repeats);
- ``rejects``: (kind, text, address or None) inputs refused, counted by kind (the node's
  REJECT_KINDS, and 'peer') and warned about at a limited rate per kind.

A bridge's Actions subclasses this one with its own fields (motor commands, effector commands,
batches to the swarm), and its node applies only those (BridgeNode._apply_own).
"""

from dataclasses import dataclass, field
from typing import Any, List, Optional, Tuple

LEVELS = ('info', 'warning', 'error', 'throttled')


@dataclass
class Actions:
    """The common part of a core's decision (see the module docstring)."""

    sends: list = field(default_factory=list)          # the wire's, in order
    logs: List[Tuple[str, str]] = field(default_factory=list)       # (level, text)
    limited: List[Tuple[str, str, str, float]] = field(default_factory=list)  # see log_every
    rejects: List[Tuple[str, str, Any]] = field(default_factory=list)   # (kind, text, addr)

    def log(self, text: str, level: str = 'info') -> None:
        """A line to log at level (LEVELS)."""
        self.logs.append((level, text))

    def log_every(self, key: str, text: str, period_s: float, level: str = 'info') -> None:
        """A line logged at most once per period_s [s, wall] for key, the first at once."""
        self.limited.append((level, key, text, period_s))

    def refuse(self, kind: str, text: str, addr: Any = None) -> None:
        """An input refused: counted by kind, warned about (addr: its sender, None: unknown)."""
        self.rejects.append((kind, text, addr))

    @property
    def reject(self) -> Optional[Tuple[str, str]]:
        """(kind, text) of the first refusal, or None: most inputs have at most one."""
        return self.rejects[0][:2] if self.rejects else None
