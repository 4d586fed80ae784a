"""Every node's parameter tables match their frozen config dataclasses (pure, no DDS).

The nodes declare their parameters from these tables (sim_ros.params.read_config): a field
without a description, a description without a field, a default outside its range or its
choices would be a parameter that `ros2 param describe` reports wrongly or a node that cannot
start. The tables are the ones sim_launch.param_docs lists per node (docs/parameters.md's
tables), and every table a package defines must be in that list.
"""

import dataclasses
import importlib
import math
from pathlib import Path
import re

import pytest

from sim_core import config
from sim_launch import param_docs

from conftest import PKG_DIR

TABLES = list({id(t): (c, t) for n in param_docs.NODES for c, t in param_docs.tables(n)}
              .values())


def _ids(x):
    return getattr(x, '__name__', '')


@pytest.mark.parametrize('cls,table', TABLES, ids=_ids)
def test_table_and_dataclass_name_the_same_parameters(cls, table):
    assert dataclasses.is_dataclass(cls) and cls.__dataclass_params__.frozen
    names = [f.name for f in dataclasses.fields(cls)]
    assert sorted(names) == sorted(table)
    for name, entry in table.items():
        p = config.param(entry)
        assert isinstance(p.desc, str) and len(p.desc) > 7, name
        assert (p.lo is None) == (p.hi is None), name


@pytest.mark.parametrize('cls,table', TABLES, ids=_ids)
def test_defaults_lie_in_their_ranges_and_choices(cls, table):
    assert config.build(cls, table, {}) == cls()          # every default passes its own check
    for f in dataclasses.fields(cls):
        p = config.param(table[f.name])
        if p.choices:
            assert f.default in p.choices, f.name
        if p.lo is not None:
            assert isinstance(f.default, (int, float)) and not isinstance(f.default, bool)
            assert p.lo <= f.default <= p.hi and math.isfinite(f.default), (f.name, f.default)
            # an integer parameter gets an IntegerRange: its bounds must be integers too
            if isinstance(f.default, int):
                assert isinstance(p.lo, int) and isinstance(p.hi, int), f.name


def test_every_table_a_package_defines_is_a_node_s_and_in_the_readme():
    """A module-level *PARAMETERS dict of Param rows that no node lists would be undocumented."""
    listed = {id(p) for _, t in TABLES for p in t.values()}   # a time source's rows are
    found = []
    for path in sorted(PKG_DIR.glob('*/**/*.py')):
        rel = path.relative_to(PKG_DIR)
        if rel.parts[0] in ('test', 'build', 'install', 'launch') or '_node' in path.name:
            continue
        text = path.read_text()
        if not re.search(r'^[A-Z_]*PARAMETERS\b.*=', text, re.M):
            continue
        module = importlib.import_module('.'.join(rel.with_suffix('').parts))
        for name, value in vars(module).items():
            if name.endswith('PARAMETERS') and isinstance(value, dict) and value and all(
                    isinstance(v, config.Param) for v in value.values()):
                found.append((f'{module.__name__}.{name}',     # a subset of stepper's
                              all(id(p) in listed for p in value.values())))
    assert len(found) >= 20
    assert [n for n, ok in found if not ok] == []


def test_parameters_are_declared_only_through_read_config():
    """One configuration style: no declare_parameter outside sim_ros.params (its helper)."""
    offenders = []
    for path in sorted(PKG_DIR.rglob('*.py')):
        rel = path.relative_to(PKG_DIR)
        if rel.parts[0] in ('test', 'build', 'install') or rel == Path('sim_ros/params.py'):
            continue
        for i, line in enumerate(path.read_text().splitlines(), 1):
            if re.search(r'\bdeclare_parameters?\(|\b_declare\(|import .*\b_declare\b', line):
                offenders.append(f'{rel}:{i}: {line.strip()}')
    assert offenders == []


def test_the_documented_tables_are_the_tables():
    """docs/parameters.md's tables are rendered from the tables (sim_launch.param_docs)."""
    text = (PKG_DIR.parent / 'docs' / 'parameters.md').read_text()
    new, changed = param_docs.sync(text)
    assert changed == [], f'run: python -m sim_launch.param_docs docs/parameters.md ({changed})'
    for node in param_docs.NODES:
        assert param_docs.BEGIN.format(node=node) in text, node
