"""HIL graph test helpers: a pymavlink peer on real UDP, the bridge and its lockstep plant."""

from mavlink_bridge.core.mav import new_mav

from conftest import UdpPeer


def hil_nodes(procs, port, peer_port, **bridge):
    """Start the lockstep dynamics node and the bridge on port (its FC at peer_port): the bridge.

    bridge: more parameters of the bridge.
    """
    # The peers here answer every frame: a lockstep timeout could only come from a busy
    # machine (one was seen at 2 s with both cores loaded), so the wait is long enough never
    # to expire; timeouts and disengagement have tests of their own (test_clock,
    # test_px4_lockstep).
    procs.node('sim_dynamics.dynamics_node', 'dynamics_node',
               {'lockstep': True, 'time_scale': 0.0, 'lockstep_timeout_s': 30.0})
    params = {'bind': f'127.0.0.1:{port}', 'fc_address': f'127.0.0.1:{peer_port}',
              'gps_utc_start': '2026-11-22T12:00:00Z', 'mission_timeout_s': 0.5}
    params.update(bridge)
    return procs.node('mavlink_bridge.mavlink_bridge_node', 'mavlink_bridge', params)


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
