"""aerosim_msgs over real DDS between processes."""

from pathlib import Path
import sys

from rclpy.qos import DurabilityPolicy, QoSProfile

from conftest import probe_node, spin_until
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
