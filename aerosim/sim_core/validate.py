"""Checks of input values that name the field they refuse (pure, no rclpy).

One place for "a finite number in range" and "an integer in range", for config files and wire
inputs alike. A refusal is a FieldError: a ValueError with a ``kind`` ('type': not a number at
all; 'value': a number out of range or not finite) and a text that names the field, e.g.
``boats[2].health: must be in (0, 1e+06], got -5``.
"""

import math


class FieldError(ValueError):
    """A refused value; kind says how ('type', 'value', or a caller's own kind)."""

    def __init__(self, kind: str, text: str):
        """kind: the refusal's category (a reject counter); text: names the field."""
        super().__init__(text)
        self.kind = kind


def is_number(v) -> bool:
    """True for an int or float that is not a bool (JSON and YAML numbers)."""
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def number(v, name: str, lo: float = -math.inf, hi: float = math.inf,
           lo_open: bool = False) -> float:
    """A finite number in [lo, hi] (or (lo, hi] with lo_open) as float; FieldError naming name."""
    if not is_number(v):
        raise FieldError('type', f'{name}: must be a number, got {v!r}')
    try:
        v = float(v)
    except OverflowError:       # an integer of hundreds of digits
        raise FieldError('value', f'{name}: must be finite, got an integer of '
                         f'{v.bit_length()} bits') from None
    if not math.isfinite(v):
        raise FieldError('value', f'{name}: must be finite, got {v!r}')
    if v < lo or v > hi or (lo_open and v == lo):
        raise FieldError('value', f'{name}: must be in {"(" if lo_open else "["}{lo:g}, '
                         f'{hi:g}], got {v:g}')
    return v


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
