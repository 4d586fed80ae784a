"""6-DOF torpedo AUV (pure, no rclpy): one thruster, four fins, as DUNE's VSIM models a LAUV.

Frames: NED around the scenario origin (x north, y east, z down = depth [m]); body FRD (x
forward, y starboard, z down); the attitude q_ned_frd (w, x, y, z). The state integrated is the
position, the attitude and the body velocity through the water nu = (u, v, w, p, q, r); the
water's current (constant, NED) carries the vehicle: p' = R nu[:3] + current.

Equations (Fossen's form, M nu' = tau, every term in the body frame):
    M = diag(mass + added mass (surge, sway, heave), the moments of inertia with their added
        part): the effective masses of VSIM's "Inertial Matrix"
    tau = damping + body lift + Coriolis (Kirchhoff) + restoring + fins + thruster
    damping      VSIM's linear and quadratic drag, ten terms each: the diagonal (X_u ... N_r)
                 and the couplings Y_r, Z_q, M_w, N_v; linear terms times the velocity,
                 quadratic times velocity |velocity|
    body lift    Y = (L0 v + L1 r) u, Z = (L2 w + L3 q) u, M = (L4 w + L5 q) u,
                 N = (L6 v + L7 r) u (VSIM's "Body Lift Coefficients")
    Coriolis     Kirchhoff's equations with the effective masses P = m_eff * v, H = I_eff * w:
                 force -(w x P), moment -(v x P + w x H) (the Munk moment of the added mass)
    restoring    weight m g at the centre of gravity (the body origin), buoyancy B at the
                 centre of buoyancy cb_above_cg_m above it; fully submerged B = m g +
                 reserve_buoyancy_n (slightly positive: a stopped AUV floats up); near the
                 surface B shrinks with the submerged part of the hull's diameter (a linear
                 fraction of its height, as VSIM's box volume), so the AUV floats with a few
                 centimetres of hull out of the water
    fins         fin k (servo id k, DUNE's SetServoPosition id) at position r_k, deflection
                 delta_k in +-max_fin_rad: force F_k = force_n_k (delta_k / max_fin_rad) U^2
                 (force_n_k: its force at full deflection at 1 m/s, along its lift axis; U the
                 speed through the water, as VSIM), moment r_k x F_k; scaled by the submerged
                 fraction at the surface
    thruster     n = act max_rpm / 60 [rev/s], act in [-1, 1]; T = (k1 n - k2 U) |n| along
                 body x, clamped to +-max_thrust_n (VSIM's "Engine Parameters" of a UUV)
Integration: RK4 at a fixed step (100 Hz in a world: kinds/auv/model.py); the attitude as a
quaternion, normalised each step. The type file (AuvType, its fins) is read and checked in
auv_type.

The coefficients of kinds/auv/params/lauv.yaml are DUNE's (etc/common/vsim-models.ini,
[VSIM/Model/lauv]); their meaning, the fin geometry and the thruster law from DUNE's
src/Simulators/VSIM/VSIM (Object.cpp, UUV.cpp, Fin.cpp, Engine.cpp). Where VSIM's own code is
inconsistent this model is not: VSIM takes the weight of a 24 kg mass but integrates with the
effective masses of an 18 kg one, its restoring force along x is zeroed, its Coriolis terms use
the 24 kg, its fins make no roll moment; here one mass, r x F, and Kirchhoff's terms.
"""

import math
from typing import Optional, Sequence, Tuple

from sim_core.units import clamp
from sim_dynamics.core.auv_type import (
    ELEVATOR,
    RUDDER,
    AuvType,
    Fin,
    fin_table,
    fins_by_surface,
)

# The type file (AuvType, its fins, fin_table, fins_by_surface) lives in auv_type; callers
# import it from here too.
__all__ = ['Auv', 'AuvType', 'Fin', 'RUDDER', 'ELEVATOR', 'fin_table', 'fins_by_surface', 'rot',
           'mul_t', 'G']

G = 9.80665                     # [m/s^2]


def _cross(a, b):
    return (a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0])


def rot(q) -> Tuple[Tuple[float, float, float], ...]:
    """The rotation matrix (rows) of the unit quaternion q = (w, x, y, z)."""
    w, x, y, z = q
    return ((1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)),
            (2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)),
            (2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)))


def _mul(m, v):
    return tuple(m[i][0] * v[0] + m[i][1] * v[1] + m[i][2] * v[2] for i in range(3))


