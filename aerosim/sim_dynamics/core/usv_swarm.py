"""The USV swarm simulation behind the USV UI protocol (seed 004): pure numpy, no rclpy.

SwarmSim holds N boats (BoatSwarm), their PID speed/heading control (PidControl with the
init's gains), the motion modes and tasks of command 22, health and attack, obstacles, map
bounds and collisions. Every per-step computation is an array operation over the boats; Python
loops run only on events (a command, a waypoint reached, a collision).

Frames: local NED (north n, east e [m]) around the map's centre (pymap3d); headings compass
[rad] (0 north, clockwise). The protocol's units (degrees, %, m/s) are converted at the edges
(``command()`` in, ``columns()`` out).

Motion (command 22 control mode; tasks 0 and 4 use it, the other tasks steer by themselves):
0 none: throttle and rudder 0.   2 rudder/throttle: direct (rudder + = bow to starboard).
3 heading/speed: PID holds.      1 waypoint/speed: steer to each waypoint at its leg speed.
4 waypoint/time: arrive at waypoint k at its time [s after the command]: leg speed = distance
  to the waypoint's circle / time left (capped at the boat's top speed).
5 waypoint/variable speed: the waypoints at para7's speed; with changed = 0 only the speed is
  taken (live).
A waypoint counts as reached within ``waypoint_radius_m``; after the last one the boat stops
(speed 0, heading held). Tasks (target = para3), each a moving station point followed with
  v_des = v_target + k_station (p_slot - p), capped at the cruise speed (a boat within
  waypoint_radius_m of a slot that is not moving stops there):
1 escort: slot beside the target (starboard, port, then further out).   2 defend: between the
target and the nearest active boat of another team, at defend_distance_m (at most half way).
3 attack: close to 0.8 attack_radius; within attack_radius the target loses ``attack`` health
per second (simulation mode). 5 ring guard: clockwise round the target at the cruise speed on
a circle of ring_radius_m (tangent velocity plus a radial correction). 6 formation: wedge
slots behind the target (the leader), formation_spacing_m apart, by boat id. A boat at
health 0 has status 0 and stops.
Collisions (obstacle circles, map bounds, other boats; a boat is a circle of half its length):
a step that would bring a boat closer inside a contact is undone for it (position back, surge
and sway speed 0: it stops and cannot pass through); it keeps its command and may turn and
leave. One event is counted per contact (not per blocked step).

Split by concern: the type table and behaviour parameters are in swarm_types, the obstacles,
bounds and contacts in swarm_contacts; this module is the swarm and its guidance.
"""

import math
from typing import Dict, List, Optional

import numpy as np
import pymap3d
from scipy.spatial import cKDTree

from sim_core.units import wrap_180, wrap_pi
from sim_core.validate import FieldError
from sim_dynamics.core.swarm_config import SwarmConfig
from sim_dynamics.core.swarm_contacts import (
    CONTACT_MARGIN_M,
    NEIGHBOUR_SKIN_M,
    SwarmContacts,
    check_layout,
)
from sim_dynamics.core.swarm_orders import (
    TASKS_WITH_TARGET,
    WAYPOINT_MOTIONS,
    Motion,
    Order,
    Task,
    check_order,
)
from sim_dynamics.core.swarm_types import BEAUFORT_MPS, ObstacleType, SwarmParams, TypeTable
from sim_dynamics.core.usv import BoatSwarm
from sim_dynamics.core.usv_control import PidControl

# Re-exported from their homes (callers import them from here): the type table and parameters
# (swarm_types), the angle wrap (sim_core.units), the start check (swarm_contacts).
__all__ = ['SwarmSim', 'SwarmParams', 'TypeTable', 'ObstacleType', 'BEAUFORT_MPS', 'wrap_180',
           'check_layout', 'CONTACT_MARGIN_M', 'NEIGHBOUR_SKIN_M', 'PARK_BELOW_MPS']

# A task slot moving slower than this [m/s] is parked at (speed 0 within waypoint_radius_m).
PARK_BELOW_MPS = 0.3


