"""WGS-84 geodesy around a scenario origin (pure, no rclpy).

pymap3d does the conversions, except on the per-step path: ``enu_to_geodetic`` runs for every
HIL_STATE_QUATERNION and GNSS fix, where pymap3d's numpy-generic code costs ~100 µs a call
for one point. There the origin's ECEF position and rotation are computed once and ECEF ->
geodetic is Heikkinen's closed form (exact, no iteration; M. Heikkinen, "Geschlossene Formeln
zur Berechnung räumlicher geodätischer Koordinaten aus rechtwinkligen Koordinaten", ZfV 107,
1982; as in J. Zhu, IEEE TAES 30(3), 1994). test_geodesy holds it to pymap3d within 1e-11 deg
and 1 µm over the range of scenarios.
"""

from dataclasses import dataclass
from functools import cached_property
import math

import pymap3d

from sim_core.validate import number

# WGS-84 ellipsoid
WGS84_A = 6378137.0                          # semi-major axis [m]
WGS84_F = 1.0 / 298.257223563                # flattening [-]
_B = WGS84_A * (1.0 - WGS84_F)               # semi-minor axis [m]
_E2 = WGS84_F * (2.0 - WGS84_F)              # first eccentricity squared [-]
_EP2 = (WGS84_A ** 2 - _B ** 2) / _B ** 2    # second eccentricity squared [-]
# Closer to the polar axis than this [m], Heikkinen's formula loses digits: pymap3d then.
_AXIS_M = 1.0


def geodetic_to_ecef(lat_deg: float, lon_deg: float, h_m: float):
    """(lat deg, lon deg, height m above the ellipsoid) -> ECEF [m] (WGS-84)."""
    sl, cl = math.sin(math.radians(lat_deg)), math.cos(math.radians(lat_deg))
    so, co = math.sin(math.radians(lon_deg)), math.cos(math.radians(lon_deg))
    n = WGS84_A / math.sqrt(1.0 - _E2 * sl * sl)
    return (n + h_m) * cl * co, (n + h_m) * cl * so, (n * (1.0 - _E2) + h_m) * sl


def ecef_to_geodetic(x: float, y: float, z: float):
    """ECEF [m] -> (lat deg, lon deg, height m above the ellipsoid): Heikkinen's closed form."""
    p = math.hypot(x, y)
    if p < _AXIS_M:
        lat, lon, h = pymap3d.ecef2geodetic(x, y, z)
        return float(lat), float(lon), float(h)
    a, b, e2 = WGS84_A, _B, _E2
    zz = z * z
    f54 = 54.0 * b * b * zz
    g = p * p + (1.0 - e2) * zz - e2 * (a * a - b * b)
    c = e2 * e2 * f54 * p * p / (g * g * g)
    s = (1.0 + c + math.sqrt(c * c + 2.0 * c)) ** (1.0 / 3.0)
    k = s + 1.0 + 1.0 / s
    pp = f54 / (3.0 * k * k * g * g)
    q = math.sqrt(1.0 + 2.0 * e2 * e2 * pp)
    r0 = (-(pp * e2 * p) / (1.0 + q)
          + math.sqrt(max(0.0, 0.5 * a * a * (1.0 + 1.0 / q)
                          - pp * (1.0 - e2) * zz / (q * (1.0 + q)) - 0.5 * pp * p * p)))
    t = p - e2 * r0
    u = math.sqrt(t * t + zz)
    v = math.sqrt(t * t + (1.0 - e2) * zz)
    z0 = b * b * z / (a * v)
    h = u * (1.0 - b * b / (a * v))
    return math.degrees(math.atan2(z + _EP2 * z0, p)), math.degrees(math.atan2(y, x)), h


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
        number(self.lat_deg, 'origin.lat_deg', -90.0, 90.0)
        number(self.lon_deg, 'origin.lon_deg', -180.0, 180.0)
        number(self.alt_m, 'origin.alt_m', -1000.0, 20000.0)      # [m]

    @cached_property
    def _ecef(self):
        """(origin ECEF [m], the ENU -> ECEF rotation's rows), computed once."""
        x0, y0, z0 = (float(v) for v in pymap3d.geodetic2ecef(self.lat_deg, self.lon_deg,
                                                              self.alt_m))
        sl, cl = math.sin(math.radians(self.lat_deg)), math.cos(math.radians(self.lat_deg))
        so, co = math.sin(math.radians(self.lon_deg)), math.cos(math.radians(self.lon_deg))
        return (x0, y0, z0), ((-so, -sl * co, cl * co), (co, -sl * so, cl * so), (0.0, cl, sl))

    def enu_to_geodetic(self, e, n, u):
        """Local ENU [m] -> (lat deg, lon deg, alt m above ellipsoid) (floats)."""
        (x0, y0, z0), (rx, ry, rz) = self._ecef
        e, n, u = float(e), float(n), float(u)
        return ecef_to_geodetic(x0 + rx[0] * e + rx[1] * n + rx[2] * u,
                                y0 + ry[0] * e + ry[1] * n + ry[2] * u,
                                z0 + rz[1] * n + rz[2] * u)

    def geodetic_to_enu(self, lat_deg, lon_deg, alt_m):
        """(lat deg, lon deg, alt m above ellipsoid) -> local ENU [m] (floats).

        Closed form (ECEF, then the ENU rotation's transpose): pymap3d.geodetic2enu gives the
        same to 1e-9 m at ~8x the cost, and a plane samples this every step.
        """
        (x0, y0, z0), (rx, ry, rz) = self._ecef
        x, y, z = geodetic_to_ecef(float(lat_deg), float(lon_deg), float(alt_m))
        dx, dy, dz = x - x0, y - y0, z - z0
        return (rx[0] * dx + ry[0] * dy,
                rx[1] * dx + ry[1] * dy + rz[1] * dz,
                rx[2] * dx + ry[2] * dy + rz[2] * dz)


