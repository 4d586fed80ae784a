"""The built-in FCs' pre-flight checks: why they will not arm, said as PX4 says it (pure).

PX4 v1.16's commander runs its health and arming checks all the time and reports them when
their results change and on every arming request (HealthAndArmingChecks.cpp, update():
Report::report); besides the events, each failing check is a STATUSTEXT of severity CRITICAL
worded "Preflight Fail: <what>" (mavlink_log_critical in checks/*.cpp, e.g. baroCheck.cpp
"Preflight Fail: barometer %u missing", estimatorCheck.cpp "Preflight Fail: GPS fix too
low"), and a mission start without a mission is "Mission start denied! No valid mission"
(Commander.cpp). Its HEARTBEAT says MAV_STATE_UNINIT while the checks fail, STANDBY once they
pass (streams/HEARTBEAT.hpp). The built-in FC arms itself (NavConfig.auto_arm) and says what
keeps it from doing so the same way, from CHECK_AFTER_S of its sensor frames on (every
enabled sensor has sampled by then: the suite's sensors sample from the first step, GNSS
fixes come after at most 2 s of latency), again on every change and every REPEAT_S while
they fail. The checks:

- compass: no magnetometer sample. The attitude filter starts from the e-compass (gravity and
  the field) and holds its heading with the magnetometer; without one the heading is
  unobservable on the ground, and a multirotor takes off vertically: no GNSS course to take
  it from before it would fly its first leg in an unknown direction (PX4 refuses too,
  SYS_HAS_MAG 1: "Found 0 compass (required: 1)");
- barometer: no pressure altitude (PX4's words, baroCheck.cpp; PX4 refuses too,
  SYS_HAS_BARO 1). The estimator could hold the height on GNSS alone, but then its vertical
  error is the receiver's: the default mission without a barometer, seeds 0-9, was complete
  on ground truth 9 times (seed 6: 1 of 5 items, the waypoints' heights off by more than the
  judge's 1 m); with one, 10 times;
- GPS: no HIL_GPS at all, or fixes but none 3D (PX4's "GPS fix too low");
- attitude: the sensors are there but the attitude filter has not converged;
- airspeed (a plane): no differential pressure: the takeoff run would never reach its
  rotation speed (measured: armed and rolling at 0 kt for 120 s);
- mission: nothing to fly (none came, an empty one, a failed download).

The PX4 stand-in's commander (auto_arm False) makes its own checks: these are not said there.
"""

import math
from typing import List, Optional, Tuple

from mavlink_bridge.core.mav import mavlink
from mavlink_bridge.fc.estimator import HilFrame

CHECK_AFTER_S = 3.0         # sensor frames before the checks are said [s, sim]
REPEAT_S = 10.0             # failing checks said again this often [s, sim]
CRITICAL = mavlink.MAV_SEVERITY_CRITICAL
# The checks' words (a STATUSTEXT's text is 50 characters at most)
NO_COMPASS = 'Preflight Fail: no compass: heading unobservable'
NO_BARO = 'Preflight Fail: barometer 0 missing'
NO_GPS = 'Preflight Fail: GPS missing: no global position'
GPS_FIX = 'Preflight Fail: GPS fix too low'
NO_ATTITUDE = 'Preflight Fail: No valid attitude estimate'
NO_AIRSPEED = 'Preflight Fail: No airspeed data'
NO_MISSION = 'Mission start denied! No valid mission'


class Preflight:
    """A built-in FC's checks before arming and what it says of them (module docstring).

    Fed every sensor frame and GNSS fix; update() on each frame while waiting to arm.
    `out` holds the STATUSTEXTs to send, (MAV_SEVERITY, text); `declared` the failing checks
    said last (() once they pass): the HEARTBEAT says UNINIT while it is not empty.
    """

    def __init__(self, airspeed: bool = False, say: bool = True):
        """airspeed: the airframe needs it (a plane); say: the FC arms itself (auto_arm)."""
        self.airspeed = airspeed
        self.say = say
        self.first_s: Optional[float] = None        # sim time of the first frame [s]
        self.mag = self.baro = self.dp = 0          # samples seen
        self.fixes = self.fixes_3d = 0              # HIL_GPS seen, with a 3D fix
        self.declared: Tuple[str, ...] = ()
        self.out: List[Tuple[int, str]] = []
        self._said_at = -math.inf

    def frame(self, t_s: float, fr: HilFrame) -> None:
        """A sensor frame at sim time t_s [s]: which sensors it carried."""
        if self.first_s is None:
            self.first_s = t_s
        self.mag += fr.mag is not None
        self.baro += fr.pressure_alt is not None
        self.dp += fr.diff_pressure_hpa is not None

    def gps(self, fix_type: int) -> None:
        """A HIL_GPS with this fix type (3: 3D)."""
        self.fixes += 1
        self.fixes_3d += fix_type >= 3

    def failing(self, attitude_ok: bool, mission: bool) -> List[str]:
        """The checks that fail now, the sensors' first (their words; [] = ready to arm)."""
        out = []
        if not self.mag:
            out.append(NO_COMPASS)
        elif not attitude_ok:
            out.append(NO_ATTITUDE)
        if not self.baro:
            out.append(NO_BARO)
        if not self.fixes_3d:
            out.append(GPS_FIX if self.fixes else NO_GPS)
        if self.airspeed and not self.dp:
            out.append(NO_AIRSPEED)
        if not mission:
            out.append(NO_MISSION)
        return out

    def update(self, t_s: float, attitude_ok: bool, mission: bool) -> List[str]:
        """The failing checks at sim time t_s [s]; said from CHECK_AFTER_S of frames on.

        Said (into out) when they change and every REPEAT_S while they fail; returned
        whether said or not (the FC does not arm while any fails).
        """
        now = self.failing(attitude_ok, mission)
        if not self.say or self.first_s is None or t_s - self.first_s < CHECK_AFTER_S:
            return now
        if tuple(now) != self.declared or (now and t_s - self._said_at >= REPEAT_S):
            self.out += [(CRITICAL, text) for text in now if text not in self.declared
                         or t_s - self._said_at >= REPEAT_S]
            self._said_at = t_s if now else -math.inf
            self.declared = tuple(now)
        return now

    def passed(self) -> None:
        """Armed: nothing fails."""
        self.declared = ()
