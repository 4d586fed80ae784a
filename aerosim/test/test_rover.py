"""The rover, the template kind: its model, controller, judge and view, and a copy of it.

The model's limits hold whatever it is asked (top speed, turn rate, steering), a constant
command draws the circle a bicycle draws, and a command from any ROS node is checked field by
field; its waypoint controller drives the square of rover_yard in order within the radii, on
ground truth; a copy of its folder under another name with one registry line (a temporary copy
of the package: no other file edited) loads, steps, is judged and drawn beside it; and
`aerosim launch sim_world scenario:=rover_yard report:=true` ends complete 4/4.
"""

import json
import math
import os
from pathlib import Path
import shutil
import subprocess
import sys
import textwrap

import pytest
from sim_world.core.world import World

from kinds.entry import entry, judges_of, make_controller, make_model, missing
from kinds.rover.controllers import RoverWaypoints
from kinds.rover.model import RoverModel, RoverParams
from sim_core.errors import ConfigError
from sim_core.kinds import info, vehicle_file
from sim_core.members import world_members
from sim_core.scenario import load_scenario, scenario_from_dict
from sim_core.validate import FieldError
from sim_dynamics.core.plane import EffectorCommand
from sim_report.core.world import WorldJudge
from sim_viz.core import scene

from conftest import DEADLINE_SCALE, PKG_DIR, finished

DT = 0.004                      # s: the world's 250 Hz
PARAMS = RoverParams.from_yaml(vehicle_file('rover', 'rover'))


def yard() -> World:
    return World.build(world_members(load_scenario('rover_yard')), make_model, make_controller)


def rover() -> RoverModel:
    return yard().bodies[0].model


def drive(m: RoverModel, seconds: float, dt: float = DT):
    """Step m seconds; the samples."""
    out = []
    for k in range(int(round(seconds / dt))):
        m.step(dt)
        out.append(m.sample(int(round((k + 1) * dt * 1e9))))
    return out


# --- the model ---------------------------------------------------------------------------------
def test_the_kind_is_a_ground_kind_from_its_folder():
    k = info('rover')
    assert (k.medium, k.controllers, k.mavlink, k.prefix) == ('ground', ('waypoint', 'topic'),
                                                             (), 'rover')
    assert missing(entry('rover')) == []


@pytest.mark.parametrize('dt', [DT, 0.02, 0.1])
def test_full_throttle_and_full_steering_keep_the_speed_and_turn_rate_limits(dt):
    m = rover()
    m.drive(1.0, 10.0)                                  # far beyond the steering limit
    assert m.steer_rad == pytest.approx(PARAMS.max_steer_rad)
    s = drive(m, 20.0, dt)
    speeds = [math.hypot(x.v_enu[0], x.v_enu[1]) for x in s]
    rates = [abs(x.w_flu[2]) for x in s]
    assert max(speeds) <= PARAMS.top_speed_mps + 1e-9
    assert max(rates) <= PARAMS.max_turn_rate_rps + 1e-9
    assert speeds[-1] == pytest.approx(PARAMS.top_speed_mps)
    # at 2 m/s, tan(30 deg) / 0.65 m would ask 1.78 rad/s: the turn-rate limit holds it
    assert rates[-1] == pytest.approx(PARAMS.max_turn_rate_rps)
    # the speed rose no faster than its acceleration limit
    assert speeds[int(0.5 / dt) - 1] <= PARAMS.max_accel_mps2 * 0.5 + 1e-9
    assert all(x.p_enu[2] == 0.0 and x.v_enu[2] == 0.0 for x in s)          # on the ground
    m.drive(-1.0, 0.0)                                  # full reverse: the same limit
    back = drive(m, 10.0, dt)
    assert min(x.v_enu[0] * math.cos(m.psi) + x.v_enu[1] * math.sin(m.psi)
               for x in back) == pytest.approx(-PARAMS.top_speed_mps)


