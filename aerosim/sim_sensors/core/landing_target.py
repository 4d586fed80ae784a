"""A downward landing-target sensor and a downward range finder over decks (pure, no rclpy).

Landing target: a downward camera or IR sensor (IR-LOCK's Pixy, a camera tracking a tag) at
the body's origin, its optical axis along the body's down axis, sees the beacon at a deck's
pad centre (sim_core.deck, ``beacon: true``). Each sample (at rate_hz of sim time) gives the
beacon's direction in the image as PX4's irlock_report carries it (msg/IrlockReport.msg:
image x to the right, y down the image, whose top points at the nose; pos = tan of the angle
from the optical axis), that is, for the beacon at (f, r, d) forward, right and down of the
sensor in body FRD (d > 0):

    tan_x = r / d,   tan_y = -f / d

(the Gazebo-classic irlock plugin's convention, which PX4's landing_target_estimator undoes
with its default LTEST_SENS_ROT = 2, yaw 90), and the distance [m] to the beacon (a tag of
known size gives it; PX4 ignores it and uses its range finder). Seen only within the field
of view (half_fov_deg from the axis, a cone), up to max_range_m, from above the deck; each
tangent with Gaussian noise (noise_tan, 1 sigma) and the distance with noise_m x distance.

Range finder: a downward range sensor (a LiDAR such as the SF10, PX4's DISTANCE_SENSOR with
orientation PITCH_270) along the body's down axis to the first surface below: a deck whose
rectangle the ray meets, else the water (or ground) plane z = 0. Gaussian noise noise_m;
readings beyond [min_m, max_m] are out of range (None); beyond 45 deg of tilt, none.

Both draw from one RNG (seeded by the caller), and decimate on sim time.
"""

from dataclasses import dataclass
import math
from typing import List, NamedTuple, Optional, Sequence, Tuple

import numpy as np
from transforms3d import quaternions as tq

from sim_core.decimator import Decimator
from sim_core.deck import DeckSpec, PadPose, on_deck, over_deck

MAX_TILT_RAD = math.radians(45.0)


@dataclass(frozen=True)
class TargetConfig:
    """The landing-target sensor and the range finder (units in the names)."""

    landing_target_rate_hz: float = 20.0
    landing_target_half_fov_deg: float = 35.0
    landing_target_max_range_m: float = 40.0
    landing_target_noise_tan: float = 0.003
    landing_target_noise_m: float = 0.02
    rangefinder_rate_hz: float = 20.0
    rangefinder_min_m: float = 0.05
    rangefinder_max_m: float = 40.0
    rangefinder_noise_m: float = 0.02


# name -> (description with units, lo, hi): the bridge's parameters of both sensors
PARAMETERS = {
    'landing_target_rate_hz': ('Landing-target sensor rate [Hz] (sim); on for a multirotor in '
                               'a world with a deck beacon', 0.5, 200.0),
    'landing_target_half_fov_deg': ('Landing-target sensor: half the field of view, from the '
                                    'optical axis (body down) [deg]', 1.0, 89.0),
    'landing_target_max_range_m': ('Landing-target sensor: the farthest beacon seen [m]',
                                   0.5, 1000.0),
    'landing_target_noise_tan': ('Landing-target sensor: noise of each image tangent, 1 sigma '
                                 '[-]', 0.0, 1.0),
    'landing_target_noise_m': ('Landing-target sensor: distance noise per metre, 1 sigma [-]',
                               0.0, 1.0),
    'rangefinder_rate_hz': ('Downward range finder rate [Hz] (sim); 0 = off', 0.0, 200.0),
    'rangefinder_min_m': ('Range finder: shortest reading [m]', 0.0, 10.0),
    'rangefinder_max_m': ('Range finder: longest reading [m]', 0.5, 1000.0),
    'rangefinder_noise_m': ('Range finder: noise, 1 sigma [m]', 0.0, 10.0),
}


