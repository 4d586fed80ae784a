"""IMU model: accelerometer (specific force) and gyroscope in the body FLU frame."""

from dataclasses import dataclass, field

import numpy as np

from sim_core.frames import quat_rotate_inverse
from sim_sensors.core.noise import NoiseParams, NoisyChannel

GRAVITY = 9.80665  # m/s^2


@dataclass(frozen=True)
class ImuParams:
    """IMU rate [Hz] and noise.

    Defaults: noise density and bias random walk of PX4 SITL's Gazebo IMU plugin (accel
    0.004 m/s^2/sqrt(Hz), 0.006 m/s^2/sqrt(s); gyro 3.394e-4 rad/s/sqrt(Hz), 3.8785e-5
    rad/s/sqrt(s)); turn-on bias off by default.
    """

    rate_hz: float = 250.0
    accel: NoiseParams = field(default_factory=lambda: NoiseParams(0.004, 0.0, 0.006))
    gyro: NoiseParams = field(default_factory=lambda: NoiseParams(3.394e-4, 0.0, 3.8785e-05))


class ImuModel:
    """Specific force f_flu = R_enu_flu^T (a_enu - g_enu) and rate w_flu, plus noise and bias."""

    def __init__(self, params: ImuParams, rng: np.random.Generator, gravity: float = GRAVITY):
        """Noise channels draw from rng (accelerometer first, then gyroscope)."""
        self.params = params
        self._g_enu = (0.0, 0.0, -float(gravity))
        self._accel = NoisyChannel(params.accel, params.rate_hz, rng)
        self._gyro = NoisyChannel(params.gyro, params.rate_hz, rng)

    def true_specific_force(self, q_enu_flu, a_enu):
        """Noise-free specific force [m/s^2] in body FLU; at rest level it is (0, 0, +g)."""
        g = self._g_enu
        return quat_rotate_inverse(q_enu_flu, (a_enu[0] - g[0], a_enu[1] - g[1], a_enu[2] - g[2]))

    def sample(self, q_enu_flu, a_enu, w_flu):
        """Return (specific force [m/s^2], angular rate [rad/s]), both body FLU, shape (3,)."""
        return (self._accel.apply(self.true_specific_force(q_enu_flu, a_enu)),
                self._gyro.apply(np.asarray(w_flu, dtype=float)))
