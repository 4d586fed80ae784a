"""Parameter declaration with descriptors (units and ranges), read once into plain values.

A parameter is read once, at start-up: it is declared read-only, so `ros2 param set` is
refused with rclpy's reason ("Trying to set a read-only parameter") instead of answering
success and changing nothing. The few a node applies while it runs are declared live=True,
and the node registers the callback that applies them.
"""

from rcl_interfaces.msg import FloatingPointRange, IntegerRange, ParameterDescriptor

from sim_core import config
from sim_core.realtime import RealtimeConfig, realtime_table, set_thread_priority


def _declare(node, name, default, description, lo=None, hi=None, live=False,
            any_type=False, choices=()):
    """Declare a parameter with a description (with units) and an optional range; return its value.

    Integers get an IntegerRange, floats a FloatingPointRange; out-of-range overrides are
    refused by rclpy at declaration with a clear error. live: the node applies a new value
    while it runs (its on-set-parameters callback); otherwise the parameter is read-only
    after start-up. any_type: the value may be of any type (`-p ids:=1`, `:='1, 2'` and
    `:=[1, 2]` all arrive; the caller checks it).
    """
    desc = ParameterDescriptor(description=description, read_only=not live,
                               dynamic_typing=any_type)
    if choices:
        desc.additional_constraints = 'one of: ' + ', '.join(str(c) for c in choices)
    if lo is not None and hi is not None:
        if isinstance(default, bool):
            pass
        elif isinstance(default, int):
            desc.integer_range = [IntegerRange(from_value=int(lo), to_value=int(hi), step=1)]
        elif isinstance(default, float):
            desc.floating_point_range = [FloatingPointRange(from_value=float(lo),
                                                            to_value=float(hi), step=0.0)]
    return node.declare_parameter(name, default, desc).value


def declare_realtime(node, follows: str = '') -> int:
    """Declare realtime_priority (SCHED_FIFO priority of the node's loop thread) and read it.

    follows: what -1 follows in this node ("the FC's process"); '' = nothing (-1 is normal
    scheduling here: the launch argument's -1 reaches every node).
    """
    return read_config(node, RealtimeConfig, realtime_table(follows)).realtime_priority


def apply_realtime(node, priority: int, what: str) -> bool:
    """Give the calling thread SCHED_FIFO priority (0: normal) and log the outcome.

    what: the thread, for the log line. Returns whether it was applied.
    """
    why = set_thread_priority(priority)
    if why:
        node.get_logger().warning(f'{what}: {why}; running with normal scheduling')
    elif priority:
        node.get_logger().info(f'{what}: SCHED_FIFO priority {priority}')
    return not why


def read_config(node, cls, table: dict, any_type=()):
    """Declare a parameter for every field of the frozen dataclass cls; return cls(values).

    table: field name -> sim_core.config.Param (or a tuple (desc,) / (desc, lo, hi)), from the
    pure core that owns the ranges and choices; the defaults are the dataclass's. Tuple fields
    are array parameters. any_type: fields whose value may come in any type (the core checks
    them), as Param.any_type does. The values are checked by sim_core.config.build: a value
    out of its choices is a ConfigError naming the parameter.
    """
    values = {}
    for name, default in config.defaults(cls).items():
        p = config.param(table[name])
        values[name] = _declare(node, name, default, p.describe(), p.lo, p.hi, live=p.live,
                               any_type=p.any_type or name in any_type, choices=p.choices)
    return config.build(cls, table, values)
