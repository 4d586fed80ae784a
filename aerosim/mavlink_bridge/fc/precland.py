"""The built-in FC's landing-target tracker: a beacon's position and velocity (pure, no rclpy).

Fed with LANDING_TARGET as the bridge sends it on the HIL link (mavlink_bridge.core.hil:
angle_x / angle_y the image tangents of PX4's irlock_report, x right, y down the image whose
top points at the nose; distance [m]) and the vehicle's own estimate at that time (position
NED [m], attitude R body FRD -> NED). The beacon's direction in the body (FRD) is
(-tan_y, tan_x, 1), normalized and scaled by the distance: its position NED = own position +
R (that). An alpha-beta filter per axis (north, east) gives the target's position and
velocity (a moving deck: the boat's velocity, estimated from the beacon alone); down is the
latest measurement's (the deck's height under the vehicle).

A target is ``valid`` while its last measurement is younger than timeout_s; its position is
then predicted with its velocity to the time asked.
"""

from dataclasses import dataclass
import math
from typing import Optional

import numpy as np

ALPHA, BETA = 0.35, 0.08        # the filter's position and velocity gains per measurement


@dataclass
class Track:
    """The tracked target (NED, from the estimator's origin)."""

    t: float                    # s, sim time of the last measurement
    p: np.ndarray               # m, (north, east) at t
    v: np.ndarray               # m/s, (north, east)
    down: float                 # m, the target's down coordinate at t (NED)
    rel_down: float             # m, its height under the vehicle at t
    count: int = 1


class TargetTracker:
    """A landing target tracked from LANDING_TARGET measurements (module docstring)."""

    def __init__(self, timeout_s: float = 1.0):
        """timeout_s: a target not seen for this long [s] is not valid."""
        self.timeout_s = timeout_s
        self.track: Optional[Track] = None
        self.rejected = 0

    def reset(self) -> None:
        """Forget the target."""
        self.track = None

    def measure(self, t: float, tan_x: float, tan_y: float, distance: float, pos_ned,
                R) -> bool:
        """One measurement at sim time t [s]; False if refused (not finite, no distance)."""
        if not all(math.isfinite(x) for x in (tan_x, tan_y, distance)) or distance <= 0.0:
            self.rejected += 1
            return False
        ray = np.array([-tan_y, tan_x, 1.0])
        rel = np.asarray(R, dtype=float) @ (ray / np.linalg.norm(ray) * distance)
        p = np.asarray(pos_ned, dtype=float) + rel
        tr = self.track
        if tr is None or t - tr.t > self.timeout_s:
            self.track = Track(t, p[0:2].copy(), np.zeros(2), float(p[2]), float(rel[2]))
            return True
        dt = max(1e-3, t - tr.t)
        pred = tr.p + tr.v * dt
        innov = p[0:2] - pred
        tr.p = pred + ALPHA * innov
        tr.v = tr.v + BETA / dt * innov
        tr.t, tr.down, tr.rel_down = t, float(p[2]), float(rel[2])
        tr.count += 1
        return True

    def valid(self, t: float) -> bool:
        """Seen within timeout_s of sim time t [s] (and twice: a velocity)."""
        return self.track is not None and self.track.count >= 2 and \
            t - self.track.t <= self.timeout_s

    def position(self, t: float) -> np.ndarray:
        """The target's (north, east) [m] predicted to sim time t [s]."""
        tr = self.track
        assert tr is not None
        return tr.p + tr.v * max(0.0, t - tr.t)

    def velocity(self) -> np.ndarray:
        """The target's (north, east) velocity [m/s]."""
        tr = self.track
        assert tr is not None
        return tr.v.copy()
