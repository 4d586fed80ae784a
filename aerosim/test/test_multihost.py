"""Two hosts: the world node apart from the HIL bridge and flight controller.

They run in separate network namespaces joined by a veth pair, so DDS discovery and every
state and command cross a real (virtual) Ethernet link.

The test makes the namespaces itself (`ip netns`, `ip link ... type veth`), which needs root
and iproute2; without them it is skipped and says why. Fast DDS is limited to UDPv4 (no
shared-memory shortcut between processes of one machine) and its discovery range to SUBNET;
each namespace routes multicast (SPDP discovery) over its veth. The graph is sim_quad_hil
composition:=split (its nodes' command lines from graph_start): host A runs world_node in
lockstep; host B runs /quad/mavlink_bridge and the built-in FC, which fly the short_hop
mission: takeoff, waypoint, land. The closed loop only works if vehicle_state goes A -> B and
effector_command B -> A.
"""

import os
import shutil
import subprocess
import time

import pytest

from conftest import output_lines
from graph_start import commands

NET = f'10.231.{os.getpid() % 250}'
NAMES = (f'aeroA{os.getpid()}', f'aeroB{os.getpid()}')
VETH = (f'va{os.getpid()}', f'vb{os.getpid()}')


def _ip(*args):
    subprocess.run(['ip', *args], check=True, capture_output=True, timeout=10)


def _why_not():
    if os.geteuid() != 0:
        return 'needs root to create network namespaces (ip netns add)'
    if shutil.which('ip') is None:
        return 'needs iproute2 (the ip command)'
    try:
        _ip('netns', 'add', NAMES[0] + 'probe')
        _ip('netns', 'del', NAMES[0] + 'probe')
    except (subprocess.CalledProcessError, OSError) as exc:
        return f'cannot create a network namespace here: {exc}'
    return None


@pytest.fixture
def two_hosts():
    why = _why_not()
    if why:
        pytest.skip(why)
    try:
        for n in NAMES:
            _ip('netns', 'add', n)
        _ip('link', 'add', VETH[0], 'type', 'veth', 'peer', 'name', VETH[1])
        for k, (n, v) in enumerate(zip(NAMES, VETH)):
            _ip('link', 'set', v, 'netns', n)
            _ip('-n', n, 'addr', 'add', f'{NET}.{k + 1}/24', 'dev', v)
            _ip('-n', n, 'link', 'set', 'lo', 'up')
            _ip('-n', n, 'link', 'set', v, 'up')
            _ip('-n', n, 'route', 'add', '224.0.0.0/4', 'dev', v)
        yield NAMES
    finally:
        for n in NAMES:
            subprocess.run(['ip', 'netns', 'del', n], capture_output=True, timeout=10)


def _tx_bytes(ns, dev):
    r = subprocess.run(['ip', '-n', ns, '-s', 'link', 'show', dev], capture_output=True,
                       text=True, timeout=10)
    lines = r.stdout.splitlines()
    i = next(k for k, line in enumerate(lines) if line.strip().startswith('TX:'))
    return int(lines[i + 1].split()[0])


def test_dds_discovery_and_the_hil_loop_across_two_hosts(procs, two_hosts):
    host_a, host_b = two_hosts
    env = {'ROS_AUTOMATIC_DISCOVERY_RANGE': 'SUBNET', 'FASTDDS_BUILTIN_TRANSPORTS': 'UDPv4'}

    argv = commands('sim_quad_hil', {'composition': 'split', 'scenario': 'short_hop',
                                     'time_scale': 2.0, 'sensor_topics': False,
                                     'summary': False})

    def node(ns, name):
        return procs.start(['ip', 'netns', 'exec', ns] + argv[name], env=env)

    dyn = node(host_a, 'world_node')
    bridge = node(host_b, 'mavlink_bridge')
    fc = node(host_b, 'builtin_fc')
    fc_out, bridge_out, dyn_out = output_lines(fc), output_lines(bridge), output_lines(dyn)
    deadline = time.monotonic() + 150.0
    while time.monotonic() < deadline and not any('mission complete' in x for x in fc_out):
        assert fc.poll() is None and bridge.poll() is None and dyn.poll() is None, \
            ''.join(dyn_out + bridge_out + fc_out)[-3000:]
        time.sleep(0.5)
    text = ''.join(fc_out)
    assert 'mission complete' in text, ''.join(dyn_out + bridge_out + fc_out)[-3000:]
    assert 'item 0: reached' in text and 'item 1: reached' in text and 'item 2: landed' in text
    assert any('mission: accepted: 3 items' in x for x in bridge_out)
    assert any('lockstep on' in x for x in dyn_out)
    # the traffic did cross the link: states one way, commands the other (MB of DDS)
    assert _tx_bytes(host_a, VETH[0]) > 1_000_000 and _tx_bytes(host_b, VETH[1]) > 200_000
