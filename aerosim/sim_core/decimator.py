"""Sample scheduling on sim time (pure)."""

from sim_core.timeutil import period_ns


class Decimator:
    """Decides on sim time when a sensor of a given rate samples (first sample at t = 0)."""

    def __init__(self, rate_hz: float):
        """rate_hz: sample rate [Hz]."""
        self.period_ns = period_ns(rate_hz)
        self.next_ns = 0

    def due(self, t_ns: int) -> bool:
        """Return True (and schedule the next sample) if a sample is due at t_ns.

        Time going back by more than a period (a reset, a replay starting over) restarts the
        schedule, as reset() does.
        """
        if t_ns < self.next_ns - self.period_ns:
            self.next_ns = 0
        if t_ns < self.next_ns:
            return False
        self.next_ns += self.period_ns
        if self.next_ns <= t_ns:   # fell behind (or time jumped): realign on the grid
            self.next_ns = (t_ns // self.period_ns + 1) * self.period_ns
        return True

    def reset(self):
        """Restart at t = 0."""
        self.next_ns = 0

    def restart_at(self, t_ns: int) -> None:
        """Restart the schedule at t_ns: a sample is due then, the next one period later."""
        self.next_ns = t_ns
