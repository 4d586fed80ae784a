"""What the viewers draw, as plain data (no rclpy): vehicle bodies, tracks, missions, maps.

Every shape is placed in the world frame (ENU `map`) from the vehicle's pose, so rviz2 and
Foxglove draw it without TF. The node (sim_viz.viz_node) turns Shapes into
visualization_msgs/Marker; the run summaries (sim_report.core.boats) use the same geometry.
"""

from collections import deque
from dataclasses import dataclass
import math
from typing import Any, Callable, Deque, List, Sequence, Tuple

import numpy as np
import pymap3d
from transforms3d import quaternions as tq

from sim_core.frames import quat_rotate

Color = Tuple[float, float, float, float]
Vec3 = Tuple[float, float, float]
BODY = (0.25, 0.25, 0.28, 1.0)
CCW = (0.15, 0.55, 0.95, 0.6)        # rotor discs: PX4 colours props by spin direction
CW = (0.95, 0.45, 0.10, 0.6)
MISSION = (0.10, 0.75, 0.25, 0.9)
OBSTACLE = (0.55, 0.40, 0.25, 0.8)
BOUNDS = (0.9, 0.9, 0.2, 1.0)
TEAMS = ((0.15, 0.45, 0.95, 1.0), (0.90, 0.20, 0.20, 1.0), (0.20, 0.75, 0.30, 1.0),
         (0.75, 0.35, 0.85, 1.0))
DEAD = (0.45, 0.45, 0.45, 0.7)
IDENTITY = (1.0, 0.0, 0.0, 0.0)


@dataclass
class Shape:
    """One marker, as visualization_msgs/Marker will carry it.

    kind: a Marker type name (cube, sphere, cylinder, line_strip, line_list, text_view_facing,
    arrow); position [m] and orientation (w, x, y, z) in the world frame; scale [m] as
    Marker.scale; points for lines.
    """

    ns: str
    id: int
    kind: str
    position: Tuple[float, float, float] = (0.0, 0.0, 0.0)
    orientation: Tuple[float, float, float, float] = IDENTITY
    scale: Tuple[float, float, float] = (1.0, 1.0, 1.0)
    color: Color = BODY
    points: Tuple[Tuple[float, float, float], ...] = ()
    text: str = ''


# A vehicle's body as its kind draws it: (p_enu, q_enu_flu) -> its shapes (kinds/<name>/view.py)
BodyShapes = Callable[[Any, Any], List[Shape]]


def vec3(p) -> Vec3:
    """Three numbers as a tuple of floats."""
    return (float(p[0]), float(p[1]), float(p[2]))


def team_color(team: int, alive: bool = True) -> Color:
    """A boat's colour: by team; grey once out of action (status 0)."""
    return TEAMS[int(team) % len(TEAMS)] if alive else DEAD


def quad_shapes(rotors: Sequence[Tuple[Sequence[float], int]], p, q, ns='vehicle',
                prop_radius_m: float = 0.12) -> List[Shape]:
    """Body, arms and rotor discs of a multirotor at position p, attitude q (w, x, y, z).

    rotors: (position in body FLU [m], direction +1 CCW / -1 CW) in motor order.
    """
    R = tq.quat2mat(q)
    p = np.asarray(p, dtype=float)
    q = tuple(float(x) for x in q)
    arm = max(float(np.linalg.norm(r[0][:2])) for r in rotors)
    tips = [tuple(p + R @ np.asarray(r[0], dtype=float)) for r in rotors]
    out = [Shape(ns, 0, 'cube', tuple(p), q, (0.5 * arm, 0.35 * arm, 0.08), BODY),
           Shape(ns, 1, 'line_list', tuple(p), IDENTITY, (0.02, 0.0, 0.0), BODY,
                 tuple(x for tip in tips for x in (tuple(p), tip))),
           # heading: a short arrow along body x (forward)
           Shape(ns, 2, 'arrow', tuple(p), q, (1.2 * arm, 0.03, 0.03), (0.9, 0.9, 0.9, 1.0))]
    for i, (tip, (_, direction)) in enumerate(zip(tips, rotors)):
        out.append(Shape(ns, 3 + i, 'cylinder', tip, q, (2 * prop_radius_m, 2 * prop_radius_m,
                                                          0.01), CCW if direction > 0 else CW))
    return out


