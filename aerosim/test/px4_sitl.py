"""A test peer that behaves as PX4 v1.16 SITL does towards a simulator, read from PX4's source.

Run as a process (`python px4_sitl.py --sim-port P --mavlink-port L --mavlink-remote R
[--gcs-port G --gcs-remote 14550]`), as PX4 runs beside aerosim. What it reproduces, and where
PX4 does it (PX4-Autopilot at v1.16), is told in the module following each part of PX4:
- px4_simulator.py: the simulator link, src/modules/simulation/simulator_mavlink/
  SimulatorMavlink.cpp (lockstep, HIL_ACTUATOR_CONTROLS), and the scheduling and cost as PX4
  SITL runs (--realtime: SCHED_FIFO 99, Px4Sitl._fifo; --step-cost-us: PX4's time per step);
- px4_links.py: the MAVLink links (UDP), src/modules/mavlink/mavlink_main.cpp,
  mavlink_receiver.cpp, px4-rc.mavlink (forwarding, STATUSTEXT and events, parameters);
  px4_streams.py: the payload link's telemetry, mavlink_stream.cpp (onboard mode, 4000 B/s);
- px4_mission.py: the mission manager, src/modules/mavlink/mavlink_mission.cpp
  (MavlinkMissionManager);
- px4_commander.py: the commander, src/modules/commander/Commander.cpp, HealthAndArmingChecks
  (checks, arming, MISSION_START, land and takeoff detection, the HEARTBEAT's state);
- px4_precland.py: precision landing (a land item's `deck:`; LANDING_TARGET, DISTANCE_SENSOR,
  landing_target_estimator, navigator's precland: no velocity feed-forward);
- px4_events.py: PX4's events and MAVLink FTP; px4_params.py: its parameters and the
  navigator's feasibility check of a mission.
Px4Sitl here ties them together, one object of those parts (mixins: they share one state,
the clock, the arming, the FC core, as PX4's modules share uORB topics), and main() runs it.

The flying itself is a built-in FC's core, told to wait for the mission start instead of
arming itself: fc.autopilot.MulticopterFc for the quad (airframe 10016 none_iris, Quad X
outputs 0..3), mavlink_bridge.fc.plane.PlaneFc with `--airframe plane`: PX4's SITL plane
(ROMFS/px4fmu_common/init.d-posix/airframes/1030_gazebo-classic_plane: rc.fw_defaults sets
MAV_TYPE 1, fixed wing, in HEARTBEAT; outputs 3 rudder, 4 left flap, 5 motor, 6/7 ailerons,
8 elevator, 9 right flap reversed: controls[2..8]), its motor limited to FW_THR_MAX (0.6 in
airframe 1030) as the fixed-wing controllers limit it.
"""

import argparse
import collections
import os
import sys
import threading

from mavlink_bridge.core.mav import mavlink, new_mav
from mavlink_bridge.fc.autopilot import DONE, MulticopterFc, NavConfig
from mavlink_bridge.fc.control import Gains
from mavlink_bridge.fc.plane import PlaneFc

from px4_commander import HOLD, Commander
import px4_events
from px4_links import Link, LinkStats, MavlinkLinks, source
from px4_mission import RETRY_US, Item, MissionManager
from px4_params import Params
from px4_precland import PrecisionLanding
from px4_simulator import REALTIME_PRIORITY, SimulatorLink
from px4_streams import ONBOARD_STREAMS, PAYLOAD_DATARATE, Streams

# the names the tests import from here (test_px4*, test_fc_session, test_fc_params)
__all__ = ['ONBOARD_STREAMS', 'PAYLOAD_DATARATE', 'RETRY_US', 'Item', 'MissionManager',
           'Px4Sitl', 'Streams', 'main', 'source']


