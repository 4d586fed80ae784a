"""A fleet's planned separation: planned paths, their closest approach, where copies go.

Pure (no ROS): sim_core.separation's planned paths and closest approach on hand-built cases
whose answer is worked out by hand, held to a brute-force sampled minimum; sim_core.fleet's
copies of the default scenario keep SEPARATION_M apart with DRIFT_TOLERANCE_S of drift, and a
listed fleet on a collision course is refused naming both vehicles.
"""

from dataclasses import replace
import math
import random
import re

import numpy as np
import pytest

from sim_core.errors import ConfigError
from sim_core.fleet import (
    FLEET_SPACING_M,
    member_scenarios,
    move_mission,
    place_copies,
    take_off_in_place,
)
from sim_core.geodesy import GeoOrigin
from sim_core.scenario import load_scenario, scenario_from_dict
from sim_core.separation import (
    DRIFT_TOLERANCE_S,
    MIN_DRIFT_S,
    NOMINAL_SPEEDS,
    SEPARATION_M,
    PlannedPath,
    Speeds,
    closest_approach,
    closest_pair,
    comes_within,
    planned_path,
)

ORIGIN = GeoOrigin(47.397742, 8.545594, 488.0)


def at(e, n):
    """lat_deg/lon_deg of the point e east, n north of ORIGIN [m]."""
    lat, lon, _ = ORIGIN.enu_to_geodetic(e, n, 0.0)
    return {'lat_deg': float(lat), 'lon_deg': float(lon)}


def item(command, en=None, alt=0.0, **kw):
    """A mission item mapping; en: (east, north) [m] from ORIGIN, None = no lat/lon."""
    d = {'command': command, 'alt_m': alt, **kw}
    if en is not None:
        d.update(at(*en))
    return d


def scenario(mission=(), start=(0.0, 0.0, 0.0), vehicles=None, vehicle=None):
    """A scenario at ORIGIN (an iris unless vehicle says otherwise), like test_fleet's."""
    v = {'params': 'iris', 'initial_position_enu': list(start), **(vehicle or {})}
    d = {'origin': {'lat_deg': ORIGIN.lat_deg, 'lon_deg': ORIGIN.lon_deg, 'alt_m': ORIGIN.alt_m},
         'vehicle': v, 'mission': list(mission)}
    if vehicles is not None:
        d['vehicles'] = vehicles
    return scenario_from_dict(d)


def knots_close(path, expected, rel=None):
    """The path's knots are the expected (t, e, n, u) ones within 1e-6 (or rel)."""
    assert len(path.knots) == len(expected), path.knots
    for k, x in zip(path.knots, expected):
        assert k == pytest.approx(x, rel=rel, abs=1e-6), (path.knots, expected)


def enu(sc, it):
    """(east, north) [m] of a mission item of scenario sc."""
    e, n, _ = sc.origin.geodetic_to_enu(it.lat_deg, it.lon_deg, sc.origin.alt_m)
    return float(e), float(n)


def line(t0, p0, t1, p1):
    """A path from p0 at t0 to p1 at t1 (ENU [m]), held before and after."""
    return PlannedPath(((t0, *p0), (t1, *p1)))


