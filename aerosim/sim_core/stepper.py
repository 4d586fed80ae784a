"""The stepping loop's decisions as one state machine (pure: no rclpy, no threads, no sleep).

A time source (sim_ros.sim_time_node) owns a fixed-step SimClock and a FleetGate; the Stepper
decides what its loop does next. The node hands it wall-clock readings [s, monotonic] and
events, and it answers with a Decision, as data: step now, publish the held state again, wait
until a wall time (then ask again), or nothing until the next timer tick or event. The node
does the waiting, outside its step lock.

States (``Stepper.state``, in the order they are told apart):

    STOPPED   stop_after_s reached or the model diverged. -> RUNNING on reset.
    HELD      the start hold: sim time stays at 0 until the held-for parties are ready, or
              for the hold's timeout (checked every HOLD_CHECK_S). -> RUNNING (or PAUSED)
              when released (Decision RELEASED, with whoever is still missing).
    BLOCKED   backpressure: the middleware refused the last step's state. Its publication is
              retried (PUBLISH) once per batch before anything else; nothing is lost and no
              step integrates until it went out. -> RUNNING (or AWAITING) when published.
    PAUSED    no steps but those asked for (the step service). -> RUNNING on resume.
    AWAITING  lockstep: the published step awaits its answer (every engaged member's). ->
              RUNNING when answered, or after lockstep_timeout_s (a timeout counted; after
              lockstep_max_timeouts in a row the member disengages: Decision LOST).
    RUNNING   pacing decides: STEP while steps are due (time_scale 0: a batch of at most
              MAX_BATCH_WALL_S); in paced lockstep a step due within two periods is waited
              for (WAIT until its wall time, at most MAX_PACED_WALL_S a batch), so the answer
              to step k integrates step k+1 at its deadline, not at the next timer tick.
              Otherwise IDLE.

A batch starts with ``begin(now, trigger)`` (a timer tick, an answer, a call) and lasts
until ``next`` answers IDLE.
"""

from dataclasses import dataclass, field, make_dataclass
from enum import Enum
import functools
from typing import Callable, Dict, Optional, Sequence, Tuple

from sim_core.clock import (
    MAX_RATE_HZ,
    MAX_TIME_SCALE,
    MIN_RATE_HZ,
    MIN_TIME_SCALE,
    FleetGate,
    SimClock,
    SimState,
)
from sim_core.config import Param
from sim_core.realtime import AS_PEER, realtime_table
from sim_core.timeutil import NS_PER_S

# Wall time one batch may spend stepping as fast as possible before it yields [s].
MAX_BATCH_WALL_S = 0.005
# Wall time one batch may spend pacing steps in lockstep before it yields [s].
MAX_PACED_WALL_S = 0.05
# Wall period of the start hold's check of who is still missing [s].
HOLD_CHECK_S = 0.05
# Timer period once lockstep drives the steps [s]: the answers step the simulation, the timer
# only notices timeouts (an executor wake-up costs ~0.5 ms of Python).
LOCKSTEP_POLL_S = 0.05
# Timer period while free-running as fast as possible [s] (each call steps a batch).
FREE_RUN_POLL_S = 1e-4
MAX_STOP_AFTER_S = 1e7


@dataclass(frozen=True)
class SimTimeConfig:
    """Parameters of every time source, read once at start (time_scale also live)."""

    rate_hz: float = 250.0
    time_scale: float = 1.0
    lockstep: bool = False
    lockstep_timeout_s: float = 0.5
    lockstep_max_timeouts: int = 10
    start_paused: bool = False
    stop_after_s: float = 0.0
    world_frame_id: str = 'map'
    body_frame_id: str = 'base_link'
    status_period_s: float = 1.0
    clock_rate_hz: float = 100.0
    odom_rate_hz: float = 50.0
    realtime_priority: int = AS_PEER
    wait_for_readers: int = 0
    readers_timeout_s: float = 30.0


