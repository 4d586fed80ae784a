"""One world of any mix of kinds, pure (sim_world.core, the kinds' models): no ROS.

Quads, the C172 and a WAM-V stepped on one clock with their in-process controllers and one
contact model; each test checks the physics (positions reached, momentum, closing speeds,
events counted), not only that the code runs.
"""

import math
import re

import numpy as np
import pytest
from sim_world.core.world import GROUND, WATER, World, open_water

from kinds.boat.controllers import BoatWaypoints
from kinds.boat.model import BoatModel
from kinds.entry import make_controller, make_model
from kinds.multirotor.model import QuadModel
from kinds.plane.controllers import PlaneAutopilot
from kinds.plane.model import PlaneModel
from sim_core.frames import euler_ned_to_quat, q_ned_frd_to_enu_flu
from sim_core.geodesy import GeoOrigin
from sim_core.members import world_members
from sim_core.scenario import load_scenario, scenario_from_dict
from sim_dynamics.core.collision import RESTITUTION

ORIGIN = GeoOrigin(41.185242, -8.706139, 0.0)
DT = 0.004                  # s: the quads' 250 Hz (the plane's JSBSim runs every 2nd step)


def wp(e, n, alt=0.0, radius=1.0):
    """A mission waypoint at ENU (e, n) [m], alt above the origin [m]."""
    lat, lon, _ = ORIGIN.enu_to_geodetic(e, n, 0.0)
    return {'command': 'waypoint', 'lat_deg': lat, 'lon_deg': lon, 'alt_m': alt,
            'acceptance_radius_m': radius}


def members(*vehicles, env=None):
    """The members of a scenario of these `vehicles:` entries."""
    d = {'name': 'world_test',
         'origin': {'lat_deg': ORIGIN.lat_deg, 'lon_deg': ORIGIN.lon_deg, 'alt_m': 0.0},
         'vehicle': {'kind': 'multirotor', 'params': 'iris'},
         'environment': env or {}, 'vehicles': list(vehicles)}
    return world_members(scenario_from_dict(d))


def quad(x, y, z, params='iris'):
    return {'kind': 'multirotor', 'params': params, 'controller': 'external',
            'initial_position_enu': [x, y, z]}


def run(world, seconds, t_ns=0, until=None):
    """Step world for seconds of sim time from t_ns; (events, t_ns at the end)."""
    events = []
    for _ in range(int(round(seconds / DT))):
        events += world.step(DT, t_ns)
        t_ns += int(round(DT * 1e9))
        if until is not None and until():
            break
    return events, t_ns


def test_the_plane_with_its_autopilot_flies_a_circuit_through_every_waypoint():
    # airborne and trimmed at 300 m heading north, a 1.2 x 1.2 km triangle, 150 m radius
    pts = [(0.0, 600.0), (-1200.0, 600.0), (-1200.0, -600.0)]
    ms = members({'kind': 'plane', 'params': 'c172r', 'controller': 'autopilot',
                  'initial_position_enu': [0.0, -600.0, 300.0], 'initial_yaw_deg': 0.0,
                  'mission': [wp(e, n, 300.0, 150.0) for e, n in pts]})
    w = World.build(ms, make_model, make_controller)
    ap = w.controller('plane0')
    assert isinstance(ap, PlaneAutopilot) and ap.item == 0 and not ap.done
    closest = [math.inf] * 3
    items = set()
    t_ns, events = 0, []
    while not w.done() and t_ns < 200e9:
        events += w.step(DT, t_ns)
        t_ns += int(DT * 1e9)
        p = w.samples[0].p_enu
        for k, (e, n) in enumerate(pts):
            closest[k] = min(closest[k], math.hypot(p[0] - e, p[1] - n))
        assert abs(p[2] - 300.0) < 40.0, f'altitude {p[2]:.0f} m at t = {t_ns * 1e-9:.1f} s'
        items.add(ap.item)
    assert w.done() and ap.item == 3, ap.ap.legs_done()
    assert items == {0, 1, 2, 3}
    # each waypoint flown within its 150 m, none given up abeam
    assert max(closest) < 155.0, closest
    assert all(how.startswith('within') for _, _, how in ap.ap.legs_done())
    # ~3.9 km of legs at the cruise speed (100 kt = 51 m/s) and its turns
    assert 60.0 < t_ns * 1e-9 < 130.0
    assert events == []
    assert any('complete' in text for _, text in ap.log)


