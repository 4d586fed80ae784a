"""The controls of a time source (sim_ros.sim_time_node.SimTimeNode), as a mixin.

What the /sim/* services and a composition (sim_ros.plant.Plant) call: pause, step, reset,
the time scale, the start hold; and what the node says when the hold ends or a lockstep
controller is lost. Every control runs ``serialized``: under the node's step lock.
"""

import functools
from typing import Tuple

from rclpy.parameter import Parameter

from sim_core.clock import FleetGate, SimState
from sim_core.timeutil import NS_PER_S
from sim_ros.params import apply_realtime

MAX_STEP_REQUEST = 1_000_000
DIVERGED = 'stopped, the model diverged: '


def serialized(method):
    """Run a SimTimeNode method under the node's step lock (executor and other threads).

    An answer that completed the awaited lockstep step (``_answered``) drives the next
    step(s) once the lock is released: a paced step is waited for outside the lock.
    """
    @functools.wraps(method)
    def locked(self, *args):
        with self._step_lock:
            self._depth += 1
            try:
                result = method(self, *args)
            finally:
                self._depth -= 1
            kick = self._kick and not self._depth
        if kick:
            self._drive('answer')
        return result
    return locked


class TimeControls:
    """Pause, step, reset, time scale, the start hold and the fleet of a SimTimeNode."""

    def _set_members(self, n: int) -> None:
        """Set the number of vehicles, each answered by its own controller (before _start_time)."""
        self.stepper.gate = self._new_gate(n)

    def add_state_listener(self, fn, member: int = 0) -> None:
        """Call fn(state_arrays(member)) after every step (composition, same process).

        Part of sim_ros.plant.Plant, with hold_start and a subclass's plant_members.
        """
        self.state_listeners.append((member, fn))

    def _new_gate(self, members: int = 1) -> FleetGate:
        cfg = self.cfg
        return FleetGate(timeout_s=cfg.lockstep_timeout_s, enabled=cfg.lockstep,
                         max_timeouts=cfg.lockstep_max_timeouts, members=members)

    def _reject(self, what: str, why: str):
        """Count and log (rate-limited) a rejected input."""
        self.rejected += 1
        self.get_logger().warn(f'{what} rejected ({self.rejected} so far): {why}',
                               throttle_duration_sec=1.0)

    def hold_start(self, missing, timeout_s: float) -> None:
        """Keep sim time at 0 until every vehicle's controller is ready, or for timeout_s.

        missing(): the vehicles whose controller is not heard yet, or still takes its mission
        (hil_plant). After timeout_s wall seconds the clock starts without them (logged);
        they join when theirs answers. A fleet's vehicles start together, as Gazebo waits for
        each PX4 instance to connect: a controller whose process starts late would otherwise
        begin its mission many sim seconds after the others, and their paths would cross at
        other times than planned.
        """
        if self.wait_for_readers > 0:            # and for the readers of odom
            fn = missing

            def missing():
                return self._readers_missing() + list(fn())
            timeout_s = max(timeout_s, self.readers_timeout_s)
        self._hold(missing, timeout_s, "every vehicle's controller")

    def _hold(self, missing, timeout_s: float, what: str) -> None:
        self.stepper.hold(missing, timeout_s, self._now())
        self._hold_what, self._hold_timeout_s = what, timeout_s
        self._message = f'waiting for {what}'

    def _readers_missing(self) -> list:
        """The odom topics with fewer than wait_for_readers readers (hold_start)."""
        return [f'readers of {p.topic_name}' for p in self.publishers
                if p.topic_name.endswith('/odom')
                and p.get_subscription_count() < self.wait_for_readers]

    def member_name(self, member: int) -> str:
        """The vehicle of a lockstep member, for log lines."""
        return self.get_namespace()

    def describe_time(self) -> str:
        """'250 Hz, time scale 1x, lockstep off' for the start-up log line."""
        cfg = self.cfg
        ts = 'as fast as possible' if cfg.time_scale == 0 else f'{cfg.time_scale:g}x'
        return f'{cfg.rate_hz:g} Hz, time scale {ts}, lockstep {"on" if cfg.lockstep else "off"}'

    def _released(self, missing, waited_s: float) -> None:
        """The start hold ended: say so (and who is missing)."""
        log = self.get_logger()
        if missing:
            log.warning(f'starting without {", ".join(missing)}: not ready within '
                        f'{self._hold_timeout_s:g} s; they join when theirs answers')
            self._message = f'started without {", ".join(missing)}'
        elif self._hold_what == 'the readers of odom':
            log.info(f'odom has its reader(s) after {waited_s:.1f} s: the clock starts')
            self._message = 'odom read: started'
        else:
            log.info(f"every vehicle's controller heard after {waited_s:.1f} s and ready to "
                     'fly its mission: the clock starts')
            self._message = 'every controller heard: started'
        self._publish_status()

    def _lockstep_lost(self):
        """No answer in lockstep_max_timeouts steps in a row: free-run until it answers.

        In a fleet only that vehicle's controller is given up: the others keep lockstep.
        """
        n, gate, t = self.cfg.lockstep_max_timeouts, self.gate, self.clock.t
        for member in gate.newly_lost():
            if len(gate.gates) == 1:
                self.get_logger().warning(
                    f'lockstep disengaged at t = {t:.3f} s: no answer in {n} steps in a row '
                    f'({gate.timeouts} timeouts in all); the simulation free-runs until the '
                    'controller answers again')
                self._message = 'lockstep disengaged: controller silent'
            else:
                who = self.member_name(member)
                self.get_logger().warning(
                    f'{who}: its controller is silent (no answer in {n} steps in a row, at t = '
                    f'{t:.3f} s): lockstep no longer waits for it'
                    + (', the other vehicles keep lockstep' if gate.active else
                       '; no controller answers: the simulation free-runs')
                    + '; it is waited for again when it answers')
                self._message = f'lockstep: {who} silent'
        self._replace_timer()

    @serialized
    def pause(self, paused: bool) -> Tuple[bool, str]:
        """Pause or resume: (success, message); refused once stopped."""
        if not self.stepper.pause(paused, self._now()):
            return False, 'simulation is stopped'
        self._message = 'paused' if paused else 'resumed'
        self.get_logger().info(f'{self._message} at t = {self.clock.t:.3f} s')
        self._publish_status()
        return True, self._message

    @serialized
    def step(self, steps: int) -> Tuple[bool, str]:
        """Integrate steps steps of a paused simulation: (success, message)."""
        if self.clock.state != SimState.PAUSED:
            return False, 'step needs a paused simulation'
        if not 1 <= steps <= MAX_STEP_REQUEST:
            return False, f'steps must be in [1, {MAX_STEP_REQUEST}]'
        self.stepper.begin(self._now(), 'service')
        for _ in range(steps):
            self._step_once()
            if self.clock.state == SimState.STOPPED:
                break               # stop_after_s, or the model diverged
        ok = not self._message.startswith(DIVERGED)
        if ok:
            self._message = f'stepped {steps}'
        self._publish_status()
        return ok, self._message

    @serialized
    def reset(self) -> Tuple[bool, str]:
        """Back to t = 0 and the initial vehicle state; lockstep disengaged: (True, message)."""
        self.stepper.reset(self._now())
        self._replace_timer()
        self._reset_model()
        for dec in (self._odom, self._clock_dec):
            if dec is not None:
                dec.reset()
        self._message = 'reset'
        self.get_logger().info('reset to t = 0 and the initial vehicle state')
        self._publish_step()
        self._publish_status()
        return True, self._message

    def set_time_scale(self, time_scale: float):
        """Set the time_scale parameter (applied by apply_time_scale): (ok, message).

        The one way the time scale changes (the service, an init of the swarm, `ros2 param
        set`), so the parameter always says the scale in force.
        """
        r = self.set_parameters([Parameter('time_scale', Parameter.Type.DOUBLE,
                                           float(time_scale))])[0]
        return r.successful, (self._message if r.successful else r.reason)

    @serialized
    def apply_time_scale(self, ts: float) -> None:
        """Pace at ts (validated) from now: the clock, the stepping timer, the thread priority.

        Called by the time_scale parameter's callback, from the thread that spins the node;
        before _start_time() only the clock changes.
        """
        self.clock.set_time_scale(ts, self._now())
        self._message = f'time scale {ts:g}'
        if self._timer is not None:
            self._replace_timer()
            self._pacing_priority()
            self.get_logger().info(f'time scale {ts:g}' if ts else
                                   'time scale 0: as fast as possible')
            self._publish_status()

    def _pacing_priority(self):
        """realtime_priority for the executor thread while paced; normal as fast as possible.

        As fast as possible the stepping never blocks: under SCHED_FIFO it would take its core.
        """
        want = max(0, self.cfg.realtime_priority) if self.clock.time_scale > 0.0 else 0
        if want != self._rt_applied and apply_realtime(self, want, 'stepping thread'):
            self._rt_applied = want

    def _replace_timer(self):
        """Re-time the stepping timer to the Stepper's poll period (if it changed)."""
        period = self.stepper.poll_period_s()
        if self._timer is None or self._timer.timer_period_ns == int(period * NS_PER_S):
            return
        self._timer.cancel()
        self.destroy_timer(self._timer)
        self._timer = self.create_timer(period, lambda: self._drive('timer'), clock=self._wall)
