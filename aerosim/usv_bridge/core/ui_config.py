"""The USV UI bridge's configuration (pure): UiConfig, its PARAMETERS, its checks.

UiConfig is read once by the node (sim_ros.params.read_config) from PARAMETERS, whose ranges
sim_core.config.build checks without ROS; ``check`` refuses the rest (a ConfigError naming
the parameter), for the node at start-up and for UiPipeline handed a config directly.
"""

from dataclasses import dataclass
from typing import Any, Dict

from sim_core.config import Param, checked

MAX_UDP_PAYLOAD = 65507
TRANSPORTS = ('udp', 'tcp')
TIMESTAMPS = ('sim', 'wall')


@dataclass(frozen=True)
class UiConfig:
    """The bridge's parameters, read once (units in the names; ranges in PARAMETERS)."""

    transport: str = 'udp'
    bind: str = '127.0.0.1:9921'
    ui_address: str = '127.0.0.1:9922'
    tcp_bind: str = '127.0.0.1:9921'
    sim_config: str = 'SimConfig.json'
    types_file: str = 'usv_types.yaml'
    max_boats: int = 10000
    max_datagram_bytes: int = 65000
    timestamps: str = 'sim'
    replies: bool = True
    window: int = 200
    max_pending: int = 100000
    answer_timeout_s: float = 5.0
    ui_timeout_s: float = 30.0
    udp_rcvbuf_bytes: int = 8388608
    warn_period_s: float = 2.0


PARAMETERS: Dict[str, Any] = {
    'transport': Param("'udp' (one JSON per datagram) or 'tcp' (a server, one JSON per line)",
                       choices=TRANSPORTS),
    'bind': ('Our UDP address host:port',),
    'ui_address': ("The UI's UDP address host:port ('' = the last sender of a valid input)",),
    'tcp_bind': ('TCP server address (transport tcp)',),
    'sim_config': ('Init object in force until the UI sends one (path, or name in config/); as '
                   'usv_swarm_node',),
    'types_file': ('Boat/obstacle type codes',),
    'max_boats': ('Most boats an init may have', 1, 100000),
    'max_datagram_bytes': ('Largest command-21 datagram [bytes] (UDP): an init whose 21 could '
                           'be larger is refused (use TCP)', 1000, MAX_UDP_PAYLOAD),
    'timestamps': Param("Command 21 timestamp: 'sim' (the init's hour today + session sim "
                        "time) or 'wall' (local time now)", choices=TIMESTAMPS),
    'replies': ('Answer every input ({"reply": ..., "seq": ..., "ok": ...}) and send notices '
                '({"notice": ...}): docs/usv_ui.md',),
    'window': ('Inputs out to the swarm without an answer, at most (the input topic keeps '
               '1000)', 1, 900),
    'max_pending': ('Inputs waiting for the window, at most (beyond: refused as busy)',
                    1, 10000000),
    'answer_timeout_s': ('Wall time without an answer after which the inputs out are sent '
                         'again (a swarm restarted) or, with no swarm, refused [s]', 0.1, 600.0),
    'ui_timeout_s': ('UDP: the UI in control keeps it while it sends anything within this '
                     'wall time; after it, another UI may take control (TCP: while connected) '
                     '[s]', 1.0, 86400.0),
    'udp_rcvbuf_bytes': ("UDP receive buffer [bytes, the kernel's count, as getsockopt "
                         'reports it]: 8 MiB holds a back-to-back burst of 10,000 inputs of '
                         'up to 190 bytes; the kernel caps it at 2 x net.core.rmem_max unless '
                         'the node may use SO_RCVBUFFORCE (CAP_NET_ADMIN)', 65536, 1 << 30),
    'warn_period_s': ('Minimum period of repeated warnings [s]', 0.1, 600.0),
}


def check(cfg: UiConfig) -> UiConfig:
    """The config after the table's checks (ranges, transport's and timestamps' choices).

    A ConfigError names the parameter; UiPipeline handed a config directly calls it too.
    """
    return checked(cfg, PARAMETERS)
