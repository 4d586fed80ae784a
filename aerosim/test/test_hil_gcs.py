"""A ground station on the HIL link: command and mission ACKs, MAVSDK's mission download.

A pymavlink ground station on its own UDP port gets a COMMAND_ACK or MISSION_ACK for every
request; MAVSDK (a real MAVLink GCS library, not our code) downloads the mission and reads home.
"""

import time

from hil_helpers import Peer, hil_nodes
import pytest

from mavlink_bridge.core.mav import mavlink

from conftest import DEADLINE_SCALE, free_ports, mavsdk_gcs


def download_mission(mission_raw, attempts=3):
    """MissionRaw.download_mission(), again after a TIMEOUT (as a ground station retries).

    MAVSDK's transfer timeout is 0.5 s of wall time per message with no API to change it
    here: with both cores busy the bridge's answer can take longer. Any other error fails.
    """
    from mavsdk.plugins.mission_raw import MissionRawError
    for k in range(attempts):
        try:
            return mission_raw.download_mission()
        except MissionRawError as exc:
            if 'TIMEOUT' not in str(exc) or k == attempts - 1:
                raise


def test_a_gcs_on_another_port_gets_command_and_mission_acks(procs):
    """A ground station (pymavlink) on its own UDP port, apart from the FC's (fc_address).

    Every command addressed to the bridge is answered with a COMMAND_ACK (mavlink.io command
    protocol): UNSUPPORTED for what it does not handle, ACCEPTED and the message for
    MAV_CMD_REQUEST_MESSAGE of HOME_POSITION. The mission protocol's requests are answered
    with a MISSION_ACK (mavlink.io mission protocol, Errors): INVALID_SEQUENCE for an item the
    mission does not have, DENIED for an upload or a clear of the scenario's mission (the
    simulator is its source), ACCEPTED for clearing the fence it does not hold. The answers
    reach the ground station's port, and the mission is still there to download.
    """
    port = free_ports(3)
    fc = Peer(port + 1, port)                          # the FC's address: nothing answers
    gcs = Peer(port + 2, port, sysid=255, compid=190)
    bridge = hil_nodes(procs, port, port + 1)
    mav = gcs.mav
    asks = [
        ('DO_SET_MODE', mav.command_long_encode(51, 1, mavlink.MAV_CMD_DO_SET_MODE, 0,
                                                1, 4, 0, 0, 0, 0, 0),
         'COMMAND_ACK', lambda m: (m.command, m.result) == (176, 3)),
        ('REQUEST_MESSAGE(HOME_POSITION)', mav.command_long_encode(
            51, 1, mavlink.MAV_CMD_REQUEST_MESSAGE, 0, 242, 0, 0, 0, 0, 0, 0),
         'COMMAND_ACK', lambda m: (m.command, m.result) == (512, 0)),
        ('COMMAND_INT DO_REPOSITION', mav.command_int_encode(
            51, 1, 6, mavlink.MAV_CMD_DO_REPOSITION, 0, 0, -1, 0, 0, 0, 473977420, 85455940,
            20.0), 'COMMAND_ACK', lambda m: (m.command, m.result) == (192, 3)),
        ('request of item 99', mav.mission_request_int_encode(51, 1, 99, 0),
         'MISSION_ACK', lambda m: m.type == mavlink.MAV_MISSION_INVALID_SEQUENCE),
        ('upload', mav.mission_count_encode(51, 1, 3, 0),
         'MISSION_ACK', lambda m: (m.type, m.mission_type) == (mavlink.MAV_MISSION_DENIED, 0)),
        ('clear all', mav.mission_clear_all_encode(51, 1, 0),
         'MISSION_ACK', lambda m: (m.type, m.mission_type) == (mavlink.MAV_MISSION_DENIED, 0)),
        ('clear the fence', mav.mission_clear_all_encode(51, 1, 1),
         'MISSION_ACK', lambda m: (m.type, m.mission_type) == (mavlink.MAV_MISSION_ACCEPTED, 1)),
        ('download', mav.mission_request_list_encode(51, 1, 0),
         'MISSION_COUNT', lambda m: m.count == 5),
    ]
    seen = {}
    for what, msg, answer, ok in asks:
        got = None
        deadline = time.monotonic() + 30.0 * DEADLINE_SCALE
        while time.monotonic() < deadline:  # re-sent after a timeout, as the protocol says
            gcs.send(msg)
            for m in gcs.recv(3.0):
                seen.setdefault(m.get_type(), m)
                if m.get_type() == answer and (m.target_system, m.target_component) == \
                        (255, 190):
                    got = m
                    break
            if got is not None:
                break
        assert got is not None, f'{what}: no {answer}; {procs.output(bridge)[-2000:]}'
        assert ok(got), (what, got)
    assert seen['HOME_POSITION'].latitude == 473977420      # the message it asked for
    assert 'HIL_SENSOR' not in seen                          # the sensors go to the FC
    out = procs.output(bridge)
    assert 'COMMAND_LONG MAV_CMD_DO_SET_MODE from 255:190 on the HIL link: answered ' \
        'UNSUPPORTED' in out, out[-3000:]
    assert 'upload of 3 items (type 0) from 255:190: answered MAV_MISSION_DENIED' in out
    assert 'Traceback' not in out
    fc.sock.close()


def test_mavsdk_downloads_the_mission_and_reads_home(procs):
    from mavsdk.plugins.mission_raw import MissionRaw
    from mavsdk.plugins.telemetry import Telemetry
    port = free_ports(2)
    hil_nodes(procs, port, port + 1)
    deadline = time.monotonic() + 20.0 * DEADLINE_SCALE
    _gcs, system = mavsdk_gcs(port + 1, 20.0 * DEADLINE_SCALE)
    assert system.get_system_id() == 51
    items = download_mission(MissionRaw(system))
    assert [i.command for i in items] == [22, 16, 16, 16, 21]
    assert [i.frame for i in items] == [6] * 5
    assert items[1].x == 473980120 and items[1].y == 85455940
    assert items[2].z == pytest.approx(12.0)
    tel = Telemetry(system)
    home = tel.home()
    while time.monotonic() < deadline + 10.0 and home.latitude_deg != home.latitude_deg:
        time.sleep(0.2)
        home = tel.home()
    assert home.latitude_deg == pytest.approx(47.397742, abs=1e-7)
    assert home.longitude_deg == pytest.approx(8.545594, abs=1e-7)
    assert home.absolute_altitude_m == pytest.approx(488.0, abs=0.01)