def test_a_constant_command_draws_the_bicycle_s_circle():
    m = rover()
    steer = math.radians(10.0)
    m.drive(0.5, steer)                                 # 1 m/s: 0.27 rad/s, under the limit
    drive(m, 3.0)                                       # up to speed (1 m/s^2)
    s = drive(m, 30.0)
    R = PARAMS.wheelbase_m / math.tan(steer)            # 3.69 m
    xs = [(x.p_enu[0], x.p_enu[1]) for x in s]
    cx = sum(p[0] for p in xs) / len(xs)                # over 2.2 turns: about its centre
    cy = sum(p[1] for p in xs) / len(xs)
    n = int(round(2 * math.pi * R / 1.0 / DT))          # a whole turn's samples
    cx = sum(p[0] for p in xs[:n]) / n
    cy = sum(p[1] for p in xs[:n]) / n
    radii = [math.hypot(p[0] - cx, p[1] - cy) for p in xs]
    assert min(radii) == pytest.approx(R, rel=2e-3) and max(radii) == pytest.approx(R, rel=2e-3)
    assert all(x.w_flu[2] == pytest.approx(1.0 * math.tan(steer) / PARAMS.wheelbase_m)
               for x in s)                          # left: positive yaw rate (FLU)


@pytest.mark.parametrize('cmd, named', [
    ([0.5], 'type: a rover takes an EffectorCommand, got list'),
    (EffectorCommand(throttle=[2.0]), 'throttle_cmd[0]: must be in [-1, 1], got 2'),
    (EffectorCommand(throttle=[float('nan')]), 'throttle_cmd[0]: must be finite'),
    (EffectorCommand(wheel_steer_rad=[1.0]), 'wheel_steer_cmd_angle_rad[0]: must be in'),
    (EffectorCommand(throttle=[0.5], aileron_rad=[0.1]), 'aileron_rad: a rover has none'),
    (EffectorCommand(), 'neither throttle_cmd nor wheel_steer_cmd_angle_rad given'),
    (EffectorCommand(throttle=[0.5, 0.5]), 'one throttle and one wheel steer angle, got 2'),
])
def test_a_command_from_any_node_is_checked_field_by_field(cmd, named):
    m = rover()
    m.drive(0.3, 0.1)
    with pytest.raises(FieldError) as err:
        m.apply_command(cmd)
    assert named in f'{err.value.kind}: {err.value}' or named in str(err.value)
    assert (m.throttle, m.steer_rad) == (0.3, 0.1)      # a refused command changes nothing
    m.apply_command(EffectorCommand(wheel_steer_rad=[-0.2]))    # one device: the other stays
    assert (m.throttle, m.steer_rad) == (0.3, -0.2)


@pytest.mark.parametrize('edit, named', [
    (lambda d: d.update(colour='red'), 'colour: unknown key'),
    (lambda d: d.pop('top_speed_mps'), 'top_speed_mps: required'),
    (lambda d: d.update(max_steer_deg=80.0), 'max_steer_deg: must be <= 60 deg, got 80'),
    (lambda d: d.update(wheelbase_m=1.5), 'wheelbase_m: 1.5 m is longer than the rover'),
])
def test_a_bad_parameter_file_is_refused_naming_the_key(edit, named):
    import yaml
    d = yaml.safe_load(vehicle_file('rover', 'rover').read_text())
    edit(d)
    with pytest.raises(ConfigError) as err:
        RoverParams.from_dict(d, 'rover.yaml')
    assert str(err.value).startswith(f'rover.yaml: {named}'), err.value


def test_a_push_moves_it_on_the_ground_and_changes_only_its_speed_along_its_heading():
    m = rover()                                         # facing north: psi = pi/2
    m.push((0.5, -0.2, 3.0), (1.0, 0.7, 5.0))
    s = m.sample(0)
    assert s.p_enu == pytest.approx((0.5, -0.2, 0.0))   # the ground holds z
    assert s.v_enu == pytest.approx((0.0, 0.7, 0.0), abs=1e-12)   # no sideways slip


