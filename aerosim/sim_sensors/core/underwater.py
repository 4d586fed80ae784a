"""An AUV's sensors (pure, no rclpy): depth, GNSS only at the surface, DVL, AHRS.

What a LAUV navigates on, as DUNE's LAUV simulators make it (src/Simulators/{DepthSensor,GPS,
DVL,IMU}) and as the real sensors behave:
- depth: a pressure sensor's depth [m], at depth_rate_hz, Gaussian noise depth_std_m, never
  above the surface (DUNE: 10 Hz, 0.05 m);
- GNSS: a fix at gnss_rate_hz only while the antenna is out of the water, the hull's axis
  shallower than gnss_max_depth_m (DUNE's Activation Depth 0.2 m: the fix is invalid below);
  position noise gnss_std_m per horizontal axis;
- DVL: at dvl_rate_hz, the body-frame velocity over the seabed (bottom lock) while the seabed
  lies within dvl_range_m below it (the scenario's environment.water_depth_m; 0: no seabed in
  reach), else the velocity through the water (water track: the current is then unseen);
  noise dvl_std_mps per axis (DUNE: 5 Hz, 0.002 m/s);
- AHRS: roll, pitch, yaw [rad] and body rates [rad/s] at ahrs_rate_hz, noise ahrs_std_rad and
  ahrs_rate_std_rps (DUNE: on each SimulatedState, 0.05 deg and 0.05 deg/s).
Frames: NED/FRD (the AUV model's). One numpy Generator draws every sample: same seed, same
streams.
"""

from dataclasses import dataclass
import math
from typing import Optional, Sequence, Tuple

import numpy as np

from sim_core.decimator import Decimator
from sim_core.validate import number

Vec3 = Tuple[float, float, float]


@dataclass(frozen=True)
class UnderwaterParams:
    """Rates [Hz], noise (1-sigma, SI) and limits of an AUV's sensors (module docstring)."""

    depth_rate_hz: float = 10.0
    depth_std_m: float = 0.05
    gnss_rate_hz: float = 1.0
    gnss_std_m: float = 1.0
    gnss_max_depth_m: float = 0.2
    dvl_rate_hz: float = 5.0
    dvl_std_mps: float = 0.002
    dvl_range_m: float = 30.0
    ahrs_rate_hz: float = 20.0
    ahrs_std_rad: float = math.radians(0.05)
    ahrs_rate_std_rps: float = math.radians(0.05)

    def __post_init__(self):
        """Rates in (0, 1000], the rest >= 0; FieldError naming the field."""
        for name in ('depth_rate_hz', 'gnss_rate_hz', 'dvl_rate_hz', 'ahrs_rate_hz'):
            number(getattr(self, name), name, 0.0, 1000.0, lo_open=True)
        for name in ('depth_std_m', 'gnss_std_m', 'gnss_max_depth_m', 'dvl_std_mps',
                     'dvl_range_m', 'ahrs_std_rad', 'ahrs_rate_std_rps'):
            number(getattr(self, name), name, 0.0, 1e4)


@dataclass
class UnderwaterReadings:
    """The samples due at one instant (None: not due, or no fix / no lock)."""

    depth_m: Optional[float] = None
    gnss_ne: Optional[Tuple[float, float]] = None       # a fix: north, east [m]
    gnss_lost: bool = False                             # a GNSS sample was due, no fix
    dvl_uvw: Optional[Vec3] = None                      # body FRD [m/s]
    dvl_bottom: bool = False                            # over the seabed (else the water)
    euler: Optional[Vec3] = None                        # roll, pitch, yaw [rad]
    pqr: Optional[Vec3] = None                          # body rates [rad/s]


class UnderwaterSensors:
    """The sensors of one AUV, sampled on its true state (module docstring)."""

    def __init__(self, params: UnderwaterParams, rng: np.random.Generator,
                 water_depth_m: float = 0.0):
        """params; rng: the noise; water_depth_m: the seabed's depth (0: none in reach)."""
        self.p = params
        self.rng = rng
        self.water_depth_m = float(water_depth_m)
        self.reset()

    def reset(self) -> None:
        """Every sensor due at the next sample."""
        p = self.p
        self._dec = {k: Decimator(r) for k, r in (
            ('depth', p.depth_rate_hz), ('gnss', p.gnss_rate_hz), ('dvl', p.dvl_rate_hz),
            ('ahrs', p.ahrs_rate_hz))}

    def bottom_lock(self, depth_m: float) -> bool:
        """The seabed lies within the DVL's range below a vehicle at depth_m."""
        return self.water_depth_m > 0.0 and \
            0.0 <= self.water_depth_m - depth_m <= self.p.dvl_range_m

    def sample(self, t_ns: int, p_ned: Sequence[float], euler: Vec3, nu: Sequence[float],
               current_ned: Sequence[float] = (0.0, 0.0, 0.0)) -> UnderwaterReadings:
        """The readings due at t_ns (None where not due).

        p_ned [m], euler (roll, pitch, yaw) [rad], nu: body velocity through the water and
        rates (u, v, w, p, q, r), current_ned [m/s]: the vehicle's true state.
        """
        p, g, out = self.p, self.rng, UnderwaterReadings()
        depth = float(p_ned[2])
        if self._dec['depth'].due(t_ns):
            out.depth_m = max(0.0, depth + float(g.normal(0.0, p.depth_std_m)))
        if self._dec['gnss'].due(t_ns):
            if depth <= p.gnss_max_depth_m:
                out.gnss_ne = (float(p_ned[0] + g.normal(0.0, p.gnss_std_m)),
                               float(p_ned[1] + g.normal(0.0, p.gnss_std_m)))
            else:
                out.gnss_lost = True
        if self._dec['dvl'].due(t_ns):
            uvw = np.array(nu[:3], dtype=float)
            out.dvl_bottom = self.bottom_lock(depth)
            if out.dvl_bottom:          # over ground: plus the current in the body frame
                uvw = uvw + body_from_ned(euler, current_ned)
            out.dvl_uvw = _vec3(uvw + g.normal(0.0, p.dvl_std_mps, 3))
        if self._dec['ahrs'].due(t_ns):
            out.euler = _vec3(np.asarray(euler) + g.normal(0.0, p.ahrs_std_rad, 3))
            out.pqr = _vec3(np.asarray(nu[3:6], dtype=float)
                            + g.normal(0.0, p.ahrs_rate_std_rps, 3))
        return out


def _vec3(a) -> Vec3:
    return (float(a[0]), float(a[1]), float(a[2]))


def rotation(euler: Sequence[float]) -> np.ndarray:
    """R (NED <- FRD) of ZYX Euler angles (roll, pitch, yaw) [rad]."""
    r, pch, y = euler
    cr, sr, cp, sp, cy, sy = (math.cos(r), math.sin(r), math.cos(pch), math.sin(pch),
                              math.cos(y), math.sin(y))
    return np.array([[cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr],
                     [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr],
                     [-sp, cp * sr, cp * cr]])


def body_from_ned(euler: Sequence[float], v_ned: Sequence[float]) -> np.ndarray:
    """A NED vector in the body frame (R^T v)."""
    return rotation(euler).T @ np.asarray(v_ned, dtype=float)
