"""The IMC bridge's configuration (pure): ImcConfig, its PARAMETERS, and what they set up.

ImcConfig is read once by the node (sim_ros.params.read_config) from PARAMETERS, whose ranges
and choices sim_core.config.build checks without ROS; ImcBridgeCore checks a config it is
handed directly the same way (sim_core.config.checked), then parses what the table cannot
check (ImcSetup: addresses, ports, host names, the leak entities) into a ConfigError naming
the parameter. Reject kinds (REJECT_KINDS): imc_bridge.core.bridge.
"""

from dataclasses import dataclass
import math
import socket
from typing import Any, Dict, List, Optional, Tuple

import imcpy
import numpy as np

from imc_bridge.core import codec
from imc_bridge.core.acoustic import AcousticParams
from imc_bridge.core.control import (
    BROADCAST,
    LEVELS,
    RUDDER_SENSES,
    THRUSTER_SENSES,
    TIMESTAMP_MODES,
)
from imc_bridge.core.discovery import DISCOVERY_GROUP, parse_ports
from sim_core.config import Param
from sim_core.errors import ConfigError
from sim_core.link import parse_endpoint, parse_id_list
from sim_core.validate import vector

# DUNE's ASV leak entities (etc/asv/simulator.ini, Simulators.Leaks).
DUNE_ASV_LEAKS = ('Leak Sensor - Port Pontoon', 'Leak Sensor - Starboard Pontoon')
# IMC SystemType by lower-case name (usv, uuv, uav, ugv, ccu, ...), from imcpy.
SYSTEM_TYPES = {k.lower(): int(v) for k, v in imcpy.SystemType.__members__.items()}
FIN_SOURCES = ('ServoPosition', 'SetServoPosition')    # where an AUV's fins come from
REJECT_KINDS = codec.KINDS + ('not_for_us', 'value', 'unhandled', 'unavailable', 'busy')
# EGM96 geoid height at the harbour scenario's origin (41.185242 N, 8.706139 W) [m]: the 15'
# EGM96 grid (egm9615) bilinearly interpolated, as DUNE's Coordinates::WMM::height (the WMM
# library's MAG_GetGeoidHeight) gives it; GPSNavigation's "Convert Height to Geoid Height"
# subtracts that value from a GPS height above the ellipsoid.
HARBOUR_ORIGIN_DEG, HARBOUR_GEOID_HEIGHT_M = (41.185242, -8.706139), 55.46
GEOID_DEFAULT_RADIUS_M = 20e3   # farther from the harbour, the default is worth a warning
NOTE_PERIOD_S = 60.0            # an expected, frequent event is logged at most this often
Addr = Tuple[str, int]


@dataclass(frozen=True)
class ImcConfig:
    """The bridge's parameters, read once (units in the names; ranges in PARAMETERS)."""

    scenario_file: str = 'default'
    bind: str = '127.0.0.1:6003'
    peers: str = '127.0.0.1:6002'
    dynamic_peers: bool = True
    peer_timeout_s: float = 30.0
    system_id: int = 0x3F01
    entity_id: int = 1
    entity_label: str = 'Simulation Engine'
    system_name: str = 'aerosim-usv'
    system_type: str = 'usv'
    state_dst: int = BROADCAST
    state_dst_ent: int = 0xFF
    simulated_state_rate_hz: float = 10.0
    estimated_state_rate_hz: float = 5.0
    announce_period_s: float = 1.0
    announce_multicast: bool = True
    announce_hosts: Any = '127.0.0.1'
    discovery_ports: Any = '30100-30104'
    timestamps: str = 'utc'
    leak_entities: Tuple[str, ...] = DUNE_ASV_LEAKS
    thruster_id: int = 0
    rudder_servo_id: int = 0
    rudder_positive: str = 'port'
    thruster_positive: str = 'ahead'
    control_level: str = 'actuators'
    max_rudder_rad: float = math.pi / 2
    sound_speed_mps: float = 1500.0
    acoustic_range_m: float = 1000.0
    acoustic_loss: float = 0.0
    acoustic_frequency_khz: float = 25.0
    acoustic_source_level_db: float = 185.0
    acoustic_noise_level_db: float = 90.0
    acoustic_detection_snr_db: float = 10.0
    seed: int = 0
    origin_geoid_height_m: float = HARBOUR_GEOID_HEIGHT_M
    topside_position_enu: Tuple[float, ...] = (0.0, 0.0, 0.0)
    vehicle_node: str = 'usv_node'
    vehicle_file: str = ''
    fin_source: str = 'ServoPosition'
    warn_period_s: float = 2.0
    allow_system_ids: Any = ''
    control_from: str = 'peers'


