"""HIL graph test helpers: a pymavlink peer on real UDP, the bridge and its lockstep world."""

from mavlink_bridge.core.mav import new_mav

from conftest import UdpPeer
from graph_start import start


def hil_nodes(procs, port, peer_port, **bridge):
    """The lockstep world and the bridge on port (its FC at peer_port): the bridge.

    sim_quad_hil composition:=split: world_node (the quad /quad, the time source) and
    /quad/mavlink_bridge in processes of their own, over vehicle_state / effector_command, as
    fast as possible; no summary written. bridge: more parameters of the bridge.
    """
    # The peers here answer every frame: a lockstep timeout could only come from a busy
    # machine (one was seen at 2 s with both cores loaded), so the wait is long enough never
    # to expire; timeouts and disengagement have tests of their own (test_clock,
    # test_px4_lockstep).
    params = {'gps_utc_start': '2026-11-22T12:00:00Z', 'mission_timeout_s': 0.5}
    params.update(bridge)
    nodes = start(procs, 'sim_quad_hil',
                  {'composition': 'split', 'time_scale': 0.0, 'sensor_topics': False,
                   'summary': False, 'bind': f'127.0.0.1:{port}',
                   'fc_address': f'127.0.0.1:{peer_port}'},
                  nodes=('world_node', 'mavlink_bridge'),
                  params={'world_node': {'lockstep_timeout_s': 30.0},
                          'mavlink_bridge': params})
    return nodes['mavlink_bridge']


class Peer(UdpPeer):
    """A UDP MAVLink endpoint played by the test with pymavlink."""

    def __init__(self, port, bridge_port, sysid=1, compid=1):
        super().__init__(port, bridge_port, poll_s=0.2)
        self.mav = new_mav(sysid, compid)

    def send(self, msg):
        self.sock.sendto(msg.pack(self.mav), self.bridge)

    def recv(self, timeout_s=10.0):
        for data in self.datagrams(timeout_s):
            rx = new_mav(0, 0)
            for m in rx.parse_buffer(data) or []:
                yield m
