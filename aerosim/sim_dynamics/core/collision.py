"""Contacts between vehicles of a fleet, and hard impacts on the ground (pure, no rclpy).

Each multirotor is a sphere of ``body_radius`` (its rotor disks included). Two spheres that
overlap while closing get the impulse of a partly elastic collision along the line of their
centres (momentum conserved, the normal closing speed reversed and scaled by RESTITUTION) and
are pushed apart to touching, in inverse proportion to their masses. No friction, no torque:
the attitude is the flight controller's to lose. The ground plane itself is the model's
(the kernel supports the vehicle at z = 0); hitting it faster than GROUND_IMPACT_MPS is
reported as a ground collision.
"""

from dataclasses import dataclass
import math
from typing import List, Optional, Sequence, Tuple

RESTITUTION = 0.3             # carbon arms and props: most of the energy goes into breaking them
GROUND_IMPACT_MPS = 2.0       # m/s down at touchdown: faster than any landing (PX4 lands at 0.7)
PROP_ARM_RATIO = 1.5          # body radius = 1.5 x the longest rotor arm (props reach past it)


def body_radius(rotor_positions: Sequence[Sequence[float]]) -> float:
    """Collision radius [m] of a multirotor from its rotor positions (body FLU) [m]."""
    arm = max(math.hypot(p[0], p[1]) for p in rotor_positions)
    return PROP_ARM_RATIO * arm


@dataclass(frozen=True)
class Contact:
    """Two vehicles i < j touching: the changes to apply and the figures to report."""

    i: int
    j: int
    closing_speed: float       # m/s along the normal, before the impulse (> 0: closing)
    point: tuple               # m, ENU, on the line of centres
    dv_i: tuple                # m/s, ENU
    dv_j: tuple
    dp_i: tuple                # m, ENU: separation to touching
    dp_j: tuple


def _sub(a, b):
    return (a[0] - b[0], a[1] - b[1], a[2] - b[2])


def _dot(a, b):
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


def _scale(a, k):
    return (a[0] * k, a[1] * k, a[2] * k)


def contact(i: int, j: int, p_i, v_i, m_i: float, r_i: float, p_j, v_j, m_j: float,
            r_j: float, restitution: float = RESTITUTION) -> Optional[Contact]:
    """The contact of vehicles i and j (positions [m], velocities [m/s] ENU), or None.

    None when they do not overlap, or overlap while already separating (the last impulse
    works). Coincident centres separate along +x.
    """
    d = _sub(p_j, p_i)
    dist = math.sqrt(_dot(d, d))
    reach = r_i + r_j
    if dist >= reach:
        return None
    n = _scale(d, 1.0 / dist) if dist > 1e-9 else (1.0, 0.0, 0.0)
    closing = _dot(_sub(v_i, v_j), n)          # > 0: i moves towards j
    depth = reach - dist
    w_i, w_j = 1.0 / m_i, 1.0 / m_j
    k_i, k_j = w_i / (w_i + w_j), w_j / (w_i + w_j)
    dp_i, dp_j = _scale(n, -depth * k_i), _scale(n, depth * k_j)
    if closing <= 0.0:
        dv_i = dv_j = (0.0, 0.0, 0.0)
    else:
        jn = (1.0 + restitution) * closing / (w_i + w_j)     # impulse [N s]
        dv_i, dv_j = _scale(n, -jn * w_i), _scale(n, jn * w_j)
    point = tuple(p_i[k] + n[k] * (r_i - depth / 2.0) for k in range(3))
    return Contact(i, j, max(0.0, closing), point, dv_i, dv_j, dp_i, dp_j)


def contacts(positions: List[tuple], velocities: List[tuple], masses: Sequence[float],
             radii: Sequence[float]) -> List[Contact]:
    """Every touching pair (i < j), each computed on the positions and velocities given."""
    out: List[Contact] = []
    n = len(positions)
    for j in range(n):
        for i in range(j):
            c = contact(i, j, positions[i], velocities[i], masses[i], radii[i], positions[j],
                        velocities[j], masses[j], radii[j])
            if c is not None:
                out.append(c)
    return out


def ground_impact(was_airborne: bool, on_ground: bool, vz_before: float) -> Optional[float]:
    """Touchdown speed [m/s] if this step hit the ground harder than GROUND_IMPACT_MPS."""
    if was_airborne and on_ground and -vz_before > GROUND_IMPACT_MPS:
        return -vz_before
    return None


def pair_key(c: Contact) -> Tuple[int, int]:
    """The pair of a contact (to report each touch once, not every step of it)."""
    return (c.i, c.j)
