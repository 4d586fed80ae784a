"""Simulation clock: fixed step, real-time pacing, pause/step/reset and lockstep (pure, no rclpy).

The clock counts integer nanoseconds. It does not sleep: the owner (the dynamics node's timer)
asks ``due_steps(wall_now)`` how many steps real-time pacing allows now, and ``LockstepGate``
whether the effector command answering the last step has arrived.
"""

from dataclasses import dataclass, field
from enum import IntEnum
from typing import Optional

from sim_core.errors import ConfigError
from sim_core.timeutil import NS_PER_S

MIN_RATE_HZ = 10.0
MAX_RATE_HZ = 1000.0
MIN_TIME_SCALE = 0.1
MAX_TIME_SCALE = 100.0
# How far behind real time the pacer may fall before it stops catching up and re-anchors [steps].
MAX_CATCH_UP_STEPS = 10


class SimState(IntEnum):
    """Simulation states; values match aerosim_msgs/SimStatus."""

    STOPPED = 0
    RUNNING = 1
    PAUSED = 2


def validate_time_scale(time_scale: float) -> float:
    """Return time_scale if valid: 0 (as fast as possible) or in [0.1, 100]."""
    ts = float(time_scale)
    if ts != 0.0 and not MIN_TIME_SCALE <= ts <= MAX_TIME_SCALE:
        raise ConfigError(
            f'time_scale: must be 0 (as fast as possible) or in [{MIN_TIME_SCALE}, '
            f'{MAX_TIME_SCALE}], got {time_scale!r}')
    return ts


def validate_rate(rate_hz: float) -> float:
    """Return the integration rate if in [10, 1000] Hz and a whole number of microseconds."""
    r = float(rate_hz)
    if not MIN_RATE_HZ <= r <= MAX_RATE_HZ:
        raise ConfigError(
            f'rate_hz: must be in [{MIN_RATE_HZ}, {MAX_RATE_HZ}] Hz, got {rate_hz!r}')
    step_us = 1e6 / r
    if abs(step_us - round(step_us)) > 1e-6:
        raise ConfigError(f'rate_hz: step must be a whole number of microseconds, got {rate_hz!r}')
    return r


