"""A plane in the world over real DDS: sim_plane (its autopilot in the step) and controller topic.

The plane's own interfaces (kinds/plane/ros.py) in the world's process: `sim_plane
report:=true time_scale:=0` takes off, flies the circuit and the world's judge says complete,
while a probe reads the AeroSim topics (latched ActorModel and PhysicalProperties, PFD,
EffectorState, trajectory, autopilot status, /diagnostics) and feeds garbage to the plane's
flight_control_command and to the autopilot: each refused and counted exactly once, the
flight unharmed. autostart:=false leaves the plan loaded until an autopilot_command RUNs it
(or loads another). A plane flown by any ROS node (controller topic) takes its
FlightControlCommand as the lockstep answer, and its PFD shows an external autopilot's target.
"""

import json
import math

from conftest import port_counts, probe_node, spin_until, wait_line
from graph_start import start

FT = 0.3048


def _ap_rejected(diags) -> int:
    c = port_counts(diags, 'autopilot')
    return int(c.get('rejected', 0)) if c else 0


def test_sim_plane_flies_the_circuit_and_publishes_aerosims_aircraft_types(
        procs, ros_context, tmp_path):
    from diagnostic_msgs.msg import DiagnosticArray

    from aerosim_msgs.msg import (
        ActorModel,
        AutopilotCommand,
        EffectorState,
        FlightControlCommand,
        PhysicalProperties,
        PrimaryFlightDisplayData,
        SimStatus,
        TrajectoryVisualization,
        TrajectoryWaypoints,
    )
    from sim_ros import qos

    g = start(procs, 'sim_plane', {'report': True, 'time_scale': 0, 'output_dir': tmp_path},
              nodes=('world_plant',))['world_plant']
    node, ex = probe_node(ros_context, 'plane_probe', '/plane')
    got = {k: [] for k in ('model', 'props', 'pfd', 'eff', 'traj', 'past', 'status', 'sim',
                           'diag')}
    node.create_subscription(ActorModel, 'actor_model', got['model'].append, qos.LATCHED)
    node.create_subscription(PhysicalProperties, 'physical_properties', got['props'].append,
                             qos.LATCHED)
    node.create_subscription(PrimaryFlightDisplayData, 'flight_display', got['pfd'].append,
                             qos.SENSOR_SUB)
    node.create_subscription(EffectorState, 'effector_states/elevator', got['eff'].append,
                             qos.SENSOR_SUB)
    node.create_subscription(TrajectoryVisualization, 'trajectory/visualization',
                             got['traj'].append, qos.LATCHED)
    node.create_subscription(TrajectoryWaypoints, 'trajectory/past', got['past'].append,
                             qos.SENSOR_SUB)
    node.create_subscription(AutopilotCommand, 'autopilot/status', got['status'].append,
                             qos.LATCHED)
    node.create_subscription(SimStatus, '/sim/status', got['sim'].append, qos.LATCHED)
    node.create_subscription(DiagnosticArray, '/diagnostics', got['diag'].append, 50)
    fcc = node.create_publisher(FlightControlCommand, 'flight_control_command', qos.COMMAND)
    apc = node.create_publisher(AutopilotCommand, 'autopilot_command', qos.COMMAND)

    # airborne and the autopilot steering: the world, the plane's node and the probe matched
    assert spin_until(node, ex, lambda: got['pfd'] and got['pfd'][-1].altitude_ft > 200.0
                      and port_counts(got['diag'], 'autopilot')
                      and fcc.get_subscription_count() and apc.get_subscription_count(),
                      120.0), ''.join(g.lines)[-3000:]
    # garbage: 2 flight control commands (the model refuses them: /sim/status counts them),
    # 3 autopilot commands (the autopilot's interface refuses them: its /diagnostics)
    bad_fcc = [FlightControlCommand(power_cmd=[0.5, 0.5]), FlightControlCommand(roll_cmd=2.0)]
    bad_ap = [AutopilotCommand(flight_plan='[{"command": "loop"}]'),
              AutopilotCommand(use_manual_setpoints=True, altitude_setpoint_ft=math.inf),
              AutopilotCommand(flight_plan_command=7)]
    for m in bad_fcc:
        fcc.publish(m)
    for m in bad_ap:
        apc.publish(m)
    assert spin_until(node, ex, lambda: got['sim'] and got['sim'][-1].rejected_inputs == 2
                      and _ap_rejected(got['diag']) == 3, 60.0), (
        got['sim'][-1].rejected_inputs if got['sim'] else None, _ap_rejected(got['diag']))
    # the probe keeps reading while the circuit is flown: the run ends with the judge's verdict
    assert spin_until(node, ex, lambda: g.poll() is not None, 300.0), ''.join(g.lines)[-4000:]
    out = procs.text(g)
    assert g.returncode == 0, out[-4000:]
    assert 'Traceback' not in out
    assert '/plane flight_control_command rejected (1 so far): power_cmd' in out, out[-4000:]
    assert 'autopilot_command rejected (1 so far): flight_plan[0].command' in out
    s = json.loads((tmp_path / 'latest' / 'summary.json').read_text())
    row = s['vehicles']['plane']
    assert s['result'] == 'complete' and row['items_reached'] == 6 == row['items'], s
    assert row['details']['items_flown'] == 6, row
    assert s['rejected_inputs'] == 2                 # no more: nothing valid was refused
    assert (tmp_path / 'latest' / 'plot.png').stat().st_size > 10_000

    # the latched model: JSBSim's c172r mass and inertia in SI, body FLU
    m = got['model'][-1]
    assert m.asset_link.endswith('c172r.xml')
    assert 1000.0 < m.physical_properties.mass < 1200.0              # 2436 lb = 1105 kg
    assert got['props'][-1].moment_of_inertia.z > got['props'][-1].moment_of_inertia.x > 0.0
    # the PFD in AeroSim's units, the HSI toward the active leg, the autopilot's target
    cruise = [p for p in got['pfd'] if p.altitude_ft > 900.0]
    assert cruise and all(90.0 < p.airspeed_kts < 110.0 for p in cruise[-50:])
    assert any(abs(p.hsi_course_deviation_deg) > 0.0 for p in cruise)
    assert all(p.altimeter_pressure_setting_inhg == 29.92 for p in got['pfd'])
    assert {round(p.target_altitude_ft) for p in cruise} >= {round((10.0 + 305.0) / FT)}
    assert got['eff'] and got['eff'][-1].header.frame_id == 'base_link'
    # trajectory: the plan's 5 waypoints, the past track growing
    tv = got['traj'][-1]
    assert len(json.loads(tv.user_defined_waypoints.waypoints)) == 5
    assert tv.settings.number_of_future_waypoints == 3
    assert len(json.loads(got['past'][-1].waypoints)) > 100
    assert any(st.heading_set_by_waypoint for st in got['status'])
    assert json.loads(got['status'][-1].flight_plan)['mode'] == 'done'
    node.destroy_node()


