"""The parameters of dynamics_node, plane_node and usv_node as data (pure, no rclpy).

Each node reads its own frozen config with sim_ros.params.read_config from the table here
(the one configuration style), after the time source's (sim_core.stepper.PARAMETERS).
Ranges come from the cores: the fleet size from sim_core.scenario, the boat's gains from
usv_control, the display's HSI modes from pfd.
"""

from dataclasses import dataclass

from sim_core.config import Param
from sim_core.errors import ConfigError
from sim_core.scenario import MAX_FLEET
from sim_dynamics.core.pfd import HSI_MODES
from sim_dynamics.core.usv_control import HEADING_GAIN_RANGE, SPEED_GAIN_RANGE

MAX_DECIMATED_RATE_HZ = 1000.0      # sim
MAX_HOLD_S = 3600.0                 # wall
MIN_ALTIMETER_INHG, MAX_ALTIMETER_INHG = 25.0, 32.0


@dataclass(frozen=True)
class DynamicsNodeConfig:
    """dynamics_node's own parameters (the multirotor or a fleet of them)."""

    vehicle_params: str = ''
    vehicles: int = 1
    vehicle_prefix: str = 'quad'
    fleet_start_timeout_s: float = 60.0


DYNAMICS_PARAMETERS = {
    'vehicle_params': Param('Vehicle YAML overriding the scenario (path or name in '
                            'config/vehicles); empty = from the scenario'),
    'vehicles': Param(f'Vehicles in this simulation [-], 1..{MAX_FLEET}; 0 = as many as the '
                      "scenario's vehicles: list. 2 or more: a fleet, vehicle i in namespace "
                      '/<vehicle_prefix><i>', 0, MAX_FLEET),
    'vehicle_prefix': Param('Namespace prefix of the vehicles of a fleet (quad -> /quad0, '
                            '/quad1)'),
    'fleet_start_timeout_s': Param(
        "A fleet in HIL (hil_plant): sim time stays at 0 until every vehicle's flight "
        'controller is heard, at most this long [s] (wall); then it starts without the '
        'missing ones. 0 = start at once', 0.0, MAX_HOLD_S),
}


@dataclass(frozen=True)
class PlaneNodeConfig:
    """plane_node's own parameters (the aircraft and its displays)."""

    aircraft_params: str = ''
    pfd_rate_hz: float = 50.0
    effector_rate_hz: float = 20.0
    altimeter_setting_inhg: float = 29.92
    hsi_mode: str = 'gps'

    def __post_init__(self):
        """Refuse an HSI mode the display does not have."""
        if self.hsi_mode not in HSI_MODES:
            raise ConfigError(f'hsi_mode: must be one of {", ".join(HSI_MODES)}, got '
                              f'{self.hsi_mode!r}')


PLANE_PARAMETERS = {
    'aircraft_params': Param('Aircraft YAML overriding the scenario (path or name in '
                             'config/aircraft); empty = from the scenario'),
    'pfd_rate_hz': Param('flight_display rate [Hz] (sim); 0 = every step', 0.0,
                         MAX_DECIMATED_RATE_HZ),
    'effector_rate_hz': Param('effector_states/* rate [Hz] (sim); 0 = every step', 0.0,
                              MAX_DECIMATED_RATE_HZ),
    'altimeter_setting_inhg': Param('PFD altimeter setting [inHg] (29.92 = standard)',
                                    MIN_ALTIMETER_INHG, MAX_ALTIMETER_INHG),
    'hsi_mode': Param('PFD HSI mode: gps, vor1 or vor2'),
}


@dataclass(frozen=True)
class UsvNodeConfig:
    """usv_node's own parameters (the boat and its holds' gains, live)."""

    boat_params: str = ''
    tas2acc_pgain: float = 0.5          # 1/s
    bank2p_pgain: float = 0.8           # 1/s


USV_PARAMETERS = {
    'boat_params': Param('Boat YAML overriding the scenario (path or name in config/boats); '
                         'empty = from the scenario'),
    'tas2acc_pgain': Param('Speed hold: commanded acceleration per speed error [1/s] (IMC '
                           'DynamicsSimParam tas2acc_pgain)', *SPEED_GAIN_RANGE, live=True),
    'bank2p_pgain': Param('Heading hold: commanded yaw rate per heading error [1/s] (IMC '
                          'DynamicsSimParam bank2p_pgain)', *HEADING_GAIN_RANGE, live=True),
}
# usv_node's live gains: parameter -> HeadingSpeedControl attribute
USV_GAINS = {'tas2acc_pgain': 'speed_gain', 'bank2p_pgain': 'heading_gain'}
