"""The vehicle-kind registry: what each kind brings, one entry per VehicleKind (pure, no rclpy).

sim_core.kinds holds a kind's plain facts (its config folder, namespace prefix, controllers,
medium, pitot) that every layer may know. This registry (layer 4: it sees every layer's
parts) holds the parts themselves, looked up wherever a kind used to be tested by its name:

- ``load_params``: its parameter file loader (config/<folder>/*.yaml), and ``schema``: that
  file's model (a sim_core.schema model: ``aerosim schema <kind>`` prints its JSON Schema);
- ``model``: its VehicleModel class for a world (sim_dynamics.core.members), built
  ``from_member(member, environment)``;
- ``mixer``: the MAVLink bridge's mixer factory for it (mavlink_bridge.core.mixer.MIXERS), None
  for a kind no controller flies over MAVLink;
- ``view``: its body shape for the viewers (sim_viz.core.scene) and its mission markers' size;
- ``judge``: its judge on ground truth, built from the scenario as the vehicle sees it
  (sim_report.core), and ``world_judge``: the same behind the surface a world's report
  needs (sim_report.core.world.VehicleJudge, built from the world's Member);
- ``controllers``: how each controller of sim_core.kinds runs for it (in the world's process,
  an aerosim executable, or a program of its own over a link);
- ``node``: the node that simulates it alone (its single-kind graphs), and ``example``: a
  shipped scenario of it alone.

``missing(entry)`` lists what an entry lacks (test/test_kinds.py runs it on every kind);
``require_kind`` is the one guard of the single-kind nodes.
"""

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Dict, List, Mapping, Optional, Type

from pydantic import BaseModel

from mavlink_bridge.core.mixer import MIXERS, MixerConfig, MixerFactory
from sim_core.errors import ConfigError
from sim_core.frames import quat_rotate
from sim_core.kinds import (
    KINDS,
    TOPIC_CONTROLLERS,
    KindInfo,
    VehicleKind,
    VehicleModel,
    info,
    kind_of,
)
from sim_core.members import Member, world_members
from sim_core.paths import config_dirs, read_yaml
from sim_core.scenario import Scenario, kinds_in, load_scenario
from sim_core.schema import json_schema, load
from sim_dynamics.core.auv import AuvModel, AuvType
from sim_dynamics.core.members import BoatModel, PlaneModel, QuadModel
from sim_dynamics.core.multirotor import MultirotorParams
from sim_dynamics.core.plane import AircraftParams
from sim_dynamics.core.usv import BoatType
from sim_report.core.auv import AuvJudge, auv_judge
from sim_report.core.boats import BoatWaypointJudge
from sim_report.core.mission import MissionJudge
from sim_report.core.plane import PlaneJudge
from sim_report.core.world import JudgeFactory, boat_judge, multirotor_judge, plane_judge
from sim_viz.core import scene
from sim_world.core.auv_pilot import AuvPilot
from sim_world.core.controllers import BoatWaypoints, PlaneAutopilot

# how a controller runs
IN_PROCESS = 'in_process'       # updated by the world on truth (sim_world.core.controllers)
PROCESS = 'process'             # an aerosim executable of its own (setup.py console_scripts)
EXTERNAL = 'external'           # a program we do not ship (PX4 SITL, DUNE), over its link
MAVLINK, IMC = 'mavlink', 'imc'
TOPIC_LINK = 'topic'            # any ROS node on the vehicle's effector_command topic

BodyShapes = Callable[[Any, Any], List[scene.Shape]]      # (p_enu, q_enu_flu) -> shapes


@dataclass(frozen=True)
class ControllerWay:
    """How one controller of a kind runs (see the module docstring)."""

    runs: str                   # IN_PROCESS, PROCESS or EXTERNAL
    what: str                   # its class, executable or program (logs, docs)
    link: str = ''              # MAVLINK (a HIL bridge per vehicle), IMC, '' in process
    make: Optional[Callable[[Member, Any], Any]] = None    # IN_PROCESS: (member, model)


@dataclass(frozen=True)
class View:
    """How the viewers draw a kind."""

    body: Callable[[Any, str], BodyShapes]     # (its parameters, marker ns) -> body shapes
    mission_marker_m: float                    # its mission items' marker size [m]


