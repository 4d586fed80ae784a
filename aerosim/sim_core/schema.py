"""Config files through one schema library: pydantic v2 models, one-line errors (pure, no rclpy).

Every config file (a scenario, a kind's vehicle file) is a pydantic model: each field's type,
range, unit and meaning are declared once, in the model, and from there come the check, the
error and the JSON Schema an editor uses. Why pydantic v2 (not msgspec, not hand checks):
``extra='forbid'`` refuses unknown keys where they are, every error carries its location
(the key path into the file), ``model_json_schema()`` exports the JSON Schema with the ranges
and descriptions, and it is a rosdep key (``python3-pydantic``) on every ROS distro.

The models are strict: a number is an int or a float (never a bool, never the text "1.5"),
an integer is an int, text is a str, a flag is a bool; NaN and infinities are refused. A
fixed-length vector is a tuple field marked ``strict=False`` (YAML gives lists), its items
still strict.

``load(model, data, where)`` validates parsed data and raises ``ConfigError`` with one line:
``<where>: <key path>: <what is wrong>``, e.g. ``scenario my.yaml: missoin: unknown key; did
you mean mission?`` or ``... vehicles[1].mission[0].alt_m: must be <= 10000 m, got 12000``
(the first error, and "(and N more)" when there are several; unknown keys first, since a
misspelt key also leaves its real one missing). A rule between fields raises ``rule(text,
*at)`` from a validator: ``at`` is the key path below the validated model it names.
"""

import difflib
import types
from typing import (
    Annotated,
    Any,
    ClassVar,
    Dict,
    List,
    Optional,
    Self,
    Tuple,
    Type,
    TypeVar,
    Union,
    get_args,
    get_origin,
)

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from pydantic.fields import FieldInfo

from sim_core.errors import ConfigError
from sim_core.paths import read_yaml

JSON_SCHEMA_DIALECT = 'https://json-schema.org/draft/2020-12/schema'
# A vehicle's name another key refers to (boat0, quad1: an ASCII identifier), or '' for none.
NAME_PATTERN = r'^([A-Za-z_][A-Za-z0-9_]*)?$'

M = TypeVar('M', bound=BaseModel)


class FileModel(BaseModel):
    """A config file's model (or a part of one): strict, unknown keys refused, immutable."""

    model_config = ConfigDict(extra='forbid', strict=True, allow_inf_nan=False, frozen=True)
    what: ClassVar[str] = 'config file'     # a file of it, in errors: 'boat type', ...

    @classmethod
    def from_dict(cls, data: Any, where: str = '') -> Self:
        """Validate parsed data (where: the file or section, first in an error)."""
        return load(cls, data, where or cls.what)

    @classmethod
    def from_yaml(cls, path) -> Self:
        """Load and validate a YAML file of this model; errors name the file and the key."""
        return load(cls, read_yaml(path, cls.what), f'{cls.what} {path}')


def quantity(default: Any, description: str, unit: str = '', **limits: Any) -> Any:
    """A field's Field: its meaning, unit ('' none; '-' dimensionless) and limits (ge, le...).

    The unit goes into the description ('Altitude above the origin [m]') and, as ``unit``,
    into the JSON Schema, where the error messages also read it. ``...`` as default: required.
    """
    text = f'{description} [{unit}]' if unit else description
    return Field(default, description=text, json_schema_extra={'unit': unit} if unit else None,
                 **limits)


def vector(default: Any, description: str, unit: str = '', **kw: Any) -> Any:
    """A fixed-length vector field (annotate it Tuple[X, X, X]): YAML's list taken as tuple."""
    return quantity(default, description, unit, strict=False, **kw)


class Rule(ValueError):
    """A rule between fields, broken: what a model's validator raises (see rule())."""

    def __init__(self, text: str, at: Tuple[Union[str, int], ...]):
        """text: what is wrong; at: the key path below the validated model it names."""
        super().__init__(text)
        self.at = at


def rule(text: str, *at: Union[str, int]) -> Rule:
    """The error a validator raises for a rule between fields: text, at the key path ``at``.

    ``at`` is relative to the model being validated (('deck',), ('initial_position_enu', 2)).
    """
    return Rule(text, at)


def load(model: Type[M], data: Any, where: str) -> M:
    """Data validated by model; ConfigError with one line naming where and the key path."""
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(explain(model, exc, where)) from None
    except RecursionError:          # a structure nested deeper than Python recurses
        raise ConfigError(f'{where}: nested too deeply') from None


def json_schema(model: Type[BaseModel]) -> Dict[str, Any]:
    """Model's JSON Schema (draft 2020-12) for editors: types, ranges, units, descriptions."""
    return {'$schema': JSON_SCHEMA_DIALECT, **model.model_json_schema()}


