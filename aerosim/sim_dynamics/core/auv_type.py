"""A torpedo AUV's type file: its coefficients and fins (pure, no rclpy).

kinds/auv/params/<name>.yaml holds DUNE's VSIM coefficients of one AUV type (the meaning of each in
sim_dynamics.core.auv, the model that integrates them, which re-exports every name here);
this module reads and checks the file, and maps AeroSim's rudder/elevator arrays onto the
type's fins (servo ids, DUNE's SetServoPosition ids).
"""

from pathlib import Path
from typing import Annotated, Any, List, Literal, Optional, Sequence, Tuple

from pydantic import Field, field_validator

from sim_core.paths import read_yaml
from sim_core.schema import FileModel, quantity, rule, vector

RUDDER, ELEVATOR = 'rudder', 'elevator'
Place = Annotated[float, Field(ge=-20.0, le=20.0)]             # m, on the hull
Force = Annotated[float, Field(ge=-1e5, le=1e5)]               # N
NonNegative = Annotated[float, Field(ge=0.0)]
Inertia = Annotated[float, Field(ge=1e-6)]
Text = Annotated[str, Field(min_length=1)]
Coefficients = Tuple[float, ...]
DIAGONAL = 6                    # the first six drag terms damp their own velocity


class Fin(FileModel):
    """One control fin: servo id, role, position (body FRD [m]), force at full deflection."""

    servo: int = quantity(..., "DUNE's SetServoPosition id (VSIM's fin number)", '-', ge=0,
                          le=255)
    surface: Literal['rudder', 'elevator'] = Field(..., description='rudder (turns the '
                                                   'vehicle) or elevator (pitches it)')
    position_m: Tuple[Place, Place, Place] = vector(..., 'Its position, body FRD', 'm')
    force_n: Tuple[Force, Force, Force] = vector(..., 'Its force at +max_fin_rad and 1 m/s, '
                                                 'body FRD', 'N')


def _drag(description: str, n: int) -> Any:
    """N coefficients [N/(m/s), N/(rad/s), N m/(m/s), N m/(rad/s), ... as each term needs]."""
    return vector(..., description + ' [N, N m per (m/s) or (rad/s), or their squares]',
                  min_length=n, max_length=n)


class AuvType(FileModel):
    """Parameters of one AUV type (SI; YAML files in kinds/auv/params, each with its source).

    DUNE VSIM's coefficients; sim_dynamics.core.auv says how each enters the model.
    """

    what = 'AUV type'
    name: Text = Field(..., description='Its name')
    source: Text = Field(..., description='Where its numbers come from')
    length_m: float = quantity(..., 'Hull length (contact sphere, viewers)', 'm', gt=0.0,
                               le=20.0)
    diameter_m: float = quantity(..., 'Hull diameter: its height, how much floats out at the '
                                 'surface', 'm', gt=0.0, le=3.0)
    mass_kg: float = quantity(..., 'Mass (without added mass)', 'kg', gt=0.0, le=1e5)
    added_mass_kg: Tuple[NonNegative, NonNegative, NonNegative] = vector(
        ..., 'Added mass in surge, sway, heave (-X_udot, -Y_vdot, -Z_wdot)', 'kg')
    inertia_kgm2: Tuple[Inertia, Inertia, Inertia] = vector(
        ..., 'Moments of inertia in roll, pitch, yaw, with the added inertia', 'kg m^2')
    reserve_buoyancy_n: float = quantity(..., 'Buoyancy less weight, fully submerged', 'N',
                                         ge=-1e5, le=1e5)
    cb_above_cg_m: float = quantity(..., 'Centre of buoyancy above the centre of gravity', 'm',
                                    ge=0.0, le=1.0)
    linear_drag: Coefficients = _drag("X_u Y_v Z_w K_p M_q N_r Y_r Z_q M_w N_v (VSIM's "
                                      'order); the first six <= 0 (they damp)', 10)
    quadratic_drag: Coefficients = _drag('The same, times |.| of the same velocity; the first '
                                         'six <= 0', 10)
    body_lift: Coefficients = _drag('Y_uv Y_ur Z_uw Z_uq M_uw M_uq N_uv N_ur', 8)
    fins: Tuple[Fin, ...] = vector(..., 'Its control fins (servo ids unique)', min_length=1,
                                   max_length=8)
    max_fin_rad: float = quantity(..., 'Fin deflection limit, +-', 'rad', gt=0.0, le=1.2)
    thruster_k1: float = quantity(..., 'Thrust per (rev/s)^2', 'N/(rev/s)^2', gt=0.0)
    thruster_k2: float = quantity(..., 'Thrust loss per (m/s)(rev/s)', 'N s/(m rev)', ge=0.0)
    max_rpm: float = quantity(..., 'Propeller speed limit', 'rpm', gt=0.0, le=1e5)
    max_thrust_n: float = quantity(..., 'Thrust limit', 'N', gt=0.0, le=1e6)
    max_depth_m: float = quantity(..., 'Its rated depth', 'm', gt=0.0, le=11000.0)
    cruise_speed_mps: float = quantity(..., 'Its usual speed through the water', 'm/s', gt=0.0,
                                       le=20.0)

    @field_validator('linear_drag', 'quadratic_drag')
    @classmethod
    def _damps(cls, v: Coefficients) -> Coefficients:
        for i, x in enumerate(v[:DIAGONAL]):
            if x > 0.0:     # a positive diagonal term would feed energy in
                raise rule(f'must be <= 0 (a diagonal damping term, a force against the '
                           f'motion), got {x:g}', i)
        return v

    @field_validator('fins')
    @classmethod
    def _servos(cls, v: Tuple[Fin, ...]) -> Tuple[Fin, ...]:
        if len({f.servo for f in v}) != len(v):
            raise rule('two fins with one servo id')
        return v


def fin_table(path) -> Tuple[Tuple[int, str], ...]:
    """(servo id, surface) of each fin of the vehicle file at path; () for a file without fins.

    A vehicle file with `fins:` is an AUV type (ConfigError if it is not a valid one); any
    other (a boat's) has no fins.
    """
    raw = read_yaml(Path(path), 'vehicle')
    if not isinstance(raw, dict) or 'fins' not in raw:
        return ()
    return tuple((f.servo, f.surface) for f in AuvType.from_yaml(path).fins)


def fins_by_surface(t: AuvType, rudders: Sequence[float], elevators: Sequence[float]
                    ) -> List[Optional[float]]:
    """Fin deflections in fin order from AeroSim's arrays (rudder / elevator, each in order).

    A missing entry is None (that fin as it is).
    """
    out: List[Optional[float]] = []
    it = {RUDDER: iter(rudders), ELEVATOR: iter(elevators)}
    for fin in t.fins:
        out.append(next(it[fin.surface], None))
    return out