@dataclass(frozen=True)
class KindEntry:
    """What a vehicle kind brings (see the module docstring)."""

    kind: VehicleKind
    node: str
    example: str
    load_params: Callable[[Any], Any]
    model: Any                  # a class: from_member(member, environment) -> VehicleModel
    mixer: Optional[MixerFactory]
    view: View
    judge: Callable[[Scenario], Any]
    world_judge: JudgeFactory
    controllers: Mapping[str, ControllerWay] = field(default_factory=dict)
    schema: Optional[Type[BaseModel]] = None    # its vehicle file's model (sim_core.schema)

    @property
    def info(self) -> KindInfo:
        """Its plain facts (sim_core.kinds)."""
        return KINDS[self.kind]

    @property
    def folder(self) -> str:
        """config/<folder>: its parameter files."""
        return self.info.folder


def quad_body(params: MultirotorParams, ns: str) -> BodyShapes:
    """A multirotor's body, arms and rotor discs (its rotors' positions and directions)."""
    rotors = [(r.position, r.direction) for r in params.rotors]
    return lambda p, q: scene.quad_shapes(rotors, p, q, ns)


def plane_body(params: AircraftParams, ns: str) -> BodyShapes:
    """A light aircraft of a C172's proportions."""
    return lambda p, q: scene.plane_shapes(p, q, ns)


DECK_COLOR = (0.95, 0.55, 0.10, 1.0)      # a landing deck's pad (orange)


def boat_body(params: BoatType, ns: str) -> BodyShapes:
    """A hull of the boat's length; its landing deck (a flat box at the pad) if it has one."""
    deck = params.deck
    if deck is None:
        return lambda p, q: scene.boat_shapes(params.length_m, p, q, ns)

    def shapes(p, q):
        w = quat_rotate(q, deck.pad_flu_m)
        pad = (float(p[0] + w[0]), float(p[1] + w[1]), float(p[2] + w[2]) - 0.025)
        return scene.boat_shapes(params.length_m, p, q, ns) + [
            scene.Shape(ns, 10, 'cube', pad, tuple(float(x) for x in q),
                        (deck.size_m[0], deck.size_m[1], 0.05), DECK_COLOR)]
    return shapes


def auv_body(params: AuvType, ns: str) -> BodyShapes:
    """A torpedo of the AUV's length and diameter, its cruciform tail."""
    return lambda p, q: scene.auv_shapes(params.length_m, params.diameter_m, p, q, ns)


BUILTIN_FC = ControllerWay(PROCESS, 'builtin_fc', MAVLINK)
PX4 = ControllerWay(EXTERNAL, 'PX4 SITL', MAVLINK)
ANY_NODE = ControllerWay(EXTERNAL, 'any ROS node publishing effector_command', TOPIC_LINK)

REGISTRY: Dict[VehicleKind, KindEntry] = {
    VehicleKind.MULTIROTOR: KindEntry(
        VehicleKind.MULTIROTOR, 'dynamics_node', 'default', MultirotorParams.from_yaml,
        QuadModel, MIXERS[VehicleKind.MULTIROTOR], View(quad_body, 0.6), MissionJudge,
        multirotor_judge,
        {'builtin': BUILTIN_FC, 'px4': PX4,
         'external': ControllerWay(EXTERNAL, 'a MAVLink HIL flight controller', MAVLINK),
         'topic': ANY_NODE}, MultirotorParams),
    VehicleKind.PLANE: KindEntry(
        VehicleKind.PLANE, 'plane_node', 'circuit', AircraftParams.from_yaml, PlaneModel,
        MIXERS[VehicleKind.PLANE], View(plane_body, 30.0), PlaneJudge, plane_judge,
        {'autopilot': ControllerWay(IN_PROCESS, 'PlaneAutopilot (autopilot_node alone)',
                                    make=PlaneAutopilot),
         'builtin': BUILTIN_FC, 'px4': PX4, 'topic': ANY_NODE}, AircraftParams),
    VehicleKind.BOAT: KindEntry(
        VehicleKind.BOAT, 'usv_node', 'harbour', BoatType.from_yaml, BoatModel, None,
        View(boat_body, 0.6), BoatWaypointJudge, boat_judge,
        {'waypoint': ControllerWay(IN_PROCESS, 'BoatWaypoints', make=BoatWaypoints),
         'imc': ControllerWay(EXTERNAL, 'DUNE (imc_bridge)', IMC)}, BoatType),
    # no single-kind node: an AUV runs in a world (its graph sim_auv is sim_world's)
    VehicleKind.AUV: KindEntry(
        VehicleKind.AUV, 'world_plant', 'dive', AuvType.from_yaml, AuvModel, None,
        View(auv_body, 0.6), AuvJudge, auv_judge,
        {'builtin': ControllerWay(IN_PROCESS, 'AuvPilot', make=AuvPilot),
         'imc': ControllerWay(EXTERNAL, 'DUNE (imc_bridge)', IMC)}, AuvType),
}