# --- errors ------------------------------------------------------------------------------------
_TYPES = {'float_type': 'a number', 'int_type': 'an integer', 'string_type': 'text',
          'bool_type': 'true or false', 'model_type': 'a mapping (key: value)',
          'dict_type': 'a mapping (key: value)', 'model_attributes_type': 'a mapping',
          'list_type': 'a list', 'tuple_type': 'a list', 'int_from_float': 'an integer',
          'float_parsing': 'a number', 'int_parsing': 'an integer'}
_BOUNDS = {'greater_than': ('gt', '>'), 'greater_than_equal': ('ge', '>='),
           'less_than': ('lt', '<'), 'less_than_equal': ('le', '<=')}


def explain(model: Type[BaseModel], exc: ValidationError, where: str) -> str:
    """One line for exc: the first error (unknown keys first) and how many more."""
    lines: List[str] = []
    unions: Dict[Tuple, Tuple[int, int]] = {}       # union's loc -> (depth, index in lines)
    meant: List[str] = []                           # the keys an unknown key was taken for
    for details in sorted(exc.errors(), key=lambda e: e['type'] not in (
            'extra_forbidden', 'unexpected_keyword_argument', 'invalid_key')):
        err: Dict[str, Any] = dict(details)
        broken = (err.get('ctx') or {}).get('error')
        loc = tuple(err['loc']) + (broken.at if isinstance(broken, Rule) else ())
        if err['type'] == 'missing' and loc and type(loc[-1]) is int and \
                isinstance(err.get('input'), (list, tuple)):
            loc, err = loc[:-1], {**err, 'type': 'tuple_length'}      # a vector too short
        elif err['type'] == 'invalid_key':                  # its loc ends with the key
            loc = loc[:-1]
        path, holder, field, union = _trace(model, loc)
        problem = _problem(err, holder, field, path)
        if problem.startswith('unknown key; did you mean '):
            meant.append(_path(path[:-1] + [problem.split()[-1].rstrip('?')]))
        elif err['type'] == 'missing' and _path(path) in meant:
            continue                                # the same mistake: said once
        line = f'{_path(path)}: {problem}' if path else problem
        if line in lines:
            continue
        if union is not None:                       # a union's branches: keep the deepest
            depth = len(loc)
            if union in unions:
                best, i = unions[union]
                if depth > best:
                    lines[i], unions[union] = line, (depth, i)
                continue
            unions[union] = (depth, len(lines))
        lines.append(line)
    more = f' (and {len(lines) - 1} more)' if len(lines) > 1 else ''
    return f'{where}: {lines[0]}{more}' if lines else f'{where}: invalid'


def _path(parts: List[Union[str, int]]) -> str:
    """('vehicles', 1, 'mission', 0, 'alt_m') -> 'vehicles[1].mission[0].alt_m'."""
    out = ''
    for p in parts:
        out += f'[{p}]' if isinstance(p, int) else (f'.{p}' if out else str(p))
    return out


def _strip(tp: Any) -> Any:
    while get_origin(tp) is Annotated:
        tp = get_args(tp)[0]
    return tp


def _members(tp: Any) -> List[Any]:
    """The types a value of tp may be (a union's members but None; else tp)."""
    tp = _strip(tp)
    if get_origin(tp) in (Union, types.UnionType):
        return [_strip(a) for a in get_args(tp) if a is not type(None)]
    return [tp]


def _is_model(tp: Any) -> bool:
    return isinstance(tp, type) and issubclass(tp, BaseModel)


def _item(seq: Any, i: int) -> Any:
    """The type of item i of a List[X] or Tuple[...]."""
    args = get_args(seq)
    if get_origin(seq) is list or len(args) == 2 and args[1] is Ellipsis:
        return args[0] if args else Any
    return args[min(i, len(args) - 1)] if args else Any


