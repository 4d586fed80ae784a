"""Frame conversions: ENU/NED, FLU/FRD, attitude quaternions, headings."""

import math

import numpy as np
from transforms3d import euler
from transforms3d import quaternions as tq

from sim_core import frames


def test_enu_ned_vectors():
    assert np.allclose(frames.enu_to_ned([1.0, 2.0, 3.0]), [2.0, 1.0, -3.0])
    assert np.allclose(frames.ned_to_enu(frames.enu_to_ned([1.0, 2.0, 3.0])), [1.0, 2.0, 3.0])


def test_flu_frd_vectors():
    assert np.allclose(frames.flu_to_frd([1.0, 2.0, 3.0]), [1.0, -2.0, -3.0])
    assert np.allclose(frames.frd_to_flu(frames.flu_to_frd([4.0, 5.0, 6.0])), [4.0, 5.0, 6.0])


def test_level_facing_east_is_yaw_90_in_ned():
    q_enu = np.array([1.0, 0.0, 0.0, 0.0])            # FLU x along ENU x = east
    roll, pitch, yaw = frames.quat_to_euler_ned(frames.q_enu_flu_to_ned_frd(q_enu))
    assert abs(roll) < 1e-12 and abs(pitch) < 1e-12
    assert math.isclose(yaw, math.pi / 2, abs_tol=1e-12)


def test_facing_north_is_yaw_0_and_heading_0():
    q_enu = tq.axangle2quat([0, 0, 1], math.pi / 2)   # turn left 90 deg from east: north
    _, _, yaw = frames.quat_to_euler_ned(frames.q_enu_flu_to_ned_frd(q_enu))
    assert math.isclose(yaw, 0.0, abs_tol=1e-12)
    assert math.isclose(frames.yaw_enu_to_heading_deg(math.pi / 2), 0.0, abs_tol=1e-9)
    assert math.isclose(frames.yaw_enu_to_heading_deg(0.0), 90.0)


def test_attitude_conversion_rotates_vectors_consistently():
    rng = np.random.default_rng(1)
    for _ in range(50):
        q_enu = rng.normal(size=4)
        q_enu /= np.linalg.norm(q_enu)
        q_ned = frames.q_enu_flu_to_ned_frd(q_enu)
        v_flu = rng.normal(size=3)
        # rotating in ENU/FLU then converting equals converting then rotating in NED/FRD
        a = frames.enu_to_ned(tq.rotate_vector(v_flu, q_enu))
        b = tq.rotate_vector(frames.flu_to_frd(v_flu), q_ned)
        assert np.allclose(a, b, atol=1e-12)
        assert q_ned[0] >= 0.0
        back = frames.q_ned_frd_to_enu_flu(q_ned)
        assert np.allclose(tq.quat2mat(back), tq.quat2mat(q_enu), atol=1e-12)


def test_euler_roundtrip_ned():
    for r, p, y in [(0.1, -0.2, 2.5), (-1.0, 0.5, -3.0), (0.0, 0.0, 0.0)]:
        q = frames.euler_ned_to_quat(r, p, y)
        assert np.allclose(frames.quat_to_euler_ned(q), (r, p, y), atol=1e-12)
        assert np.allclose(q, euler.euler2quat(y, p, r, 'rzyx'), atol=1e-12) or \
            np.allclose(q, -euler.euler2quat(y, p, r, 'rzyx'), atol=1e-12)


def test_quat_rotate_inverse_is_the_transpose_of_transforms3d_rotation():
    rng = np.random.default_rng(3)
    for _ in range(200):
        q = rng.normal(size=4)
        q /= np.linalg.norm(q)
        v = rng.uniform(-50.0, 50.0, 3)
        np.testing.assert_allclose(frames.quat_rotate_inverse(q, v), tq.quat2mat(q).T @ v,
                                   atol=1e-12)
        np.testing.assert_allclose(frames.quat_rotate(q, frames.quat_rotate_inverse(q, v)), v,
                                   atol=1e-12)


def test_closed_form_euler_to_enu_flu_equals_the_quaternion_chain():
    """euler_ned_to_q_enu_flu (a plane's per-step path) = the transforms3d chain, w >= 0."""
    rng = np.random.default_rng(7)
    for r, p, y in rng.uniform([-math.pi, -1.5, -math.pi], [math.pi, 1.5, math.pi], (500, 3)):
        q = np.array(frames.euler_ned_to_q_enu_flu(r, p, y))
        ref = frames.q_ned_frd_to_enu_flu(frames.euler_ned_to_quat(r, p, y))
        assert q[0] >= 0.0 and np.allclose(q, ref, atol=1e-12)
    # heading 40 deg, level: the body x axis points 40 deg east of north (ENU yaw 50 deg)
    q = frames.euler_ned_to_q_enu_flu(0.0, 0.0, math.radians(40.0))
    x = frames.quat_rotate(q, (1.0, 0.0, 0.0))
    assert np.allclose(x, (math.sin(math.radians(40.0)), math.cos(math.radians(40.0)), 0.0))