# --- planned paths -------------------------------------------------------------------------------
def test_a_quads_planned_path_climbs_in_place_and_flies_each_leg_at_its_slower_axis():
    """Start 50 m south of the origin; the takeoff item (no lat/lon) is at the origin."""
    sc = scenario([item('takeoff', alt=10.0),
                   item('waypoint', (0.0, 0.0), 10.0, hold_s=3.0),
                   item('waypoint', (0.0, 10.0), 30.0),       # 10 m at 5 m/s, 20 m up at 2 m/s
                   item('waypoint', (0.0, 10.0), 20.0),       # 10 m down at 1 m/s
                   item('rtl')],
                  start=(0.0, -50.0, 0.0))
    sp = NOMINAL_SPEEDS[sc.vehicle_kind]
    assert (sp.horizontal, sp.climb, sp.descent) == (5.0, 2.0, 1.0)
    p = planned_path(sc)
    knots_close(p, [(0.0, 0.0, -50.0, 0.0),
                    (5.0, 0.0, -50.0, 10.0),        # straight up where it stands: 10 m / 2 m/s
                    (15.0, 0.0, 0.0, 10.0),         # 50 m north / 5 m/s
                    (18.0, 0.0, 0.0, 10.0),         # hold_s
                    (28.0, 0.0, 10.0, 30.0),        # the climb (10 s) sets the leg's time
                    (38.0, 0.0, 10.0, 20.0),
                    (50.0, 0.0, -50.0, 20.0),       # rtl: back over the start at its altitude
                    (70.0, 0.0, -50.0, 0.0)])       # then down at 1 m/s
    assert p.end_s == pytest.approx(70.0)
    assert p.at(-3.0) == pytest.approx((0.0, -50.0, 0.0))       # waits at the start
    assert p.at(2.5) == pytest.approx((0.0, -50.0, 5.0), abs=1e-6)
    assert p.at(10.0) == pytest.approx((0.0, -25.0, 10.0), abs=1e-6)
    assert p.at(16.5) == pytest.approx((0.0, 0.0, 10.0), abs=1e-6)   # holding
    assert p.at(500.0) == pytest.approx((0.0, -50.0, 0.0), abs=1e-6)  # stays landed
    fast = planned_path(sc, speeds=Speeds(10.0, 4.0, 2.0))     # every leg twice as fast
    assert fast.end_s == pytest.approx((70.0 - 3.0) / 2.0 + 3.0)


def test_a_plane_climbs_out_on_the_line_to_its_takeoff_item_and_glides_to_land():
    mission = [item('takeoff', (0.0, 1000.0), 70.0),          # 1000 m at 50 m/s, 70 m at 3.5
               item('waypoint', (0.0, 4000.0), 70.0),         # 3000 m / 50 m/s
               item('land', (0.0, 6100.0))]                   # 2100 m / 50 m/s; 70 m at 3
    plane = {'kind': 'plane', 'params': 'c172r'}
    knots_close(planned_path(scenario(mission, vehicle=plane)),
                [(0.0, 0.0, 0.0, 0.0), (20.0, 0.0, 1000.0, 70.0), (80.0, 0.0, 4000.0, 70.0),
                 (122.0, 0.0, 6100.0, 0.0)], rel=1e-6)   # km from the origin: its curvature
    fast = planned_path(scenario(mission, vehicle=dict(plane, initial_speed_mps=100.0)))
    knots_close(fast, [(0.0, 0.0, 0.0, 0.0), (20.0, 0.0, 1000.0, 70.0),   # the climb sets it
                       (50.0, 0.0, 4000.0, 70.0), (50.0 + 70.0 / 3.0, 0.0, 6100.0, 0.0)],
                rel=1e-6)
    # the kind given overrides the scenario's: the quad scenario's mission flown as a plane
    assert planned_path(scenario(mission), 'plane').end_s == pytest.approx(122.0)


def test_a_boat_stays_on_the_surface():
    sc = scenario([item('takeoff', alt=10.0), item('waypoint', (0.0, 20.0), 10.0),
                   item('land', (0.0, 0.0))])
    knots_close(planned_path(sc, 'boat'),
                [(0.0, 0.0, 0.0, 0.0), (10.0, 0.0, 20.0, 0.0), (20.0, 0.0, 0.0, 0.0)])


# --- closest approach ----------------------------------------------------------------------------
EAST = line(0.0, (-25.0, 0.0, 10.0), 10.0, (25.0, 0.0, 10.0))     # over the origin at t = 5 s
NORTH = line(0.0, (0.0, -25.0, 10.0), 10.0, (0.0, 25.0, 10.0))    # over the origin at t = 5 s
NORTH_LATE = line(4.0, (0.0, -25.0, 10.0), 14.0, (0.0, 25.0, 10.0))   # there at t = 9 s


def test_paths_crossing_at_the_same_planned_time_meet_there():
    for drift in (DRIFT_TOLERANCE_S, 0.0, math.inf):
        a = closest_approach(EAST, NORTH, drift)
        assert a.distance_m == pytest.approx(0.0, abs=1e-5)
        assert (a.t_s, a.drift_s) == pytest.approx((5.0, 0.0), abs=1e-5)
    assert comes_within(EAST, NORTH, SEPARATION_M)


