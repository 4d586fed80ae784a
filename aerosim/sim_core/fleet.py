"""Several vehicles in one simulation (a fleet): who they are, where they start, what they fly.

A fleet comes from the scenario's `vehicles:` list (each vehicle its start pose, optionally its
vehicle file and its own mission), or from the launch argument vehicles:=N on a scenario of one
vehicle: N copies of it, each flying the scenario's mission moved with its start.

Their planned paths keep SEPARATION_M apart with the vehicles' clocks up to DRIFT_TOLERANCE_S
apart (sim_core.separation). A listed fleet that does not is refused: ConfigError naming the
two vehicles, the distance and the planned time. Copies are placed by the first of
COPY_LAYOUTS (copy i: the start + i x offset, its mission's altitudes + i x stagger) that keeps
their paths apart whatever their timing, else by the first that keeps them apart within the
drift tolerance. Copies 5 m apart east (the one layout before) share the default mission's
east and west legs: two real PX4s flying them 2-5 s apart collided there (issue 39).

A multirotor takes off straight up where it stands (the judge's and the built-in FC's reading),
and its takeoff items are placed there: PX4 flies on to a takeoff item's position after the
climb (navigator mission.cpp: the takeoff becomes a waypoint), and a takeoff item without
lat/lon is at the scenario origin, so a copy's PX4 flew back over the first vehicle's start.

Vehicle i lives in the namespace <prefix><i> (quad0, quad1, ...) and gets the links of
instance i (``member_ports``): like PX4 SITL, which runs instance i on TCP 4560 + i, its
MAVLink UDP ports + i and system id i + 1; our bridge of instance i is MAVLink system
OWN_SYSTEM_ID + i. Pure: no rclpy.
"""

from dataclasses import replace
import math
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

from sim_core.errors import ConfigError
from sim_core.kinds import info
from sim_core.scenario import MAX_FLEET, Scenario
from sim_core.separation import (
    DRIFT_TOLERANCE_S,
    SEPARATION_M,
    PlannedPath,
    closest_pair,
    comes_within,
    planned_path,
)

FLEET_SPACING_M = 5.0          # m, east, between copies of vehicles:=N where that keeps apart
MIN_SEPARATION_M = 2.0         # m, horizontal, between two vehicles' start positions
UDP_PORTS_PER_VEHICLE = 2      # the bridge's and the built-in FC's UDP ports move by 2 per vehicle
# Where copy i of vehicles:=N goes: ((east, north) start offset [m], altitude stagger [m]) per
# copy, tried in this order: the missions at their own altitudes first, FLEET_SPACING_M east
# first of all; offsets east, south-east, north-west, north, north-east (a mission's legs often
# run along one of these: another keeps off them), at 1, 2, 4 and 8 times; then the same with
# the copies 4, 6 and 8 m above each other (where their legs cross).
_COPY_OFFSETS_M = ((FLEET_SPACING_M, 0.0), (4.0, -4.0), (-4.0, 4.0), (0.0, FLEET_SPACING_M),
                   (4.0, 4.0))
COPY_LAYOUTS: Tuple[Tuple[Tuple[float, float], float], ...] = tuple(
    ((k * e, k * n), h) for h in (0.0, 4.0, 6.0, 8.0) for k in (1.0, 2.0, 4.0, 8.0)
    for e, n in _COPY_OFFSETS_M)
# Our (the bridge's) MAVLink system id for instance i: OWN_SYSTEM_ID + i, 51..82 for 32
# vehicles. The FCs are 1..33 (PX4 SITL instance i: i + 1, px4_instance 0..1; the built-in FC
# the same), a ground station 255 (QGroundControl) and MAVSDK 245: none of them in 51..82.
OWN_SYSTEM_ID = 51


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