def test_the_boat_follows_three_waypoints_and_stops_at_the_last():
    pts = [(0.0, 60.0), (60.0, 100.0), (120.0, 60.0)]
    ms = members({'kind': 'boat', 'params': 'wamv', 'controller': 'waypoint',
                  'initial_position_enu': [0.0, 20.0, 0.0], 'initial_yaw_deg': 0.0,
                  'mission': [wp(e, n, radius=5.0) for e, n in pts]})
    w = World.build(ms, make_model, make_controller)
    c = w.controller('boat0')
    assert isinstance(c, BoatWaypoints) and c.cruise_mps == pytest.approx(0.7 * 2.3)
    closest = [math.inf] * 3
    speed_max = 0.0
    t_ns = 0
    while not w.done() and t_ns < 300e9:
        w.step(DT, t_ns)
        t_ns += int(DT * 1e9)
        s = w.samples[0]
        assert s.p_enu[2] == 0.0                    # on the water
        speed_max = max(speed_max, math.hypot(s.v_enu[0], s.v_enu[1]))
        for k, (e, n) in enumerate(pts):
            closest[k] = min(closest[k], math.hypot(s.p_enu[0] - e, s.p_enu[1] - n))
    assert c.done and c.item == 3
    assert max(closest) <= 5.0, closest                        # each within its radius
    assert speed_max < 1.1 * c.cruise_mps                      # at the cruise speed
    # ~190 m of legs at 1.6 m/s, the turns and the slow last metres
    assert 100.0 < t_ns * 1e-9 < 220.0
    # done: holds released, stopped
    w.step(DT, t_ns)
    boat = w.model('boat0')
    assert isinstance(boat, BoatModel)
    assert not boat.control.speed_hold[0] and boat.boat.throttle_cmd[0] == 0.0


def test_two_quads_head_on_touch_once_conserving_momentum():
    ms = members(quad(-2.0, 0.0, 10.0), quad(2.0, 0.0, 10.0, 'jmavsim_quad'))
    w = World.build(ms, make_model, make_controller)
    a, b = w.model('quad0'), w.model('quad1')
    assert isinstance(a, QuadModel) and isinstance(b, QuadModel)
    assert (a.mass_kg, b.mass_kg) == (1.5, 0.8)
    a.set_throttles([a.hover_throttle()] * a.motors)
    b.set_throttles([b.hover_throttle()] * b.motors)
    a.push((0, 0, 0), (2.0, 0.0, 0.0))
    b.push((0, 0, 0), (-2.0, 0.0, 0.0))
    w.resample(0)
    t_ns, events = 0, []
    before = after = None
    for _ in range(int(3.0 / DT)):
        prev = w.samples
        ev = w.step(DT, t_ns)
        t_ns += int(DT * 1e9)
        if ev and before is None:
            before, after = prev, w.samples
        events += ev
    assert len(events) == 1, events
    e = events[0]
    assert (e.vehicle, e.other) == ('quad0', 'quad1')
    # closing at the speed they had (4 m/s less the body drag on the way)
    v_rel = before[0].v_enu[0] - before[1].v_enu[0]
    assert 3.0 < v_rel < 4.0
    assert e.closing_speed == pytest.approx(v_rel, rel=0.02)
    assert abs(e.point[0]) < 0.3 and 0.7e9 < e.t_ns < 1.2e9
    # momentum kept through the contact step (the impulse (1 + e) mu v_rel: 2.7 N s)
    p_before = 1.5 * np.array(before[0].v_enu) + 0.8 * np.array(before[1].v_enu)
    p_after = 1.5 * np.array(after[0].v_enu) + 0.8 * np.array(after[1].v_enu)
    impulse = np.linalg.norm(1.5 * (np.array(after[0].v_enu) - before[0].v_enu))
    assert impulse == pytest.approx((1 + RESTITUTION) * 1.5 * 0.8 / 2.3 * v_rel, rel=0.05)
    assert np.linalg.norm(p_after - p_before) < 0.02 * impulse
    # the relative speed along the line of centres reversed and scaled by the restitution
    n = np.subtract(after[1].p_enu, after[0].p_enu)
    n /= np.linalg.norm(n)
    assert np.dot(np.subtract(after[0].v_enu, after[1].v_enu), n) == \
        pytest.approx(-RESTITUTION * e.closing_speed, abs=1e-6)
    # and apart: two radii at least
    p0, p1 = w.samples[0].p_enu, w.samples[1].p_enu
    assert p1[0] - p0[0] > a.radius_m + b.radius_m


