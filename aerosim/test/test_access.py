"""Safe defaults and allowlists: who may talk to the bridges.

Every port binds 127.0.0.1 unless configured; allow_peers (addresses, networks, host names)
and, where the protocol names its sender, allow_system_ids limit whose input is taken. Refused
input is counted (rejected_peer on /diagnostics) and changes nothing. Real sockets: the whole
127.0.0.0/8 is loopback, so 127.0.0.2 is another peer on this machine.
"""

import ast
from pathlib import Path
import socket
import time

from diagnostic_msgs.msg import DiagnosticArray
import imcpy
import pytest

from aerosim_msgs.msg import MavlinkLinkStatus
from mavlink_bridge.core.mav import mavlink, new_mav
from sim_core.link import Allowlist, is_loopback, parse_id_list
from sim_launch.graphs import GRAPHS, resolve
from sim_ros import qos

from conftest import PKG_DIR, free_ports, port_counts, probe_node, spin_until


def test_allowlist_and_id_lists():
    a = Allowlist('127.0.0.2, 10.1.0.0/16,localhost')
    assert a.permits(('127.0.0.2', 5)) and a.permits(('10.1.200.3', 1))
    assert a.permits(('127.0.0.1', 9))                     # localhost resolved once
    assert not a.permits(('127.0.0.3', 5)) and not a.permits(('10.2.0.1', 1))
    assert not a.permits(('not-an-ip', 1))
    assert Allowlist('').permits(('203.0.113.9', 1)) and not Allowlist('')   # empty: any
    with pytest.raises(ValueError, match='allow_peers'):
        Allowlist('999.1.1.1/40,no such host!')
    assert parse_id_list('1, 0x10,255', 'ids', 1, 255) == {1, 16, 255}
    assert parse_id_list('', 'ids', 1, 255) == frozenset()
    for bad in ('0', '256', 'one', '1.5'):
        with pytest.raises(ValueError, match='ids'):
            parse_id_list(bad, 'ids', 1, 255)
    assert is_loopback('127.0.0.1') and is_loopback('localhost') and is_loopback('::1')
    assert not is_loopback('0.0.0.0') and not is_loopback('192.168.1.2')


def test_every_port_binds_loopback_by_default():
    """The declared defaults of every bind/host parameter in the nodes are 127.0.0.1."""
    found = {}
    for graph in GRAPHS.values():            # launch arguments, as the nodes get them
        for n in resolve(graph):
            for k, v in n.parameters.items():
                if k in ('bind', 'tcp_bind', 'mission_bind') and v:
                    found[f'{graph.name}/{n.name}:{k}'] = v
    for path in PKG_DIR.glob('*/*.py'):        # the nodes (the graphs/ package is not scanned)
        for call in ast.walk(ast.parse(path.read_text())):
            if not isinstance(call, ast.Call):
                continue
            args = [a.value if isinstance(a, ast.Constant) else None for a in call.args]
            for i, a in enumerate(args[:-1]):      # d('bind', default) / declare(self, ...)
                if a in ('bind', 'tcp_bind', 'host') and isinstance(args[i + 1], str):
                    found[f'{path.parent.name}/{path.name}:{a}'] = args[i + 1]
    assert len(found) >= 7, found   # mavlink udp/tcp, imc, usv udp/tcp, foxglove, fc
    for where, default in found.items():
        assert str(default).split(':')[0] == '127.0.0.1', (where, default)


def _diag_counts(node, ex, diags, name, pred, timeout_s=15.0):
    assert spin_until(node, ex, lambda: pred(port_counts(diags, name)), timeout_s), \
        port_counts(diags, name)
    return port_counts(diags, name)


def _sock(host):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind((host, 0))
    return s


def test_mavlink_bridge_takes_only_allowed_peers_and_systems(procs, ros_context):
    port = free_ports(1)
    bridge = procs.node('mavlink_bridge.mavlink_bridge_node', 'mavlink_bridge',
                        {'bind': f'127.0.0.1:{port}', 'fc_address': "''",
                         'allow_peers': '127.0.0.2', 'allow_system_ids': '1',
                         'warn_period_s': 0.1})
    node, ex = probe_node(ros_context, 'access_probe')
    diags, status = [], []
    node.create_subscription(DiagnosticArray, '/diagnostics', diags.append, 50)
    node.create_subscription(MavlinkLinkStatus, '/quad/mavlink/status', status.append,
                             qos.LATCHED)
    _diag_counts(node, ex, diags, 'MAVLink', lambda c: c)
    mav1, mav9 = new_mav(1, 1), new_mav(9, 1)
    hb = mavlink.MAV_TYPE_QUADROTOR, mavlink.MAV_AUTOPILOT_PX4, 0, 0, 3
    outsider, inside = _sock('127.0.0.1'), _sock('127.0.0.2')
    for sock, mav in ((outsider, mav1), (inside, mav9)):
        for _ in range(3):
            sock.sendto(mav.heartbeat_encode(*hb).pack(mav), ('127.0.0.1', port))
        time.sleep(0.3)                 # the warning is rate-limited (0.1 s) across kinds
    c = _diag_counts(node, ex, diags, 'MAVLink', lambda c: c.get('rejected_peer') == '6')
    assert c['rx'] == '0' and c['rejected'] == '6'
    assert all(not s.peers for s in status), 'a refused peer was listed'
    inside.sendto(mav1.heartbeat_encode(*hb).pack(mav1), ('127.0.0.1', port))
    assert spin_until(node, ex, lambda: status and status[-1].peers, 10.0)
    p = status[-1].peers[0]
    assert (p.system_id, p.address.split(':')[0]) == (1, '127.0.0.2')
    # the bridge answers the allowed peer (learned address): HEARTBEAT comes back to it
    inside.settimeout(3.0)
    data, _ = inside.recvfrom(65535)
    assert any(m.get_type() == 'HEARTBEAT' for m in new_mav(0, 0).parse_buffer(data))
    c = _diag_counts(node, ex, diags, 'MAVLink', lambda c: c.get('rx') == '1')
    assert c['rejected_peer'] == '6'
    out = procs.output(bridge)
    assert '127.0.0.1 is not in allow_peers' in out and 'not in allow_system_ids' in out


