"""Faults survived: the flight controller's link cut mid-flight; pause/resume under load.

A UDP relay played by the test sits between mavlink_bridge and the built-in FC and can cut
the link (both ways). The composed plant (sim_quad_hil's world_plant: the world and the
bridge) flies short_hop in lockstep.
"""

import random
import socket
import threading
import time

from aerosim_msgs.msg import SimStatus
from aerosim_msgs.srv import SetPaused
from sim_ros import qos

from conftest import (
    free_ports,
    mavsdk_gcs,
    output_lines,
    probe_node,
    spin_for,
    spin_until,
    wait_line,
)
from graph_start import start


class Relay:
    """Forwards datagrams between a bridge and an FC.

    `cut` drops everything both ways; `loss` drops each datagram with that probability and
    `max_delay_s` delays each by U(0, max_delay_s) (so they overtake each other).
    """

    def __init__(self, bridge_side_port, fc_side_port, bridge, fc, loss=0.0, max_delay_s=0.0,
                 seed=1):
        """Bind both sides and start relaying.

        bridge_side_port: where the bridge sends (its fc_address); fc_side_port: the FC's
        sim_address; bridge, fc: their (host, port).
        """
        self.a = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.a.bind(('127.0.0.1', bridge_side_port))
        self.b = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.b.bind(('127.0.0.1', fc_side_port))
        self.cut = False
        self.loss, self.max_delay_s = loss, max_delay_s
        self.rng = random.Random(seed)
        self.dropped = 0
        self.relayed = 0
        self._stop = False
        for src, dst, to in ((self.a, self.b, fc), (self.b, self.a, bridge)):
            threading.Thread(target=self._pump, args=(src, dst, to), daemon=True).start()

    def _pump(self, src, dst, to):
        src.settimeout(0.2)
        while not self._stop:
            try:
                data = src.recv(65535)
            except socket.timeout:
                continue
            except OSError:
                return
            if self.cut or self.rng.random() < self.loss:
                self.dropped += 1
                continue
            self.relayed += 1
            if self.max_delay_s > 0.0:
                threading.Timer(self.rng.uniform(0.0, self.max_delay_s), self._send,
                                (dst, data, to)).start()
            else:
                self._send(dst, data, to)

    @staticmethod
    def _send(sock, data, to):
        try:
            sock.sendto(data, to)
        except OSError:
            pass            # closed at the end of the test

    def close(self):
        self._stop = True
        time.sleep(0.3)
        self.a.close()
        self.b.close()


def test_fc_link_cut_mid_flight_then_back_the_mission_goes_on(procs):
    port = free_ports(4)
    relay = Relay(port + 1, port + 2, ('127.0.0.1', port), ('127.0.0.1', port + 3))
    try:
        # lockstep holds the sim however long the cut lasts (no disengaging after timeouts)
        nodes = start(procs, 'sim_quad_hil', {
            'time_scale': 0.0, 'scenario': 'short_hop', 'sensor_topics': False,
            'summary': False, 'bind': f'127.0.0.1:{port}', 'fc_address': f'127.0.0.1:{port + 1}'},
            params={'world_plant': {'lockstep_max_timeouts': 0},
                    'builtin_fc': {'bind': f'127.0.0.1:{port + 3}',
                                   'sim_address': f'127.0.0.1:{port + 2}'}})
        plant, fc = nodes['world_plant'], nodes['builtin_fc']
        plant_out, fc_out = output_lines(plant), output_lines(fc)
        assert wait_line(fc_out, 'item 1: WAYPOINT', 120.0, (plant, fc)), ''.join(fc_out)
        relay.cut = True                             # mid-flight, after the takeoff
        # lockstep holds the sim (its clock stands still): the FC is given up after 30 s of
        # wall-time silence, the budget no loaded machine exhausts (peers.WALL_BUDGET_S)
        assert wait_line(plant_out, 'silent on the HIL link', 60.0, (plant, fc)), \
            ''.join(plant_out)
        time.sleep(1.0)
        relay.cut = False
        # the bridge hears the FC again; it is armed and flying: the mission is not sent
        # again; the FC, which kept its state (lockstep held the sim while nothing
        # answered), flies on to the end
        assert wait_line(fc_out, 'mission complete', 120.0, (plant, fc)), \
            ''.join(plant_out[-20:] + fc_out[-20:])
        counts = [line for line in plant_out if 'sending MISSION_COUNT' in line]
        assert len(counts) == 1, ''.join(plant_out)
        assert any('armed: it flies; the mission is not sent again' in line
                   for line in plant_out), ''.join(plant_out)
        text = ''.join(fc_out)
        assert 'item 2: landed' in text and 'Traceback' not in ''.join(plant_out) + text
        assert relay.dropped > 10
    finally:
        relay.close()


