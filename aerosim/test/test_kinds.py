"""The vehicle kinds: a kind is one folder and one registry line, and it brings every part.

Each kind folder kinds/<name>/ holds its facts (kind.yaml, sim_core.kinds) and its KindEntry
(kinds.entry): parameter loader and files, model (the VehicleModel contract), view, judge, and
a way to run each of its controllers; kinds/__init__.py lists the kinds, a line each.
``missing`` builds each part from the kind's example scenario and names what is absent or
broken. Outside the kind folders, only what docs/extending.md lists (with its reason) still
names a kind. This is the check docs/extending.md points a contributor at.
"""

import ast
from dataclasses import replace
from pathlib import Path

import pytest
from sim_world.member_io import io_factory

import kinds
from kinds import entry as entry_mod
from kinds.entry import (
    IN_PROCESS,
    ControllerWay,
    View,
    entries,
    entry,
    missing,
    registry_problems,
)
from sim_core import kinds as facts
from sim_core.errors import ConfigError
from sim_core.kinds import KINDS, load_kind, load_kinds
from sim_core.scenario import load_scenario

from conftest import PKG_DIR, REPO_DIR


def test_the_registry_and_the_kind_folders_agree():
    assert registry_problems() == []
    assert list(KINDS) == sorted(kinds.REGISTERED)
    assert {p.parent.name for p in (PKG_DIR / 'kinds').glob('*/kind.yaml')} == set(KINDS)


def test_a_folder_without_its_line_or_a_line_without_its_folder_is_named():
    got = registry_problems(('multirotor', 'plane', 'boat', 'submarine', 'boat'),
                            {k: KINDS[k] for k in ('multirotor', 'plane', 'boat', 'auv')})
    assert got == [
        'kinds/auv/: a kind folder without its line in the registry (kinds/__init__.py '
        'REGISTERED)',
        "kinds/__init__.py: the registry line 'submarine' has no folder kinds/submarine/ with "
        'a kind.yaml',
        "kinds/__init__.py: 'boat' is registered twice"]


@pytest.mark.parametrize('kind', sorted(kinds.REGISTERED))
def test_every_registered_kind_provides_every_part(kind):
    e = entry(kind)
    assert e.kind == kind and e.info.folder == PKG_DIR / 'kinds' / kind
    assert missing(e) == []


class NoStep:
    """A model class without step(): not a VehicleModel."""

    def __init__(self, model):
        self._m = model

    @classmethod
    def from_member(cls, member, environment=None):
        return cls(entry('multirotor').model.from_member(member))

    mass_kg = property(lambda self: self._m.mass_kg)
    radius_m = property(lambda self: self._m.radius_m)
    deck = None

    def reset(self):
        self._m.reset()

    def sample(self, t_ns):
        return self._m.sample(t_ns)

    def push(self, dp, dv):
        self._m.push(dp, dv)

    def on_surface(self):
        return self._m.on_surface()


class NoDeckEvent:
    """A multirotor's judge without deck_event: its kind lands on decks."""

    def __init__(self, member):
        self._j = entry('multirotor').judge(member)
        for name in entry_mod.JUDGE_SURFACE:
            setattr(self, name, getattr(self._j, name))


@pytest.mark.parametrize('change, named', [
    ({'kind': 'submarine'}, 'kind: '),
    ({'judge': None}, 'judge: its judge'),
    ({'judge': lambda member: 1 / 0}, 'judge: not built'),
    ({'judge': lambda member: object()}, 'judge: marker (VehicleJudge)'),
    ({'judge': NoDeckEvent}, 'judge: deck_event (DeckJudge'),
    ({'view': None}, 'view:'),
    ({'view': View(lambda params, ns: (lambda p, q: []), 0.6)}, 'view: the body draws no'),
    ({'model': object}, 'model: a VehicleModel class'),
    ({'model': NoStep}, 'model: step()'),
    ({'load_params': None, 'schema': None}, 'load_params:'),
    ({'schema': None}, "schema: its vehicle file's model"),
    ({'load_params': lambda path: 1 / 0}, 'load_params: refuses'),
    ({'example': 'circuit'}, "example: scenario 'circuit'"),
    ({'example': 'no_such_scenario'}, "example: scenario 'no_such_scenario'"),
    ({'controllers': {}}, "controllers: 'builtin' has no way to run"),
])
def test_a_kind_that_misses_a_part_is_named_by_its_field(change, named):
    broken = replace(entry('multirotor'), **change)
    got = missing(broken)
    assert any(x.startswith(named) for x in got), got


