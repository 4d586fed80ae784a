"""The configuration tables of the nodes that are neither bridges nor time sources (no ROS).

Each node reads its parameters with sim_ros.params.read_config from a frozen dataclass and a
table of Param in a pure module; here every table is built from its defaults, every choice
and range refusal names the parameter as the node's start-up does, and the pure decisions
moved out of the world's nodes give what the nodes gave.
"""

import dataclasses
import math

import pytest
from sim_world.core import params as world_params
from sim_world.core.decks import DeckEvent
from sim_world.core.links import LINK_PARAMETERS, LinkBase
from sim_world.core.node_io import collision_text, deck_text, imc_holds
from sim_world.core.world import Event

from sim_autopilot.core import params as ap_params
from sim_autopilot.core.status import PAUSE, RUN, STOP, status_fields, status_key
from sim_bag.core import params as bag_params
from sim_core import config
from sim_core.errors import ConfigError
from sim_core.members import MemberSource, WorldSource
from sim_core.port_config import PORT_PARAMETERS, PortConfig
from sim_core.units import KNOT_MPS
from sim_report.core import params as report_params
from sim_sensors.core import params as sensor_params
from sim_sensors.core.camera import CameraParams
from sim_viz.core import params as viz_params

TABLES = [
    (sensor_params.FramesConfig, sensor_params.FRAME_PARAMETERS),
    (MemberSource, sensor_params.SENSORS_PARAMETERS),
    (sensor_params.CameraConfig, sensor_params.CAMERA_PARAMETERS),
    (viz_params.ModeConfig, viz_params.MODE_PARAMETERS),
    (viz_params.VizConfig, viz_params.VIZ_PARAMETERS),
    (WorldSource, viz_params.VIZ_WORLD_PARAMETERS),
    (viz_params.SwarmFilesConfig, viz_params.VIZ_SWARM_PARAMETERS),
    (viz_params.FoxgloveConfig, viz_params.FOXGLOVE_PARAMETERS),
    (report_params.SwarmSummaryConfig, report_params.SWARM_SUMMARY_PARAMETERS),
    (report_params.MonitorConfig, report_params.MONITOR_PARAMETERS),
    (report_params.JudgeConfig, report_params.JUDGE_PARAMETERS),
    (ap_params.AutopilotConfig, ap_params.PARAMETERS),
    (world_params.WorldConfig, world_params.PARAMETERS),
    (LinkBase, LINK_PARAMETERS),
    (bag_params.RecorderConfig, bag_params.RECORDER_PARAMETERS),
    (bag_params.PlayerConfig, bag_params.PLAYER_PARAMETERS),
    (PortConfig, PORT_PARAMETERS),
]


@pytest.mark.parametrize('cls, table', TABLES, ids=[f'{c.__name__}' for c, _ in TABLES])
def test_every_table_has_a_row_per_field_and_builds_its_defaults(cls, table):
    assert set(table) == {f.name for f in dataclasses.fields(cls)}
    assert config.build(cls, table, {}) == cls()
    for name, p in table.items():
        p = config.param(p)
        assert p.desc, name
        default = getattr(cls(), name)
        if p.lo is not None:        # a range: the default inside it, the type a number's
            assert isinstance(default, (int, float)) and p.lo <= default <= p.hi, name
        if p.choices:
            assert default in p.choices, name
    assert '| parameter |' in config.markdown(cls, table)


@pytest.mark.parametrize('cls, table, values, text', [
    (viz_params.ModeConfig, viz_params.MODE_PARAMETERS, {'mode': 'bad'},
     "mode: one of vehicle, swarm, got 'bad'"),
    (sensor_params.CameraConfig, sensor_params.CAMERA_PARAMETERS,
     {'compressed_format': 'gif'}, "compressed_format: one of jpeg, png, got 'gif'"),
    (LinkBase, LINK_PARAMETERS, {'transport': 'serial'},
     "transport: one of udp, tcp, got 'serial'"),
    (bag_params.RecorderConfig, bag_params.RECORDER_PARAMETERS, {'storage': 'zip'},
     "storage: one of mcap, sqlite3, got 'zip'"),
    (sensor_params.CameraConfig, sensor_params.CAMERA_PARAMETERS, {'width': 8},
     'width: must be in [16, 4096], got 8'),
    (WorldSource, viz_params.VIZ_WORLD_PARAMETERS, {'vehicles': 33},
     'vehicles: must be in [0, 32], got 33'),
    (report_params.JudgeConfig, report_params.JUDGE_PARAMETERS,
     {'sample_rate_hz': 0.0}, 'sample_rate_hz: must be in [1, 1000], got 0'),
    (world_params.WorldConfig, world_params.PARAMETERS, {'fleet_start_timeout_s': -1.0},
     'fleet_start_timeout_s: must be in [0, 3600], got -1'),
])
def test_a_bad_choice_or_range_is_refused_naming_the_parameter(cls, table, values, text):
    with pytest.raises(ConfigError) as e:
        config.build(cls, table, values)
    assert str(e.value) == text


def test_choices_are_spelled_out_in_the_description():
    assert viz_params.MODE_PARAMETERS['mode'].describe() == \
        'vehicle (odom) or swarm (SwarmState); one of vehicle, swarm'
    assert LINK_PARAMETERS['transport'].choices == ('udp', 'tcp')
    assert PORT_PARAMETERS['allow_peers'].any_type     # `-p allow_peers:=[a, b]` arrives


