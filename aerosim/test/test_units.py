"""sim_core.units (factors, wraps, clamp) and sim_core.clock.ResetDetector: pure, no ROS."""

import math

import numpy as np
import pytest

from sim_core import frames
from sim_core.clock import ResetDetector
from sim_core.units import FT_M, KNOT_MPS, NM_M, SLUG_FT2_KGM2, SLUG_KG, clamp, wrap_180, wrap_pi


def test_factors_are_si_per_unit():
    assert 1000.0 * FT_M == pytest.approx(304.8)
    assert KNOT_MPS * 3600.0 == pytest.approx(NM_M)
    assert SLUG_FT2_KGM2 == pytest.approx(SLUG_KG * 0.3048 ** 2)


def test_wrap_pi_float_and_array():
    assert wrap_pi(math.pi) == pytest.approx(-math.pi)
    assert isinstance(wrap_pi(3.0 * math.pi), float)
    assert wrap_pi(3.0 * math.pi) == pytest.approx(-math.pi)
    a = wrap_pi([0.0, 2.0 * math.pi + 0.5, -math.pi - 0.5])
    assert isinstance(a, np.ndarray)
    assert a == pytest.approx([0.0, 0.5, math.pi - 0.5])
    assert frames.wrap_pi is wrap_pi          # the old home re-exports


def test_wrap_180_float_and_array():
    assert wrap_180(180.0) == -180.0 and wrap_180(-180.0) == -180.0
    assert wrap_180(359.0) == pytest.approx(-1.0) and wrap_180(540.5) == pytest.approx(-179.5)
    assert isinstance(wrap_180(10.0), float) and isinstance(wrap_180(10), float)
    assert wrap_180(np.array([190.0, -190.0])) == pytest.approx([-170.0, 170.0])


def test_clamp_scalar_and_array():
    assert clamp(2.0, -1.0, 1.0) == 1.0 and clamp(-2.0, -1.0, 1.0) == -1.0
    assert clamp(0.25, -1.0, 1.0) == 0.25
    assert math.isnan(clamp(float('nan'), -1.0, 1.0))
    v = clamp(np.array([-3.0, 0.5, 3.0]), -1.0, 1.0)
    assert list(v) == [-1.0, 0.5, 1.0]
    lim = np.array([1.0, 2.0, 3.0])
    assert list(clamp(np.array([5.0, -5.0, 2.0]), -lim, lim)) == [1.0, -2.0, 2.0]


def test_reset_detector_sees_time_going_back_only():
    d = ResetDetector()
    assert not d.went_back(5)                 # the first time is never a reset
    assert not d.went_back(5)                 # a paused sim repeats its time
    assert not d.went_back(7)
    assert d.went_back(0) and d.last == 0     # a sim reset / a replay looping over
    assert not d.went_back(1)
    assert d.resets == 1


def test_reset_detector_starting_time_and_forget():
    d = ResetDetector(last=-1)
    assert not d.went_back(0)
    assert d.went_back(-5)                   # any comparable unit: floats too
    d.forget()
    assert d.last is None and not d.went_back(-10.0)
    assert d.resets == 1


def _samples(suite, times_ns):
    q = (1.0, 0.0, 0.0, 0.0)
    out = []
    for t in times_ns:
        s = suite.sample(t, (0.0, 0.0, 1.0), (0.0, 0.0, 0.0), q, (0.0, 0.0, 0.0),
                         (0.0, 0.0, 0.0))
        out.append((s.imu, s.mag, s.baro, s.gnss))
    return out


def test_the_sensor_suite_starts_over_when_sim_time_goes_back():
    """A replay looping over: the second pass samples exactly as a fresh suite's first."""
    from sim_core.scenario import load_scenario
    from sim_sensors.core.suite import SensorSuite, SuiteConfig
    times = [k * 4_000_000 for k in range(300)]          # 1.2 s at 250 Hz
    fresh = _samples(SensorSuite(SuiteConfig(), load_scenario('default')), times)
    suite = SensorSuite(SuiteConfig(), load_scenario('default'))
    _samples(suite, times)
    again = _samples(suite, times)
    assert suite.clock_reset.resets == 1
    assert repr(again) == repr(fresh)


def test_a_boat_track_starts_over_when_sim_time_goes_back():
    from sim_report.core.boats import BoatTrack
    tr = BoatTrack()
    for t in (0.0, 1.0, 2.0):
        tr.add(t, t, 0.0, 1.0)
    tr.add(2.0, 2.0, 0.0, 1.0)                   # the same time again: kept
    tr.add(0.5, 9.0, 9.0, 2.0)                   # a reset
    assert tr.t == [0.5] and tr.e == [9.0] and tr.speed == [2.0]