def entry(kind) -> KindEntry:
    """The registry entry of kind (a VehicleKind or its string); ConfigError if unknown."""
    return REGISTRY[kind_of(kind)]


def make_model(member: Member) -> VehicleModel:
    """The model of a world's member, by its kind (the scenario's environment)."""
    return entry(member.kind).model.from_member(member, member.scenario.environment)


def make_controller(member: Member, model: VehicleModel) -> Any:
    """The in-process controller of member (its kind's way for its controller), or None.

    None for a controller reached over a link (MAVLink, IMC) or run as a process: the world
    node sets those on the model.
    """
    way = entry(member.kind).controllers.get(member.controller)
    if way is None:
        raise ConfigError(f'{member.name}: a {member.kind.value} has no controller '
                          f'{member.controller!r}')
    return way.make(member, model) if way.runs == IN_PROCESS and way.make else None


def require_kind(scenario: Scenario, kind: VehicleKind, who: str, override: str = '') -> None:
    """The guard of a single-kind node: ConfigError unless scenario flies only kind.

    who: the node (or graph) asking; override: its parameter that takes another scenario's
    vehicle anyway (a plane's parameters on a quad's scenario), '' if none. The message names
    the node for the kind found (or sim_world, for a mix).
    """
    found = kinds_in(scenario)
    others = [kind_of(k) for k in found if k != kind.value]
    if not others:
        return
    o = others[0]
    where = 'sim_world' if len(found) > 1 else REGISTRY[o].node if o in REGISTRY else '?'
    raise ConfigError(f'scenario {scenario.name}: its vehicle is a {o.value}'
                      + (' among others' if len(found) > 1 else '')
                      + f'; {who} is for {kind.value}s only (a {o.value}: {where})'
                      + (f', or set {override}' if override else ''))


def _shapes_ok(shapes) -> bool:
    return isinstance(shapes, list) and bool(shapes) and all(
        isinstance(s, scene.Shape) for s in shapes)


