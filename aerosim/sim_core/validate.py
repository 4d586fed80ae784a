"""Checks of input values that name the field they refuse (pure, no rclpy).

The one place for "a finite number in range", "an integer in range" and "n finite numbers",
for config files (scenario, vehicle, boat, sensor noise, swarm init) and wire inputs (the USV
UI) alike. A refusal is a FieldError: a ConfigError (so a loader's caller takes it as any bad
configuration) with a ``kind`` ('type': not a number at all; 'value': a number out of range
or not finite) and a text that names the field, e.g. ``boats[2].health: must be in (0, 1e+06],
got -5``.
"""

import math
from typing import Tuple

from sim_core.errors import ConfigError


class FieldError(ConfigError):
    """A refused value; kind says how ('type', 'value', or a caller's own kind)."""

    def __init__(self, kind: str, text: str):
        """kind: the refusal's category (a reject counter); text: names the field."""
        super().__init__(text)
        self.kind = kind


def is_number(v) -> bool:
    """True for an int or float that is not a bool (JSON and YAML numbers)."""
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _bounds(lo: float, hi: float, lo_open: bool) -> str:
    """'in [lo, hi]', or the one side that bounds: '>= lo', '> lo', '<= hi'."""
    if hi == math.inf and lo != -math.inf:
        return f'{">" if lo_open else ">="} {lo:g}'
    if lo == -math.inf and hi != math.inf:
        return f'<= {hi:g}'
    return f'in {"(" if lo_open else "["}{lo:g}, {hi:g}]'


def number(v, name: str, lo: float = -math.inf, hi: float = math.inf,
           lo_open: bool = False) -> float:
    """A finite number in [lo, hi] (or (lo, hi] with lo_open) as float; FieldError naming name."""
    if not is_number(v):
        raise FieldError('type', f'{name}: must be a finite number, got {v!r}')
    try:
        v = float(v)
    except OverflowError:       # an integer of hundreds of digits
        raise FieldError('value', f'{name}: must be finite, got an integer of '
                         f'{v.bit_length()} bits') from None
    if not math.isfinite(v):
        raise FieldError('value', f'{name}: must be finite, got {v!r}')
    if v < lo or v > hi or (lo_open and v == lo):
        raise FieldError('value', f'{name}: must be {_bounds(lo, hi, lo_open)}, got {v:g}')
    return v


def vector(v, name: str, n: int, lo: float = -math.inf, hi: float = math.inf
           ) -> Tuple[float, ...]:
    """A list (or tuple) of n finite numbers in [lo, hi] as a tuple of floats.

    FieldError naming the field, or the element (``name[i]``) that is wrong.
    """
    if not isinstance(v, (list, tuple)) or len(v) != n:
        raise FieldError('type', f'{name}: {n} finite numbers expected (a list), got {v!r}')
    return tuple(number(x, f'{name}[{i}]', lo, hi) for i, x in enumerate(v))


def integer(v, name: str, lo: int, hi: int) -> int:
    """An integer in [lo, hi] (an integral float such as 3.0 is taken); FieldError otherwise."""
    if not is_number(v):
        raise FieldError('type', f'{name}: must be an integer, got {v!r}')
    if isinstance(v, float):
        if not (math.isfinite(v) and v.is_integer()):
            raise FieldError('type', f'{name}: must be an integer, got {v!r}')
        v = int(v)
    if not lo <= v <= hi:
        raise FieldError('value', f'{name}: must be in [{lo}, {hi}], got {v}')
    return v


def choice(v, name: str, choices):
    """The value v if it is one of choices; else FieldError ('value') naming the choices."""
    if v not in tuple(choices):
        raise FieldError('value', f'{name}: one of {", ".join(str(c) for c in choices)}, '
                         f'got {v!r}')
    return v
