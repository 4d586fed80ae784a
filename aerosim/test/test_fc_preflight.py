"""The built-in FC never refuses in silence: each reason it will not arm, said within 5 s.

The FC's core (mavlink_bridge.fc.fc_core, its checks in fc.preflight) and the bridge's session
of it (mavlink_bridge.core.fc_session: autostart off, as for the built-in FC), frame by frame
through MAVLink framing, without sockets: a vehicle at rest on the ground, its sensors from
the suite (SensorSuite) as the bridge samples them, the mission uploaded by the session. The
wall clock of both is the sim clock here. What a PX4 user would see: a STATUSTEXT of severity
CRITICAL in PX4's words ("Preflight Fail: ..."), the HEARTBEAT UNINIT while it fails (PX4 v1.16,
HealthAndArmingChecks/checks/*.cpp, streams/HEARTBEAT.hpp); the session's failure once it
persisted (the reason a run's summary names: test_fc_refused_graph).
"""

import math

from fc_helpers import parsed
import pytest

from mavlink_bridge.core import hil
from mavlink_bridge.core.fc_session import FcSession
from mavlink_bridge.core.mav import mavlink, new_mav, pack
from mavlink_bridge.core.mission import items_from_scenario
from mavlink_bridge.fc import preflight
from mavlink_bridge.fc.fc_core import FcConfig, FcCore
from sim_core.scenario import load_scenario
from sim_sensors.core.suite import SensorSuite, SuiteConfig

RATE_HZ = 250.0             # the bridge's step (and IMU) rate
UNINIT, STANDBY, ACTIVE = (mavlink.MAV_STATE_UNINIT, mavlink.MAV_STATE_STANDBY,
                           mavlink.MAV_STATE_ACTIVE)