def _trace(model: Type[BaseModel], loc: Tuple) -> Tuple[List[Union[str, int]],
                                                        Optional[Type[BaseModel]],
                                                        Optional[FieldInfo], Optional[Tuple]]:
    """Walk loc through model: (key path, model holding its last key, field, union).

    field: the last key's (None if the model does not know it); union: the loc of the union
    whose branch the error is in, or None.
    """
    tp: Any = model
    holder: Optional[Type[BaseModel]] = None
    field: Optional[FieldInfo] = None
    path: List[Union[str, int]] = []
    union = None
    for k, part in enumerate(loc):
        members = _members(tp)
        if isinstance(part, int) and not isinstance(part, bool):
            seq = next((m for m in members if get_origin(m) in (list, tuple)), None)
            tp = _item(seq, part) if seq is not None else Any
            path.append(part)
            continue
        models = [m for m in members if _is_model(m)]
        owner = next((m for m in models if isinstance(part, str) and part in m.model_fields),
                     None)
        if owner is not None:
            holder, field = owner, owner.model_fields[part]
            tp = field.annotation
            path.append(part)
        elif len(members) > 1 and not models:       # a union's branch tag ('list[...]')
            union = tuple(loc[:k])
        else:                                       # a key the model does not know
            holder, field = (models[0] if models else holder), None
            path.append(part if isinstance(part, str) else repr(part))
            tp = Any
    return path, holder, field, union


def _unit(field: Optional[FieldInfo]) -> str:
    extra = field.json_schema_extra if field is not None else None
    unit = extra.get('unit', '') if isinstance(extra, dict) else ''
    return f' {unit}' if unit and unit != '-' else ''


def _lengths(field: Optional[FieldInfo]) -> Tuple[Optional[int], Optional[int]]:
    """The (least, most) items field takes: a fixed tuple's length, its min/max_length."""
    if field is None:
        return None, None
    for m in _members(field.annotation):
        args = get_args(m)
        if get_origin(m) is tuple and args and args[-1] is not Ellipsis:
            return len(args), len(args)
    lo = next((c.min_length for c in field.metadata if hasattr(c, 'min_length')), None)
    hi = next((c.max_length for c in field.metadata if hasattr(c, 'max_length')), None)
    return lo, hi


def _show(v: Any, as_is: bool = False) -> str:
    """A value in an error: numbers as %g (as_is: as written), others as repr, cut to 40."""
    if isinstance(v, int) and not isinstance(v, bool) and v.bit_length() > 64:
        return f'an integer of {len(str(v))} digits'
    if isinstance(v, bool) or not isinstance(v, (int, float)) or as_is:
        text = repr(v)
        return text if len(text) <= 40 else text[:37] + '...'
    return f'{v:g}'


def _problem(err: Dict[str, Any], holder: Optional[Type[BaseModel]],
             field: Optional[FieldInfo], path: List[Union[str, int]]) -> str:
    """What is wrong, in words (the key path is said before it)."""
    kind, ctx, got = err['type'], err.get('ctx') or {}, err.get('input')
    if kind in ('extra_forbidden', 'unexpected_keyword_argument'):
        valid = sorted(holder.model_fields) if holder is not None else []
        near = difflib.get_close_matches(str(path[-1]) if path else '', valid, n=1)
        if near:
            return f'unknown key; did you mean {near[0]}?'
        return f'unknown key (the keys here: {", ".join(valid)})'
    if kind == 'invalid_key':
        if isinstance(got, bool):
            return (f'unknown key {str(got).lower()}: YAML 1.1 reads an unquoted on, off, yes '
                    'or no key as a boolean; quote it, or use a key of this level')
        return f'keys are names, got {_show(got)}'
    if kind == 'missing':
        return 'required'
    if kind == 'tuple_length':
        return f'must have {_lengths(field)[0]} items, got {len(got or ())}'
    if kind in _BOUNDS:
        key, op = _BOUNDS[kind]
        bound = ctx.get(key)
        bound_text = f'{bound:g}' if isinstance(bound, (int, float)) else str(bound)
        return f'must be {op} {bound_text}{_unit(field)}, got {_show(got)}'
    if kind == 'finite_number':
        return f'must be finite, got {_show(got)}'
    if kind in _TYPES:
        return f'must be {_TYPES[kind]}, got {_show(got, as_is=True)}'
    if kind == 'literal_error':
        return f'must be one of {ctx.get("expected", "")}, got {_show(got)}'
    if kind in ('too_short', 'too_long'):
        lo, hi = _lengths(field)
        lo = ctx.get('min_length') if lo is None else lo
        hi = ctx.get('max_length') if hi is None else hi
        size = f'{lo}' if lo == hi else f'at least {lo}' if kind == 'too_short' else \
            f'at most {hi}'
        return f'must have {size} item{"" if size.endswith(" 1") else "s"}, got ' \
            f'{ctx.get("actual_length")}'
    if kind == 'string_too_short':
        return 'must not be empty'
    if kind == 'string_pattern_mismatch':
        return f'must be a name such as boat0 ({ctx.get("pattern")}), got {_show(got)}'
    if isinstance(ctx.get('error'), Rule):
        return str(ctx['error'])
    text = str(err.get('msg', kind))
    return text.removeprefix('Value error, ')
