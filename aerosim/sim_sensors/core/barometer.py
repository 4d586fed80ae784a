"""Barometer: International Standard Atmosphere (troposphere) pressure and temperature."""

from dataclasses import dataclass, field
import math

import numpy as np

from sim_sensors.core.noise import NoiseParams, NoisyChannel

P0 = 101325.0          # Pa, sea-level standard pressure
T0 = 288.15            # K, sea-level standard temperature
LAPSE = 0.0065         # K/m, tropospheric lapse rate
G0 = 9.80665           # m/s^2
R_AIR = 287.05287      # J/(kg*K), specific gas constant of dry air
_EXP = G0 / (R_AIR * LAPSE)   # ~5.2559


def isa_pressure(alt_m: float) -> float:
    """Static pressure [Pa] at geopotential altitude alt_m [m] (valid below 11 km)."""
    return P0 * (1.0 - LAPSE * alt_m / T0) ** _EXP


def isa_temperature(alt_m: float) -> float:
    """Static temperature [K] at altitude alt_m [m]."""
    return T0 - LAPSE * alt_m


def isa_altitude(pressure_pa: float) -> float:
    """Inverse of isa_pressure: pressure altitude [m]."""
    return T0 / LAPSE * (1.0 - (pressure_pa / P0) ** (1.0 / _EXP))


# White pressure noise [Pa/sqrt(Hz)] that gives 1 Pa RMS per sample at the default 50 Hz, no
# drift: PX4's own simulated barometer (src/modules/simulation/sensor_baro_sim/
# SensorBaroSim.cpp at v1.16: `abs_pressure_noise = 1.f * y1; // 1 Pa RMS noise`, drift rate
# 0). (Until 2026-11 this was 1 Pa/sqrt(Hz) plus a 0.5 Pa/sqrt(s) walk: ~7 Pa per sample.)
BARO_NOISE_DENSITY = 1.0 / math.sqrt(50.0)


@dataclass(frozen=True)
class BaroParams:
    """Barometer rate and pressure noise [Pa]: by default 1 Pa RMS per sample, no drift."""

    rate_hz: float = 50.0
    noise: NoiseParams = field(default_factory=lambda: NoiseParams(BARO_NOISE_DENSITY, 0.0, 0.0))
    temperature_noise_std: float = 0.0   # K


class BaroModel:
    """Pressure [Pa], temperature [K] and the pressure altitude [m] of the noisy pressure."""

    def __init__(self, params: BaroParams, rng: np.random.Generator):
        """Noise draws from rng."""
        self.params = params
        self._rng = rng
        self._ch = NoisyChannel(params.noise, params.rate_hz, rng, shape=1)

    def sample(self, alt_msl_m: float):
        """Return (pressure Pa, temperature K, pressure altitude m) at altitude alt_msl_m."""
        p = float(self._ch.apply([isa_pressure(alt_msl_m)])[0])
        t = isa_temperature(alt_msl_m)
        if self.params.temperature_noise_std > 0.0:
            t += float(self._rng.normal(0.0, self.params.temperature_noise_std))
        return p, t, isa_altitude(p)
