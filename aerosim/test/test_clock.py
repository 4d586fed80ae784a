"""Sim clock: fixed steps, real-time pacing, late steps, pause/reset, lockstep gate."""

import pytest

from sim_core.clock import LockstepGate, SimClock, SimState
from sim_core.errors import ConfigError


def test_fixed_integer_steps_do_not_drift():
    c = SimClock.from_rate(250.0)
    for _ in range(250 * 3600):
        c.advance()
    assert c.t_ns == 3600 * 1_000_000_000
    assert c.steps == 900_000


@pytest.mark.parametrize('rate', [5.0, 1500.0, 300.0])
def test_invalid_rates_are_rejected(rate):
    with pytest.raises(ConfigError, match='rate_hz'):
        SimClock.from_rate(rate)


@pytest.mark.parametrize('ts', [-1.0, 0.05, 101.0])
def test_invalid_time_scales_are_rejected(ts):
    with pytest.raises(ConfigError, match='time_scale'):
        SimClock.from_rate(250.0, ts)


def test_pacing_follows_wall_time_and_scale():
    c = SimClock.from_rate(100.0, time_scale=2.0)
    c.reanchor(10.0)
    assert c.due_steps(10.0) == 0
    assert c.due_steps(10.005) == 1          # 2x: 10 ms of sim per 5 ms of wall
    for _ in range(1):
        c.advance()
    assert c.due_steps(10.0051) == 0
    assert c.late_steps == 0
    assert abs(c.wall_until_next(10.0051) - 0.0049) < 1e-9


def test_falling_behind_counts_late_steps_and_reanchors():
    c = SimClock.from_rate(100.0)
    c.reanchor(0.0)
    assert c.due_steps(0.035) == 3            # 3 steps due: 2 of them late
    assert c.late_steps == 2
    for _ in range(3):
        c.advance()
    assert c.due_steps(1.0) == 1              # 96 behind: give up catching up, re-anchor
    assert c.late_steps == 2 + 96
    c.advance()
    assert c.due_steps(1.0) == 0


def test_a_late_step_is_counted_once_however_often_pacing_is_asked():
    # lockstep asks the pacer every timer tick while it waits for the controller's answer
    c = SimClock.from_rate(100.0)
    c.reanchor(0.0)
    for wall in (0.035, 0.036, 0.037, 0.038):
        assert c.due_steps(wall) == 3
    assert c.late_steps == 2                  # steps 1 and 2, once
    c.advance()
    assert c.due_steps(0.041) == 3            # 4 due now: steps 2 and 3 late, 2 counted before
    assert c.late_steps == 3
    assert c.late_steps <= c.steps + c.due_steps(0.041)


def test_paused_and_stopped_take_no_steps_and_resume_without_burst():
    c = SimClock.from_rate(100.0)
    c.reanchor(0.0)
    c.set_state(SimState.PAUSED, 0.0)
    assert c.due_steps(5.0) == 0
    c.set_state(SimState.RUNNING, 5.0)
    assert c.due_steps(5.0) == 0
    assert c.due_steps(5.0101) == 1
    assert c.late_steps == 0
    c.set_state(SimState.STOPPED, 6.0)
    assert c.due_steps(100.0) == 0


def test_as_fast_as_possible_is_unbounded():
    c = SimClock.from_rate(250.0, time_scale=0.0)
    assert c.due_steps(0.0) > 1000


def test_reset_returns_to_zero():
    c = SimClock.from_rate(250.0)
    for _ in range(10):
        c.advance()
    c.reset(1.0)
    assert (c.t_ns, c.steps, c.late_steps) == (0, 0, 0)


def test_lockstep_free_runs_until_first_answer_then_waits():
    g = LockstepGate(timeout_s=0.5)
    g.published(4_000_000, wall_now=0.0)
    assert g.may_step(0.0)                    # no controller yet: free-run
    assert not g.active
    g.published(8_000_000, wall_now=0.0)
    assert not g.answered(4_000_000)          # stale answer: engages lockstep, does not count
    assert g.active
    assert not g.may_step(0.1)                # waits for the answer to 8 ms
    assert g.answered(8_000_000)
    g.published(12_000_000, wall_now=1.0)
    assert not g.may_step(1.1)                # waiting for the answer to 12 ms
    assert g.answered(12_000_000)
    assert g.may_step(1.1)


def test_lockstep_timeout_never_deadlocks():
    g = LockstepGate(timeout_s=0.5)
    g.published(4_000_000, 0.0)
    g.answered(4_000_000)
    g.published(8_000_000, 1.0)
    assert not g.may_step(1.4)
    assert g.may_step(1.5)
    assert g.timeouts == 1


def test_lockstep_disabled_never_waits():
    g = LockstepGate(enabled=False)
    g.published(4_000_000, 0.0)
    g.answered(4_000_000)
    g.published(8_000_000, 0.0)
    assert g.may_step(0.0)
    assert not g.active


def test_decimator_samples_on_the_grid_and_restarts_when_time_goes_back():
    from sim_core.decimator import Decimator
    d = Decimator(10.0)                                   # 100 ms
    due = [t for t in range(0, 400_000_000, 4_000_000) if d.due(t)]
    assert due == [0, 100_000_000, 200_000_000, 300_000_000]
    assert not d.due(380_000_000)
    assert d.due(50_000_000)                  # a reset / a replay starting over: sample again
    assert not d.due(60_000_000) and d.due(100_000_000)
