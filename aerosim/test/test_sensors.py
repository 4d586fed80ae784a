"""Sensor models: IMU at rest, magnetometer (WMM), ISA barometer, GNSS geodesy, determinism."""

import math

import numpy as np
import pymap3d
import pytest
from transforms3d import quaternions as tq

from sim_core.frames import flu_to_frd
from sim_core.geodesy import GeoOrigin
from sim_sensors.core.barometer import BaroModel, BaroParams, isa_altitude, isa_pressure
from sim_sensors.core.gnss import GnssModel, GnssParams
from sim_sensors.core.imu import GRAVITY, ImuModel, ImuParams
from sim_sensors.core.magnetometer import MagModel, MagParams, earth_field_enu
from sim_sensors.core.noise import NoiseParams

ORIGIN = GeoOrigin(47.397742, 8.545594, 488.0)
LEVEL = np.array([1.0, 0.0, 0.0, 0.0])
IDEAL = NoiseParams()


def test_accelerometer_at_rest_reads_plus_g_on_flu_z_and_minus_g_on_frd_z():
    imu = ImuModel(ImuParams(250.0, IDEAL, IDEAL), np.random.default_rng(0))
    f_flu, w_flu = imu.sample(LEVEL, (0.0, 0.0, 0.0), (0.0, 0.0, 0.0))
    assert np.allclose(f_flu, [0.0, 0.0, GRAVITY], atol=1e-12)
    assert np.allclose(flu_to_frd(f_flu), [0.0, 0.0, -9.80665], atol=1e-12)
    assert np.allclose(w_flu, 0.0)


def test_accelerometer_sees_gravity_rotate_with_attitude():
    imu = ImuModel(ImuParams(250.0, IDEAL, IDEAL), np.random.default_rng(0))
    q = tq.axangle2quat([1, 0, 0], math.radians(30))     # rolled left 30 deg
    f_flu, _ = imu.sample(q, (0.0, 0.0, 0.0), (0.0, 0.0, 0.0))
    assert np.allclose(f_flu, [0.0, GRAVITY * math.sin(math.radians(30)),
                             GRAVITY * math.cos(math.radians(30))], atol=1e-12)
    # in free fall the accelerometer reads zero
    f_flu, _ = imu.sample(q, (0.0, 0.0, -GRAVITY), (0.0, 0.0, 0.0))
    assert np.allclose(f_flu, 0.0, atol=1e-12)


def test_imu_noise_has_the_configured_density():
    rate = 250.0
    imu = ImuModel(ImuParams(rate, NoiseParams(0.004, 0.0, 0.0), NoiseParams(3e-4, 0.0, 0.0)),
                   np.random.default_rng(3))
    samples = np.array([imu.sample(LEVEL, (0, 0, 0), (0, 0, 0))[0] for _ in range(20000)])
    std = samples[:, 0].std()
    assert math.isclose(std, 0.004 * math.sqrt(rate), rel_tol=0.03)


def test_same_seed_gives_identical_streams_and_other_seed_differs():
    def stream(seed):
        rng = np.random.default_rng(seed)
        imu = ImuModel(ImuParams(), rng)
        mag = MagModel(MagParams(), earth_field_enu(ORIGIN, 2026.9), rng)
        baro = BaroModel(BaroParams(), rng)
        gnss = GnssModel(GnssParams(), ORIGIN, rng)
        out = []
        for k in range(200):
            out.extend(imu.sample(LEVEL, (0, 0, 0), (0, 0, 0))[0])
            out.extend(mag.sample(LEVEL))
            out.append(baro.sample(488.0)[0])
            gnss.measure(k * 100_000_000, (0, 0, 0), (0, 0, 0))
            out.extend(f.lat_deg for f in gnss.release(k * 100_000_000))
        return np.array(out)
    a, b, c = stream(7), stream(7), stream(8)
    assert np.array_equal(a, b)
    assert not np.array_equal(a, c)


def test_magnetometer_matches_the_world_magnetic_model_at_zurich():
    b_enu = earth_field_enu(ORIGIN, 2026.9)
    total_nT = np.linalg.norm(b_enu) * 1e9
    assert 47000 < total_nT < 49500                  # WMM total intensity in central Europe
    incl = math.degrees(math.atan2(-b_enu[2], math.hypot(b_enu[0], b_enu[1])))
    assert 62.0 < incl < 65.0                        # dip angle, pointing down
    decl = math.degrees(math.atan2(b_enu[0], b_enu[1]))
    assert 2.0 < decl < 5.5                          # a few degrees east
    mag = MagModel(MagParams(100.0, IDEAL), b_enu, np.random.default_rng(0))
    # facing north (ENU yaw 90 deg): body x points north, so the body x reads the north field
    q_north = tq.axangle2quat([0, 0, 1], math.pi / 2)
    m_flu = mag.sample(q_north)
    assert math.isclose(m_flu[0], b_enu[1], rel_tol=1e-12)
    assert math.isclose(m_flu[2], b_enu[2], rel_tol=1e-12)


