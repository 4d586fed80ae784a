"""One simulator: every graph is a preset of the world, with one judge whose verdicts are true.

Issue 45's findings, each a test that failed on the graphs beside the world (d4be382):
1. sim_auv with its defaults (summary:=true) lost its summary ('AuvJudge' object has no
   attribute 'plot'): stopped, it writes one, result stopped;
3. the judge lost samples at time_scale:=0 (it was a DDS subscriber): in the world's process it
   judges every step, the same as a pure run of the same world;
6. a one-vehicle run did not end on a crash or on losing its FC: it ends at once, saying why;
7. results overwrote each other (named by graph): each run has its folder, latest links it;
8. the camera existed only in sim_quad: any vehicle of any world has one with camera:=true;
and each preset run with its defaults and report:=true ends with a true verdict.
(Finding 2, a one-vehicle world judged on a topic nobody published, is gone with the judge in
the world's process: every preset's summary below has its vehicle's samples; 4 and 5 are
test_schema's and test_fc's.)
"""

import json
import os
from pathlib import Path
import signal
import sys
import time

import pytest

from conftest import DEADLINE_SCALE, finished, free_ports, probe_node, spin_until, wait_line
from graph_start import start

PY = sys.executable


def launch(procs, graph, tmp_path, *args):
    """`aerosim launch graph args`, its runs in tmp_path/runs."""
    return procs.start([PY, '-m', 'sim_launch.cli', 'launch', graph,
                        f'output_dir:={tmp_path / "runs"}', *args])


def latest(tmp_path) -> dict:
    """The summary of the last run written to tmp_path/runs."""
    return json.loads((tmp_path / 'runs' / 'latest' / 'summary.json').read_text())


def ended(procs, p, timeout_s: float) -> str:
    """P's output once it ended by itself within timeout_s (scaled) wall seconds."""
    code = finished(p, timeout_s * DEADLINE_SCALE)
    out = procs.output(p)
    assert code is not None, f'still running after {timeout_s} s:\n' + out[-3000:]
    assert 'Traceback' not in out, out[-3000:]
    return out


HIL_PORTS = ('bind', 'fc_address')       # a MAVLink vehicle's UDP link: free ports
IMC_PORTS = ('imc_bind', 'imc_peers')


def _ports(names):
    a = free_ports(len(names))
    return [f'{n}:=127.0.0.1:{a + k}' for k, n in enumerate(names)]


# --- every preset, its defaults and report:=true -----------------------------------------------
@pytest.mark.graph
@pytest.mark.parametrize('graph, args, vehicles, timeout_s', [
    ('sim_quad_hil', ('time_scale:=0',), {'quad': 5}, 300),
    ('sim_auv', ('time_scale:=0',), {'auv0': 3}, 300),
    ('sim_plane', ('time_scale:=0',), {'plane': 6}, 600),
    ('sim_plane_hil', ('time_scale:=0',), {'plane': 6}, 900),
    ('sim_world', ('time_scale:=0',), {'quad0': 4, 'quad1': 3, 'plane0': 4, 'boat0': 3}, 900),
])
def test_each_preset_flies_its_mission_and_its_judge_says_complete(procs, tmp_path, graph,
                                                                    args, vehicles,
                                                                    timeout_s):
    extra = _ports(HIL_PORTS) if graph in ('sim_quad_hil', 'sim_plane_hil',
                                                     'sim_world') else []
    run = launch(procs, graph, tmp_path, 'report:=true', *args, *extra)
    out = ended(procs, run, timeout_s)
    assert run.returncode == 0, out[-3000:]
    s = latest(tmp_path)
    assert s['result'] == 'complete', s
    assert {n: v['items'] for n, v in s['vehicles'].items()} == vehicles
    for name, v in s['vehicles'].items():
        assert v['result'] == 'complete' and v['items_reached'] == v['items'], (name, v)
    assert s['items_reached'] == s['items'] == sum(vehicles.values())
    assert s['sim_time_s'] > 10.0 and s['ended'].startswith('every vehicle is over')
    folder = (tmp_path / 'runs' / 'latest').resolve()
    assert folder.name.startswith(f'{graph}-') and (folder / 'plot.png').stat().st_size > 10000
    assert f'SUMMARY {graph}: complete' in out


@pytest.mark.graph
def test_split_into_processes_the_same_preset_flies_the_same_mission(procs, tmp_path):
    """composition:=split: world_node, the bridge and the FC three processes over DDS."""
    run = launch(procs, 'sim_quad_hil', tmp_path, 'report:=true', 'time_scale:=0',
                 'composition:=split', 'scenario:=short_hop', *_ports(HIL_PORTS))
    out = ended(procs, run, 300)
    assert run.returncode == 0, out[-3000:]
    assert '[/quad/mavlink_bridge]' in out and '[world_node]' in out      # the processes
    s = latest(tmp_path)
    v = s['vehicles']['quad']
    assert s['result'] == 'complete' and v['items_reached'] == v['items'] == 3, s


