"""world_node's configuration as data (pure): its own parameters and its MAVLink links.

Each is a frozen dataclass (the defaults) and a table of sim_core.config.Param (description
with units, range, choices) that ``sim_ros.params.read_config`` declares; the time source's
parameters are SimTimeNode's.
"""

from dataclasses import dataclass

from sim_core.config import Param
from sim_core.scenario import MAX_FLEET

TRANSPORTS = ('udp', 'tcp')
MAX_FLEET_START_S = 3600.0      # s (wall), the longest wait for a fleet's FCs


@dataclass(frozen=True)
class WorldConfig:
    """The vehicles of the world, and how long sim time waits for their FCs."""

    vehicles: int = 0
    fleet_start_timeout_s: float = 60.0


PARAMETERS = {
    'vehicles': Param(f"Vehicles in the world [-], 0..{MAX_FLEET}: 0 = the scenario's "
                      "vehicles: list (any mix of kinds) or its one vehicle; N: copies of the "
                      "scenario's one vehicle", 0, MAX_FLEET),
    'fleet_start_timeout_s': Param(
        "Sim time stays at 0 until every MAVLink vehicle's flight controller is ready to fly "
        'its mission, at most this long [s] (wall); then it starts without the missing ones. '
        '0 = start at once', 0.0, MAX_FLEET_START_S),
}


@dataclass(frozen=True)
class LinkBase:
    """The MAVLink links of instance 0; instance k's are moved from them (world_plant)."""

    bind: str = '127.0.0.1:14560'
    fc_address: str = '127.0.0.1:14561'
    tcp_bind: str = '127.0.0.1:4560'
    transport: str = 'udp'
    autostart: bool = True
    px4_mission_link: str = '127.0.0.1:14280'
    px4_mission_bind: str = '127.0.0.1:14030'


LINK_PARAMETERS = {
    'bind': Param('Bridge UDP address host:port of MAVLink instance 0 (instance k: port + 2 k)'),
    'fc_address': Param('FC UDP address host:port of instance 0 (instance k: port + 2 k)'),
    'tcp_bind': Param('Bridge TCP server address host:port of instance 0 (instance k: port + '
                      'k), transport tcp'),
    'transport': Param('MAVLink transport of the bridges of built-in and external FCs: udp, or '
                       'tcp (a TCP server); PX4: tcp', choices=TRANSPORTS),
    'autostart': Param('PX4 and external FCs: arm and start the mission once the FC accepted '
                       'it and reports ready'),
    'px4_mission_link': Param("PX4 SITL instance 0's onboard payload link host:port (the "
                              'mission, parameters, arming; instance k: port + k)'),
    'px4_mission_bind': Param('Our address host:port on the payload link of PX4 instance 0, '
                              'where PX4 sends (instance k: port + k)'),
}
