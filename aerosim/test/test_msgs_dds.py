"""aerosim_msgs over real DDS between processes; the env file alone sets everything up."""

from pathlib import Path
import subprocess
import sys

from rclpy.qos import DurabilityPolicy, QoSProfile

from conftest import probe_node, REPO_DIR, spin_until
from msg_fill import aerosim_types, sample

HERE = Path(__file__).resolve().parent


def test_every_aerosim_message_roundtrips_between_processes(procs, ros_context):
    types = aerosim_types()
    assert len(types) >= 16
    pub = procs.start([sys.executable, str(HERE / 'msg_roundtrip_pub.py')], cwd=HERE)
    node, ex = probe_node(ros_context, 'msg_roundtrip_sub')
    got = {}
    qos = QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL)
    for name, cls in types.items():
        node.create_subscription(cls, f'rt/{name}', lambda m, n=name: got.setdefault(n, m), qos)
    ok = spin_until(node, ex, lambda: len(got) == len(types), 30.0)
    assert ok, f'missing: {sorted(set(types) - set(got))}\n{procs.output(pub)}'
    for name, cls in types.items():
        expected = sample(name, cls)
        assert got[name] == expected, name
        assert got[name] != sample(name, cls, k=1)     # the comparison can fail
    ex.shutdown()
    node.destroy_node()


def test_env_file_alone_is_enough_in_a_fresh_shell():
    env_file = REPO_DIR / 'env.sh'
    code = ('import rclpy, aerosim_msgs.msg, aerosim_msgs.srv, sim_core, sim_dynamics; '
            'rclpy.init(); n = rclpy.create_node("envcheck"); '
            'print("OK", aerosim_msgs.msg.SimStatus.RUNNING, n.get_name()); rclpy.shutdown()')
    r = subprocess.run(['env', '-i', 'HOME=/tmp', 'PATH=/usr/bin:/bin', 'bash', '-c',
                        f'. "{env_file}" && cd /tmp && python -c \'{code}\''],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr
    assert 'OK 1 envcheck' in r.stdout
