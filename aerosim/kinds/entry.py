"""A kind's entry: what a vehicle kind brings, and the check that it brings it all (pure).

Every kind folder kinds/<name>/ defines ``ENTRY`` in its ``__init__.py``, a KindEntry:

- ``kind``: its name, the folder's (``name_of(__name__)``: the code never names its kind);
- ``example``: a scenario of this kind alone (in its scenarios/ folder, or config/scenarios);
- ``schema``: its vehicle file's model (a sim_core.schema FileModel, ``aerosim schema
  <kind>`` prints its JSON Schema); ``load_params``: its loader (kinds/<name>/params/*.yaml),
  by default the schema's ``from_yaml``;
- ``model``: its VehicleModel class (model.py), built ``from_member(member, environment)``;
- ``view``: its body shapes for the viewers and its mission markers' size (view.py);
- ``judge``: its judge in a world (judge.py): a JudgeFactory, member -> VehicleJudge
  (sim_report.core.vehicle_judge; a DeckJudge for a kind that lands on decks);
- ``controllers``: how each controller of its kind.yaml runs (a ControllerWay: in the world's
  process, made by controllers.py; an aerosim executable; a program of its own over a link).

What is per kind elsewhere is named by its kind.yaml (sim_core.kinds): the MAVLink mixer
(mavlink_bridge.core.mixer.MIXERS), the built-in FC's airframe (mavlink_bridge.fc.fc_core
.AIRFRAMES), PX4's parameter file (config/px4). The registry (kinds/__init__.py REGISTERED)
lists the kinds, a line each; ``entry(kind)`` imports a kind's folder when it is first asked
for (a world of quads never imports JSBSim). ``missing(entry)`` builds each part from the
example and names what is absent or broken, by field (test/test_kinds.py runs it on every
kind).
"""

from dataclasses import dataclass, field
import importlib
from pathlib import Path
from typing import Any, Callable, Dict, List, Mapping, Optional, Type

from pydantic import BaseModel

from kinds import REGISTERED
from mavlink_bridge.core.mixer import MIXERS, MixerConfig
from mavlink_bridge.fc.fc_core import AIRFRAMES
from sim_core.errors import ConfigError
from sim_core.kinds import KINDS, TOPIC, TOPIC_CONTROLLERS, KindInfo, VehicleModel, kind_of
from sim_core.members import Member, world_members
from sim_core.paths import config_dirs, read_yaml
from sim_core.scenario import kinds_in, load_scenario
from sim_core.schema import json_schema, load
from sim_report.core.vehicle_judge import JudgeFactory
from sim_viz.core import scene

# how a controller runs
IN_PROCESS = 'in_process'       # updated by the world on truth (the kind's controllers.py)
PROCESS = 'process'             # an aerosim executable of its own (setup.py console_scripts)
EXTERNAL = 'external'           # a program we do not ship (PX4 SITL, DUNE), over its link
RUNS = (IN_PROCESS, PROCESS, EXTERNAL)
# its link: a HIL bridge per vehicle, an imc_bridge per vehicle, or the vehicle's
# effector_command topic (any ROS node); '' in the world's process
MAVLINK, IMC = 'mavlink', 'imc'
# the judge's surface (sim_report.core.vehicle_judge.VehicleJudge)
JUDGE_SURFACE = ('marker', 'color', 'items', 'reached_at_s', 'done', 'over', 'wants_motors',
                 'feed', 'path', 'plan', 'summary')
MODEL_METHODS = ('reset', 'step', 'sample', 'push', 'on_surface', 'idle',
                 'angular_acceleration_flu', 'apply_command', 'carry')


@dataclass(frozen=True)
class ControllerWay:
    """How one controller of a kind runs (see the module docstring)."""

    runs: str                   # IN_PROCESS, PROCESS or EXTERNAL
    what: str                   # its class, executable or program (logs, docs)
    link: str = ''              # MAVLINK, IMC, TOPIC; '' in process
    make: Optional[Callable[[Member, Any], Any]] = None    # IN_PROCESS: (member, model)


@dataclass(frozen=True)
class View:
    """How the viewers draw a kind."""

    body: Callable[[Any, str], scene.BodyShapes]    # (its parameters, marker ns) -> shapes
    mission_marker_m: float                         # its mission items' marker size [m]


