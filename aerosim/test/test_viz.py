"""Viewers and run summaries.

Marker geometry, the Foxglove server (a real WebSocket client), viz_node's markers on real
topics, and summary PNGs written at the end of a run.
"""

import json
import math
import os
import signal
import time

import numpy as np
from PIL import Image
import pytest
from rclpy.serialization import deserialize_message
from visualization_msgs.msg import Marker, MarkerArray
from websockets.sync.client import connect

from aerosim_msgs.msg import JsonData, SwarmState
from sim_bag.core.bagio import msgdef
from sim_core.scenario import load_scenario
from sim_dynamics.core.multirotor import MultirotorParams
from sim_dynamics.core.swarm_config import load_swarm_config
from sim_dynamics.core.usv_swarm import TypeTable
from sim_report.core import boats
from sim_report.core.mission import MissionJudge
from sim_ros import qos
from sim_ros.convert import time_ns
from sim_viz.core import scene

from conftest import free_ports, probe_node, spin_until, wait_line
from graph_start import start


def test_quad_markers_follow_the_attitude_and_colour_rotors_by_spin():
    sc = load_scenario('default')
    v = MultirotorParams.from_yaml(sc.vehicle_file)
    rotors = [(r.position, r.direction) for r in v.rotors]
    yaw90 = (math.cos(math.pi / 4), 0.0, 0.0, math.sin(math.pi / 4))   # FLU x -> ENU north
    shapes = scene.quad_shapes(rotors, (10.0, 20.0, 5.0), yaw90)
    discs = [s for s in shapes if s.kind == 'cylinder']
    assert len(discs) == 4
    for s, r in zip(discs, v.rotors):
        x, y, z = r.position                # rotated 90 deg about up: (x, y) -> (-y, x)
        assert s.position == pytest.approx((10.0 - y, 20.0 + x, 5.0 + z))
        assert s.color == (scene.CCW if r.direction > 0 else scene.CW)
    (arms,) = [s for s in shapes if s.kind == 'line_list']
    assert len(arms.points) == 8 and arms.points[0] == pytest.approx((10.0, 20.0, 5.0))


def test_track_is_bounded_and_restarts_when_time_goes_back():
    tr = scene.Track(max_points=5, min_step_m=1.0, min_period_s=10.0)
    assert tr.add(0.0, (0, 0, 0)) and not tr.add(0.1, (0.5, 0, 0))   # moved < 1 m
    for k in range(1, 10):
        assert tr.add(float(k), (2.0 * k, 0, 0))
    assert len(tr.xyz()) == 5 and tr.xyz()[-1] == (18.0, 0.0, 0.0)
    assert tr.add(20.0, (18.0, 0.0, 0.0))                           # min_period passed
    tr.add(1.0, (0, 0, 0))                                          # a reset
    assert tr.xyz() == [(0.0, 0.0, 0.0)]


def test_swarm_map_places_obstacles_and_bounds_in_the_local_frame():
    types = TypeTable.load('usv_types.yaml')
    cfg = load_swarm_config('SimConfig.json', types.boats, types.obstacles, 1000)[0]
    m = scene.swarm_map(cfg, types)
    # SimConfig.json: 1 deg of longitude at 10.5 N wide, 1 deg of latitude tall
    width = m.bounds_en[1, 0] - m.bounds_en[0, 0]
    assert width == pytest.approx(111_320 * math.cos(math.radians(11.0)), rel=0.01)
    assert m.bounds_en[0, 1] - m.bounds_en[3, 1] == pytest.approx(110_600, rel=0.01)
    assert m.obstacle_radii == (3.0, 60.0) and m.obstacle_names == ('buoy', 'islet')
    # obstacle 101 at (134.50 E, 10.505 N), the map centre is (134.5, 10.5): ~553 m north
    assert m.obstacles_en[0] == pytest.approx((0.0, 553.0), abs=2.0)
    assert m.boat_lengths[1] == pytest.approx(4.9)


def _png_size(path):
    with Image.open(path) as im:
        return im.size


def test_summary_plots_are_written_and_readable(tmp_path):
    # quad: a judged flight along the default mission
    sc = load_scenario('default')
    judge = MissionJudge(sc)
    pts = [np.array(sc.initial_position_enu, dtype=float)] + judge.points
    t = 0.0
    for a, b in zip(pts[:-1], pts[1:]):
        for s in np.linspace(0.0, 1.0, 50):
            t += 0.2
            judge.add(t, a + s * (b - a), 2.0)
    judge.plot(str(tmp_path / 'quad.png'), 'quad')
    assert _png_size(tmp_path / 'quad.png') == (1200, 640)
    # boat
    tr = boats.BoatTrack()
    for k in range(100):
        tr.add(k * 0.5, 2.0 * k * 0.5, 0.0, 2.0)
    s = boats.plot_boat(tr, str(tmp_path / 'boat.png'), 'boat')
    assert s['distance_m'] == pytest.approx(99.0) and s['max_speed_mps'] == 2.0
    assert _png_size(tmp_path / 'boat.png') == (1040, 440)
    # swarm: two teams, one boat out of action
    types = TypeTable.load('usv_types.yaml')
    cfg, _ = load_swarm_config('SimConfig.json', types.boats, types.obstacles, 1000)
    smap = scene.swarm_map(cfg, types)
    tracks = {}
    for bid, team in ((1, 0), (2, 0), (11, 1)):
        b = tracks[bid] = boats.BoatTrack(team=team)
        for k in range(60):
            b.add(k, 10.0 * bid + k, 5.0 * k, 1.0, 100.0 - (k if bid == 11 else 0))
    tracks[11].alive = False
    s = boats.plot_swarm(tracks, smap, 3, str(tmp_path / 'swarm.png'), 'swarm')
    assert s['out_of_action'] == [11] and s['final_health'] == {1: 100.0, 2: 100.0, 11: 41.0}
    assert s['collisions'] == 3 and s['boats'] == 3
    assert _png_size(tmp_path / 'swarm.png') == (1200, 560)


