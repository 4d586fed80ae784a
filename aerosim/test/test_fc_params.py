"""FC parameter files, their upload, and PX4's mission feasibility, pure.

Parameter files checked line by line, the shipped C172 parameters against PX4 v1.16's, the
upload naming what PX4 does not take, and the stand-in's mission feasibility check of our
circuit's landing. The peer side is the PX4 stand-in's (px4_params, px4_sitl).
"""

import struct

from fc_helpers import PX4, parsed
import pytest

from mavlink_bridge.core.fc_params import (
    INT32,
    REAL32,
    Param,
    ParamUpload,
    load_params,
    parse_params,
)
from mavlink_bridge.core.mav import new_mav, pack
from mavlink_bridge.core.mission import items_from_scenario
from sim_core.errors import ConfigError
from sim_core.scenario import load_scenario

from px4_params import PARAMS, Params, feasibility
from px4_sitl import Item


# --- parameter files ----------------------------------------------------------------------------
def test_parameter_files_are_checked_line_by_line():
    ok = parse_params('# c\n1\t1\tNAV_DLL_ACT\t0\t6\n1 1 FW_THR_MAX 1.0 9  # full power\n', 'f')
    assert ok == (Param('NAV_DLL_ACT', 0, INT32), Param('FW_THR_MAX', 1.0, REAL32))
    for text, why in (('1 1 NAV_DLL_ACT 0', 'f:1: expected'),
                      ('1 1 NAV-DLL 0 6', 'not a parameter name'),
                      ('1 1 NAV_DLL_ACT 0.5 6', 'not a number of type 6'),
                      ('1 1 FW_THR_MAX nan 9', 'out of range'),
                      ('1 1 FW_THR_MAX 1 8', 'type must be'),
                      ('1 1 A 1 6\n1 1 A 2 6', 'f:2: A given twice'),
                      ('1 1 ABCDEFGHIJKLMNOPQ 1 6', 'not a parameter name')):
        with pytest.raises(ConfigError, match=why):
            parse_params(text, 'f')
    path, params = load_params('c172r')
    assert path.endswith('config/px4/c172r.params') and params


def test_the_shipped_c172_parameters_are_px4_v116s_with_their_types():
    """Every parameter of config/px4/c172r.params exists in PX4 v1.16 with that type.

    The stand-in's table, from PX4's parameters.json.
    """
    _, params = load_params('c172r')
    for p in params:
        assert p.name in PARAMS, f'{p.name} is not a PX4 v1.16 parameter the stand-in knows'
        assert PARAMS[p.name][0] == p.ptype, p.name
    names = {p.name for p in params}
    # the two that kept airframe 1030 from flying the C172 (issue: never ready, never lifts)
    assert {'NAV_DLL_ACT', 'FW_THR_MAX'} <= names


def test_the_upload_sets_every_parameter_and_names_those_px4_does_not_take():
    px4_params = Params('plane')
    mav, px4 = new_mav(51, 1), new_mav(1, 1)
    plist = [Param('NAV_DLL_ACT', 0, INT32), Param('FW_THR_MAX', 1.0, REAL32),
             Param('NOT_A_PARAM', 3, INT32), Param('FW_LND_ANG', 5, INT32)]   # wrong type
    up = ParamUpload(plist, PX4, 'test.params', timeout_s=1.0, retries=2)
    out, now = up.start(mav, 0.0), 0.0
    while up.state == 'sending' and now < 10.0:
        replies = []
        for msg in out:
            (m,) = parsed(pack(mav, msg), new_mav(1, 1))
            v = px4_params.set(m.param_id, m.param_value, m.param_type)
            if v is not None:
                from px4_params import to_wire
                (r,) = parsed(pack(px4, px4.param_value_encode(
                    m.param_id.encode(), to_wire(v, m.param_type), m.param_type, 9, 0)))
                replies.append(r)
        out = []
        for r in replies:
            out += up.on_value(mav, r, now)
        now += 0.5
        out += up.poll(mav, now)
    assert up.state == 'failed' and up.failed_names() == ['NOT_A_PARAM', 'FW_LND_ANG']
    assert px4_params['NAV_DLL_ACT'] == 0 and px4_params['FW_THR_MAX'] == 1.0
    assert 'NOT_A_PARAM, FW_LND_ANG' in up.result
    # INT32 travels bytewise: 2 is not 2.0 in the float field
    wire = Param('NAV_DLL_ACT', 2, INT32).wire()
    assert struct.pack('<f', wire) == struct.pack('<i', 2)


# --- PX4's mission feasibility (the stand-in) and our circuit -----------------------------------
def items_of(scenario):
    return [Item(i.seq, i.command, i.frame, i.param1, i.param2, i.param3, i.param4, i.x, i.y,
                 i.z) for i in items_from_scenario(load_scenario(scenario).mission)]


def test_px4_accepts_the_circuits_landing_and_refuses_a_steep_or_missing_one():
    plane = Params('plane')
    assert plane['MIS_TKO_LAND_REQ'] == 2 and plane['FW_LND_ANG'] == 8.0
    assert feasibility(items_of('circuit'), plane, True) == (True, [])
    # the circuit before this round: no landing
    no_land = items_of('circuit')[:-1]
    assert feasibility(no_land, plane, True) == (False, [('navigator_mis_land_missing', ())])
    # the approach fix at 500 m: 8.6 deg on 3.3 km, steeper than 8 deg
    steep = items_of('circuit')
    steep[-2] = steep[-2].__class__(**{**steep[-2].__dict__, 'z': 500.0})
    ok, said = feasibility(steep, plane, True)
    assert not ok and said[0] == ('navigator_mis_glide_slope_too_steep', (8, 0))
    assert said[1][0] == 'navigator_mis_correct_glide_slope'
    # a quad's default mission (no landing required by 10016)
    assert feasibility(items_of('default'), Params('quad'), False)[0]
