"""A fleet's planned separation: each vehicle's planned path, the closest approach of two (pure).

Planned path (``planned_path``): piecewise linear in time through the vehicle's start, its
takeoff climb and its mission items, flown at its kind's nominal speeds (NOMINAL_SPEEDS) from
planned time 0 (the fleet's clock starts when every member is ready: sim_ros's hold_start):
- takeoff: a multirotor climbs straight up where it stands (the judge's and the built-in FC's
  reading; sim_core.fleet places the item there, so PX4, which flies on to the item's
  position after the climb, does the same); a plane climbs out on the line to the item;
- waypoint: a straight line to the item, horizontally and vertically at once (each axis at
  its nominal speed, the slower sets the leg's time), then hold_s there;
- land: a multirotor flies to the point at its altitude, then descends to the ground; a plane
  glides on the line to it; rtl: a land at the start (PX4's climb to RTL_RETURN_ALT first,
  the built-in FC's to rtl_alt_m, is not planned);
- water and ground kinds (a boat, an AUV, a rover) stay on the surface (z = 0);
- before its start the vehicle waits at the start, after its last item it stays where that
  left it (landed, or over the last waypoint).

Closest approach (``closest_approach``): the least distance between two planned paths at the
same planned time, the second's clock allowed to run up to `drift_s` ahead or behind:
min over t and |d| <= drift_s of |p_a(t) - p_b(t + d)|. Exact: both paths are piecewise
linear in time, so for each pair of segments the squared distance is a convex quadratic in
(t, t + d) over a convex polygon (the two segments' time spans cut by the drift band); its
minimum is the unconstrained one if inside, else on an edge. Segment pairs whose time spans
or bounding boxes cannot beat the best so far are skipped: a fleet of 4 copies of the default
mission is checked in about a millisecond (scenario loads happen in every node).
"""

from dataclasses import dataclass
import math
from typing import Dict, List, Optional, Sequence, Tuple

from sim_core.kinds import AIR, KINDS, Speeds, info, kind_of
from sim_core.scenario import Scenario
from sim_core.units import clamp

# Two real PX4 v1.16 SITL instances flying copies of one mission (issue 39, vehicles:=2) reached
# the same items 2-5 s apart: mission upload, arming and pre-flight checks each take their own
# time, and the speed each leg is flown at differs a little. Planned paths must keep apart with
# either clock that far ahead of the other.
DRIFT_TOLERANCE_S = 5.0
# The least planned distance between two vehicles [m] (centre to centre: a quad's contact
# sphere is 0.38 m, a real PX4 holds its track within ~1-2 m, our built-in FC within ~1 m).
SEPARATION_M = 3.0
MIN_DRIFT_S = 1e-6      # the narrowest drift band searched [s] (same time: within a microsecond)


# Each kind's nominal speeds (sim_core.kinds KindInfo.speeds). The drift tolerance covers what
# these miss for copies of one mission (the same plan for both); vehicles with different
# missions rely on them.
NOMINAL_SPEEDS: Dict[str, Speeds] = {k: v.speeds for k, v in KINDS.items()}

Knot = Tuple[float, float, float, float]       # planned time [s], east, north, up [m] (ENU)


@dataclass(frozen=True)
class PlannedPath:
    """A vehicle's planned path: knots in time order.

    Before the first knot and after the last the vehicle stays at their positions.
    """

    knots: Tuple[Knot, ...]

    @property
    def end_s(self) -> float:
        """Planned time its last item is done [s]."""
        return self.knots[-1][0]

    def at(self, t: float) -> Tuple[float, float, float]:
        """Planned position at planned time t [s] (ENU, m)."""
        k = self.knots
        if t <= k[0][0]:
            return k[0][1:]
        for a, b in zip(k[:-1], k[1:]):
            if t <= b[0]:
                s = (t - a[0]) / (b[0] - a[0]) if b[0] > a[0] else 1.0
                return tuple(a[i] + s * (b[i] - a[i]) for i in (1, 2, 3))   # type: ignore
        return k[-1][1:]


@dataclass(frozen=True)
class Approach:
    """Where two planned paths come closest.

    The distance [m] at planned time t_s [s] of the first vehicle and t_s + drift_s of the
    second.
    """

    distance_m: float
    t_s: float
    drift_s: float


