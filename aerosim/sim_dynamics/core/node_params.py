"""The parameters of a world vehicle's own node as data (pure, no rclpy): a plane's, a boat's.

A plane's displays (/<name>/plane_node) and a boat's holds' gains (/<name>/usv_node), read
with sim_ros.params.read_config from the tables here (the one configuration style). Ranges
come from the cores: the boat's gains from usv_control, the display's HSI modes from pfd.
"""

from dataclasses import dataclass

from sim_core.config import Param
from sim_core.errors import ConfigError
from sim_dynamics.core.pfd import HSI_MODES
from sim_dynamics.core.usv_control import HEADING_GAIN_RANGE, SPEED_GAIN_RANGE

MAX_DECIMATED_RATE_HZ = 1000.0      # sim
MIN_ALTIMETER_INHG, MAX_ALTIMETER_INHG = 25.0, 32.0


@dataclass(frozen=True)
class PlaneNodeConfig:
    """A plane's own node's parameters (/<name>/plane_node: its displays)."""

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
    'pfd_rate_hz': Param('flight_display rate [Hz] (sim); 0 = every step', 0.0,
                         MAX_DECIMATED_RATE_HZ),
    'effector_rate_hz': Param('effector_states/* rate [Hz] (sim); 0 = every step', 0.0,
                              MAX_DECIMATED_RATE_HZ),
    'altimeter_setting_inhg': Param('PFD altimeter setting [inHg] (29.92 = standard)',
                                    MIN_ALTIMETER_INHG, MAX_ALTIMETER_INHG),
    'hsi_mode': Param('PFD HSI mode: gps, vor1 or vor2'),
}


@dataclass(frozen=True)
class UsvGainsConfig:
    """A boat's holds' gains (its /<name>/usv_node in a world, live)."""

    tas2acc_pgain: float = 0.5          # 1/s
    bank2p_pgain: float = 0.8           # 1/s


USV_GAINS_PARAMETERS = {
    'tas2acc_pgain': Param('Speed hold: commanded acceleration per speed error [1/s] (IMC '
                           'DynamicsSimParam tas2acc_pgain)', *SPEED_GAIN_RANGE, live=True),
    'bank2p_pgain': Param('Heading hold: commanded yaw rate per heading error [1/s] (IMC '
                          'DynamicsSimParam bank2p_pgain)', *HEADING_GAIN_RANGE, live=True),
}
# a boat's live gains: parameter -> HeadingSpeedControl attribute
USV_GAINS = {'tas2acc_pgain': 'speed_gain', 'bank2p_pgain': 'heading_gain'}
