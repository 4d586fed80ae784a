"""`ros2 param set` on every node: a parameter is applied live (tested here) or refused.

Every node of every graph is asked over its real parameter services, as ros2cli does
(rcl_interfaces ListParameters / DescribeParameters / GetParameters / SetParameters): each
parameter a node reads only at start-up must be read-only, so that setting it is refused with
a reason instead of "successful" and no effect; the live ones are few and named here.
"""

import sys
import time

import pytest
from rcl_interfaces.msg import Parameter as ParameterMsg
from rcl_interfaces.msg import ParameterType, ParameterValue
from rcl_interfaces.srv import DescribeParameters, GetParameters, ListParameters, SetParameters

from aerosim_msgs.msg import SimStatus
from aerosim_msgs.srv import SetTimeScale
from sim_core.kinds import info
from sim_launch.graphs import get_graph, members_of, resolve, resolve_args
from sim_ros import qos

from conftest import DEADLINE_SCALE, call_service, free_ports, probe_node, spin_until
from graph_start import start

# parameters applied while a node runs (everything else is read once at start-up): the time
# sources' time scale, a world boat's hold gains (its /<name>/usv_node)
LIVE = {'world_node': {'time_scale'}, 'usv_node': {'tas2acc_pgain', 'bank2p_pgain'},
        'usv_swarm_node': {'time_scale'}}
WORLD = ('sim_world.world_plant', 'sim_world.world_node')
KIND_NODES = {'boat': 'usv_node', 'plane': 'plane_node'}   # the kinds' ros.Io nodes
RCLPY_LIVE = {'use_sim_time'}          # rclpy's own: its TimeSource follows it at run time


def call(node, ex, client, request):
    assert spin_until(node, ex, client.service_is_ready, 30.0), client.srv_name
    return call_service(ex, client, request, client.srv_name)


def world_nodes(r, members):
    """The ROS nodes of a world's process r: the world node (root) and its vehicles' own.

    world_plant: each MAVLink vehicle's bridge, the sensors of each other vehicle with the
    suite (sensor_topics); either process: a kind's own node (sim_world.member_io: a boat's
    usv_node, its live hold gains; a plane's plane_node, its displays and autopilot).
    """
    plant = r.module == 'sim_world.world_plant'
    out = ['/world_node']
    for m in members:
        if plant and m.over_mavlink:
            out.append(f'/{m.name}/mavlink_bridge')
        elif plant and info(m.kind).sensors and r.parameters['sensor_topics']:
            out.append(f'/{m.name}/sensors_node')
        if m.kind in KIND_NODES:
            out.append(f'/{m.name}/{KIND_NODES[m.kind]}')
    return out


def graph_nodes(name, args):
    """Fully qualified names of the ROS nodes the graph starts (a process of several: each)."""
    g = get_graph(name)
    out = []
    for r in resolve(g, args):
        if r.module in WORLD:
            out += world_nodes(r, members_of(resolve_args(g, args)))
        else:
            out.append(f'{r.namespace.rstrip("/")}/{r.name}')
    return out


GRAPHS = {
    'sim_quad': {'foxglove': 'true'},
    'sim_quad_hil': {'report': 'true'},
    'sim_quad_hil_fleet': {'report': 'true', 'vehicles': '2'},
    'sim_plane': {},
    'sim_plane_hil': {},
    'sim_imc': {},
    'sim_usv_swarm': {},
    'sim_world': {},            # quads' bridges, a plane's sensors, a boat's gains: one process
}


