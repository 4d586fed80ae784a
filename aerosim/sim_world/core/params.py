"""world_node's configuration as data (pure): its vehicles and how long the clock waits.

Each is a frozen dataclass (the defaults) and a table of sim_core.config.Param (description
with units, range, choices) that ``sim_ros.params.read_config`` declares; the time source's
parameters are SimTimeNode's (sim_core.stepper), the MAVLink links' sim_world.core.links',
the judge's sim_report.core.params'.
"""

from dataclasses import dataclass

from sim_core.config import Param
from sim_core.scenario import MAX_FLEET

MAX_FLEET_START_S = 3600.0      # s (wall), the longest wait for a fleet's FCs


@dataclass(frozen=True)
class WorldConfig:
    """The vehicles of the world, and how long sim time waits for their FCs."""

    vehicles: int = 0
    vehicle_namespace: str = ''
    controller: str = ''
    fleet_start_timeout_s: float = 60.0
    sensor_topics: bool = True


PARAMETERS = {
    'vehicles': Param(f"Vehicles in the world [-], 0..{MAX_FLEET}: 0 = the scenario's "
                      "vehicles: list (any mix of kinds) or its one vehicle; N: copies of the "
                      "scenario's one vehicle", 0, MAX_FLEET),
    'vehicle_namespace': Param("The vehicles' names: '' = each kind's prefix and count (quad0, "
                               'plane0, boat0); a name: that name for one vehicle, <name><i> '
                               'for vehicle i of several'),
    'controller': Param("Every vehicle's controller, overriding the scenario's ('' = each its "
                        'own; refused for a kind it cannot fly)'),
    'fleet_start_timeout_s': Param(
        "Sim time stays at 0 until every MAVLink vehicle's flight controller is ready to fly "
        'its mission, at most this long [s] (wall); then it starts without the missing ones. '
        '0 = start at once', 0.0, MAX_FLEET_START_S),
    'sensor_topics': Param('Publish the ROS sensor topics of the vehicles that carry the '
                           "sensor suite (world_plant: a MAVLink vehicle's from its bridge, the "
                           "others' from a sensors_node composed for each)"),
}
