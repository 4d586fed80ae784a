"""Fixed-wing aircraft: a JSBSim model in the sim clock (pure, no rclpy).

JSBSim (the ``jsbsim`` wheel) integrates the aircraft named in kinds/plane/params/<name>.yaml
(default c172r, AeroSim's reference aircraft) at the simulation step. This module owns what
is ours around it:

- the initial condition from the scenario: on the runway (ground trim) or airborne at a speed
  (full trim), heading, wind and MIL-F-8785C turbulence;
- the two command types of AeroSim (seed 002), validated field by field:
  ``EffectorCommand`` (surface angles [rad], throttle, brakes, steering: the surfaces' own
  signs, as AeroSim's JSBSim FMU writes them) and ``FlightCommand`` (normalized pilot
  commands: roll/pitch/yaw -1..1, positive right wing down / nose up / nose right);
- the outputs in the ROS frames (``VehicleSample``: ENU/FLU from the scenario origin) and the
  air data AeroSim's flight deck reads (``AirData``: JSBSim's properties, named as in the
  PrimaryFlightDisplayData table of seed 002).

JSBSim's sign conventions, checked on the c172r: aileron-cmd-norm > 0 rolls right,
elevator-cmd-norm > 0 pitches nose down, rudder-cmd-norm > 0 yaws nose left, steer-cmd-norm
> 0 turns the nose wheel right. The FCS maps a normalized command c to a surface angle
c * max for c > 0 and c * |min| for c < 0 (aerosurface_scale); commands of surface angles are
mapped back through the same ranges.

The aircraft file, the command and output types are in sim_dynamics.core.aircraft (no JSBSim
needed to read or check them); this module is the JSBSim wrapper.
"""

import math
import os
from typing import Sequence, Tuple

from sim_core.errors import ConfigError, ModelDiverged
from sim_core.frames import VehicleSample, euler_ned_to_q_enu_flu
from sim_core.geodesy import GeoOrigin
from sim_core.units import FT_M, KNOT_MPS, PSF_PA, SLUG_FT2_KGM2, SLUG_KG
from sim_core.validate import FieldError, number, vector
from sim_dynamics.core.aircraft import (
    C172_EFFECTORS,
    AircraftParams,
    AirData,
    EffectorCommand,
    FlightCommand,
    SurfaceState,
    effector_poses,
    impact_pressure_pa,
)

# The aircraft's description and interface types live in aircraft; callers import them from
# here too. FT: sim_core.units.FT_M under its old name.
__all__ = ['Plane', 'AircraftParams', 'AirData', 'EffectorCommand', 'FlightCommand',
           'SurfaceState', 'C172_EFFECTORS', 'effector_poses', 'impact_pressure_pa', 'FT',
           'TURBULENCE', 'GROUND_START_M', 'GROUND_SETTLE_S', 'ANY_ANGLE']
FT = FT_M

# MIL-F-8785C turbulence (JSBSim atmosphere/turb-type 3, "Milspec"): probability-of-exceedance
# index and wind speed at 20 ft [kt] per intensity (MIL-F-8785C table: light 15 kt, moderate
# 30 kt, severe 45 kt at 20 ft).
TURBULENCE = {'none': (0, 0.0), 'light': (3, 15.0), 'moderate': (4, 30.0),
              'severe': (6, 45.0)}
# Height above ground below which a start is "on the runway" (ground trim) [m].
GROUND_START_M = 0.5
# JSBSim time the gear settles after a ground trim, before t = 0 [s].
GROUND_SETTLE_S = 3.0
# Range check of fields the aircraft may not have (speedbrake, tilt, gear) [rad or -].
ANY_ANGLE = math.pi


def _norm(angle_deg: float, lo: float, hi: float) -> float:
    """A surface angle [deg] -> the FCS's normalized command (aerosurface_scale inverse)."""
    return angle_deg / hi if angle_deg >= 0.0 else angle_deg / -lo


