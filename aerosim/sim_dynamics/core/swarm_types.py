"""A USV swarm's type table and behaviour parameters (pure, no rclpy).

The init command of the USV UI protocol (seed 004) names boats and obstacles by type code:
``TypeTable`` maps those codes to boat models (the boat kind's kinds/boat/params/*.yaml: a
USV swarm is boats by design) and obstacle radii
(config/usv_types.yaml). ``SwarmParams`` are the behaviour parameters of usv_swarm_node that
the protocol does not carry (arrival radius, task distances, wind direction, current).
"""

from dataclasses import dataclass
from pathlib import Path
from typing import Dict, Optional, Tuple

from sim_core.errors import ConfigError
from sim_core.kinds import info
from sim_core.paths import read_yaml, resolve_config_path
from sim_dynamics.core.usv import BoatType

# Beaufort force 0..12 -> wind speed [m/s] (middle of each band; 12: its lower bound).
BEAUFORT_MPS = (0.0, 0.9, 2.45, 4.4, 6.7, 9.35, 12.3, 15.5, 18.95, 22.6, 26.45, 30.55, 32.7)
SWARM_KIND = 'boat'             # a swarm's boat types are this kind's parameter files


@dataclass(frozen=True)
class ObstacleType:
    """An obstacle type code's name and collision radius [m]."""

    name: str
    radius_m: float


@dataclass(frozen=True)
class TypeTable:
    """Type codes of the init command: boat types and obstacle types."""

    boats: Dict[int, BoatType]
    obstacles: Dict[int, ObstacleType]

    @classmethod
    def from_yaml(cls, path, boats_dir: Optional[Path] = None) -> 'TypeTable':
        """Load config/usv_types.yaml; boat names are files in boats_dir.

        boats_dir: default the boat kind's params folder (kinds/boat/params).
        """
        boats_dir = info(SWARM_KIND).params_dir if boats_dir is None else boats_dir
        path = Path(path)
        raw = read_yaml(path, 'type table')
        if not isinstance(raw, dict) or set(raw) != {'boat_types', 'obstacle_types'} or \
                not all(isinstance(v, dict) or v is None for v in raw.values()):
            raise ConfigError(f'{path}: expected exactly boat_types and obstacle_types, each '
                              'a mapping by type code')
        boats, obstacles = {}, {}
        for code, name in (raw['boat_types'] or {}).items():
            if not isinstance(code, int) or not isinstance(name, str):
                raise ConfigError(f'{path}: boat_types: {code!r}: {name!r}: expected '
                                  'integer code: boat file name')
            boats[code] = BoatType.from_yaml(Path(boats_dir) / f'{name}.yaml')
        for code, o in (raw['obstacle_types'] or {}).items():
            r = o.get('radius_m') if isinstance(o, dict) else None
            if not isinstance(code, int) or not isinstance(r, (int, float)) or \
                    isinstance(r, bool) or not 0.0 < r < 1e5:
                raise ConfigError(f'{path}: obstacle_types: {code!r}: expected {{name, '
                                  f'radius_m > 0}}, got {o!r}')
            obstacles[code] = ObstacleType(str(o.get('name', code)), float(r))
        if not boats:
            raise ConfigError(f'{path}: boat_types: at least one')
        return cls(boats, obstacles)

    @classmethod
    def load(cls, types_file: str) -> 'TypeTable':
        """The type table (config/usv_types.yaml, or a path); the boat kind's boat files."""
        return cls.from_yaml(resolve_config_path(types_file))


@dataclass(frozen=True)
class SwarmParams:
    """Behaviour parameters (ROS parameters of usv_swarm_node; defaults here)."""

    waypoint_radius_m: float = 5.0
    station_gain: float = 0.2           # 1/s: slot error to velocity
    escort_distance_m: float = 30.0
    defend_distance_m: float = 50.0
    ring_radius_m: float = 60.0
    formation_spacing_m: float = 25.0
    cruise_ratio: float = 0.8           # task cruise speed / top speed when para7 gives none
    wind_from_deg: float = 0.0          # direction the wind comes from (compass)
    current_ne: Tuple[float, float] = (0.0, 0.0)
    boat_collisions: bool = True
