"""The sensor suite: IMU, magnetometer, barometer, GNSS, airspeed sampled on sim time (pure).

One suite serves both sensors_node (ROS sensor topics) and the MAVLink bridge (HIL_SENSOR,
HIL_GPS): driven by the same vehicle states with the same seed, both emit identical samples.
"""

from dataclasses import dataclass
from typing import List, Optional, Tuple

import numpy as np

from sim_core.clock import ResetDetector
from sim_core.decimator import Decimator
from sim_core.kinds import info
from sim_core.scenario import Scenario
from sim_sensors.core.airspeed import DIFF_PRESSURE_NOISE_PA, AirspeedModel
from sim_sensors.core.barometer import BaroModel, BaroParams
from sim_sensors.core.gnss import GnssFix, GnssModel, GnssParams
from sim_sensors.core.imu import ImuModel, ImuParams
from sim_sensors.core.magnetometer import MagModel, MagParams, earth_field_enu


@dataclass(frozen=True)
class SuiteConfig:
    """Rates [Hz], on/off switches, noise seed and scale, GNSS receiver settings."""

    seed: int = 0
    noise_scale: float = 1.0
    imu_rate_hz: float = 250.0
    mag_enabled: bool = True
    mag_rate_hz: float = 100.0
    baro_enabled: bool = True
    baro_rate_hz: float = 50.0
    gnss_enabled: bool = True
    gnss_rate_hz: float = 10.0
    gnss_latency_s: float = 0.0
    gnss_eph_m: float = 0.3
    gnss_epv_m: float = 0.5
    gnss_satellites: int = 12
    airspeed_enabled: bool = True


# name -> (description with units, lo, hi): the parameters of sensors_node and the HIL bridge
PARAMETERS = {
    'seed': ('Noise RNG seed [-]; same seed = identical streams', 0, 2**31 - 1),
    'noise_scale': ('Multiplier on every noise term [-]; 0 = ideal', 0.0, 100.0),
    'imu_rate_hz': ('IMU rate [Hz]', 1.0, 1000.0),
    'mag_enabled': ('Magnetometer on/off',),
    'mag_rate_hz': ('Magnetometer rate [Hz]', 1.0, 1000.0),
    'baro_enabled': ('Barometer on/off',),
    'baro_rate_hz': ('Barometer rate [Hz]', 1.0, 1000.0),
    'gnss_enabled': ('GNSS on/off',),
    'gnss_rate_hz': ('GNSS rate [Hz]', 0.1, 100.0),
    'gnss_latency_s': ('GNSS output latency [s]', 0.0, 2.0),
    'gnss_eph_m': ('GNSS horizontal accuracy, 1 sigma [m]', 0.0, 100.0),
    'gnss_epv_m': ('GNSS vertical accuracy, 1 sigma [m]', 0.0, 100.0),
    'gnss_satellites': ('Satellites used [-]', 0, 64),
    'airspeed_enabled': ('Airspeed (pitot differential pressure, at the barometer rate) on/off; '
                         'planes only',),
}


@dataclass
class SensorSample:
    """What the suite produced at sim time t_ns; None where a sensor had no new sample.

    imu: (specific force [m/s^2], angular rate [rad/s]) body FLU; mag: field [T] body FLU
    (the latest, also when not new: mag_new says); baro: (pressure Pa, temperature K,
    pressure altitude m); gnss: fixes released at this time (oldest first); airspeed:
    (differential pressure Pa, temperature K), with the barometer, planes only.
    """

    t_ns: int
    imu: Optional[Tuple[np.ndarray, np.ndarray]]
    mag: np.ndarray
    mag_new: bool
    baro: Optional[Tuple[float, float, float]]
    gnss: List[GnssFix]
    airspeed: Optional[Tuple[float, float]] = None


class SensorSuite:
    """All vehicle sensors, each decimated to its own rate on sim time."""

    def __init__(self, cfg: SuiteConfig, scenario: Scenario):
        """Build the models; noise draws from one RNG seeded with cfg.seed."""
        self.cfg = cfg
        self.scenario = scenario
        # sim time going backwards (a reset, a replay looping) restarts the suite; its
        # ``resets`` count tells a caller that it happened (sensors_node logs it)
        self.clock_reset = ResetDetector()
        self.reset()

    def reset(self) -> None:
        """Restart the sample grids and the noise (same seed: the same streams again)."""
        cfg, sc = self.cfg, self.scenario
        rng = np.random.default_rng(cfg.seed)
        k = cfg.noise_scale
        imu_def = ImuParams()
        self.imu = ImuModel(ImuParams(cfg.imu_rate_hz, imu_def.accel.scaled(k),
                                      imu_def.gyro.scaled(k)), rng, sc.environment.gravity)
        self.mag = MagModel(MagParams(cfg.mag_rate_hz, MagParams().noise.scaled(k)),
                            earth_field_enu(sc.origin, sc.decimal_year), rng)
        self.baro = BaroModel(BaroParams(cfg.baro_rate_hz, BaroParams().noise.scaled(k)), rng)
        self.gnss = GnssModel(GnssParams(cfg.gnss_rate_hz, cfg.gnss_latency_s,
                                         cfg.gnss_eph_m * k, cfg.gnss_epv_m * k,
                                         GnssParams().vel_std_mps * k,
                                         satellites=cfg.gnss_satellites), sc.origin, rng)
        self.airspeed = None
        if cfg.airspeed_enabled and info(sc.vehicle_kind).pitot:
            self.airspeed = AirspeedModel(sc.environment.wind_enu, rng,
                                          DIFF_PRESSURE_NOISE_PA * k)
        self.dec_imu = Decimator(cfg.imu_rate_hz)
        self.dec_mag = Decimator(cfg.mag_rate_hz)
        self.dec_baro = Decimator(cfg.baro_rate_hz)
        self.dec_gnss = Decimator(cfg.gnss_rate_hz)
        self._mag_last = self.mag.sample(np.array([1.0, 0.0, 0.0, 0.0]))

    def sample(self, t_ns: int, p_enu, v_enu, q_enu_flu, a_enu, w_flu) -> SensorSample:
        """Sample every sensor due at sim time t_ns [ns] from the true vehicle state.

        p_enu [m] from the origin, v_enu [m/s], q_enu_flu (w, x, y, z) ENU<-FLU, a_enu [m/s^2]
        (kinematic acceleration), w_flu [rad/s]. Time going backwards (a sim reset) resets the
        suite first.
        """
        if self.clock_reset.went_back(t_ns):
            self.reset()
        cfg = self.cfg
        q = np.asarray(q_enu_flu, dtype=float)
        mag_new = False
        if cfg.mag_enabled and self.dec_mag.due(t_ns):
            self._mag_last = self.mag.sample(q)
            mag_new = True
        imu = self.imu.sample(q, a_enu, w_flu) if self.dec_imu.due(t_ns) else None
        baro = airspeed = None
        if cfg.baro_enabled and self.dec_baro.due(t_ns):
            alt = self.scenario.origin.alt_m + float(p_enu[2])
            baro = self.baro.sample(alt)
            if self.airspeed is not None:
                airspeed = self.airspeed.sample(alt, v_enu, q)
        fixes = []
        if cfg.gnss_enabled:
            if self.dec_gnss.due(t_ns):
                self.gnss.measure(t_ns, p_enu, v_enu)
            fixes = self.gnss.release(t_ns)
        return SensorSample(t_ns, imu, self._mag_last, mag_new, baro, fixes, airspeed)
