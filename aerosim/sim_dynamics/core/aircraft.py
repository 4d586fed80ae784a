"""A fixed-wing aircraft's description and interface types (pure, no rclpy, no JSBSim).

What the JSBSim wrapper (sim_dynamics.core.plane, which re-exports every name here) and its
callers share: the aircraft file (``AircraftParams``, kinds/plane/params/<name>.yaml), AeroSim's
two command types (``EffectorCommand``: surface angles; ``FlightCommand``: normalized pilot
commands, seed 002), the outputs (``AirData``: the PFD's air data; ``SurfaceState``: the
surfaces after the FCS), the pitot's impact pressure and the surfaces' display poses.
"""

import math
from typing import Annotated, Any, NamedTuple, Sequence, Tuple

from pydantic import Field

from sim_core.schema import FileModel, quantity, vector
from sim_core.units import KNOT_MPS

Text = Annotated[str, Field(min_length=1)]
Down = Annotated[float, Field(ge=-90.0, lt=0.0)]        # deg, a surface's negative stop
Up = Annotated[float, Field(gt=0.0, le=90.0)]           # deg, its positive stop


def _kts(description: str, hi: float = 300.0) -> Any:
    """A speed of the autopilot [kt]."""
    return quantity(..., description, 'kt', ge=10.0, le=hi)


class AircraftParams(FileModel):
    """An aircraft file (kinds/plane/params/*.yaml): the JSBSim model and our limits around it."""

    what = 'aircraft file'
    name: Text = Field(..., description='Its name')
    jsbsim_model: Text = Field(..., description='An aircraft of the jsbsim package (or of '
                               'jsbsim_root)')
    jsbsim_root: str = Field('', description="A folder with aircraft/<model>/ ('' = the jsbsim "
                             "package's)")
    engines: int = quantity(1, 'Its engines: throttle_cmd / power_cmd elements', '-', ge=1,
                            le=8)
    elevator_deg: Tuple[Down, Up] = vector(..., 'Elevator stops [negative, positive], positive '
                                           'trailing edge down (nose down)', 'deg')
    aileron_deg: Tuple[Down, Up] = vector(..., 'Left aileron stops [negative, positive], '
                                          'positive trailing edge down (roll right)', 'deg')
    rudder_deg: float = quantity(..., 'Rudder stop, +-, positive trailing edge left (nose '
                                 'left)', 'deg', ge=1.0, le=90.0)
    flap_deg: float = quantity(..., 'Full flaps (0 .. this)', 'deg', ge=0.0, le=90.0)
    steer_deg: float = quantity(..., 'Nose wheel steering, +-', 'deg', ge=0.0, le=90.0)
    asset_link: str = Field('', description="ActorModel.asset_link (the viewers' model)")
    rotate_kts: float = _kts('Vr: rotate at')
    climb_kts: float = _kts('Vy: best rate of climb')
    cruise_kts: float = _kts('Circuit / cruise airspeed', 600.0)
    approach_kts: float = _kts('Final approach airspeed')
    max_bank_deg: float = quantity(..., 'Bank limit of the heading hold', 'deg', ge=5.0,
                                   le=60.0)
    steer_with_rudder: bool = Field(False, description='The nose wheel turns with the rudder '
                                    '(HIL without a nose-wheel channel)')


class EffectorCommand(NamedTuple):
    """AeroSim's AircraftEffectorCommand arrays (empty = that device keeps its command)."""

    throttle: Sequence[float] = ()
    aileron_rad: Sequence[float] = ()
    elevator_rad: Sequence[float] = ()
    rudder_rad: Sequence[float] = ()
    thrust_tilt_rad: Sequence[float] = ()
    flap_rad: Sequence[float] = ()
    speedbrake_rad: Sequence[float] = ()
    landing_gear: Sequence[float] = ()
    wheel_steer_rad: Sequence[float] = ()
    wheel_brake: Sequence[float] = ()


class FlightCommand(NamedTuple):
    """AeroSim's FlightControlCommand: normalized pilot commands (signs of seed 002)."""

    power: Sequence[float] = ()
    roll: float = 0.0
    pitch: float = 0.0
    yaw: float = 0.0
    thrust_tilt: float = 0.0
    flap: float = 0.0
    speedbrake: float = 0.0
    landing_gear: float = 1.0
    wheel_steer: float = 0.0
    wheel_brake: float = 0.0


