"""The MAVLink links of a world's vehicles (pure): instance k's ports, ids and PX4's files.

The links of MAVLink instance 0 are the launch's (LinkBase: the world node's parameters);
the vehicle of instance k (sim_core.members.Member.link) gets them moved as PX4 SITL moves
its own (sim_core.fleet.member_ports: UDP ports + 2 k, TCP and PX4's ports + k, system ids
+ k). A vehicle flown by PX4 talks to PX4 SITL instance px4_instance + k: its simulator link
TCP 4560 + that (PX4 connects to us), its onboard payload link 14280 + that (the mission,
parameters and arming; we answer from 14030 + that, where PX4 sends), its system id that + 1
(PX4's rcS sets MAV_SYS_ID = instance + 1 after the parameter overrides).
"""

from dataclasses import dataclass
from typing import Dict

from sim_core.config import Param
from sim_core.fleet import member_ports
from sim_core.kinds import info
from sim_core.members import Member

TRANSPORTS = ('udp', 'tcp')
PX4_TCP_PORT = 4560             # PX4 SITL instance N connects to 4560 + N (simulator_mavlink)
PX4_PAYLOAD_PORT = 14280        # PX4 SITL instance N's onboard payload link listens on + N
PX4_PAYLOAD_REMOTE = 14030      # ... and sends to + N (px4-rc.mavlink: -o 14030)
MAX_PX4_INSTANCE = 200          # PX4's instance numbers we take (its MAV_SYS_ID <= 255)


@dataclass(frozen=True)
class LinkBase:
    """The MAVLink links of instance 0; instance k's are moved from them (member_links)."""

    bind: str = '127.0.0.1:14560'
    fc_address: str = '127.0.0.1:14561'
    tcp_bind: str = ''
    transport: str = 'udp'
    autostart: bool = True
    px4_instance: int = 0
    mission_link: str = ''
    mission_bind: str = ''
    px4_params: str = ''


LINK_PARAMETERS = {
    'bind': Param('Bridge UDP address host:port of MAVLink instance 0 (instance k: port + 2 k)'),
    'fc_address': Param("FC UDP address host:port of instance 0 (instance k: port + 2 k); the "
                        "FC's frames are taken from there only ('' = the FC known by its ids)"),
    'tcp_bind': Param("Bridge TCP server address host:port of instance 0 (instance k: port + "
                      "k); '' = 127.0.0.1:4560, + px4_instance for PX4"),
    'transport': Param('MAVLink transport of the bridges of built-in and external FCs: udp, or '
                       'tcp (a TCP server); PX4: tcp', choices=TRANSPORTS),
    'autostart': Param('Start the mission at start: PX4 and external FCs are armed and started '
                       "once they accepted it and report ready; a plane's autopilot RUNs its "
                       'flight plan'),
    'px4_instance': Param('PX4 SITL instance of the MAVLink instance 0 when PX4 flies it [-] '
                          '(instance k: + k)', 0, MAX_PX4_INSTANCE),
    'mission_link': Param("UDP host:port of the FC's MAVLink instance taking the mission "
                          "(instance k: port + k); '' = the HIL link, or PX4's payload link "
                          '127.0.0.1:(14280 + its instance)'),
    'mission_bind': Param("Our UDP host:port on the mission link (instance k: port + k); '' = "
                          'an ephemeral port, or with PX4 127.0.0.1:(14030 + its instance)'),
    'px4_params': Param("PX4 parameters set before the mission (config/px4 name or path); '' "
                        "= by vehicle (a plane's c172r, a deck landing's deck_landing)"),
}


def px4_params(member: Member, given: str = '') -> str:
    """The PX4 parameter file (config/px4) a PX4-flown member gets, '' if none.

    given: the launch's px4_params ('' = by vehicle). By vehicle: a quad whose mission lands
    on a deck: deck_landing (LNDMC_XY_VEL_MAX over the boat's speed, LTEST_MODE 0,
    PLD_HACC_RAD, PLD_SRCH_TOUT); else its kind's (its kind.yaml's px4_params: a plane's
    airframe's, c172r).
    """
    if given:
        return given
    if any(it.deck for it in member.scenario.mission):
        return 'deck_landing'
    return info(member.kind).px4_params


def member_links(member: Member, base: LinkBase) -> Dict[str, object]:
    """The bridge link parameters of a world's MAVLink vehicle: its instance's, its FC's id.

    UDP to a built-in or external FC: the ports + 2 k (transport as given), the FC's system id
    k + 1; PX4: TCP, its instance's ports and ids (module docstring), its parameter file.
    Autostart (arm, start the mission) for PX4 and external FCs only: the built-in FC starts
    its mission itself. ConfigError as member_ports.
    """
    px4 = member.controller == 'px4'
    n = base.px4_instance
    if px4:
        tcp = base.tcp_bind or f'127.0.0.1:{PX4_TCP_PORT + n}'
        mission = base.mission_link or f'127.0.0.1:{PX4_PAYLOAD_PORT + n}'
        mission_bind = base.mission_bind or f'127.0.0.1:{PX4_PAYLOAD_REMOTE + n}'
    else:
        tcp = base.tcp_bind or f'127.0.0.1:{PX4_TCP_PORT}'
        mission, mission_bind = base.mission_link, base.mission_bind
    out: Dict[str, object] = dict(member_ports(
        member.link, bind=base.bind, fc_address=base.fc_address, tcp_bind=tcp,
        mission_link=mission, mission_bind=mission_bind, fc_system_id=n + 1 if px4 else 1))
    out['transport'] = 'tcp' if px4 else base.transport
    out['autostart'] = base.autostart and member.controller != 'builtin'
    out['fc_param_file'] = px4_params(member, base.px4_params) if px4 else ''
    return out