@pytest.mark.parametrize('graph', sorted(GRAPHS))
def test_every_parameter_of_every_node_is_live_or_refused(graph, procs, ros_context, tmp_path):
    args = dict(GRAPHS[graph], output_dir=str(tmp_path), summary='true')
    port = free_ports(4)
    args.update({'sim_quad': {'foxglove_port': str(port)},
                 'sim_quad_hil': {'bind': f'127.0.0.1:{port}',
                                  'fc_address': f'127.0.0.1:{port + 1}'},
                 'sim_quad_hil_fleet': {'bind': f'127.0.0.1:{port}',
                                        'fc_address': f'127.0.0.1:{port + 1}'},
                 'sim_plane': {'foxglove': 'true', 'foxglove_port': str(port)},
                 'sim_plane_hil': {'bind': f'127.0.0.1:{port}',
                                   'fc_address': f'127.0.0.1:{port + 1}'},
                 'sim_imc': {'imc_bind': f'127.0.0.1:{port}'},
                 'sim_usv_swarm': {'ui_bind': f'127.0.0.1:{port}',
                                   'ui_address': f'127.0.0.1:{port + 1}'},
                 'sim_world': {'bind': f'127.0.0.1:{port}',
                               'fc_address': f'127.0.0.1:{port + 1}'}}[graph])
    graph_name = graph.replace('_fleet', '')
    cmd = [sys.executable, '-m', 'sim_launch.cli', 'launch', graph_name] + \
        [f'{k}:={v}' for k, v in args.items()]
    run = procs.start(cmd)
    expected = graph_nodes(graph_name, args)
    node, ex = probe_node(ros_context, f'param_probe_{graph}')

    def all_up():
        up = {f'{ns.rstrip("/")}/{n}' for n, ns in node.get_node_names_and_namespaces()}
        return set(expected) <= up
    assert spin_until(node, ex, all_up, 60.0), (expected, procs.output(run)[-3000:])
    checked = 0
    for fqn in expected:
        short = fqn.rsplit('/', 1)[1]
        names = call(node, ex, node.create_client(ListParameters, f'{fqn}/list_parameters'),
                     ListParameters.Request()).result.names
        descs = call(node, ex, node.create_client(DescribeParameters,
                                                  f'{fqn}/describe_parameters'),
                     DescribeParameters.Request(names=names)).descriptors
        values = call(node, ex, node.create_client(GetParameters, f'{fqn}/get_parameters'),
                      GetParameters.Request(names=names)).values
        live = {d.name for d in descs if not d.read_only}
        assert live == LIVE.get(short, set()) | RCLPY_LIVE, (fqn, sorted(live))
        fixed = [ParameterMsg(name=n, value=v) for n, v in zip(names, values)
                 if n not in live]
        results = call(node, ex, node.create_client(SetParameters, f'{fqn}/set_parameters'),
                       SetParameters.Request(parameters=fixed)).results
        refused = [p.name for p, r in zip(fixed, results)
                   if not r.successful and 'read-only' in r.reason]
        assert refused == [p.name for p in fixed], (fqn, [(p.name, r.successful, r.reason)
                                                         for p, r in zip(fixed, results)])
        checked += len(fixed)
        if 'time_scale' in LIVE.get(short, ()):
            # a time source refuses use_sim_time (rclpy's TimeSource would take it) and says
            # the rate's whole-microsecond rule
            (r,) = call(node, ex, node.create_client(SetParameters, f'{fqn}/set_parameters'),
                        SetParameters.Request(parameters=[ParameterMsg(
                            name='use_sim_time', value=ParameterValue(
                                type=ParameterType.PARAMETER_BOOL, bool_value=True))])).results
            assert not r.successful and 'time source' in r.reason, (fqn, r.reason)
            rate = next(d for d in descs if d.name == 'rate_hz')
            assert 'whole number of microseconds' in rate.description, rate.description
        if graph.endswith('_fleet') and fqn.startswith('/quad1/'):
            # vehicle 1's nodes say the links they use: its instance's, not vehicle 0's
            got = dict(zip(names, values))
            if short == 'mavlink_bridge':
                assert got['bind'].string_value == f'127.0.0.1:{port + 2}'
                assert got['fc_address'].string_value == f'127.0.0.1:{port + 3}'
                assert got['vehicle_index'].integer_value == 1
                assert got['fc_system_id'].integer_value == 2
                assert got['spin_wait_us'].integer_value == 0
            else:
                assert got['bind'].string_value == f'127.0.0.1:{port + 3}'
                assert got['system_id'].integer_value == 2
    assert checked >= 10
    assert run.poll() is None, procs.output(run)[-3000:]


def _double(name, v):
    return ParameterMsg(name=name, value=ParameterValue(type=ParameterType.PARAMETER_DOUBLE,
                                                        double_value=v))


def test_time_scale_set_as_a_parameter_paces_the_simulation(procs, ros_context):
    """time_scale: `ros2 param set` changes the pacing; the service updates the parameter."""
    world = start(procs, 'sim_quad', {'time_scale': 1.0}, nodes=('world_plant',))['world_plant']
    node, ex = probe_node(ros_context, 'time_scale_probe', '/quad')
    status = []
    node.create_subscription(SimStatus, '/sim/status', status.append, qos.LATCHED)
    setp = node.create_client(SetParameters, '/world_node/set_parameters')
    getp = node.create_client(GetParameters, '/world_node/get_parameters')

    def param():
        return call(node, ex, getp, GetParameters.Request(names=['time_scale'])) \
            .values[0].double_value

    (r,) = call(node, ex, setp, SetParameters.Request(
        parameters=[_double('time_scale', 0.0)])).results
    assert r.successful, r.reason
    assert spin_until(node, ex, lambda: status and status[-1].time_scale == 0.0, 30.0)
    # as fast as possible: sim time runs ahead of the wall clock
    t0, s0 = time.monotonic(), status[-1].sim_time.sec + status[-1].sim_time.nanosec * 1e-9

    def sim_s():
        return status[-1].sim_time.sec + status[-1].sim_time.nanosec * 1e-9
    assert spin_until(node, ex, lambda: sim_s() - s0 > (time.monotonic() - t0) + 5.0,
                      60.0 * DEADLINE_SCALE), 'time_scale 0 did not make the simulation run ahead'
    # the core's range is the one check: 0.05 is refused with its reason, nothing changes
    (r,) = call(node, ex, setp, SetParameters.Request(
        parameters=[_double('time_scale', 0.05)])).results
    assert not r.successful and '0.1' in r.reason, r.reason
    assert param() == 0.0
    # the service and the parameter are one: the parameter says what the service set
    srv = node.create_client(SetTimeScale, '/sim/set_time_scale')
    resp = call(node, ex, srv, SetTimeScale.Request(time_scale=2.0))
    assert resp.success, resp.message
    assert param() == 2.0
    assert spin_until(node, ex, lambda: status[-1].time_scale == 2.0, 30.0)
    assert 'Traceback' not in procs.output(world)