class Px4Sitl(SimulatorLink, MavlinkLinks, Commander, PrecisionLanding):
    """The simulator link, the MAVLink links, commander, mission manager; see the docstring."""

    def __init__(self, sim_port: int, mav_port: int, mav_remote: int, sysid: int = 1,
                 host: str = '127.0.0.1', airframe: str = 'quad', gcs_port: int = 0,
                 gcs_remote: int = 14550):
        """sim_port: the simulator's TCP port; mav_port / mav_remote: the payload link's ports.

        airframe: quad or plane (the FC core flying, its outputs, MAV_TYPE, the airframe's
        parameter defaults); gcs_port: the GCS link's port (18570 + instance; 0 = none),
        sending to gcs_remote (14550).
        """
        self.sysid = sysid
        self.sim_addr = (host, sim_port)
        self.sim = new_mav(sysid, 1)
        self.sim.robust_parsing = True
        self.payload = Link('payload', mav_port, mav_remote, sysid, host,
                            Streams(ONBOARD_STREAMS, PAYLOAD_DATARATE))
        self.links = [self.payload]
        if gcs_port:
            self.links.append(Link('gcs', gcs_port, gcs_remote, sysid, host))
        self.gcs = self.payload.mav           # the payload link's encoder (the tests' name)
        self.plane = airframe == 'plane'
        self.params = Params(airframe)
        self.ap = PlaneFc(auto_arm=False) if self.plane else \
            MulticopterFc(Gains(hover_thrust=0.52), NavConfig(auto_arm=False))
        self.mav_type = mavlink.MAV_TYPE_FIXED_WING if self.plane else \
            mavlink.MAV_TYPE_QUADROTOR
        self.mm = MissionManager(sysid, self.say)
        self.mission_valid = False
        self.events = px4_events.EventSender(sysid)
        self.ftp = px4_events.FtpServer(px4_events.files())
        self.lock = threading.Lock()        # the FC's state (every receive thread)
        self.tcp = None
        self.now_us = 0
        self.armed = False
        self.sub_mode = HOLD
        self.armed_at_us = None
        self.landed = False
        self.airborne = False
        self.next_hb_us = 0
        self.checks: tuple = ()             # the failing checks last reported
        self.sim_stats = LinkStats()
        self.counts = collections.Counter()
        self.log = []
        self.stop = threading.Event()
        self.step_cost_s = 0.0              # --step-cost-us
        self.realtime = False               # --realtime, and permitted
        self._next_thr = None               # the FC core's outputs for the next answer
        self.lte = False                    # landing_target_estimator started
        self.range = None                   # (PX4 time [us], distance [m]) downward, valid
        self._nav_from_params()

    def report(self) -> str:
        """One line of counts for the test to read."""
        c = self.counts
        gcs = self.links[1] if len(self.links) > 1 else None
        return (f'PX4SITL hil_sensor={c["hil_sensor"]} answers={c["answers"]} '
                f'sim_frames={self.sim_stats.frames} sim_lost={self.sim_stats.lost} '
                f'mav_frames={self.payload.stats.frames} mav_lost={self.payload.stats.lost} '
                f'mission_accepted={self.mm.accepted} requests={self.mm.requests} '
                f'int_mode={int(self.mm.int_mode)} commands={c["commands"]} '
                f'arm_denied={c["arm_denied"]} start_denied={c["start_denied"]} '
                f'ignored_on_sim_link={c["ignored_on_sim_link"]} '
                f'param_sets={c["param_sets"]} param_refused={c["param_refused"]} '
                f'events={c["events"]} event_requests={self.events.requests} '
                f'ftp={c["ftp"]} ftp_reads={self.ftp.reads} statustext={c["statustext"]} '
                f'streams_active={len(self.payload.streams.active())} '
                f'stream_msgs={sum(self.payload.streams.sent.values())} '
                f'forwarded_to_gcs={sum(gcs.forwarded.values()) if gcs else 0} '
                f'mission_valid={int(self.mission_valid)} irlock={c["irlock"]} '
                f'irlock_unused={c["irlock_unused"]} '
                f'irlock_no_dist_bottom={c["irlock_no_dist_bottom"]} '
                f'distance_sensor={c["distance_sensor"]} '
                f'sim_link_closed={c["sim_link_closed"]} sim_send_failed={c["sim_send_failed"]} '
                f'done={int(self.ap.phase == DONE or self.landed)}')


def main(argv=None):
    """Run the peer until the simulator closes the link (or SIGINT); print the report."""
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--sim-port', type=int, default=4560)
    ap.add_argument('--mavlink-port', type=int, default=14280)
    ap.add_argument('--mavlink-remote', type=int, default=14030)
    ap.add_argument('--gcs-port', type=int, default=0, help='GCS link port (18570 + i)')
    ap.add_argument('--gcs-remote', type=int, default=14550)
    ap.add_argument('--sysid', type=int, default=1)
    ap.add_argument('--airframe', choices=('quad', 'plane'), default='quad')
    ap.add_argument('--realtime', action='store_true',
                    help='as PX4 started as root: the simulator link thread under SCHED_FIFO '
                    '99 (normal threads if not permitted, as PX4 falls back)')
    ap.add_argument('--landing-target-estimator', action='store_true',
                    help='as `landing_target_estimator start` (airframe 1011): precision '
                    'landing on LANDING_TARGET')
    ap.add_argument('--step-cost-us', type=float, default=0.0,
                    help="answer each HIL_SENSOR no sooner than this after it came in [µs]: "
                    "a real PX4's time per step (bench_px4 measures it)")
    a = ap.parse_args(argv)
    px4 = Px4Sitl(a.sim_port, a.mavlink_port, a.mavlink_remote, a.sysid, airframe=a.airframe,
                  gcs_port=a.gcs_port, gcs_remote=a.gcs_remote)
    px4.step_cost_s = max(0.0, a.step_cost_us) * 1e-6
    px4.lte = a.landing_target_estimator
    if a.realtime:
        # platforms/posix/src/px4/common/tasks.cpp: SCHED_FIFO, or normal threads on EPERM
        try:
            os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(REALTIME_PRIORITY))
            px4.realtime = True
            print(f'PX4SITL simulator link thread: SCHED_FIFO {REALTIME_PRIORITY} (the FC '
                  'core at normal priority)', flush=True)
        except PermissionError:
            print('PX4SITL simulator link thread: SCHED_FIFO not permitted, normal threads',
                  flush=True)
    for link in px4.links:
        threading.Thread(target=px4.run_link, args=(link,), daemon=True).start()
    try:
        px4.connect()
        print(f'PX4SITL connected to {a.sim_port}', flush=True)
        px4.run_sim_link()
    except KeyboardInterrupt:
        pass
    finally:
        px4.stop.set()
        for line in px4.log + px4.ap.events:
            print(f'PX4SITL says: {line}')
        print(px4.report(), flush=True)
    return 0


if __name__ == '__main__':
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    sys.exit(main())