@pytest.mark.parametrize('other', [
    line(0.0, (-25.0, 10.0, 10.0), 10.0, (25.0, 10.0, 10.0)),      # 10 m north, alongside
    line(0.0, (-25.0, 0.0, 20.0), 10.0, (25.0, 0.0, 20.0)),        # 10 m above, alongside
    line(0.0, (25.0, 10.0, 10.0), 10.0, (-25.0, 10.0, 10.0)),      # head-on, 10 m to the side
])
def test_parallel_paths_10_m_apart_stay_10_m_apart_whatever_their_timing(other):
    for drift in (DRIFT_TOLERANCE_S, math.inf):
        assert closest_approach(EAST, other, drift).distance_m == pytest.approx(10.0, abs=1e-5)
        assert closest_approach(other, EAST, drift).distance_m == pytest.approx(10.0, abs=1e-5)
    assert not comes_within(EAST, other, 10.0)              # closer than: strictly
    assert comes_within(EAST, other, 10.001)
    assert not comes_within(EAST, other, SEPARATION_M, math.inf)


def test_a_drift_window_lets_paths_that_cross_4_s_apart_meet():
    """EAST is over the origin at 5 s, NORTH_LATE at 9 s: d = 4 s of drift makes them meet.

    Within |d| <= D: |p_a(t) - p_b(t + d)|^2 = 25 ((t - 5)^2 + (t + D - 9)^2) at d = D, least
    at t = 7 - D / 2: 50 (2 - D / 2)^2, i.e. sqrt(50) (2 - D / 2) m for D < 4.
    """
    a = closest_approach(EAST, NORTH_LATE, DRIFT_TOLERANCE_S)
    assert a.distance_m == pytest.approx(0.0, abs=1e-5)
    assert (a.t_s, a.drift_s) == pytest.approx((5.0, 4.0), abs=1e-5)   # the second 4 s behind
    b = closest_approach(NORTH_LATE, EAST, DRIFT_TOLERANCE_S)          # the other way round
    assert b.distance_m == pytest.approx(0.0, abs=1e-5)
    assert (b.t_s, b.drift_s) == pytest.approx((9.0, -4.0), abs=1e-5)
    for drift in (3.0, 1.0, 0.0):
        a = closest_approach(EAST, NORTH_LATE, drift)
        assert a.distance_m == pytest.approx(math.sqrt(50.0) * (2.0 - drift / 2.0), abs=1e-5)
        assert (a.t_s, a.drift_s) == pytest.approx((7.0 - drift / 2.0, drift), abs=1e-5)
    assert comes_within(EAST, NORTH_LATE, SEPARATION_M, DRIFT_TOLERANCE_S)
    assert comes_within(EAST, NORTH_LATE, SEPARATION_M, 4.0)
    assert not comes_within(EAST, NORTH_LATE, SEPARATION_M, 3.0)     # 3.54 m at best
    assert comes_within(EAST, NORTH_LATE, 3.6, 3.0)
    assert not comes_within(EAST, NORTH_LATE, SEPARATION_M, 0.0)


def test_infinite_drift_is_the_least_distance_between_the_paths_whatever_their_timing():
    much_later = line(100.0, (0.0, -25.0, 10.0), 110.0, (0.0, 25.0, 10.0))
    # within 5 s of drift: EAST flies by much_later's start 25 m north of it, and much_later
    # passes 25 m west of where EAST ended, 95 s after EAST was there
    assert closest_approach(EAST, much_later).distance_m == pytest.approx(25.0, abs=1e-5)
    assert not comes_within(EAST, much_later, SEPARATION_M)
    assert closest_approach(EAST, much_later, math.inf).distance_m == pytest.approx(0.0, abs=1e-5)
    assert comes_within(EAST, much_later, SEPARATION_M, math.inf)


