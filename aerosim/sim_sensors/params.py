"""Sensor-suite parameters, declared the same way by sensors_node and the MAVLink bridge."""

from sim_ros.params import read_config
from sim_sensors.core.suite import PARAMETERS, SuiteConfig


def declare_suite(node) -> SuiteConfig:
    """Declare the sensor-suite parameters on node and return them as a SuiteConfig."""
    return read_config(node, SuiteConfig, PARAMETERS)


def describe(cfg: SuiteConfig) -> str:
    """One log line: rates, switches, seed."""
    def rate(on, hz):
        return f'{hz:g} Hz' if on else 'off'
    return (f'IMU {cfg.imu_rate_hz:g} Hz, mag {rate(cfg.mag_enabled, cfg.mag_rate_hz)}, '
            f'baro {rate(cfg.baro_enabled, cfg.baro_rate_hz)}, '
            f'GNSS {rate(cfg.gnss_enabled, cfg.gnss_rate_hz)}; seed {cfg.seed}, '
            f'noise x{cfg.noise_scale:g}')
