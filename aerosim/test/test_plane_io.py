"""A plane's interfaces in a world, the pure parts: AeroSim's autopilot interface, autostart.

sim_autopilot.core.interface (what autopilot_node did around its Autopilot: AutopilotCommand
checked and applied, status on change, the track and trajectory, diagnostics) on the
in-process PlaneAutopilot of the circuit, and the world's autostart handed to it.
"""

import json
import math
import re

import pytest
from sim_world.core.world import World

from aerosim_msgs.msg import AutopilotCommand
from kinds.entry import make_controller, make_model
from kinds.plane.controllers import PlaneAutopilot
from sim_autopilot.core.interface import MAX_TRACK_POINTS, AutopilotInterface
from sim_autopilot.core.params import AutopilotConfig
from sim_core.errors import ConfigError
from sim_core.members import world_members
from sim_core.scenario import load_scenario

DT = 0.008                  # s: JSBSim's 125 Hz


def circuit(autostart=True, cfg=None):
    """The circuit's world of one plane, its autopilot and the interface around it."""
    w = World.build(world_members(load_scenario('circuit')), make_model, make_controller)
    ap = w.bodies[0].controller
    assert isinstance(ap, PlaneAutopilot)
    ap.autostart = autostart
    return w, ap, AutopilotInterface(lambda: ap.ap, cfg or AutopilotConfig())


def fly(w, seconds, t_ns=0):
    for _ in range(int(round(seconds / DT))):
        w.step(DT, t_ns)
        t_ns += int(round(DT * 1e9))
    return t_ns


def test_autostart_runs_the_plan_at_the_first_update_and_without_it_the_plan_waits():
    w, ap, _ = circuit(autostart=True)
    fly(w, 5.0)
    assert ap.ap.mode == 'plan' and ap.ap.step == 0
    assert w.samples[0].v_enu[0] ** 2 + w.samples[0].v_enu[1] ** 2 > 4.0     # rolling
    w, ap, api = circuit(autostart=False)
    t_ns = fly(w, 5.0)
    assert ap.ap.mode == 'stopped' and len(ap.ap.plan) == 6 and not ap.done
    assert math.hypot(*w.samples[0].v_enu[:2]) < 0.1                          # parked
    assert any('stopped (autostart off)' in text for _, text in ap.log)
    # RUN on command: it flies the loaded plan
    assert api.command(AutopilotCommand(flight_plan_command=AutopilotCommand.RUN)) == \
        'flight plan RUN: mode plan, step 0'
    fly(w, 5.0, t_ns)
    assert ap.ap.mode == 'plan' and math.hypot(*w.samples[0].v_enu[:2]) > 2.0
    # the world's reset keeps the world's choice: stopped again
    w.reset()
    fly(w, 1.0)
    assert ap.ap.mode == 'stopped'


@pytest.mark.parametrize('msg,kind,text', [
    (AutopilotCommand(flight_plan_command=7), 'flight_plan_command', 'must be 0 (STOP)'),
    (AutopilotCommand(use_manual_setpoints=True, altitude_setpoint_ft=math.inf), 'value',
     'altitude_setpoint_ft'),
    (AutopilotCommand(use_manual_setpoints=True, airspeed_hold=True,
                      airspeed_setpoint_kts=math.nan), 'value', 'airspeed_setpoint_kts'),
    (AutopilotCommand(heading_setpoint_deg=400.0), 'value', 'heading_setpoint_deg'),
    (AutopilotCommand(flight_plan='[{"command": "loop"}]'), 'value', 'flight_plan[0].command'),
    (AutopilotCommand(flight_plan='{not json'), 'value', 'flight_plan: not JSON'),
])
def test_a_bad_autopilot_command_changes_nothing_and_is_counted_by_kind(msg, kind, text):
    w, ap, api = circuit()
    fly(w, 1.0)
    before = (ap.ap.mode, ap.ap.step, ap.ap.plan, ap.ap.setpoints)
    with pytest.raises(ConfigError, match=re.escape(text)):
        api.command(msg)
    assert (ap.ap.mode, ap.ap.step, ap.ap.plan, ap.ap.setpoints) == before
    assert api.rejected == {kind: 1}
    assert dict(api.diagnostics()[1])['rejected'] == '1'


