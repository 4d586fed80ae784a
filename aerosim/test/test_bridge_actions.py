"""The one bridge pattern, without DDS: Actions, the apply path, config errors, input order.

Every bridge's core returns a sim_core.actions.Actions (its own fields added) and its node
carries it out through sim_ros.bridge_node.BridgeNode._apply; the cores refuse a bad config
handed to them directly as a node's start-up does (sim_core.config.checked), and their
ordering rules hold call by call. The graph tests show the same with processes.
"""

import json
import math

import numpy as np
import pytest
from test_usv_protocol import SEED_INIT, pipeline

from imc_bridge.core import bridge as imc
from mavlink_bridge.core import bridge as mav
from mavlink_bridge.core.endpoint import Endpoint
from mavlink_bridge.core.mav import new_mav
from mavlink_bridge.fc import fc_core
from sim_core.actions import Actions
from sim_core.clock import SimState
from sim_core.errors import ConfigError
from sim_core.frames import VehicleSample
from sim_core.link import UdpLink
from sim_core.scenario import load_scenario
from sim_sensors.core.suite import SuiteConfig
from usv_bridge.core import pipeline as pl

FC_AT = ('127.0.0.1', 9)


# --- the Actions base and the one apply path ---------------------------------------------------
def test_every_bridge_decides_in_one_actions_shape():
    for cls in (mav.Actions, imc.Actions, pl.Actions, fc_core.Actions):
        act = cls()
        assert isinstance(act, Actions) and act.reject is None
        act.log('hello')
        act.log_every('key', 'often', 60.0, 'error')
        act.refuse('value', 'no', ('127.0.0.1', 1))
        assert act.logs == [('info', 'hello')] and act.limited == [('error', 'key', 'often', 60.0)]
        assert act.rejects == [('value', 'no', ('127.0.0.1', 1))] and act.reject == ('value', 'no')


class FakeNode:
    """A BridgeNode's parts that _apply calls, recording them in order."""

    OTHER_KIND = 'invalid'

    def __init__(self):
        import threading

        from sim_ros.bridge_node import BridgeNode
        self.calls = []
        self.rejects = {'value': 0, 'invalid': 0, 'peer': 0}
        self._limited_at, self._limited_lock = {}, threading.Lock()
        self._log_limited = BridgeNode._log_limited.__get__(self)
        self.apply = BridgeNode._apply.__get__(self)

    def _log_lines(self, lines):
        self.calls += [('log',) + tuple(line) for line in lines]

    def _reject(self, kind, text, addr=None):
        self.calls.append(('reject', kind, text, addr))

    def _send(self, sends):
        self.calls.append(('send', list(sends)))

    def _apply_own(self, act, sent):
        self.calls.append(('own', sent is not None))


def test_apply_logs_then_counts_then_sends_then_the_bridges_own():
    node, act = FakeNode(), Actions()
    act.sends.append('frame')
    act.log('first')
    act.refuse('value', 'bad')                      # no sender of its own: the input's
    act.refuse('odd', 'strange', ('10.0.0.1', 5))   # a kind the node does not count: OTHER
    act.log_every('conflict', 'loud', 60.0, 'error')
    node.apply(act, ('127.0.0.1', 7))
    assert node.calls == [('log', 'info', 'first'), ('log', 'error', 'loud'),
                          ('reject', 'value', 'bad', ('127.0.0.1', 7)),
                          ('reject', 'invalid', 'strange', ('10.0.0.1', 5)),
                          ('send', ['frame']), ('own', True)]
    node.calls.clear()
    node.apply(act)                                  # the limited line: not again this minute
    assert ('log', 'error', 'loud') not in node.calls
    node.calls.clear()
    node.apply(Actions())
    assert node.calls == [('own', False)]            # nothing sent: no send timing


# --- configuration errors, on the cores ---------------------------------------------------------
def hil_bridge(**cfg):
    c = mav.BridgeConfig(**{'gps_utc_start': '2026-11-22T12:00:00Z', **cfg})
    ep = Endpoint(UdpLink(('127.0.0.1', 0), FC_AT), 51, 1, 'HIL link', 3.0)
    return mav.HilBridge(c, load_scenario('default'), SuiteConfig(), ep), ep


@pytest.mark.parametrize('values, text', [
    ({'gps_utc_start': 'yesterday'}, 'gps_utc_start: expected ISO-8601'),
    ({'mixer_motor_channels': (0, 0, 1, 2)}, 'permutation of 0..3'),
    ({'mixer_plane_layout': 'aert'}, "mixer_plane_layout: 'aert' is not a layout"),
    ({'system_id': 0}, 'system_id: must be in [1, 255], got 0'),
    ({'hil_state_rate_hz': -1.0}, 'hil_state_rate_hz: must be in [0, 1000]'),
])
def test_the_mavlink_core_refuses_a_bad_config_as_the_node_does(values, text):
    with pytest.raises(ConfigError) as err:
        hil_bridge(**values)
    assert text in str(err.value)


def test_the_mavlink_scenario_of_a_missing_file_or_vehicle_is_a_config_error():
    with pytest.raises(ConfigError, match="file 'no_such_scenario' not found"):
        mav.vehicle_scenario(mav.BridgeConfig(scenario_file='no_such_scenario'))
    with pytest.raises(ConfigError, match='vehicle_index: 3, but the simulation has 1'):
        mav.vehicle_scenario(mav.BridgeConfig(vehicle_index=3))


def imc_core(**cfg):
    c = imc.ImcConfig(**{'timestamps': 'sim', 'announce_hosts': '', **cfg})
    return imc.ImcBridgeCore(c, load_scenario('default'), ('127.0.0.1', 6003))