def test_a_quad_flying_into_a_boat_is_one_event_of_any_two_kinds():
    ms = members(quad(-4.0, 0.0, 2.0),
                 {'kind': 'boat', 'params': 'wamv', 'controller': 'imc',
                  'initial_position_enu': [0.0, 0.0, 0.0], 'initial_yaw_deg': 90.0})
    w = World.build(ms, make_model, make_controller)
    q, boat = w.model('quad0'), w.model('boat0')
    assert w.controller('boat0') is None              # DUNE's, over IMC: not in the world
    assert isinstance(q, QuadModel) and isinstance(boat, BoatModel)
    assert boat.radius_m == pytest.approx(2.45)
    q.set_throttles([q.hover_throttle()] * q.motors)
    q.push((0, 0, 0), (3.0, 0.0, 0.0))
    w.resample(0)
    t_ns, events = 0, []
    before = after = None
    for _ in range(int(6.0 / DT)):
        prev = w.samples
        ev = w.step(DT, t_ns)
        t_ns += int(DT * 1e9)
        if ev and before is None:
            before, after = prev, w.samples
        events += ev
    assert len(events) == 1, events
    e = events[0]
    assert (e.vehicle, e.other) == ('quad0', 'boat0')
    # ~2.7 m/s left of 3 at contact, 2 m above the boat's centre: 45 deg off the line of centres
    assert 1.5 < e.closing_speed < 2.2
    assert 0.0 < e.point[2] < 2.0
    # the quad bounced off along the line of centres, the boat took the horizontal momentum
    # (its vertical share, 1/120 of the impulse, went into the water) and stayed on the water
    n = np.subtract(after[1].p_enu, after[0].p_enu)
    n /= np.linalg.norm(n)
    assert np.dot(np.subtract(after[0].v_enu, after[1].v_enu), n) == \
        pytest.approx(-RESTITUTION * e.closing_speed, abs=0.05)
    assert after[1].v_enu[0] > 0.005
    px = 1.5 * before[0].v_enu[0] + 180.0 * before[1].v_enu[0]
    qx = 1.5 * after[0].v_enu[0] + 180.0 * after[1].v_enu[0]
    assert qx == pytest.approx(px, abs=0.05)
    assert all(s.p_enu[2] == 0.0 for s in (after[1], w.samples[1]))


def test_a_quad_landing_on_a_boat_rests_there_one_event_not_one_a_step():
    # 0.37 m above the boat's sphere (2.45 m + the quad's 0.38 m), motors off: it drops,
    # bounces a few centimetres (restitution 0.3) and rests on the sphere's top
    ms = members(quad(5.0, 0.0, 3.2),
                 {'kind': 'boat', 'params': 'wamv', 'controller': 'imc',
                  'initial_position_enu': [0.0, 0.0, 0.0]})
    w = World.build(ms, make_model, make_controller)
    w.model('quad0').push((-5.0, 0.0, 0.0), (0.0, 0.0, 0.0))    # over the boat's centre
    w.resample(0)
    events, _ = run(w, 3.0)
    assert [(e.vehicle, e.other) for e in events] == [('quad0', 'boat0')]
    assert 2.0 < events[0].closing_speed < 3.0                  # sqrt(2 g 0.37) = 2.7 m/s
    q, b = w.samples
    assert math.dist(q.p_enu, b.p_enu) == pytest.approx(2.45 + 0.375, abs=0.02)   # on top
    assert abs(q.v_enu[2]) < 0.1 and b.p_enu[2] == 0.0


