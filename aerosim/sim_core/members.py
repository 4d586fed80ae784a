"""Who flies in a world of several kinds: each vehicle's kind, controller, name and scenario.

A world (sim_world) flies the scenario's `vehicles:` list, which may mix kinds: each entry its
kind, its controller (sim_core.kinds: a quad's built-in FC, PX4 or an external FC; a plane's
autopilot, built-in FC or PX4; a boat's waypoint controller or DUNE over IMC), its vehicle
file, start and mission. A scenario without a list flies vehicles:=N copies of its one
vehicle, placed as a fleet's (sim_core.fleet.member_scenarios).

Names: the kind's prefix and the vehicle's count within its kind (quad0, quad1, plane0,
boat0), so adding a boat never renames a quad. The MAVLink-controlled vehicles are numbered
apart (`link`): vehicle with link k gets the ports and system ids of instance k
(sim_core.fleet.member_ports), as PX4 SITL's instance k. Pure: no rclpy.
"""

from dataclasses import dataclass, replace
from typing import Dict, List, Tuple

from sim_core.errors import ConfigError
from sim_core.fleet import fleet_size, member_scenarios
from sim_core.kinds import VehicleKind, info, kind_of
from sim_core.scenario import Scenario


@dataclass(frozen=True)
class Member:
    """One vehicle of a world."""

    index: int                  # its place in the world (the order of the vehicles: list)
    name: str                   # namespace without '/': quad0, plane0, boat0, ...
    kind: VehicleKind
    controller: str             # one of info(kind).controllers
    scenario: Scenario          # as this vehicle sees it: start, speed, vehicle file, mission
    link: int = -1              # its MAVLink instance (ports, system ids), -1: not over MAVLink
    start_on: str = ''          # starts resting on the deck of this member (sim_world)
    cruise_speed_mps: float = 0.0   # a boat's waypoint speed [m/s]; 0 = its controller's default

    @property
    def over_mavlink(self) -> bool:
        """Its controller is reached over the MAVLink HIL bridge."""
        return self.link >= 0


def world_members(scenario: Scenario, n: int = 0) -> Tuple[Member, ...]:
    """The vehicles of a world: the scenario's `vehicles:` list, or n copies of its vehicle.

    n: 0 = as many as the scenario lists (or one); ConfigError as fleet_size.
    """
    n = fleet_size(scenario, n)
    counts: Dict[VehicleKind, int] = {}
    links = 0
    out: List[Member] = []
    scenarios = member_scenarios(scenario, n)      # starts, vehicle files, missions, checks
    starts = [e.start_on for e in scenario.fleet] if scenario.fleet else [''] * n
    cruise = [e.cruise_speed_mps for e in scenario.fleet] if scenario.fleet else [0.0] * n
    if scenario.fleet:
        views = [(kind_of(e.kind), e.controller, replace(
            sc, vehicle_kind=e.kind, initial_speed_mps=e.initial_speed_mps))
            for e, sc in zip(scenario.fleet, scenarios)]
    else:
        views = [(kind_of(scenario.vehicle_kind), '', sc) for sc in scenarios]
    for i, (kind, controller, sc) in enumerate(views):
        k = info(kind)
        controller = controller or k.controllers[0]
        if controller not in k.controllers:
            raise ConfigError(f'vehicles[{i}].controller: a {kind.value} is flown by one of '
                              f'{", ".join(k.controllers)}, got {controller!r}')
        count = counts.get(kind, 0)
        counts[kind] = count + 1
        link = -1
        if controller in k.mavlink:
            link, links = links, links + 1
        out.append(Member(i, f'{k.prefix}{count}', kind, controller, sc, link, starts[i],
                          cruise[i]))
    return tuple(out)
