"""A torpedo AUV's type file: its coefficients and fins (pure, no rclpy).

config/auvs/<name>.yaml holds DUNE's VSIM coefficients of one AUV type (the meaning of each in
sim_dynamics.core.auv, the model that integrates them, which re-exports every name here);
this module reads and checks the file, and maps AeroSim's rudder/elevator arrays onto the
type's fins (servo ids, DUNE's SetServoPosition ids).
"""

from dataclasses import dataclass
from pathlib import Path
from typing import List, Optional, Sequence, Tuple

from sim_core.errors import ConfigError
from sim_core.paths import read_yaml
from sim_core.validate import number, vector

RUDDER, ELEVATOR = 'rudder', 'elevator'


@dataclass(frozen=True)
class Fin:
    """One control fin: servo id, role, position (body FRD [m]), force at full deflection."""

    servo: int                  # DUNE's SetServoPosition id (VSIM's fin number)
    surface: str                # RUDDER (turns the vehicle) or ELEVATOR (pitches it)
    position_m: Tuple[float, float, float]
    force_n: Tuple[float, float, float]     # at +max_fin_rad and 1 m/s, body FRD [N]


@dataclass(frozen=True)
class AuvType:
    """Parameters of one AUV type (SI; YAML files in config/auvs, each with its source)."""

    name: str
    source: str
    length_m: float
    diameter_m: float
    mass_kg: float
    added_mass_kg: Tuple[float, float, float]       # surge, sway, heave (positive) [kg]
    inertia_kgm2: Tuple[float, float, float]        # roll, pitch, yaw, with added [kg m^2]
    reserve_buoyancy_n: float                       # B - m g fully submerged [N]
    cb_above_cg_m: float
    linear_drag: Tuple[float, ...]      # 10: X_u Y_v Z_w K_p M_q N_r Y_r Z_q M_w N_v
    quadratic_drag: Tuple[float, ...]   # 10: the same, times |.| of the same velocity
    body_lift: Tuple[float, ...]        # 8: Y_uv Y_ur Z_uw Z_uq M_uw M_uq N_uv N_ur
    fins: Tuple[Fin, ...]
    max_fin_rad: float
    thruster_k1: float                  # N/(rev/s)^2
    thruster_k2: float                  # N s/(m rev) ... per (m/s)(rev/s)
    max_rpm: float
    max_thrust_n: float
    max_depth_m: float                  # its rated depth [m]
    cruise_speed_mps: float             # its usual speed through the water [m/s]

    @classmethod
    def from_yaml(cls, path) -> 'AuvType':
        """Load and validate an AUV type file; errors name the file and the field."""
        path = Path(path)
        raw = read_yaml(path, 'AUV type')
        if not isinstance(raw, dict):
            raise ConfigError(f'{path}: expected a mapping of AUV parameters')
        known = set(cls.__dataclass_fields__)
        unknown = set(raw) - known
        if unknown:
            raise ConfigError(f'{path}: unknown field(s) {", ".join(sorted(map(str, unknown)))}')
        missing = sorted(known - set(raw))
        if missing:
            raise ConfigError(f'{path}: {missing[0]}: missing')
        w = str(path)
        for k in ('name', 'source'):
            if not isinstance(raw[k], str) or not raw[k]:
                raise ConfigError(f'{w}: {k}: must be a non-empty string')
        pos = {k: number(raw[k], f'{w}: {k}', 0.0, lo_open=True, hi=hi) for k, hi in (
            ('length_m', 20.0), ('diameter_m', 3.0), ('mass_kg', 1e5), ('max_fin_rad', 1.2),
            ('max_rpm', 1e5), ('max_thrust_n', 1e6), ('max_depth_m', 11000.0),
            ('cruise_speed_mps', 20.0))}
        vals: dict = dict(
            name=raw['name'], source=raw['source'], **pos,
            added_mass_kg=tuple(vector(raw['added_mass_kg'], f'{w}: added_mass_kg', 3, 0.0)),
            inertia_kgm2=tuple(vector(raw['inertia_kgm2'], f'{w}: inertia_kgm2', 3, 1e-6)),
            reserve_buoyancy_n=number(raw['reserve_buoyancy_n'], f'{w}: reserve_buoyancy_n',
                                      -1e5, 1e5),
            cb_above_cg_m=number(raw['cb_above_cg_m'], f'{w}: cb_above_cg_m', 0.0, 1.0),
            linear_drag=tuple(vector(raw['linear_drag'], f'{w}: linear_drag', 10)),
            quadratic_drag=tuple(vector(raw['quadratic_drag'], f'{w}: quadratic_drag', 10)),
            body_lift=tuple(vector(raw['body_lift'], f'{w}: body_lift', 8)),
            thruster_k1=number(raw['thruster_k1'], f'{w}: thruster_k1', 0.0, lo_open=True),
            thruster_k2=number(raw['thruster_k2'], f'{w}: thruster_k2', 0.0),
            fins=_fins(raw['fins'], w))
        for i in range(6):      # the diagonal damps: a positive term would feed energy in
            if vals['linear_drag'][i] > 0.0 or vals['quadratic_drag'][i] > 0.0:
                raise ConfigError(f'{w}: linear_drag/quadratic_drag[{i}]: a diagonal damping '
                                  'term must be <= 0 (a force against the motion)')
        return cls(**vals)


def _fins(raw, w: str) -> Tuple[Fin, ...]:
    if not isinstance(raw, list) or not 1 <= len(raw) <= 8:
        raise ConfigError(f'{w}: fins: a list of 1..8 fins')
    out = []
    for k, f in enumerate(raw):
        wf = f'{w}: fins[{k}]'
        if not isinstance(f, dict) or set(f) != {'servo', 'surface', 'position_m', 'force_n'}:
            raise ConfigError(f'{wf}: a mapping of servo, surface, position_m, force_n')
        if f['surface'] not in (RUDDER, ELEVATOR):
            raise ConfigError(f"{wf}.surface: 'rudder' or 'elevator', got {f['surface']!r}")
        servo = f['servo']
        if isinstance(servo, bool) or not isinstance(servo, int) or not 0 <= servo <= 255:
            raise ConfigError(f'{wf}.servo: an id 0..255, got {servo!r}')
        px, py, pz = vector(f['position_m'], f'{wf}.position_m', 3, -20.0, 20.0)
        fx, fy, fz = vector(f['force_n'], f'{wf}.force_n', 3, -1e5, 1e5)
        out.append(Fin(servo, f['surface'], (px, py, pz), (fx, fy, fz)))
    if len({f.servo for f in out}) != len(out):
        raise ConfigError(f'{w}: fins: two fins with one servo id')
    return tuple(out)


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
