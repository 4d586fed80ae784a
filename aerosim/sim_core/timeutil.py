"""Simulation-time helpers: integer nanoseconds, never floats, for stamps."""

NS_PER_S = 1_000_000_000


def sec_to_ns(seconds: float) -> int:
    """Convert seconds to integer nanoseconds (rounded)."""
    return int(round(seconds * NS_PER_S))


def ns_to_sec_nsec(t_ns: int):
    """Split nanoseconds into (sec, nanosec) as used by builtin_interfaces/Time."""
    return divmod(int(t_ns), NS_PER_S)


def period_ns(rate_hz: float) -> int:
    """Return the period [ns] of a rate [Hz]."""
    return int(round(NS_PER_S / rate_hz))
