"""IMC discovery as DUNE runs it (pure, no rclpy): where to announce, what to announce.

DUNE's Transports.Discovery binds the first free port of 30100-30104 on every address and joins
the multicast group 224.0.75.69; an Announce read there registers the system, and
Transports.UDP then adds it to its contact table (src/Transports/UDP/Task.cpp,
consume(Announce)). DUNE's UDP listener dispatches only datagrams from systems in that table:
before our Announce reaches DUNE's discovery port, everything we send is "filtered". It sends
to a system only once a datagram from it came from an IP address listed in its Announce
services (``imc+udp://IP:port/``, Node::activate), so the services name the addresses our
datagrams leave from: the bound address, or every interface address when bound to 0.0.0.0.

Without a multicast route (a container, a laptop off-line) the group is unreachable, so the
Announce also goes unicast to the discovery ports of ``announce_hosts`` (127.0.0.1: a DUNE on
this machine). DUNE drops an Announce whose (source address, timestamp) it has seen, so the
multicast and unicast copies do no harm.
"""

import fcntl
import socket
import struct
from typing import List, Tuple

DISCOVERY_GROUP = '224.0.75.69'
DISCOVERY_PORTS = tuple(range(30100, 30105))
_SIOCGIFADDR = 0x8915


def parse_ports(text: str, what: str = 'discovery_ports') -> Tuple[int, ...]:
    """'30100-30104' or '30100,30102' (or a mix) -> port numbers; ValueError if malformed."""
    ports: List[int] = []
    for part in str(text).split(','):
        part = part.strip()
        if not part:
            continue
        try:
            lo, _, hi = part.partition('-')
            a, b = int(lo), int(hi) if hi else int(lo)
        except ValueError:
            raise ValueError(f'{what}: ports or ranges like 30100-30104, got {text!r}') \
                from None
        if not (1 <= a <= b <= 65535) or b - a > 64:
            raise ValueError(f'{what}: {part!r} is not a port range of 1..65535 (at most 65 '
                             'ports)')
        ports.extend(range(a, b + 1))
    if not ports:
        raise ValueError(f'{what}: at least one port, got {text!r}')
    return tuple(dict.fromkeys(ports))


def interface_addresses() -> List[str]:
    """IPv4 addresses of this machine's interfaces (Linux ioctl), loopback first."""
    out = []
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        for _idx, name in socket.if_nameindex():
            try:
                req = struct.pack('256s', name.encode()[:15])
                out.append(socket.inet_ntoa(fcntl.ioctl(s.fileno(), _SIOCGIFADDR, req)[20:24]))
            except OSError:
                continue            # no IPv4 address on this interface
    out = list(dict.fromkeys(out))
    return sorted(out, key=lambda a: not a.startswith('127.'))


def service_uris(host: str, port: int) -> List[str]:
    """The imc+udp service URIs of a socket bound to host:port (every address for 0.0.0.0)."""
    hosts = (interface_addresses() or ['127.0.0.1']) if host in ('0.0.0.0', '') else [host]
    return [f'imc+udp://{h}:{port}/' for h in hosts]