def planned_path(scenario: Scenario, kind=None, speeds: Optional[Speeds] = None) -> PlannedPath:
    """The planned path of the vehicle a scenario (as it sees the world) flies; see the module.

    kind: its kind's name (default scenario.vehicle_kind); speeds: default the kind's nominal
    ones (KindInfo.speeds; the horizontal one its initial_speed_mps when given: a plane
    starting airborne).
    """
    kind = kind_of(kind if kind is not None else scenario.vehicle_kind)
    k = info(kind)
    sp = speeds or k.speeds
    if speeds is None and scenario.initial_speed_mps > 0.0:
        sp = Speeds(scenario.initial_speed_mps, sp.climb, sp.descent)
    surface = k.medium != AIR          # a water or ground kind: on z = 0
    o = scenario.origin
    x, y, z = (float(c) for c in scenario.initial_position_enu)
    if surface:
        z = 0.0
    t = 0.0
    knots: List[Knot] = [(t, x, y, z)]

    def go(e: float, n: float, u: float) -> None:
        nonlocal t, x, y, z
        if surface:
            u = 0.0
        h = math.hypot(e - x, n - y)
        dz = u - z
        if h < 1e-6 and abs(dz) < 1e-6:         # there already (to geodetic round-off)
            return
        rate = sp.climb if dz > 0.0 else sp.descent
        dt = max(h / sp.horizontal if h > 0.0 else 0.0,
                 abs(dz) / rate if dz != 0.0 and rate > 0.0 else 0.0)
        if dt > 0.0:
            t += dt
            x, y, z = e, n, u
            knots.append((t, x, y, z))

    for it in scenario.mission:
        if it.command == 'rtl':
            e, n = float(scenario.initial_position_enu[0]), float(scenario.initial_position_enu[1])
        else:
            e, n, _ = o.geodetic_to_enu(it.lat_deg, it.lon_deg, o.alt_m)
            e, n = float(e), float(n)
        if it.command == 'takeoff':
            if k.vertical:                      # straight up where it stands
                go(x, y, it.alt_m)
            else:                               # climbing out on the line to the item
                go(e, n, it.alt_m)
        elif it.command == 'waypoint':
            go(e, n, it.alt_m)
        elif k.vertical:                        # land, rtl: over the point, then down
            go(e, n, z)
            go(e, n, 0.0)
        else:                                   # land, rtl: the glide to the point
            go(e, n, 0.0)
        if it.hold_s > 0.0:
            t += it.hold_s
            knots.append((t, x, y, z))
    return PlannedPath(tuple(knots))


Segment = Tuple[float, float, Tuple[float, float, float], Tuple[float, float, float],
                Tuple[float, float, float], Tuple[float, float, float]]


def _segments(path: PlannedPath, lo: float, hi: float) -> List[Segment]:
    """(t0, t1, p(t0), velocity, box min, box max) of each piece over [lo, hi] (held ends)."""
    k = path.knots
    out: List[Segment] = []
    first, last = k[0], k[-1]
    pieces = [((lo, *first[1:]), first)] + list(zip(k[:-1], k[1:])) + [(last, (hi, *last[1:]))]
    for a, b in pieces:
        t0, t1 = a[0], b[0]
        if t1 <= t0:
            continue
        p0, p1 = a[1:], b[1:]
        v = tuple((p1[i] - p0[i]) / (t1 - t0) for i in range(3))
        out.append((t0, t1, p0, v,                                          # type: ignore
                    tuple(min(p0[i], p1[i]) for i in range(3)),
                    tuple(max(p0[i], p1[i]) for i in range(3))))
    return out


def _clip(poly: List[Tuple[float, float]], a: float, b: float, c: float):
    """The part of a convex polygon where a s + b u <= c (Sutherland-Hodgman)."""
    out = []
    n = len(poly)
    for i in range(n):
        p, q = poly[i], poly[(i + 1) % n]
        fp, fq = a * p[0] + b * p[1] - c, a * q[0] + b * q[1] - c
        if fp <= 0.0:
            out.append(p)
        if (fp < 0.0 < fq) or (fq < 0.0 < fp):
            r = fp / (fp - fq)
            out.append((p[0] + r * (q[0] - p[0]), p[1] + r * (q[1] - p[1])))
    return out


def _dot(a, b) -> float:
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


