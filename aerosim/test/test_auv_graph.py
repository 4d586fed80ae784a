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
    s = json.loads((tmp_path / 'sim_auv_summary.json').read_text())
    v = s['vehicles']['auv0']
    assert s['result'] == 'complete' and v['kind'] == 'auv' and v['controller'] == 'builtin', s
    d = v['details']
    assert [abs(x - 5.0) <= 1.0 for x in d['depth_at_reach_m'][:2]] == [True, True], d
    assert d['depth_at_reach_m'][2] <= 0.3 and 5.0 <= d['max_depth_m'] < 6.0, d
    # the odometry saw it (the probe joined within the run's first seconds of ~250 s sim)
    assert depth and max(depth) > 4.5, (len(depth), max(depth, default=None))
    assert 'at the surface: holding 20 s' in out