def test_quads_at_hover_throttle_stay_up_and_a_quad_falling_hits_the_ground_or_water():
    ms = members(quad(0.0, 0.0, 10.0), quad(10.0, 0.0, 5.0), quad(20.0, 0.0, 5.0))
    w = World.build(ms, make_model, make_controller)
    hover = w.model('quad0')
    assert isinstance(hover, QuadModel)
    hover.set_throttles([hover.hover_throttle()] * hover.motors)
    events, _ = run(w, 5.0)
    # held up: the rotors' spin-up from rest sags it at first (-0.17 m/s), then it levels
    assert w.samples[0].p_enu[2] > 9.0 and -0.15 < w.samples[0].v_enu[2] < 0.0
    assert w.samples[1].p_enu[2] == 0.0 == w.samples[2].p_enu[2]
    # the two without throttle fell 5 m: one ground impact each, at ~9.9 m/s less drag
    assert sorted(e.vehicle for e in events) == ['quad1', 'quad2'], events
    assert all(e.other == GROUND and 8.5 < e.closing_speed < 10.0 for e in events)
    assert abs(events[0].t_ns * 1e-9 - 1.01) < 0.1            # sqrt(2 h / g)
    # over water: any touchdown is a ditching
    ms = members(quad(0.0, 0.0, 0.3))
    w = World.build(ms, make_model, make_controller, water=open_water)
    events, _ = run(w, 2.0)
    assert [(e.vehicle, e.other) for e in events] == [('quad0', WATER)]
    assert 2.0 < events[0].closing_speed < 2.45 and events[0].point[2] == 0.0   # 0.3 m
    # a gentle landing on the ground is no event
    ms = members(quad(0.0, 0.0, 0.1))
    events, _ = run(World.build(ms, make_model, make_controller), 2.0)
    assert events == []


def test_the_plane_steps_jsbsim_at_its_own_rate_whatever_the_worlds_step():
    ms = members({'kind': 'plane', 'params': 'c172r', 'controller': 'builtin',
                  'initial_position_enu': [0.0, 0.0, 300.0]})
    plane = PlaneModel.from_member(ms[0])
    assert plane.start == 'air' and plane.radius_m == pytest.approx(5.5, abs=0.1)
    assert 1000.0 < plane.mass_kg < 1200.0
    for dt, n in ((0.004, 250), (0.016, 125), (0.010, 100), (0.008, 125)):
        plane.reset()
        for _ in range(n):
            plane.step(dt)
        assert plane.plane.steps == round(n * dt * 125), dt
    # a push: the velocity changes by dv at once, the flight goes on
    s0 = plane.sample(0)
    plane.push((0.0, 0.0, 5.0), (0.0, -5.0, 0.0))
    s1 = plane.sample(0)
    assert s1.v_enu[1] == pytest.approx(s0.v_enu[1] - 5.0, abs=1e-6)
    assert s1.p_enu[2] == pytest.approx(s0.p_enu[2] + 5.0, abs=1e-3)
    for _ in range(250):
        plane.step(0.004)
    assert not plane.on_surface() and abs(plane.sample(0).p_enu[2] - 305.0) < 30.0


