"""The stepping loop's state machine (sim_core.stepper), driven by an injected wall clock.

No ROS, no threads, no sleep: each test plays the node's part (integrate on STEP, publish,
answer) with wall times it chooses.
"""

import pytest

from sim_core import config
from sim_core.clock import FleetGate, SimClock, SimState
from sim_core.errors import ConfigError
from sim_core.stepper import (
    FREE_RUN_POLL_S,
    LOCKSTEP_POLL_S,
    MAX_BATCH_WALL_S,
    PARAMETERS,
    Action,
    Decision,
    Stepper,
    StepState,
    table_for,
    time_config,
)

DT = 0.004          # 250 Hz [s]
NS = 1_000_000_000


def stepper(time_scale=1.0, lockstep=False, members=1, stop_after_s=0.0, max_timeouts=0):
    return Stepper(SimClock.from_rate(1.0 / DT, time_scale),
                   FleetGate(timeout_s=0.5, enabled=lockstep, max_timeouts=max_timeouts,
                             members=members), stop_after_s)


def run(st, now, trigger='timer', refuse=0, on_step=None, step_wall_s=1e-4):
    """A node's batch from wall time now [s]: the actions taken, the last decision.

    Each step takes step_wall_s of wall time (a batch as fast as possible ends on it).
    """
    taken = []
    st.begin(now, trigger)
    while True:
        d = st.next(now)
        taken.append(d.action)
        if d.action is Action.STEP:
            now += step_wall_s
            st.stepped()
            if on_step:
                on_step(st)
        if d.action in (Action.STEP, Action.PUBLISH):
            if refuse:
                refuse -= 1
                st.refused()
            else:
                st.published()
                st.gate.published(st.clock.t_ns, now)
        if d.action in (Action.IDLE, Action.WAIT):
            return taken, d


def test_paced_steps_follow_the_wall_clock_at_the_time_scale():
    st = stepper(time_scale=0.5)                 # a step every 8 ms of wall time
    taken, d = run(st, 10.0)
    assert taken == [Action.IDLE] and st.clock.steps == 0      # anchored at 10 s
    run(st, 10.0 + 0.0079)
    assert st.clock.steps == 0
    run(st, 10.0 + 0.008 + 1e-9)
    assert st.clock.steps == 1
    run(st, 10.0 + 0.0405)                       # 5 periods: 4 more due
    assert st.clock.steps == 5 and st.clock.late_steps == 3
    assert st.poll_period_s() == pytest.approx(0.008)


def test_as_fast_as_possible_steps_a_batch_then_yields():
    st = stepper(time_scale=0.0)
    assert st.poll_period_s() == FREE_RUN_POLL_S
    t = [1.0]

    def clock_moves(s):
        t[0] += MAX_BATCH_WALL_S / 10
    st.begin(t[0])
    n = 0
    while st.next(t[0]).action is Action.STEP:
        st.stepped()
        st.published()
        clock_moves(st)
        n += 1
    assert 9 <= n <= 11 and st.clock.steps == n               # 5 ms of wall time, then yield


def test_lockstep_waits_for_the_answer_then_times_out():
    st = stepper(time_scale=0.0, lockstep=True)
    run(st, 1.0)                                  # before any answer: free-runs a batch
    assert st.clock.steps > 0
    st.gate.reset()
    s0 = st.clock.steps
    assert not st.answered(123, 0) and st.gate.active         # engaged by an answer
    taken, _ = run(st, 2.0)
    assert st.clock.steps == s0 + 1 and st.state is StepState.AWAITING
    run(st, 2.1)
    assert st.clock.steps == s0 + 1                            # awaiting its answer
    assert st.answered(st.clock.t_ns, 0) and st.state is StepState.RUNNING
    run(st, 2.2)
    assert st.clock.steps == s0 + 2 and st.gate.timeouts == 0
    run(st, 2.2 + 0.6)                            # no answer within lockstep_timeout_s
    assert st.gate.timeouts == 1 and st.clock.steps == s0 + 3


def test_a_silent_controller_is_lost_after_max_timeouts_and_free_runs():
    st = stepper(time_scale=0.0, lockstep=True, max_timeouts=2)
    st.answered(0, 0)
    assert st.poll_period_s() == LOCKSTEP_POLL_S
    actions = []
    for k in range(4):
        taken, _ = run(st, 1.0 + 0.6 * k)
        actions += taken
    assert Action.LOST in actions and not st.gate.active
    assert st.poll_period_s() == FREE_RUN_POLL_S


def test_paced_lockstep_waits_for_the_deadline_and_one_batch_paces():
    st = stepper(time_scale=1.0, lockstep=True)
    st.answered(0, 0)
    taken, d = run(st, 5.0)                       # anchors; the first step is 4 ms on
    assert d == Decision(Action.WAIT, until_s=pytest.approx(5.004))
    assert st.next(5.004 + 1e-6).action is Action.STEP        # the same batch, on time
    st.stepped()
    st.published()
    st.gate.published(st.clock.t_ns, 5.0041)
    assert st.state is StepState.AWAITING and st.next(5.0042).action is Action.IDLE
    st.answered(st.clock.t_ns, 0)                 # answered 1 ms later
    answer = st.begin(5.005, 'answer')
    d = st.next(5.005, answer)
    assert d == Decision(Action.WAIT, until_s=pytest.approx(5.008))
    timer = st.begin(5.006, 'timer')              # a timer tick meanwhile: leaves it
    assert st.next(5.0081, timer).action is Action.IDLE
    assert st.next(5.0081, answer).action is Action.STEP     # the waiter steps at its time
    st.stepped()
    assert st.steps_by == {'timer': 1, 'answer': 1}           # who took each step


