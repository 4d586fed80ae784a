"""Config files through one schema (sim_core.schema): unknown keys, key paths, JSON Schema.

Issue 45: `missoin:` for `mission:` in a scenario flew an empty mission and reported "mission
complete: 0/0 items", exit 0. Every config file is now a pydantic model: an unknown key is
refused with the nearest valid name, every error names the file and the key path, and
`aerosim schema <name>` exports the JSON Schema editors validate with.
"""

from dataclasses import replace
import json
from pathlib import Path
import subprocess
import sys

import pytest
import yaml

from kinds.entry import entries, missing
from sim_core.errors import ConfigError
from sim_core.kinds import KINDS
from sim_core.paths import CONFIG_DIR
from sim_core.scenario import load_scenario
from sim_core.scenario_file import ScenarioFile
from sim_core.schema import json_schema

from conftest import DEADLINE_SCALE

PY = sys.executable
SCENARIOS = sorted((CONFIG_DIR / 'scenarios').glob('*.yaml')) + sorted(
    f for k in KINDS.values() for f in k.scenarios_dir.glob('*.yaml'))
REGISTRY = entries()
# every file each schema covers: (model, file)
FILES = [(ScenarioFile, f) for f in SCENARIOS] + [
    (e.schema, f) for e in REGISTRY.values() for f in sorted(e.info.params_dir.glob('*.yaml'))]


def write(tmp_path: Path, data, name='my.yaml') -> Path:
    p = tmp_path / name
    p.write_text(yaml.safe_dump(data, sort_keys=False))
    return p


def shipped(name: str) -> dict:
    return yaml.safe_load(load_scenario(name).path.read_text())


def refused(load, path: Path) -> str:
    with pytest.raises(ConfigError) as info:
        load(path)
    return str(info.value)


# --- a misspelt key: refused where it is, with the nearest name ---------------------------------
def test_a_misspelt_scenario_key_is_refused_with_the_file_and_the_nearest_name(tmp_path):
    """The issue's defect: `missoin:` loaded as a scenario without a mission."""
    d = shipped('short_hop')
    d['missoin'] = d.pop('mission')
    p = write(tmp_path, d)
    assert refused(load_scenario, p) == \
        f'scenario {p}: missoin: unknown key; did you mean mission?'


@pytest.mark.parametrize('where, key, near', [
    (lambda d: d['vehicles'][1], 'misson', 'mission'),             # a vehicles entry
    (lambda d: d['vehicles'][1]['mission'][2], 'dek', 'deck'),      # its mission item
    (lambda d: d['vehicles'][0]['mission'][0], 'acceptance_radius', 'acceptance_radius_m'),
    (lambda d: d['environment'], 'sea_stat', 'sea_state'),
    (lambda d: d['vehicle'], 'initial_yaw', 'initial_yaw_deg'),
])
def test_a_misspelt_key_deeper_in_a_scenario_names_its_key_path(tmp_path, where, key, near):
    d = shipped('deck_landing')
    where(d)[key] = where(d).pop(near, 1.0)
    text = refused(load_scenario, write(tmp_path, d))
    path = {'misson': 'vehicles[1].misson', 'dek': 'vehicles[1].mission[2].dek',
            'acceptance_radius': 'vehicles[0].mission[0].acceptance_radius',
            'sea_stat': 'environment.sea_stat', 'initial_yaw': 'vehicle.initial_yaw'}[key]
    assert text.endswith(f': {path}: unknown key; did you mean {near}?'), text


@pytest.mark.parametrize('kind, key, near', [
    ('multirotor', 'omega_mx', 'omega_max'),
    ('plane', 'cruise_kt', 'cruise_kts'),
    ('boat', 'drag_linaer', 'drag_linear'),
    ('auv', 'max_rmp', 'max_rpm'),
])
def test_a_misspelt_key_in_each_kinds_vehicle_file_is_refused_naming_the_file(
        tmp_path, kind, key, near):
    e = REGISTRY[kind]
    src = sorted(e.info.params_dir.glob('*.yaml'))[0]
    d = yaml.safe_load(src.read_text())
    d[key] = d.pop(near)
    p = write(tmp_path, d, src.name)
    for load in (e.load_params, e.schema.from_yaml):
        assert refused(load, p) == \
            f'{e.schema.what} {p}: {key}: unknown key; did you mean {near}?'


def test_a_boats_deck_and_a_rotor_are_checked_where_they_are(tmp_path):
    d = yaml.safe_load((KINDS['boat'].params_dir / 'deck_usv.yaml').read_text())
    d['deck']['frction'] = d['deck'].pop('friction')
    assert refused(REGISTRY['boat'].load_params, write(tmp_path, d)).endswith(
        'deck.frction: unknown key; did you mean friction?')
    q = yaml.safe_load((KINDS['multirotor'].params_dir / 'iris.yaml').read_text())
    q['rotors'][1]['direction'] = 'clockwise'
    assert refused(REGISTRY['multirotor'].load_params, write(tmp_path, q)).endswith(
        "rotors[1].direction: must be ccw or cw (seen from above), got 'clockwise'")


# --- the file and the key path in every error ----------------------------------------------------
def test_a_value_out_of_range_names_the_file_the_key_path_the_limit_and_its_unit(tmp_path):
    d = shipped('deck_landing')
    d['vehicles'][1]['mission'][0]['alt_m'] = 12000
    p = write(tmp_path, d)
    assert refused(load_scenario, p) == \
        f'scenario {p}: vehicles[1].mission[0].alt_m: must be <= 10000 m, got 12000'


