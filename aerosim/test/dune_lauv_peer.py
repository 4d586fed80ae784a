"""A test peer that behaves as DUNE's LAUV (lauv-simulator-1) does towards an external plant.

Written from DUNE's sources (master f8080c0f), not from our bridge, with the rates and gains
of DUNE's LAUV configuration files (STOCK_LAUV, each value with the file it comes from) as
our config/dune/aerosim-lauv.ini requires them (``[Require lauv-simulator-1.ini]``, read as
DUNE reads it: dune_peer.read_dune_ini). Discovery and the UDP transport (contacts,
activation, rate limiters) are dune_peer's. The chain, on DUNE's clock (the SimulatedState
stamps: the bridge's ``timestamps: sim`` lets a test run off real time):

- Sensor simulators on each SimulatedState (src/Simulators/*): AHRS (phi, theta, psi, p, q, r;
  IMU/Task.cpp), GPS at 1 Hz, a fix only with z <= Activation Depth 0.2 m (GPS/Task.cpp:
  invalid fixes below), DVL at 5 Hz (ground velocity = u, v, w + the stream in the body
  frame; DVL/Task.cpp), the depth sensor at 10 Hz (z; DepthSensor/Task.cpp). Their noise and
  the DVL's 10 % invalid readings are left out.
- Navigation.AUV.Navigation at 20 Hz (src/Navigation/AUV/Navigation/Task.cpp): starts on the
  first valid fix; x, y from each valid fix, else dead-reckoned on the DVL's body ground
  velocity turned by the heading (its EKF's planar kinematics, x' = u cos psi - v sin psi);
  one EstimatedState per cycle. DUNE's navigation error under water is this dead reckoning's.
- Control.Path.VectorField at 10 Hz (src/DUNE/Control/PathController.cpp, VectorField/Task.cpp):
  heading = bearing - atan(tan(entry angle) / corridor width * cross-track), plus the course
  correction psi - atan2(vy, vx) (Course Control); a Goto is done when its ETA (distance /
  speed - Time Of Arrival Factor 5 s) reaches 0; its DesiredZ is the Goto's z, a step.
- Control.AUV.Attitude on each EstimatedState (src/Control/AUV/Attitude/Task.cpp):
  pitch_ref = -PID_depth(z_ref - depth, -zdot) within +-15 deg (10 deg nose up when the
  reference and the depth are both within 0.3 m of the surface); m = PID_pitch(pitch_ref -
  theta, -(q cos phi - r sin phi)) within +-25 deg; rate_ref = PID_heading(wrap(psi_ref - psi))
  within +-30 deg/s; n = PID_rate(rate_ref - r) within +-25 deg; k = PID_roll(-phi, -(p + ...))
  when ``Enable roll controller`` (stock: true; our ini: false).
- Control.AUV.Allocator (Allocator/Task.cpp): fins 0, 3 (rudders) = -n, fins 1, 2 (elevators)
  = -m, the roll k added antisymmetrically (1 and 3 +k, 0 and 2 -k) within the margins, each
  fin within +-25 deg and 300 deg/s: four SetServoPosition, which the LAUV ini's UDP rate
  limiter (SetServoPosition:1, one per second) mostly keeps from the network.
- Simulators.Servos (Servos/Task.cpp): on each SimulatedState each fin moves toward its
  command at 333.3 deg/s (within 45 deg) and four ServoPosition go out (no rate limiter): the
  fins the plant takes.
- Control.AUV.Speed in m/s (Speed/Task.cpp) on each EstimatedState: rpm = 1000 v + 25 int(v -
  u) (|int| <= 400), at most 80 rpm/s change, within [200, 1700]; on each Rpm of
  Simulators.Motor (20 Hz) SetThrusterActuation = rpm / 2500.
- Maneuvers (src/Maneuver/Multiplexer): Goto (a track from the last Goto's end, the first from
  where the vehicle is); StationKeeping: to its point at its z, and inside its radius the loops
  are off (thruster 0, fins 0: DUNE's CL_NONE; the vehicle drifts, an AUV floats up); done
  ``duration`` seconds after it first got inside.
"""