def boat_shapes(length_m: float, p, q, ns='vehicle', idx: int = 0, color: Color = BODY,
                label: str = '') -> List[Shape]:
    """A hull (box of the boat's length, beam 0.45 L) and a bow arrow; an optional label."""
    p = tuple(float(x) for x in p)
    q = tuple(float(x) for x in q)
    h = 0.1 * length_m + 0.2                     # freeboard-ish height of the box [m]
    out = [Shape(ns, 3 * idx, 'cube', (p[0], p[1], p[2] + 0.5 * h), q,
                 (length_m, 0.45 * length_m, h), color),
           Shape(ns, 3 * idx + 1, 'arrow', p, q, (0.9 * length_m, 0.12 * length_m,
                                                  0.12 * length_m), color)]
    if label:
        out.append(Shape(ns, 3 * idx + 2, 'text_view_facing',
                         (p[0], p[1], p[2] + 0.6 * length_m + 1.0), IDENTITY,
                         (0.0, 0.0, max(1.0, 0.5 * length_m)), (1.0, 1.0, 1.0, 1.0), text=label))
    return out


def plane_shapes(p, q, ns='vehicle', color: Color = BODY) -> List[Shape]:
    """A high-wing light aircraft of a C172's proportions (8.3 m long, 11 m span).

    Fuselage, wing, horizontal and vertical tail, each a box in the body frame.
    """
    p = tuple(float(x) for x in p)
    q = tuple(float(x) for x in q)
    parts = (((0.0, 0.0, 0.0), (8.3, 1.1, 1.4)), ((-0.2, 0.0, 0.9), (1.5, 11.0, 0.15)),
             ((-4.3, 0.0, 0.2), (0.9, 3.4, 0.1)), ((-4.4, 0.0, 1.0), (1.1, 0.1, 1.5)))
    out = []
    for k, (off, size) in enumerate(parts):
        w = quat_rotate(q, off)
        out.append(Shape(ns, k, 'cube', (p[0] + w[0], p[1] + w[1], p[2] + w[2]), q, size, color))
    return out


def auv_shapes(length_m: float, diameter_m: float, p, q, ns='vehicle', color: Color = BODY
               ) -> List[Shape]:
    """A torpedo: an ellipsoid hull of the AUV's length and diameter and a cruciform tail."""
    p = tuple(float(x) for x in p)
    q = tuple(float(x) for x in q)
    span = 2.2 * diameter_m
    parts = (('sphere', (0.0, 0.0, 0.0), (length_m, diameter_m, diameter_m)),
             ('cube', (-0.42 * length_m, 0.0, 0.0), (0.1 * length_m, span, 0.01)),
             ('cube', (-0.42 * length_m, 0.0, 0.0), (0.1 * length_m, 0.01, span)))
    out = []
    for k, (kind, off, size) in enumerate(parts):
        w = quat_rotate(q, off)
        out.append(Shape(ns, k, kind, (p[0] + w[0], p[1] + w[1], p[2] + w[2]), q, size, color))
    return out


def mission_shapes(points_enu: Sequence[Sequence[float]], labels: Sequence[str],
                   ns='mission', size: float = 0.6) -> List[Shape]:
    """Mission items: a sphere and a label each, and the planned path through them.

    size: the spheres' diameter and the labels' height [m] (0.6 for a quad, tens for a plane).
    """
    out = [Shape(ns, 0, 'line_strip', scale=(size / 12.0, 0.0, 0.0), color=MISSION,
                 points=tuple(vec3(p) for p in points_enu))]
    for i, (p, label) in enumerate(zip(points_enu, labels)):
        p = vec3(p)
        out.append(Shape(ns, 1 + 2 * i, 'sphere', p, scale=(size, size, size), color=MISSION))
        out.append(Shape(ns, 2 + 2 * i, 'text_view_facing', (p[0], p[1], p[2] + 1.3 * size),
                         scale=(0.0, 0.0, size), color=(1.0, 1.0, 1.0, 1.0),
                         text=f'{i} {label}'))
    return out