@pytest.mark.parametrize('change, named', [
    ({'mixer': 'octo'}, "mixer: its kind.yaml names 'octo'"),
    ({'airframe': ''}, "airframe: its controller 'builtin' is the built-in FC"),
    ({'airframe': 'helicopter'}, "airframe: 'helicopter' is not one of"),
    ({'px4_params': 'no_such_airframe'}, 'px4_params: no config/px4/no_such_airframe.params'),
])
def test_what_its_kind_yaml_names_for_the_links_must_exist(monkeypatch, change, named):
    monkeypatch.setitem(KINDS, 'multirotor', replace(KINDS['multirotor'], **change))
    got = missing(entry('multirotor'))
    assert any(x.startswith(named) for x in got), got


def test_a_folder_without_its_registry_line_is_refused_by_name(monkeypatch):
    e = entry('auv')
    monkeypatch.setattr(entry_mod, 'REGISTERED', ('multirotor', 'plane', 'boat'))
    with pytest.raises(ConfigError, match=r'kind auv: kinds/auv/ has no line in the registry'):
        entry('auv')
    assert missing(e)[0].startswith('kind: auv has no line in the registry')


def test_controllers_must_fit_the_kinds_facts():
    e = entry('boat')
    bad = dict(e.controllers, waypoint=ControllerWay(IN_PROCESS, 'BoatWaypoints'),
               autopilot=ControllerWay(IN_PROCESS, 'x', make=lambda m, model: None))
    got = missing(replace(e, controllers=bad))
    assert "controllers: 'waypoint' runs in process but has no make(member, model)" in got
    assert "controllers: 'autopilot' is not a controller of its kind.yaml" in got


def test_lookups_by_name():
    assert entry('plane') is entries()['plane']
    with pytest.raises(ConfigError, match='kind: must be one of auv, boat, multirotor'):
        entry('submarine')
    # a kind's interfaces of its own in the world's process: its ros module's Io, or none
    assert callable(io_factory('plane')) and callable(io_factory('boat'))
    assert io_factory('multirotor') is None and io_factory('auv') is None


KIND_YAML = """prefix: sub
controllers: [pilot, imc]
medium: water
speeds: {horizontal: 1.0, climb: 0.0, descent: 0.0}
"""


@pytest.mark.parametrize('edit, named', [
    (lambda t: t + 'colour: red\n', 'colour: unknown key'),
    (lambda t: t.replace('prefix: sub\n', ''), 'prefix: required'),
    (lambda t: t.replace('medium: water', 'medium: space'), 'medium: one of air, water, ground'),
    (lambda t: t + 'mavlink: [px4]\n', "mavlink: 'px4' is not one of its controllers"),
    (lambda t: t + 'mavlink: [imc]\n', 'mixer: required for a kind flown over MAVLink'),
    (lambda t: t.replace('horizontal: 1.0', 'horizontal: fast'), 'speeds.horizontal'),
    (lambda t: t.replace('[pilot, imc]', '[pilot, pilot]'), 'controllers: a list of distinct'),
    (lambda t: t.replace('pitot', 'x') + 'pitot: yes please\n', 'pitot: must be a bool'),
])
def test_a_kind_yaml_that_is_wrong_is_refused_naming_the_file_and_key(tmp_path, edit, named):
    (tmp_path / 'sub').mkdir()
    (tmp_path / 'sub' / 'kind.yaml').write_text(edit(KIND_YAML))
    with pytest.raises(ConfigError, match=named) as err:
        load_kinds(tmp_path)
    assert str(tmp_path / 'sub' / 'kind.yaml') in str(err.value)


