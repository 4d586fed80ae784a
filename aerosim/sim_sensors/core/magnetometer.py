"""Magnetometer: the WMM Earth field at the scenario origin, rotated into the body frame.

The field comes from the World Magnetic Model (``pygeomag``) evaluated once at the origin and the
scenario date; it is held constant over the (small) area of a simulation.
"""

from dataclasses import dataclass, field

import numpy as np
from pygeomag import GeoMag

from sim_core.frames import quat_rotate_inverse
from sim_core.geodesy import GeoOrigin
from sim_sensors.core.noise import NoiseParams, NoisyChannel

NT_TO_T = 1e-9


def earth_field_enu(origin: GeoOrigin, decimal_year: float) -> np.ndarray:
    """WMM field at the origin, world ENU [T], shape (3,)."""
    r = GeoMag().calculate(glat=origin.lat_deg, glon=origin.lon_deg, alt=origin.alt_m / 1000.0,
                           time=decimal_year)
    # pygeomag: x north, y east, z down [nT]
    return np.array([r.y, r.x, -r.z]) * NT_TO_T


@dataclass(frozen=True)
class MagParams:
    """Magnetometer rate and noise [T].

    Defaults from PX4 SITL's Gazebo magnetometer plugin: noise density 0.4 mG/sqrt(Hz),
    bias random walk 6.4 uG/sqrt(s) (1 G = 1e-4 T).
    """

    rate_hz: float = 100.0
    noise: NoiseParams = field(default_factory=lambda: NoiseParams(4e-8, 0.0, 6.4e-10))


class MagModel:
    """Body-frame magnetic flux density [T] = R_enu_flu^T B_enu + noise."""

    def __init__(self, params: MagParams, field_enu, rng: np.random.Generator):
        """field_enu: Earth field, world ENU [T], shape (3,)."""
        self.params = params
        self.field_enu = np.asarray(field_enu, dtype=float)
        self._ch = NoisyChannel(params.noise, params.rate_hz, rng)

    def sample(self, q_enu_flu):
        """Return the measured field [T], body FLU, shape (3,)."""
        return self._ch.apply(quat_rotate_inverse(q_enu_flu, self.field_enu))