def missing(e: KindEntry) -> List[str]:
    """What entry e lacks to be a kind (empty: a complete kind); each item names the field.

    Builds every part once from its example scenario: its parameters (every file of its
    config folder), its model (the VehicleModel members), its mixer, view and judge, and
    checks that each of its controllers has a way to run.
    """
    out: List[str] = []
    if not isinstance(e.kind, VehicleKind) or e.kind not in KINDS:
        return [f'kind: {e.kind!r} is not a VehicleKind with facts in sim_core.kinds']
    k = info(e.kind)
    if not e.node:
        out.append('node: the node that simulates it alone')
    try:
        sc = load_scenario(e.example)
        if kinds_in(sc) != (e.kind.value,):
            raise ConfigError(f'flies {", ".join(kinds_in(sc))}')
        member = world_members(sc)[0]
    except (ConfigError, OSError, ValueError) as exc:
        return out + [f'example: scenario {e.example!r} of a {e.kind.value} alone ({exc})']
    if not callable(e.load_params):
        out.append('load_params: its parameter file loader')
    else:
        files = sorted({f.name: f for d in reversed(config_dirs())
                        for f in (d / e.folder).glob('*.yaml')}.values()) if e.folder else []
        if not files:
            out.append(f'load_params: no parameter file in config/{e.folder}')
        for f in files + [Path(member.scenario.vehicle_file)]:
            try:
                e.load_params(str(f))
            except (ConfigError, OSError, ValueError, KeyError, TypeError) as exc:
                out.append(f'load_params: refuses {f.name} ({exc})')
        out += _schema_missing(e, files)
    out += _model_missing(e, member)
    if k.mavlink and e.mixer is None or not callable(e.mixer):
        if k.mavlink:
            out.append(f'mixer: its controllers {", ".join(k.mavlink)} fly it over MAVLink')
    elif k.mavlink:
        try:
            m = e.mixer(MixerConfig(), str(member.scenario.vehicle_file))
            m.idle()
            m.describe()
        except (ConfigError, OSError, ValueError, AttributeError, TypeError) as exc:
            out.append(f'mixer: not built for {member.scenario.vehicle_file} ({exc})')
    if not isinstance(e.view, View) or not callable(e.view.body) or \
            not e.view.mission_marker_m > 0.0:
        out.append('view: its body shape and mission marker size')
    else:
        try:
            body = e.view.body(e.load_params(str(member.scenario.vehicle_file)), 'vehicle')
            if not _shapes_ok(body((0.0, 0.0, 0.0), scene.IDENTITY)):
                out.append('view: the body draws no shapes')
        except Exception as exc:  # noqa: BLE001 - any failure is the view's to name
            out.append(f'view: fails ({exc!r})')
    if not callable(e.judge):
        out.append('judge: its judge on ground truth')
    else:
        try:
            e.judge(member.scenario)
        except Exception as exc:  # noqa: BLE001 - any failure is the judge's to name
            out.append(f'judge: not built from scenario {sc.name} ({exc!r})')
    out += _world_judge_missing(e, member)
    out += _controllers_missing(e, k)
    return out


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


def _world_judge_missing(e: KindEntry, member: Member) -> List[str]:
    """What the world judge of e lacks (sim_report.core.world.VehicleJudge's surface)."""
    if not callable(e.world_judge):
        return ['world_judge: its judge in a world (a VehicleJudge factory of a Member)']
    try:
        j = e.world_judge(member)
    except Exception as exc:  # noqa: BLE001 - any failure is the judge's to name
        return [f'world_judge: not built from {member.name} ({exc!r})']
    out = [f'world_judge: {name} (VehicleJudge)'
           for name in ('marker', 'color', 'items', 'reached_at_s', 'done', 'over',
                        'wants_motors', 'feed', 'path', 'plan', 'summary')
           if not hasattr(j, name)]
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
    for name in ('reset', 'step', 'sample', 'push', 'on_surface', 'angular_acceleration_flu',
                 'apply_command'):
        if not callable(getattr(model, name, None)) or not hasattr(VehicleModel, name):
            out.append(f'model: {name}() (VehicleModel)')
    return out


def _controllers_missing(e: KindEntry, k: KindInfo) -> List[str]:
    """The controllers of sim_core.kinds without a way to run, and ways that do not fit."""
    out = []
    for name in k.controllers:
        way = e.controllers.get(name)
        if way is None:
            out.append(f'controllers: {name!r} has no way to run')
            continue
        if way.runs not in (IN_PROCESS, PROCESS, EXTERNAL) or not way.what:
            out.append(f'controllers: {name!r} runs {way.runs!r} ({way.what!r})')
        if way.runs == IN_PROCESS and not callable(way.make):
            out.append(f'controllers: {name!r} runs in process but has no make(member, model)')
        if (way.link == MAVLINK) != (name in k.mavlink):
            out.append(f'controllers: {name!r} over MAVLink must be in sim_core.kinds mavlink')
        if (way.link == TOPIC_LINK) != (name in TOPIC_CONTROLLERS):
            out.append(f'controllers: {name!r} over a topic must be in sim_core.kinds '
                       'TOPIC_CONTROLLERS')
    for name in set(e.controllers) - set(k.controllers):
        out.append(f'controllers: {name!r} is not a controller of sim_core.kinds')
    return out