def test_the_closest_pair_is_named_by_its_indices():
    far = line(0.0, (-25.0, 100.0, 10.0), 10.0, (25.0, 100.0, 10.0))
    alongside = line(0.0, (-25.0, 10.0, 10.0), 10.0, (25.0, 10.0, 10.0))
    i, j, a = closest_pair([EAST, far, NORTH_LATE])
    assert (i, j) == (0, 2) and a.distance_m == pytest.approx(0.0, abs=1e-5)
    i, j, a = closest_pair([EAST, far, NORTH_LATE], 3.0)
    assert (i, j) == (0, 2) and a.distance_m == pytest.approx(math.sqrt(12.5), abs=1e-5)
    i, j, a = closest_pair([far, NORTH, alongside])   # alongside at x = 0 2 s before NORTH
    assert (i, j) == (1, 2) and a.distance_m == pytest.approx(0.0, abs=1e-5)
    assert a.t_s == pytest.approx(7.0) and a.drift_s == pytest.approx(-2.0)
    i, j, a = closest_pair([far, alongside])
    assert (i, j) == (0, 1) and a.distance_m == pytest.approx(90.0, abs=1e-5)
    assert closest_pair([EAST]) is None and closest_pair([]) is None


def wander(rng, start_s, n):
    """A random-ish path: n legs of 2-6 s at up to 5 m/s around the origin, 5-15 m up."""
    t, p = start_s, (rng.uniform(-10, 10), rng.uniform(-10, 10), rng.uniform(5, 15))
    knots = [(t, *p)]
    for _ in range(n):
        dt = rng.uniform(2.0, 6.0)
        q = (rng.uniform(-15, 15), rng.uniform(-15, 15), rng.uniform(5, 15))
        s = min(1.0, 5.0 * dt / math.dist(p, q))          # at most 5 m/s
        p = tuple(p[i] + s * (q[i] - p[i]) for i in range(3))
        t += dt
        knots.append((t, *p))
    return PlannedPath(tuple(knots))


def sampled(a, b, drift, step):
    """Min over a grid of t and |d| <= drift (both `step` apart) of |p_a(t) - p_b(t + d)|."""
    ka, kb = np.array(a.knots), np.array(b.knots)
    t = np.arange(-drift - 1.0, max(a.end_s, b.end_s) + drift + 1.0 + step, step)
    pa = np.stack([np.interp(t, ka[:, 0], ka[:, i]) for i in (1, 2, 3)], -1)
    best = math.inf
    for d in np.linspace(-drift, drift, int(round(2.0 * drift / step)) + 1):
        pb = np.stack([np.interp(t + d, kb[:, 0], kb[:, i]) for i in (1, 2, 3)], -1)
        best = min(best, float(np.min(np.linalg.norm(pa - pb, axis=1))))
    return best


def top_speed(p):
    return max(math.dist(x[1:], y[1:]) / (y[0] - x[0]) for x, y in zip(p.knots, p.knots[1:]))


@pytest.mark.parametrize('seed, drift', [(1, DRIFT_TOLERANCE_S), (2, 2.0), (3, 0.5),
                                         (4, DRIFT_TOLERANCE_S), (5, 0.0)])
def test_closest_approach_is_exact_against_a_dense_grid(seed, drift):
    """Exact: at most the sampled minimum, at least that less what the grid can miss.

    A grid point is within half a step of the minimum in t and in d: the distance moves at
    most |v_a| + |v_b| per second of t and |v_b| per second of d.
    """
    rng = random.Random(seed)
    a, b = wander(rng, 0.0, 5), wander(rng, rng.uniform(0.0, 3.0), 5)
    step = 0.02
    ex = closest_approach(a, b, drift)
    grid = sampled(a, b, drift, step)
    va, vb = top_speed(a), top_speed(b)
    assert ex.distance_m <= grid + 1e-9
    assert ex.distance_m >= grid - step / 2.0 * (va + 2.0 * vb) - 1e-9
    assert abs(ex.drift_s) <= max(drift, MIN_DRIFT_S) + 1e-9
    # the reported place is where the paths are that far apart
    assert math.dist(a.at(ex.t_s), b.at(ex.t_s + ex.drift_s)) == pytest.approx(ex.distance_m,
                                                                               abs=1e-6)
    assert comes_within(a, b, ex.distance_m + 1e-6, drift)
    assert not comes_within(a, b, ex.distance_m - 1e-6, drift)


