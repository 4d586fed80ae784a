"""The bridge hears an FC say it will not arm: PX4's words, persisting, are its failure.

fc_words.FcWords.refusal picks PX4's words (a STATUSTEXT of severity CRITICAL, "Preflight
Fail: ...", "Arming denied: ...", "Mission start denied! ...": PX4 v1.16's commander,
HealthAndArmingChecks/checks/*.cpp and Commander.cpp, mavlink_log_critical); the session's
AutoStart watches an FC that starts itself (the built-in FC) and fails it once the refusal
persisted ready_s of sim time without the FC saying it passed (HEARTBEAT STANDBY) or armed.
The built-in FC's side, end to end with the session: test_fc_preflight.
"""

from fc_helpers import PX4, parsed

from mavlink_bridge.core.autostart import FAILED, STARTED, AutoStart
from mavlink_bridge.core.fc_session import FcSession
from mavlink_bridge.core.fc_words import FcWords
from mavlink_bridge.core.mav import mavlink, new_mav, pack
from mavlink_bridge.core.mission import items_from_scenario
from sim_core.scenario import load_scenario

CRITICAL, WARNING = mavlink.MAV_SEVERITY_CRITICAL, mavlink.MAV_SEVERITY_WARNING
COMPASS = 'Preflight Fail: Found 0 compass (required: 1)'     # magnetometerCheck.cpp


def statustext(severity: int, text: str):
    fc = new_mav(*PX4)
    (m,) = parsed(pack(fc, fc.statustext_encode(severity, text.encode()[:50])))
    return m


class Hb:
    def __init__(self, status, armed=False):
        self.system_status = status
        self.base_mode = mavlink.MAV_MODE_FLAG_SAFETY_ARMED if armed else 0


def test_only_px4s_words_for_a_refusal_at_critical_severity_are_one():
    words = FcWords(PX4)
    assert words.refusal(statustext(CRITICAL, COMPASS)) == COMPASS
    # PX4's source ends some with a tab (Commander.cpp: "Mission start denied! No valid
    # mission\t")
    assert words.refusal(statustext(CRITICAL, 'Mission start denied! No valid mission\t')) \
        == 'Mission start denied! No valid mission'
    assert words.refusal(statustext(CRITICAL, 'Arming denied: calibrating'))
    assert words.refusal(statustext(WARNING, COMPASS)) == ''        # not as PX4 says it
    assert words.refusal(statustext(CRITICAL, 'Dangerously low battery! Shutting system '
                                              'down')) == ''


def test_a_self_starting_fc_that_keeps_refusing_has_failed_after_ready_s():
    watch = AutoStart(PX4, 5, ready_s=5.0, commands=False)
    sim = new_mav(51, 1)
    watch.heartbeat(Hb(mavlink.MAV_STATE_STANDBY))
    watch.refusal(COMPASS, 3.0)
    watch.heartbeat(Hb(mavlink.MAV_STATE_UNINIT))
    assert watch.poll(sim, 7.9) == [] and watch.state != FAILED    # nothing sent, ever
    watch.refusal(COMPASS, 7.95)
    watch.poll(sim, 8.0)
    assert watch.state == FAILED
    assert watch.reason == (f'{COMPASS} (the FC says so since sim t = 3.0 s and has not armed '
                            '5 s later)')


def test_a_refusal_the_fc_takes_back_is_no_failure():
    """PX4 says "Preflight Fail" during its start, until its estimator converged."""
    watch = AutoStart(PX4, 5, ready_s=5.0, commands=False)
    sim = new_mav(51, 1)
    watch.refusal('Preflight Fail: ekf2 missing data', 3.0)
    watch.heartbeat(Hb(mavlink.MAV_STATE_STANDBY))             # its checks pass
    watch.poll(sim, 9.0)
    assert watch.state != FAILED and watch.refused == []
    watch.refusal(COMPASS, 10.0)                               # a new one: its own 5 s
    watch.poll(sim, 14.9)
    assert watch.state != FAILED
    watch.heartbeat(Hb(mavlink.MAV_STATE_ACTIVE, armed=True))  # flies after all
    watch.poll(sim, 15.0)
    assert watch.state == STARTED
    watch.refusal(COMPASS, 16.0)                               # said after it started
    watch.poll(sim, 30.0)
    assert watch.state == STARTED


def test_with_autostart_px4s_words_wait_for_its_timeout_and_join_the_reason():
    auto = AutoStart(PX4, 5, ready_s=5.0, timeout_s=30.0)
    sim = new_mav(51, 1)
    auto.mission_accepted(0.0)
    auto.heartbeat(Hb(mavlink.MAV_STATE_UNINIT))
    auto.refusal(COMPASS, 1.0)
    t = 0.0
    while auto.state != FAILED and t < 40.0:
        t += 0.5
        auto.poll(sim, t)
    assert 30.0 < t <= 31.5                                   # the autostart's own rule
    assert auto.reason.endswith(f': no answer; {COMPASS}')


def test_the_session_of_the_builtin_fc_names_its_words_once_as_its_failure():
    se = FcSession(items_from_scenario(load_scenario('default').mission), (51, 1), PX4)
    sim = new_mav(51, 1)
    assert se.autostart is None and not se.start.commands   # autostart off: watched
    se.heartbeat(Hb(mavlink.MAV_STATE_UNINIT))
    out, lines, _ = se.on_message(sim, statustext(CRITICAL, COMPASS), 10.0, 3.0, True, 1)
    assert out == [] and lines == [('warning', f'FC 1:1 says: {COMPASS}')]
    se.poll(sim, 11.0, 7.9, True)
    assert se.failure() == ''
    _, lines = se.poll(sim, 12.0, 8.0, True)
    assert se.failure().startswith(COMPASS)
    assert lines == [('error', f'the flight controller will not fly: {se.failure()}')]
    assert se.poll(sim, 13.0, 9.0, True)[1] == []             # said once
    assert se.waiting_for(13.0) == ''                         # holds no fleet's clock
