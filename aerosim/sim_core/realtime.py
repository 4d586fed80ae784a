"""Real-time scheduling for the threads that close a HIL loop (Linux SCHED_FIFO; no rclpy).

On a loaded machine the loop's threads wait behind other processes for their time slice, and
steps run late. Under SCHED_FIFO they run as soon as their socket or pacing deadline wakes
them (other processes keep what the loop leaves, and the kernel's RT throttling at least 5 %).
Only threads that block on every step get it: a FIFO thread that never blocks (stepping as fast
as possible) would take its core.
"""

import os
import threading

MAX_PRIORITY = 99
HOW_TO_PERMIT = ('needs CAP_SYS_NICE (root; docker --cap-add=SYS_NICE; setcap cap_sys_nice) '
                 'or an rtprio limit (ulimit -r, /etc/security/limits.conf)')


def set_thread_priority(priority: int) -> str:
    """Run the calling thread under SCHED_FIFO at priority 1..99, or normally (0).

    Returns '' if done, else why not (the thread keeps its scheduling).
    """
    if not 0 <= priority <= MAX_PRIORITY:
        return f'priority must be in [0, {MAX_PRIORITY}], got {priority}'
    if not hasattr(os, 'sched_setscheduler'):
        return 'SCHED_FIFO is not available on this system'
    policy = os.SCHED_FIFO if priority > 0 else os.SCHED_OTHER
    try:
        os.sched_setscheduler(0, policy, os.sched_param(priority))   # 0: the calling thread
    except PermissionError:
        return f'SCHED_FIFO {priority} not permitted: {HOW_TO_PERMIT}'
    except OSError as exc:
        return f'SCHED_FIFO {priority} refused: {exc}'
    return ''


def thread_priority() -> int:
    """SCHED_FIFO priority of the calling thread (0: normal scheduling)."""
    if os.sched_getscheduler(0) != os.SCHED_FIFO:
        return 0
    return os.sched_getparam(0).sched_priority


def fifo_permitted() -> str:
    """'' if this process may use SCHED_FIFO, else why not (probed on a throwaway thread)."""
    why = []
    t = threading.Thread(target=lambda: why.append(set_thread_priority(1)))
    t.start()
    t.join()
    return why[0]