# Mean Earth radius of the great-circle helpers [m] (the spherical model AeroSim's HSI uses).
EARTH_RADIUS_M = 6371000.0


def distance_m(lat1_deg: float, lon1_deg: float, lat2_deg: float, lon2_deg: float) -> float:
    """Great-circle (haversine) distance [m] between two points [deg]."""
    p1, p2 = math.radians(lat1_deg), math.radians(lat2_deg)
    dp, dl = p2 - p1, math.radians(lon2_deg - lon1_deg)
    a = math.sin(dp / 2.0) ** 2 + math.cos(p1) * math.cos(p2) * math.sin(dl / 2.0) ** 2
    return 2.0 * EARTH_RADIUS_M * math.atan2(math.sqrt(a), math.sqrt(max(0.0, 1.0 - a)))


def bearing_deg(lat1_deg: float, lon1_deg: float, lat2_deg: float, lon2_deg: float) -> float:
    """Initial great-circle bearing [deg, 0..360) from point 1 to point 2 (0 = north, cw)."""
    p1, p2 = math.radians(lat1_deg), math.radians(lat2_deg)
    dl = math.radians(lon2_deg - lon1_deg)
    y = math.sin(dl) * math.cos(p2)
    x = math.cos(p1) * math.sin(p2) - math.sin(p1) * math.cos(p2) * math.cos(dl)
    return math.degrees(math.atan2(y, x)) % 360.0


def course_deviation_m(lat1_deg: float, lon1_deg: float, lat2_deg: float, lon2_deg: float,
                       lat_deg: float, lon_deg: float) -> float:
    """Cross-track distance [m] of a position from the course 1 -> 2, positive right of it.

    d sin(b - c): d the distance from point 1, b its bearing, c the course's (the right
    triangle of AeroSim's deviation_from_course_meters).
    """
    c = bearing_deg(lat1_deg, lon1_deg, lat2_deg, lon2_deg)
    b = bearing_deg(lat1_deg, lon1_deg, lat_deg, lon_deg)
    return distance_m(lat1_deg, lon1_deg, lat_deg, lon_deg) * math.sin(math.radians(b - c))
