"""The IMC peer of the sim_imc graph tests (test_imc_graph, test_imc_graph_garbage).

An imcpy client on real UDP, and sim_imc's world (its boat /usv) and imc_bridge as launched.
"""

import math

from imc_bridge.core.codec import decode

from conftest import (
    UdpPeer,
)
from graph_start import start

SYS = 0x3F01
CLIENT_SYS = 0x0022
TIME_SCALE = 10.0
ORIGIN = (math.radians(41.185242), math.radians(-8.706139))


class ImcPeer(UdpPeer):
    """A UDP IMC endpoint played by the test with imcpy."""

    def __init__(self, port, bridge_port):
        super().__init__(port, bridge_port)
        self.last = {}

    def send(self, msg, dst=SYS):
        msg.src, msg.src_ent, msg.dst, msg.dst_ent = CLIENT_SYS, 3, dst, 0xFF
        self.sock.sendto(msg.serialize(), self.bridge)

    def recv(self, timeout_s):
        """Yield (message, datagram length) for timeout_s wall seconds."""
        for data in self.datagrams(timeout_s):
            m = decode(data)
            self.last[m.msg_name] = m
            yield m, len(data)

    def wait_for(self, name, timeout_s=10.0, pred=lambda m: True):
        for m, _ in self.recv(timeout_s):
            if m.msg_name == name and pred(m):
                return m
        raise AssertionError(f'no {name} within {timeout_s} s')

    def sim_time_after(self, seconds, timeout_s=30.0):
        """Wait until the SimulatedState timestamp moved seconds past its current value."""
        self.drain()
        t0 = self.wait_for('SimulatedState').timestamp
        return self.wait_for('SimulatedState', timeout_s, lambda m: m.timestamp >= t0 + seconds)


# u of an idle boat [m/s]: not 0 at sea state 2 (harbour): the hull's heave, up to 0.48 m/s,
# seen along the body x axis pitched by up to 1.75 deg (0.015 m/s)
IDLE_U = 0.03


def start_graph(procs, port, client_port, **bridge):
    """sim_imc's world process and imc_bridge (in /usv) as launched, on the test's ports.

    bridge: imc_bridge parameters on top of the test's.
    """
    # sim timestamps (the tests check the sample grid and acoustic delays on sim time);
    # no discovery traffic (test_imc_dune covers it, on ports of its own)
    params = {'simulated_state_rate_hz': 10.0, 'estimated_state_rate_hz': 5.0,
              'warn_period_s': 0.1, 'timestamps': 'sim', 'announce_multicast': False,
              'announce_hosts': ''}
    params.update(bridge)
    return start(procs, 'sim_imc', {'imc_bind': f'127.0.0.1:{port}',
                                    'imc_peers': f'127.0.0.1:{client_port}',
                                    'time_scale': TIME_SCALE},
                 nodes=('world_plant', 'imc_bridge'),
                 # /clock at 20 Hz (sim): 200 messages/s at 10x for the bridge
                 params={'world_plant': {'clock_rate_hz': 20.0}, 'imc_bridge': params}
                 )['imc_bridge']


