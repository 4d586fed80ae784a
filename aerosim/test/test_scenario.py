"""Scenario files: the default loads; garbage is rejected with errors naming the field."""

import os

import pytest
import yaml

from sim_core.errors import ConfigError
from sim_core.geodesy import GeoOrigin
from sim_core.scenario import load_scenario, scenario_from_dict


def good():
    return yaml.safe_load(load_scenario('default').path.read_text())


def test_default_scenario_loads():
    s = load_scenario('default')
    assert s.origin == GeoOrigin(47.397742, 8.545594, 488.0)
    assert s.vehicle_file.name == 'iris.yaml'
    assert [m.command for m in s.mission] == ['takeoff', 'waypoint', 'waypoint', 'waypoint',
                                              'land']


@pytest.mark.parametrize('mutate,match', [
    (lambda d: d.pop('origin'), 'origin'),
    (lambda d: d['origin'].update(lat_deg=91.0), 'lat_deg'),
    (lambda d: d['origin'].update(lon_deg='east'), 'lon_deg'),
    (lambda d: d['origin'].update(alt_m=float('nan')), 'alt_m'),
    (lambda d: d['vehicle'].update(params='no_such_vehicle'), 'kinds/multirotor/params'),
    (lambda d: d['vehicle'].update(params=3), 'vehicle.params'),
    (lambda d: d['vehicle'].update(initial_position_enu=[0, 0]), 'initial_position_enu'),
    (lambda d: d['vehicle'].update(initial_position_enu=[0, 0, -5]), r'initial_position_enu\[2\]'),
    (lambda d: d['environment'].update(wind_enu=[1, 'x', 0]), r'wind_enu\[1\]'),
    (lambda d: d['mission'].append({'command': 'fly'}), r'mission\[5\]\.command'),
    (lambda d: d['mission'].append({'command': 'waypoint', 'lat_deg': 47.0}),
     r'mission\[5\]\.lon_deg'),
    (lambda d: d.update(mission='all of it'), 'mission'),
    (lambda d: d.update(decimal_year=1900), 'decimal_year'),
    (lambda d: d['vehicle'].update(kind='submarine'), 'vehicle.kind'),
    (lambda d: d['vehicle'].update(kind='boat'), 'kinds/boat/params'),   # iris is no boat's
    (lambda d: d['environment'].update(sea_state=10), 'sea_state'),
    (lambda d: d['environment'].update(sea_state=2.5), 'sea_state'),
    (lambda d: d['environment'].update(current_enu=[0, 20, 0]), r'current_enu\[1\]'),
])
def test_bad_fields_are_rejected_with_the_field_name(mutate, match):
    d = good()
    mutate(d)
    with pytest.raises(ConfigError, match=match):
        scenario_from_dict(d)


def test_the_harbour_scenario_is_a_boat_in_a_current():
    s = load_scenario('harbour')
    assert s.vehicle_kind == 'boat' and s.vehicle_file.name == 'wamv.yaml'
    assert s.environment.current_enu == (0.0, -0.1, 0.0) and s.environment.sea_state == 2


def test_garbage_files_give_config_errors_not_crashes(tmp_path):
    rng = __import__('random').Random(5)
    cases = [b'', b'\x00\xff\xfe garbage', b'[1, 2, 3]', b'origin: [', b'- - -',
             'origin: {lat_deg: 1e999}'.encode(), bytes(rng.randrange(256) for _ in range(300))]
    for i, data in enumerate(cases):
        p = tmp_path / f'bad{i}.yaml'
        p.write_bytes(data)
        with pytest.raises(ConfigError):
            load_scenario(str(p))


def test_missing_file_is_a_config_error(tmp_path):
    with pytest.raises(ConfigError, match='not found'):
        load_scenario(os.path.join(tmp_path, 'nope.yaml'))


# --- a world of several kinds (sim_core.members) ------------------------------------------------
def test_a_world_lists_vehicles_of_several_kinds_each_named_by_its_kind_and_controller():
    from sim_core.members import world_members
    s = load_scenario('harbour_ops')
    ms = world_members(s)
    assert [(m.name, m.kind, m.controller, m.link) for m in ms] == [
        ('quad0', 'multirotor', 'builtin', 0),
        ('quad1', 'multirotor', 'builtin', 1),
        ('plane0', 'plane', 'autopilot', -1),     # in-process: no MAVLink instance
        ('boat0', 'boat', 'waypoint', -1)]
    plane, boat = ms[2].scenario, ms[3].scenario
    assert plane.vehicle_kind == 'plane' and plane.vehicle_file.name == 'c172r.yaml'
    assert plane.initial_position_enu == (0.0, -1000.0, 300.0) and len(plane.mission) == 4
    assert boat.vehicle_kind == 'boat'
    assert boat.vehicle_file.parent.parts[-2:] == ('boat', 'params')
    assert all(m.scenario.fleet == () for m in ms)
    # copies of a one-vehicle scenario: the kind's default controller, one link each
    assert [(m.name, m.controller, m.link) for m in world_members(load_scenario('default'), 2)] \
        == [('quad0', 'builtin', 0), ('quad1', 'builtin', 1)]


@pytest.mark.parametrize('entry,match', [
    ({'kind': 'submarine', 'initial_position_enu': [0, 0, 0]}, r'vehicles\[0\]\.kind'),
    ({'kind': 'boat', 'initial_position_enu': [0, 0, 0]}, r'vehicles\[0\]\.params: required'),
    ({'kind': 'boat', 'params': 'wamv', 'controller': 'px4', 'initial_position_enu': [0, 0, 0]},
     r'vehicles\[0\]\.controller: a boat is flown by one of waypoint, imc'),
    ({'controller': 'autopilot', 'initial_position_enu': [0, 0, 0]},
     r'vehicles\[0\]\.controller'),
    ({'kind': 'plane', 'params': 'c172r', 'initial_position_enu': [0, 0, 300],
      'initial_speed_mps': 400}, r'vehicles\[0\]\.initial_speed_mps'),
])
def test_a_bad_world_entry_is_refused_naming_the_field(entry, match):
    d = good()
    d['vehicles'] = [entry]
    with pytest.raises(ConfigError, match=match):
        scenario_from_dict(d, base_dir=load_scenario('default').path.parent)


def test_a_graph_of_one_kind_refuses_a_scenario_that_mixes_kinds():
    from sim_core.scenario import check_one_kind
    s = load_scenario('harbour_ops')
    check_one_kind(load_scenario('fleet'), 'multirotor', 'sim_quad_hil')
    with pytest.raises(ConfigError, match='sim_quad_hil flies multirotors only, the scenario '
                       'also has a plane'):
        check_one_kind(s, 'multirotor', 'sim_quad_hil')
