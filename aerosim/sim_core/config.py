"""A node's configuration as data: a frozen dataclass and a table of Param (pure, no rclpy).

Every node reads its parameters the same way: the core that owns them writes a frozen
dataclass (the defaults) and a table ``{field: Param(...)}`` (description with units, range
from the core's own constants, the allowed choices, whether the node applies a new value while
it runs). ``sim_ros.params.read_config`` declares one ROS parameter per field from the table
(its descriptor carries the range and the choices, so ``ros2 param describe`` tells the
truth) and hands the values to ``build``, which checks them here, without ROS: a test of a
core's configuration errors needs no DDS. ``markdown`` renders a table for the README.
"""

import dataclasses
from typing import Any, Dict, NamedTuple, Optional, Tuple

from sim_core import validate
from sim_core.errors import ConfigError


class Param(NamedTuple):
    """One parameter's contract.

    desc: what it is, with its unit; lo, hi: the closed range of a number (None: unbounded);
    choices: the values allowed (empty: any); live: the node applies a new value while it runs
    (else the parameter is read-only after start-up); any_type: the value may arrive in any
    type (``-p ids:=1`` and ``:=[1, 2]`` alike; the core checks it).
    """

    desc: str
    lo: Optional[float] = None
    hi: Optional[float] = None
    choices: Tuple = ()
    live: bool = False
    any_type: bool = False

    def describe(self) -> str:
        """The description with the choices spelled out (what `ros2 param describe` shows)."""
        if not self.choices or 'one of' in self.desc:
            return self.desc
        return f'{self.desc}; one of {", ".join(str(c) for c in self.choices)}'


def param(entry) -> Param:
    """A table entry as a Param (a tuple (desc,) or (desc, lo, hi) is taken as one)."""
    return entry if isinstance(entry, Param) else Param(*entry)


def defaults(cls) -> Dict[str, Any]:
    """{field: default} of a frozen config dataclass (tuples as lists, as ROS arrays)."""
    out = {}
    for f in dataclasses.fields(cls):
        out[f.name] = list(f.default) if isinstance(f.default, tuple) else f.default
    return out


def check(name: str, p: Param, value, default):
    """The value, checked against p's range and choices; ConfigError naming the parameter."""
    if p.choices:
        validate.choice(value, name, p.choices)
    if p.lo is not None and p.hi is not None and validate.is_number(value) \
            and not isinstance(default, bool):
        if isinstance(default, int):
            validate.integer(value, name, int(p.lo), int(p.hi))
        else:
            validate.number(value, name, p.lo, p.hi)
    return value


def build(cls, table: dict, values: Dict[str, Any]):
    """cls(**values) after every field's check; fields missing from values take defaults.

    A field without a table row, or a table row without a field, is a programming error
    (KeyError / ConfigError at start-up, caught by the tests of every table).
    """
    fields = {f.name: f for f in dataclasses.fields(cls)}
    extra = set(table) - set(fields)
    if extra:
        raise ConfigError(f'{cls.__name__}: table rows without a field: {sorted(extra)}')
    out = {}
    for name, f in fields.items():
        v = values.get(name, f.default)
        if isinstance(f.default, tuple):       # an empty YAML list comes as no value: none
            v = () if v is None else tuple(v)
        out[name] = check(name, param(table[name]), v, f.default)
    return cls(**out)


def markdown(cls, table: dict) -> str:
    """The README's table of cls's parameters: name, default, range or choices, description."""
    rows = ['| parameter | default | range | description |', '|---|---|---|---|']
    for f in dataclasses.fields(cls):
        p = param(table[f.name])
        if p.choices:
            rng = ' / '.join(f'`{c}`' for c in p.choices)
        elif p.lo is not None and p.hi is not None:
            whole = isinstance(f.default, int) and not isinstance(f.default, bool)
            rng = f'{int(p.lo)} .. {int(p.hi)}' if whole else f'{p.lo:g} .. {p.hi:g}'
        else:
            rng = ''
        default = list(f.default) if isinstance(f.default, tuple) else f.default
        desc = p.desc.replace('|', '\\|')
        live = ' (live)' if p.live else ''
        rows.append(f'| `{f.name}` | `{default!r}` | {rng} | {desc}{live} |')
    return '\n'.join(rows)


def checked(cfg, table: dict):
    """The config itself after build's checks of every field (a core handed a config directly).

    A core's constructor calls this so a config built in a test, without ROS, is refused with
    the same ConfigError a node's start-up gives.
    """
    return build(type(cfg), table, {f.name: getattr(cfg, f.name)
                                    for f in dataclasses.fields(cfg)})
