"""SimTimeNode: the time source of a graph (base of dynamics_node, usv_node and the others).

Owns simulation time: a fixed step paced against the steady wall clock with a time scale (0 =
as fast as possible), optional lockstep (each step waits for the command answering the last),
pause/step/reset/time-scale services, /clock at a decimated rate and the latched /sim/status
(sim_ros.sim_time_services). What the loop does next is sim_core.stepper.Stepper's decision;
this node integrates, publishes and waits, never while holding its step lock.
A subclass owns a model and supplies four hooks: ``_integrate(dt)`` (advance the model by one
step), ``_publish_state(stamp)`` (its state topics), ``_reset_model()`` and
``state_arrays(member)`` (what in-process listeners of a vehicle receive). A time source of
several vehicles (a fleet) calls ``_set_members(n)``: lockstep then waits for each vehicle's
controller (``FleetGate``). It always runs on the wall clock, never with use_sim_time.
"""

import threading
import time

from rclpy.clock import Clock, ClockType
from rclpy.impl.implementation_singleton import rclpy_implementation as _rclpy
from rclpy.node import Node
from rosgraph_msgs.msg import Clock as ClockMsg

from sim_core.clock import SimClock, SimState
from sim_core.decimator import Decimator
from sim_core.errors import ConfigError, ModelDiverged
from sim_core.stepper import Action, Stepper, table_for, time_config
from sim_ros import qos, sim_time_services
from sim_ros.convert import time_msg
from sim_ros.params import read_config
from sim_ros.sim_time_controls import DIVERGED, TimeControls, serialized

RCLError = _rclpy.RCLError
__all__ = ['SimTimeNode', 'serialized']


