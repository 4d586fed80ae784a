"""Noise building blocks shared by the sensor models: white noise, turn-on bias, bias random walk.

Randomness is injected: every model takes a ``numpy.random.Generator``; no global RNG.
"""

from dataclasses import dataclass
import math

import numpy as np

from sim_core.validate import number


@dataclass(frozen=True)
class NoiseParams:
    """Continuous-time noise description of one 3-axis (or scalar) sensor channel.

    noise_density: white noise [unit/sqrt(Hz)]; bias_std: turn-on bias 1-sigma [unit];
    bias_random_walk: bias diffusion [unit/sqrt(s)]. Units are those of the measured quantity.
    """

    noise_density: float = 0.0
    bias_std: float = 0.0
    bias_random_walk: float = 0.0

    def __post_init__(self):
        """Reject negative or non-finite values."""
        for name in ('noise_density', 'bias_std', 'bias_random_walk'):
            number(getattr(self, name), name, 0.0)

    def scaled(self, k: float) -> 'NoiseParams':
        """Return the same noise with every term multiplied by k (e.g. 0 to disable)."""
        return NoiseParams(self.noise_density * k, self.bias_std * k, self.bias_random_walk * k)


class NoisyChannel:
    """White noise plus a random-walk bias, sampled at a fixed rate, for ``shape`` axes.

    The standard normal draws come from rng in blocks of BATCH samples (one numpy call per
    block instead of two per sample: this runs at the IMU rate on every step). The same rng
    and the same sequence of calls give the same samples.
    """

    BATCH = 256

    def __init__(self, params: NoiseParams, rate_hz: float, rng: np.random.Generator, shape=3):
        """Draw the turn-on bias from rng."""
        self.params = params
        self._rng = rng
        self._shape = shape
        self._dt = 1.0 / rate_hz
        self._white_std = params.noise_density * math.sqrt(rate_hz)
        self._walk_std = params.bias_random_walk * math.sqrt(self._dt)
        self.bias = (rng.normal(0.0, params.bias_std, shape) if params.bias_std > 0
                     else np.zeros(shape))
        self._draws = None          # (BATCH, 2, shape): white, walk
        self._next = self.BATCH

    def apply(self, true_value):
        """Return true_value + bias + white noise, then let the bias walk one sample."""
        out = np.asarray(true_value, dtype=float) + self.bias
        if self._white_std == 0.0 and self._walk_std == 0.0:
            return out
        if self._next == self.BATCH:
            self._draws = self._rng.standard_normal((self.BATCH, 2, self._shape))
            self._next = 0
        z = self._draws[self._next]
        self._next += 1
        if self._white_std > 0.0:
            out += self._white_std * z[0]
        if self._walk_std > 0.0:
            self.bias = self.bias + self._walk_std * z[1]
        return out