def move_mission(mission: tuple, scenario: Scenario, offset_enu,
                 stagger_m: float = 0.0) -> tuple:
    """The mission with every positioned item moved by offset_enu (east, north) [m].

    takeoff too (a plane climbs out towards it; a multirotor's is placed where it stands,
    take_off_in_place); rtl is placed by the vehicle's own start already. stagger_m [m] is
    added to the altitude of each takeoff and waypoint (copies flying above each other).
    """
    if offset_enu[0] == 0.0 and offset_enu[1] == 0.0 and stagger_m == 0.0:
        return mission
    o = scenario.origin
    out = []
    for it in mission:
        if it.command in ('takeoff', 'waypoint', 'land'):
            lat, lon = it.lat_deg, it.lon_deg
            if offset_enu[0] != 0.0 or offset_enu[1] != 0.0:
                e, n, _ = o.geodetic_to_enu(it.lat_deg, it.lon_deg, o.alt_m)
                lat, lon, _ = o.enu_to_geodetic(e + offset_enu[0], n + offset_enu[1], 0.0)
            alt = it.alt_m if it.command == 'land' else it.alt_m + stagger_m
            it = replace(it, lat_deg=float(lat), lon_deg=float(lon), alt_m=alt)
        out.append(it)
    return tuple(out)


def take_off_in_place(mission: tuple, scenario: Scenario) -> tuple:
    """A multirotor's mission with each takeoff item placed where the vehicle is then.

    That is its start before the first item, else the point of the item before (rtl: the
    start). An item already there (within 1 cm) is kept as it is.
    """
    o = scenario.origin
    start = (float(scenario.initial_position_enu[0]), float(scenario.initial_position_enu[1]))
    here = start
    out = []
    for it in mission:
        if it.command == 'rtl':
            here = start
        else:
            e, n, _ = o.geodetic_to_enu(it.lat_deg, it.lon_deg, o.alt_m)
            if it.command != 'takeoff':
                here = (float(e), float(n))
            elif math.hypot(e - here[0], n - here[1]) > 0.01:
                lat, lon, _ = o.enu_to_geodetic(here[0], here[1], 0.0)
                it = replace(it, lat_deg=float(lat), lon_deg=float(lon))
        out.append(it)
    return tuple(out)


def _member(scenario: Scenario, start: tuple, yaw: float, vehicle_file: Path,
            mission: Optional[tuple], kind: str, stagger_m: float = 0.0) -> Scenario:
    """The scenario as one vehicle sees it (mission None: the scenario's, moved with start)."""
    base = scenario.initial_position_enu
    if mission is None:
        mission = move_mission(scenario.mission, scenario,
                               (start[0] - base[0], start[1] - base[1]), stagger_m)
    sc = replace(scenario, vehicle_file=vehicle_file, initial_position_enu=start,
                 initial_yaw_deg=yaw, mission=mission, fleet=())
    if info(kind).vertical:         # it takes off where it stands (a multirotor)
        sc = replace(sc, mission=take_off_in_place(mission, sc))
    return sc


def _copies(scenario: Scenario, n: int, offset, stagger_m: float) -> List[Scenario]:
    """N copies of the scenario's vehicle: copy i at start + i x offset, i x stagger_m up."""
    b = scenario.initial_position_enu
    return [_member(scenario, (b[0] + i * offset[0], b[1] + i * offset[1], b[2]),
                    scenario.initial_yaw_deg, scenario.vehicle_file, None,
                    scenario.vehicle_kind, i * stagger_m) for i in range(n)]


def _apart(paths: Sequence[PlannedPath], drift_s: float) -> bool:
    """Every two planned paths at least SEPARATION_M apart, their clocks up to drift_s apart.

    The first copy against each of the others first: a layout that fails mostly fails there.
    """
    order = [(0, j) for j in range(1, len(paths))] + [
        (i, j) for j in range(len(paths)) for i in range(1, j)]
    return not any(comes_within(paths[i], paths[j], SEPARATION_M, drift_s) for i, j in order)