def obstacle_shapes(centers_en: np.ndarray, radii: Sequence[float], names: Sequence[str] = (),
                    ns='obstacles') -> List[Shape]:
    """Obstacles as vertical cylinders of their collision radius (3 m tall)."""
    out = []
    for i, ((e, n), r) in enumerate(zip(centers_en, radii)):
        out.append(Shape(ns, i, 'cylinder', (float(e), float(n), 1.5),
                         scale=(2 * float(r), 2 * float(r), 3.0), color=OBSTACLE))
    return out


def bounds_shape(corners_en: np.ndarray, ns='map_bounds') -> Shape:
    """The map boundary as a closed line strip (corners in order)."""
    pts = [(float(e), float(n), 0.0) for e, n in corners_en]
    return Shape(ns, 0, 'line_strip', scale=(max(0.5, _span(corners_en) * 1e-3), 0.0, 0.0),
                 color=BOUNDS, points=tuple(pts + pts[:1]))


def track_shape(points: Sequence[Sequence[float]], idx: int, color: Color,
                ns='tracks') -> Shape:
    """A boat's track (line strip, 0.5 m wide)."""
    return Shape(ns, idx, 'line_strip', scale=(0.5, 0.0, 0.0),
                 color=(color[0], color[1], color[2], 0.6),
                 points=tuple(vec3(p) for p in points))


def _span(pts) -> float:
    a = np.asarray(pts, dtype=float)
    return float(np.max(a.max(axis=0) - a.min(axis=0))) if len(a) else 0.0


class Track:
    """A bounded track of positions.

    A sample is kept when the vehicle moved min_step_m since the last kept one (or min_period_s
    passed); at most max_points are kept (the oldest are dropped).
    """

    def __init__(self, max_points: int = 2000, min_step_m: float = 0.1,
                 min_period_s: float = 1.0):
        """Bounds of the track."""
        self.points: Deque[Tuple[float, Vec3]] = deque(maxlen=max_points)   # (t [s], xyz [m])
        self.min_step = min_step_m
        self.min_period = min_period_s

    def add(self, t: float, p) -> bool:
        """Offer a sample; True if it was kept."""
        p = (float(p[0]), float(p[1]), float(p[2]))
        if self.points:
            t0, p0 = self.points[-1]
            if t < t0:                       # time went back (sim reset): start over
                self.points.clear()
            elif (math.dist(p, p0) < self.min_step and t - t0 < self.min_period):
                return False
        self.points.append((t, p))
        return True

    def xyz(self) -> List[Tuple[float, float, float]]:
        """The kept positions, oldest first."""
        return [p for _, p in self.points]


@dataclass(frozen=True)
class SwarmMap:
    """The swarm's static scene in its local ENU frame (origin: the map's centre)."""

    obstacles_en: np.ndarray        # (M, 2) east, north [m]
    obstacle_radii: Tuple[float, ...]
    obstacle_names: Tuple[str, ...]
    bounds_en: np.ndarray           # (4, 2) corners NW, NE, SE, SW [m]
    boat_lengths: dict              # boat id -> hull length [m]


def swarm_map(cfg, types) -> SwarmMap:
    """SwarmMap of an init (sim_dynamics.core.swarm_config.SwarmConfig) and its TypeTable."""
    lat0, lon0 = cfg.center

    def en(lat, lon):
        n, e, _ = pymap3d.geodetic2ned(np.asarray(lat, dtype=float),
                                       np.asarray(lon, dtype=float), 0.0, lat0, lon0, 0.0)
        return np.column_stack([np.atleast_1d(e), np.atleast_1d(n)])
    ob = cfg.obstacles
    corners = en([cfg.map_north_deg, cfg.map_north_deg, cfg.map_south_deg, cfg.map_south_deg],
                 [cfg.map_west_deg, cfg.map_east_deg, cfg.map_east_deg, cfg.map_west_deg])
    return SwarmMap(
        obstacles_en=en([o.lat_deg for o in ob], [o.lon_deg for o in ob]) if ob
        else np.zeros((0, 2)),
        obstacle_radii=tuple(types.obstacles[o.type].radius_m for o in ob),
        obstacle_names=tuple(types.obstacles[o.type].name for o in ob),
        bounds_en=corners,
        boat_lengths={b.id: types.boats[b.type].length_m for b in cfg.boats})