@dataclass(frozen=True)
class KindEntry:
    """What a vehicle kind brings (see the module docstring)."""

    kind: str
    example: str
    schema: Optional[Type[BaseModel]]   # its vehicle file's model (sim_core.schema)
    model: Any                  # a class: from_member(member, environment) -> VehicleModel
    view: View
    judge: JudgeFactory
    controllers: Mapping[str, ControllerWay] = field(default_factory=dict)
    load_params: Optional[Callable[[Any], Any]] = None  # None: the schema's from_yaml

    def __post_init__(self) -> None:
        """The loader defaults to the schema's from_yaml."""
        if self.load_params is None and self.schema is not None:
            object.__setattr__(self, 'load_params', getattr(self.schema, 'from_yaml', None))

    @property
    def info(self) -> KindInfo:
        """Its plain facts (its kind.yaml, sim_core.kinds)."""
        return KINDS[self.kind]


# The ways several kinds share
BUILTIN_FC = ControllerWay(PROCESS, 'builtin_fc', MAVLINK)
PX4 = ControllerWay(EXTERNAL, 'PX4 SITL', MAVLINK)
EXTERNAL_FC = ControllerWay(EXTERNAL, 'a MAVLink HIL flight controller', MAVLINK)
ANY_NODE = ControllerWay(EXTERNAL, 'any ROS node publishing effector_command', TOPIC)
DUNE = ControllerWay(EXTERNAL, 'DUNE (imc_bridge)', IMC)


def name_of(module: str) -> str:
    """A kind's name from its package's __name__ (kinds.<name>): its folder's name."""
    return module.rsplit('.', 1)[-1]


def registry_problems(registered=REGISTERED, kinds=None) -> List[str]:
    """Where the registry and the kind folders disagree (empty: they agree), in words."""
    facts = KINDS if kinds is None else kinds
    out = [f'kinds/{k}/: a kind folder without its line in the registry (kinds/__init__.py '
           'REGISTERED)' for k in facts if k not in registered]
    out += [f'kinds/__init__.py: the registry line {k!r} has no folder kinds/{k}/ with a '
            'kind.yaml' for k in registered if k not in facts]
    out += [f'kinds/__init__.py: {k!r} is registered twice' for k in set(registered)
            if list(registered).count(k) > 1]
    return out


_ENTRIES: Dict[str, KindEntry] = {}


def entry(kind) -> KindEntry:
    """The KindEntry of kind (its name): its folder imported when first asked for.

    ConfigError for a kind with no folder, or no line in the registry, or a folder whose
    ``ENTRY`` is not its KindEntry.
    """
    if isinstance(kind, str) and kind in REGISTERED and kind not in KINDS:
        raise ConfigError(f'kind {kind}: the registry line has no folder kinds/{kind}/ with a '
                          'kind.yaml')
    name = kind_of(kind)
    if name not in REGISTERED:
        raise ConfigError(f'kind {name}: kinds/{name}/ has no line in the registry '
                          '(kinds/__init__.py REGISTERED)')
    e = _ENTRIES.get(name)
    if e is None:
        e = getattr(importlib.import_module(f'kinds.{name}'), 'ENTRY', None)
        if not isinstance(e, KindEntry) or e.kind != name:
            raise ConfigError(f'kinds/{name}/__init__.py: ENTRY must be its KindEntry (kind '
                              f'{name!r}), got {e!r:.80}')
        _ENTRIES[name] = e
    return e


def entries() -> Dict[str, KindEntry]:
    """Every registered kind's entry, by name (imports every kind)."""
    return {k: entry(k) for k in REGISTERED}


def judges_of(members) -> Dict[str, JudgeFactory]:
    """The judge factory of each kind among members (sim_report.core.world.WorldJudge's)."""
    return {m.kind: entry(m.kind).judge for m in members}


def make_model(member: Member) -> VehicleModel:
    """The model of a world's member, by its kind (the scenario's environment)."""
    return entry(member.kind).model.from_member(member, member.scenario.environment)


def make_controller(member: Member, model: VehicleModel) -> Any:
    """The in-process controller of member (its kind's way for its controller), or None.

    None for a controller reached over a link (MAVLink, IMC, a topic) or run as a process:
    the world node sets its commands on the model.
    """
    way = entry(member.kind).controllers.get(member.controller)
    if way is None:
        raise ConfigError(f'{member.name}: a {member.kind} has no controller '
                          f'{member.controller!r}')
    return way.make(member, model) if way.runs == IN_PROCESS and way.make else None