def _recv_json(ws, op, timeout_s=15.0):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        m = ws.recv(timeout=max(0.1, deadline - time.monotonic()))
        if isinstance(m, str):
            d = json.loads(m)
            if d.get('op') == op:
                return d
    raise AssertionError(f'no {op}')


def test_foxglove_serves_the_graph_and_summary_is_written_at_the_end(procs, tmp_path):
    port = free_ports()
    # sim_quad with foxglove:=true: the world (its judge writes the summary), viz_node and
    # foxglove_node
    summ = start(procs, 'sim_quad', {'time_scale': 1.0, 'camera': False, 'foxglove': True,
                                     'foxglove_port': port, 'output_dir': tmp_path,
                                     'title': 'hover'},
                 params={'foxglove_node': {'discovery_period_s': 0.1}})['world_plant']
    want = {'/quad/odom': 'nav_msgs/msg/Odometry', '/quad/path': 'nav_msgs/msg/Path',
            '/quad/markers': 'visualization_msgs/msg/MarkerArray',
            '/quad/vehicle_state': 'aerosim_msgs/msg/VehicleState',
            '/sim/status': 'aerosim_msgs/msg/SimStatus', '/clock': 'rosgraph_msgs/msg/Clock'}
    deadline = time.monotonic() + 30.0
    channels = {}
    while time.monotonic() < deadline and not set(want) <= set(channels):
        try:
            with connect(f'ws://127.0.0.1:{port}', subprotocols=['foxglove.sdk.v1'],
                         open_timeout=2) as ws:
                info = _recv_json(ws, 'serverInfo')
                assert 'time' in info['capabilities']
                end = time.monotonic() + 3.0
                while time.monotonic() < end and not set(want) <= set(channels):
                    try:
                        m = ws.recv(timeout=0.5)
                    except TimeoutError:
                        continue
                    if isinstance(m, str) and json.loads(m)['op'] == 'advertise':
                        channels.update({c['topic']: c for c in json.loads(m)['channels']})
                if set(want) <= set(channels):
                    break
        except (OSError, TimeoutError):
            time.sleep(0.5)
        channels.clear()        # a new connection advertises everything again
    assert set(want) <= set(channels), sorted(channels)
    for topic, typ in want.items():
        c = channels[topic]
        assert (c['encoding'], c['schemaName'], c['schemaEncoding']) == ('cdr', typ, 'ros2msg')
        assert c['schema'] == msgdef(typ)[0]
    # subscribe to the markers: the CDR bytes ROS published, the quad's body and rotors
    with connect(f'ws://127.0.0.1:{port}', subprotocols=['foxglove.sdk.v1']) as ws:
        adv = {}
        while set(want) - set(adv):
            d = _recv_json(ws, 'advertise')
            adv.update({c['topic']: c['id'] for c in d['channels']})
        ws.send(json.dumps({'op': 'subscribe', 'subscriptions': [
            {'id': 7, 'channelId': adv['/quad/markers']}]}))
        markers, times = None, []
        end = time.monotonic() + 15.0
        while time.monotonic() < end and (markers is None or not times or times[-1] <= 0):
            m = ws.recv(timeout=15.0)
            if isinstance(m, bytes) and m[0] == 0x01 and int.from_bytes(m[1:5], 'little') == 7:
                markers = deserialize_message(m[13:], MarkerArray)
            elif isinstance(m, bytes) and m[0] == 0x02:
                times.append(int.from_bytes(m[1:9], 'little'))      # /clock: sim time [ns]
    # sim time, relayed as it goes (the first may be the t = 0 /clock of the start)
    assert times and times == sorted(times) and 0 < times[-1] < 3600 * 10**9, times
    # (a world's markers are named by their vehicle: quad/vehicle, quad/mission)
    discs = [k for k in markers.markers if k.ns == 'quad/vehicle' and k.type == Marker.CYLINDER]
    assert len(discs) == 4 and all(k.header.frame_id == 'map' for k in markers.markers)
    assert {k.ns for k in markers.markers} >= {'quad/vehicle', 'quad/mission'}
    # garbage from a client (text that is not JSON, unknown ops, random binary) does not
    # take the server down: a new client is served as before
    with connect(f'ws://127.0.0.1:{port}', subprotocols=['foxglove.sdk.v1']) as ws:
        _recv_json(ws, 'serverInfo')
        for junk in ('not json', '{"op": "explode"}', '{"op": "subscribe"}',
                     bytes(range(256)) * 4):
            ws.send(junk)
    with connect(f'ws://127.0.0.1:{port}', subprotocols=['foxglove.sdk.v1']) as ws:
        assert 'time' in _recv_json(ws, 'serverInfo')['capabilities']
        assert _recv_json(ws, 'advertise')['channels']
    # the end of the run, 1 s of sim time (on /clock, as Foxglove shows it) after the judge
    # (in the world's process, sampling from its first step) said what it judges: written on
    # SIGINT
    assert wait_line(summ.lines, 'judge: the 1 vehicle(s) of default', 90.0, (summ,)), \
        ''.join(summ.lines)
    with connect(f'ws://127.0.0.1:{port}', subprotocols=['foxglove.sdk.v1']) as ws:
        t0 = None
        end = time.monotonic() + 60.0
        while time.monotonic() < end and (t0 is None or times < t0 + 10**9):
            m = ws.recv(timeout=60.0)
            if isinstance(m, bytes) and m[0] == 0x02:
                times = int.from_bytes(m[1:9], 'little')
                t0 = times if t0 is None else t0
    assert t0 is not None and times >= t0 + 10**9, (t0, times)
    # nothing flies sim_quad's quad here: at 5 s of sim its judge says so (the run is over,
    # its verdict incomplete, whenever it is stopped after)
    assert wait_line(summ.lines, 'quad: no command on its topics (/quad/effector_command)', 60.0,
                     (summ,)), ''.join(summ.lines)[-3000:]
    os.killpg(summ.pid, signal.SIGINT)
    assert summ.wait(20) == 0
    run = (tmp_path / 'latest').resolve()
    assert run.name.startswith('hover-default-'), run
    s = json.loads((run / 'summary.json').read_text())
    assert s['sim_time_s'] > 0.5 and s['items'] == 5 and s['result'] == 'incomplete'
    assert s['vehicles']['quad']['result'] == 'no_command', s
    assert _png_size(run / 'plot.png') == (1760, 520)       # the world's plot (world_plot)


