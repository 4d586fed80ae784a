"""The USV UI peer of the sim_usv_swarm graph tests (a JSON client on real UDP/TCP).

With the sample init, and sim_usv_swarm's usv_swarm_node and usv_bridge started as launched.
"""

import json
from pathlib import Path

from usv_bridge.core import protocol as P

from conftest import (
    UdpPeer,
)
from graph_start import start

CONFIG = Path(__file__).resolve().parent.parent / 'config'
TIME_SCALE = 10


def sample(**top):
    obj = json.loads((CONFIG / 'SimConfig.json').read_text())
    obj['time_scale'] = TIME_SCALE
    obj.update(top)
    return obj


class UiPeer(UdpPeer):
    """The USV UI: JSON datagrams."""

    def send(self, obj):
        self.raw(json.dumps(obj).encode())

    def messages(self, timeout_s):
        for data in self.datagrams(timeout_s):
            yield json.loads(data)

    def wait_21(self, timeout_s=15.0, pred=lambda boats, ts: True):
        for m in self.messages(timeout_s):
            if isinstance(m, list) and m[0] == 21:
                boats, ts = P.decode_21(m)
                if pred(boats, ts):
                    return boats, ts
        raise AssertionError(f'no matching command 21 within {timeout_s} s')

    probes = 0

    def send_init(self, obj, procs, bridge, tries=60):
        """Once the bridge answers (a probe it refuses at once), send the init; its answer.

        The bridge answers an init when the swarm has applied it; an init sent again before
        that would be applied again. Each probe is one rejected input ('command') on the
        bridge's /diagnostics (counted in probes).
        """
        for _ in range(tries):
            self.raw(b'[0]')
            try:
                self.reply(1.0, to='unknown')
                self.probes += 1
                break
            except AssertionError:
                continue
        else:
            raise AssertionError(procs.output(bridge))
        self.send(obj)
        return self.reply(60.0, to='init')

    def reply(self, timeout_s=10.0, to=None):
        """The next answer (to: only an answer whose "reply" is that: 'init', 22, 26)."""
        for m in self.messages(timeout_s):
            if isinstance(m, dict) and (to is None or m.get('reply') == to):
                return m
        raise AssertionError('no reply')


def ui_args(port, ui_port, transport='udp'):
    """sim_usv_swarm's launch arguments for the test's ports: ours (UDP, or the TCP server)."""
    return {'ui_bind': f'127.0.0.1:{port}', 'ui_address': f'127.0.0.1:{ui_port}',
            'transport': transport}


def start_graph(procs, port, ui_port, transport='udp', **bridge):
    """sim_usv_swarm's usv_swarm_node and usv_bridge (in /swarm) as launched: (swarm, bridge).

    bridge: usv_bridge parameters on top of the test's (udp_rcvbuf_bytes, ui_timeout_s, ...).
    """
    nodes = start(procs, 'sim_usv_swarm', ui_args(port, ui_port, transport),
                  nodes=('usv_swarm_node', 'usv_bridge'),
                  params={'usv_swarm_node': {'clock_rate_hz': 20.0},
                          'usv_bridge': {'warn_period_s': 0.1, **bridge}})
    return nodes['usv_swarm_node'], nodes['usv_bridge']


def seconds(ts):
    t = P.parse_timestamp(ts)
    return t.hour * 3600 + t.minute * 60 + t.second + t.microsecond * 1e-6