def test_autostart_false_leaves_the_plan_loaded_until_an_autopilot_command_runs_one(
        procs, ros_context, tmp_path):
    """autostart:=false: the circuit loaded and stopped (parked); a plan in JSON RUN flies."""
    from aerosim_msgs.msg import AutopilotCommand, PrimaryFlightDisplayData
    from sim_ros import qos

    g = start(procs, 'sim_plane', {'autostart': False, 'time_scale': 5.0,
                                   'output_dir': tmp_path}, nodes=('world_plant',))['world_plant']
    node, ex = probe_node(ros_context, 'autostart_probe', '/plane')
    status, pfd = [], []
    node.create_subscription(AutopilotCommand, 'autopilot/status', status.append, qos.LATCHED)
    node.create_subscription(PrimaryFlightDisplayData, 'flight_display', pfd.append,
                             qos.SENSOR_SUB)
    apc = node.create_publisher(AutopilotCommand, 'autopilot_command', qos.COMMAND)

    def plan():
        return json.loads(status[-1].flight_plan) if status else {}
    # the scenario's 6 steps loaded, stopped; 5 s of sim later the aircraft is still parked
    assert spin_until(node, ex, lambda: plan().get('steps') == 6 and pfd
                      and pfd[-1].header.stamp.sec >= 5, 60.0), (plan(), ''.join(g.lines)[-3000:])
    assert plan()['mode'] == 'stopped' and status[-1].flight_plan_command == 0
    assert max(p.airspeed_kts for p in pfd) < 1.0
    assert spin_until(node, ex, lambda: apc.get_subscription_count() > 0, 30.0)
    # a plan of its own in AeroSim's JSON, RUN: loaded, then flown (the take-off roll)
    mine = [{'command': 'takeoff', 'takeoff_speed_kts': 55, 'target_altitude_ft': 1200.0},
            {'command': 'go_to_waypoint', 'airspeed_kts': 90.0, 'waypoint': {
                'latitude_deg': 29.63, 'longitude_deg': -95.13, 'altitude_ft': 1200.0}}]
    apc.publish(AutopilotCommand(flight_plan=json.dumps(mine),
                                 flight_plan_command=AutopilotCommand.RUN))
    assert spin_until(node, ex, lambda: plan().get('steps') == 2 and plan()['mode'] == 'plan'
                      and pfd[-1].airspeed_kts > 30.0, 60.0), (plan(), pfd[-1].airspeed_kts)
    # PAUSE and a refused command: the plan holds, the refusal changes nothing
    apc.publish(AutopilotCommand(flight_plan_command=AutopilotCommand.PAUSE))
    apc.publish(AutopilotCommand(flight_plan_command=9))
    assert spin_until(node, ex, lambda: plan().get('mode') == 'paused', 30.0), plan()
    # the refusal comes after the PAUSE, its log line through the runner's pipe: wait for it
    assert wait_line(g.lines, 'autopilot_command rejected (1 so far)', 30.0, (g,))
    out = procs.output(g)
    assert 'flight plan of 6 steps loaded, stopped (autostart off)' in out, out[-3000:]
    assert 'flight plan RUN: 6 steps' not in out
    assert 'autopilot_command: flight plan of 2 steps loaded; flight plan RUN: mode plan' in out
    assert 'autopilot_command rejected (1 so far): flight_plan_command: must be 0' in out
    assert 'Traceback' not in out
    node.destroy_node()


