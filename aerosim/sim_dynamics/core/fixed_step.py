"""A model's own fixed step inside a world's (pure, no rclpy).

A world (sim_world) steps every model at its own rate; a model with a step of its own (JSBSim
125 Hz, a boat 50 Hz, an AUV 100 Hz) counts the world's nanoseconds with a FixedStep and runs
when one of its steps is due, holding its state in between.
"""

NS_PER_S = 1_000_000_000


class FixedStep:
    """A model's own fixed step inside the world's: how many of its steps fall due.

    Counts in integer nanoseconds (no drift): due(dt_s) adds the world's dt_s [s] and
    returns the number of whole model steps now due (0, 1 or more).
    """

    def __init__(self, dt_s: float):
        """dt_s: the model's step [s]."""
        self.step_ns = int(round(dt_s * NS_PER_S))
        self.reset()

    def reset(self) -> None:
        """Nothing stepped."""
        self._world_ns = 0
        self._model_ns = 0

    def due(self, dt_s: float) -> int:
        """Add dt_s [s] of world time; the model steps due."""
        self._world_ns += int(round(dt_s * NS_PER_S))
        n = (self._world_ns - self._model_ns) // self.step_ns
        self._model_ns += n * self.step_ns
        return n