@pytest.mark.graph
def test_sim_quad_says_at_once_that_nothing_flies_its_quad(procs, tmp_path):
    """sim_quad has no controller in the graph: judged, the run ends within 5 s of sim, so."""
    run = launch(procs, 'sim_quad', tmp_path, 'report:=true', 'time_scale:=0',
                 'camera:=false')
    out = ended(procs, run, 120)
    assert run.returncode == 1, out[-3000:]
    s = latest(tmp_path)
    v = s['vehicles']['quad']
    assert (s['result'], v['result'], v['controller']) == ('incomplete', 'no_command', 'topic')
    assert 'no command on its topics (/quad/effector_command) in 5 s of sim' in v['why']
    assert s['sim_time_s'] < 7.0, s


@pytest.mark.graph
def test_a_scenario_with_nothing_to_judge_is_refused_with_report(procs, tmp_path):
    run = launch(procs, 'sim_imc', tmp_path, 'report:=true', *_ports(IMC_PORTS))
    out = ended(procs, run, 60)
    assert run.returncode == 2, out[-3000:]
    assert 'report: true judges missions, and no vehicle of scenario harbour has one' in out


# --- finding 1: sim_auv with its defaults -------------------------------------------------------
@pytest.mark.graph
def test_sim_auv_with_its_defaults_writes_its_summary_when_stopped(procs, tmp_path):
    run = launch(procs, 'sim_auv', tmp_path)               # summary:=true, report:=false
    assert wait_line(run.lines, 'truth: auv0 item 0', 120 * DEADLINE_SCALE, (run,)) or \
        wait_line(run.lines, 'world of 1', 1, (run,)), procs.output(run)[-3000:]
    time.sleep(2.0)
    os.killpg(run.pid, signal.SIGINT)
    out = ended(procs, run, 60)
    assert run.returncode == 0, out[-3000:]
    assert 'summary not written' not in out and 'has no attribute' not in out
    s = latest(tmp_path)
    assert s['result'] == 'stopped' and s['ended'].startswith('stopped at t = '), s
    assert s['vehicles']['auv0']['kind'] == 'auv' and s['sim_time_s'] > 0.0
    assert (tmp_path / 'runs' / 'latest' / 'plot.png').stat().st_size > 10000


# --- finding 3: every step judged at any time scale ---------------------------------------------
def judged_offline(scenario: str, rate_hz: float, sample_hz: float, until_s: float):
    """The reached times [s] of a world stepped and judged here, as the world's process does."""
    from sim_world.core.world import World

    from kinds.entry import judges_of, make_controller, make_model
    from sim_core.decimator import Decimator
    from sim_core.members import world_members
    from sim_core.scenario import load_scenario
    from sim_report.core.world import WorldJudge
    members = world_members(load_scenario(scenario))
    world = World.build(members, make_model, make_controller)
    judge = WorldJudge(members, judges_of(members),
                       same_time_s=1.5 / sample_hz)
    decs = [Decimator(sample_hz) for _ in members]
    dt_ns = int(round(1e9 / rate_hz))
    t_ns = 0
    while t_ns < until_s * 1e9 and not judge.over:
        world.step(dt_ns * 1e-9, t_ns)
        t_ns += dt_ns
        for i, s in enumerate(world.samples):
            if decs[i].due(t_ns):
                judge.feed(i, t_ns * 1e-9, s.p_enu, s.v_enu, s.q_enu_flu,
                           world.bodies[i].model.idle())
    return {e.member.name: [round(x, 2) for x in e.judge.reached_at_s] for e in judge.entries}


@pytest.mark.graph
def test_as_fast_as_possible_the_judge_sees_every_step_as_a_pure_run_does(procs, tmp_path):
    """The AUV's dive, as fast as possible: judged at the same sim times as stepped here."""
    run = launch(procs, 'sim_auv', tmp_path, 'report:=true', 'time_scale:=0')
    ended(procs, run, 300)
    s = latest(tmp_path)
    got = {n: v['reached_at_s'] for n, v in s['vehicles'].items()}
    assert got == judged_offline('dive', 250.0, 25.0, 400.0), (got, s)


# --- finding 6: a one-vehicle run ends on a crash and on a lost FC ------------------------------
DROP = """
name: drop
origin: {lat_deg: 47.397742, lon_deg: 8.545594, alt_m: 488.0}
vehicle: {kind: multirotor, params: iris, initial_position_enu: [0.0, 0.0, 30.0]}
mission:
  - {command: waypoint, lat_deg: 47.3979, lon_deg: 8.5456, alt_m: 30.0}
"""


