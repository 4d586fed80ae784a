"""The one configuration style (sim_core.config): tables of Param checked without ROS."""

from dataclasses import dataclass

import pytest

from sim_core import config
from sim_core.config import Param
from sim_core.errors import ConfigError


@dataclass(frozen=True)
class Demo:
    mode: str = 'pace'
    count: int = 3
    gain: float = 0.5
    ids: tuple = (1, 2)


TABLE = {'mode': Param('how it runs', choices=('pace', 'lockstep')),
         'count': Param('how many [1]', 0, 5),
         'gain': ('a gain [1]', 0.0, 1.0),          # the tuple form is still read
         'ids': Param('which [1]')}


def test_build_takes_defaults_and_checked_values():
    assert config.build(Demo, TABLE, {}) == Demo()
    assert config.build(Demo, TABLE, {'mode': 'lockstep', 'count': 5, 'ids': [4]}) == \
        Demo('lockstep', 5, 0.5, (4,))
    assert config.build(Demo, TABLE, {'ids': None}).ids == ()   # an empty YAML list


@pytest.mark.parametrize('values, text', [
    ({'mode': 'fast'}, "mode: one of pace, lockstep, got 'fast'"),
    ({'count': 6}, 'count: must be in [0, 5], got 6'),
    ({'gain': -0.1}, 'gain: must be in [0, 1], got -0.1'),
])
def test_build_refuses_a_value_out_of_its_choices_or_range_naming_it(values, text):
    with pytest.raises(ConfigError) as e:
        config.build(Demo, TABLE, values)
    assert str(e.value) == text


def test_a_table_row_without_a_field_is_refused():
    with pytest.raises(ConfigError, match='without a field'):
        config.build(Demo, dict(TABLE, speed=Param('m/s')), {})


def test_the_description_spells_out_the_choices_and_markdown_renders_every_row():
    assert TABLE['mode'].describe() == 'how it runs; one of pace, lockstep'
    md = config.markdown(Demo, TABLE).splitlines()
    assert md[2] == "| `mode` | `'pace'` | `pace` / `lockstep` | how it runs |"
    assert md[3] == '| `count` | `3` | 0 .. 5 | how many [1] |'
    assert len(md) == 2 + 4


def test_checked_refuses_a_config_built_directly_as_build_does():
    assert config.checked(Demo('lockstep'), TABLE) == Demo('lockstep')
    with pytest.raises(ConfigError, match="mode: one of pace, lockstep, got 'x'"):
        config.checked(Demo('x'), TABLE)
