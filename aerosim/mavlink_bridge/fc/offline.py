"""The built-in FC flying the multirotor model in one process, through real MAVLink framing.

No ROS, no sockets: model -> SensorSuite -> HIL_SENSOR/HIL_GPS bytes -> Autopilot ->
throttles, one step at a time. Used by the tests (fast, deterministic) and the benchmark as the
floor of the closed loop's cost.
"""

import math
from typing import Optional

from mavlink_bridge.core import hil
from mavlink_bridge.core.mav import new_mav, pack
from mavlink_bridge.core.mission import items_from_scenario
from mavlink_bridge.fc.autopilot import DONE, Autopilot
from sim_dynamics.core.multirotor import Multirotor, MultirotorParams
from sim_report.core.mission import MissionJudge
from sim_sensors.core.suite import SensorSuite, SuiteConfig


def _decode(rx, msg, tx):
    return rx.decode(bytearray(pack(tx, msg)))


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
    ap = Autopilot()
    ap.set_mission([_decode(fc, sim.mission_item_int_encode(
        1, 1, it.seq, it.frame, it.command, 0, 1, it.param1, it.param2, it.param3, it.param4,
        it.x, it.y, it.z), sim) for it in items_from_scenario(scenario.mission)])
    ap.home_position(_decode(fc, hil.home_position(sim, scenario.origin), sim))
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
