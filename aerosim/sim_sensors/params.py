"""Sensor-suite parameters, declared the same way by sensors_node and the MAVLink bridge."""

from sim_ros.params import declare
from sim_sensors.core.suite import SuiteConfig


def declare_suite(node) -> SuiteConfig:
    """Declare the sensor-suite parameters on node and return them as a SuiteConfig."""
    def d(*a, **k):
        return declare(node, *a, **k)
    return SuiteConfig(
        seed=d('seed', 0, 'Noise RNG seed [-]; same seed = identical streams', 0, 2**31 - 1),
        noise_scale=d('noise_scale', 1.0, 'Multiplier on every noise term [-]; 0 = ideal',
                      0.0, 100.0),
        imu_rate_hz=d('imu_rate_hz', 250.0, 'IMU rate [Hz]', 1.0, 1000.0),
        mag_enabled=d('mag_enabled', True, 'Magnetometer on/off'),
        mag_rate_hz=d('mag_rate_hz', 100.0, 'Magnetometer rate [Hz]', 1.0, 1000.0),
        baro_enabled=d('baro_enabled', True, 'Barometer on/off'),
        baro_rate_hz=d('baro_rate_hz', 50.0, 'Barometer rate [Hz]', 1.0, 1000.0),
        gnss_enabled=d('gnss_enabled', True, 'GNSS on/off'),
        gnss_rate_hz=d('gnss_rate_hz', 10.0, 'GNSS rate [Hz]', 0.1, 100.0),
        gnss_latency_s=d('gnss_latency_s', 0.0, 'GNSS output latency [s]', 0.0, 2.0),
        gnss_eph_m=d('gnss_eph_m', 0.3, 'GNSS horizontal accuracy, 1 sigma [m]', 0.0, 100.0),
        gnss_epv_m=d('gnss_epv_m', 0.5, 'GNSS vertical accuracy, 1 sigma [m]', 0.0, 100.0),
        gnss_satellites=d('gnss_satellites', 12, 'Satellites used [-]', 0, 64),
    )


def describe(cfg: SuiteConfig) -> str:
    """One log line: rates, switches, seed."""
    def rate(on, hz):
        return f'{hz:g} Hz' if on else 'off'
    return (f'IMU {cfg.imu_rate_hz:g} Hz, mag {rate(cfg.mag_enabled, cfg.mag_rate_hz)}, '
            f'baro {rate(cfg.baro_enabled, cfg.baro_rate_hz)}, '
            f'GNSS {rate(cfg.gnss_enabled, cfg.gnss_rate_hz)}; seed {cfg.seed}, '
            f'noise x{cfg.noise_scale:g}')