@pytest.mark.graph
def test_a_quad_that_falls_ends_its_run_at_once_with_the_crash(procs, ros_context, tmp_path):
    """sim_quad, a quad 30 m up whose motors a node stops: it hits the ground, the run ends."""
    from aerosim_msgs.msg import AircraftEffectorCommand
    from sim_ros import qos
    sc = tmp_path / 'drop.yaml'
    sc.write_text(DROP)
    run = launch(procs, 'sim_quad', tmp_path, f'scenario:={sc}', 'report:=true',
                 'camera:=false', 'time_scale:=1.0')
    node, ex = probe_node(ros_context, 'motors_off')
    pub = node.create_publisher(AircraftEffectorCommand, '/quad/effector_command', qos.COMMAND)
    msg = AircraftEffectorCommand(throttle_cmd=[0.0] * 4)

    def stopped_motors():
        pub.publish(msg)
        return run.poll() is not None
    assert spin_until(node, ex, stopped_motors, 120 * DEADLINE_SCALE), procs.output(run)[-3000:]
    out = ended(procs, run, 10)
    assert run.returncode == 1, out[-3000:]
    s = latest(tmp_path)
    v = s['vehicles']['quad']
    assert v['result'] == 'collided' and v['collisions'][0]['with'] == 'ground', v
    assert 'collided with ground' in v['why'] and s['sim_time_s'] < 10.0, s


@pytest.mark.graph
def test_a_quad_whose_fc_dies_ends_its_run_at_once_with_the_reason(procs, tmp_path):
    """sim_quad_hil report:=true, its built-in FC killed once heard: fc_lost, within seconds.

    Killed before it arms (at 3 s of sim): killed in flight, the quad holding its last command
    hits the ground before the bridge's peer timeout says the FC is gone (collided, also a
    run that ends at once with its reason).
    """
    a = free_ports(2)
    nodes = start(procs, 'sim_quad_hil', {'report': True, 'bind': f'127.0.0.1:{a}',
                                          'fc_address': f'127.0.0.1:{a + 1}',
                                          'output_dir': str(tmp_path / 'runs')})
    world, fc = nodes['world_plant'], nodes['builtin_fc']
    assert wait_line(world.lines, 'the clock starts', 120 * DEADLINE_SCALE, (world, fc)), \
        procs.output(world)[-3000:]
    os.killpg(fc.pid, signal.SIGKILL)
    out = ended(procs, world, 60)
    assert world.returncode == 1, out[-3000:]
    v = latest(tmp_path)['vehicles']['quad']
    assert v['result'] == 'fc_lost' and 'went silent' in v['why'], v


# --- finding 7: every run its own folder --------------------------------------------------------
def test_runs_never_overwrite_each_other_and_latest_is_the_last(tmp_path):
    from datetime import datetime, timezone

    from sim_report.core.output import run_folder, write_summary
    t = datetime(2026, 11, 28, 10, 0, 0, tzinfo=timezone.utc)
    a = run_folder(tmp_path, 'sim_world', 'harbour_ops', t)
    b = run_folder(tmp_path, 'sim_world', 'harbour_ops', t)          # the same second
    c = run_folder(tmp_path, 'sim_quad_hil', 'my scenario/x', t)
    assert (a.name, b.name) == ('sim_world-harbour_ops-20261128-100000',
                                'sim_world-harbour_ops-20261128-100000-2')
    assert c.name == 'sim_quad_hil-my_scenario_x-20261128-100000'
    write_summary(a, {'result': 'complete'})
    write_summary(b, {'result': 'stopped'}, plot=lambda path: Path(path).write_bytes(b'png'))
    assert json.loads((tmp_path / 'latest' / 'summary.json').read_text())['result'] == 'stopped'
    assert json.loads((a / 'summary.json').read_text())['result'] == 'complete'
    assert (tmp_path / 'latest').resolve() == b.resolve() and (b / 'plot.png').exists()


# --- finding 8: a camera on any vehicle of any world --------------------------------------------
@pytest.mark.graph
def test_a_camera_on_a_world_s_vehicle(procs, ros_context, tmp_path):
    """sim_auv camera:=true: /auv0/camera/image_raw, rendered from the AUV's pose."""
    from sensor_msgs.msg import Image

    from sim_ros import qos
    run = launch(procs, 'sim_auv', tmp_path, 'camera:=true', 'summary:=false')
    node, ex = probe_node(ros_context, 'camera_probe')
    got = []
    node.create_subscription(Image, '/auv0/camera/image_raw', got.append, qos.SENSOR_SUB)
    assert spin_until(node, ex, lambda: len(got) >= 2 or run.poll() is not None,
                      120 * DEADLINE_SCALE), procs.output(run)[-3000:]
    assert len(got) >= 2 and got[0].width == 640 and got[0].encoding == 'rgb8'
