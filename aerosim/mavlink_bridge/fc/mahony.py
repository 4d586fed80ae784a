"""Mahony complementary filter (MARG) in scalar floats: the ahrs.filters.Mahony algorithm.

Same equations, frames and conventions as ahrs 0.4 (z-up world, north on +y, quaternion
(w, x, y, z) body -> world, gyro bias integrated with k_I); test_fc checks it against ahrs on
the same input to 1e-9. Written out because ahrs' numpy implementation costs ~0.4 ms per
update (small-array np.cross), too slow for a 250 Hz loop at several times real time.
"""

import math


class MahonyFilter:
    """Attitude from gyro [rad/s], accelerometer [m/s^2] and magnetometer (any unit)."""

    def __init__(self, k_p: float = 1.0, k_i: float = 0.3):
        """k_p: proportional gain; k_i: bias integral gain (as ahrs)."""
        self.k_p = k_p
        self.k_i = k_i
        self.b = [0.0, 0.0, 0.0]

    def update(self, q, gyr, acc, mag, dt):
        """One MARG update from attitude q (w, x, y, z); returns the new q (tuple)."""
        gx, gy, gz = gyr
        if gx == 0.0 and gy == 0.0 and gz == 0.0:
            return tuple(q)
        w, x, y, z = q
        ax, ay, az = acc
        an = math.sqrt(ax * ax + ay * ay + az * az)
        if an > 0.0:
            ax, ay, az = ax / an, ay / an, az / an
            # R (body -> world) rows
            r00 = 1 - 2 * (y * y + z * z)
            r01 = 2 * (x * y - w * z)
            r02 = 2 * (x * z + w * y)
            r10 = 2 * (x * y + w * z)
            r11 = 1 - 2 * (x * x + z * z)
            r12 = 2 * (y * z - w * x)
            r20 = 2 * (x * z - w * y)
            r21 = 2 * (y * z + w * x)
            r22 = 1 - 2 * (x * x + y * y)
            # expected gravity direction in body: R^T (0, 0, 1)
            vax, vay, vaz = r20, r21, r22
            ex = ay * vaz - az * vay
            ey = az * vax - ax * vaz
            ez = ax * vay - ay * vax
            mx, my, mz = mag if mag is not None else (0.0, 0.0, 0.0)
            mn = math.sqrt(mx * mx + my * my + mz * mz)
            if mn > 0.0:
                mx, my, mz = mx / mn, my / mn, mz / mn
                hx = r00 * mx + r01 * my + r02 * mz
                hy = r10 * mx + r11 * my + r12 * mz
                hz = r20 * mx + r21 * my + r22 * mz
                by = math.sqrt(hx * hx + hy * hy)
                # expected field in body: R^T (0, by, hz), normalized
                vmx = r10 * by + r20 * hz
                vmy = r11 * by + r21 * hz
                vmz = r12 * by + r22 * hz
                vn = math.sqrt(vmx * vmx + vmy * vmy + vmz * vmz)
                vmx, vmy, vmz = vmx / vn, vmy / vn, vmz / vn
                ex += my * vmz - mz * vmy
                ey += mz * vmx - mx * vmz
                ez += mx * vmy - my * vmx
            b = self.b
            b[0] -= self.k_i * ex * dt
            b[1] -= self.k_i * ey * dt
            b[2] -= self.k_i * ez * dt
            gx = gx - b[0] + self.k_p * ex
            gy = gy - b[1] + self.k_p * ey
            gz = gz - b[2] + self.k_p * ez
        hdt = 0.5 * dt
        qw = w + (-x * gx - y * gy - z * gz) * hdt
        qx = x + (w * gx + y * gz - z * gy) * hdt
        qy = y + (w * gy - x * gz + z * gx) * hdt
        qz = z + (w * gz + x * gy - y * gx) * hdt
        n = math.sqrt(qw * qw + qx * qx + qy * qy + qz * qz)
        return (qw / n, qx / n, qy / n, qz / n)