def test_kind_folders_are_read_as_data_and_two_prefixes_never_repeat(tmp_path):
    for name in ('sub', 'sub2'):
        (tmp_path / name).mkdir()
        (tmp_path / name / 'kind.yaml').write_text(KIND_YAML)
    (tmp_path / 'notes').mkdir()                   # a folder without a kind.yaml: not a kind
    assert load_kind(tmp_path / 'sub').params_dir == tmp_path / 'sub' / 'params'
    with pytest.raises(ConfigError, match="prefix: 'sub' is the prefix of sub too"):
        load_kinds(tmp_path)


def test_files_resolve_in_the_kinds_folders():
    # a vehicle file: relative to the scenario, then its kind's params folder
    assert facts.vehicle_file('boat', 'wamv') == PKG_DIR / 'kinds' / 'boat' / 'params' / \
        'wamv.yaml'
    with pytest.raises(ConfigError, match=r'boat parameters: file .iris. not found .*'
                       r'kinds/boat/params'):
        facts.vehicle_file('boat', 'iris')
    # a scenario: config/scenarios first (the presets' defaults, the shipped mixes), then the
    # kinds' own
    assert load_scenario('default').path.parent == PKG_DIR / 'config' / 'scenarios'
    assert load_scenario('dive_dune').path.parent == PKG_DIR / 'kinds' / 'auv' / 'scenarios'


def test_two_kinds_shipping_one_scenario_name_is_refused(monkeypatch, tmp_path):
    for k in ('boat', 'auv'):
        (tmp_path / k / 'scenarios').mkdir(parents=True)
        (tmp_path / k / 'scenarios' / 'twin.yaml').write_text('name: twin\n')
        monkeypatch.setitem(KINDS, k, replace(KINDS[k], folder=tmp_path / k))
    with pytest.raises(ConfigError, match="'twin' is in more than one kind's folder"):
        facts.scenario_path('twin')


# What still names a kind outside the kind folders, each with its reason (docs/extending.md
# lists them): path under aerosim/ -> the kind names it may say.
NAMED_BY_DESIGN = {
    'sim_core/scenario_file.py': {'multirotor'},     # a scenario that names no kind
    'mavlink_bridge/fc/fc_core.py': {'multirotor'},  # the built-in FC's default vehicle
    'sim_dynamics/core/swarm_types.py': {'boat'},    # a USV swarm's boat types
}
# The same words that name no kind: path -> the words (why, each)
WORDS = {
    'sim_dynamics/core/swarm_config.py': {'boat'},   # the USV UI's init command: a boat entry
    'sim_dynamics/core/swarm_contacts.py': {'boat'},  # a swarm's collision counters
    'usv_bridge/core/pipeline.py': {'boat'},         # the USV UI protocol's key 'boat'
    'sim_launch/graphs/presets.py': {'plane'},       # sim_plane's vehicle name (namespace)
    'sim_report/core/plane.py': {'plane'},           # PlaneJudge's summary: what it judged
    'sim_dynamics/core/multirotor.py': {'multirotor'},  # a multirotor file's default name
}


def _kind_literals(path: Path):
    """The string constants of a module that are a kind's name (its docstrings aside)."""
    tree = ast.parse(path.read_text())
    docs = {id(n.body[0].value) for n in ast.walk(tree)
            if isinstance(n, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
            and n.body and isinstance(n.body[0], ast.Expr)}
    return {n.value for n in ast.walk(tree) if isinstance(n, ast.Constant)
            and isinstance(n.value, str) and n.value in KINDS and id(n) not in docs}


def test_nothing_outside_the_kind_folders_names_a_kind_but_what_the_docs_list():
    found = {}
    for path in sorted(PKG_DIR.rglob('*.py')):
        rel = path.relative_to(PKG_DIR)
        if rel.parts[0] in ('kinds', 'test', 'build', 'install', 'log') or \
                rel.parts[0].startswith('.'):
            continue
        names = _kind_literals(path)
        if names:
            found[str(rel)] = names
    assert found == {**NAMED_BY_DESIGN, **WORDS}
    doc = (REPO_DIR / 'docs' / 'extending.md').read_text()
    assert all(f'`{p}`' in doc for p in NAMED_BY_DESIGN), 'docs/extending.md lists each'
