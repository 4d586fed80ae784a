"""The whole sim_plane graph over real DDS: plane_node, autopilot_node, sensors, plane_report.

`aerosim launch sim_plane report:=true time_scale:=0` takes off, flies the circuit in lockstep
with the autopilot and writes its summary; meanwhile a probe node reads the AeroSim topics
(latched ActorModel and PhysicalProperties, PFD, EffectorState, trajectory, autopilot status)
and feeds garbage to plane_node's command topics and to the autopilot: each refused and
counted exactly once, the flight unharmed.
"""

import json
import math
import sys

from conftest import port_counts, probe_node, spin_until


def test_sim_plane_flies_the_circuit_and_publishes_aerosims_aircraft_types(
        procs, ros_context, tmp_path):
    from diagnostic_msgs.msg import DiagnosticArray

    from aerosim_msgs.msg import (
        ActorModel,
        AircraftEffectorCommand,
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

    g = procs.start([sys.executable, '-m', 'sim_launch.cli', 'launch', 'sim_plane',
                     'report:=true', 'time_scale:=0', f'output_dir:={tmp_path}'])
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
    eff = node.create_publisher(AircraftEffectorCommand, 'effector_command', qos.COMMAND)
    fcc = node.create_publisher(FlightControlCommand, 'flight_control_command', qos.COMMAND)
    apc = node.create_publisher(AutopilotCommand, 'autopilot_command', qos.COMMAND)

    # airborne and the autopilot steering: the plane, the autopilot and the probe matched
    assert spin_until(node, ex, lambda: got['pfd'] and got['pfd'][-1].altitude_ft > 200.0
                      and port_counts(got['diag'], 'autopilot'), 120.0), \
        ''.join(g.lines)[-3000:]
    # garbage: 3 effector commands, 2 flight control commands, 3 autopilot commands
    bad_eff = [AircraftEffectorCommand(throttle_cmd=[math.nan]),
               AircraftEffectorCommand(aileron_cmd_angle_rad=[0.1, 0.1, 0.1]),
               AircraftEffectorCommand(elevator_cmd_angle_rad=[1.0])]
    bad_fcc = [FlightControlCommand(power_cmd=[0.5, 0.5]), FlightControlCommand(roll_cmd=2.0)]
    bad_ap = [AutopilotCommand(flight_plan='[{"command": "loop"}]'),
              AutopilotCommand(use_manual_setpoints=True, altitude_setpoint_ft=math.inf),
              AutopilotCommand(flight_plan_command=7)]
    for m in bad_eff:
        eff.publish(m)
    for m in bad_fcc:
        fcc.publish(m)
    for m in bad_ap:
        apc.publish(m)

    def ap_rejected():
        c = port_counts(got['diag'], 'autopilot')
        return int(c.get('rejected', 0)) if c else 0
    assert spin_until(node, ex, lambda: got['sim'] and got['sim'][-1].rejected_inputs == 5
                      and ap_rejected() == 3, 60.0), (
        got['sim'][-1].rejected_inputs if got['sim'] else None, ap_rejected())
    # the probe keeps reading while the circuit is flown: the run ends with plane_report
    assert spin_until(node, ex, lambda: g.poll() is not None, 300.0), ''.join(g.lines)[-4000:]
    out = procs.text(g)
    assert g.returncode == 0, out[-4000:]
    assert 'Traceback' not in out
    assert 'effector_command rejected (1 so far): throttle_cmd[0]: must be finite' in out
    assert 'autopilot_command rejected (1 so far): flight_plan[0].command' in out
    s = json.loads((tmp_path / 'sim_plane_summary.json').read_text())
    assert s['result'] == 'complete' and s['items_flown'] == 6, s
    assert s['rejected_inputs'] == 5                 # no more: nothing valid was refused
    assert (tmp_path / 'sim_plane.png').stat().st_size > 10_000

    # the latched model: JSBSim's c172r mass and inertia in SI, body FLU
    m = got['model'][-1]
    assert m.asset_link.endswith('c172r.xml')
    assert 1000.0 < m.physical_properties.mass < 1200.0              # 2436 lb = 1105 kg
    assert got['props'][-1].moment_of_inertia.z > got['props'][-1].moment_of_inertia.x > 0.0
    # the PFD in AeroSim's units, the HSI toward the active leg
    cruise = [p for p in got['pfd'] if p.altitude_ft > 900.0]
    assert cruise and all(90.0 < p.airspeed_kts < 110.0 for p in cruise[-50:])
    assert any(abs(p.hsi_course_deviation_deg) > 0.0 for p in cruise)
    assert all(p.altimeter_pressure_setting_inhg == 29.92 for p in got['pfd'])
    assert {round(p.target_altitude_ft) for p in cruise} >= {round((10.0 + 305.0) / 0.3048)}
    assert got['eff'] and got['eff'][-1].header.frame_id == 'base_link'
    # trajectory: the plan's 5 waypoints, the past track growing
    tv = got['traj'][-1]
    assert len(json.loads(tv.user_defined_waypoints.waypoints)) == 5
    assert tv.settings.number_of_future_waypoints == 3
    assert len(json.loads(got['past'][-1].waypoints)) > 100
    assert any(st.heading_set_by_waypoint for st in got['status'])
    node.destroy_node()