def test_swarm_markers_and_summary(procs, ros_context, tmp_path):
    # the swarm's summary is written by its time source (sim_dynamics.swarm_summary)
    summ = procs.node('sim_dynamics.usv_swarm_node', 'usv_swarm_node',
                      {'session': 1, 'clock_rate_hz': 20.0, 'output_dir': str(tmp_path),
                       'title': 'swarm'}, ns='/swarm')
    viz = procs.node('sim_viz.viz_node', 'viz_node', {'use_sim_time': True, 'mode': 'swarm'},
                     ns='/swarm')
    node, ex = probe_node(ros_context, 'viz_probe', '/swarm')
    got = []
    node.create_subscription(MarkerArray, 'markers', got.append, 10)
    states = []
    node.create_subscription(SwarmState, 'state', states.append, 10)
    assert spin_until(node, ex, lambda: len(got) >= 3 and states, 40.0), 'no swarm markers'
    # the summary samples in the swarm's own step: give the run 1 s of sim time from here
    t_matched = time_ns(states[-1].header.stamp)
    assert spin_until(node, ex, lambda: time_ns(states[-1].header.stamp) >= t_matched + 10**9,
                      30.0)
    ms = got[-1].markers
    obstacles = [m for m in ms if m.ns == 'obstacles']
    assert sorted(m.scale.x for m in obstacles) == [6.0, 120.0]     # buoy 3 m, islet 60 m
    (bounds,) = [m for m in ms if m.ns == 'map_bounds']
    assert len(bounds.points) == 5 and bounds.points[0] == bounds.points[-1]
    hulls = [m for m in ms if m.ns == 'boats' and m.type == Marker.CUBE]
    assert len(hulls) == 5
    # hull 0 sits where the swarm says boat 1 is
    s = states[-1]
    assert abs(hulls[0].pose.position.x - s.x_east_m[0]) < 5.0
    assert {m.ns for m in ms} >= {'tracks', 'boats'}
    # a config that is not a valid init (NaN, refused by the wire's parser): counted and
    # logged, the map drawn stays
    bad = node.create_publisher(JsonData, 'config', qos.LATCHED)
    bad.publish(JsonData(data='{"time_scale": NaN}'))
    n = len(got)
    assert spin_until(node, ex, lambda: len(got) >= n + 3, 20.0)
    obstacles = [m for m in got[-1].markers if m.ns == 'obstacles']
    assert sorted(m.scale.x for m in obstacles) == [6.0, 120.0]
    os.killpg(summ.pid, signal.SIGINT)
    assert summ.wait(20) == 0
    log = procs.output(viz)
    assert 'config not drawn (1 so far)' in log and 'NaN' in log, log
    run = (tmp_path / 'latest').resolve()
    out = json.loads((run / 'summary.json').read_text())
    assert out['boats'] == 5 and out['sim_time_s'] > 0.5 and out['result'] == 'stopped'
    assert _png_size(run / 'plot.png') == (1200, 560)
