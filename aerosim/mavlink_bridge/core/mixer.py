"""Actuator channel -> motor mapping for HIL_ACTUATOR_CONTROLS (pure).

Only controls[0..3] are used. The table lists, per motor index of the vehicle model, the
actuator channel that drives it. The vehicle models order their motors the PX4 Quad X way
(0 front-right CCW, 1 rear-left CCW, 2 front-left CW, 3 rear-right CW), so the default table
is the identity (0, 1, 2, 3).

Validation (the vehicle never flies on garbage):
- NaN or infinite values in the used channels: rejected;
- values outside [-1, 1] (the field's documented range): rejected;
- values in [-1, 0): clamped to 0 (PX4 sends -1 for a disarmed motor); (1, 1]: n/a.
"""

from dataclasses import dataclass
import math
from typing import Sequence, Tuple

from sim_core.errors import ConfigError

N_CHANNELS = 4
PX4_QUAD_X = (0, 1, 2, 3)


class ActuatorError(ValueError):
    """An actuator message that must not drive the vehicle."""


@dataclass(frozen=True)
class Mixer:
    """motor_channels[i]: the controls[] channel that drives motor i."""

    motor_channels: Tuple[int, ...] = PX4_QUAD_X

    def __post_init__(self):
        """Validate: one distinct channel in 0..3 per motor."""
        ch = tuple(self.motor_channels)
        if len(ch) != N_CHANNELS or sorted(ch) != list(range(N_CHANNELS)):
            raise ConfigError(f'mixer: motor_channels must be a permutation of 0..3, got {ch}')

    def throttles(self, controls: Sequence[float]) -> Tuple[float, ...]:
        """Map HIL_ACTUATOR_CONTROLS.controls to motor throttles 0..1; raise ActuatorError."""
        if controls is None or len(controls) < N_CHANNELS:
            raise ActuatorError(f'need {N_CHANNELS} control channels, got '
                                f'{0 if controls is None else len(controls)}')
        used = [float(controls[c]) for c in range(N_CHANNELS)]
        for i, v in enumerate(used):
            if not math.isfinite(v):
                raise ActuatorError(f'controls[{i}] is {v}')
            if not -1.0 <= v <= 1.0:
                raise ActuatorError(f'controls[{i}] = {v:g} outside [-1, 1]')
        return tuple(max(0.0, used[c]) for c in self.motor_channels)