def test_paced_lockstep_waits_in_the_loop_free_running_leaves_it_to_the_timer():
    st = stepper(time_scale=0.1, lockstep=True)   # 40 ms a step
    st.answered(0, 0)
    assert run(st, 1.0)[1] == Decision(Action.WAIT, until_s=pytest.approx(1.04))
    d = st.next(1.001)                            # the same batch, asking again
    assert d.action is Action.WAIT                # 39 ms < two periods (80 ms)
    st2 = stepper(time_scale=1.0, lockstep=False)
    run(st2, 1.0)
    assert run(st2, 1.001)[1].action is Action.IDLE           # no lockstep: the timer paces


def test_a_refused_publication_holds_the_step_and_is_retried_once_a_batch():
    st = stepper(time_scale=0.0)
    taken, _ = run(st, 1.0, refuse=1)
    assert taken == [Action.STEP, Action.IDLE] and st.state is StepState.BLOCKED
    taken, _ = run(st, 1.1, refuse=1)
    assert taken == [Action.PUBLISH, Action.IDLE] and st.clock.steps == 1
    taken, _ = run(st, 1.2)
    assert taken[:2] == [Action.PUBLISH, Action.STEP] and st.clock.steps > 1
    assert st.state is StepState.RUNNING


def test_pause_resume_stop_and_reset():
    st = stepper(time_scale=0.0, stop_after_s=3 * DT)
    assert st.pause(True, 1.0) and st.state is StepState.PAUSED
    assert run(st, 1.1)[0] == [Action.IDLE] and st.clock.steps == 0
    assert st.pause(False, 1.2) and st.state is StepState.RUNNING

    def stop(s):
        s.stop_due(1.3)
    run(st, 1.3, on_step=stop)
    assert st.clock.steps == 3 and st.state is StepState.STOPPED
    assert not st.pause(False, 1.4)                          # stopped: no resume
    st.reset(1.5)
    assert st.clock.t_ns == 0 and st.state is StepState.RUNNING


def test_the_start_hold_waits_for_the_missing_or_its_timeout():
    st = stepper(time_scale=0.0)
    missing = ['/quad1']
    st.hold(lambda: list(missing), 2.0, 10.0)
    assert st.state is StepState.HELD and run(st, 10.0)[0] == [Action.IDLE]
    assert run(st, 10.01)[0] == [Action.IDLE]                # checked every 50 ms
    missing.clear()
    taken, _ = run(st, 10.06)
    assert taken[0] is Action.RELEASED and st.clock.steps > 0
    st2 = stepper(time_scale=1.0)
    st2.hold(lambda: ['/quad1'], 2.0, 10.0)
    assert run(st2, 11.9)[1].action is Action.IDLE
    st2.begin(12.0)
    assert st2.next(12.0) == Decision(Action.RELEASED, missing=('/quad1',), waited_s=2.0)
    assert st2.next(12.0).action is Action.IDLE               # pacing anchors now
    assert st2.clock.steps == 0                   # pacing anchors at the release, not before
    run(st2, 12.0 + DT + 1e-6)
    assert st2.clock.steps == 1 and st2.clock.late_steps == 0


def test_the_time_source_configs_tables_and_defaults():
    cls = time_config(125.0, 'circuit')
    cfg = config.build(cls, table_for(cls), {})
    assert (cfg.rate_hz, cfg.scenario_file, cfg.time_scale) == (125.0, 'circuit', 1.0)
    swarm = time_config(50.0, None)
    assert 'scenario_file' not in table_for(swarm) and set(table_for(cls)) == set(PARAMETERS)
    assert PARAMETERS['time_scale'].live and not PARAMETERS['rate_hz'].live
    with pytest.raises(ConfigError, match='rate_hz'):
        config.build(cls, table_for(cls), {'rate_hz': 5000.0})


def test_the_clock_state_is_the_status_state():
    st = stepper()
    st.stop(1.0)
    assert st.clock.state == SimState.STOPPED and st.state is StepState.STOPPED


def test_the_time_sources_own_tables_match_their_configs_and_defaults_lie_in_range():
    from sim_world.core import params as world_params

    from sim_dynamics.core import node_params, swarm_params
    from sim_dynamics.core.swarm_types import SwarmParams
    tables = [(world_params.WorldConfig, world_params.PARAMETERS),
              (node_params.PlaneNodeConfig, node_params.PLANE_PARAMETERS),
              (node_params.UsvGainsConfig, node_params.USV_GAINS_PARAMETERS),
              (swarm_params.SwarmNodeConfig, swarm_params.NODE_PARAMETERS),
              (SwarmParams, swarm_params.PARAMETERS)]
    for cls, table in tables:
        assert set(table) == set(cls.__dataclass_fields__), cls.__name__
        assert config.build(cls, table, {}) == cls()
    with pytest.raises(ConfigError, match='hsi_mode'):
        config.build(node_params.PlaneNodeConfig, node_params.PLANE_PARAMETERS,
                     {'hsi_mode': 'adf'})
    with pytest.raises(ConfigError, match='current_ne'):
        swarm_params.checked(SwarmParams(current_ne=(1.0,)))
    assert swarm_params.checked(SwarmParams(current_ne=[1, 2])).current_ne == (1.0, 2.0)