def test_autopilot_commands_load_a_plan_hold_setpoints_pause_and_stop():
    w, ap, api = circuit(autostart=False)
    t_ns = fly(w, 1.0)
    plan = [{'command': 'takeoff', 'takeoff_speed_kts': 55, 'target_altitude_ft': 1200.0},
            {'command': 'land'}]
    said = api.command(AutopilotCommand(flight_plan=json.dumps(plan),
                                        flight_plan_command=AutopilotCommand.RUN))
    assert said == 'flight plan of 2 steps loaded; flight plan RUN: mode plan, step 0'
    assert len(ap.ap.plan) == 2 and ap.ap.mode == 'plan'
    t_ns = fly(w, 1.0, t_ns)
    assert api.command(AutopilotCommand(flight_plan_command=AutopilotCommand.PAUSE)) == \
        'flight plan PAUSE: mode paused, step 0'
    said = api.command(AutopilotCommand(use_manual_setpoints=True, altitude_setpoint_ft=1500.0,
                                        airspeed_hold=True, airspeed_setpoint_kts=90.0,
                                        heading_hold=True, heading_setpoint_deg=270.0))
    assert said == 'manual setpoints: 1500 ft, 90 kt, heading 270' and ap.ap.mode == 'manual'
    assert api.command(AutopilotCommand(attitude_hold=True)) == 'attitude hold'
    # back to the plan where it was (the manual modes keep its place), then STOP it
    assert api.command(AutopilotCommand(flight_plan_command=AutopilotCommand.RUN)) == \
        'flight plan RUN: mode plan, step 0'
    assert api.command(AutopilotCommand(flight_plan_command=AutopilotCommand.STOP)) == \
        'flight plan STOP: mode stopped, step -1'
    assert api.rejected == {}


def test_the_status_is_published_on_change_and_again_after_a_reset():
    w, ap, api = circuit()
    t_ns = fly(w, 0.1)
    first = api.status()
    plan = json.loads(first['flight_plan'])
    assert (plan['mode'], plan['step'], plan['steps']) == ('plan', 0, 6), plan
    assert first['flight_plan_command'] == AutopilotCommand.RUN
    assert all(not isinstance(v, float) or math.isfinite(v) for v in first.values())
    AutopilotCommand(**first)                   # the message's own field checks take it
    assert api.status() is None                 # unchanged: nothing to publish
    api.command(AutopilotCommand(flight_plan_command=AutopilotCommand.PAUSE))
    fly(w, 0.1, t_ns)
    assert json.loads(api.status()['flight_plan'])['mode'] == 'paused'
    api.reset()
    assert api.status() is not None             # a reset world hears it again


def test_the_track_and_the_trajectory_follow_the_settings():
    w, ap, api = circuit(cfg=AutopilotConfig(track_sample_s=2.0, number_of_future_waypoints=2))
    for k in range(11):                         # 10 s at 1 s
        t_ns = k * 1_000_000_000
        if api.track_due(t_ns):
            api.add_track(29.6 + k * 1e-4, -95.15, 10.0 + k)
    assert len(api.track) == 6 and api.track[1] == [29.6002, -95.15, 12.0]
    assert json.loads(api.past()) == api.track
    api.add_track(math.nan, -95.15, 10.0)       # not a position: not kept
    assert len(api.track) == 6
    assert len(json.loads(api.highlighted())) == 5      # the circuit's 5 positions after
    assert len(json.loads(api.future())) == 2           # the take-off: 2 ahead of step 0
    hidden = AutopilotInterface(lambda: ap.ap, AutopilotConfig(
        highlight_user_defined_waypoints=False, display_future_trajectory=False))
    assert hidden.highlighted() == '[]' and hidden.future() == '[]'
    api.reset()
    assert api.track == [] and api.track_due(0)
    full = AutopilotInterface(lambda: ap.ap, AutopilotConfig(track_sample_s=0.05))
    for k in range(MAX_TRACK_POINTS + 5):
        if full.track_due(k * 50_000_000):
            full.add_track(29.6, -95.15, 10.0)
    assert len(full.track) == MAX_TRACK_POINTS