@dataclass(frozen=True)
class ScenarioTimeConfig(SimTimeConfig):
    """A time source that loads a scenario file (every one but the swarm's)."""

    scenario_file: str = 'default'


PARAMETERS = {
    'scenario_file': Param('Scenario YAML (path, or name in config/scenarios)'),
    'rate_hz': Param('Integration rate [Hz], 10..1000 with a step 1e6/rate_hz of a whole '
                     'number of microseconds (e.g. 50, 125, 250, 400, 500, 1000; not 300)',
                     MIN_RATE_HZ, MAX_RATE_HZ),
    'time_scale': Param(f'Sim seconds per wall second [-]: 0 (as fast as possible) or '
                        f'{MIN_TIME_SCALE:g}..{MAX_TIME_SCALE:g}; live (ros2 param set, '
                        f'/sim/set_time_scale)', 0.0, MAX_TIME_SCALE, live=True),
    'lockstep': Param('Wait for the command answering each step before the next'),
    'lockstep_timeout_s': Param('Lockstep wait before continuing without an answer [s]',
                                0.001, 60.0),
    'lockstep_max_timeouts': Param(
        'Lockstep timeouts in a row after which the controller is taken as gone: lockstep '
        'disengages (free-run, as before it answered) until its next answer; 0 = never',
        0, 100000),
    'start_paused': Param('Start in PAUSED state'),
    'stop_after_s': Param('Sim time after which the sim is STOPPED [s]; 0 = never',
                          0.0, MAX_STOP_AFTER_S),
    'world_frame_id': Param('World frame id (ENU)'),
    'body_frame_id': Param('Body frame id (FLU)'),
    'status_period_s': Param('Wall period of /sim/status while running [s]', 0.05, 60.0),
    'clock_rate_hz': Param('/clock rate [Hz] (sim): the time resolution of nodes with '
                           'use_sim_time; 0 = every step', 0.0, MAX_RATE_HZ),
    'odom_rate_hz': Param('odom (nav_msgs/Odometry, for rviz) rate [Hz] (sim); 0 = every step',
                          0.0, MAX_RATE_HZ),
    'realtime_priority': realtime_table()['realtime_priority'],
    'wait_for_readers': Param(
        "Sim time stays at 0 until every vehicle's odom has this many readers [-] "
        '(report:=true sets 1: the judge sees the run from t = 0; as fast as possible a short '
        'flight was over before DDS had matched it), at most readers_timeout_s; 0 = start at '
        'once', 0, 100),
    'readers_timeout_s': Param('Longest such wait [s] (wall); then the clock starts and says so',
                               0.0, 3600.0),
}


@functools.lru_cache(maxsize=None)
def time_config(rate_hz: float = 250.0, scenario: Optional[str] = 'default') -> type:
    """The config class of a time source with these defaults (frozen, a SimTimeConfig).

    rate_hz: rate_hz's default [Hz]; scenario: scenario_file's default (None: the time
    source takes no scenario file, and has no such parameter).
    """
    base = SimTimeConfig if scenario is None else ScenarioTimeConfig
    fields: list = [('rate_hz', float, field(default=float(rate_hz)))]
    if scenario is not None:
        fields.append(('scenario_file', str, field(default=scenario)))
    return make_dataclass(base.__name__, fields, bases=(base,), frozen=True)


def table_for(cls) -> dict:
    """The rows of PARAMETERS naming a field of cls (SimTimeConfig or a subclass)."""
    names = set(cls.__dataclass_fields__)
    return {k: p for k, p in PARAMETERS.items() if k in names}


class StepState(Enum):
    """The stepping loop's states (module docstring: what each means, what leaves it)."""

    STOPPED = 'stopped'
    HELD = 'held'
    BLOCKED = 'blocked'
    PAUSED = 'paused'
    AWAITING = 'awaiting'
    RUNNING = 'running'