def _pair(sa: Segment, sb: Segment, drift: float) -> Optional[Tuple[float, float, float]]:
    """Least squared distance of two segments with |s - u| <= drift: (d2, s, u), or None."""
    a0, a1, pa, va = sa[0], sa[1], sa[2], sa[3]
    b0, b1, pb, vb = sb[0], sb[1], sb[2], sb[3]
    poly = _clip(_clip([(a0, b0), (a1, b0), (a1, b1), (a0, b1)], 1.0, -1.0, drift),
                 -1.0, 1.0, drift)
    if not poly:
        return None
    # d(s, u) = c + va s - vb u
    c = tuple(pa[i] - va[i] * a0 - pb[i] + vb[i] * b0 for i in range(3))

    def d(s: float, u: float):
        return (c[0] + va[0] * s - vb[0] * u, c[1] + va[1] * s - vb[1] * u,
                c[2] + va[2] * s - vb[2] * u)

    best: Optional[Tuple[float, float, float]] = None
    A, B, C = _dot(va, va), -_dot(va, vb), _dot(vb, vb)
    det = A * C - B * B
    if det > 1e-9 * max(A * C, 1e-12):
        ra, rb = -_dot(c, va), _dot(c, vb)
        s, u = (C * ra - B * rb) / det, (A * rb - B * ra) / det
        eps = 1e-9
        if a0 - eps <= s <= a1 + eps and b0 - eps <= u <= b1 + eps and abs(s - u) <= drift + eps:
            v = d(s, u)
            best = (_dot(v, v), s, u)
    n = len(poly)
    for i in range(n):
        p, q = poly[i], poly[(i + 1) % n]
        d0, d1 = d(*p), d(*q)
        w = (d1[0] - d0[0], d1[1] - d0[1], d1[2] - d0[2])
        ww = _dot(w, w)
        lam = 0.0 if ww <= 0.0 else clamp(-_dot(d0, w) / ww, 0.0, 1.0)
        v = (d0[0] + lam * w[0], d0[1] + lam * w[1], d0[2] + lam * w[2])
        d2 = _dot(v, v)
        if best is None or d2 < best[0]:
            best = (d2, p[0] + lam * (q[0] - p[0]), p[1] + lam * (q[1] - p[1]))
    return best


def _box_gap2(sa: Segment, sb: Segment) -> float:
    """Squared distance between two segments' bounding boxes (a lower bound)."""
    g = 0.0
    for i in range(3):
        lo, hi = sa[4][i], sa[5][i]
        lo2, hi2 = sb[4][i], sb[5][i]
        x = lo2 - hi if lo2 > hi else (lo - hi2 if lo > hi2 else 0.0)
        g += x * x
    return g


def _closest(a: PlannedPath, b: PlannedPath, drift_s: float, limit_m: float
             ) -> Optional[Tuple[float, float, float]]:
    """(d2, s, u) of the closest approach, or None if it is not below limit_m."""
    span = max(a.end_s, b.end_s) + 1.0
    # any more is as much as any timing at all; at least MIN_DRIFT_S: a band of zero width
    # lost its crossing points to rounding in _clip (5 m apart read as 10 m with drift 0)
    drift = min(max(drift_s, MIN_DRIFT_S), span)
    lo, hi = -drift - 1.0, span + drift
    sa, sb = _segments(a, lo, hi), _segments(b, lo, hi)
    best: Optional[Tuple[float, float, float]] = None
    bound = limit_m * limit_m
    for x in sa:
        for y in sb:
            if x[0] > y[1] + drift or y[0] > x[1] + drift or _box_gap2(x, y) >= bound:
                continue
            r = _pair(x, y, drift)
            if r is not None and r[0] < bound:
                best, bound = r, r[0]
    return best


def closest_approach(a: PlannedPath, b: PlannedPath,
                     drift_s: float = DRIFT_TOLERANCE_S) -> Approach:
    """The least distance of a and b at the same planned time, b's clock up to drift_s off.

    drift_s = math.inf: whatever their timing (the least distance between the paths).
    """
    best = _closest(a, b, drift_s, math.inf)
    assert best is not None            # the held ends always overlap in time
    d2, s, u = best
    return Approach(math.sqrt(max(0.0, d2)), s, u - s)


def comes_within(a: PlannedPath, b: PlannedPath, distance_m: float,
                 drift_s: float = DRIFT_TOLERANCE_S) -> bool:
    """A and b come closer than distance_m [m] (closest_approach, skipping what is farther)."""
    return _closest(a, b, drift_s, distance_m) is not None


def closest_pair(paths: Sequence[PlannedPath], drift_s: float = DRIFT_TOLERANCE_S
                 ) -> Optional[Tuple[int, int, Approach]]:
    """The two paths (i < j) that come closest, and where; None with fewer than two."""
    best: Optional[Tuple[int, int, Approach]] = None
    for j in range(len(paths)):
        for i in range(j):
            r = closest_approach(paths[i], paths[j], drift_s)
            if best is None or r.distance_m < best[2].distance_m:
                best = (i, j, r)
    return best
