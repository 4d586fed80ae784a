"""sim_imc out of the box with a peer that behaves as DUNE does (test/dune_peer.py).

The bridge runs with its shipped defaults (only its ports are the test's): DUNE takes nothing
from it until its Announce reached DUNE's discovery port, DUNE's heading controller steers with
its own sign, and its telemetry copies of DesiredHeading/DesiredSpeed drive nothing.
"""

import math
import time

import pytest

from conftest import DEADLINE_SCALE, free_ports, port_counts, probe_node, spin_until
from dune_peer import DunePeer

SYS = 0x3F01
TIME_SCALE = 4.0


@pytest.mark.graph
def test_dune_steers_the_boat_to_a_waypoint_with_actuator_commands(procs, ros_context):
    from diagnostic_msgs.msg import DiagnosticArray
    bport, uport, dport = free_ports(3), None, None
    uport, dport = bport + 1, bport + 2
    # the boat starts at the origin heading north; the waypoint is behind it to the
    # south-east: DUNE must turn it about 127 deg to starboard first
    waypoint = (-30.0, 40.0)
    peer = DunePeer(uport, dport, waypoint)
    try:
        procs.node('sim_dynamics.usv_node', 'usv_node',
                   {'scenario_file': 'harbour', 'time_scale': TIME_SCALE,
                    'clock_rate_hz': 20.0}, ns='/usv')
        bridge = procs.node('imc_bridge.imc_bridge_node', 'imc_bridge',
                            {'scenario_file': 'harbour', 'bind': f'127.0.0.1:{bport}',
                             'peers': f'127.0.0.1:{uport}', 'discovery_ports': str(dport),
                             'use_sim_time': True}, ns='/usv')
        node, ex = probe_node(ros_context, 'dune_test')
        diags = []
        node.create_subscription(DiagnosticArray, '/diagnostics', diags.append, 10)
        deadline = time.monotonic() + 60.0 * DEADLINE_SCALE
        while not peer.arrived and time.monotonic() < deadline and bridge.poll() is None:
            peer.poll(0.2)
            ex.spin_once(timeout_sec=0.0)
        assert peer.arrived, (peer.states[-1].x if peer.states else None,
                              peer.states[-1].y if peer.states else None,
                              procs.output(bridge)[-3000:])
        # discovery as DUNE does it: our Announce reached the discovery port with the address
        # our datagrams come from, so DUNE activated us and sent to that address
        assert peer.nodes[SYS] == {('127.0.0.1', bport)}
        assert peer.active.get(SYS) == ('127.0.0.1', bport)
        assert peer.first_accepted >= peer.announced_at
        # header timestamps are UTC (DUNE's logs, Neptus): the newest is within seconds of now
        assert abs(peer.states[-1].timestamp - time.time()) < 5.0 * DEADLINE_SCALE
        # DUNE's sign: it commanded the turn to starboard with negative rudder, and the heading
        # error shrank from about 127 deg (the reciprocal heading would have kept it at 180)
        assert peer.rudders[0][0] > math.radians(100.0) and peer.rudders[0][1] < 0.0
        last = peer.states[-1]
        assert math.hypot(last.x - waypoint[0], last.y - waypoint[1]) < 6.0
        assert peer.sent['SetServoPosition'] > 5 and peer.sent['DesiredHeading'] > 5

        # one control level: DUNE's broadcast Desired* were counted as ignored, none switched
        def counts():
            return port_counts(diags, 'IMC link')
        assert spin_until(node, ex, lambda: int(counts().get('ignored_guidance', 0)) > 5,
                          10.0), counts()
        c = counts()
        assert c['control_level'] == 'actuators' and int(c['level_switches']) == 0, c
        assert int(c['rejected_unhandled']) == 0, c
        node.destroy_node()
    finally:
        peer.close()


def test_the_dune_stand_in_drops_what_is_not_imc_as_dune_does():
    """DUNE's discovery and UDP listener drop a datagram IMC::Packet cannot unpack.

    RTPS from a DDS participant or noise is swallowed; an Announce after it is still taken.
    """
    import socket

    import imcpy
    uport = free_ports(2)
    peer = DunePeer(uport, uport + 1, (0.0, 0.0))
    tx = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        rtps = b'RTPS\x02\x02\x01\x0f' + bytes(40)
        tx.sendto(rtps, ('127.0.0.1', uport + 1))
        tx.sendto(rtps, ('127.0.0.1', uport))
        ann = imcpy.Announce()
        ann.src, ann.sys_name, ann.timestamp = SYS, 'aerosim', 1.0
        ann.services = 'imc+udp://127.0.0.1:6001/'
        tx.sendto(ann.serialize(), ('127.0.0.1', uport + 1))
        deadline = time.monotonic() + 10.0
        while SYS not in peer.nodes and time.monotonic() < deadline:
            peer.poll(0.1)
        assert peer.undecodable == 2
        assert peer.nodes[SYS] == {('127.0.0.1', 6001)}
    finally:
        tx.close()
        peer.close()
