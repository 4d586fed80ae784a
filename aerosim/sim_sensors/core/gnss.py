"""GNSS receiver: WGS-84 position (pymap3d), ENU/NED velocity, fix, accuracy, latency.

Position error is a first-order Gauss-Markov process per axis (correlation time tau_s), the
way real receivers wander; velocity gets white noise. A measurement of epoch t is released at
t + latency_s.
"""

from collections import deque
from dataclasses import dataclass
import math
from typing import Any, Deque

import numpy as np

from sim_core.errors import ConfigError
from sim_core.geodesy import GeoOrigin

FIX_3D = 3


@dataclass(frozen=True)
class GnssParams:
    """Rate [Hz], latency [s], 1-sigma horizontal/vertical error [m], velocity noise [m/s]."""

    rate_hz: float = 10.0
    latency_s: float = 0.0
    eph_m: float = 0.3
    epv_m: float = 0.5
    vel_std_mps: float = 0.05
    tau_s: float = 60.0
    satellites: int = 12

    def __post_init__(self):
        """Validate ranges."""
        if not 0.0 <= self.latency_s <= 2.0:
            raise ConfigError(f'latency_s: must be in [0, 2] s, got {self.latency_s}')
        if self.satellites < 0 or self.satellites > 64:
            raise ConfigError(f'satellites: must be in [0, 64], got {self.satellites}')
        for name in ('eph_m', 'epv_m', 'vel_std_mps'):
            if getattr(self, name) < 0.0:
                raise ConfigError(f'{name}: must be >= 0')
        if self.tau_s <= 0.0:
            raise ConfigError(f'tau_s: must be > 0, got {self.tau_s}')


@dataclass(frozen=True)
class GnssFix:
    """One GNSS solution; t_ns is the measurement epoch (sim time)."""

    t_ns: int
    lat_deg: float
    lon_deg: float
    alt_m: float
    vel_enu: tuple       # m/s
    fix_type: int
    eph_m: float
    epv_m: float
    satellites: int

    @property
    def vel_ned(self):
        """Velocity north, east, down [m/s]."""
        e, n, u = self.vel_enu
        return (n, e, -u)

    @property
    def course_deg(self) -> float:
        """Course over ground, compass [0, 360) deg."""
        e, n, _ = self.vel_enu
        return math.degrees(math.atan2(e, n)) % 360.0


class GnssModel:
    """Samples fixes from the true ENU position/velocity and releases them after the latency."""

    def __init__(self, params: GnssParams, origin: GeoOrigin, rng: np.random.Generator):
        """Noise draws from rng."""
        self.params = params
        self.origin = origin
        self._rng = rng
        self._err = np.zeros(3)
        self._queue: Deque[Any] = deque()
        dt = 1.0 / params.rate_hz
        self._phi = math.exp(-dt / params.tau_s)
        drive = math.sqrt(1.0 - self._phi ** 2)
        self._drive = np.array([params.eph_m / math.sqrt(2.0), params.eph_m / math.sqrt(2.0),
                                params.epv_m]) * drive
        # start the error in its stationary distribution
        self._err = self._rng.normal(0.0, 1.0, 3) * self._drive / max(drive, 1e-12)

    def measure(self, t_ns: int, p_enu, v_enu) -> None:
        """Take a measurement of epoch t_ns from the true position [m] and velocity [m/s] (ENU)."""
        self._err = self._phi * self._err + self._rng.normal(0.0, 1.0, 3) * self._drive
        e, n, u = (np.asarray(p_enu, dtype=float) + self._err)
        lat, lon, alt = self.origin.enu_to_geodetic(e, n, u)
        vel = np.asarray(v_enu, dtype=float)
        if self.params.vel_std_mps > 0.0:
            vel = vel + self._rng.normal(0.0, self.params.vel_std_mps, 3)
        p = self.params
        self._queue.append(GnssFix(int(t_ns), float(lat), float(lon), float(alt),
                                   tuple(float(x) for x in vel), FIX_3D, p.eph_m, p.epv_m,
                                   p.satellites))

    def release(self, now_ns: int):
        """Return the fixes whose latency has elapsed at sim time now_ns (oldest first)."""
        lat_ns = int(round(self.params.latency_s * 1e9))
        out = []
        while self._queue and self._queue[0].t_ns + lat_ns <= now_ns:
            out.append(self._queue.popleft())
        return out
