"""The built-in FCs flying their models in one process, through real MAVLink framing.

No ROS, no sockets: model -> SensorSuite -> HIL_SENSOR/HIL_GPS bytes -> FC -> throttles
(the multirotor: fly) or surfaces (the JSBSim plane: fly_plane), one step at a time. Used
by the tests (fast, deterministic) and the benchmark as the floor of the closed loop's cost.
"""

import math
from typing import Optional

from mavlink_bridge.core import hil
from mavlink_bridge.core.mav import new_mav, pack
from mavlink_bridge.core.mission import items_from_scenario
from mavlink_bridge.core.mixer import FixedWingMixer
from mavlink_bridge.fc.autopilot import DONE, MulticopterFc
from mavlink_bridge.fc.plane import PlaneFc
from sim_dynamics.core.multirotor import Multirotor, MultirotorParams
from sim_dynamics.core.plane import AircraftParams, Plane
from sim_report.core.mission import MissionJudge
from sim_report.core.plane import PlaneJudge, PlaneSample
from sim_sensors.core.suite import SensorSuite, SuiteConfig


def _decode(rx, msg, tx):
    return rx.decode(bytearray(pack(tx, msg)))


def _upload(fc, scenario, sim, rx) -> None:
    """The scenario's mission and home into an FC core, as MAVLink frames decode them."""
    fc.set_mission([_decode(rx, sim.mission_item_int_encode(
        1, 1, it.seq, it.frame, it.command, 0, 1, it.param1, it.param2, it.param3, it.param4,
        it.x, it.y, it.z), sim) for it in items_from_scenario(scenario.mission)])
    fc.home_position(_decode(rx, hil.home_position(sim, scenario.origin), sim))


def fly(scenario, suite_cfg: Optional[SuiteConfig] = None, max_sim_s: float = 300.0, rate_hz=250.0,
        fc_from_s: float = 0.0):
    """Fly the scenario's mission; returns (autopilot, judge, steps).

    fc_from_s: sim time [s] at which the FC starts to listen (in a graph the sensors free-run
    from t = 0 until the FC process is up; it never sees the samples before).
    """
    params = MultirotorParams.from_yaml(str(scenario.vehicle_file))
    model = Multirotor(params, wind_enu=scenario.environment.wind_enu,
                       gravity=scenario.environment.gravity)
    model.reset(p_enu=scenario.initial_position_enu,
                yaw=math.radians(90.0 - scenario.initial_yaw_deg))
    suite = SensorSuite(suite_cfg or SuiteConfig(), scenario)
    sim, fc = new_mav(51, 25), new_mav(1, 1)
    enc = hil.HilSensorEncoder()
    ap = MulticopterFc()
    _upload(ap, scenario, sim, fc)
    judge = MissionJudge(scenario)
    step_ns = int(round(1e9 / rate_hz))
    thr = [0.0] * 4
    t_ns = 0
    steps = 0
    while t_ns < max_sim_s * 1e9:
        model.step(step_ns * 1e-9, thr)
        t_ns += step_ns
        steps += 1
        s = model.raw
        acc = model.acceleration
        smp = suite.sample(t_ns, s[0:3], s[3:6], s[6:10], acc[0:3], s[10:13])
        if t_ns < fc_from_s * 1e9:
            continue
        for fix in smp.gnss:
            ap.hil_gps(_decode(fc, hil.hil_gps(sim, fix, 0), sim))
        if smp.imu is not None:
            thr = ap.hil_sensor(_decode(fc, enc.encode(sim, smp, t_ns // 1000), sim))
        if steps % 10 == 0:
            judge.add(t_ns * 1e-9, s[0:3], math.sqrt(sum(v * v for v in s[3:6])),
                      not any(x > 0.0 for x in thr))
        if ap.phase == DONE and judge.done:
            break
    return ap, judge, steps


def fly_plane(scenario, suite_cfg: Optional[SuiteConfig] = None, max_sim_s: float = 600.0,
              rate_hz: float = 125.0, on_step=None):
    """The built-in plane FC flies the scenario's mission on JSBSim; (fc, judge, steps).

    The same chain as sim_plane_hil, without sockets: JSBSim -> SensorSuite -> HIL_SENSOR /
    HIL_GPS bytes -> PlaneFc -> HIL_ACTUATOR_CONTROLS values -> the bridge's FixedWingMixer
    -> the plane's effector command. on_step(t_s, plane, controls) is called every step.
    """
    a = AircraftParams.from_yaml(scenario.vehicle_file)
    env = scenario.environment
    dt = 1.0 / rate_hz
    plane = Plane(a, scenario.origin, dt, env.wind_enu, env.turbulence)
    plane.reset(scenario.initial_position_enu, scenario.initial_yaw_deg,
                scenario.initial_speed_mps)
    suite = SensorSuite(suite_cfg or SuiteConfig(), scenario)
    sim, fcm = new_mav(51, 25), new_mav(1, 1)
    enc = hil.HilSensorEncoder()
    fc = PlaneFc()
    _upload(fc, scenario, sim, fcm)
    mixer = FixedWingMixer.for_aircraft(a)
    judge = PlaneJudge(scenario)
    step_ns = int(round(1e9 / rate_hz))
    t_ns = steps = 0
    controls = None
    while t_ns < max_sim_s * 1e9:
        plane.step()
        t_ns += step_ns
        steps += 1
        s = plane.sample(t_ns)
        smp = suite.sample(t_ns, s.p_enu, s.v_enu, s.q_enu_flu, s.a_enu, s.w_flu)
        for fix in smp.gnss:
            fc.hil_gps(_decode(fcm, hil.hil_gps(sim, fix, t_ns // 1000), sim))
        if smp.imu is not None:
            controls = fc.hil_sensor(_decode(fcm, enc.encode(sim, smp, t_ns // 1000), sim))
            plane.apply_effectors(plane.check_effectors(mixer.command(controls, fc.armed)))
        if on_step is not None:
            on_step(t_ns * 1e-9, plane, controls)
        if steps % 25 == 0:
            ad = plane.air_data()
            judge.add(PlaneSample(t_ns * 1e-9, tuple(float(x) for x in s.p_enu), ad.vc_kts,
                                  math.degrees(ad.roll_rad), math.degrees(ad.pitch_rad),
                                  math.degrees(ad.heading_true_rad)))
            if judge.done:
                break
    return fc, judge, steps