def example_path(e: KindEntry) -> str:
    """The example scenario of e: its own scenarios folder's, else by name (load_scenario)."""
    own = KINDS[e.kind].scenarios_dir / f'{e.example}.yaml' if e.kind in KINDS else None
    return str(own) if own is not None and own.is_file() else e.example


def missing(e: KindEntry) -> List[str]:
    """What entry e lacks to be a kind (empty: a complete kind); each item names the field.

    Builds every part once from its example scenario: its parameters (every file of its
    params folder), its model (the VehicleModel members), its mixer and built-in FC airframe
    (a kind flown over MAVLink), its PX4 parameter file, view and judge, and checks that
    each of its controllers has a way to run.
    """
    if not isinstance(e.kind, str) or e.kind not in KINDS:
        return [f'kind: {e.kind!r} has no folder kinds/<kind>/ with a kind.yaml '
                '(sim_core.kinds)']
    k = KINDS[e.kind]
    out = [] if e.kind in REGISTERED else [
        f'kind: {e.kind} has no line in the registry (kinds/__init__.py REGISTERED)']
    try:
        sc = load_scenario(example_path(e))
        if kinds_in(sc) != (e.kind,):
            raise ConfigError(f'flies {", ".join(kinds_in(sc))}')
        member = world_members(sc)[0]
    except (ConfigError, OSError, ValueError) as exc:
        return out + [f'example: scenario {e.example!r} of a {e.kind} alone ({exc})']
    out += _params_missing(e, k, member)
    out += _model_missing(e, member)
    out += _links_missing(e, k, member)
    out += _view_missing(e, member)
    out += _judge_missing(e, k, member)
    out += _controllers_missing(e, k)
    return out


def _params_missing(e: KindEntry, k: KindInfo, member: Member) -> List[str]:
    """Its loader refuses none of its params folder's files (nor the example's file)."""
    if not callable(e.load_params):
        return ['load_params: its parameter file loader']
    files = sorted(k.params_dir.glob('*.yaml'))
    out = [] if files else [f'load_params: no parameter file in kinds/{e.kind}/params']
    for f in files + [Path(member.scenario.vehicle_file)]:
        try:
            e.load_params(str(f))
        except Exception as exc:  # noqa: BLE001 - any failure is the loader's to name
            out.append(f'load_params: refuses {f.name} ({exc!r})')
    return out + _schema_missing(e, files)


def _schema_missing(e: KindEntry, files: List[Path]) -> List[str]:
    """What the schema of e lacks: a pydantic model taking every file of its folder."""
    if not (isinstance(e.schema, type) and issubclass(e.schema, BaseModel)):
        return ["schema: its vehicle file's model (a pydantic model, sim_core.schema)"]
    out = []
    try:
        json_schema(e.schema)
    except Exception as exc:  # noqa: BLE001 - any failure is the schema's to name
        out.append(f'schema: no JSON Schema ({exc!r})')
    for f in files:
        try:
            load(e.schema, read_yaml(f, 'vehicle file'), str(f))
        except ConfigError as exc:
            out.append(f'schema: refuses {f.name} ({exc})')
    return out


def _model_missing(e: KindEntry, member: Member) -> List[str]:
    """The VehicleModel members a model built from member lacks."""
    make = getattr(e.model, 'from_member', None)
    if not callable(make):
        return ['model: a VehicleModel class with from_member(member, environment)']
    try:
        model = make(member, member.scenario.environment)
    except Exception as exc:  # noqa: BLE001 - any failure is the model's to name
        return [f'model: not built from {member.name} ({exc!r})']
    out = []
    for name in ('mass_kg', 'radius_m'):
        x = getattr(model, name, None)
        if not isinstance(x, float) or not x > 0.0:
            out.append(f'model: {name} (VehicleModel), got {x!r}')
    if not hasattr(model, 'deck'):
        out.append('model: deck (VehicleModel: the DeckSpec it carries, or None)')
    for name in MODEL_METHODS:
        if not callable(getattr(model, name, None)) or not hasattr(VehicleModel, name):
            out.append(f'model: {name}() (VehicleModel)')
    return out