import math

import imcpy

from dune_peer import SHIPPED_INI, STOCK, DuneConfig, DunePeer, Periodic, wrap

LAUV_INI = SHIPPED_INI.parent / 'aerosim-lauv.ini'
D = math.radians
# DUNE's LAUV configuration (etc/lauv-simulator-1.ini and what it requires, master f8080c0f).
STOCK_LAUV = {
    ('General', 'Time Of Arrival Factor'): '5.0',                       # auv/general.ini
    ('General', 'Underwater Depth Threshold'): '0.3',                   # auv/general.ini
    ('General', 'Maximum Underwater RPMs'): '1700',                     # auv/general.ini
    ('Simulators.GPS', 'Execution Frequency'): '1',                     # auv/simulator.ini
    ('Simulators.GPS', 'Activation Depth'): '0.2',                      # auv/simulator.ini
    ('Simulators.DVL', 'Execution Frequency'): '5',                     # lauv-simulator-1.ini
    ('Simulators.DepthSensor', 'Execution Frequency'): '10',            # lauv-simulator-1.ini
    ('Simulators.Motor', 'Execution Frequency'): '20',                  # auv/simulator.ini
    ('Simulators.Servos', 'Maximum Angle'): '45',                       # auv/simulator.ini
    ('Simulators.Servos', 'Maximum Rate'): '333.3',                     # auv/simulator.ini
    ('Navigation.AUV.Navigation', 'Execution Frequency'): '20',         # auv/navigation.ini
    ('Control.Path.VectorField', 'Control Frequency'): '10',            # auv/control.ini
    ('Control.Path.VectorField', 'Corridor -- Width'): '1.5',           # auv/control.ini
    ('Control.Path.VectorField', 'Corridor -- Entry Angle'): '15',      # auv/control.ini
    ('Control.Path.VectorField', 'ETA Minimum Speed'): '0.1',           # PathController.cpp
    ('Control.AUV.Attitude', 'Depth PID Gains'): '0.6, 0.0, 0.7',       # auv/control.ini
    ('Control.AUV.Attitude', 'Maximum Pitch Reference'): '15.0',
    ('Control.AUV.Attitude', 'Pitch Angle At Surface'): '10.0',
    ('Control.AUV.Attitude', 'Pitch PID Gains'): '1.5, 0.0, 1.1',
    ('Control.AUV.Attitude', 'Maximum Pitch Actuation'): '25.0',
    ('Control.AUV.Attitude', 'Heading PID Gains'): '1.5, 0.0, 0.0',
    ('Control.AUV.Attitude', 'Maximum Heading Rate'): '30.0',
    ('Control.AUV.Attitude', 'Heading Rate PID Gains'): '1.2, 0.0, 0.0',
    ('Control.AUV.Attitude', 'Maximum Fin Rotation'): '25.0',
    ('Control.AUV.Attitude', 'Roll PID Gains'): '2.1, 0.0, 0.4',
    ('Control.AUV.Attitude', 'Enable roll controller'): 'true',
    ('Control.AUV.Allocator', 'Maximum Fin Rotation'): '25.0',          # auv/control.ini
    ('Control.AUV.Allocator', 'Maximum Rotation Rate'): '300.0',
    ('Control.AUV.Speed', 'MPS Feedforward Gain'): '1000.0',            # auv/control.ini
    ('Control.AUV.Speed', 'MPS PID Gains'): '0.0, 25.0, 0.0',
    ('Control.AUV.Speed', 'MPS Integral Limit'): '400.0',
    ('Control.AUV.Speed', 'Minimum RPM Limit'): '200',
    ('Control.AUV.Speed', 'Maximum RPM Acceleration'): '80',
    ('Control.AUV.Speed', 'RPMs at Maximum Thrust'): '2500',
    # etc/common/transports.ini, then etc/auv/transports.ini's "Rate Limiters+"
    ('Transports.UDP', 'Rate Limiters'): 'CpuUsage:0.2, Distance:0.2, EntityState:1, '
                                         'EstimatedState:2, FuelLevel:0.1, Rpm:1, '
                                         'SimulatedState:0.5, StorageUsage:0.05, '
                                         'Temperature:0.1, Voltage:0.1, AlignmentState:0.5, '
                                         'Rpm:1, SetServoPosition:1',
}
STOCK['Require lauv-simulator-1.ini'] = STOCK_LAUV
LAUV_ID = 0x3F04


