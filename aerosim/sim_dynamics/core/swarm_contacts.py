"""A USV swarm's contacts: obstacles, map bounds and boat pairs (pure numpy, no rclpy).

Frames as in usv_swarm: local NED (north n, east e [m]) around the map's centre; a boat is a
circle of half its length. A step that would bring a boat closer inside a contact is undone
for it (position back, surge and sway speed 0: it stops and cannot pass through); it keeps its
command and may turn and leave. One event is counted per contact (not per blocked step).
"""

from typing import Callable, List, Optional

import numpy as np
from scipy.spatial import cKDTree

from sim_core.validate import FieldError
from sim_dynamics.core.swarm_config import SwarmConfig
from sim_dynamics.core.swarm_types import TypeTable
from sim_dynamics.core.usv import BoatSwarm

# A contact lasts while the hull stays within this distance of touching [m] (hysteresis).
CONTACT_MARGIN_M = 0.5
# Neighbour list skin [m]: the boat-pair list is rebuilt when a boat moved half of it.
NEIGHBOUR_SKIN_M = 10.0


def check_layout(boats_ne, radius, obstacles_ne, obstacles_r, obstacle_ids) -> None:
    """Refuse a start where a boat's hull overlaps an obstacle or another boat.

    FieldError (kind 'value') naming the boat: the init is refused before anything changes.
    """
    if len(obstacles_r):
        tree = cKDTree(obstacles_ne)
        d, k = tree.query(boats_ne, k=min(4, len(obstacles_r)))
        d, k = d.reshape(len(boats_ne), -1), k.reshape(len(boats_ne), -1)
        over = d < obstacles_r[k] + radius[:, None]
        for i in np.flatnonzero(over.any(axis=1)):
            j = k[i][over[i]][0]
            raise FieldError('value', f'boats[{i}]: starts inside obstacle '
                                  f'{obstacle_ids[j]} ({float(d[i][over[i]][0]):.1f} m from its '
                                  f'centre, radius {obstacles_r[j]:g} m)')
    if len(boats_ne) > 1:
        pairs = cKDTree(boats_ne).query_pairs(2.0 * float(radius.max()), output_type='ndarray')
        if len(pairs):
            a, c = pairs[:, 0], pairs[:, 1]
            d = np.hypot(*(boats_ne[a] - boats_ne[c]).T)
            bad = np.flatnonzero(d < radius[a] + radius[c])
            if len(bad):
                lo, hi = sorted((int(a[bad[0]]), int(c[bad[0]])))   # boat indices
                raise FieldError('value', f'boats[{hi}]: starts {d[bad[0]]:.1f} m from '
                                      f'boats[{lo}], closer than their hulls allow')