def test_pause_and_resume_under_load(procs, ros_context):
    """The sim paused and resumed while its IMC port takes garbage at full speed.

    The pause holds the sim time exactly and the run goes on after it.
    """
    port = free_ports(1)
    bridge = start(procs, 'sim_imc', {'time_scale': 5.0, 'summary': False,
                                      'imc_bind': f'127.0.0.1:{port}', 'imc_peers': ''},
                   params={'imc_bridge': {'warn_period_s': 1.0}})['imc_bridge']
    node, ex = probe_node(ros_context, 'pause_probe')
    status = []
    node.create_subscription(SimStatus, '/sim/status', status.append, qos.LATCHED)
    pause = node.create_client(SetPaused, '/sim/pause')
    assert spin_until(node, ex, lambda: pause.service_is_ready() and status, 30.0)
    stop = threading.Event()

    def flood():
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        rng = random.Random(1)
        while not stop.is_set():
            s.sendto(rng.randbytes(rng.randint(1, 200)), ('127.0.0.1', port))
    threads = [threading.Thread(target=flood, daemon=True) for _ in range(2)]
    for t in threads:
        t.start()
    try:
        for _ in range(3):
            spin_for(node, ex, 0.7)
            fut = pause.call_async(SetPaused.Request(paused=True))
            assert spin_until(node, ex, fut.done, 10.0) and fut.result().success
            assert spin_until(node, ex, lambda: status[-1].state == 2, 5.0)
            held = status[-1].steps
            spin_for(node, ex, 1.0)
            assert status[-1].steps == held, 'the sim stepped while paused'
            fut = pause.call_async(SetPaused.Request(paused=False))
            assert spin_until(node, ex, fut.done, 10.0) and fut.result().success
            assert spin_until(node, ex, lambda h=held: status[-1].state == 1 and
                              status[-1].steps > h, 10.0), 'no steps after resume'
    finally:
        stop.set()
    assert bridge.poll() is None
    assert 'Traceback' not in procs.output(bridge)


def test_mavsdk_downloads_the_mission_through_a_lossy_reordering_link(procs):
    """MAVSDK (a real GCS library) downloads the mission five times through a lossy relay.

    The relay loses 10 % of the datagrams each way and delays them by 0-30 ms.
    """
    from mavsdk.plugins.mission_raw import MissionRaw, MissionRawError
    port = free_ports(4)
    relay = Relay(port + 1, port + 2, ('127.0.0.1', port), ('127.0.0.1', port + 3),
                  loss=0.10, max_delay_s=0.03, seed=4)
    try:
        bridge = procs.node('mavlink_bridge.mavlink_bridge_node', 'mavlink_bridge',
                            {'bind': f'127.0.0.1:{port}', 'fc_address': f'127.0.0.1:{port + 1}'})
        _gcs, system = mavsdk_gcs(port + 3, 30.0)
        mission = MissionRaw(system)
        for k in range(5):
            try:
                items = mission.download_mission()
            except MissionRawError as exc:
                raise AssertionError(f'download {k}: {exc}\n'
                                     f'{procs.output(bridge)[-3000:]}') from exc
            assert [i.command for i in items] == [22, 16, 16, 16, 21]
            assert [i.seq for i in items] == [0, 1, 2, 3, 4]
        assert relay.dropped >= 3, (relay.dropped, relay.relayed)   # the loss did happen
    finally:
        relay.close()
