"""The multirotor's equations of motion and RK4 step, compiled with numba (pure, no rclpy).

The model of sim_dynamics.core.multirotor (its docstring has the equations) as array code:
numba compiles it to machine code at first use in a process (a few seconds once; the result is
cached next to this file, so later processes load it in ~0.1 s). One step costs ~1 µs instead
of ~25 µs of Python floats: at 250 Hz in lockstep that was a tenth of the simulator's share
of a step. NUMBA_DISABLE_JIT=1 runs the same code as plain Python.

Arrays: s = p_enu(3), v_enu(3), q_enu_flu(4, w x y z), w_flu(3), omega(n) [SI, ENU/FLU];
cmd = commanded rotor speeds (n) [rad/s]; rotor_k (n, 3) = per rotor (y_i k_f, -x_i k_f,
-d_i k_m); body_k = the BODY_* constants below; wind (3) [m/s, ENU].
"""

import math

import numba
import numpy as np

# body_k layout
K_F, INV_M, IXX, IYY, IZZ, INV_IXX, INV_IYY, INV_IZZ = range(8)
CL, CQ, CA = 8, 11, 14                   # drag linear, quadratic, angular (3 each)
GRAVITY, TAU_UP, TAU_DOWN, GROUND_LIN, GROUND_ANG = 17, 18, 19, 20, 21
BODY_K_LEN = 22


@numba.njit(cache=True)
def body_deriv(s, rotor_k, body_k, wind, out):
    """out[0:13] = time derivative of the rigid-body part of s (independent of the commands)."""
    pz, vx, vy, vz = s[2], s[3], s[4], s[5]
    qw, qx, qy, qz = s[6], s[7], s[8], s[9]
    wx, wy, wz = s[10], s[11], s[12]
    thrust = tx = ty = tz = 0.0
    for i in range(rotor_k.shape[0]):
        o2 = s[13 + i] * s[13 + i]
        thrust += o2
        tx += rotor_k[i, 0] * o2
        ty += rotor_k[i, 1] * o2
        tz += rotor_k[i, 2] * o2
    thrust *= body_k[K_F]
    xx, yy, zz = qx * qx, qy * qy, qz * qz
    xy, xz, yz = qx * qy, qx * qz, qy * qz
    wxq, wyq, wzq = qw * qx, qw * qy, qw * qz
    r00, r01, r02 = 1 - 2 * (yy + zz), 2 * (xy - wzq), 2 * (xz + wyq)
    r10, r11, r12 = 2 * (xy + wzq), 1 - 2 * (xx + zz), 2 * (yz - wxq)
    r20, r21, r22 = 2 * (xz - wyq), 2 * (yz + wxq), 1 - 2 * (xx + yy)
    ax_, ay_, az_ = vx - wind[0], vy - wind[1], vz - wind[2]
    ub = r00 * ax_ + r10 * ay_ + r20 * az_
    vb = r01 * ax_ + r11 * ay_ + r21 * az_
    wb = r02 * ax_ + r12 * ay_ + r22 * az_
    sp = math.sqrt(ub * ub + vb * vb + wb * wb)
    fbx = -(body_k[CL] + body_k[CQ] * sp) * ub
    fby = -(body_k[CL + 1] + body_k[CQ + 1] * sp) * vb
    fbz = thrust - (body_k[CL + 2] + body_k[CQ + 2] * sp) * wb
    inv_m = body_k[INV_M]
    ax = (r00 * fbx + r01 * fby + r02 * fbz) * inv_m
    ay = (r10 * fbx + r11 * fby + r12 * fbz) * inv_m
    az = (r20 * fbx + r21 * fby + r22 * fbz) * inv_m - body_k[GRAVITY]
    ixx, iyy, izz = body_k[IXX], body_k[IYY], body_k[IZZ]
    mx = tx - body_k[CA] * wx - (wy * izz * wz - wz * iyy * wy)
    my = ty - body_k[CA + 1] * wy - (wz * ixx * wx - wx * izz * wz)
    mz = tz - body_k[CA + 2] * wz - (wx * iyy * wy - wy * ixx * wx)
    dwx, dwy, dwz = mx * body_k[INV_IXX], my * body_k[INV_IYY], mz * body_k[INV_IZZ]
    if pz <= 0.0 and az <= 0.0:      # ground contact: the plane supports the vehicle
        az = 0.0 if vz >= 0.0 else -vz * body_k[GROUND_LIN]
        ax = -vx * body_k[GROUND_LIN]
        ay = -vy * body_k[GROUND_LIN]
        dwx = -wx * body_k[GROUND_ANG]
        dwy = -wy * body_k[GROUND_ANG]
        dwz = -wz * body_k[GROUND_ANG]
    out[0], out[1], out[2], out[3], out[4], out[5] = vx, vy, vz, ax, ay, az
    out[6] = 0.5 * (-qx * wx - qy * wy - qz * wz)
    out[7] = 0.5 * (qw * wx + qy * wz - qz * wy)
    out[8] = 0.5 * (qw * wy - qx * wz + qz * wx)
    out[9] = 0.5 * (qw * wz + qx * wy - qy * wx)
    out[10], out[11], out[12] = dwx, dwy, dwz


@numba.njit(cache=True)
def rotor_deriv(s, cmd, body_k, out):
    """out[13:] = rotor speed derivatives: first-order lag to cmd (tau up / down)."""
    for i in range(cmd.shape[0]):
        o, c = s[13 + i], cmd[i]
        out[13 + i] = (c - o) / (body_k[TAU_UP] if c > o else body_k[TAU_DOWN])


@numba.njit(cache=True)
def _deriv(s, cmd, rotor_k, body_k, wind, out):
    body_deriv(s, rotor_k, body_k, wind, out)
    rotor_deriv(s, cmd, body_k, out)


@numba.njit(cache=True)
def rk4_step(s, cmd, rotor_k, body_k, wind, dt, d_body):
    """One RK4 step of dt [s] from s; returns the new state.

    d_body: on entry the rigid-body derivative at s (k1's, which the commands do not change),
    on return the one at the new state (the acceleration output and the next step's k1).
    Then: quaternion renormalized, no sinking below z = 0, rotor speeds >= 0.
    """
    n = s.shape[0]
    k1, k2, k3, k4 = np.empty(n), np.empty(n), np.empty(n), np.empty(n)
    k1[:13] = d_body[:13]
    rotor_deriv(s, cmd, body_k, k1)
    _deriv(s + 0.5 * dt * k1, cmd, rotor_k, body_k, wind, k2)
    _deriv(s + 0.5 * dt * k2, cmd, rotor_k, body_k, wind, k3)
    _deriv(s + dt * k3, cmd, rotor_k, body_k, wind, k4)
    out = s + dt / 6.0 * (k1 + 2.0 * k2 + 2.0 * k3 + k4)
    qn = math.sqrt(out[6] * out[6] + out[7] * out[7] + out[8] * out[8] + out[9] * out[9])
    for i in range(6, 10):
        out[i] /= qn
    if out[2] < 0.0:                 # no sinking, no bounce
        out[2] = 0.0
        if out[5] < 0.0:
            out[5] = 0.0
    for i in range(13, n):
        if out[i] < 0.0:
            out[i] = 0.0
    body_deriv(out, rotor_k, body_k, wind, d_body)
    return out