def goto(north, east, z, speed=1.25):
    """A Goto maneuver to (north, east) [m] at depth z [m], speed [m/s]."""
    return {'kind': 'goto', 'to': (float(north), float(east)), 'z': float(z),
            'speed': float(speed)}


def station(north, east, z, radius, duration, speed=1.25):
    """A StationKeeping maneuver at (north, east) [m], depth z, radius [m], duration [s]."""
    return {'kind': 'station', 'to': (float(north), float(east)), 'z': float(z),
            'radius': float(radius), 'duration': float(duration), 'speed': float(speed)}


class Pid:
    """DUNE's DiscretePID step as the Attitude task uses it: Kp e + Kd de (+ I: Ki 0 here)."""

    def __init__(self, gains, limit):
        self.kp, self.ki, self.kd = gains
        self.limit = limit
        self.i = 0.0

    def step(self, e, de, dt):
        out = self.kp * e + self.kd * de + self.i
        self.i += self.ki * e * dt
        return max(-self.limit, min(self.limit, out))


class DuneLauvPeer(DunePeer):
    """DUNE's discovery + UDP transport + LAUV sensors, navigation, control and maneuvers."""

    def __init__(self, udp_port, discovery_port, plan, ini=LAUV_INI):
        """udp_port: DUNE's transport port; discovery_port: one of its discovery ports.

        plan: maneuvers (goto(), station()) flown in order once the navigation has a fix.
        """
        cfg = self.cfg = DuneConfig(ini)
        self._open_transport(udp_port, discovery_port, LAUV_ID)
        self.plan = list(plan)
        att, pc, sp = 'Control.AUV.Attitude', 'Control.Path.VectorField', 'Control.AUV.Speed'
        self.pid_depth = Pid(cfg.nums(att, 'Depth PID Gains'),
                             D(cfg.num(att, 'Maximum Pitch Reference')))
        self.pid_pitch = Pid(cfg.nums(att, 'Pitch PID Gains'),
                             D(cfg.num(att, 'Maximum Pitch Actuation')))
        self.pid_heading = Pid(cfg.nums(att, 'Heading PID Gains'),
                               D(cfg.num(att, 'Maximum Heading Rate')))
        fin = D(cfg.num(att, 'Maximum Fin Rotation'))
        self.pid_rate = Pid(cfg.nums(att, 'Heading Rate PID Gains'), fin)
        self.pid_roll = Pid(cfg.nums(att, 'Roll PID Gains'), fin)
        self.roll_on = cfg.get(att, 'Enable roll controller').strip().lower() == 'true'
        self.surface_pitch = D(cfg.num(att, 'Pitch Angle At Surface'))
        self.underwater = cfg.num('General', 'Underwater Depth Threshold')
        self.fin_max = D(cfg.num('Control.AUV.Allocator', 'Maximum Fin Rotation'))
        self.fin_rate = D(cfg.num('Control.AUV.Allocator', 'Maximum Rotation Rate'))
        self.servo_max = D(cfg.num('Simulators.Servos', 'Maximum Angle'))
        self.servo_rate = D(cfg.num('Simulators.Servos', 'Maximum Rate'))
        self.path_period = 1.0 / cfg.num(pc, 'Control Frequency')
        self.path_gain = (math.tan(D(cfg.num(pc, 'Corridor -- Entry Angle')))
                          / cfg.num(pc, 'Corridor -- Width'))
        self.eta_min_speed = cfg.num(pc, 'ETA Minimum Speed')
        self.time_factor = cfg.num('General', 'Time Of Arrival Factor')
        self.mps_ff = cfg.num(sp, 'MPS Feedforward Gain')
        self.mps_ki = cfg.nums(sp, 'MPS PID Gains')[1]
        self.mps_int_limit = cfg.num(sp, 'MPS Integral Limit')
        self.rpm_limits = (cfg.num(sp, 'Minimum RPM Limit'),
                           cfg.num('General', 'Maximum Underwater RPMs'))
        self.max_rpm_accel = cfg.num(sp, 'Maximum RPM Acceleration')
        self.rpms_eos = cfg.num(sp, 'RPMs at Maximum Thrust')
        self.gps_depth = cfg.num('Simulators.GPS', 'Activation Depth')
        self.gps = Periodic(cfg.num('Simulators.GPS', 'Execution Frequency'))
        self.dvl = Periodic(cfg.num('Simulators.DVL', 'Execution Frequency'))
        self.depth_sensor = Periodic(cfg.num('Simulators.DepthSensor', 'Execution Frequency'))
        self.nav = Periodic(cfg.num('Navigation.AUV.Navigation', 'Execution Frequency'))
        self.motor = Periodic(cfg.num('Simulators.Motor', 'Execution Frequency'))
        self.sent = {'SetServoPosition': 0, 'ServoPosition': 0, 'SetThrusterActuation': 0}
        self.maneuver = None        # index in plan (None: not started)
        self.done_at = []           # DUNE time each maneuver was done
        self.arrived = False
        self.nav_error = []         # (DUNE time, depth, horizontal error [m]) per navigation
        self.rolls = []             # the true roll [rad] of each SimulatedState
        self._fix = None            # the last valid GpsFix (x, y), consumed by the navigation
        self._dvl = None            # body ground velocity (u, v, w) of the last DVL reading
        self._depth = 0.0
        self._xy = None             # the navigation's position (None: no fix yet)
        self._depth_hist = []       # (t, depth): its heave from the depth's rate
        self._est = None            # the last EstimatedState, a dict
        self._nav_t = None
        self._path_t = None
        self._track = None          # (start, end, bearing, length)
        self._z_ref = 0.0
        self._psi_ref = 0.0
        self._speed_ref = 0.0
        self._loops = False         # CL_DEPTH | CL_YAW | CL_SPEED on (else CL_NONE)
        self._inside_since = None
        self._fin_cmd = [0.0] * 4   # the allocator's last output (rad)
        self._servo = [0.0] * 4     # where Simulators.Servos has the fins
        self._servo_t = None
        self._mps_int = 0.0
        self._rpm = self._prev_rpm = 0.0
        self._alloc_t = None
        self._speed_t = None

    # --- sensors, servos and navigation, on each SimulatedState ------------------------------
    def _on_simulated_state(self, s):
        now = s.timestamp
        self._sstate = s
        self.rolls.append(s.phi)
        if self.gps.due(now) and s.z <= self.gps_depth:
            self._fix = (s.x, s.y)
        if self.dvl.due(now):
            cp, sp_ = math.cos(s.theta), math.sin(s.theta)
            cr, sr = math.cos(s.phi), math.sin(s.phi)
            cy, sy = math.cos(s.psi), math.sin(s.psi)
            # the stream in the body frame: R^T (svx, svy, svz), R = Rz Ry Rx
            n, e, d = s.svx, s.svy, s.svz
            xh = cy * n + sy * e
            yh = -sy * n + cy * e
            bx = cp * xh - sp_ * d
            by = cr * yh + sr * (sp_ * xh + cp * d)
            bz = -sr * yh + cr * (sp_ * xh + cp * d)
            self._dvl = (s.u + bx, s.v + by, s.w + bz)
        if self.depth_sensor.due(now):
            self._depth = max(0.0, s.z)
        self._servos(now)
        if self.nav.due(now):
            self._navigate(s, now)
        if self.motor.due(now):
            self._on_rpm(now)

    def _servos(self, now):
        dt = 0.0 if self._servo_t is None else max(0.0, now - self._servo_t)
        self._servo_t = now
        step = self.servo_rate * dt
        for i, c in enumerate(self._fin_cmd):
            c = max(-self.servo_max, min(self.servo_max, c))
            self._servo[i] += max(-step, min(step, c - self._servo[i]))
            sp = imcpy.ServoPosition()
            sp.id, sp.value = i, self._servo[i]
            self._send(sp, now)

    def _navigate(self, s, now):
        dt = 0.0 if self._nav_t is None else now - self._nav_t
        self._nav_t = now
        if self._xy is None:
            if self._fix is None:
                return                               # BOOT: waiting for a GPS fix
            self._xy = self._fix
        elif self._fix is not None:
            self._xy = self._fix
        elif self._dvl is not None:                  # dead reckoning on the DVL
            u, v = self._dvl[0], self._dvl[1]
            x, y = self._xy
            self._xy = (x + (u * math.cos(s.psi) - v * math.sin(s.psi)) * dt,
                        y + (u * math.sin(s.psi) + v * math.cos(s.psi)) * dt)
        self._fix = None
        self._depth_hist = [(t, z) for t, z in self._depth_hist if now - t < 2.0] \
            + [(now, self._depth)]
        t0, z0 = self._depth_hist[0]
        w = (self._depth - z0) / (now - t0) if now > t0 else 0.0
        u, v, _ = self._dvl if self._dvl is not None else (s.u, s.v, s.w)
        cy, sy = math.cos(s.psi), math.sin(s.psi)
        self._est = {'x': self._xy[0], 'y': self._xy[1], 'depth': self._depth, 'phi': s.phi,
                     'theta': s.theta, 'psi': s.psi, 'u': u, 'v': v, 'w': w, 'p': s.p,
                     'q': s.q, 'r': s.r, 'vx': u * cy - v * sy, 'vy': u * sy + v * cy}
        self.nav_error.append((now, s.z, math.hypot(self._xy[0] - s.x, self._xy[1] - s.y)))
        self._on_estimated_state(now)

    # --- maneuvers and path ------------------------------------------------------------------
    def _on_estimated_state(self, now):
        if self.arrived:
            return
        if self.maneuver is None:
            self._start(0, (self._est['x'], self._est['y']), now)
        self._path_step(now)
        if self._loops:
            self._attitude(now)
            self._speed_step(now)

    def _start(self, k, start, now):
        self.maneuver = k
        m = self.plan[k]
        end = m['to']
        self._track = (start, end, math.atan2(end[1] - start[1], end[0] - start[0]),
                       math.hypot(end[0] - start[0], end[1] - start[1]))
        self._z_ref, self._speed_ref = m['z'], m['speed']
        self._path_t = None
        self._inside_since = None
        self._loops = True

    def _done(self, now):
        self.done_at.append(now)
        end = self.plan[self.maneuver]['to']
        if self.maneuver + 1 < len(self.plan):
            return self._start(self.maneuver + 1, end, now)
        self.arrived = True
        self._stop(now)

    def _stop(self, now):
        """CL_NONE: the speed controller sends 0, the fins go to 0."""
        self._loops = False
        self._fin_cmd = [0.0] * 4
        self._thrust(0.0, now)
        self._rpm = self._prev_rpm = 0.0

    def _path_step(self, now):
        if self._path_t is not None and now < self._path_t + self.path_period - 1e-6:
            return
        self._path_t = now
        m, e = self.plan[self.maneuver], self._est
        x, y = e['x'], e['y']
        (sn, se), end, bearing, length = self._track
        if m['kind'] == 'station':
            if math.hypot(end[0] - x, end[1] - y) <= m['radius']:
                if self._inside_since is None:
                    self._inside_since = now
                if self._loops:
                    self._stop(now)
            elif not self._loops:                    # drifted out: back to the station
                inside = self._inside_since
                self._start(self.maneuver, (x, y), now)
                self._inside_since = inside
            if self._inside_since is not None and now - self._inside_since >= m['duration']:
                return self._done(now)
            if not self._loops:
                return
        b = math.atan2(y - se, x - sn) - bearing
        r = math.hypot(x - sn, y - se)
        along, cross = r * math.cos(b), r * math.sin(b)
        if m['kind'] == 'goto':
            errx, erry = abs(length - along), abs(cross)
            speed = max(self.eta_min_speed, e['u'])
            dist = errx if errx <= erry < 1.75 * self.time_factor * speed else \
                math.hypot(errx, erry)
            if dist / speed - self.time_factor <= 0.0:
                return self._done(now)
        if along > length:
            ref = math.atan2(end[1] - y, end[0] - x)
        else:
            ref = bearing - math.atan(self.path_gain * cross)
        ref += e['psi'] - math.atan2(e['vy'], e['vx'])   # Course Control
        self._psi_ref = wrap(ref)

    # --- attitude, allocation and speed ------------------------------------------------------
    def _attitude(self, now):
        dt = 0.0 if self._alloc_t is None else max(0.0, now - self._alloc_t)
        self._alloc_t = now
        e = self._est
        phi, th = e['phi'], e['theta']
        cr, sr, cp = math.cos(phi), math.sin(phi), math.cos(th)
        zdot = -math.sin(th) * e['u'] + cp * (sr * e['v'] + cr * e['w'])
        if self._z_ref < self.underwater and abs(self._z_ref - e['depth']) < self.underwater:
            pitch_ref = self.surface_pitch               # Force Pitch At Surface
        else:
            pitch_ref = -self.pid_depth.step(self._z_ref - e['depth'], -zdot, dt)
        m = self.pid_pitch.step(pitch_ref - th, -(e['q'] * cr - e['r'] * sr), dt)
        rate_ref = self.pid_heading.step(wrap(self._psi_ref - e['psi']),
                                         -(sr * e['q'] + cr * e['r']) / cp, dt)
        n = self.pid_rate.step(rate_ref - e['r'], 0.0, dt)
        k = self.pid_roll.step(-phi, -(e['p'] + math.tan(th) * (sr * e['q'] + cr * e['r'])),
                               dt) if self.roll_on else 0.0
        self._allocate(n, m, k, dt, now)

    def _allocate(self, n, m, k, dt, now):
        lim = self.fin_max
        a_n = max(-lim, min(lim, n))
        a_m = max(-lim, min(lim, m))
        base = [-a_n, -a_m, -a_m, -a_n]
        margin = min(lim - abs(x) for x in base)
        a_k = max(-margin, min(margin, k))
        want = [base[0] - a_k, base[1] + a_k, base[2] - a_k, base[3] + a_k]
        step = self.fin_rate * dt
        for i, w in enumerate(want):
            self._fin_cmd[i] += max(-step, min(step, w - self._fin_cmd[i]))
            sv = imcpy.SetServoPosition()
            sv.id, sv.value = i, self._fin_cmd[i]
            self._send(sv, now)

    def _speed_step(self, now):
        dt = 0.0 if self._speed_t is None else max(0.0, now - self._speed_t)
        self._speed_t = now
        v_d = self._speed_ref
        if v_d < 0.1:
            rpm = 0.0
        else:
            self._mps_int += self.mps_ki * (v_d - self._est['u']) * dt
            self._mps_int = max(-self.mps_int_limit, min(self.mps_int_limit, self._mps_int))
            rpm = self._mps_int + self.mps_ff * v_d
        rpm = max(self._prev_rpm - self.max_rpm_accel * dt,
                  min(self._prev_rpm + self.max_rpm_accel * dt, rpm))
        rpm = max(self.rpm_limits[0], min(self.rpm_limits[1], rpm))
        self._rpm = self._prev_rpm = rpm

    def _on_rpm(self, now):
        if self._loops and not self.arrived:
            self._thrust(self._rpm / self.rpms_eos, now)

    def _thrust(self, value, now):
        th = imcpy.SetThrusterActuation()
        th.id, th.value = 0, max(-1.0, min(1.0, value))
        self._send(th, now)

    # --- figures ------------------------------------------------------------------------------
    def roll_rms_deg(self):
        """RMS of the true roll [deg] over the run."""
        return math.degrees(math.sqrt(sum(r * r for r in self.rolls) / len(self.rolls))) \
            if self.rolls else None

    def nav_error_under_water(self, depth_m=0.5):
        """(mean, max) horizontal navigation error [m] while deeper than depth_m."""
        errs = [e for _, z, e in self.nav_error if z > depth_m]
        return (sum(errs) / len(errs), max(errs)) if errs else (None, None)
