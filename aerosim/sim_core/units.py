"""Units and angles: the house's one set of conversion factors and wraps (pure, no rclpy).

Every factor is named ``<UNIT>_<SI UNIT>``: how many SI units one of the unit is, so a value
in the unit times the factor is SI (``alt_ft * FT_M`` is metres, ``v_mps / KNOT_MPS`` knots).
The wraps and the clamp take a float and give a float, or take an array and give an array.
"""

import math

import numpy as np

FT_M = 0.3048                     # m per foot (international foot)
NM_M = 1852.0                     # m per nautical mile
KNOT_MPS = NM_M / 3600.0          # m/s per knot
SLUG_KG = 14.5939029              # kg per slug
SLUG_FT2_KGM2 = SLUG_KG * FT_M * FT_M   # kg m^2 per slug ft^2
PSF_PA = 47.880259                # Pa per lbf/ft^2

_SCALAR = (int, float)


def wrap_pi(a):
    """Angle(s) [rad] wrapped into [-pi, pi): a float for a float, an array for an array."""
    if isinstance(a, _SCALAR):
        return (a + math.pi) % (2.0 * math.pi) - math.pi
    return np.mod(np.asarray(a, dtype=float) + math.pi, 2.0 * math.pi) - math.pi


def wrap_180(deg):
    """Angle(s) [deg] wrapped into [-180, 180): a float for a float, an array for an array."""
    if isinstance(deg, _SCALAR):
        return (deg + 180.0) % 360.0 - 180.0
    return (np.asarray(deg, dtype=float) + 180.0) % 360.0 - 180.0


def clamp(x, lo, hi):
    """Return x limited to [lo, hi]: a float for a float (NaN stays NaN), elementwise for arrays.

    The scalar branch is a plain comparison (np.clip costs ~5x more on a number or a small
    array); an array goes through np.minimum/np.maximum, lo and hi scalars or arrays.
    """
    if isinstance(x, _SCALAR):
        return lo if x < lo else hi if x > hi else x
    return np.minimum(np.maximum(x, lo), hi)
