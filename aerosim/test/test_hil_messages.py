"""MAVLink HIL messages: fields and units against the MAVLink tables, and the mixer.

The messages the bridge sends the FC (HEARTBEAT, HOME_POSITION, HIL_SENSOR and its
fields_updated groups, HIL_GPS, HIL_STATE_QUATERNION) against the MAVLink common tables, and
the mixer of HIL_ACTUATOR_CONTROLS. Messages go through real pymavlink framing.
"""

import math

from mavlink_helpers import SIM, wire
import numpy as np
import pytest

from mavlink_bridge.core import hil
from mavlink_bridge.core.mav import mavlink, new_mav
from mavlink_bridge.core.mixer import ActuatorError, Mixer
from sim_core.clock import SimState
from sim_core.errors import ConfigError
from sim_core.geodesy import GeoOrigin
from sim_sensors.core.gnss import GnssFix
from sim_sensors.core.suite import SensorSample


@pytest.fixture
def sim():
    return new_mav(*SIM)


def test_heartbeat_per_state(sim):
    cases = {SimState.RUNNING: (mavlink.MAV_STATE_ACTIVE, 136),
             SimState.PAUSED: (mavlink.MAV_STATE_STANDBY, mavlink.MAV_MODE_FLAG_GUIDED_ENABLED),
             SimState.STOPPED: (mavlink.MAV_STATE_POWEROFF, 0)}
    for state, (status, mode) in cases.items():
        m = wire(hil.heartbeat(sim, state), sim)
        assert (m.type, m.autopilot) == (0, 8)     # GENERIC, INVALID
        assert (m.system_status, m.base_mode) == (status, mode)
        assert (m.get_srcSystem(), m.get_srcComponent()) == SIM
    assert mavlink.MAV_STATE_ACTIVE == 4 and mavlink.MAV_STATE_STANDBY == 3
    assert mavlink.MAV_STATE_POWEROFF == 7


def test_home_position_units(sim):
    o = GeoOrigin(47.397742, 8.545594, 488.0)
    m = wire(hil.home_position(sim, o), sim)
    assert m.latitude == 473977420 and m.longitude == 85455940
    assert m.altitude == 488000                  # mm
    assert (m.x, m.y, m.z) == (0.0, 0.0, 0.0)
    assert list(m.q) == [1.0, 0.0, 0.0, 0.0]


def sample(imu=True, mag_new=False, baro=None):
    f = np.array([0.1, 0.2, 9.81])               # FLU
    w = np.array([0.01, 0.02, 0.03])
    return SensorSample(4000, (f, w) if imu else None, np.array([2e-5, 1e-6, -4.3e-5]),
                        mag_new, baro, [])


def test_hil_sensor_frames_units_and_groups(sim):
    enc = hil.HilSensorEncoder()
    m = wire(enc.encode(sim, sample(), 4000), sim)
    assert m.time_usec == 4000
    assert m.fields_updated == 0x7 | 0x38           # ACCEL | GYRO only
    # FLU -> FRD: y and z negated; at rest z reads -g
    assert (m.xacc, m.yacc, m.zacc) == pytest.approx((0.1, -0.2, -9.81), abs=1e-6)
    assert (m.xgyro, m.ygyro, m.zgyro) == pytest.approx((0.01, -0.02, -0.03), abs=1e-7)
    assert m.id == 0
    m = wire(enc.encode(sim, sample(mag_new=True, baro=(101325.0, 288.15, 0.0)), 8000), sim)
    assert m.fields_updated == 0x7 | 0x38 | 0x1C0 | 0x1A00
    assert (m.xmag, m.ymag, m.zmag) == pytest.approx((0.2, -0.01, 0.43), abs=1e-6)   # gauss
    assert m.abs_pressure == pytest.approx(1013.25)     # hPa
    assert m.temperature == pytest.approx(15.0)         # degC
    assert m.pressure_alt == pytest.approx(0.0)
    assert m.diff_pressure == 0.0
    assert not m.fields_updated & 0x400                 # no DIFF_PRESSURE
    # the next message without new mag/baro keeps the values but does not flag them
    m = wire(enc.encode(sim, sample(), 12000), sim)
    assert m.fields_updated == 0x3F and m.abs_pressure == pytest.approx(1013.25)


def test_hil_gps_units(sim):
    fix = GnssFix(100_000_000, 47.5, 8.5, 500.25, (3.0, 4.0, -1.0), 3, 0.3, 0.5, 12)
    m = wire(hil.hil_gps(sim, fix, 1_700_000_000_000_000), sim)
    assert m.time_usec == 1_700_000_000_000_000
    assert (m.lat, m.lon, m.alt) == (475000000, 85000000, 500250)
    assert (m.eph, m.epv) == (30, 50)                  # cm
    assert (m.vn, m.ve, m.vd) == (400, 300, 100)       # cm/s NED from ENU (3, 4, -1)
    assert m.vel == 500
    assert m.cog == round(math.degrees(math.atan2(3.0, 4.0)) * 100)
    assert m.fix_type == 3 and m.satellites_visible >= 6


def test_hil_state_quaternion_ground_truth(sim):
    o = GeoOrigin(47.0, 8.0, 400.0)
    # heading north (ENU yaw 90 deg), 2 m up, flying north at 5 m/s
    q = (math.cos(math.pi / 4), 0.0, 0.0, math.sin(math.pi / 4))
    m = wire(hil.hil_state_quaternion(sim, 1000, o, (0.0, 0.0, 2.0), (0.0, 5.0, 0.0), q,
                                      (0.0, 0.0, 0.0), (0.0, 0.0, 0.1), 9.80665), sim)
    assert list(m.attitude_quaternion) == pytest.approx([1.0, 0.0, 0.0, 0.0], abs=1e-6)
    assert m.yawspeed == pytest.approx(-0.1)            # FLU z up -> FRD z down
    assert (m.vx, m.vy, m.vz) == (500, 0, 0)
    assert m.alt == 402000 and m.lat == 470000000


def test_mixer_default_and_table():
    assert Mixer().throttles([0.1, 0.2, 0.3, 0.4] + [9.0] * 12) == (0.1, 0.2, 0.3, 0.4)
    assert Mixer((2, 0, 3, 1)).throttles([0.1, 0.2, 0.3, 0.4]) == (0.3, 0.1, 0.4, 0.2)
    assert Mixer().throttles([-1.0, 0.5, 1.0, 0.0]) == (0.0, 0.5, 1.0, 0.0)   # PX4 disarmed -1
    for bad in ([math.nan, 0, 0, 0], [0, math.inf, 0, 0], [0, 0, 1.5, 0], [0, 0, 0, -2], [0.5]):
        with pytest.raises(ActuatorError):
            Mixer().throttles(bad)
    for table in ((0, 1, 2), (0, 0, 1, 2), (0, 1, 2, 4)):
        with pytest.raises(ConfigError):
            Mixer(table)
