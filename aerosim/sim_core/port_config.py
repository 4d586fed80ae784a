"""The parameter every node owning an external port shares (sim_ros.port_node), as data (pure).

A frozen dataclass and its table of sim_core.config.Param, which
``sim_ros.params.read_config`` declares; sim_core.link.Allowlist reads the value.
"""

from dataclasses import dataclass
from typing import Any

from sim_core.config import Param


@dataclass(frozen=True)
class PortConfig:
    """Whose input the port takes (any type: a string, or a list of entries)."""

    allow_peers: Any = ''


PORT_PARAMETERS = {
    'allow_peers': Param('Peers whose input is taken: IP addresses, networks (a.b.c.d/n) or '
                         "host names, comma-separated; '' = any (binding 127.0.0.1, the "
                         'default, already means this machine only). Others are counted as '
                         'rejected_peer', any_type=True),
}