@pytest.mark.parametrize('change, said', [
    (lambda d: d['origin'].update(lat_deg=True), 'origin.lat_deg: must be a number, got True'),
    (lambda d: d['origin'].update(lat_deg='47.4'),
     "origin.lat_deg: must be a number, got '47.4'"),
    (lambda d: d['origin'].update(alt_m=float('nan')), 'origin.alt_m: must be finite, got nan'),
    (lambda d: d['environment'].update(sea_state=2.0),
     'environment.sea_state: must be an integer, got 2.0'),
    (lambda d: d['vehicle'].update(initial_position_enu=[0, 0]),
     'vehicle.initial_position_enu: must have 3 items, got 2'),
    (lambda d: d['objects'][1].update(size=2.0),
     'objects[1].size: must be [dx, dy, dz], got 1 numbers'),
    (lambda d: d['mission'][4].update({True: 'boat0'}),
     'mission[4]: a key `on` (YAML reads it as true): the deck to land on is `deck: boat0`'),
    (lambda d: d.update({False: 1}), 'unknown key false: YAML 1.1 reads an unquoted on, off, '
     'yes or no key as a boolean; quote it, or use a key of this level'),
    (lambda d: d['mission'][1].update(depth_m=2.0),
     'mission[1]: alt_m or depth_m, not both (depth_m: 2 is alt_m -2)'),
])
def test_strict_values_and_the_rules_between_keys(change, said):
    d = shipped('default')
    change(d)
    with pytest.raises(ConfigError) as info:
        from sim_core.scenario import scenario_from_dict
        scenario_from_dict(d)
    assert str(info.value) == f'scenario: {said}'


def test_several_errors_give_the_first_unknown_key_and_how_many_more(tmp_path):
    """A misspelt key is said first, once (not again as its real key missing)."""
    d = shipped('default')
    d['orgin'] = d.pop('origin')
    d['mission'][1]['alt_m'] = -5000
    p = write(tmp_path, d)
    assert refused(load_scenario, p) == \
        f'scenario {p}: orgin: unknown key; did you mean origin? (and 1 more)'


# --- every shipped file, and the JSON Schema --------------------------------------------------
@pytest.mark.parametrize('model, path', FILES, ids=[f'{p.parent.name}/{p.name}'
                                                    for _, p in FILES])
def test_every_shipped_config_file_loads_and_its_json_schema_takes_it(model, path):
    """Validated by the model the schema is exported from (jsonschema is not installed here)."""
    data = yaml.safe_load(path.read_text())
    model.from_yaml(path)
    if model is ScenarioFile:
        load_scenario(path)
    schema = json.loads(json.dumps(json_schema(model)))       # plain JSON
    assert schema['$schema'] == 'https://json-schema.org/draft/2020-12/schema'
    assert schema['additionalProperties'] is False and set(data) <= set(schema['properties'])


def _properties(schema: dict):
    """Every object schema's properties, in the document and its $defs."""
    for s in [schema, *schema.get('$defs', {}).values()]:
        yield s, s.get('properties', {})


@pytest.mark.parametrize('name', ['scenario', *REGISTRY])
def test_the_json_schema_refuses_unknown_keys_and_describes_every_key_with_its_unit(name):
    model = ScenarioFile if name == 'scenario' else REGISTRY[name].schema
    schema = json_schema(model)
    for obj, props in _properties(schema):
        assert obj['additionalProperties'] is False, obj['title']
        for key, p in props.items():
            assert p.get('description'), f'{obj["title"]}.{key}: no description'
            if 'unit' in p:
                assert p['description'].endswith(f'[{p["unit"]}]'), (key, p['description'])


def test_aerosim_schema_prints_valid_json_and_lists_the_names():
    r = subprocess.run([PY, '-m', 'sim_launch.cli', 'schema', 'scenario'], capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout) == json_schema(ScenarioFile)
    r = subprocess.run([PY, '-m', 'sim_launch.cli', 'schema'], capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0 and [line.split(':')[0] for line in r.stdout.splitlines()] == \
        ['scenario', *REGISTRY], r.stdout
    r = subprocess.run([PY, '-m', 'sim_launch.cli', 'schema', 'submarine'],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and 'one of scenario, multirotor' in r.stderr


def test_a_kind_without_a_schema_or_one_refusing_its_files_is_incomplete():
    e = REGISTRY['boat']
    assert [m for m in missing(replace(e, schema=None)) if m.startswith('schema')] == \
        ["schema: its vehicle file's model (a pydantic model, sim_core.schema)"]
    wrong = [m for m in missing(replace(e, schema=REGISTRY['auv'].schema))
             if m.startswith('schema')]
    assert len(wrong) == 3 and all(m.startswith('schema: refuses ') for m in wrong), wrong


# --- the graph refuses the file at start ----------------------------------------------------
def test_sim_quad_hil_refuses_a_scenario_with_a_misspelt_key_at_start(procs, tmp_path):
    """Before: the hop flew no mission and the report said "mission complete: 0/0 items", 0."""
    d = shipped('short_hop')
    d['missoin'] = d.pop('mission')
    p = write(tmp_path, d)
    run = procs.start([PY, '-m', 'sim_launch.cli', 'launch', 'sim_quad_hil', 'report:=true',
                       f'scenario:={p}'])
    rc = run.wait(120 * DEADLINE_SCALE)
    run.reader.join(10)
    out = ''.join(run.lines)
    assert rc == 2, out[-3000:]
    assert out == f'aerosim: scenario {p}: missoin: unknown key; did you mean mission?\n', out
    assert 'complete' not in out