class AirData(NamedTuple):
    """JSBSim's air data and attitude, named by property (the PFD's sources, seed 002)."""

    vc_kts: float             # velocities/vc-kts: calibrated airspeed [kt]
    vtrue_kts: float          # velocities/vtrue-kts [kt]
    h_sl_ft: float            # position/h-sl-ft [ft]
    h_agl_ft: float           # position/h-agl-ft [ft]
    h_dot_fps: float          # velocities/h-dot-fps [ft/s], up
    pitch_rad: float          # attitude/pitch-rad
    roll_rad: float           # attitude/roll-rad
    heading_true_rad: float   # attitude/heading-true-rad, 0 = north, clockwise
    vdot_ft_sec2: float       # accelerations/vdot-ft_sec2
    lat_deg: float            # position/lat-geod-deg
    lon_deg: float            # position/long-gc-deg
    alpha_deg: float          # aero/alpha-deg
    beta_deg: float           # aero/beta-deg
    p_static_pa: float        # atmosphere/P-psf, static pressure [Pa]
    qc_pa: float              # impact pressure of vc (pitot - static) [Pa]


class SurfaceState(NamedTuple):
    """The surfaces' actual positions [rad] (after the FCS) and the propeller speed [rpm]."""

    aileron_left_rad: float
    aileron_right_rad: float
    elevator_rad: float
    rudder_rad: float
    flap_rad: float
    steer_rad: float
    propeller_rpm: float


def impact_pressure_pa(vc_kts: float) -> float:
    """Pitot-static differential pressure [Pa] of a calibrated airspeed [kt] (subsonic).

    The definition of calibrated airspeed: qc = P0 ((1 + 0.2 (Vc / a0)^2)^3.5 - 1), sea-level
    standard P0 = 101325 Pa, a0 = 340.294 m/s.
    """
    v = vc_kts * KNOT_MPS / 340.294
    return 101325.0 * ((1.0 + 0.2 * v * v) ** 3.5 - 1.0)


# Hinge points [m] in base_link (FLU, from the centre of gravity) of the Cessna 172's moving
# parts, approximate (36 ft span, 27 ft length, high wing): the poses of EffectorState, for
# display. Each: (position, body axis of the deflection, SurfaceState field, sign): the pose
# is the rotation by sign * angle about the axis (FLU): a trailing edge down is a negative
# rotation about +y, a rudder's trailing edge left a negative one about +z.
C172_EFFECTORS = {
    'aileron_left': ((-0.6, 4.2, 1.1), (0.0, 1.0, 0.0), 'aileron_left_rad', -1.0),
    'aileron_right': ((-0.6, -4.2, 1.1), (0.0, 1.0, 0.0), 'aileron_right_rad', -1.0),
    'flap_left': ((-0.6, 1.8, 1.1), (0.0, 1.0, 0.0), 'flap_rad', -1.0),
    'flap_right': ((-0.6, -1.8, 1.1), (0.0, 1.0, 0.0), 'flap_rad', -1.0),
    'elevator': ((-4.6, 0.0, 0.2), (0.0, 1.0, 0.0), 'elevator_rad', -1.0),
    'rudder': ((-4.9, 0.0, 1.0), (0.0, 0.0, 1.0), 'rudder_rad', -1.0),
    'nose_wheel': ((1.0, 0.0, -1.1), (0.0, 0.0, 1.0), 'steer_rad', 1.0),
}


def effector_poses():
    """{name: (hinge position [m], f(SurfaceState) -> q (w, x, y, z))}.

    Every aircraft gets the C172's layout (the JSBSim file does not place its surfaces).
    """
    def pose(axis, attr, sign):
        def q(s: SurfaceState):
            a = 0.5 * sign * getattr(s, attr)
            c, sn = math.cos(a), math.sin(a)
            return (c, axis[0] * sn, axis[1] * sn, axis[2] * sn)
        return q
    return {name: (pos, pose(axis, attr, sign))
            for name, (pos, axis, attr, sign) in C172_EFFECTORS.items()}