class Plane:
    """A JSBSim aircraft stepped at the simulation rate, in the scenario's frames."""

    def __init__(self, params: AircraftParams, origin: GeoOrigin, dt: float,
                 wind_enu: Sequence[float] = (0.0, 0.0, 0.0), turbulence: str = 'none'):
        """Load the JSBSim model (ConfigError if it cannot) with dt [s] as its step."""
        import jsbsim  # deferred: the wheel's C++ start-up only where a plane flies
        if turbulence not in TURBULENCE:
            raise ConfigError(f'environment.turbulence: must be one of '
                              f'{", ".join(TURBULENCE)}, got {turbulence!r}')
        os.environ.setdefault('JSBSIM_DEBUG', '0')
        self.params = params
        self.origin = origin
        self.dt = number(dt, 'dt', 1e-4, 0.1)
        self.wind_enu = vector(wind_enu, 'wind_enu', 3, -60.0, 60.0)
        self.turbulence = turbulence
        root = params.jsbsim_root or jsbsim.get_default_root_dir()
        self.fdm = jsbsim.FGFDMExec(root, None)
        self.fdm.set_debug_level(0)
        try:
            ok = self.fdm.load_model(params.jsbsim_model)
        except Exception as exc:    # noqa: BLE001 - JSBSim raises its own error types
            raise ConfigError(f'{params.name}.jsbsim_model: JSBSim cannot load '
                              f'{params.jsbsim_model!r} from {root}: {exc}') from None
        if not ok:
            raise ConfigError(f'{params.name}.jsbsim_model: JSBSim cannot load '
                              f'{params.jsbsim_model!r} from {root}')
        self.fdm.set_dt(self.dt)
        self.steps = 0
        self._t0 = 0.0
        self._v_prev = (0.0, 0.0, 0.0)
        self._a_enu = (0.0, 0.0, 0.0)

    # --- state --------------------------------------------------------------------------
    def reset(self, p_enu: Sequence[float] = (0.0, 0.0, 0.0), heading_deg: float = 0.0,
              speed_mps: float = 0.0) -> str:
        """Put the aircraft at p_enu [m] (z = height above the origin's ground), heading [deg].

        On the ground (z < 0.5 m): at rest, engine idling, ground trim. Airborne: speed_mps
        [m/s] calibrated airspeed (0 = the cruise speed), trimmed in level flight. Returns
        'ground' or 'air'. ConfigError if JSBSim finds no trim.
        """
        f = self.fdm
        lat, lon, _ = self.origin.enu_to_geodetic(p_enu[0], p_enu[1], 0.0)
        airborne = p_enu[2] >= GROUND_START_M
        f['ic/lat-geod-deg'] = lat
        f['ic/long-gc-deg'] = lon
        f['ic/terrain-elevation-ft'] = self.origin.alt_m / FT_M
        f['ic/h-agl-ft'] = p_enu[2] / FT_M if airborne else 0.0
        f['ic/psi-true-deg'] = heading_deg % 360.0
        vc = (speed_mps / KNOT_MPS if speed_mps > 0.0 else self.params.cruise_kts)
        f['ic/vc-kts'] = vc if airborne else 0.0
        f['ic/gamma-deg'] = 0.0
        # the wind blows from the start (JSBSim: NED [ft/s]); turbulence per MIL-F-8785C
        f['atmosphere/wind-north-fps'] = self.wind_enu[1] / FT_M
        f['atmosphere/wind-east-fps'] = self.wind_enu[0] / FT_M
        f['atmosphere/wind-down-fps'] = -self.wind_enu[2] / FT_M
        severity, w20 = TURBULENCE[self.turbulence]
        f['atmosphere/turb-type'] = 3 if severity else 0
        f['atmosphere/turbulence/milspec/severity'] = severity
        f['atmosphere/turbulence/milspec/windspeed_at_20ft_AGL-fps'] = w20 * KNOT_MPS / FT_M
        for k in ('fcs/aileron-cmd-norm', 'fcs/elevator-cmd-norm', 'fcs/rudder-cmd-norm',
                  'fcs/flap-cmd-norm', 'fcs/steer-cmd-norm', 'fcs/pitch-trim-cmd-norm',
                  'fcs/left-brake-cmd-norm', 'fcs/right-brake-cmd-norm',
                  'fcs/center-brake-cmd-norm'):
            f[k] = 0.0
        if not f.run_ic():
            raise ConfigError('JSBSim refused the initial condition')
        for i in range(self.params.engines):
            f[f'fcs/mixture-cmd-norm[{i}]'] = 1.0
            f[f'fcs/throttle-cmd-norm[{i}]'] = 0.0
        f['propulsion/set-running'] = -1        # every engine, magnetos on
        try:
            f['simulation/do_simple_trim'] = 1 if airborne else 2
        except Exception as exc:    # noqa: BLE001 - JSBSim's TrimFailureException
            raise ConfigError(f'JSBSim found no {"level-flight" if airborne else "ground"} '
                              f'trim at {p_enu[2]:g} m, {vc:g} kt: {exc}') from None
        if not airborne:
            # the ground trim leaves the gear's springs to settle (~1 s): let them, brakes on,
            # so that t = 0 finds the aircraft at rest on the runway
            for b in ('fcs/left-brake-cmd-norm', 'fcs/right-brake-cmd-norm'):
                f[b] = 1.0
            for _ in range(int(round(GROUND_SETTLE_S / self.dt))):
                f.run()
            for b in ('fcs/left-brake-cmd-norm', 'fcs/right-brake-cmd-norm'):
                f[b] = 0.0
        self._t0 = f.get_sim_time()
        self.steps = 0
        self._v_prev = self._v_enu()
        self._a_enu = (0.0, 0.0, 0.0)
        return 'air' if airborne else 'ground'

    # faster than this [m/s] the model has run away: a C172 never exceeds ~85 m/s (Vne 163 kts)
    MAX_SPEED_MPS = 340.0

    def step(self) -> None:
        """Advance one step of dt; ModelDiverged if JSBSim's state ran away."""
        self.fdm.run()
        self.steps += 1
        v = self._v_enu()
        speed = math.sqrt(sum(c * c for c in v))
        if not speed <= self.MAX_SPEED_MPS:          # also NaN
            raise ModelDiverged(
                f'JSBSim at t = {self.t:.2f} s: speed {speed:.3g} m/s (faster than '
                f'{self.MAX_SPEED_MPS:g} m/s: the aircraft model ran away)')
        self._a_enu = tuple((a - b) / self.dt for a, b in zip(v, self._v_prev))
        self._v_prev = v

    @property
    def t(self) -> float:
        """Time since reset() [s] (JSBSim's own clock, less the ground settling)."""
        return self.fdm.get_sim_time() - self._t0

    def _v_enu(self):
        f = self.fdm
        return (f['velocities/v-east-fps'] * FT_M, f['velocities/v-north-fps'] * FT_M,
                -f['velocities/v-down-fps'] * FT_M)

    def sample(self, t_ns: int) -> VehicleSample:
        """The state in the ROS frames (ENU from the origin, FLU body) at sim time t_ns."""
        f = self.fdm
        p = self.origin.geodetic_to_enu(f['position/lat-geod-deg'], f['position/long-gc-deg'],
                                        f['position/h-sl-meters'])
        q = euler_ned_to_q_enu_flu(f['attitude/phi-rad'], f['attitude/theta-rad'],
                                   f['attitude/psi-rad'])
        w = (f['velocities/p-rad_sec'], -f['velocities/q-rad_sec'], -f['velocities/r-rad_sec'])
        return VehicleSample(t_ns, p, self._v_prev, q, self._a_enu, w)

    def angular_acceleration_flu(self) -> Tuple[float, float, float]:
        """Body angular acceleration [rad/s^2], FLU."""
        f = self.fdm
        return (f['accelerations/pdot-rad_sec2'], -f['accelerations/qdot-rad_sec2'],
                -f['accelerations/rdot-rad_sec2'])

    def air_data(self) -> AirData:
        """The air data, attitude and position JSBSim computed at this step."""
        f = self.fdm
        vc = f['velocities/vc-kts']
        return AirData(
            vc, f['velocities/vtrue-kts'], f['position/h-sl-ft'], f['position/h-agl-ft'],
            f['velocities/h-dot-fps'], f['attitude/pitch-rad'], f['attitude/roll-rad'],
            f['attitude/heading-true-rad'], f['accelerations/vdot-ft_sec2'],
            f['position/lat-geod-deg'], f['position/long-gc-deg'], f['aero/alpha-deg'],
            f['aero/beta-deg'], f['atmosphere/P-psf'] * PSF_PA, impact_pressure_pa(vc))

    def surfaces(self) -> SurfaceState:
        """The surfaces' positions after the FCS (EffectorState)."""
        f = self.fdm
        return SurfaceState(
            f['fcs/left-aileron-pos-rad'], f['fcs/right-aileron-pos-rad'],
            f['fcs/elevator-pos-rad'], f['fcs/rudder-pos-rad'],
            math.radians(f['fcs/flap-pos-deg']), math.radians(f['fcs/steer-pos-deg']),
            f['propulsion/engine[0]/propeller-rpm'])

    def mass_properties(self):
        """(mass [kg], (Ixx, Iyy, Izz), (Ixy, Ixz, Iyz)) [kg m^2] in body FLU.

        JSBSim's structural frame is x aft, y right, z up; its body axes FRD. FRD -> FLU
        negates y and z: products Ixy and Ixz change sign, Iyz does not.
        """
        f = self.fdm
        m = f['inertia/mass-slugs'] * SLUG_KG
        k = SLUG_FT2_KGM2
        i = [f[f'inertia/i{a}-slugs_ft2'] * k for a in ('xx', 'yy', 'zz')]
        ixy, ixz, iyz = (f[f'inertia/i{a}-slugs_ft2'] * k for a in ('xy', 'xz', 'yz'))
        return m, tuple(i), (-ixy, -ixz, iyz)

    # --- commands -----------------------------------------------------------------------
    def check_effectors(self, c: EffectorCommand) -> EffectorCommand:
        """Validate an AircraftEffectorCommand; FieldError names the first bad field.

        Lengths: throttle 0 or one per engine; aileron 0, 1 (the left surface, the right one
        opposite) or 2 ([left, right], AeroSim's order); elevator, rudder, flap, steer,
        gear, tilt, speedbrake 0 or 1; brakes 0, 1 (all) or 3 ([center, left, right]).
        """
        p = self.params

        def arr(name, values, lengths, lo, hi):
            values = list(values)
            if len(values) not in lengths:
                raise FieldError('length', f'{name}: {len(values)} values, expected '
                                 f'{" or ".join(str(n) for n in lengths)}')
            return tuple(number(x, f'{name}[{i}]', lo, hi) for i, x in enumerate(values))

        rad = math.radians
        ail = arr('aileron_cmd_angle_rad', c.aileron_rad, (0, 1, 2),
                  rad(min(p.aileron_deg[0], -p.aileron_deg[1])),
                  rad(max(p.aileron_deg[1], -p.aileron_deg[0])))
        if ail:
            number(ail[0], 'aileron_cmd_angle_rad[0]', rad(p.aileron_deg[0]),
                   rad(p.aileron_deg[1]))
            if len(ail) == 2:
                number(ail[1], 'aileron_cmd_angle_rad[1]', -rad(p.aileron_deg[1]),
                       -rad(p.aileron_deg[0]))
        return EffectorCommand(
            arr('throttle_cmd', c.throttle, (0, p.engines), 0.0, 1.0), ail,
            arr('elevator_cmd_angle_rad', c.elevator_rad, (0, 1), rad(p.elevator_deg[0]),
                rad(p.elevator_deg[1])),
            arr('rudder_cmd_angle_rad', c.rudder_rad, (0, 1), -rad(p.rudder_deg),
                rad(p.rudder_deg)),
            arr('thrust_tilt_cmd_angle_rad', c.thrust_tilt_rad, (0, 1), -ANY_ANGLE, ANY_ANGLE),
            arr('flap_cmd_angle_rad', c.flap_rad, (0, 1), 0.0, rad(p.flap_deg)),
            arr('speedbrake_cmd_angle_rad', c.speedbrake_rad, (0, 1), 0.0, ANY_ANGLE),
            arr('landing_gear_cmd', c.landing_gear, (0, 1), 0.0, 1.0),
            arr('wheel_steer_cmd_angle_rad', c.wheel_steer_rad, (0, 1), -rad(p.steer_deg),
                rad(p.steer_deg)),
            arr('wheel_brake_cmd', c.wheel_brake, (0, 1, 3), 0.0, 1.0))

    def check_flight(self, c: FlightCommand) -> FlightCommand:
        """Validate a FlightControlCommand; FieldError names the first bad field."""
        power = list(c.power)
        if len(power) not in (0, self.params.engines):
            raise FieldError('length', f'power_cmd: {len(power)} values, expected 0 or '
                             f'{self.params.engines}')
        return FlightCommand(
            tuple(number(x, f'power_cmd[{i}]', 0.0, 1.0) for i, x in enumerate(power)),
            number(c.roll, 'roll_cmd', -1.0, 1.0), number(c.pitch, 'pitch_cmd', -1.0, 1.0),
            number(c.yaw, 'yaw_cmd', -1.0, 1.0),
            number(c.thrust_tilt, 'thrust_tilt_cmd', 0.0, 1.0),
            number(c.flap, 'flap_cmd', 0.0, 1.0), number(c.speedbrake, 'speedbrake_cmd', 0.0, 1.0),
            number(c.landing_gear, 'landing_gear_cmd', 0.0, 1.0),
            number(c.wheel_steer, 'wheel_steer_cmd', -1.0, 1.0),
            number(c.wheel_brake, 'wheel_brake_cmd', 0.0, 1.0))

    def apply_effectors(self, c: EffectorCommand) -> None:
        """Command surface angles (a checked EffectorCommand); the trim tab is zeroed.

        A surface angle is absolute: the pitch trim the initial trim set would add to it.
        """
        f, p = self.fdm, self.params
        deg = math.degrees
        for i, x in enumerate(c.throttle):
            f[f'fcs/throttle-cmd-norm[{i}]'] = x
        if c.aileron_rad:
            left = c.aileron_rad[0]
            if len(c.aileron_rad) == 2:     # the FCS moves them opposite: their mean difference
                left = 0.5 * (c.aileron_rad[0] - c.aileron_rad[1])
            f['fcs/aileron-cmd-norm'] = _norm(deg(left), *p.aileron_deg)
            f['fcs/roll-trim-cmd-norm'] = 0.0
        if c.elevator_rad:
            f['fcs/elevator-cmd-norm'] = _norm(deg(c.elevator_rad[0]), *p.elevator_deg)
            f['fcs/pitch-trim-cmd-norm'] = 0.0
        if c.rudder_rad:
            f['fcs/rudder-cmd-norm'] = deg(c.rudder_rad[0]) / p.rudder_deg
            f['fcs/yaw-trim-cmd-norm'] = 0.0
        if c.flap_rad and p.flap_deg > 0.0:
            f['fcs/flap-cmd-norm'] = deg(c.flap_rad[0]) / p.flap_deg
        if c.wheel_steer_rad and p.steer_deg > 0.0:
            # AeroSim: positive left (FLU yaw); JSBSim: positive right
            f['fcs/steer-cmd-norm'] = -deg(c.wheel_steer_rad[0]) / p.steer_deg
        self._brakes(c.wheel_brake)

    def apply_flight(self, c: FlightCommand) -> None:
        """Command normalized stick, pedals, power, flaps and brakes (a checked FlightCommand).

        The trim the initial trim set stays (a pilot's trim tab).
        """
        f = self.fdm
        for i, x in enumerate(c.power):
            f[f'fcs/throttle-cmd-norm[{i}]'] = x
        f['fcs/aileron-cmd-norm'] = c.roll
        f['fcs/elevator-cmd-norm'] = -c.pitch
        f['fcs/rudder-cmd-norm'] = -c.yaw
        f['fcs/flap-cmd-norm'] = c.flap
        f['fcs/steer-cmd-norm'] = c.wheel_steer
        self._brakes((c.wheel_brake,))

    def _brakes(self, b: Sequence[float]) -> None:
        if not b:
            return
        center, left, right = (b[0], b[0], b[0]) if len(b) == 1 else b
        f = self.fdm
        f['fcs/center-brake-cmd-norm'] = center
        f['fcs/left-brake-cmd-norm'] = left
        f['fcs/right-brake-cmd-norm'] = right