def place_copies(scenario: Scenario, n: int) -> Tuple[Scenario, ...]:
    """N copies of the scenario's vehicle, placed by the first fitting COPY_LAYOUTS entry.

    First pass: apart whatever their timing; second: apart within DRIFT_TOLERANCE_S. ConfigError
    when no layout keeps them SEPARATION_M apart.
    """
    if n < 2:
        return tuple(_copies(scenario, n, (0.0, 0.0), 0.0))
    tried: Dict[int, List[PlannedPath]] = {}
    for drift in (math.inf, DRIFT_TOLERANCE_S):
        for k, (offset, stagger) in enumerate(COPY_LAYOUTS):
            if k not in tried:
                tried[k] = [planned_path(m) for m in _copies(scenario, n, offset, stagger)]
            if _apart(tried[k], drift):
                return tuple(_copies(scenario, n, offset, stagger))
    worst = closest_pair(tried[0])
    assert worst is not None
    raise ConfigError(
        f'vehicles: {n} copies of scenario {scenario.name} cannot be placed {SEPARATION_M:g} m '
        f'apart (sim_core.fleet.COPY_LAYOUTS; {FLEET_SPACING_M:g} m east: copies {worst[0]} and '
        f'{worst[1]} within {worst[2].distance_m:.2f} m at planned time {worst[2].t_s:.1f} s); '
        'give each vehicle its start and mission in a vehicles: list')


def member_scenarios(scenario: Scenario, n: int) -> Tuple[Scenario, ...]:
    """The scenario as each of the n vehicles sees it: its start, vehicle file and mission.

    ConfigError when two listed vehicles start closer than MIN_SEPARATION_M (horizontally) or
    their planned paths come closer than the scenario's separation_m (SEPARATION_M unless it
    says; 0: not checked) (sim_core.separation), naming both.
    """
    if not scenario.fleet:
        return place_copies(scenario, n)
    entries = scenario.fleet[:n]
    members = [_member(scenario, e.initial_position_enu, e.initial_yaw_deg, e.vehicle_file,
                       e.mission, e.kind) for e in entries]
    for j in range(n):
        for i in range(j):
            a, b = members[i].initial_position_enu, members[j].initial_position_enu
            d = math.hypot(a[0] - b[0], a[1] - b[1])
            if d < MIN_SEPARATION_M:
                raise ConfigError(
                    f'vehicles[{j}].initial_position_enu: {d:.2f} m from vehicles[{i}] '
                    f'(horizontally); starts must be at least {MIN_SEPARATION_M:g} m apart')
    least = SEPARATION_M if scenario.separation_m is None else scenario.separation_m
    worst = closest_pair([planned_path(m, e.kind) for m, e in zip(members, entries)]) \
        if least > 0.0 else None
    if worst is not None and worst[2].distance_m < least:
        i, j, ap = worst
        raise ConfigError(
            f'vehicles[{i}] and vehicles[{j}]: their planned paths come within '
            f'{ap.distance_m:.2f} m of each other at planned time {ap.t_s:.1f} s (allowing their '
            f'clocks {DRIFT_TOLERANCE_S:g} s apart: sim_core.separation); keep them at least '
            f'{least:g} m apart (separation_m: 0 stages a collision on purpose)')
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
                 mission_bind: str, fc_system_id: int, system_id: int = OWN_SYSTEM_ID) -> dict:
    """The bridge link parameters of vehicle i from those of vehicle 0.

    UDP to a built-in FC: both ports + 2 i (14560/14561, 14562/14563, ...); PX4's ports + i
    (TCP 4560 + i, its MAVLink instance's UDP ports + i) and system id + i (0, the first FC
    heard, stays 0); our own system id + i, so that a ground station on several links sees one
    system per vehicle (ConfigError if it leaves 1..255 or is the FC's).
    """
    k = UDP_PORTS_PER_VEHICLE * i
    fc = fc_system_id + i if fc_system_id else 0
    own = system_id + i
    if not 1 <= own <= 255:
        raise ConfigError(f'system_id: {system_id} + vehicle {i} = {own}, outside 1..255')
    if own == fc:
        raise ConfigError(f'system_id: vehicle {i} would be system {own}, its flight '
                          f"controller's (fc_system_id {fc_system_id} + {i})")
    return {'bind': offset_port(bind, k), 'fc_address': offset_port(fc_address, k),
            'tcp_bind': offset_port(tcp_bind, i), 'mission_link': offset_port(mission_link, i),
            'mission_bind': offset_port(mission_bind, i), 'fc_system_id': fc,
            'system_id': own}