class Action(Enum):
    """What the node does on a Decision."""

    STEP = 'step'            # integrate one step, then stepped() and published()/refused()
    PUBLISH = 'publish'      # publish the held step again, then published()/refused()
    WAIT = 'wait'            # sleep until Decision.until_s (outside the lock), ask again
    RELEASED = 'released'    # the start hold ended (log who is missing), ask again
    LOST = 'lost'            # a lockstep member disengaged (log it, re-time), ask again
    IDLE = 'idle'            # nothing until the next timer tick or event


@dataclass(frozen=True)
class Decision:
    """The Stepper's answer: an action and what it needs."""

    action: Action
    until_s: float = 0.0                 # WAIT: wall time to wait until [s]
    missing: Tuple[str, ...] = ()        # RELEASED: parties still missing (started without)
    waited_s: float = 0.0                # RELEASED: wall time held [s]


IDLE = Decision(Action.IDLE)


@dataclass
class _Hold:
    missing: Callable[[], Sequence[str]]
    timeout_s: float
    since_s: float
    next_check_s: float = 0.0


@dataclass
class Batch:
    """One run of the loop (a timer tick, an answer, a call): its budget and progress."""

    trigger: str                 # its cause, for steps_by
    t_end: float                 # wall time after which it yields [s]
    due: Optional[int] = None    # steps pacing allows (counted when first needed)
    refused: bool = False        # a publication was refused in it: retried by the next


