"""The pip-only install as a new user meets it: a clean shell that sources env.sh alone.

It has rclpy, aerosim_msgs, the aerosim command and every node executable, and runs a graph.
"""

import re
import subprocess

import pytest

from sim_launch.entry import NODES

from conftest import REPO_DIR

ENV_FILE = REPO_DIR / 'env.sh'
pytestmark = [
    pytest.mark.graph,
    pytest.mark.skipif(not ENV_FILE.exists(), reason='env.sh is written by scripts/setup.sh '
                       '(the pip-only layout); a ROS install sources its own setup.bash'),
]


def fresh_shell(command: str, domain_id: int, timeout_s: float):
    """Run command in `env -i bash` after sourcing env.sh alone, from /tmp."""
    return subprocess.run(['env', '-i', 'HOME=/tmp', 'PATH=/usr/bin:/bin',
                           f'ROS_DOMAIN_ID={domain_id}', 'bash', '-c',
                           f'. "{ENV_FILE}" && cd /tmp && {command}'],
                          capture_output=True, text=True, timeout=timeout_s)


def test_env_file_alone_is_enough_for_rclpy_and_the_messages(domain_id):
    code = ('import rclpy, aerosim_msgs.msg, aerosim_msgs.srv, sim_core, sim_dynamics; '
            'rclpy.init(); n = rclpy.create_node("envcheck"); '
            'print("OK", aerosim_msgs.msg.SimStatus.RUNNING, n.get_name()); rclpy.shutdown()')
    r = fresh_shell(f"python -c '{code}'", domain_id, 60.0)
    assert r.returncode == 0, r.stdout + r.stderr
    assert 'OK 1 envcheck' in r.stdout


def test_aerosim_and_every_node_executable_are_on_path(domain_id):
    setup = (REPO_DIR / 'aerosim' / 'setup.py').read_text()
    scripts = re.findall(r"'(\w+) = [\w.]+:\w+'", setup)
    # the launcher and every node's script (sim_launch.entry.NODES: the world_node and
    # world_plant of every graph, the bridges, sensors, viewers, bag tools)
    assert set(scripts) == {'aerosim', *NODES} and len(scripts) == len(NODES) + 1, scripts
    r = fresh_shell('for x in ' + ' '.join(scripts) + '; do command -v $x || echo "MISSING $x"; '
                    'done; aerosim graphs', domain_id, 60.0)
    assert r.returncode == 0, r.stdout + r.stderr
    assert 'MISSING' not in r.stdout, r.stdout
    listed = re.findall(r'^  (sim_\w+) ', r.stdout, re.M)   # `aerosim graphs`: name, what
    assert {'sim_world', 'sim_quad', 'sim_quad_hil', 'sim_plane', 'sim_plane_hil', 'sim_imc',
            'sim_auv', 'sim_usv_swarm'} <= set(listed), r.stdout


def test_a_short_launch_runs_from_the_fresh_shell(domain_id):
    # real time: as fast as possible (time_scale:=0) a 2 s window is 0.1 s of wall time, and a
    # monitor starved of CPU by the graph it watches saw only /clock in it (1 run in 4)
    r = fresh_shell('aerosim launch sim_quad --sim-seconds 2 camera:=false time_scale:=1',
                    domain_id, 180.0)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    assert 's of sim time observed' in r.stdout, r.stdout[-3000:]
    assert re.search(r'/quad/imu/data\s+sensor_msgs/msg/Imu\s+[1-9]\d* msgs', r.stdout), \
        r.stdout[-3000:]