# --- the controller and the judge -------------------------------------------------------------
def test_its_waypoint_controller_drives_the_yard_square_in_order_judged_on_truth():
    w = yard()
    ms = [b.member for b in w.bodies]
    judge = WorldJudge(ms, judges_of(ms), decks=[b.model.deck for b in w.bodies])
    ctl = w.bodies[0].controller
    assert isinstance(ctl, RoverWaypoints) and ctl.cruise_mps == pytest.approx(1.4)
    t_ns, off = 0, 0.0
    legs = [((0.0, 0.0), (0.0, 20.0)), ((0.0, 20.0), (20.0, 20.0)),
            ((20.0, 20.0), (20.0, 0.0)), ((20.0, 0.0), (0.0, 0.0))]
    while not judge.over and t_ns < 200e9:
        w.step(DT, t_ns)
        t_ns += int(round(DT * 1e9))
        s = w.samples[0]
        judge.feed(0, t_ns * 1e-9, s.p_enu, s.v_enu, s.q_enu_flu, w.bodies[0].model.idle())
        (ax, ay), (bx, by) = legs[min(len(judge.entries[0].judge.reached_at_s), 3)]
        # off the leg it drives (cross-track distance) [m]
        off = max(off, abs((s.p_enu[0] - ax) * (by - ay) - (s.p_enu[1] - ay) * (bx - ax))
                  / math.hypot(bx - ax, by - ay))
    row = judge.summary(1.0)['vehicles']['rover0']
    assert row['result'] == 'complete' and row['items_reached'] == 4, row
    assert all(d <= 1.0 for d in row['details']['reached_within_m'])
    assert 40.0 < t_ns * 1e-9 < 90.0                    # 80 m at 1.4 m/s, with its corners
    assert off < 3.0                                    # its turns cut the corners a little
    assert [text for _, text in ctl.log][:3] == [
        'waypoint 0 reached (within 1.0 m)', 'waypoint 1 reached (within 0.9 m)',
        'waypoint 2 reached (within 1.0 m)']


def test_it_drives_waypoints_only():
    d = {'name': 'hop', 'origin': {'lat_deg': 41.185242, 'lon_deg': -8.706139},
         'vehicle': {'kind': 'rover', 'params': 'rover'},
         'mission': [{'command': 'takeoff', 'alt_m': 5.0}]}
    (m,) = world_members(scenario_from_dict(d))
    with pytest.raises(ConfigError, match=r'rover0: mission\[0\] takeoff: a rover drives to '
                       'waypoint items only'):
        make_controller(m, make_model(m))
    with pytest.raises(ValueError, match='waypoint items only are judged, got 0 takeoff'):
        entry('rover').judge(m)


def test_it_is_drawn_as_a_chassis_on_four_wheels():
    e = entry('rover')
    shapes = e.view.body(PARAMS, 'rover0/vehicle')((1.0, 2.0, 0.0), scene.IDENTITY)
    assert [s.kind for s in shapes] == ['cube', 'arrow'] + ['cylinder'] * 4
    wheels = sorted((round(s.position[0], 3), round(s.position[1], 3)) for s in shapes[2:])
    assert wheels == [(0.675, 1.65), (0.675, 2.35), (1.325, 1.65), (1.325, 2.35)]
    assert all(s.position[2] == pytest.approx(0.15) for s in shapes[2:])   # on the ground


# --- a copy of the template is another kind: its folder and one registry line -----------------
COPY = textwrap.dedent("""\
    import json, sys
    from pathlib import Path
    root = Path(sys.argv[1])
    import kinds
    assert Path(kinds.__file__).is_relative_to(root), kinds.__file__
    from kinds.entry import entry, judges_of, make_controller, make_model, missing
    from sim_core.errors import ConfigError
    from sim_core.members import world_members
    from sim_core.scenario import load_scenario
    from sim_report.core.world import WorldJudge
    from sim_world.core.world import World
    from sim_world.member_io import io_factory
    out = {'missing': missing(entry('rover2')), 'io': io_factory('rover2')}
    try:
        load_scenario('rover_yard')
    except ConfigError as exc:
        out['ambiguous'] = str(exc)
    ms = world_members(load_scenario(root / 'both.yaml'))
    w = World.build(ms, make_model, make_controller)
    judge = WorldJudge(ms, judges_of(ms), decks=[b.model.deck for b in w.bodies])
    t_ns = 0
    while not judge.over and t_ns < 300e9:
        w.step(0.004, t_ns)
        t_ns += 4_000_000
        for i, s in enumerate(w.samples):
            judge.feed(i, t_ns * 1e-9, s.p_enu, s.v_enu, s.q_enu_flu, w.bodies[i].model.idle())
    out['summary'] = judge.summary(1.0)
    e = entry('rover2')
    body = e.view.body(e.load_params(str(ms[1].scenario.vehicle_file)), 'rovertwo0/vehicle')
    out['shapes'] = [s.kind for s in body(w.samples[1].p_enu, w.samples[1].q_enu_flu)]
    judge.plot(str(root / 'both.png'), 'both')
    print(json.dumps(out))
""")

