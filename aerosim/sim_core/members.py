"""Who flies in a world of several kinds: each vehicle's kind, controller, name and scenario.

A world (sim_world) flies the scenario's `vehicles:` list, which may mix kinds: each entry its
kind, its controller (sim_core.kinds: a quad's built-in FC, PX4 or an external FC; a plane's
autopilot, built-in FC or PX4; a boat's waypoint controller or DUNE over IMC), its vehicle
file, start and mission. A scenario without a list flies vehicles:=N copies of its one
vehicle, placed as a fleet's (sim_core.fleet.member_scenarios).

Names: the kind's prefix and the vehicle's count within its kind (quad0, quad1, plane0,
boat0), so adding a boat never renames a quad; or, given a `namespace` (a preset's: quad,
plane, usv), that name for a world of one vehicle and <namespace><i> for vehicle i of several
(quad0, quad1: a fleet as sim_quad_hil names it). A world's `controller` (the launch argument:
every vehicle's controller, '' = each its own) overrides the scenario's for every vehicle of a
kind it flies, and is refused for a kind it cannot fly. The vehicles whose controller is
reached over a link are numbered apart: `link` over the MAVLink ones (vehicle with link k gets
the ports and system ids of instance k, sim_core.fleet.member_ports, as PX4 SITL's instance
k), `answers` over every one answering each step from outside the world's step (MAVLink, or a
ROS node on its effector_command topic: the lockstep gate's members). Pure: no rclpy.
"""

from dataclasses import dataclass, replace
from typing import Dict, List, Tuple

from sim_core.config import Param
from sim_core.errors import ConfigError
from sim_core.fleet import fleet_size, member_scenarios
from sim_core.kinds import TOPIC_CONTROLLERS, info, kind_of
from sim_core.scenario import MAX_FLEET, Scenario, load_scenario


@dataclass(frozen=True)
class Member:
    """One vehicle of a world."""

    index: int                  # its place in the world (the order of the vehicles: list)
    name: str                   # namespace without '/': quad0, plane0, boat0, ...
    kind: str                   # its kind's name (sim_core.kinds)
    controller: str             # one of info(kind).controllers
    scenario: Scenario          # as this vehicle sees it: start, speed, vehicle file, mission
    link: int = -1              # its MAVLink instance (ports, system ids), -1: not over MAVLink
    start_on: str = ''          # starts resting on the deck of this member (sim_world)
    cruise_speed_mps: float = 0.0   # a waypoint follower's speed [m/s]; 0 = its default
    answers: int = -1           # its lockstep gate member (a link's or a topic's), -1: none

    @property
    def over_mavlink(self) -> bool:
        """Its controller is reached over the MAVLink HIL bridge."""
        return self.link >= 0

    @property
    def over_topic(self) -> bool:
        """Its controller is any ROS node publishing its effector_command (no bridge)."""
        return self.controller in TOPIC_CONTROLLERS


def world_members(scenario: Scenario, n: int = 0, namespace: str = '',
                  controller: str = '') -> Tuple[Member, ...]:
    """The vehicles of a world: the scenario's `vehicles:` list, or n copies of its vehicle.

    n: 0 = as many as the scenario lists (or one); ConfigError as fleet_size. namespace: the
    vehicles' names ('' = kind prefix and count; see the module docstring). controller: every
    vehicle's controller ('' = the scenario's; ConfigError naming `controller` for a kind it
    does not fly).
    """
    n = fleet_size(scenario, n)
    namespace = namespace.strip('/')
    if namespace and not namespace.replace('_', 'a').isalnum():
        raise ConfigError(f'namespace: a ROS name (letters, digits, _), got {namespace!r}')
    counts: Dict[str, int] = {}
    links = answering = 0
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
    for i, (kind, own, sc) in enumerate(views):
        k = info(kind)
        if controller:
            if controller not in k.controllers:
                raise ConfigError(f'controller: a {kind} is flown by one of '
                                  f'{", ".join(k.controllers)}, not {controller!r} '
                                  f'(vehicle {i} of scenario {scenario.name})')
            own = controller
        own = own or k.controllers[0]
        if own not in k.controllers:
            raise ConfigError(f'vehicles[{i}].controller: a {kind} is flown by one of '
                              f'{", ".join(k.controllers)}, got {own!r}')
        count = counts.get(kind, 0)
        counts[kind] = count + 1
        link = gate = -1
        if own in k.mavlink:
            link, links = links, links + 1
        if own in k.mavlink or own in TOPIC_CONTROLLERS:
            gate, answering = answering, answering + 1
        name = (namespace if n == 1 else f'{namespace}{i}') if namespace else \
            f'{k.prefix}{count}'
        out.append(Member(i, name, kind, own, sc, link, starts[i], cruise[i], gate))
    return tuple(out)


@dataclass(frozen=True)
class WorldSource:
    """Which world a node serves: what every node deriving a world's vehicles reads.

    The scenario file and the world's vehicles, namespace and controller (the launch's, as
    world_node reads them): world_members of the same values gives every node the same
    members, names and links.
    """

    scenario_file: str = 'harbour_ops'
    vehicles: int = 0
    vehicle_namespace: str = ''
    controller: str = ''

    def members(self) -> Tuple[Member, ...]:
        """The world's vehicles (ConfigError as world_members)."""
        return world_members(load_scenario(self.scenario_file), self.vehicles,
                             self.vehicle_namespace, self.controller)


@dataclass(frozen=True)
class MemberSource(WorldSource):
    """One vehicle of a world (a node serving it: its sensors, camera, bridge)."""

    vehicle_index: int = 0

    def member(self) -> Member:
        """The served vehicle; ConfigError if the world has no vehicle vehicle_index."""
        ms = self.members()
        if not 0 <= self.vehicle_index < len(ms):
            raise ConfigError(f'vehicle_index: {self.vehicle_index}, but the world has '
                              f'{len(ms)} vehicle(s) (0-based)')
        return ms[self.vehicle_index]


def world_source_parameters(verb: str) -> dict:
    """WorldSource's table (sim_core.config.Param rows); verb: what the node does ('drawn')."""
    return {
        'scenario_file': Param('Scenario YAML (path, or name in config/scenarios)'),
        'vehicles': Param(f'Vehicles {verb} [-], 1..{MAX_FLEET}; 0 = as many as the '
                          "scenario's vehicles: list (or its one vehicle), as the world's",
                          0, MAX_FLEET),
        'vehicle_namespace': Param("The vehicles' names, as the world's ('' = each kind's "
                                   'prefix and count)'),
        'controller': Param("Every vehicle's controller, as the world's ('' = each its own)"),
    }


def member_source_parameters(verb: str) -> dict:
    """MemberSource's table: WorldSource's and vehicle_index."""
    return {**world_source_parameters(verb),
            'vehicle_index': Param(f'The vehicle {verb} (its index in the world) [-]', 0,
                                   MAX_FLEET - 1)}