def mul_t(m, v) -> Tuple[float, float, float]:
    """m^T v: a world vector (NED) into the body frame (FRD) of the rotation m (rot(q))."""
    x, y, z = (m[0][i] * v[0] + m[1][i] * v[1] + m[2][i] * v[2] for i in range(3))
    return (x, y, z)


class Auv:
    """One AUV's state and equations (module docstring); SI, NED/FRD."""

    def __init__(self, t: AuvType, current_ned: Sequence[float] = (0.0, 0.0, 0.0),
                 gravity: float = G):
        """Type t in a constant current [m/s] NED; at rest at the origin until reset()."""
        self.t = t
        self.g = float(gravity)
        self.current = tuple(float(c) for c in current_ned)
        a = t.added_mass_kg
        self.m_eff = (t.mass_kg + a[0], t.mass_kg + a[1], t.mass_kg + a[2])
        self.i_eff = t.inertia_kgm2
        self.weight = t.mass_kg * self.g
        self.buoyancy = self.weight + t.reserve_buoyancy_n
        self.fin_cmd = [0.0] * len(t.fins)
        self.thrust_act = 0.0
        self.reset()

    def reset(self, p_ned=(0.0, 0.0, 0.0), q=(1.0, 0.0, 0.0, 0.0), nu=(0.0,) * 6) -> None:
        """Position [m] NED, attitude q_ned_frd, body velocity through the water; commands 0."""
        self.p = [float(x) for x in p_ned]
        self.q = [float(x) for x in q]
        self.nu = [float(x) for x in nu]
        self.fin_cmd = [0.0] * len(self.t.fins)
        self.thrust_act = 0.0
        self.acc_ned = (0.0, 0.0, 0.0)      # ground acceleration of the last step [m/s^2]
        self.nu_dot = (0.0,) * 6
        self.thrust_n = 0.0

    def command(self, thrust_act: Optional[float] = None,
                fins: Optional[Sequence[Optional[float]]] = None) -> None:
        """Thruster actuation [-1, 1] and fin deflections [rad] (None: as it is), clipped."""
        if thrust_act is not None:
            self.thrust_act = clamp(float(thrust_act), -1.0, 1.0)
        if fins is not None:
            lim = self.t.max_fin_rad
            for k, d in enumerate(fins):
                if d is not None:
                    self.fin_cmd[k] = clamp(float(d), -lim, lim)

    def submerged(self, depth_m: float) -> float:
        """Submerged fraction of the hull's height at the given depth of its axis [0, 1]."""
        d = self.t.diameter_m
        return clamp((depth_m + 0.5 * d) / d, 0.0, 1.0)

    def thrust(self, speed: float) -> float:
        """Thruster force [N] along body x at speed [m/s] through the water."""
        t = self.t
        n = self.thrust_act * t.max_rpm / 60.0
        f = (t.thruster_k1 * n - t.thruster_k2 * speed) * abs(n)
        return clamp(f, -t.max_thrust_n, t.max_thrust_n)

    def _deriv(self, q, nu, depth):
        t = self.t
        u, v, w, p, qq, r = nu
        ld, qd, bl = t.linear_drag, t.quadratic_drag, t.body_lift
        f = [ld[0] * u + qd[0] * u * abs(u),
             ld[1] * v + ld[6] * r + qd[1] * v * abs(v) + qd[6] * r * abs(r),
             ld[2] * w + ld[7] * qq + qd[2] * w * abs(w) + qd[7] * qq * abs(qq),
             ld[3] * p + qd[3] * p * abs(p),
             ld[4] * qq + ld[8] * w + qd[4] * qq * abs(qq) + qd[8] * w * abs(w),
             ld[5] * r + ld[9] * v + qd[5] * r * abs(r) + qd[9] * v * abs(v)]
        f[1] += (bl[0] * v + bl[1] * r) * u
        f[2] += (bl[2] * w + bl[3] * qq) * u
        f[4] += (bl[4] * w + bl[5] * qq) * u
        f[5] += (bl[6] * v + bl[7] * r) * u
        # Kirchhoff: -(w x P), -(v x P + w x H)
        lin, ang = (u, v, w), (p, qq, r)
        P = (self.m_eff[0] * u, self.m_eff[1] * v, self.m_eff[2] * w)
        H = (self.i_eff[0] * p, self.i_eff[1] * qq, self.i_eff[2] * r)
        a, b, c = _cross(ang, P), _cross(lin, P), _cross(ang, H)
        for i in range(3):
            f[i] -= a[i]
            f[3 + i] -= b[i] + c[i]
        # restoring: weight at the CG (origin), buoyancy at the CB, in the body frame
        R = rot(q)
        s = self.submerged(depth)
        grav = mul_t(R, (0.0, 0.0, self.weight - self.buoyancy * s))
        up = mul_t(R, (0.0, 0.0, -self.buoyancy * s))
        m_b = _cross((0.0, 0.0, -t.cb_above_cg_m), up)
        for i in range(3):
            f[i] += grav[i]
            f[3 + i] += m_b[i]
        speed2 = u * u + v * v + w * w
        k = s * speed2 / t.max_fin_rad
        for fin, d in zip(t.fins, self.fin_cmd):
            if d:
                ff = (fin.force_n[0] * d * k, fin.force_n[1] * d * k, fin.force_n[2] * d * k)
                mm = _cross(fin.position_m, ff)
                for i in range(3):
                    f[i] += ff[i]
                    f[3 + i] += mm[i]
        th = self.thrust(math.sqrt(speed2))
        f[0] += th
        self.thrust_n = th
        nu_dot = tuple(f[i] / m for i, m in enumerate(self.m_eff + self.i_eff))
        p_dot = _mul(R, lin)
        p_dot = (p_dot[0] + self.current[0], p_dot[1] + self.current[1],
                 p_dot[2] + self.current[2])
        qw, qx, qy, qz = q
        q_dot = (0.5 * (-qx * p - qy * qq - qz * r), 0.5 * (qw * p + qy * r - qz * qq),
                 0.5 * (qw * qq - qx * r + qz * p), 0.5 * (qw * r + qx * qq - qy * p))
        return p_dot, q_dot, nu_dot

    def step(self, dt: float) -> None:
        """Integrate dt [s] (RK4) with the commands in force."""
        p0, q0, n0 = self.p, self.q, self.nu
        v0 = self.velocity_ned()

        def at(k, h):
            kp, kq, kn = k
            return ([a + h * b for a, b in zip(p0, kp)], [a + h * b for a, b in zip(q0, kq)],
                    [a + h * b for a, b in zip(n0, kn)])
        k1 = self._deriv(q0, n0, p0[2])
        p, q, n = at(k1, 0.5 * dt)
        k2 = self._deriv(q, n, p[2])
        p, q, n = at(k2, 0.5 * dt)
        k3 = self._deriv(q, n, p[2])
        p, q, n = at(k3, dt)
        k4 = self._deriv(q, n, p[2])
        w = dt / 6.0
        self.p = [a + w * (b1 + 2 * b2 + 2 * b3 + b4)
                  for a, b1, b2, b3, b4 in zip(p0, k1[0], k2[0], k3[0], k4[0])]
        qn = [a + w * (b1 + 2 * b2 + 2 * b3 + b4)
              for a, b1, b2, b3, b4 in zip(q0, k1[1], k2[1], k3[1], k4[1])]
        norm = math.sqrt(sum(x * x for x in qn))
        self.q = [x / norm for x in qn]
        self.nu = [a + w * (b1 + 2 * b2 + 2 * b3 + b4)
                   for a, b1, b2, b3, b4 in zip(n0, k1[2], k2[2], k3[2], k4[2])]
        self.nu_dot = self._deriv(self.q, self.nu, self.p[2])[2]
        v1 = self.velocity_ned()
        self.acc_ned = ((v1[0] - v0[0]) / dt, (v1[1] - v0[1]) / dt, (v1[2] - v0[2]) / dt)

    def velocity_ned(self) -> Tuple[float, float, float]:
        """Velocity over ground [m/s], NED."""
        v = _mul(rot(self.q), self.nu[:3])
        return (v[0] + self.current[0], v[1] + self.current[1], v[2] + self.current[2])

    def euler(self) -> Tuple[float, float, float]:
        """Roll, pitch, yaw [rad] (ZYX, NED <- FRD)."""
        w, x, y, z = self.q
        roll = math.atan2(2 * (w * x + y * z), 1 - 2 * (x * x + y * y))
        pitch = math.asin(clamp(2 * (w * y - z * x), -1.0, 1.0))
        yaw = math.atan2(2 * (w * z + x * y), 1 - 2 * (y * y + z * z))
        return roll, pitch, yaw

    @property
    def depth(self) -> float:
        """Depth of the body axis [m] (negative: above the surface)."""
        return self.p[2]

    def speed(self) -> float:
        """Speed through the water [m/s]."""
        u, v, w = self.nu[:3]
        return math.sqrt(u * u + v * v + w * w)