class Link:
    """A built-in FC at rest on the ground and the bridge's session of it (no sockets)."""

    def __init__(self, suite_cfg: SuiteConfig, vehicle: str = 'multirotor',
                 mission: bool = True, gps_fix_type: int = 3):
        sc = load_scenario('circuit' if vehicle == 'plane' else 'default')
        self.scenario = sc
        self.core = FcCore(FcConfig(vehicle=vehicle))
        self.sim = new_mav(51, 1)                  # the bridge's side
        self.session = FcSession(items_from_scenario(sc.mission) if mission else [],
                                 (51, 1), (1, 1))  # autostart off: the built-in FC's session
        self.suite = SensorSuite(suite_cfg, sc)
        self.enc = hil.HilSensorEncoder()
        self.fix_type = gps_fix_type
        self.said = []          # (t [s], severity, text) of the FC's STATUSTEXTs
        self.states = []        # (t [s], MAV_STATE) of its HEARTBEATs
        self.failure_at = None  # when the session first said the FC will not fly [s]
        self.t = 0.0
        yaw = math.radians(90.0 - sc.initial_yaw_deg)
        self._q = (math.cos(yaw / 2), 0.0, 0.0, math.sin(yaw / 2))   # ENU<-FLU, level

    def to_fc(self, msgs, t: float) -> None:
        for m in msgs:
            act = self.core.on_datagram(pack(self.sim, m), t)
            assert act.rejects == []
            self.from_fc(act.sends, t)

    def from_fc(self, msgs, t: float) -> None:
        for sent in msgs:
            (m,) = parsed(pack(self.core.mav, sent), self.sim)
            if m.get_type() == 'STATUSTEXT':
                self.said.append((t, m.severity, m.text))
            if m.get_type() == 'HEARTBEAT':
                self.states.append((t, m.system_status))
                self.session.heartbeat(m)
            elif m.get_type() != 'HIL_ACTUATOR_CONTROLS':
                out, _, wrong = self.session.on_message(self.sim, m, t, t, True, 1)
                assert wrong is None
                self.to_fc(out, t)

    def run(self, until_s: float, gps_from_s: float = 0.0) -> None:
        """Step the sim to until_s [s]; GNSS fixes reach the FC from gps_from_s on."""
        if not self.session.started:
            self.to_fc(self.session.begin(self.sim, 0.0), 0.0)
        step_ns = int(round(1e9 / RATE_HZ))
        p = self.scenario.initial_position_enu
        while self.t < until_s:
            t_ns = int(round(self.t * 1e9)) + step_ns
            self.t = t_ns * 1e-9
            smp = self.suite.sample(t_ns, p, (0.0, 0.0, 0.0), self._q, (0.0, 0.0, 0.0),
                                    (0.0, 0.0, 0.0))
            out = []
            if self.t >= gps_from_s:
                for fix in smp.gnss:
                    gps = hil.hil_gps(self.sim, fix, fix.t_ns // 1000)
                    gps.fix_type = min(gps.fix_type, self.fix_type)
                    out.append(gps)
            if smp.imu is not None:
                out.append(self.enc.encode(self.sim, smp, t_ns // 1000))
            self.to_fc(out, self.t)
            self.from_fc(self.core.tick(self.t).sends, self.t)
            sends, _ = self.session.poll(self.sim, self.t, self.t, True)
            self.to_fc(sends, self.t)
            if self.failure_at is None and self.session.failure():
                self.failure_at = self.t

    def refusals(self):
        return [(t, text) for t, sev, text in self.said if sev == mavlink.MAV_SEVERITY_CRITICAL]

    def state_at(self, t: float) -> int:
        return [s for ts, s in self.states if ts <= t][-1]


@pytest.mark.parametrize('suite, words', [
    ({'mag_enabled': False}, preflight.NO_COMPASS),
    ({'gnss_enabled': False}, preflight.NO_GPS),
    ({'baro_enabled': False}, preflight.NO_BARO),
])
def test_a_missing_sensor_is_said_within_5_s_and_the_fc_stays_disarmed(suite, words):
    link = Link(SuiteConfig(seed=3, **suite))
    link.run(5.0)
    (said,) = link.refusals()
    assert said[1] == words and 3.0 <= said[0] <= 5.0       # from 3 s of frames on
    assert link.state_at(said[0]) == UNINIT                 # at once, not a second later
    assert link.state_at(said[0] - 0.01) == STANDBY         # waiting, nothing said yet
    assert not link.core.ap.armed
    # the session: one message is no verdict yet; still so 5 s later, the FC's failure
    assert not link.session.failure()
    link.run(13.5)
    assert [text for _, text in link.refusals()] == [words, words]    # again 10 s later
    assert link.core.ap.phase == 'wait' and not link.core.ap.armed
    assert link.states[-1][1] == UNINIT
    assert said[0] + 5.0 <= link.failure_at <= said[0] + 5.1
    assert link.session.failure().startswith(words)


def test_with_every_sensor_it_arms_before_5_s_and_says_nothing():
    link = Link(SuiteConfig(seed=3))
    link.run(5.0)
    assert link.core.ap.armed and link.said == [] and link.state_at(5.0) == ACTIVE
    assert UNINIT not in [s for _, s in link.states]
    assert link.session.start.state == 'mission started'


def test_gnss_without_a_3d_fix_is_said_in_px4s_words():
    link = Link(SuiteConfig(seed=3), gps_fix_type=2)
    link.run(5.0)
    assert [text for _, text in link.refusals()] == ['Preflight Fail: GPS fix too low']


def test_no_mission_is_said_as_px4s_commander_says_it():
    link = Link(SuiteConfig(seed=3), mission=False)     # an empty mission, accepted
    link.run(5.0)
    assert link.session.mission.state == 'done'
    assert [text for _, text in link.refusals()] == ['Mission start denied! No valid mission']
    assert not link.core.ap.armed


def test_the_plane_without_airspeed_will_not_start_its_takeoff_run():
    """Armed without a pitot it rolled at 0 kt for good: it says so and stays disarmed."""
    link = Link(SuiteConfig(seed=3, airspeed_enabled=False), vehicle='plane')
    link.run(5.0)
    assert [text for _, text in link.refusals()] == [preflight.NO_AIRSPEED]
    assert not link.core.ap.armed and link.state_at(5.0) == UNINIT


def test_a_refusal_taken_back_in_time_is_no_failure():
    """GNSS late (a receiver acquiring): said at 3 s, fixed at 6 s, armed, no verdict."""
    link = Link(SuiteConfig(seed=3))
    link.run(10.0, gps_from_s=6.0)
    (said,) = link.refusals()
    assert said[1] == preflight.NO_GPS and said[0] < 5.0
    passed = next(t for t, s in link.states if t > said[0] and s == STANDBY)
    assert 6.0 <= passed < 6.2                      # at once once it has a fix
    assert link.core.ap.armed and link.state_at(10.0) == ACTIVE
    assert link.failure_at is None and link.session.start.state == 'mission started'


def test_the_px4_stand_in_makes_its_own_checks():
    """auto_arm False (PX4's commander arms it): the autopilot says nothing itself."""
    from mavlink_bridge.fc.autopilot import MulticopterFc, NavConfig
    ap = MulticopterFc(nav=NavConfig(auto_arm=False))
    assert not ap.preflight.say
    ap.preflight.first_s = 0.0
    assert ap.preflight.update(4.0, False, True) == [preflight.NO_COMPASS, preflight.NO_BARO,
                                                     preflight.NO_GPS]
    assert ap.preflight.out == [] and ap.preflight.declared == ()


def test_an_attitude_that_does_not_converge_is_said():
    """Sensors there, but no gravity to level on (frames of a free fall): not armed, said."""
    core, sim = FcCore(FcConfig()), new_mav(51, 1)
    said = []
    for k in range(1, int(5.0 * RATE_HZ) + 1):
        frame = sim.hil_sensor_encode(k * 4000, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.2, 0.0, 0.4,
                                      1013.0, 0.0, 400.0, 15.0, 0x1FFF, 0)
        said += [(k * 0.004, m.text) for m in core.on_datagram(pack(sim, frame), k * 0.004).sends
                 if m.get_type() == 'STATUSTEXT']
    assert [text for _, text in said] == [preflight.NO_ATTITUDE, preflight.NO_GPS,
                                          preflight.NO_MISSION]     # the sensors first
    assert 3.0 <= said[0][0] <= 5.0 and not core.ap.armed
