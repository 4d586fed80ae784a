"""Each core's parameter table matches its frozen config dataclass (pure, no DDS).

The nodes declare their parameters from these tables (sim_ros.params.read_config): a field
without a description, a description without a field, or a default outside its range would
be a parameter that `ros2 param describe` reports wrongly or a node that cannot start.
"""

import dataclasses
import math

import pytest

from imc_bridge.core import bridge as imc
from mavlink_bridge.core import bridge as mav
from sim_sensors.core import suite
from usv_bridge.core import pipeline

TABLES = [(mav.BridgeConfig, mav.PARAMETERS), (imc.ImcConfig, imc.PARAMETERS),
          (pipeline.UiConfig, pipeline.PARAMETERS), (suite.SuiteConfig, suite.PARAMETERS)]


@pytest.mark.parametrize('cls,table', TABLES, ids=lambda x: getattr(x, '__name__', ''))
def test_table_and_dataclass_name_the_same_parameters(cls, table):
    assert dataclasses.is_dataclass(cls) and cls.__dataclass_params__.frozen
    names = [f.name for f in dataclasses.fields(cls)]
    assert sorted(names) == sorted(table)
    for name, entry in table.items():
        assert isinstance(entry[0], str) and len(entry[0]) > 10, name
        assert len(entry) in (1, 3), name


@pytest.mark.parametrize('cls,table', TABLES, ids=lambda x: getattr(x, '__name__', ''))
def test_defaults_lie_in_their_ranges(cls, table):
    for f in dataclasses.fields(cls):
        entry = table[f.name]
        if len(entry) == 3:
            lo, hi = entry[1], entry[2]
            assert isinstance(f.default, (int, float)) and not isinstance(f.default, bool)
            assert lo <= f.default <= hi and math.isfinite(f.default), (f.name, f.default)
            # an integer parameter gets an IntegerRange: its bounds must be integers too
            if isinstance(f.default, int):
                assert isinstance(lo, int) and isinstance(hi, int), f.name