def test_imc_and_usv_bridges_refuse_other_peers(procs, ros_context):
    port = free_ports(2)
    procs.node('imc_bridge.imc_bridge_node', 'imc_bridge',
               {'bind': f'127.0.0.1:{port}', 'peers': "''", 'allow_system_ids': '0x0022',
                'warn_period_s': 0.1}, ns='/usv')
    usv = procs.node('usv_bridge.usv_bridge_node', 'usv_bridge',
                     {'transport': 'tcp', 'tcp_bind': f'0.0.0.0:{port + 1}',
                      'allow_peers': '127.0.0.2', 'warn_period_s': 0.1}, ns='/swarm')
    node, ex = probe_node(ros_context, 'access_probe')
    diags = []
    node.create_subscription(DiagnosticArray, '/diagnostics', diags.append, 50)
    _diag_counts(node, ex, diags, 'IMC link', lambda c: c)
    _diag_counts(node, ex, diags, 'USV UI link', lambda c: c)
    s = _sock('127.0.0.1')
    q = imcpy.EntityList()
    q.op = imcpy.EntityList.OperationEnum.QUERY
    for src in (0x0022, 0x0099):
        q.src, q.src_ent, q.dst, q.dst_ent = src, 3, 0x3F01, 0xFF
        s.sendto(q.serialize(), ('127.0.0.1', port))
    s.settimeout(3.0)
    data, _ = s.recvfrom(65535)                     # the allowed system gets its REPORT
    rep = imcpy.Packet.deserialize(data)
    assert rep.msg_name == 'EntityList' and rep.dst == 0x0022
    c = _diag_counts(node, ex, diags, 'IMC link', lambda c: c.get('rejected_peer') == '1')
    assert c['rx'] == '1'
    # TCP: a client from 127.0.0.1 is closed at once; one from 127.0.0.2 is served
    bad = socket.create_connection(('127.0.0.1', port + 1), timeout=3.0)
    assert bad.recv(10) == b''
    good = socket.socket()
    good.bind(('127.0.0.2', 0))
    good.settimeout(3.0)
    good.connect(('127.0.0.1', port + 1))
    good.sendall(b'[26, 9]\n')                      # refused by the protocol, not the peer
    c = _diag_counts(node, ex, diags, 'USV UI link',
                     lambda c: c.get('rejected_peer') == '1' and c.get('rejected_value') == '1')
    time.sleep(0.2)
    out = procs.output(usv)
    assert 'listening on 0.0.0.0 and taking input from any peer' not in out
    assert '127.0.0.1 is not in allow_peers' in out


def test_open_bind_without_allowlist_warns(procs, ros_context):
    bridge = procs.node('imc_bridge.imc_bridge_node', 'imc_bridge',
                        {'bind': f'0.0.0.0:{free_ports()}', 'peers': "''"}, ns='/usv')
    node, ex = probe_node(ros_context, 'access_probe')
    diags = []
    node.create_subscription(DiagnosticArray, '/diagnostics', diags.append, 50)
    _diag_counts(node, ex, diags, 'IMC link', lambda c: c)      # up and running
    out = procs.output(bridge)
    assert 'listening on 0.0.0.0 and taking input from any peer' in out, out


def test_no_shell_eval_or_pickle_on_input():
    """Nothing in the package runs a shell, evaluates text or unpickles."""
    banned = ('eval(', 'exec(', 'pickle', 'shell=True', 'os.system(', 'yaml.load(',
              'yaml.unsafe_load', 'marshal.loads')
    hits = []
    for path in PKG_DIR.rglob('*.py'):
        if 'test' in path.parts:
            continue
        text = path.read_text()
        hits += [f'{path.relative_to(PKG_DIR)}: {b}' for b in banned if b in text]
    assert not hits, hits
    assert Path(PKG_DIR / 'sim_core' / 'link.py').is_file()