BOTH = textwrap.dedent("""\
    name: both
    origin: {lat_deg: 41.185242, lon_deg: -8.706139, alt_m: 0.0}
    vehicle: {kind: rover, params: rover}
    mission:
      - {command: waypoint, lat_deg: 41.18542209, lon_deg: -8.70613900}
      - {command: waypoint, lat_deg: 41.18542209, lon_deg: -8.70590062}
    vehicles:
      - {kind: rover, initial_position_enu: [0.0, 0.0, 0.0]}
      - {kind: rover2, params: rover, initial_position_enu: [40.0, 0.0, 0.0]}
    """)


def test_a_copy_of_the_template_under_another_name_is_a_kind_with_no_other_file_edited(
        tmp_path):
    root = tmp_path / 'aerosim'
    shutil.copytree(PKG_DIR, root, ignore=shutil.ignore_patterns(
        'test', '__pycache__', '.pytest_cache', '*.egg-info'))
    # the new kind: its folder, its facts' own prefix, its example flying it; one line
    new = root / 'kinds' / 'rover2'
    shutil.copytree(root / 'kinds' / 'rover', new)
    for rel, old, text in (('kind.yaml', 'prefix: rover ', 'prefix: rovertwo '),
                           ('scenarios/rover_yard.yaml', 'kind: rover\n', 'kind: rover2\n')):
        f = new / rel
        assert old in f.read_text()
        f.write_text(f.read_text().replace(old, text))
    registry = root / 'kinds' / '__init__.py'
    before = registry.read_text()
    registry.write_text(before.replace("    'rover',\n", "    'rover',\n    'rover2',\n"))
    assert len(registry.read_text().splitlines()) == len(before.splitlines()) + 1
    # nothing else differs from the package
    changed = [str(p.relative_to(root)) for p in root.rglob('*') if p.is_file()
               and not p.is_relative_to(new)
               and p.read_bytes() != (PKG_DIR / p.relative_to(root)).read_bytes()]
    assert changed == ['kinds/__init__.py']
    (root / 'both.yaml').write_text(BOTH)
    env_path = [str(root)] + [p for p in sys.path if p and Path(p).resolve() != PKG_DIR]
    r = subprocess.run([sys.executable, '-c', COPY, str(root)], capture_output=True, text=True,
                       timeout=300 * DEADLINE_SCALE, cwd=root,
                       env={**os.environ, 'PYTHONPATH': os.pathsep.join(env_path)})
    assert r.returncode == 0, r.stderr[-3000:]
    out = json.loads(r.stdout.strip().splitlines()[-1])
    assert out['missing'] == [] and out['io'] is None
    assert "'rover_yard' is in more than one kind's folder" in out['ambiguous']
    s = out['summary']
    assert s['result'] == 'complete', s
    assert {n: (v['kind'], v['items_reached']) for n, v in s['vehicles'].items()} == {
        'rover0': ('rover', 2), 'rovertwo0': ('rover2', 2)}
    assert out['shapes'] == ['cube', 'arrow'] + ['cylinder'] * 4
    assert (root / 'both.png').stat().st_size > 10_000


# --- the rover's world, launched as a user does ----------------------------------------------
@pytest.mark.graph
def test_sim_world_drives_rover_yard_to_complete(procs, tmp_path):
    run = procs.start([sys.executable, '-m', 'sim_launch.cli', 'launch', 'sim_world',
                       'scenario:=rover_yard', 'report:=true', 'time_scale:=0',
                       f'output_dir:={tmp_path / "runs"}'])
    code = finished(run, 300 * DEADLINE_SCALE)
    out = procs.output(run)
    assert code == 0, out[-3000:]
    assert 'Traceback' not in out
    s = json.loads((tmp_path / 'runs' / 'latest' / 'summary.json').read_text())
    v = s['vehicles']['rover0']
    assert (s['result'], v['kind'], v['controller']) == ('complete', 'rover', 'waypoint'), s
    assert v['items_reached'] == v['items'] == 4 and v['collisions'] == []
    assert 'SUMMARY sim_world: complete' in out
    assert (tmp_path / 'runs' / 'latest' / 'plot.png').stat().st_size > 10_000
