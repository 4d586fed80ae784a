"""Pitot-static airspeed sensor: differential pressure of the air flow along the body x axis.

The relative wind is the velocity over ground minus the wind (ENU), seen in the body frame;
its forward component u gives the differential pressure 0.5 rho u |u| (incompressible, as
PX4's own simulated sensor: src/modules/simulation/sensor_airspeed_sim/SensorAirspeedSim.cpp
at v1.16, `0.005f * air_density * airspeed_body_x^2` hPa), rho from the ISA at the altitude.
White noise of DIFF_PRESSURE_NOISE_PA per sample (an MS4525DO-class sensor); a multirotor has
no pitot tube: the suite samples this for planes only.
"""

import numpy as np

from sim_core.frames import quat_rotate_inverse
from sim_sensors.core.barometer import R_AIR, isa_pressure, isa_temperature

DIFF_PRESSURE_NOISE_PA = 0.5


def air_density(alt_msl_m: float) -> float:
    """ISA air density [kg/m^3] at altitude [m]."""
    return isa_pressure(alt_msl_m) / (R_AIR * isa_temperature(alt_msl_m))


class AirspeedModel:
    """Differential pressure [Pa] and the air's temperature [K] from the true state."""

    def __init__(self, wind_enu, rng: np.random.Generator, noise_pa=DIFF_PRESSURE_NOISE_PA):
        """wind_enu: the air's velocity over ground [m/s]; rng: the suite's noise source."""
        self.wind = np.asarray(wind_enu, dtype=float)
        self.rng = rng
        self.noise_pa = noise_pa

    def sample(self, alt_msl_m: float, v_enu, q_enu_flu):
        """(differential pressure [Pa], temperature [K]) at this state."""
        u = float(quat_rotate_inverse(q_enu_flu, np.asarray(v_enu, dtype=float) - self.wind)[0])
        dp = 0.5 * air_density(alt_msl_m) * u * abs(u)
        if self.noise_pa > 0.0:
            dp += self.noise_pa * float(self.rng.standard_normal())
        return dp, isa_temperature(alt_msl_m)