@dataclass
class SimClock:
    """Fixed-step simulation time with real-time pacing.

    step_ns: integration step [ns]; time_scale: sim seconds per wall second (0 = as fast as
    possible). Wall times passed in are seconds from a monotonic clock.
    """

    step_ns: int
    time_scale: float = 1.0
    t_ns: int = 0
    steps: int = 0
    state: SimState = SimState.RUNNING
    late_steps: int = 0
    _anchor_wall: Optional[float] = field(default=None, repr=False)
    _anchor_steps: int = field(default=0, repr=False)
    _late_mark: int = field(default=0, repr=False)   # steps up to this count already counted late

    @classmethod
    def from_rate(cls, rate_hz: float, time_scale: float = 1.0) -> 'SimClock':
        """Build a clock stepping at rate_hz [Hz]."""
        rate = validate_rate(rate_hz)
        return cls(step_ns=int(round(NS_PER_S / rate)), time_scale=validate_time_scale(time_scale))

    @property
    def dt(self) -> float:
        """Integration step [s]."""
        return self.step_ns / NS_PER_S

    @property
    def t(self) -> float:
        """Simulation time [s]."""
        return self.t_ns / NS_PER_S

    def advance(self) -> int:
        """Count one integrated step; returns the new sim time [ns]."""
        self.t_ns += self.step_ns
        self.steps += 1
        return self.t_ns

    def reanchor(self, wall_now: float) -> None:
        """Restart real-time pacing from now (after pause, time-scale change or lateness)."""
        self._anchor_wall = wall_now
        self._anchor_steps = self.steps

    def set_time_scale(self, time_scale: float, wall_now: float) -> None:
        """Change the pacing; validates and re-anchors."""
        self.time_scale = validate_time_scale(time_scale)
        self.reanchor(wall_now)

    def set_state(self, state: SimState, wall_now: float) -> None:
        """Change RUNNING/PAUSED/STOPPED; pacing re-anchors on resume."""
        self.state = SimState(state)
        self.reanchor(wall_now)

    def reset(self, wall_now: float) -> None:
        """Return to t = 0 (the vehicle models reset separately)."""
        self.t_ns = 0
        self.steps = 0
        self.late_steps = 0
        self._late_mark = 0
        self.reanchor(wall_now)

    def due_steps(self, wall_now: float) -> int:
        """Return how many steps real-time pacing allows at wall_now [s] (0 when not running).

        As-fast-as-possible returns a large batch; the caller bounds its own work per call.
        If pacing fell more than MAX_CATCH_UP_STEPS behind, the missing steps are counted as
        late, pacing re-anchors and the simulation continues slower than real time.
        """
        if self.state != SimState.RUNNING:
            return 0
        if self.time_scale == 0.0:
            return 1 << 30
        if self._anchor_wall is None:
            self.reanchor(wall_now)
        anchor = wall_now if self._anchor_wall is None else self._anchor_wall
        target = self._anchor_steps + int(
            (wall_now - anchor) * self.time_scale * NS_PER_S // self.step_ns)
        behind = target - self.steps
        if behind > 1:
            # steps self.steps+1 .. target-1 start more than a period after their deadline;
            # count each once (a waiting caller, e.g. lockstep, asks again and again)
            last_late = target - 1
            self.late_steps += max(0, last_late - max(self.steps, self._late_mark))
            self._late_mark = max(self._late_mark, last_late)
        if behind > MAX_CATCH_UP_STEPS:
            self._anchor_wall = wall_now
            self._anchor_steps = self.steps
            return 1
        return max(0, behind)

    def wall_until_next(self, wall_now: float) -> float:
        """Wall seconds until the next step is due (0 if due now or not paced)."""
        if self.time_scale == 0.0 or self._anchor_wall is None:
            return 0.0
        next_wall = self._anchor_wall + (
            (self.steps + 1 - self._anchor_steps) * self.step_ns / NS_PER_S / self.time_scale)
        return max(0.0, next_wall - wall_now)


@dataclass
class LockstepGate:
    """Lockstep: step k+1 integrates only after the command answering step k arrived.

    A command answers step k when its stamp equals the stamp of the state published after
    step k. After ``timeout_s`` wall seconds without an answer the gate opens anyway, counts a
    timeout and the step integrates with the last valid command (never a deadlock). After
    ``max_timeouts`` timeouts in a row (0: never) the controller is taken as gone: lockstep
    disengages (the steps free-run, as before a controller answered) until the next answer.
    """

    timeout_s: float = 0.5
    enabled: bool = True
    max_timeouts: int = 0
    timeouts: int = 0
    disengagements: int = 0
    _run: int = field(default=0, repr=False)
    _waiting_for_ns: Optional[int] = field(default=None, repr=False)
    _since_wall: float = field(default=0.0, repr=False)
    _active: bool = field(default=False, repr=False)

    def published(self, t_ns: int, wall_now: float) -> None:
        """Record that the state of sim time t_ns was published and is awaiting an answer."""
        self._waiting_for_ns = t_ns
        self._since_wall = wall_now

    def answered(self, stamp_ns: int) -> bool:
        """Record a command stamped stamp_ns; returns True if it answers the awaited state.

        The first command of any stamp engages lockstep (before it, sensors free-run); from
        then on the next step waits for the answer to the latest published state, and answers
        to older states are ignored.
        """
        if self._waiting_for_ns is not None and stamp_ns == self._waiting_for_ns:
            self._waiting_for_ns = None
            self._active = True
            self._run = 0
            return True
        if not self._active:
            self._run = 0
        self._active = True
        return False

    @property
    def active(self) -> bool:
        """True once a controller has answered a step (lockstep engaged)."""
        return self.enabled and self._active

    @property
    def waiting(self) -> bool:
        """A published state still awaits its answer."""
        return self._waiting_for_ns is not None

    def may_step(self, wall_now: float) -> bool:
        """Return True if the next step may integrate now."""
        if not self.active or self._waiting_for_ns is None:
            return True
        if wall_now - self._since_wall >= self.timeout_s:
            self.timeouts += 1
            self._run += 1
            self._waiting_for_ns = None
            if self.max_timeouts and self._run >= self.max_timeouts:
                self._active = False
                self.disengagements += 1
            return True
        return False

    def reset(self) -> None:
        """Forget the awaited step and disengage until the next answer."""
        self._waiting_for_ns = None
        self._active = False
        self._run = 0


class FleetGate:
    """Lockstep over several controllers: one LockstepGate per member (vehicle).

    Step k+1 integrates when every engaged member has answered step k, or its wait timed out
    (counted for that member). A member whose controller stays silent for ``max_timeouts``
    steps in a row disengages alone: the others keep lockstep and are no longer held up by
    it; its next answer engages it again. With one member this is exactly a LockstepGate.
    """

    def __init__(self, timeout_s: float = 0.5, enabled: bool = True, max_timeouts: int = 0,
                 members: int = 1):
        """members: how many controllers answer each step (one per vehicle)."""
        if members < 1:
            raise ValueError(f'members: at least 1, got {members}')
        self.gates = [LockstepGate(timeout_s=timeout_s, enabled=enabled,
                                   max_timeouts=max_timeouts) for _ in range(members)]
        self._reported = [0] * members      # disengagements of each member already reported

    def published(self, t_ns: int, wall_now: float) -> None:
        """The state of sim time t_ns went out to every member."""
        for g in self.gates:
            g.published(t_ns, wall_now)

    def answered(self, stamp_ns: int, member: int = 0) -> bool:
        """Take member's command stamped stamp_ns; True if the awaited step is fully answered."""
        if not self.gates[member].answered(stamp_ns):
            return False
        return not any(g.active and g.waiting for g in self.gates)

    def may_step(self, wall_now: float) -> bool:
        """True if the next step may integrate now (each member asked: timeouts are counted)."""
        ok = True
        for g in self.gates:          # every member: each counts its own timeouts
            ok = g.may_step(wall_now) and ok
        return ok

    def newly_lost(self) -> list:
        """Members that disengaged since the last call (their controller is taken as gone)."""
        out = []
        for i, g in enumerate(self.gates):
            if g.disengagements != self._reported[i]:
                self._reported[i] = g.disengagements
                out.append(i)
        return out

    @property
    def active(self) -> bool:
        """True while any member is in lockstep."""
        return any(g.active for g in self.gates)

    @property
    def timeouts(self) -> int:
        """Lockstep waits that timed out, all members."""
        return sum(g.timeouts for g in self.gates)

    @property
    def disengagements(self) -> int:
        """Times a member's controller was taken as gone, all members."""
        return sum(g.disengagements for g in self.gates)

    def reset(self) -> None:
        """Forget the awaited step; every member disengages until its next answer."""
        for g in self.gates:
            g.reset()


class ResetDetector:
    """Notices the sim clock going backwards (a sim reset, a rosbag replay looping over).

    Every consumer of a time stream that keeps state across samples (decimators, tracks, a
    sensor suite, a link's frames in flight) must start over when time goes back: feed each
    new time to ``went_back`` and reset when it answers True. Times are any one comparable
    unit (int ns, float s); equal times are not a reset (a paused sim repeats its time).
    """

    def __init__(self, last=None):
        """last: the time already seen (None: nothing yet, the first time is never a reset)."""
        self.last = last
        self.resets = 0         # times went_back answered True

    def went_back(self, t) -> bool:
        """Take the time t of a new sample; True if it is earlier than the last one seen."""
        back = self.last is not None and t < self.last
        if back:
            self.resets += 1
        self.last = t
        return back

    def forget(self) -> None:
        """Forget the last time (the next one is never a reset)."""
        self.last = None