def _links_missing(e: KindEntry, k: KindInfo, member: Member) -> List[str]:
    """What its kind.yaml names for the links: its mixer, FC airframe, PX4 parameter file."""
    out = []
    if k.mavlink:
        if k.mixer not in MIXERS:
            out.append(f'mixer: its kind.yaml names {k.mixer!r}, not one of '
                       f'{", ".join(MIXERS)} (mavlink_bridge.core.mixer.MIXERS)')
        else:
            try:
                m = MIXERS[k.mixer](MixerConfig(), str(member.scenario.vehicle_file))
                m.idle()
                m.describe()
            except (ConfigError, OSError, ValueError, AttributeError, TypeError) as exc:
                out.append(f'mixer: not built for {member.scenario.vehicle_file} ({exc})')
    elif k.mixer:
        out.append(f'mixer: {k.mixer!r} named, but no controller flies it over MAVLink')
    builtin = [n for n, w in e.controllers.items() if w == BUILTIN_FC]
    if k.airframe and k.airframe not in AIRFRAMES:
        out.append(f"airframe: {k.airframe!r} is not one of the built-in FC's "
                   f'({", ".join(AIRFRAMES)})')
    elif builtin and not k.airframe:
        out.append(f'airframe: its controller {builtin[0]!r} is the built-in FC, and its '
                   'kind.yaml names no airframe for it')
    if k.px4_params and not any((d / 'px4' / f'{k.px4_params}.params').is_file()
                                for d in config_dirs()):
        out.append(f'px4_params: no config/px4/{k.px4_params}.params')
    return out


def _view_missing(e: KindEntry, member: Member) -> List[str]:
    """Its body draws shapes from its parameters; its marker size is positive."""
    load = e.load_params
    if not isinstance(e.view, View) or not callable(e.view.body) or \
            not e.view.mission_marker_m > 0.0:
        return ['view: its body shape and mission marker size']
    if load is None:
        return ['view: nothing to draw from (no load_params)']
    try:
        body = e.view.body(load(str(member.scenario.vehicle_file)), 'vehicle')
        shapes = body((0.0, 0.0, 0.0), scene.IDENTITY)
    except Exception as exc:  # noqa: BLE001 - any failure is the view's to name
        return [f'view: fails ({exc!r})']
    if not (isinstance(shapes, list) and shapes and all(isinstance(s, scene.Shape)
                                                         for s in shapes)):
        return ['view: the body draws no shapes']
    return []


def _judge_missing(e: KindEntry, k: KindInfo, member: Member) -> List[str]:
    """What its judge lacks (sim_report.core.vehicle_judge's VehicleJudge, DeckJudge)."""
    if not callable(e.judge):
        return ['judge: its judge in a world (a VehicleJudge factory of a Member)']
    try:
        j = e.judge(member)
    except Exception as exc:  # noqa: BLE001 - any failure is the judge's to name
        return [f'judge: not built from {member.name} ({exc!r})']
    out = [f'judge: {name} (VehicleJudge)' for name in JUDGE_SURFACE if not hasattr(j, name)]
    if k.lands_on_decks and not callable(getattr(j, 'deck_event', None)):
        out.append('judge: deck_event (DeckJudge: its kind lands on decks)')
    return out


def _controllers_missing(e: KindEntry, k: KindInfo) -> List[str]:
    """The controllers of its kind.yaml without a way to run, and ways that do not fit."""
    out = []
    for name in k.controllers:
        way = e.controllers.get(name)
        if way is None:
            out.append(f'controllers: {name!r} has no way to run')
            continue
        if way.runs not in RUNS or not way.what:
            out.append(f'controllers: {name!r} runs {way.runs!r} ({way.what!r})')
        if way.runs == IN_PROCESS and not callable(way.make):
            out.append(f'controllers: {name!r} runs in process but has no make(member, model)')
        if (way.link == MAVLINK) != (name in k.mavlink):
            out.append(f'controllers: {name!r} over MAVLink must be in its kind.yaml mavlink')
        if (way.link == TOPIC) != (name in TOPIC_CONTROLLERS):
            out.append(f'controllers: {name!r} over a topic must be one of '
                       f'{", ".join(TOPIC_CONTROLLERS)}')
    for name in sorted(set(e.controllers) - set(k.controllers)):
        out.append(f'controllers: {name!r} is not a controller of its kind.yaml')
    return out