def test_the_camera_config_gives_the_camera_model_its_parameters():
    cfg = config.build(sensor_params.CameraConfig, sensor_params.CAMERA_PARAMETERS,
                       {'width': 320, 'position_m': [0.2, 0.0, 0.0], 'ground_tile_m': 5.0})
    assert cfg.camera() == CameraParams(width=320, position_flu=(0.2, 0.0, 0.0), tile_m=5.0)
    assert sensor_params.CameraConfig().camera() == CameraParams()


def test_the_world_source_tables_name_what_each_node_does_with_the_vehicles():
    assert viz_params.VIZ_WORLD_PARAMETERS['vehicles'].desc.startswith('Vehicles drawn [-]')
    assert sensor_params.SENSORS_PARAMETERS['vehicle_index'].desc.startswith(
        'The vehicle sensed')


def test_the_autopilot_trajectory_settings():
    cfg = ap_params.AutopilotConfig(display_past_trajectory=False, number_of_future_waypoints=5)
    assert cfg.trajectory == (True, False, True, 5)


class _Status:
    def __init__(self, mode, heading=math.nan):
        self.mode, self.step, self.phase = mode, 2, 'cruise'
        self.target_altitude_ft, self.target_airspeed_kts = 1000.0, math.nan
        self.target_heading_deg, self.target_wp_active = heading, False
        self.target_wp_lat_deg, self.target_wp_lon_deg = math.nan, 8.5


def test_the_autopilot_status_fields_have_no_nan_and_the_plan_command():
    f = status_fields(_Status('plan'), 6)
    assert f['flight_plan_command'] == RUN and not f['use_manual_setpoints']
    assert '"steps": 6' in f['flight_plan'] and '"phase": "cruise"' in f['flight_plan']
    assert f['altitude_setpoint_ft'] == 1000.0 and not f['airspeed_hold']
    assert f['airspeed_setpoint_kts'] == 0.0 and f['target_wp_latitude_deg'] == 0.0
    assert status_fields(_Status('paused'), 6)['flight_plan_command'] == PAUSE
    att = status_fields(_Status('attitude', 90.4), 6)
    assert att['flight_plan_command'] == STOP and att['attitude_hold'] and att['heading_hold']
    # the heading is compared rounded: a change below half a degree is not published again
    assert status_key(_Status('plan', 90.4)) == status_key(_Status('plan', 89.6))


def test_an_imc_vehicles_holds_are_checked_and_converted():
    assert imc_holds(False, math.nan, False, math.nan) == (None, None)
    heading, speed = imc_holds(True, 90.0, True, 10.0)
    assert heading == 90.0 and speed == pytest.approx(10.0 * KNOT_MPS)
    with pytest.raises(ConfigError, match='airspeed_setpoint_kts'):
        imc_holds(False, 0.0, True, 150.0)
    with pytest.raises(ConfigError, match='heading_setpoint_deg'):
        imc_holds(True, math.inf, False, 0.0)


def test_the_world_log_lines():
    assert collision_text(Event(2_500_000_000, 'quad0', 'ground', 3.04, (0, 0, 0)), 1) == \
        'collision at t = 2.500 s: /quad0 and the ground at 3.0 m/s (1 so far)'
    assert collision_text(Event(0, 'quad0', 'boat0', 1.0, (0, 0, 0)), 2).endswith(
        '/quad0 and /boat0 at 1.0 m/s (2 so far)')
    td = DeckEvent(1_000_000_000, 'quad0', 'boat0', 'touchdown', (0, 0, -0.5), 0.5,
                   (0.3, -0.4), (0, 0, 1))
    assert deck_text(td) == ('/quad0 touchdown on the deck of /boat0 at t = 1.000 s at 0.50 m/s '
                             'down, 0.50 m from the pad centre (x +0.30, y -0.40 m)')
    assert deck_text(dataclasses.replace(td, what='slid off')) == \
        '/quad0 slid off the deck of /boat0 at t = 1.000 s'


def test_the_judge_s_summary_lines():
    from sim_report.core.report_lines import judge_lines
    v = {'kind': 'multirotor', 'controller': 'builtin', 'result': 'fc_lost',
         'items_reached': 1, 'items': 3, 'collisions': [], 'closest_approach': None,
         'details': {'max_tracking_error_m': 0.4, 'landing_error_m': None},
         'why': 'its flight controller went silent at t = 12.3 s'}
    s = {'result': 'incomplete', 'vehicles': {'quad0': v}, 'vehicles_complete': 0,
         'vehicle_count': 1, 'items_reached': 1, 'items': 3, 'ended': 'every vehicle is over',
         'sim_time_s': 20.0, 'wall_time_s': 5.0, 'real_time_factor': 4.0}
    assert judge_lines(s, 'sim_quad_hil', 'r.json', 'r.png') == [
        'SUMMARY quad0 (multirotor, builtin): fc_lost, 1/3 items, max tracking error 0.4 m: '
        'its flight controller went silent at t = 12.3 s',
        'SUMMARY sim_quad_hil: incomplete, 0/1 vehicles complete, 1/3 items; every vehicle is '
        'over; 20.0 s sim in 5.0 s wall (real-time factor 4.0); wrote r.json and r.png']
