"""WGS-84 geodesy around a scenario origin, via pymap3d (pure, no rclpy)."""

from dataclasses import dataclass
import math

import pymap3d

from sim_core.errors import ConfigError

# One knot (international nautical mile per hour) [m/s].
KNOT_MPS = 1852.0 / 3600.0


@dataclass(frozen=True)
class GeoOrigin:
    """Origin of the local tangent plane: the scenario's reference point.

    lat_deg, lon_deg: WGS-84 [deg]; alt_m: altitude [m]. aerosim uses alt_m both as height
    above the ellipsoid (pymap3d) and as altitude above mean sea level (barometer, MAVLink):
    the geoid undulation is neglected.
    """

    lat_deg: float
    lon_deg: float
    alt_m: float = 0.0

    def __post_init__(self):
        """Validate ranges."""
        for name, value, lim in (('lat_deg', self.lat_deg, 90.0),
                                 ('lon_deg', self.lon_deg, 180.0)):
            if not isinstance(value, (int, float)) or not math.isfinite(value) or abs(value) > lim:
                raise ConfigError(
                    f'origin.{name}: must be a number in [-{lim}, {lim}], got {value!r}')
        if not isinstance(self.alt_m, (int, float)) or not -1000.0 <= self.alt_m <= 20000.0:
            raise ConfigError(
                f'origin.alt_m: must be a number in [-1000, 20000] m, got {self.alt_m!r}')

    def enu_to_geodetic(self, e, n, u):
        """Local ENU [m] -> (lat deg, lon deg, alt m above ellipsoid)."""
        return pymap3d.enu2geodetic(e, n, u, self.lat_deg, self.lon_deg, self.alt_m)

    def geodetic_to_enu(self, lat_deg, lon_deg, alt_m):
        """(lat deg, lon deg, alt m above ellipsoid) -> local ENU [m]."""
        return pymap3d.geodetic2enu(lat_deg, lon_deg, alt_m,
                                    self.lat_deg, self.lon_deg, self.alt_m)
