"""Fixed-wing benchmark: the plane model's step rate and the plane graphs' real-time factors.

1. Model: aerosim's Plane.step() + sample() (JSBSim c172r at 125 Hz, our frames and air data)
   against JSBSim's own FGFDMExec.run() on the same model, same run: our overhead per step.
2. Closed loops without ROS: the AeroSim autopilot flying the circuit on JSBSim (the
   sim_plane loop in one process), and the built-in plane FC through MAVLink framing
   (mavlink_bridge.fc.offline.fly_plane: sensors, HIL_SENSOR/HIL_GPS bytes, mixer).
3. The graphs as fast as possible (time_scale:=0, lockstep), presets of the world:
   `sim_plane` (the autopilot in the world's step, world_plant) and `sim_plane_hil`
   (world_plant with the plane's MAVLink bridge + the built-in FC over UDP); the real-time
   factor from the run's summary (the judge in the world's process: sim time over wall time
   from the first step, the free-run before the controller connects included).
AeroSim's own loop (its JSBSim FMU stepped at 50 Hz by aerosim-world) publishes no step-rate or
real-time figure, so there is no AeroSim ratio: JSBSim alone is the peer.
Usage: python bench/bench_plane.py
"""

import json
import math
import os
import subprocess
import sys
import tempfile
import time

import jsbsim

from mavlink_bridge.fc.offline import fly_plane
from sim_autopilot.core import flight_plan as fp
from sim_autopilot.core.autopilot import Autopilot, FlightState, Limits
from sim_core.scenario import load_scenario
from sim_core.units import KNOT_MPS
from sim_dynamics.core.plane import FT, AircraftParams, FlightCommand, Plane

DT = 0.008
N_STEPS = 20000


def model_rates():
    """(our steps/s, JSBSim's steps/s) in trimmed cruise."""
    sc = load_scenario('circuit')
    a = AircraftParams.from_yaml(sc.vehicle_file)
    pl = Plane(a, sc.origin, DT)
    pl.reset((0.0, 0.0, 300.0), 40.0, 100.0 * KNOT_MPS)
    t0 = time.perf_counter()
    for k in range(N_STEPS):
        pl.step()
        pl.sample(k)
    ours = N_STEPS / (time.perf_counter() - t0)
    f = jsbsim.FGFDMExec(None)
    f.set_debug_level(0)
    f.load_model('c172r')
    f.set_dt(DT)
    f['ic/h-agl-ft'] = 1000.0
    f['ic/vc-kts'] = 100.0
    f.run_ic()
    f['propulsion/set-running'] = -1
    f['simulation/do_simple_trim'] = 1
    t0 = time.perf_counter()
    for _ in range(N_STEPS):
        f.run()
    return ours, N_STEPS / (time.perf_counter() - t0)


def autopilot_loop():
    """(sim s, wall s) of the AeroSim autopilot flying the circuit on JSBSim, one process."""
    sc = load_scenario('circuit')
    a = AircraftParams.from_yaml(sc.vehicle_file)
    pl = Plane(a, sc.origin, DT)
    pl.reset(sc.initial_position_enu, sc.initial_yaw_deg)
    ap = Autopilot(Limits(a.rotate_kts, a.climb_kts, a.cruise_kts, a.approach_kts,
                          a.max_bank_deg), sc.origin.alt_m)
    ap.load_plan(fp.from_mission(sc.mission, sc.origin.alt_m, sc.initial_yaw_deg, a.rotate_kts))
    t0 = time.perf_counter()
    first = True
    while ap.mode != 'done' and pl.t < 900.0:
        ad, s, f = pl.air_data(), pl.sample(0), pl.fdm
        ve, vn, vu = s.v_enu
        st = FlightState(pl.t, ad.lat_deg, ad.lon_deg, ad.h_sl_ft * FT, s.p_enu[2], ad.vc_kts,
                         vu, ad.roll_rad, ad.pitch_rad, math.degrees(ad.heading_true_rad) % 360,
                         math.degrees(math.atan2(ve, vn)) % 360, math.hypot(ve, vn),
                         f['velocities/p-rad_sec'], f['velocities/q-rad_sec'],
                         f['velocities/r-rad_sec'])
        if first:
            ap.run(st)
            first = False
        o = ap.update(st, DT)
        pl.apply_flight(FlightCommand((o.power,), o.roll, o.pitch, o.yaw, 0.0, o.flap, 0.0, 1.0,
                                      o.wheel_steer, o.wheel_brake))
        pl.step()
    return pl.t, time.perf_counter() - t0


def run_graph(graph: str, *args: str) -> dict:
    """Run a plane graph with report:=true, time_scale:=0; its run's summary."""
    with tempfile.TemporaryDirectory() as out:
        env = dict(os.environ, ROS_DOMAIN_ID=os.environ.get('ROS_DOMAIN_ID', '92'))
        p = subprocess.run([sys.executable, '-m', 'sim_launch.cli', 'launch', graph,
                            'report:=true', 'time_scale:=0', f'output_dir:={out}', *args],
                           env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           timeout=900)
        path = os.path.join(out, 'latest', 'summary.json')      # the run's folder
        if p.returncode != 0 or not os.path.exists(path):
            raise RuntimeError(p.stdout.decode()[-3000:])
        with open(path) as fh:
            return json.load(fh)


def main():
    """Print the figures."""
    ours, raw = model_rates()
    print(f'plane model, c172r at 125 Hz: {ours:,.0f} steps/s with our frames and air data '
          f'(RTF {ours * DT:.0f}); JSBSim run() alone: {raw:,.0f} steps/s; '
          f'{raw / ours:.2f}x our overhead')
    sim_s, wall_s = autopilot_loop()
    print(f'autopilot + JSBSim, one process, the circuit: {sim_s:.0f} s sim in {wall_s:.2f} s '
          f'(RTF {sim_s / wall_s:.0f}, {1e6 * wall_s * DT / sim_s:.0f} µs per step)')
    t0 = time.perf_counter()
    fc, judge, steps = fly_plane(load_scenario('circuit'))
    wall = time.perf_counter() - t0
    print(f'built-in plane FC through MAVLink framing, one process: {steps * DT:.0f} s sim in '
          f'{wall:.2f} s (RTF {steps * DT / wall:.0f}, {1e6 * wall / steps:.0f} µs per step), '
          f'{judge.summary()["result"]}')
    # the HIL link off the default ports (a PX4 SITL or another run may hold 14560)
    for graph, args in (('sim_plane', ()), ('sim_plane_hil', ('bind:=127.0.0.1:25580',
                                                              'fc_address:=127.0.0.1:25581'))):
        s = run_graph(graph, *args)
        print(f'{graph} as fast as possible: circuit {s["result"]}, {s["sim_time_s"]} s sim in '
              f'{s["wall_time_s"]} s wall, RTF {s["real_time_factor"]}')


if __name__ == '__main__':
    main()