PARAMETERS: Dict[str, Any] = {
    'scenario_file': ('Scenario YAML (origin, current)',),
    'bind': ('Our IMC UDP address host:port',),
    'peers': ("IMC peers that get our messages: host:port, comma-separated (DUNE listens on "
              "6002); '' = none",),
    'dynamic_peers': ('Also send to systems that send us Heartbeat/Announce',),
    'peer_timeout_s': ('Silence after which a dynamic peer is dropped [s]', 1.0, 3600.0),
    'system_id': ('Our IMC system id (address)', 1, 0xFFFE),
    'entity_id': ('IMC entity id of the simulation', 0, 0xFE),
    'entity_label': ('Label of entity_id',),
    'system_name': ('IMC system name (Announce)',),
    'system_type': Param('IMC system type', choices=tuple(SYSTEM_TYPES)),
    'state_dst': ('SimulatedState header dst (0xFFFF: any)', 0, 0xFFFF),
    'state_dst_ent': ('SimulatedState header dst_ent', 0, 0xFF),
    'simulated_state_rate_hz': ('SimulatedState rate [Hz] (sim)', 0.1, 1000.0),
    'estimated_state_rate_hz': ('EstimatedState rate [Hz] (sim); 0 = off', 0.0, 1000.0),
    'announce_period_s': ('Announce and Heartbeat period [s] (wall)', 0.1, 60.0),
    'announce_multicast': (f'Also send Announce to the IMC discovery group {DISCOVERY_GROUP} '
                           '(DUNE takes nothing from a system it has not discovered)',),
    'announce_hosts': ('Hosts whose discovery ports get our Announce unicast (a DUNE without a '
                       "multicast route), comma-separated; '' = none",),
    'discovery_ports': ("IMC discovery ports (DUNE's Transports.Discovery), e.g. "
                        '30100-30104',),
    'timestamps': Param("IMC timestamps: 'utc' (the UTC time when sent, for DUNE's logs and "
                        "Neptus), 'sim_utc' (UTC at start + sim time) or 'sim' (sim seconds)",
                        choices=TIMESTAMP_MODES),
    'leak_entities': ("Leak entity labels (LeakSimulation), DUNE's ASV ones by default",),
    'thruster_id': ('SetThrusterActuation id of the thruster', 0, 255),
    'rudder_servo_id': ('SetServoPosition id of the rudder', 0, 255),
    'rudder_positive': Param("Sense of a positive SetServoPosition: 'port' (bow to port: "
                             "DUNE's heading controller and plant) or 'starboard'",
                             choices=RUDDER_SENSES),
    'thruster_positive': Param('Sense of a positive SetThrusterActuation',
                               choices=THRUSTER_SENSES),
    'control_level': Param("IMC control level at start: 'actuators' (SetThrusterActuation/"
                           "SetServoPosition, DUNE's own controllers) or 'guidance' "
                           "(DesiredSpeed/DesiredHeading, our holds); a message of the other "
                           'level addressed to our system id switches', choices=LEVELS),
    'max_rudder_rad': ('Largest |SetServoPosition| accepted [rad]', 0.01, math.pi),
    'sound_speed_mps': ('Sound speed [m/s]', 1300.0, 1700.0),
    'acoustic_range_m': ('Acoustic link range [m]', 1.0, 1e5),
    'acoustic_loss': ('Loss probability per leg [-], on top of the range-dependent loss',
                      0.0, 1.0),
    'acoustic_frequency_khz': ("Acoustic modem's carrier [kHz] (Thorp's absorption)", 0.1,
                               1000.0),
    'acoustic_source_level_db': ('Modem source level [dB re 1 uPa at 1 m]', 0.0, 250.0),
    'acoustic_noise_level_db': ('Noise level in the modem band [dB re 1 uPa]', 0.0, 200.0),
    'acoustic_detection_snr_db': ('SNR at which half the frames decode [dB]', -50.0, 100.0),
    'seed': ('Random seed (acoustic losses)', 0, 2**31 - 1),
    'origin_geoid_height_m': ('Geoid (EGM96) height above the WGS-84 ellipsoid at the scenario '
                              'origin [m]: IMC heights are above the ellipsoid = the origin '
                              'altitude (mean sea level) + this. Default: the harbour origin '
                              "(55.46 m, the EGM96 grid DUNE's WMM library uses)",
                              -120.0, 100.0),
    'topside_position_enu': ('Position of the remote modem (senders of UASimulation) [m], '
                             'ENU',),
    'vehicle_node': ('Node whose tas2acc_pgain/bank2p_pgain DynamicsSimParam sets',),
    'fin_source': Param("An AUV's fins from 'ServoPosition' (DUNE's Simulators.Servos: where its "
                   'servos moved them, one set per SimulatedState; what VSIM takes) or '
                   "'SetServoPosition' (the allocator's commands: DUNE's UDP transport lets one "
                   'of the four through per second with the LAUV ini); the other is ignored',
                        choices=FIN_SOURCES),
    'vehicle_file': ("The vehicle's parameter file (set by the graph): an AUV's fins "
                     '(kinds/auv/params) take SetServoPosition by their servo ids, in rad as '
                     "DUNE's allocator and VSIM take them; '' or a boat: one rudder "
                     '(rudder_servo_id)',),
    'warn_period_s': ('Minimum period of repeated warnings [s]', 0.1, 600.0),
    'allow_system_ids': ('IMC systems (header src) whose messages are taken, comma-separated '
                         "(0x3F02 or 16130); '' = any. Others are counted as rejected_peer",),
    'control_from': ("Who may drive the vehicle and change the simulation over IMC "
                     '(SetThrusterActuation, SetServoPosition, ServoPosition, DesiredSpeed, '
                     'DesiredHeading, LeakSimulation, UASimulation, DynamicsSimParam): '
                     "'peers' (datagrams from a host:port of `peers`: DUNE's UDP transport "
                     "sends from its port, 6002), host:port comma-separated, or 'any'. Others "
                     'are counted as rejected_peer',),
}
ANY_TYPE = ('announce_hosts', 'discovery_ports', 'allow_system_ids')


