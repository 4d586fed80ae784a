"""Who is on the MAVLink link: heartbeats seen per (system id, component id) (pure)."""

from dataclasses import dataclass
from typing import Dict, List, Optional, Tuple

from mavlink_bridge.core.mav import mavlink

WALL_BUDGET_S = 30.0    # wall-time silence that is a loss whatever the sim time says [s]

# Heartbeat types that are never the flight controller of the vehicle.
NOT_FC_TYPES = (mavlink.MAV_TYPE_GCS, mavlink.MAV_TYPE_ONBOARD_CONTROLLER)


def is_flight_controller(mav_type: int, autopilot: int) -> bool:
    """True for a heartbeat of an autopilot (not a GCS, companion or the simulator itself)."""
    return autopilot != mavlink.MAV_AUTOPILOT_INVALID and mav_type not in NOT_FC_TYPES


@dataclass
class Peer:
    """A system/component that sent a HEARTBEAT. last_seen: wall time [s] (monotonic)."""

    sysid: int
    compid: int
    mav_type: int
    autopilot: int
    system_status: int
    address: str
    first_seen: float
    last_seen: float
    heartbeats: int = 1
    last_seen_sim: float = 0.0      # sim time [s] of the last message


class PeerTable:
    """Tracks heartbeats; a peer silent for timeout_s, of wall and of sim time, is dropped.

    Both clocks: a lockstep FC lives on the simulation clock (PX4 sends its HEARTBEAT at 1 Hz
    of its time), so at a real-time factor below 1/timeout_s its wall-time silence proves
    nothing; a stalled simulation proves nothing of sim time either. A silence of
    WALL_BUDGET_S of wall time (at least 10 x timeout_s) is a loss whatever the simulation
    does: a simulation held by lockstep waiting for the silent FC itself stalls its clock; no
    loaded machine runs a lockstep simulation 30 times slower than real time.
    """

    def __init__(self, timeout_s: float = 3.0):
        """timeout_s: silence after which a peer is no longer active [s]."""
        self.timeout_s = timeout_s
        self.peers: Dict[Tuple[int, int], Peer] = {}

    def heartbeat(self, msg, address: str, now: float, sim_s: float = 0.0) -> bool:
        """Record a HEARTBEAT (wall now, sim_s [s]); True if the peer is new (or came back)."""
        key = (msg.get_srcSystem(), msg.get_srcComponent())
        p = self.peers.get(key)
        if p is None:
            self.peers[key] = Peer(key[0], key[1], msg.type, msg.autopilot, msg.system_status,
                                   address, now, now, last_seen_sim=sim_s)
            return True
        p.mav_type, p.autopilot, p.system_status = msg.type, msg.autopilot, msg.system_status
        p.address, p.last_seen, p.last_seen_sim = address, now, sim_s
        p.heartbeats += 1
        return False

    def seen(self, sysid: int, compid: int, now: float, sim_s: float = 0.0) -> bool:
        """Count any message of a known peer as proof of life; True if the peer is known.

        PX4 sends one HEARTBEAT on its simulator link, then only HIL traffic.
        """
        p = self.peers.get((sysid, compid))
        if p is not None:
            p.last_seen, p.last_seen_sim = now, sim_s
        return p is not None

    def touch_all(self, now: float) -> None:
        """Count every peer as heard now (the simulation resumes: a lockstep FC was frozen)."""
        for p in self.peers.values():
            p.last_seen = now

    def expire(self, now: float, sim_s: float = float('inf')) -> List[Peer]:
        """Drop and return the peers silent for longer than the timeout, wall and sim time."""
        budget = max(WALL_BUDGET_S, 10.0 * self.timeout_s)
        gone = [p for p in self.peers.values() if now - p.last_seen > budget or (
            now - p.last_seen > self.timeout_s and sim_s - p.last_seen_sim > self.timeout_s)]
        for p in gone:
            del self.peers[(p.sysid, p.compid)]
        return gone

    def flight_controller(self):
        """(sysid, compid) of the first active flight controller, or None."""
        for p in self.active():
            if is_flight_controller(p.mav_type, p.autopilot):
                return p.sysid, p.compid
        return None

    def active(self) -> List[Peer]:
        """The active peers, sorted by (sysid, compid)."""
        return [self.peers[k] for k in sorted(self.peers)]


class ServedFc:
    """The flight controller a link serves: the only sender whose actuator outputs are taken.

    Configured by (sysid, compid), 0 = any; the first matching flight controller heard (its
    HEARTBEAT, or its first actuator message) fixes the ids that stay 'any'.
    """

    def __init__(self, sysid: int, compid: int):
        """sysid, compid: the FC's ids (0 = any, learned from the first FC heard)."""
        self.want = (sysid, compid)
        self.ids: Optional[Tuple[int, int]] = None

    def matches(self, sysid: int, compid: int) -> bool:
        """True if (sysid, compid) is the served FC (or may be, before it was heard)."""
        if self.ids is not None:
            return (sysid, compid) == self.ids
        return self.want[0] in (0, sysid) and self.want[1] in (0, compid)

    def exactly(self, sysid: int, compid: int) -> bool:
        """True if (sysid, compid) are the served FC's ids: as heard, or both configured."""
        if self.ids is not None:
            return (sysid, compid) == self.ids
        return 0 not in self.want and (sysid, compid) == self.want

    def learn(self, sysid: int, compid: int) -> bool:
        """Fix the ids on the first matching FC; True if they were learned now."""
        if self.ids is None and self.matches(sysid, compid):
            self.ids = (sysid, compid)
            return True
        return False

    def target(self):
        """(sysid, compid) to address the FC with (the configured ids until it was heard)."""
        return self.ids or self.want

    def describe(self) -> str:
        """'1:1', or '1:any (not heard yet)'."""
        if self.ids:
            return f'{self.ids[0]}:{self.ids[1]}'
        return ':'.join(str(x) if x else 'any' for x in self.want) + ' (not heard yet)'