class SwarmSim:
    """The boats of one init config, their commands, tasks, health and collisions."""

    def __init__(self, cfg: SwarmConfig, types: TypeTable, params: Optional[SwarmParams] = None):
        """Build the swarm at the init's positions; every boat in mode 0 (stopped).

        params: behaviour parameters (None: SwarmParams' defaults).

        Raises FieldError if a boat starts overlapping an obstacle or another boat.
        """
        params = SwarmParams() if params is None else params
        self.cfg, self.types, self.params = cfg, types, params
        self.lat0, self.lon0 = cfg.center
        specs = cfg.boats
        self.n_boats = len(specs)
        self.ids = np.array([b.id for b in specs], dtype=np.int64)
        self.index = cfg.boat_index()
        self.team = np.array([b.team for b in specs], dtype=np.int64)
        self.boats = BoatSwarm([types.boats[b.type] for b in specs])
        self.radius = 0.5 * self.boats.length
        self.health0 = np.array([b.health for b in specs], dtype=float)
        self.attack_radius = np.array([b.attack_radius_m for b in specs], dtype=float)
        self.attack = np.array([b.attack for b in specs], dtype=float)
        self.boats.gas_rate[:] = [b.gas_output_rate / 100.0 for b in specs]
        wind = BEAUFORT_MPS[cfg.weather]
        to = math.radians(params.wind_from_deg) + math.pi        # the air moves this way
        self.boats.set_environment(current_ne=params.current_ne,
                                   wind_ne=(wind * math.cos(to), wind * math.sin(to)),
                                   sea_state=cfg.wave_degree)
        self.control = PidControl(self.boats, cfg.gas_pid, cfg.steering_pid)
        self.contacts = SwarmContacts(cfg, types, self.to_ne, self.radius,
                                      params.boat_collisions)
        self.collisions = self.contacts.collisions          # events per kind (obstacle, ...)
        self._start_ne = self.to_ne([b.lat_deg for b in specs], [b.lon_deg for b in specs])
        self.contacts.check_start(self._start_ne)
        self.events: List[str] = []          # what happened since the last read (log lines)
        self.damage_enabled = True
        self.reset()

    # --- frames ----------------------------------------------------------------------------------
    def to_ne(self, lat, lon) -> np.ndarray:
        """(lat, lon) [deg] arrays -> (N, 2) local (north, east) [m]."""
        n, e, _ = pymap3d.geodetic2ned(np.asarray(lat, dtype=float),
                                       np.asarray(lon, dtype=float), 0.0,
                                       self.lat0, self.lon0, 0.0)
        return np.column_stack([np.atleast_1d(n), np.atleast_1d(e)])

    def to_geodetic(self, n, e):
        """Local (north, east) [m] arrays -> (lat, lon) [deg] arrays."""
        lat, lon, _ = pymap3d.ned2geodetic(n, e, 0.0, self.lat0, self.lon0, 0.0)
        return np.asarray(lat), np.asarray(lon)

    # --- state -----------------------------------------------------------------------------------
    def reset(self) -> None:
        """Every boat back at its init position, heading and health; stopped, mode 0."""
        b, n = self.boats, self.n_boats
        b.n[:], b.e[:] = self._start_ne[:, 0], self._start_ne[:, 1]
        b.psi[:] = wrap_pi(np.radians([s.start_angle_deg for s in self.cfg.boats]))
        for a in (b.u, b.v, b.r, b.u_dot, b.v_dot, b.r_dot, b.throttle, b.rudder,
                  b.throttle_cmd, b.rudder_cmd):
            a[:] = 0.0
        b.active[:] = True
        b.t = 0.0
        self.control.release()
        self.health = self.health0.copy()
        self.task = np.zeros(n, dtype=np.int64)
        self.target = np.full(n, -1, dtype=np.int64)        # index of the target boat
        self.mode = np.zeros(n, dtype=np.int64)
        self.route_id = np.zeros(n, dtype=np.int64)
        self.cruise = np.zeros(n)                           # task cruise speed [m/s]
        self.slot = np.zeros((n, 2))                        # escort/formation body offsets
        self.routes: Dict[int, np.ndarray] = {}             # boat index -> (K, 3) n, e, value
        self.wp_k = np.zeros(n, dtype=np.int64)
        self.wp = np.full((n, 3), np.nan)                   # current waypoint n, e, value
        self.route_t0 = np.zeros(n)                         # sim time of a mode-4 command
        self.rudder_cmd_deg = np.zeros(n)
        self.throttle_pct = np.zeros(n)
        self.contacts.reset()
        self.t = 0.0

    @property
    def status(self) -> np.ndarray:
        """1 normal, 0 fault (health 0)."""
        return (self.health > 0.0).astype(np.int64)

    # --- command 22 ------------------------------------------------------------------------------
    def command(self, o: Order) -> str:
        """Apply an order; returns a one-line description of what was applied (the log).

        Raises FieldError (check_order: ranges, unknown boats) or ValueError (a boat out of
        action) naming what is refused; a refused order changes nothing. A speed above the
        boat's top speed is clamped to it (and said so).
        """
        check_order(o, self.index, self.cfg.inside)
        i = self.index[o.boat_id]
        if self.health[i] <= 0.0:
            raise FieldError('state', f'boat {o.boat_id} is out of action (health 0)')
        ctl, b = self.control, self.boats
        top = float(b.u_top[i])
        speed = min(o.speed_mps, top)
        clamped = (f' (clamped from {o.speed_mps:g} m/s to the top speed {top:.2f})'
                   if o.speed_mps > top else '')
        self.route_id[i] = o.route_id
        self.task[i] = o.task
        with_target = o.task in TASKS_WITH_TARGET
        self.target[i] = self.index[o.target_id] if with_target else -1
        if with_target:
            given = speed if o.motion in (Motion.HEADING_SPEED,
                                          Motion.WAYPOINT_VARIABLE_SPEED) else 0.0
            self.cruise[i] = given if given > 0.0 else self.params.cruise_ratio * top
            self.mode[i] = Motion.HEADING_SPEED
            ctl.hold_speed(0.0, i)
            ctl.hold_heading(b.psi[i], i)
            self._assign_slots(o.task, self.target[i])
            return (f'boat {o.boat_id}: task {Task(o.task).name.lower()} on boat '
                    f'{o.target_id}, cruise {self.cruise[i]:.1f} m/s'
                    + (clamped if given > 0.0 else ''))
        if o.motion in WAYPOINT_MOTIONS and not o.route_changed and self.mode[i] == o.motion:
            if o.motion == Motion.WAYPOINT_VARIABLE_SPEED:
                self.routes[i][:, 2] = speed
                if not np.isnan(self.wp[i, 0]):
                    self.wp[i, 2] = speed
                return f'boat {o.boat_id}: speed {speed:g} m/s on its route{clamped}'
            return f'boat {o.boat_id}: route unchanged'
        self.mode[i] = o.motion
        self.routes.pop(i, None)
        self.wp[i] = np.nan
        ctl.release(i)
        if o.motion == Motion.NONE:
            b.command(0.0, 0.0, i)
            return f'boat {o.boat_id}: no control (throttle 0, rudder 0)'
        if o.motion == Motion.RUDDER_THROTTLE:
            self.rudder_cmd_deg[i], self.throttle_pct[i] = o.rudder_deg, o.throttle_pct
            b.command(o.throttle_pct / 100.0, math.radians(o.rudder_deg), i)
            return (f'boat {o.boat_id}: rudder {o.rudder_deg:g} deg, throttle '
                    f'{o.throttle_pct:g} %')
        if o.motion == Motion.HEADING_SPEED:
            ctl.hold_speed(speed, i)
            ctl.hold_heading(math.radians(o.heading_deg), i)
            return f'boat {o.boat_id}: heading {o.heading_deg:g} deg, speed {speed:g} m/s' + \
                clamped
        # waypoint motions (a new route)
        if not o.waypoints:
            self.mode[i] = Motion.NONE
            b.command(0.0, 0.0, i)
            return f'boat {o.boat_id}: {Motion(o.motion).name} without waypoints: stopped'
        wps = np.array([(w.lat_deg, w.lon_deg, w.value) for w in o.waypoints], dtype=float)
        ne = self.to_ne(wps[:, 0], wps[:, 1])
        route = np.column_stack([ne, wps[:, 2]])
        if o.motion == Motion.WAYPOINT_VARIABLE_SPEED:
            route[:, 2] = speed
        elif o.motion == Motion.WAYPOINT_SPEED:
            route[:, 2] = np.minimum(route[:, 2], top)
        self.routes[i] = route
        self.wp_k[i] = 0
        self.wp[i] = route[0]
        self.route_t0[i] = self.t
        ctl.hold_speed(0.0, i)
        ctl.hold_heading(b.psi[i], i)
        return (f'boat {o.boat_id}: {Motion(o.motion).name.lower()}, route {o.route_id} of '
                f'{len(route)} waypoints')

    def _assign_slots(self, task: int, target: int) -> None:
        """Slots (body offsets from the target: forward, starboard [m]) of escorts/formation."""
        p = self.params
        mates = np.flatnonzero((self.task == task) & (self.target == target))
        mates = mates[np.argsort(self.ids[mates])]
        for rank, i in enumerate(mates):
            ring = rank // 2 + 1
            side = 1.0 if rank % 2 == 0 else -1.0
            if task == Task.ESCORT:
                self.slot[i] = (0.0, side * ring * p.escort_distance_m)
            elif task == Task.FORMATION:
                self.slot[i] = (-ring * p.formation_spacing_m, side * ring * p.formation_spacing_m)

    # --- step ------------------------------------------------------------------------------------
    def step(self, dt: float) -> None:
        """Guidance, control, physics, damage and collisions for every boat, dt [s]."""
        self._waypoints()
        self._tasks()
        self.control.update(dt)
        b = self.boats
        n0, e0 = b.n.copy(), b.e.copy()
        b.step(dt)
        self.t += dt
        self._damage(dt)
        self.contacts.collide(b, n0, e0, self.ids, self.events)

    def _waypoints(self) -> None:
        b, ctl = self.boats, self.control
        on = ~np.isnan(self.wp[:, 0])
        if not on.any():
            return
        i = np.flatnonzero(on)
        dn, de = self.wp[i, 0] - b.n[i], self.wp[i, 1] - b.e[i]
        dist = np.hypot(dn, de)
        reached = dist < self.params.waypoint_radius_m
        for k in i[reached]:                               # events: next waypoint or stop
            route = self.routes[k]
            self.wp_k[k] += 1
            if self.wp_k[k] < len(route):
                self.wp[k] = route[self.wp_k[k]]
            else:
                self.wp[k] = np.nan
                ctl.hold_speed(0.0, k)
                self.events.append(f'boat {self.ids[k]}: route {self.route_id[k]} done')
        keep = ~reached
        i, dn, de, dist = i[keep], dn[keep], de[keep], dist[keep]
        if not len(i):
            return
        speed = self.wp[i, 2].copy()
        timed = self.mode[i] == Motion.WAYPOINT_TIME
        if timed.any():
            left = self.wp[i, 2] - (self.t - self.route_t0[i])
            # arrival = entering the waypoint's circle
            togo = np.maximum(dist[timed] - self.params.waypoint_radius_m, 0.0)
            speed[timed] = np.where(left[timed] > 0.0, togo / np.maximum(left[timed], 1e-3),
                                    np.inf)
        ctl.speed_sp[i] = np.minimum(speed, b.u_top[i])
        ctl.heading_sp[i] = np.arctan2(de, dn)

    def _tasks(self) -> None:
        b, ctl, p = self.boats, self.control, self.params
        i = np.flatnonzero((self.target >= 0) & (self.health > 0.0))
        if not len(i):
            return
        j = self.target[i]
        task = self.task[i]
        pos = np.column_stack([b.n, b.e])
        vn, ve = b.ground_velocity_ne()
        tp, tv, th = pos[j], np.column_stack([vn[j], ve[j]]), b.psi[j]
        rel = pos[i] - tp
        rng = np.maximum(np.hypot(rel[:, 0], rel[:, 1]), 1e-6)
        unit = rel / rng[:, None]
        slot = tp.copy()
        # escort / formation: body-frame offsets of the target
        off = (task == Task.ESCORT) | (task == Task.FORMATION)
        if off.any():
            c, s = np.cos(th[off]), np.sin(th[off])
            x, y = self.slot[i[off], 0], self.slot[i[off], 1]
            slot[off] = tp[off] + np.column_stack([x * c - y * s, x * s + y * c])
        att = task == Task.ATTACK
        slot[att] = tp[att] + 0.8 * self.attack_radius[i[att], None] * unit[att]
        ring = task == Task.RING
        slot[ring] = pos[i[ring]]          # no slot: a ring boat is never parked
        dfd = np.flatnonzero(task == Task.DEFEND)
        if len(dfd):
            slot[dfd] = self._defend_slots(i[dfd], tp[dfd], pos)
        err = slot - pos[i]
        vd = tv + p.station_gain * err
        if ring.any():
            # round the target clockwise at cruise speed on the tangent, the radius held by
            # a radial correction (a point chased ahead on the circle cuts inside it)
            u = unit[ring]
            tangent = np.column_stack([-u[:, 1], u[:, 0]])
            vd[ring] = tv[ring] + self.cruise[i[ring], None] * tangent \
                + p.station_gain * (p.ring_radius_m - rng[ring])[:, None] * u
        # at a slot that does not move, stop (a boat cannot hover: chasing the point at a
        # crawl only circles it); a dead target is not chased
        parked = (np.hypot(err[:, 0], err[:, 1]) < p.waypoint_radius_m) \
            & (np.hypot(tv[:, 0], tv[:, 1]) < PARK_BELOW_MPS)
        vd[parked | (att & (self.health[j] <= 0.0))] = 0.0
        sp = np.hypot(vd[:, 0], vd[:, 1])
        cap = self.cruise[i]
        scale = np.where(sp > cap, cap / np.maximum(sp, 1e-9), 1.0)
        ctl.speed_sp[i] = sp * scale
        ctl.heading_sp[i] = np.where(sp > 0.1, np.arctan2(vd[:, 1], vd[:, 0]),
                                     np.where(parked, b.psi[i], th))

    def _defend_slots(self, i, tp, pos) -> np.ndarray:
        """Slots of the defenders i: toward the nearest active opponent of each protected."""
        out = tp.copy()
        alive = self.health > 0.0
        for team in np.unique(self.team[i]):
            mine = self.team[i] == team
            opp = np.flatnonzero(alive & (self.team != team))
            if not len(opp):
                continue
            d, k = cKDTree(pos[opp]).query(tp[mine])
            vec = pos[opp[k]] - tp[mine]
            dist = np.maximum(np.atleast_1d(d), 1e-6)
            reach = np.minimum(self.params.defend_distance_m, 0.5 * dist)
            out[mine] = tp[mine] + vec * (reach / dist)[:, None]
        return out

    def _damage(self, dt: float) -> None:
        i = np.flatnonzero((self.task == Task.ATTACK) & (self.target >= 0)
                           & (self.health > 0.0))
        if not len(i) or not self.damage_enabled:
            return
        b = self.boats
        j = self.target[i]
        d = np.hypot(b.n[i] - b.n[j], b.e[i] - b.e[j])
        hit = (d <= self.attack_radius[i]) & (self.health[j] > 0.0)
        if not hit.any():
            return
        np.subtract.at(self.health, j[hit], self.attack[i[hit]] * dt)
        dead = np.flatnonzero((self.health <= 0.0) & b.active)
        for k in dead:
            self.events.append(f'boat {self.ids[k]}: health 0, out of action')
        self.health = np.maximum(self.health, 0.0)
        b.active[dead] = False
        self.control.release(dead)
        self.wp[dead] = np.nan
        self.target[dead] = -1

    # --- output ----------------------------------------------------------------------------------
    def columns(self) -> Dict[str, np.ndarray]:
        """Per-boat state columns (the SwarmState fields; the UI's command 21 carries them).

        Degrees compass in [-180, 180) for yaw and course, rad/s for rates, m/s, %, health.
        control_mode: 0 none, 2 rudder/throttle, 3 heading/speed (waypoint and task motions
        report their current heading/speed setpoints); control_a/control_b are 0 in mode 0.
        """
        b, ctl = self.boats, self.control
        lat, lon = self.to_geodetic(b.n, b.e)
        vn, ve = b.ground_velocity_ne()
        manual = self.mode == Motion.RUDDER_THROTTLE
        held = ctl.speed_hold | ctl.heading_hold
        mode = np.where(manual, int(Motion.RUDDER_THROTTLE),
                        np.where(held, int(Motion.HEADING_SPEED), int(Motion.NONE)))
        heading_sp = np.degrees(ctl.heading_sp) % 360.0
        off = mode == Motion.NONE
        return {
            'id': self.ids, 'lon_deg': lon, 'lat_deg': lat,
            'yaw_deg': wrap_180(np.degrees(b.psi)), 'yaw_rate': b.r, 'yaw_acc': b.r_dot,
            'pitch_deg': np.degrees(b.pitch), 'roll_deg': np.degrees(b.roll),
            'speed_forward': b.u, 'acc_forward': b.u_dot, 'speed_lateral': b.v,
            'acc_lateral': b.v_dot, 'course_deg': wrap_180(np.degrees(np.arctan2(ve, vn))),
            'status': self.status, 'task': self.task,
            'target_id': np.where(self.target >= 0, self.ids[np.maximum(self.target, 0)], 0),
            'control_mode': mode,
            'control_a': np.where(off, 0.0, np.where(manual, np.degrees(b.rudder_cmd),
                                                     heading_sp)),
            'control_b': np.where(off, 0.0, np.where(manual, b.throttle_cmd * 100.0,
                                                     ctl.speed_sp)),
            'health': self.health,
        }

    def take_events(self) -> List[str]:
        """The log lines of what happened since the last call."""
        ev, self.events = self.events, []
        return ev