class ImcSetup:
    """What an ImcConfig names, parsed; ConfigError naming the parameter if it cannot be.

    discovery_ports, announce_hosts (each an IPv4 address or a known host name),
    static_peers, allow_ids, controllers (the addresses control inputs are taken from, as
    datagrams show them; None = any), topside_ned (the remote modem, NED [m]), acoustic (its
    params).
    """

    def __init__(self, cfg: 'ImcConfig'):
        """Parse cfg (after the table's checks)."""
        try:
            self.discovery_ports = parse_ports(cfg.discovery_ports)
            self.announce_hosts: List[str] = [h.strip() for h in
                                              str(cfg.announce_hosts).split(',') if h.strip()]
            for h in self.announce_hosts:
                try:
                    socket.getaddrinfo(h, None, socket.AF_INET, socket.SOCK_DGRAM)
                except (OSError, UnicodeError):
                    raise ValueError(f'announce_hosts: {h!r} is not an IPv4 address or a '
                                     'known host name') from None
            top = vector(cfg.topside_position_enu, 'topside_position_enu', 3)     # [m]
            ends = (parse_endpoint(p, 'peers') for p in cfg.peers.split(',') if p.strip())
            self.static_peers: List[Addr] = [e for e in ends if e is not None]
            self.allow_ids = parse_id_list(cfg.allow_system_ids, 'allow_system_ids', 0, 0xFFFE)
            self.controllers = controllers(cfg.control_from, self.static_peers)
        except ValueError as exc:
            raise ConfigError(str(exc)) from exc
        self.topside_ned = np.array([top[1], top[0], -top[2]], dtype=float)
        self.acoustic = AcousticParams(
            sound_speed_mps=cfg.sound_speed_mps, max_range_m=cfg.acoustic_range_m,
            loss_probability=cfg.acoustic_loss, seed=cfg.seed,
            frequency_khz=cfg.acoustic_frequency_khz,
            source_level_db=cfg.acoustic_source_level_db,
            noise_level_db=cfg.acoustic_noise_level_db,
            detection_snr_db=cfg.acoustic_detection_snr_db)


def controllers(control_from: str, static_peers: List[Addr]) -> Optional[Tuple[Addr, ...]]:
    """The addresses control inputs are taken from (control_from); None = any. ValueError.

    Host names resolved, as the source address of a datagram shows them.
    """
    how = str(control_from).strip()
    if how == 'any':
        return None
    if how == 'peers':
        ends = static_peers
    else:
        ends = [e for e in (parse_endpoint(p, 'control_from') for p in how.split(','))
                if e is not None]
        if not ends:
            raise ValueError(f"control_from: 'peers', 'any' or host:port, comma-separated, got "
                             f'{control_from!r}')
    return tuple(_resolved(e) for e in ends)


def _resolved(addr: Addr) -> Addr:
    """(host, port) with the host as an IPv4 address (unchanged if it does not resolve)."""
    try:
        return socket.gethostbyname(addr[0]), addr[1]
    except (OSError, UnicodeError):
        return addr


def geoid_warning(cfg: 'ImcConfig', origin) -> str:
    """A warning if origin_geoid_height_m is the harbour's default far from the harbour; ''."""
    dlat, dlon = (math.radians(a - b) for a, b in zip((origin.lat_deg, origin.lon_deg),
                                                        HARBOUR_ORIGIN_DEG))
    far = 6371e3 * math.hypot(dlat, dlon * math.cos(math.radians(origin.lat_deg)))   # [m]
    if cfg.origin_geoid_height_m != HARBOUR_GEOID_HEIGHT_M or far <= GEOID_DEFAULT_RADIUS_M:
        return ''
    return (f"origin_geoid_height_m is the harbour origin's {HARBOUR_GEOID_HEIGHT_M} m, "
            f'but this origin is {far / 1e3:.0f} km away: IMC heights are off by the '
            'geoid difference; set origin_geoid_height_m (EGM96 at the origin, m)')