class SwarmContacts:
    """The obstacles and map bounds of one init config, and the contacts of its boats."""

    def __init__(self, cfg: SwarmConfig, types: TypeTable, to_ne: Callable, radius: np.ndarray,
                 boat_collisions: bool = True):
        """Obstacles and bounds in the local frame; to_ne: (lat, lon) [deg] -> (N, 2) [m].

        radius: each boat's hull radius [m]; boat_collisions: boats stop on each other too.
        """
        ob = cfg.obstacles
        self.obstacle_ids = np.array([o.id for o in ob], dtype=np.int64)
        self.obstacle_ne = to_ne([o.lat_deg for o in ob], [o.lon_deg for o in ob]) \
            if ob else np.zeros((0, 2))
        self.obstacle_r = np.array([types.obstacles[o.type].radius_m for o in ob], dtype=float)
        self._obstacle_tree = cKDTree(self.obstacle_ne) if ob else None
        # map bounds: north/south edges at constant n; the west/east edges (meridians) as
        # lines through their corners (e shrinks toward the pole)
        c = to_ne([cfg.map_south_deg, cfg.map_north_deg] * 2,
                  [cfg.map_west_deg] * 2 + [cfg.map_east_deg] * 2)
        self.bounds_n = (float(c[0, 0]), float(c[1, 0]))       # (south, north) [m]
        self._edge_w = np.polyfit(c[:2, 0], c[:2, 1], 1)       # e = a n + b
        self._edge_e = np.polyfit(c[2:, 0], c[2:, 1], 1)
        self.radius = radius
        self.boat_collisions = boat_collisions
        self.collisions = {'obstacle': 0, 'bounds': 0, 'boat': 0}   # events per kind
        self.reset()

    def check_start(self, start_ne: np.ndarray) -> None:
        """Refuse boats starting at start_ne (N, 2) [m] inside an obstacle or each other."""
        check_layout(start_ne, self.radius, self.obstacle_ne, self.obstacle_r,
                     self.obstacle_ids)

    def reset(self) -> None:
        """No contact, counts 0 (the same dict, zeroed), the neighbour list to rebuild."""
        n = len(self.radius)
        for k in self.collisions:
            self.collisions[k] = 0
        self._contact = {k: np.zeros(n, dtype=bool) for k in self.collisions}
        self._pairs: Optional[np.ndarray] = None            # neighbour list (boat contacts)
        self._pairs_pos = None

    def collide(self, b: BoatSwarm, n0, e0, ids, events: List[str]) -> None:
        """Undo the step of boats that moved closer inside a contact; count new contacts.

        Per kind, ``hit``: the hull overlaps and the step brought it closer; ``near``: the hull
        is within CONTACT_MARGIN_M of touching. A contact lasts while the boat stays near
        (hysteresis), so a boat pinned against an obstacle is one event. b: the boats after
        the step, n0/e0 their positions before it [m]; events get a line per new contact
        naming the boat by ids.
        """
        n_boats = len(self.radius)
        pos = np.column_stack([b.n, b.e])
        old = np.column_stack([n0, e0])
        r, m = self.radius, CONTACT_MARGIN_M
        kinds = []
        if self._obstacle_tree is not None:
            k = min(4, len(self.obstacle_r))
            reach = float(self.obstacle_r.max() + r.max() + m)
            d, j = self._obstacle_tree.query(pos, k=k, distance_upper_bound=reach)
            d, j = d.reshape(len(pos), k), j.reshape(len(pos), k)
            valid = j < len(self.obstacle_r)
            jj = np.where(valid, j, 0)
            gap = d - self.obstacle_r[jj] - r[:, None]
            d_old = np.hypot(*(old[:, None, :] - self.obstacle_ne[jj]).transpose(2, 0, 1))
            kinds.append(('obstacle', (valid & (gap < 0.0) & (d < d_old)).any(axis=1),
                          (valid & (gap < m)).any(axis=1)))
        s, nn = self.bounds_n
        w, ee = np.polyval(self._edge_w, b.n), np.polyval(self._edge_e, b.n)
        hit = (((b.n - r < s) & (b.n < n0)) | ((b.n + r > nn) & (b.n > n0))
               | ((b.e - r < w) & (b.e < e0)) | ((b.e + r > ee) & (b.e > e0)))
        near = (b.n - r < s + m) | (b.n + r > nn - m) | (b.e - r < w + m) | (b.e + r > ee - m)
        kinds.append(('bounds', hit, near))
        if self.boat_collisions and n_boats > 1:
            pairs = self._neighbour_pairs(pos, 2.0 * float(r.max()) + m)
            h = np.zeros(n_boats, dtype=bool)
            nr = np.zeros(n_boats, dtype=bool)
            if len(pairs):
                a, c = pairs[:, 0], pairs[:, 1]
                d = np.hypot(*(pos[a] - pos[c]).T)
                d_old = np.hypot(*(old[a] - old[c]).T)
                over = d < r[a] + r[c]
                # each boat is stopped for its own approach (the other may be the pusher)
                h[a[over & (np.hypot(*(pos[a] - old[c]).T) < d_old)]] = True
                h[c[over & (np.hypot(*(old[a] - pos[c]).T) < d_old)]] = True
                touch = d < r[a] + r[c] + m
                nr[a[touch]] = nr[c[touch]] = True
            kinds.append(('boat', h, nr))
        hit_any = np.zeros(n_boats, dtype=bool)
        for kind, hit, near in kinds:
            was = self._contact[kind]
            for k in map(int, np.flatnonzero(hit & ~was)):     # a contact is one event
                self.collisions[kind] += 1
                events.append(f'boat {ids[k]}: collision ({kind}) at n '
                                   f'{b.n[k]:.1f} e {b.e[k]:.1f} m; stopped')
            self._contact[kind] = hit | (was & near)
            hit_any |= hit
        idx = np.flatnonzero(hit_any)
        if len(idx):
            b.n[idx], b.e[idx] = n0[idx], e0[idx]
            b.u[idx] = 0.0
            b.v[idx] = 0.0

    def _neighbour_pairs(self, pos, reach: float) -> np.ndarray:
        """Boat pairs that may be within reach [m]: a Verlet neighbour list.

        Built with a k-d tree for reach + NEIGHBOUR_SKIN_M and kept until some boat has moved
        half the skin from where it was at the build: no pair can come within reach unseen.
        """
        if self._pairs is not None:
            d = pos - self._pairs_pos
            moved = np.max(np.hypot(d[:, 0], d[:, 1]), initial=0.0)
            if moved < 0.5 * NEIGHBOUR_SKIN_M:
                return self._pairs
        self._pairs_pos = pos.copy()
        self._pairs = cKDTree(pos).query_pairs(reach + NEIGHBOUR_SKIN_M, output_type='ndarray')
        return self._pairs
