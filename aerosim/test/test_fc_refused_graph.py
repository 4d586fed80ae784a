"""A built-in FC that will not arm ends the run within seconds, its reason in the summary.

The whole graph as a user launches it (issue 45: `aerosim launch sim_quad_hil mag:=false
report:=true time_scale:=0` ran 300 s of sim and ended "incomplete 0/5" without a word): the
built-in FC says why it will not arm (a STATUSTEXT in PX4's words, fc.preflight), the bridge
makes it the FC's failure once it persisted (mavlink/status fc_failure) and the run's judge
ends on it: result fc_refused, the reason named, exit code 1. The pieces, pure:
test_fc_preflight, test_fc_refusal.
"""

import json
import os
import subprocess
import sys

import pytest

from mavlink_bridge.fc import preflight

from conftest import DEADLINE_SCALE, free_ports


@pytest.mark.parametrize('graph, switch, words', [
    ('sim_quad_hil', 'mag:=false', preflight.NO_COMPASS),
    ('sim_quad_hil', 'gps:=false', preflight.NO_GPS),
    ('sim_quad_hil', 'baro:=false', preflight.NO_BARO),
    ('sim_plane_hil', 'mag:=false', preflight.NO_COMPASS),
])
def test_a_builtin_fc_without_a_sensor_it_needs_is_judged_refused_with_its_reason(
        graph, switch, words, tmp_path, domain_id):
    port = free_ports(2)
    env = os.environ.copy()
    env['ROS_DOMAIN_ID'] = str(domain_id)
    cmd = [sys.executable, '-m', 'sim_launch.cli', 'launch', graph, switch, 'report:=true',
           'time_scale:=0', 'sensor_topics:=false', f'bind:=127.0.0.1:{port}',
           f'fc_address:=127.0.0.1:{port + 1}', f'output_dir:={tmp_path}']
    p = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       timeout=240 * DEADLINE_SCALE)
    out = p.stdout.decode('utf-8', 'replace')
    assert p.returncode == 1, out[-4000:]
    s = json.loads((tmp_path / 'latest' / 'summary.json').read_text())
    (v,) = s['vehicles'].values()
    assert s['result'] == 'incomplete' and v['result'] == 'fc_refused', s
    assert v['fc_failure'].startswith(words), v
    assert 's later)' in v['fc_failure'] and 'has not armed 5' in v['fc_failure']
    assert v['why'] == f'its flight controller will not fly: {v["fc_failure"]}', v
    # said from 3 s of sim on, the FC's failure 5 s later: the run ends there, not at 300 s.
    # The verdict then travels on the wall clock (the bridge's 50 ms poll, mavlink/status
    # over DDS to the judge) while the simulation runs on as fast as possible: 8-10 s of sim
    # on a quiet machine, 38 s once with the plane at a load average of 17 on 2 cores
    assert s['sim_time_s'] < 100.0, s
    assert f'FC 1:1 says: {words}' in out
    assert f'the flight controller will not fly: {words}' in out
    assert 'Traceback' not in out