def test_barometer_isa():
    assert math.isclose(isa_pressure(0.0), 101325.0)
    baro = BaroModel(BaroParams(50.0, IDEAL), np.random.default_rng(0))
    p, t, alt = baro.sample(0.0)
    assert math.isclose(p / 100.0, 1013.25, abs_tol=1e-9)
    assert math.isclose(t, 288.15)
    assert abs(alt) < 1e-6
    # ISA table: 1000 m -> 89874.6 Pa, 8.5 degC
    p, t, alt = baro.sample(1000.0)
    assert math.isclose(p, 89874.6, abs_tol=0.1)
    assert math.isclose(t - 273.15, 8.5, abs_tol=1e-9)
    assert math.isclose(isa_altitude(p), 1000.0, abs_tol=1e-6)


def test_gnss_at_origin_gives_origin_and_moves_with_position():
    g = GnssModel(GnssParams(10.0, 0.0, 0.0, 0.0, 0.0), ORIGIN, np.random.default_rng(0))
    g.measure(0, (0.0, 0.0, 0.0), (0.0, 0.0, 0.0))
    (fix,) = g.release(0)
    assert math.isclose(fix.lat_deg, ORIGIN.lat_deg, abs_tol=1e-12)
    assert math.isclose(fix.lon_deg, ORIGIN.lon_deg, abs_tol=1e-12)
    assert math.isclose(fix.alt_m, ORIGIN.alt_m, abs_tol=1e-6)
    assert fix.fix_type == 3 and fix.satellites >= 6
    g.measure(100_000_000, (100.0, 200.0, 10.0), (1.0, 2.0, -0.5))
    (fix,) = g.release(100_000_000)
    e, n, u = pymap3d.geodetic2enu(fix.lat_deg, fix.lon_deg, fix.alt_m, ORIGIN.lat_deg,
                                   ORIGIN.lon_deg, ORIGIN.alt_m)
    assert np.allclose((e, n, u), (100.0, 200.0, 10.0), atol=1e-6)
    assert np.allclose(fix.vel_ned, (2.0, 1.0, 0.5))
    assert math.isclose(fix.course_deg, math.degrees(math.atan2(1.0, 2.0)))


def test_gnss_latency_and_error_statistics():
    g = GnssModel(GnssParams(10.0, latency_s=0.2, eph_m=1.0, epv_m=2.0, tau_s=0.2), ORIGIN,
                  np.random.default_rng(1))
    g.measure(0, (0, 0, 0), (0, 0, 0))
    assert g.release(100_000_000) == []
    assert len(g.release(200_000_000)) == 1
    errs = []
    for k in range(1, 4001):
        g.measure(k * 100_000_000, (0, 0, 0), (0, 0, 0))
        for f in g.release(k * 100_000_000 + 200_000_000):
            errs.append(pymap3d.geodetic2enu(f.lat_deg, f.lon_deg, f.alt_m, ORIGIN.lat_deg,
                                             ORIGIN.lon_deg, ORIGIN.alt_m))
    errs = np.array(errs)
    horiz = np.sqrt((errs[:, 0] ** 2 + errs[:, 1] ** 2).mean())
    assert math.isclose(horiz, 1.0, rel_tol=0.1)
    assert math.isclose(errs[:, 2].std(), 2.0, rel_tol=0.1)


@pytest.mark.parametrize('bad', [{'latency_s': -1.0}, {'satellites': 100}, {'tau_s': 0.0}])
def test_gnss_bad_params_rejected(bad):
    from sim_core.errors import ConfigError
    with pytest.raises(ConfigError, match=list(bad)[0]):
        GnssParams(**bad)


def test_barometer_noise_is_px4s_1_pa_rms_per_sample_without_drift():
    # PX4 v1.16 sensor_baro_sim: 1 Pa RMS white noise, drift 0; ours at the default 50 Hz
    rng = np.random.default_rng(3)
    baro = BaroModel(BaroParams(), rng)
    truth = isa_pressure(488.0)
    err = np.array([baro.sample(488.0)[0] - truth for _ in range(20000)])   # 400 s
    assert np.std(err) == pytest.approx(1.0, rel=0.03)
    # no drift: the mean of the last 100 s equals that of the first 100 s within noise
    assert abs(err[-5000:].mean() - err[:5000].mean()) < 0.1