class TargetReading(NamedTuple):
    """One landing-target sample."""

    t_ns: int
    tan_x: float            # image x (right): tan of the angle from the axis [-]
    tan_y: float            # image y (down the image, -forward) [-]
    distance_m: float       # to the beacon [m]
    deck: int               # which deck's beacon (the caller's index)


class RangeReading(NamedTuple):
    """One range-finder sample."""

    t_ns: int
    distance_m: float
    min_m: float
    max_m: float


Deck = Tuple[DeckSpec, PadPose]       # a deck and where its pad is now


class DownwardSensors:
    """The landing-target sensor and the range finder of one vehicle."""

    def __init__(self, cfg: TargetConfig, rng: np.random.Generator):
        """cfg: rates, field of view, ranges, noise; rng: the noise's generator."""
        self.cfg = cfg
        self.rng = rng
        self.dec_target = Decimator(cfg.landing_target_rate_hz)
        self.dec_range = Decimator(cfg.rangefinder_rate_hz) if cfg.rangefinder_rate_hz > 0 \
            else None
        self.cos_fov = math.cos(math.radians(cfg.landing_target_half_fov_deg))

    def target(self, t_ns: int, p_enu, q_enu_flu, decks: Sequence[Deck]
               ) -> Optional[TargetReading]:
        """The nearest beacon seen at t_ns, if a sample is due and one is in view."""
        if not decks or not self.dec_target.due(t_ns):
            return None
        R = tq.quat2mat(np.asarray(q_enu_flu, dtype=float))      # ENU <- FLU
        p = np.asarray(p_enu, dtype=float)
        best: Optional[Tuple[float, int, np.ndarray]] = None
        for k, (spec, pose) in enumerate(decks):
            if not spec.beacon:
                continue
            rel = pose.p_enu - p
            dist = float(np.linalg.norm(rel))
            if dist > self.cfg.landing_target_max_range_m or dist < 1e-3:
                continue
            if on_deck(pose, p)[2] <= 0.0:        # from below the deck: hidden by it
                continue
            b = R.T @ rel                          # body FLU
            f, r, d = float(b[0]), float(-b[1]), float(-b[2])     # FRD
            if d <= 0.0 or d / dist < self.cos_fov:
                continue
            if best is None or dist < best[0]:
                best = (dist, k, np.array([f, r, d]))
        if best is None:
            return None
        dist, k, (f, r, d) = best
        c = self.cfg
        n = self.rng.normal(0.0, 1.0, 3)
        return TargetReading(t_ns, r / d + c.landing_target_noise_tan * n[0],
                             -f / d + c.landing_target_noise_tan * n[1],
                             max(0.0, dist * (1.0 + c.landing_target_noise_m * n[2])), k)

    def range(self, t_ns: int, p_enu, q_enu_flu, decks: Sequence[Deck]
              ) -> Optional[RangeReading]:
        """The distance down the body's axis to the first surface, if due and in range."""
        if self.dec_range is None or not self.dec_range.due(t_ns):
            return None
        R = tq.quat2mat(np.asarray(q_enu_flu, dtype=float))
        down = -R[:, 2]                            # the body's down axis, ENU
        if down[2] > -math.cos(MAX_TILT_RAD):
            return None
        p = np.asarray(p_enu, dtype=float)
        hits: List[float] = [p[2] / -down[2]] if p[2] >= 0.0 else []
        for spec, pose in decks:
            n = pose.R[:, 2]                       # the deck's normal, ENU
            den = float(n @ down)
            if den >= -1e-6:
                continue
            s = float(n @ (pose.p_enu - p)) / den
            if s >= 0.0 and over_deck(spec, on_deck(pose, p + s * down)):
                hits.append(s)
        if not hits:
            return None
        c = self.cfg
        dist = min(hits) + c.rangefinder_noise_m * float(self.rng.normal())
        if not c.rangefinder_min_m <= dist <= c.rangefinder_max_m:
            return None
        return RangeReading(t_ns, dist, c.rangefinder_min_m, c.rangefinder_max_m)
