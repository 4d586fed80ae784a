"""The MAVLink bridge's second link (the mission link) and its reader threads' scheduling.

realtime_priority -1: the reader threads run as the FC's process runs. A FC on this machine
with real-time threads (PX4 SITL started as root: SCHED_FIFO up to 99) preempts a normal
thread on every step; at its priority it does not (sim_core.realtime). The HIL link's reader
follows the FC's process when the FC's address changes; the mission link's reader then takes
the same priority.
"""

from mavlink_bridge.core.endpoint import Endpoint
from sim_core import realtime as rt
from sim_core.link import UdpLink, is_loopback, parse_endpoint


def mission_endpoint(cfg, allow, refused, log) -> Endpoint:
    """The mission link (cfg.mission_link, from cfg.mission_bind), filtered by allow.

    refused(addr): the node's count of input refused by allow; ValueError/OSError if
    misconfigured; a warning when it listens beyond loopback and takes input from anyone.
    """
    remote = parse_endpoint(cfg.mission_link, 'mission_link')
    local = parse_endpoint(cfg.mission_bind, 'mission_bind') if cfg.mission_bind else \
        ('127.0.0.1' if is_loopback(remote[0]) else '0.0.0.0', 0)
    if not is_loopback(local[0]) and not allow:
        log.warning(f'mission link listening on {local[0]} and taking input from any peer: set '
                    'allow_peers to the addresses that may command the simulation')
    return Endpoint(UdpLink(local, remote, allow, refused), cfg.system_id, cfg.component_id,
                    'mission link', cfg.peer_timeout_s)


class FcFollower:
    """The reader threads' scheduling, following the FC's process (called on those threads)."""

    def __init__(self, log, hil_udp: bool):
        """log: the node's logger; hil_udp: the HIL link is UDP (else TCP)."""
        self.log, self.proto = log, 'udp' if hil_udp else 'tcp'
        self.peer = None            # the FC address last followed
        self.prio = None            # the priority that gave the receive thread

    def follow_fc(self, peer) -> None:
        """Run the calling (HIL receive) thread as the FC's process at peer runs."""
        self.peer = peer
        pid, prio = rt.peer_fifo_priority(peer, self.proto)
        log = self.log
        where = f'{peer[0]}:{peer[1]}'
        if pid is None:
            if is_loopback(peer[0]):
                log.info(f'the FC at {where}: its process is not visible from here (another '
                         'user or container): the MAVLink receive thread keeps its scheduling '
                         '(realtime_priority sets one)')
            return
        fc = f'{rt.process_name(pid)}, pid {pid}'
        if prio == rt.thread_priority():
            self.prio = prio
            log.info(f"the FC's process ({fc}) runs "
                     + (f'real-time threads up to SCHED_FIFO {prio}: so does' if prio else
                        'normal threads: so does') + ' the MAVLink receive thread')
            return
        why = rt.set_thread_priority(prio)
        if not why:
            self.prio = prio
            log.info('MAVLink receive thread: ' + (
                f"SCHED_FIFO priority {prio}, as the FC's process ({fc}): its real-time "
                'threads would preempt a normal one on every step' if prio else
                f"normal scheduling, as the FC's process ({fc})"))
        else:
            log.warning(
                f"the FC's process ({fc}) runs real-time threads (SCHED_FIFO {prio}) and the "
                f'MAVLink receive thread may not ({why}): they preempt it on every step and '
                'the lockstep runs at about half its speed; give both the same rights (both '
                'as root, or neither)')

    def mission_thread_follows(self, prio: int) -> None:
        """The mission link's reader (the calling thread) takes the receive thread's priority.

        PX4 times its mission transfer on its own clock (a request again every 250 ms, the
        transfer given up after 5 s without an answer: 0.3 s of wall time at RTF 15); a normal
        thread answering it could wait behind the real-time threads of PX4 and ours.
        """
        why = rt.set_thread_priority(prio)
        if why:
            self.log.warning(f'MAVLink mission link thread: keeps its scheduling ({why})')
        elif prio:
            self.log.info(f'MAVLink mission link thread: SCHED_FIFO priority {prio} '
                          'too: the FC times its mission transfer on its clock')
