"""GeoOrigin's per-step ENU -> geodetic path against pymap3d (the reference)."""

import numpy as np
import pymap3d
import pytest

from sim_core.geodesy import GeoOrigin, ecef_to_geodetic


@pytest.mark.parametrize('lat0', [-89.99, -60.0, -33.9, 0.0, 38.7, 47.397742, 80.0, 89.99])
@pytest.mark.parametrize('lon0', [-180.0, -122.3, 0.0, 8.545594, 151.2, 180.0])
def test_enu_to_geodetic_equals_pymap3d_within_a_micrometre(lat0, lon0):
    """Offsets of +-50 km and heights -1.5..25 km around origins from pole to pole, -1..20 km."""
    rng = np.random.default_rng(abs(int(lat0 * 100 + lon0)))
    for alt0 in (-1000.0, 0.0, 488.0, 20000.0):
        o = GeoOrigin(lat0, lon0, alt0)
        for e, n, u in rng.uniform([-5e4, -5e4, -1500.0], [5e4, 5e4, 25000.0], (25, 3)):
            lat, lon, h = o.enu_to_geodetic(e, n, u)
            rlat, rlon, rh = pymap3d.enu2geodetic(e, n, u, lat0, lon0, alt0)
            assert abs(lat - rlat) < 1e-11                 # ~1 µm
            assert abs((lon - rlon + 180.0) % 360.0 - 180.0) * np.cos(np.radians(lat)) < 1e-11
            assert abs(h - rh) < 1e-6
            assert all(type(v) is float for v in (lat, lon, h))


def test_ecef_to_geodetic_on_the_polar_axis_and_at_the_centre_falls_back_to_pymap3d():
    for x, y, z in ((0.0, 0.0, 6356752.3), (0.3, -0.2, -6356000.0), (0.0, 0.0, 0.0)):
        ref = pymap3d.ecef2geodetic(x, y, z)
        got = ecef_to_geodetic(x, y, z)
        assert np.allclose(got, [float(v) for v in ref], atol=1e-6, equal_nan=True)


def test_the_origin_itself_and_a_known_point():
    o = GeoOrigin(47.397742, 8.545594, 488.0)
    assert o.enu_to_geodetic(0.0, 0.0, 0.0) == pytest.approx((47.397742, 8.545594, 488.0),
                                                             abs=1e-9)
    # 1 km north: 1000 m / (M = 6,367,000 m meridian radius of curvature near 47.4 N) rad
    lat, lon, _ = o.enu_to_geodetic(0.0, 1000.0, 0.0)
    assert lat - 47.397742 == pytest.approx(np.degrees(1000.0 / 6367.0e3), rel=2e-3)
    assert lon == pytest.approx(8.545594, abs=1e-12)


@pytest.mark.parametrize('lat0', [-60.0, 0.0, 29.6073, 47.397742, 89.9])
def test_geodetic_to_enu_equals_pymap3d_within_a_micrometre(lat0):
    """The closed form a plane runs every step, against pymap3d.geodetic2enu."""
    rng = np.random.default_rng(int(lat0 * 10) + 1000)
    o = GeoOrigin(lat0, -95.1588, 10.0)
    for dlat, dlon, h in rng.uniform([-0.4, -0.4, -500.0], [0.4, 0.4, 20000.0], (50, 3)):
        lat = max(-90.0, min(90.0, lat0 + dlat))
        got = o.geodetic_to_enu(lat, -95.1588 + dlon, h)
        ref = pymap3d.geodetic2enu(lat, -95.1588 + dlon, h, lat0, -95.1588, 10.0)
        assert np.allclose(got, ref, atol=1e-6, rtol=0.0)
        assert all(type(v) is float for v in got)