# --- copies of one scenario (vehicles:=N) -------------------------------------------------------
@pytest.mark.parametrize('n', [2, 3, 4])
def test_copies_of_the_default_scenario_keep_apart_with_the_drift_tolerance(n):
    sc = load_scenario('default')
    members = member_scenarios(sc, n)
    assert members == place_copies(sc, n)                      # no vehicles: list: copies
    assert len(members) == n
    paths = [planned_path(m) for m in members]
    i, j, a = closest_pair(paths, DRIFT_TOLERANCE_S)
    assert a.distance_m >= SEPARATION_M, (i, j, a)
    base = sc.initial_position_enu
    assert members[0].initial_position_enu == base
    assert members[0].mission == sc.mission                    # vehicle 0: the scenario's own
    starts = {m.initial_position_enu for m in members}
    assert len(starts) == n
    for m in members:
        off = (m.initial_position_enu[0] - base[0], m.initial_position_enu[1] - base[1])
        assert m.initial_position_enu[2] == base[2]
        assert len(m.mission) == len(sc.mission)
        stagger = {round(q.alt_m - p.alt_m, 6) for p, q in zip(sc.mission, m.mission)
                   if p.command in ('takeoff', 'waypoint')}
        assert len(stagger) == 1                              # the same height for each
        for p, q in zip(sc.mission, m.mission):
            assert q.command == p.command and q.hold_s == p.hold_s
            if q.command == 'takeoff':     # a multirotor takes off where it stands
                assert enu(m, q) == pytest.approx(m.initial_position_enu[:2], abs=1e-6)
            else:                          # moved by the start's offset
                assert np.subtract(enu(m, q), enu(sc, p)) == pytest.approx(off, abs=1e-6)
            if q.command == 'land':
                assert q.alt_m == p.alt_m


def test_one_copy_is_the_scenario_itself():
    sc = load_scenario('default')
    (m,) = member_scenarios(sc, 1)
    assert m.initial_position_enu == sc.initial_position_enu and m.mission == sc.mission
    assert m.fleet == ()


def test_a_copys_takeoff_is_placed_where_it_stands_not_at_the_scenario_origin():
    """Each takeoff item goes where the vehicle is then: its start, the land before, rtl's.

    Vehicle 0 flies the scenario's mission unchanged only where its takeoffs are there already:
    a takeoff item without lat/lon is at the origin, here 20 m from the start.
    """
    sc = scenario([item('takeoff', alt=5.0), item('waypoint', (20.0, 60.0), 5.0),
                   item('land', (20.0, 60.0)), item('takeoff', alt=5.0),
                   item('rtl'), item('takeoff', alt=5.0), item('land', (20.0, 0.0))],
                  start=(20.0, 0.0, 0.0))
    members = member_scenarios(sc, 2)
    for m in members:
        start = m.initial_position_enu[:2]
        points = [enu(m, it) for it in m.mission]
        # before the first item: its start; after a land: that point; after an rtl: the start
        assert points[0] == pytest.approx(start, abs=1e-6)
        assert points[3] == pytest.approx(points[2], abs=1e-6)
        assert points[5] == pytest.approx(start, abs=1e-6)
    m0 = members[0].mission
    assert enu(sc, sc.mission[0]) == pytest.approx((0.0, 0.0), abs=1e-6)
    assert m0[0] != sc.mission[0]                                # moved from the origin ...
    assert m0[3] != sc.mission[3] and m0[5] != sc.mission[5]
    assert m0[1:3] == sc.mission[1:3] and (m0[4], m0[6]) == (sc.mission[4], sc.mission[6])
    assert take_off_in_place(m0, members[0]) == m0                # already in place: kept


