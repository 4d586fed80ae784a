"""What the MAVLink HIL bridge reports (pure): its peers, the served FC, what the FC waits for.

A mixin of HilBridge (mavlink_bridge.core.bridge): every query takes the bridge's lock, as its
decisions do, since the status is read on the executor while reader threads decide.
"""

import threading
from typing import Any, Dict, Optional, Tuple

from mavlink_bridge.core.mav import mavlink
from mavlink_bridge.core.peers import is_flight_controller

PX4_AUTOPILOT = mavlink.MAV_AUTOPILOT_PX4     # 12


class BridgeQueries:
    """HilBridge's read-only queries (the bridge's attributes: see HilBridge.__init__)."""

    lock: threading.Lock
    sysid: int
    compid: int
    served: Any
    session: Any
    mission: Any
    autostart: Any
    scenario: Any
    mixer: Any

    def endpoints(self) -> list:
        """The links (HilBridge's)."""
        raise NotImplementedError

    def describe(self, sensors: str) -> str:
        """The start-up line: our ids, the served FC, sensors (as given), mission, mixer."""
        se = self.session
        return (f'our id {self.sysid}:{self.compid}, serving FC {self.served.describe()}; '
                f'{sensors}; mission {len(self.mission.items)} items from '
                f'{self.scenario.name}'
                + (' (autostart: arm and start it when the FC is ready)' if self.autostart
                   else '')
                + (f'; FC parameters first: {len(se.params.params)} from {se.params.source}'
                   if se.params else '')
                + f'; {self.mixer.name} mixer: {self.mixer.describe()}')

    # --- status --------------------------------------------------------------------------------
    def peers(self) -> list:
        """The peers of every link, each (sysid, compid) once: the one heard last."""
        seen: Dict[Tuple[int, int], Any] = {}
        with self.lock:
            for ep in self.endpoints():
                for p in ep.peers.active():
                    key = (p.sysid, p.compid)
                    if key not in seen or p.last_seen > seen[key].last_seen:
                        seen[key] = p
        return [seen[k] for k in sorted(seen)]

    def waiting_for(self, now: float) -> str:
        """What keeps the served FC from flying its mission from t = 0, or '' (ready).

        Not heard yet: its FC. PX4 (autopilot 12 in its HEARTBEAT on any link) runs every
        module on the clock our HIL_SENSOR sets (SimulatorMavlink, lockstep): with time held
        at 0 it is silent on its MAVLink links (its HEARTBEAT and mission manager run on that
        clock), so it is ready once heard on the HIL link and any upload of ours went quiet.
        Any other FC: FcSession.waiting_for (its mission accepted, its checks passed).
        """
        with self.lock:
            fc = next((p for ep in self.endpoints() for p in ep.peers.active()
                       if is_flight_controller(p.mav_type, p.autopilot)), None)
            if fc is None:
                return 'its FC to be heard'
            return self.session.waiting_for(now, lockstep=fc.autopilot == PX4_AUTOPILOT)

    def flight_controller(self) -> Optional[Tuple[int, int]]:
        """(sysid, compid) of a flight controller heard on any link, or None."""
        with self.lock:
            return next((ep.peers.flight_controller() for ep in self.endpoints()
                         if ep.peers.flight_controller()), None)