def test_reset_puts_every_model_and_controller_back_and_the_run_repeats():
    ms = world_members(load_scenario('harbour_ops'))
    w = World.build(ms, make_model, make_controller)
    assert [m.kind for m in ms] == ['multirotor'] * 2 + ['plane', 'boat']
    start = list(w.samples)
    q = w.model('quad0')
    assert isinstance(q, QuadModel)

    def fly():
        q.set_throttles([0.9] * q.motors)             # quad0 climbs
        events, _ = run(w, 7.992)           # ends between two boat steps (20 ms)
        return events, [tuple(s.p_enu) for s in w.samples]

    events, first = fly()
    assert events == []
    moved = [math.dist(a, b.p_enu) for a, b in zip(first, start)]
    assert moved[0] > 10.0 and moved[1] == 0.0 and moved[2] > 300.0 and moved[3] > 5.0
    w.reset()
    assert q.throttles == [0.0] * 4
    for a, b in zip(w.samples, start):
        assert a.p_enu == pytest.approx(b.p_enu, abs=1e-6)
        assert a.v_enu == pytest.approx(b.v_enu, abs=1e-6)
        assert a.q_enu_flu == pytest.approx(b.q_enu_flu, abs=1e-5)     # JSBSim's trim
    assert w.controller('plane0').item == 0 and w.controller('boat0').item == 0
    _, again = fly()
    for a, b in zip(again, first):
        assert a == pytest.approx(b, abs=1e-3)


def test_the_boat_sample_is_usv_nodes_conversion():
    ms = members({'kind': 'boat', 'params': 'otter', 'controller': 'imc',
                  'initial_position_enu': [5.0, 7.0, 0.0], 'initial_yaw_deg': 30.0},
                 env={'sea_state': 4, 'current_enu': [0.2, 0.0, 0.0]})
    boat = BoatModel.from_member(ms[0])
    boat.command(0.8, math.radians(10.0))               # bow to port
    for _ in range(500):
        boat.step(DT)
    s = boat.sample(7)
    b = boat.boat
    q = q_ned_frd_to_enu_flu(euler_ned_to_quat(float(b.roll[0]), float(b.pitch[0]),
                                               float(b.psi[0])))
    assert np.allclose(s.q_enu_flu, q, atol=1e-9)
    assert s.p_enu == pytest.approx((b.e[0], b.n[0], b.heave[0]))     # the waves' heave, up
    assert s.t_ns == 7 and s.w_flu[2] > 0.05          # turning to port: yaw rate up (FLU)
    assert boat.heading_deg() < 30.0


def test_each_model_checks_a_command_over_a_link_and_refuses_what_is_not_its_kinds():
    """VehicleModel.apply_command: a quad's throttles, a plane's EffectorCommand, a boat none."""
    from sim_core.validate import FieldError
    from sim_dynamics.core.plane import EffectorCommand
    ms = members(quad(0.0, 0.0, 0.0),
                 {'kind': 'plane', 'params': 'c172r', 'controller': 'builtin',
                  'initial_position_enu': [0.0, -900.0, 300.0]},
                 {'kind': 'boat', 'params': 'wamv', 'initial_position_enu': [0.0, 40.0, 0.0]})
    q, plane, boat = (make_model(m) for m in ms)
    q.apply_command([0.5] * 4)
    assert q.throttles == [0.5] * 4
    for bad, why in (([0.5] * 3, '3 throttles, the vehicle has 4 motors'),
                     ([0.5, 0.5, 1.5, 0.5], 'throttle[2]'), ('abcd', 'one throttle per motor'),
                     ([0.5, float('nan'), 0.5, 0.5], 'throttle[1]')):
        with pytest.raises(FieldError, match=re.escape(why)):
            q.apply_command(bad)
    assert q.throttles == [0.5] * 4                 # a refused command changes nothing
    with pytest.raises(FieldError, match='a plane takes an EffectorCommand, got list'):
        plane.apply_command([0.5] * 4)
    plane.apply_command(EffectorCommand((0.7,), (0.0,), (0.0,), (0.0,)))
    with pytest.raises(FieldError, match='a boat takes no MAVLink command'):
        boat.apply_command([0.5])
