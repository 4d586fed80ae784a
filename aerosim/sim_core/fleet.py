"""Several vehicles in one simulation (a fleet): who they are, where they start, what they fly.

A fleet comes from the scenario's `vehicles:` list (each vehicle its start pose, optionally its
vehicle file and its own mission), or from the launch argument vehicles:=N on a scenario of one
vehicle: N copies of it, FLEET_SPACING_M apart towards the east, each flying the scenario's
mission moved with its start. Vehicle i lives in the namespace <prefix><i> (quad0, quad1, ...)
and gets the links of instance i: like PX4 SITL, which runs instance i on TCP 4560 + i, its
MAVLink UDP ports + i and system id i + 1 (``member_ports``). Pure: no rclpy.
"""

from dataclasses import replace
import math
from typing import List, Tuple

from sim_core.errors import ConfigError
from sim_core.scenario import MAX_FLEET, MissionItem, Scenario

FLEET_SPACING_M = 5.0          # m, east, between the copies of vehicles:=N
MIN_SEPARATION_M = 2.0         # m, horizontal, between two vehicles' start positions
UDP_PORTS_PER_VEHICLE = 2      # the bridge's and the built-in FC's UDP ports move by 2 per vehicle


def fleet_size(scenario: Scenario, requested: int) -> int:
    """How many vehicles fly: requested (vehicles:=N), 0 = as many as the scenario lists.

    ConfigError naming `vehicles` when the request cannot be met.
    """
    if isinstance(requested, bool) or not isinstance(requested, int):
        raise ConfigError(f'vehicles: a whole number 0..{MAX_FLEET}, got {requested!r}')
    if not 0 <= requested <= MAX_FLEET:
        raise ConfigError(f'vehicles: 1..{MAX_FLEET} (0 = as many as the scenario lists), got '
                          f'{requested}')
    listed = len(scenario.fleet)
    if requested == 0:
        return listed or 1
    if listed and requested > listed:
        raise ConfigError(f'vehicles: {requested} requested, but scenario {scenario.name} lists '
                          f'{listed} (its vehicles: list); give each one a start there')
    return requested


def move_mission(mission: tuple, scenario: Scenario, offset_enu) -> tuple:
    """The mission with every positioned item moved by offset_enu (east, north) [m].

    takeoff and rtl are placed by the vehicle's own start already.
    """
    if offset_enu[0] == 0.0 and offset_enu[1] == 0.0:
        return mission
    o = scenario.origin
    out = []
    for it in mission:
        if it.command in ('waypoint', 'land'):
            e, n, _ = o.geodetic_to_enu(it.lat_deg, it.lon_deg, o.alt_m)
            lat, lon, _ = o.enu_to_geodetic(e + offset_enu[0], n + offset_enu[1], 0.0)
            it = MissionItem(it.command, float(lat), float(lon), it.alt_m, it.hold_s,
                             it.acceptance_radius_m)
        out.append(it)
    return tuple(out)


def member_scenarios(scenario: Scenario, n: int) -> Tuple[Scenario, ...]:
    """The scenario as each of the n vehicles sees it: its start, vehicle file and mission."""
    base = scenario.initial_position_enu
    members: List[Scenario] = []
    for i in range(n):
        if scenario.fleet:
            e = scenario.fleet[i]
            start, yaw, vfile = e.initial_position_enu, e.initial_yaw_deg, e.vehicle_file
            mission = e.mission
        else:
            start = (base[0] + i * FLEET_SPACING_M, base[1], base[2])
            yaw, vfile, mission = scenario.initial_yaw_deg, scenario.vehicle_file, None
        if mission is None:
            mission = move_mission(scenario.mission, scenario,
                                   (start[0] - base[0], start[1] - base[1]))
        members.append(replace(scenario, vehicle_file=vfile, initial_position_enu=start,
                               initial_yaw_deg=yaw, mission=mission, fleet=()))
    for j in range(n):
        for i in range(j):
            a, b = members[i].initial_position_enu, members[j].initial_position_enu
            d = math.hypot(a[0] - b[0], a[1] - b[1])
            if d < MIN_SEPARATION_M:
                raise ConfigError(
                    f'vehicles[{j}].initial_position_enu: {d:.2f} m from vehicles[{i}] '
                    f'(horizontally); starts must be at least {MIN_SEPARATION_M:g} m apart')
    return tuple(members)


def member_name(prefix: str, i: int) -> str:
    """The namespace of vehicle i (without a leading slash): quad0, quad1, ..."""
    return f'{prefix.strip("/") or "vehicle"}{i}'


def offset_port(address: str, k: int) -> str:
    """'host:port' with the port moved by k; '' stays '' (ConfigError on a bad port)."""
    if not address or k == 0:
        return address
    host, sep, port = address.rpartition(':')
    try:
        p = int(port) + k
    except ValueError:
        raise ConfigError(f'address {address!r}: expected host:port') from None
    if not sep or not 1 <= p <= 65535:
        raise ConfigError(f'address {address!r} moved by {k}: port {p} outside 1..65535')
    return f'{host}:{p}'


def member_ports(i: int, bind: str, fc_address: str, tcp_bind: str, mission_link: str,
                 mission_bind: str, fc_system_id: int) -> dict:
    """The bridge link parameters of vehicle i from those of vehicle 0.

    UDP to a built-in FC: both ports + 2 i (14560/14561, 14562/14563, ...); PX4's ports + i
    (TCP 4560 + i, its MAVLink instance's UDP ports + i) and system id + i (0, the first FC
    heard, stays 0).
    """
    k = UDP_PORTS_PER_VEHICLE * i
    return {'bind': offset_port(bind, k), 'fc_address': offset_port(fc_address, k),
            'tcp_bind': offset_port(tcp_bind, i), 'mission_link': offset_port(mission_link, i),
            'mission_bind': offset_port(mission_bind, i),
            'fc_system_id': fc_system_id + i if fc_system_id else 0}