@pytest.mark.parametrize('values, text', [
    ({'thruster_positive': 'forward'}, "thruster_positive: one of ahead, astern, got 'forward'"),
    ({'fin_source': 'Servos'},
     "fin_source: one of ServoPosition, SetServoPosition, got 'Servos'"),
    ({'system_type': 'submarine'}, 'system_type: one of ccu, humansensor, uuv, usv'),
    ({'sound_speed_mps': 340.0}, 'sound_speed_mps: must be in [1300, 1700], got 340'),
    ({'rudder_positive': 'left'}, "rudder_positive: one of port, starboard, got 'left'"),
    ({'timestamps': 'gps'}, "timestamps: one of utc, sim_utc, sim, got 'gps'"),
])
def test_the_imc_core_refuses_a_bad_config_naming_the_parameter(values, text):
    with pytest.raises(ConfigError) as err:
        imc_core(**values)
    assert text in str(err.value)


@pytest.mark.parametrize('values, text', [
    ({'transport': 'serial'}, "transport: one of udp, tcp, got 'serial'"),
    ({'timestamps': 'gps'}, "timestamps: one of sim, wall, got 'gps'"),
    ({'window': 0}, 'window: must be in [1, 900], got 0'),
])
def test_the_usv_pipeline_refuses_a_bad_config_as_the_node_does(values, text):
    with pytest.raises(ConfigError) as err:
        pipeline(**values)
    assert str(err.value) == text


# --- input ordering rules, call by call --------------------------------------------------------
def at_rest(t_ns):
    z = np.zeros(3)
    return VehicleSample(t_ns, z, z, np.array([1.0, 0.0, 0.0, 0.0]), z, z)


def test_mavlink_an_answer_releases_only_its_own_frame_and_a_pause_holds_the_motors():
    b, ep = hil_bridge()
    fc = new_mav(1, 1)

    def answer(t_us, value, now):
        controls = [value] * 4 + [0.0] * 12
        return b.on_datagram(ep, fc.hil_actuator_controls_encode(t_us, controls, 129, 1)
                             .pack(fc), FC_AT, now)
    b.on_sim_status(SimState.RUNNING, 1.0, 0.0)
    b.on_state(at_rest(4_000_000))
    b.on_state(at_rest(8_000_000))
    # an FC working through a backlog answers the older frame: that step, not the latest
    assert answer(4000, 0.25, 0.1).commands == [((0.25,) * 4, 4_000_000)]
    assert answer(8000, 0.5, 0.2).commands == [((0.5,) * 4, 8_000_000)]
    # the same state again is no step (no frame); time going back is a reset, said once
    assert b.on_state(at_rest(8_000_000)).sends == []
    back = b.on_state(at_rest(4_000_000))
    assert any('went backwards' in text for _, text in back.logs)
    # paused: an answer to a frame from before the pause moves nothing
    b.on_state(at_rest(12_000_000))
    b.on_sim_status(SimState.PAUSED, 1.0, 0.3)
    assert answer(12000, 1.0, 0.4).commands == [] and b.count['ignored'] >= 1


def test_usv_answers_go_out_in_each_uis_input_order_and_states_after_them():
    p = pipeline(window=10)
    ui = ('127.0.0.1', 9922)
    for k in range(2):
        assert p.on_input(json.dumps([22, 1, 0, 0, k, 0, 2, 60, 0, 0, 0]).encode(), ui,
                          0.0).accepted
    # a garbage third input is refused at once, but its answer waits for inputs 1 and 2
    act = p.on_input(b'{not json', ui, 0.0)
    assert act.rejects[0][0] == 'json' and act.replies == []
    p.flush(0.0, True)
    act = p.on_results([(2, True, '', 'ok 2')])          # the swarm answers 2 first: held
    assert act.replies == []
    act = p.on_results([(1, True, '', 'ok 1')])
    assert [r['seq'] for _, r in act.replies] == [1, 2, 3]
    assert [r['ok'] for _, r in act.replies] == [True, True, False]


def test_usv_an_init_then_its_orders_go_to_the_swarm_in_one_ordered_stream():
    p = pipeline(window=10)
    ui = ('127.0.0.1', 9922)
    assert p.on_input(json.dumps(SEED_INIT).encode(), ui, 0.0).accepted
    assert p.on_input(b'[26, 1]', ui, 0.0).accepted
    assert p.on_input(json.dumps([22, 1, 0, 0, 1, 0, 2, 60, 0, 0, 0]).encode(), ui,
                      0.0).accepted
    (batch,) = p.flush(0.0, True).batches
    assert [(i.code, i.seq) for i in batch] == [('init', 1), (26, 2), (22, 3)]


def test_imc_a_broadcast_of_the_other_level_is_ignored_until_one_is_addressed_to_us():
    import imcpy

    from imc_bridge.core.codec import Address, stamp
    core = imc_core()

    def send(msg, dst):
        return core.on_datagram(stamp(msg, Address(0x3F02, 0), 1.0, dst).serialize(),
                                ('127.0.0.1', 6002), 1.0, 0.0)
    heading = imcpy.DesiredHeading()
    heading.value = math.pi / 2
    act = send(heading, 0xFFFF)                         # broadcast: DUNE's telemetry copy
    assert act.autopilot == [] and core.counts['ignored_guidance'] == 1
    act = send(heading, core.system_id)                 # addressed: switches, then drives
    assert core.arbiter.level == 'guidance' and act.autopilot == [(None, math.pi / 2)]
    assert any('IMC control level -> guidance' in text for _, text in act.logs)
