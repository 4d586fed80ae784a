"""The built-in FC's link decisions (mavlink_bridge.fc.fc_core), without ROS or a socket.

builtin_fc's node only carries these out (sends, logs, refusals by kind, progress lines); a
graph test (test_hil_graph) shows the same refusals counted on a real node's /diagnostics.
"""

import pytest

from mavlink_bridge.core.mav import mavlink, new_mav
from mavlink_bridge.fc.fc_core import AIRFRAMES, LOCKSTEP_FLAG, FcConfig, FcCore
from sim_core.errors import ConfigError

NAN = float('nan')


def sim():
    """The simulator's MAVLink side (system 51, as mavlink_bridge)."""
    return new_mav(51, 1)


def sensor(mav, t_us, value=0.0):
    return mav.hil_sensor_encode(t_us, *[value] * 13, 0x1FFF, 0).pack(mav)


@pytest.mark.parametrize('values, text', [
    ({'vehicle': 'boat'}, "vehicle: one of multirotor, plane, got 'boat'"),
    ({'hover_thrust': 1.5}, 'hover_thrust: must be in [0.05, 0.95], got 1.5'),
    ({'system_id': 0}, 'system_id: must be in [1, 255], got 0'),
    ({'spin_wait_us': 30000}, 'spin_wait_us: must be in [0, 20000], got 30000'),
])
def test_a_bad_configuration_is_refused_naming_the_parameter(values, text):
    with pytest.raises(ConfigError) as err:
        FcCore(FcConfig(**values))
    assert str(err.value) == text


def test_each_airframe_says_its_type_and_heartbeats_once_a_second():
    # the kind's kind.yaml names its airframe: a multirotor's multicopter, a plane's fixed wing
    for kind, mav_type in (('multirotor', AIRFRAMES['multicopter']),
                           ('plane', AIRFRAMES['fixed_wing'])):
        core = FcCore(FcConfig(vehicle=kind))
        first = core.tick(10.0).sends
        assert [m.get_type() for m in first] == ['HEARTBEAT'] and first[0].type == mav_type
        assert not core.tick(10.5).sends and core.tick(11.0).sends


def test_every_sensor_frame_is_answered_with_its_time_and_bad_values_refused():
    core, mav = FcCore(FcConfig()), sim()
    act = core.on_datagram(sensor(mav, 4000), 1.0)
    (ans,) = act.sends
    assert ans.get_type() == 'HIL_ACTUATOR_CONTROLS' and ans.time_usec == 4000
    assert ans.flags == LOCKSTEP_FLAG and act.answered and act.rejects == []
    assert core.sim_peer == (51, 1) and core.answered == 1
    act = core.on_datagram(sensor(mav, 8000, NAN), 1.1)      # refused, still answered
    assert act.reject[0] == 'value' and 'non-finite' in act.reject[1]
    assert [m.time_usec for m in act.sends] == [8000] and core.answered == 2


def test_garbage_is_refused_by_kind_and_changes_nothing():
    core, mav = FcCore(FcConfig()), sim()
    good = mav.heartbeat_encode(6, 8, 0, 0, 3).pack(mav)
    assert core.on_datagram(good[:7], 0.0).reject[0] == 'truncated'
    bad_crc = good[:-1] + bytes([good[-1] ^ 0xFF])
    assert core.on_datagram(bad_crc, 0.0).reject[0] == 'undecodable'
    assert core.sim_peer is None and core.answered == 0
    assert core.on_datagram(good, 0.0).rejects == [] and core.sim_peer == (51, 1)


def test_the_fc_asks_for_the_mission_once_when_none_came_in_time():
    core, mav = FcCore(FcConfig(mission_wait_s=3.0)), sim()
    assert not [m for m in core.tick(0.0).sends if m.get_type() != 'HEARTBEAT']   # no sim
    core.on_datagram(mav.heartbeat_encode(6, 8, 0, 0, 3).pack(mav), 1.0)
    asked = [m.get_type() for m in core.tick(2.0).sends]
    assert 'MISSION_REQUEST_LIST' not in asked                  # not yet: 1 s after
    asked = [m for m in core.tick(4.5).sends if m.get_type() == 'MISSION_REQUEST_LIST']
    assert len(asked) == 1 and asked[0].target_system == 51
    assert not [m for m in core.tick(9.0).sends if m.get_type() == 'MISSION_REQUEST_LIST']


def test_a_mission_for_another_system_is_not_taken():
    core, mav = FcCore(FcConfig(system_id=1)), sim()
    count = mav.mission_count_encode(7, 1, 3, mavlink.MAV_MISSION_TYPE_MISSION)
    assert core.on_datagram(count.pack(mav), 0.0).sends == []
    count = mav.mission_count_encode(1, 1, 3, mavlink.MAV_MISSION_TYPE_MISSION)
    (req,) = core.on_datagram(count.pack(mav), 0.0).sends
    assert req.get_type() == 'MISSION_REQUEST_INT' and req.seq == 0