class SimTimeNode(TimeControls, Node):
    """Fixed-step simulation clock with pacing, lockstep, services and status."""

    # sim_ros.plant.Plant: one vehicle in the node's namespace unless a subclass says a fleet
    fleet = False
    fleet_start_timeout_s = 0.0

    def __init__(self, name: str, default_rate_hz: float = 250.0, scenario='default',
                 **node_kw):
        """Read the time-source parameters (scenario: scenario_file's default; None: none).

        node_kw: passed to rclpy's Node (context=, parameter_overrides=, ...). The subclass
        then builds its model and interfaces and calls ``_start_time()``.
        """
        super().__init__(name, **node_kw)
        cls = time_config(default_rate_hz, scenario)
        self.cfg = cfg = read_config(self, cls, table_for(cls))
        if self.get_parameter('use_sim_time').value:
            raise ConfigError(f'use_sim_time: must be false for {name}, the time source')
        self.wait_for_readers, self.readers_timeout_s = cfg.wait_for_readers, cfg.readers_timeout_s
        self.stepper = Stepper(SimClock.from_rate(cfg.rate_hz, cfg.time_scale), self._new_gate(),
                               cfg.stop_after_s)
        self._wall = Clock(clock_type=ClockType.STEADY_TIME)
        self.rejected = 0
        self.publish_retries = 0
        self._message = 'started'
        self._direct = False
        self.state_listeners = []      # (member, fn): fn(state_arrays(member)) every step
        self._step_lock = threading.RLock()
        self._depth = 0                # this thread's nesting under the step lock
        self._kick = False             # an answer completed the awaited step: drive
        self._odom = Decimator(cfg.odom_rate_hz) if cfg.odom_rate_hz > 0.0 else None
        self._clock_dec = Decimator(cfg.clock_rate_hz) if cfg.clock_rate_hz > 0.0 else None
        if cfg.start_paused:
            self.clock.state = SimState.PAUSED
        self.pub_clock = self.create_publisher(ClockMsg, '/clock', qos.CLOCK)
        self.status = sim_time_services.StatusPublisher(self, self._now())
        self.add_on_set_parameters_callback(sim_time_services.time_scale_parameter(self))
        self.add_on_set_parameters_callback(sim_time_services.refuse_sim_time(self))
        self._msg_clock = ClockMsg()
        self._timer = None
        self._rt_applied = 0            # SCHED_FIFO priority given to the executor thread
        self._hold_what, self._hold_timeout_s = '', 0.0
        if self.wait_for_readers > 0:
            self._hold(self._readers_missing, self.readers_timeout_s, 'the readers of odom')

    clock = property(lambda self: self.stepper.clock, doc='The SimClock (sim time, state).')
    gate = property(lambda self: self.stepper.gate, doc='The lockstep FleetGate.')
    message = property(lambda self: self._message, doc='The last status message.')
    step_lock = property(lambda self: self._step_lock,
                         doc='The lock stepping holds (a re-entrant lock): take it to touch '
                             'the model from another callback.')

    def _start_time(self):
        """Serve /sim/*, start the stepping and status timers, publish the initial state."""
        sim_time_services.serve(self)
        self._timer = self.create_timer(self.stepper.poll_period_s(),
                                        lambda: self._drive('timer'), clock=self._wall)
        self._status_timer = self.create_timer(self.cfg.status_period_s, self._publish_status,
                                               clock=self._wall)
        self._pacing_priority()
        self._publish_step()
        self._publish_status()

    # --- hooks (subclass) ---------------------------------------------------------------------
    def _integrate(self, dt: float) -> None:
        raise NotImplementedError

    def _publish_state(self, stamp) -> None:
        raise NotImplementedError

    def _reset_model(self) -> None:
        raise NotImplementedError

    def state_arrays(self, member: int = 0):
        """The state of vehicle member at the current step, handed to its state listeners."""
        raise NotImplementedError

    # --- time ----------------------------------------------------------------------------------
    def _now(self) -> float:
        return time.monotonic()

    def advance(self) -> None:
        """Integrate the steps that pacing and lockstep allow now (what the timer does)."""
        self._drive('call')

    def _drive(self, trigger: str) -> None:
        """Run one batch of the Stepper's decisions; its waits sleep outside the step lock.

        Returns at once when this thread already steps or serves under the lock (an answer
        from a state listener, within the step): the outer batch continues.
        """
        batch = None
        while True:
            with self._step_lock:
                if self._depth:
                    return
                self._depth = 1
                try:
                    now = self._now()
                    batch = batch or self.stepper.begin(now, trigger)
                    self._kick = False
                    decision = self._run(now, batch)
                finally:
                    self._depth = 0
            if decision.action is not Action.WAIT:
                return
            time.sleep(max(0.0, decision.until_s - self._now()))

    def _run(self, now: float, batch):
        """Act on the Stepper's decisions for batch until it says wait or idle (lock held)."""
        st = self.stepper
        while True:
            d = st.next(now, batch)
            if d.action is Action.STEP:
                self._step_once()
            elif d.action is Action.PUBLISH:
                self._publish_pending()
            elif d.action is Action.RELEASED:
                self._released(d.missing, d.waited_s)
            elif d.action is Action.LOST:
                self._lockstep_lost()
            else:
                return d
            now = self._now()

    @property
    def _answers_direct(self) -> bool:
        """Lockstep answers come by a direct call from a listener of this process.

        The awaited step is then armed when the listener gets the state, before the topics
        are published; otherwise when the state was published.
        """
        return self._direct and bool(self.state_listeners)

    def _step_once(self):
        try:
            self._integrate(self.clock.dt)
        except ModelDiverged as exc:       # stop with the reason; nothing more is published
            self.stepper.stop(self._now())
            self._message = f'{DIVERGED}{exc}'
            self.get_logger().error(self._message)
            self._publish_status()
            return
        self.stepper.stepped()
        if self.state_listeners:
            # Listeners first: a HIL bridge sends the sensors before the topics go out, so the
            # flight controller computes while this process publishes.
            if self._answers_direct:
                self.gate.published(self.clock.t_ns, self._now())
            for member, listener in self.state_listeners:
                listener(self.state_arrays(member))
        self._publish_pending()
        if self.stepper.stop_due(self._now()):
            self._message = f'stopped at stop_after_s = {self.cfg.stop_after_s:g} s'
            self.get_logger().info(self._message)
            self._publish_status()

    def _answered(self, stamp_ns: int, member: int = 0) -> None:
        """The command of vehicle member answering the state of stamp_ns [ns] was applied.

        Lockstep bookkeeping; the caller is ``serialized``. In lockstep the answer that
        completes the awaited step drives the next step(s) once the lock is released.
        """
        was_active = self.gate.active
        if self.stepper.answered(stamp_ns, member):
            self._kick = True
        if self.gate.active and not was_active:
            # Lockstep engaged: the answers drive the steps, the timer only notices timeouts.
            if self.gate.disengagements:
                self.get_logger().info(f'lockstep engaged again at t = {self.clock.t:.3f} s: '
                                       'the controller answers')
            self._replace_timer()

    # --- outputs -------------------------------------------------------------------------------
    def _publish_pending(self) -> bool:
        """Publish the state of the last step; False if the middleware refused it.

        Fast DDS refuses a reliable write when a subscriber's queue stays full past its
        blocking time (a slow reader while running as fast as possible). That is backpressure,
        not a failure: the step is kept (Stepper state BLOCKED), published again on the next
        attempt, and the simulation does not advance until it went out.
        """
        try:
            self._publish_step()
        except RCLError as exc:
            if not self.context.ok():
                raise
            self.publish_retries += 1
            self.get_logger().warning(
                f'state publication refused ({self.publish_retries} so far, a subscriber is '
                f'behind): {exc}; retrying before the next step', throttle_duration_sec=2.0)
            self.stepper.refused()
            return False
        self.stepper.published()
        if not self._answers_direct:
            self.gate.published(self.clock.t_ns, self._now())
        return True

    def _publish_step(self):
        stamp = time_msg(self.clock.t_ns)
        if self._clock_dec is None or self._clock_dec.due(self.clock.t_ns):
            self._msg_clock.clock = stamp
            self.pub_clock.publish(self._msg_clock)
        self._publish_state(stamp)

    def _odom_due(self) -> bool:
        """Whether this step's odometry goes out (odom_rate_hz decimation)."""
        return self._odom is None or self._odom.due(self.clock.t_ns)

    def _publish_status(self):
        self.status.publish(self, self._now())