class Stepper:
    """The stepping loop of a time source: clock, lockstep gate, backpressure, start hold.

    Counts the steps and batches of each trigger (``steps_by``, ``batches_by``): who drives
    the simulation (the answers in lockstep, the timer otherwise).
    """

    def __init__(self, clock: SimClock, gate: FleetGate, stop_after_s: float = 0.0):
        """clock, gate: the node's; stop_after_s: sim time at which to stop [s] (0: never)."""
        self.clock = clock
        self.gate = gate
        self.stop_after_ns = int(stop_after_s * NS_PER_S)
        self.unpublished = False        # the last step's state has not gone out yet
        self.steps_by: Dict[str, int] = {}
        self.batches_by: Dict[str, int] = {}
        self._hold: Optional[_Hold] = None
        self._batch = Batch('', 0.0)     # the batch acting now
        self._pacer: Optional[Batch] = None     # the batch waiting for a paced step
        self._pacer_until = 0.0

    @property
    def fast(self) -> bool:
        """As fast as possible (time_scale 0)."""
        return self.clock.time_scale == 0.0

    @property
    def state(self) -> StepState:
        """The current state (module docstring)."""
        run = self.clock.state
        if run == SimState.STOPPED:
            return StepState.STOPPED
        if self._hold is not None:
            return StepState.HELD
        if self.unpublished:
            return StepState.BLOCKED
        if run == SimState.PAUSED:
            return StepState.PAUSED
        if any(g.active and g.waiting for g in self.gate.gates):
            return StepState.AWAITING
        return StepState.RUNNING

    # --- events --------------------------------------------------------------------------------
    def hold(self, missing: Callable[[], Sequence[str]], timeout_s: float, now: float) -> None:
        """Hold sim time at 0 while missing() names anyone, at most timeout_s [s] from now."""
        self._hold = _Hold(missing, timeout_s, now)

    def begin(self, now: float, trigger: str = 'timer') -> Batch:
        """Start a batch at wall time now [s]; trigger names its cause (steps_by)."""
        self.batches_by[trigger] = self.batches_by.get(trigger, 0) + 1
        self._batch = Batch(trigger, now + (MAX_BATCH_WALL_S if self.fast else MAX_PACED_WALL_S))
        return self._batch

    def stepped(self) -> None:
        """The node integrated the step STEP asked for: count it (its state is unpublished)."""
        self.clock.advance()
        b = self._batch
        self.steps_by[b.trigger] = self.steps_by.get(b.trigger, 0) + 1
        if b.due is not None:
            b.due -= 1
        self.unpublished = True

    def published(self) -> None:
        """The last step's state went out."""
        self.unpublished = False

    def refused(self) -> None:
        """The middleware refused the last step's state: held, retried in the next batch."""
        self._batch.refused = True

    def stop_due(self, now: float) -> bool:
        """Stop (True) if sim time reached stop_after_s; call after each step."""
        if self.stop_after_ns > 0 and self.clock.t_ns >= self.stop_after_ns:
            self.clock.set_state(SimState.STOPPED, now)
            return True
        return False

    def stop(self, now: float) -> None:
        """Stop for good (the model diverged); reset starts again."""
        self.clock.set_state(SimState.STOPPED, now)

    def pause(self, paused: bool, now: float) -> bool:
        """Pause or resume; False (nothing changes) once stopped."""
        if self.clock.state == SimState.STOPPED:
            return False
        self.clock.set_state(SimState.PAUSED if paused else SimState.RUNNING, now)
        return True

    def reset(self, now: float) -> None:
        """Back to t = 0, running if it had stopped; lockstep disengaged until an answer."""
        self.clock.reset(now)
        if self.clock.state == SimState.STOPPED:
            self.clock.set_state(SimState.RUNNING, now)
        self.gate.reset()

    def answered(self, stamp_ns: int, member: int = 0) -> bool:
        """Member's command answering the state of stamp_ns [ns]; True: the step is answered."""
        return self.gate.answered(stamp_ns, member)

    def poll_period_s(self) -> float:
        """Wall period of the node's stepping timer [s].

        LOCKSTEP_POLL_S once lockstep is engaged (the answers drive the steps); before, one
        step when paced (at least FREE_RUN_POLL_S: due steps are batched), FREE_RUN_POLL_S as
        fast as possible.
        """
        if self.gate.active:
            return LOCKSTEP_POLL_S
        ts = self.clock.time_scale
        return FREE_RUN_POLL_S if ts == 0.0 else max(self.clock.dt / ts, FREE_RUN_POLL_S)

    # --- the transition function ---------------------------------------------------------------
    def next(self, now: float, batch: Optional[Batch] = None) -> Decision:
        """What batch (default: the last begun) does at wall time now [s].

        One batch at a time waits for a paced step (WAIT): the others leave that step to it
        (IDLE), so a timer tick does not take the step an answer's batch waits for.
        """
        b = self._batch = batch or self._batch
        if self._pacer is b:
            self._pacer = None
        state = self.state
        if state is StepState.HELD:
            return self._check_hold(now)
        if state is StepState.BLOCKED:
            return IDLE if b.refused else Decision(Action.PUBLISH)
        if state in (StepState.PAUSED, StepState.STOPPED):
            return IDLE
        lost = self.gate.disengagements
        if not self.gate.may_step(now):
            return IDLE                                  # AWAITING: the answer steps
        if self.gate.disengagements != lost:
            return Decision(Action.LOST)
        if self.fast:
            return Decision(Action.STEP) if now <= b.t_end else IDLE
        if self._pacer is not None and now < self._pacer_until + MAX_PACED_WALL_S:
            return IDLE                                  # another batch waits for this step
        if b.due is None:
            b.due = self.clock.due_steps(now)
        if b.due > 0:
            return Decision(Action.STEP)
        if not self.gate.active or now > b.t_end:
            return IDLE
        wait = self.clock.wall_until_next(now)
        if wait > 2.0 * self.clock.dt / self.clock.time_scale:
            return IDLE
        b.due = None                                     # counted again when asked again
        self._pacer, self._pacer_until = b, now + wait
        return Decision(Action.WAIT, until_s=now + wait)

    def _check_hold(self, now: float) -> Decision:
        h = self._hold
        assert h is not None           # HELD
        if now < h.next_check_s:
            return IDLE
        missing = tuple(h.missing())
        if missing and now - h.since_s < h.timeout_s:
            h.next_check_s = now + HOLD_CHECK_S
            return IDLE
        self._hold = None
        return Decision(Action.RELEASED, missing=missing, waited_s=now - h.since_s)
