"""The AUV graph over DDS: `aerosim launch sim_auv report:=true time_scale:=0` (the README's).

The shipped dive plan with the built-in controller: the run ends by itself, exit 0, the summary
says complete with the depths reached, and /auv0/odom shows the dive on the world's clock.
"""

import json
import sys

import pytest

from conftest import probe_node, spin_until

PY = sys.executable


@pytest.mark.graph
def test_sim_auv_dives_runs_its_leg_at_depth_surfaces_and_exits_complete(procs, ros_context,
                                                                         tmp_path):
    from nav_msgs.msg import Odometry

    from sim_ros import qos
    run = procs.start([PY, '-m', 'sim_launch.cli', 'launch', 'sim_auv', 'report:=true',
                       'time_scale:=0', f'output_dir:={tmp_path}'])
    node, ex = probe_node(ros_context, 'auv_probe')
    depth = []
    node.create_subscription(Odometry, '/auv0/odom',
                             lambda m: depth.append(-m.pose.pose.position.z), qos.SENSOR_SUB)
    assert spin_until(node, ex, lambda: run.poll() is not None, 600.0), \
        procs.output(run)[-4000:]
    out = procs.output(run)
    assert run.returncode == 0, out[-4000:]
    assert 'Traceback' not in out
    s = json.loads((tmp_path / 'latest' / 'summary.json').read_text())
    v = s['vehicles']['auv0']
    assert s['result'] == 'complete' and v['kind'] == 'auv' and v['controller'] == 'builtin', s
    d = v['details']
    assert [abs(x - 5.0) <= 1.0 for x in d['depth_at_reach_m'][:2]] == [True, True], d
    assert d['depth_at_reach_m'][2] <= 0.3 and 5.0 <= d['max_depth_m'] < 6.0, d
    # the odometry saw it (the probe joined within the run's first seconds of ~250 s sim)
    assert depth and max(depth) > 4.5, (len(depth), max(depth, default=None))
    assert 'at the surface: holding 20 s' in out


@pytest.mark.graph
def test_a_recorded_dive_is_in_the_bag_state_by_state(procs, tmp_path):
    """`aerosim record` during sim_auv: the AUV's states in the bag, the whole dive."""
    import os
    import signal

    from rclpy.serialization import deserialize_message

    from aerosim_msgs.msg import VehicleState
    from sim_bag.core.bagio import TopicFilter, bag_messages, open_reader
    from sim_ros.convert import time_ns

    from conftest import Procs
    bag = tmp_path / 'dive_bag'
    rec = procs.start([PY, '-m', 'sim_bag.recorder', '--ros-args', '-p', f'output:={bag}',
                       '-p', 'topics:=[/auv0/vehicle_state, /auv0/odom]',
                       '-p', 'discovery_period_s:=0.05'])
    run = procs.start([PY, '-m', 'sim_launch.cli', 'launch', 'sim_auv', 'report:=true',
                       'time_scale:=2', 'rate_hz:=100', f'output_dir:={tmp_path}'])
    assert run.wait(900) == 0, procs.output(run)[-3000:]
    os.killpg(rec.pid, signal.SIGINT)
    rec.wait(20)
    assert rec.returncode == 0, Procs.text(rec)
    states = [deserialize_message(bytes(d), VehicleState) for _t, _ns, d in bag_messages(
        open_reader(bag), TopicFilter(names=('/auv0/vehicle_state',)))]
    t = [time_ns(s.header.stamp) * 1e-9 for s in states]
    depth = [-s.state.pose.position.z for s in states]
    assert t == sorted(t) and t[-1] > 240.0, (len(t), t[-1:])
    assert 5.0 < max(depth) < 6.0 and depth[-1] < 0.3
    # the whole dive from its descent on, without holes (best-effort states: a loaded machine
    # may drop some, so no count is asserted; the recorder's subscription may match a few
    # seconds after the world's clock started: 5.5 s of sim in a CI run with both cores busy)
    assert depth[0] < 3.0 and max(b - a for a, b in zip(t, t[1:])) < 5.0, (t[:2], depth[:2])