def test_the_old_layout_5_m_east_brings_default_copies_within_separation():
    """The old layout, copies 5 m east, brings copies of the default mission together.

    They share its westbound leg home (along the east axis): 1 s of drift puts one where the
    other was.
    """
    sc = load_scenario('default')
    copies = [replace(sc, initial_position_enu=(i * FLEET_SPACING_M, 0.0, 0.0),
                      mission=move_mission(sc.mission, sc, (i * FLEET_SPACING_M, 0.0)))
              for i in range(3)]
    paths = [planned_path(m) for m in copies]
    i, j, a = closest_pair(paths, DRIFT_TOLERANCE_S)
    assert a.distance_m < SEPARATION_M
    assert a.distance_m == pytest.approx(0.0, abs=1e-3) and abs(a.drift_s) > 0.5
    assert comes_within(paths[0], paths[1], SEPARATION_M, DRIFT_TOLERANCE_S)
    # placed copies do not use it
    assert member_scenarios(sc, 2)[1].initial_position_enu != copies[1].initial_position_enu


# --- a listed fleet ------------------------------------------------------------------------------
def quad(start, via, end):
    """A vehicles: entry: start (east, north), up 5 m, through `via` at 5 m, land at `end`."""
    return {'initial_position_enu': [start[0], start[1], 0.0],
            'mission': [item('takeoff', alt=5.0), item('waypoint', via, 5.0),
                        item('land', end)]}


def test_a_listed_fleet_on_a_collision_course_is_refused_naming_both_vehicles():
    """Two quads 20 m apart, each up 5 m in 2.5 s and 10 m to the same point in 2 s."""
    sc = scenario(vehicles=[quad((-10.0, 0.0), (0.0, 0.0), (0.0, 10.0)),
                            quad((10.0, 0.0), (0.0, 0.0), (0.0, -10.0))])
    with pytest.raises(ConfigError, match=re.escape(
            'vehicles[0] and vehicles[1]: their planned paths come within 0.00 m of each other '
            'at planned time 4.5 s')):
        member_scenarios(sc, 2)
    # a third vehicle well away: still these two named
    sc = scenario(vehicles=[quad((100.0, 0.0), (100.0, 50.0), (100.0, 50.0)),
                            quad((-10.0, 0.0), (0.0, 0.0), (0.0, 10.0)),
                            quad((10.0, 0.0), (0.0, 0.0), (0.0, -10.0))])
    with pytest.raises(ConfigError, match=r'vehicles\[1\] and vehicles\[2\]: .* within 0\.00 m'):
        member_scenarios(sc, 3)


def test_a_listed_fleet_apart_is_accepted_and_one_through_a_point_4_s_later_is_not():
    apart = scenario(vehicles=[quad((-10.0, 0.0), (-10.0, 20.0), (-10.0, 20.0)),
                               quad((10.0, 0.0), (10.0, 20.0), (10.0, 20.0))])
    members = member_scenarios(apart, 2)
    a = closest_approach(*(planned_path(m) for m in members))
    assert a.distance_m == pytest.approx(20.0, abs=1e-6)
    # the second reaches the first's point 4 s later (20 m farther out): within the drift
    late = scenario(vehicles=[quad((-10.0, 0.0), (0.0, 0.0), (0.0, 10.0)),
                              quad((30.0, 0.0), (0.0, 0.0), (0.0, -10.0))])
    with pytest.raises(ConfigError, match=r'vehicles\[0\] and vehicles\[1\]: .* within 0\.00 m'):
        member_scenarios(late, 2)


def test_same_time_is_searched_exactly_for_parallel_segments():
    """With drift 0 a zero-width band lost its crossing points to rounding (10.01 m, not 5)."""
    a = PlannedPath(((0.0, 0.0, 0.0, 10.0), (3.9, 10.0, 0.0, 10.0)))    # east at 2.56 m/s
    b = PlannedPath(((0.0, 10.0, 5.0, 10.0), (4.5, 0.0, 5.0, 10.0)))    # west, 5 m north
    r = closest_approach(a, b, 0.0)
    assert r.distance_m == pytest.approx(5.0, abs=1e-6)
    assert r.t_s == pytest.approx(1.0 / (1.0 / 3.9 + 1.0 / 4.5), abs=1e-4)
    assert comes_within(a, b, 6.0, 0.0) and not comes_within(a, b, 4.9, 0.0)