def test_a_flight_control_command_from_any_node_flies_a_plane_with_controller_topic(
        procs, ros_context, tmp_path):
    """Controller topic: a node answering each vehicle_state with a FlightControlCommand.

    Stamped with the state it answers, each is the lockstep answer (the world waits for it:
    no lockstep timeout while answered), the judge's command (the plane is not 'never
    commanded'); full power and brakes off roll the aircraft down the runway. Its PFD's target
    is the autopilot/status an external autopilot publishes.
    """
    from aerosim_msgs.msg import (
        AutopilotCommand,
        FlightControlCommand,
        PrimaryFlightDisplayData,
        SimStatus,
        VehicleState,
    )
    from sim_ros import qos

    g = start(procs, 'sim_world', {'scenario': 'circuit', 'namespace': 'plane',
                                   'controller': 'topic', 'rate_hz': 125.0, 'time_scale': 0,
                                   'output_dir': tmp_path}, nodes=('world_plant',),
              params={'world_plant': {'lockstep_timeout_s': 5.0}})['world_plant']
    node, ex = probe_node(ros_context, 'pilot', '/plane')
    speeds, pfd, sim = [], [], []
    fcc = node.create_publisher(FlightControlCommand, 'flight_control_command', qos.COMMAND)
    status = node.create_publisher(AutopilotCommand, 'autopilot/status', qos.LATCHED)

    def answer(msg):
        c = FlightControlCommand(power_cmd=[1.0], wheel_brake_cmd=0.0, landing_gear_cmd=1.0)
        c.header.stamp = msg.header.stamp
        fcc.publish(c)
        speeds.append((msg.header.stamp.sec + msg.header.stamp.nanosec * 1e-9,
                       math.hypot(msg.velocity.x, msg.velocity.y)))
    node.create_subscription(VehicleState, 'vehicle_state', answer, qos.STATE)
    node.create_subscription(PrimaryFlightDisplayData, 'flight_display', pfd.append,
                             qos.SENSOR_SUB)
    node.create_subscription(SimStatus, '/sim/status', sim.append, qos.LATCHED)
    status.publish(AutopilotCommand(altitude_setpoint_ft=1234.0))
    # 15 s of sim from the first state answered (the world ran free until then), every step
    # answered: the take-off roll under full power
    assert spin_until(node, ex, lambda: speeds and speeds[-1][0] - speeds[0][0] > 15.0,
                      120.0), (speeds[-1:], ''.join(g.lines)[-3000:])
    assert max(v for _, v in speeds) > 10.0, (speeds[:2], speeds[-2:])
    fcc.publish(FlightControlCommand(roll_cmd=2.0))               # refused: counted
    assert spin_until(node, ex, lambda: sim and sim[-1].rejected_inputs == 1
                      and pfd and pfd[-1].target_altitude_ft == 1234.0, 60.0), (
        sim[-1:], pfd[-1:])
    assert sim[-1].lockstep and sim[-1].lockstep_timeouts == 0, sim[-1]
    out = procs.output(g)
    assert '/plane flight_control_command rejected (1 so far): roll_cmd' in out, out[-3000:]
    assert 'nothing flies it' not in out and 'Traceback' not in out, out[-3000:]
    node.destroy_node()
