"""Flight plans in AeroSim's JSON (examples/example_flight_plan.json) (pure, no rclpy).

A plan is a list of steps, each a mapping::

    {"step": 0, "command": "takeoff", "takeoff_speed_kts": 55, "target_altitude_ft": 1500,
     "throttle": 1.0, "heading_deg": 0, "completion_criteria": ["altitude_ft", ">=", 1500]}
    {"step": 1, "command": "go_to_waypoint",
     "waypoint": {"latitude_deg": .., "longitude_deg": .., "altitude_ft": ..},
     "completion_criteria": ["distance_ft", "<", 500.0]}
    {"step": 8, "command": "land", "completion_criteria": ["altitude_ft", "<=", 30.0]}

Altitudes are above mean sea level [ft] (AutopilotCommand.altitude_setpoint_ft, the PFD's
h-sl-ft). Ours adds optional ``airspeed_kts`` to a step (default: the aircraft's cruise
speed) and accepts the scenario's mission (``from_mission``). Every field is validated and an
error names it (``flight_plan[2].waypoint.latitude_deg: ...``).
"""

from dataclasses import dataclass
import json
import math
from typing import Optional, Tuple

from sim_core.errors import ConfigError
from sim_core.units import FT_M
from sim_core.validate import number

COMMANDS = ('takeoff', 'go_to_waypoint', 'land')
CRITERIA_VARS = ('altitude_ft', 'distance_ft', 'airspeed_kts')
OPERATORS = {'<': lambda a, b: a < b, '<=': lambda a, b: a <= b,
             '>': lambda a, b: a > b, '>=': lambda a, b: a >= b}
MAX_STEPS = 1000


@dataclass(frozen=True)
class PlanStep:
    """One step: command, target (lat/lon [deg], altitude MSL [ft]), speeds, criterion."""

    command: str
    lat_deg: float = math.nan
    lon_deg: float = math.nan
    altitude_ft: float = math.nan
    airspeed_kts: float = math.nan       # nan: the aircraft's default for the phase
    takeoff_speed_kts: float = math.nan
    throttle: float = 1.0
    heading_deg: float = math.nan        # takeoff: runway heading; nan = as lined up
    criterion: Tuple[str, str, float] = ('distance_ft', '<', 500.0)

    @property
    def has_waypoint(self) -> bool:
        """True if the step flies to a position."""
        return not math.isnan(self.lat_deg)

    def done(self, values: dict) -> bool:
        """Whether the completion criterion holds for values (altitude_ft, distance_ft, ...)."""
        var, op, x = self.criterion
        v = values.get(var)
        return v is not None and OPERATORS[op](v, x)


def _criterion(c, where) -> Tuple[str, str, float]:
    if not (isinstance(c, list) and len(c) == 3):
        raise ConfigError(f'{where}.completion_criteria: must be [variable, operator, value]')
    var, op, x = c
    if var not in CRITERIA_VARS:
        raise ConfigError(f'{where}.completion_criteria[0]: must be one of '
                          f'{", ".join(CRITERIA_VARS)}, got {var!r}')
    if op not in OPERATORS:
        raise ConfigError(f'{where}.completion_criteria[1]: must be one of '
                          f'{", ".join(OPERATORS)}, got {op!r}')
    return var, op, number(x, f'{where}.completion_criteria[2]', -1e6, 1e7)


def parse_plan(text_or_list) -> Tuple[PlanStep, ...]:
    """Validate a plan (JSON text or parsed list); ConfigError naming the field."""
    data = text_or_list
    if isinstance(text_or_list, str):
        try:
            data = json.loads(text_or_list)
        except ValueError as exc:
            raise ConfigError(f'flight_plan: not JSON: {exc}') from None
    if not isinstance(data, list) or not 0 < len(data) <= MAX_STEPS:
        raise ConfigError(f'flight_plan: must be a list of 1..{MAX_STEPS} steps')
    out = []
    for i, s in enumerate(data):
        w = f'flight_plan[{i}]'
        if not isinstance(s, dict):
            raise ConfigError(f'{w}: must be a mapping')
        cmd = s.get('command')
        if cmd not in COMMANDS:
            raise ConfigError(f'{w}.command: must be one of {", ".join(COMMANDS)}, got {cmd!r}')
        spd = s.get('airspeed_kts')
        kw = {'airspeed_kts': math.nan if spd is None else
              number(spd, f'{w}.airspeed_kts', 30.0, 400.0)}
        if cmd == 'takeoff':
            kw['altitude_ft'] = number(s.get('target_altitude_ft'),
                                       f'{w}.target_altitude_ft', -1000.0, 60000.0)
            kw['takeoff_speed_kts'] = number(s.get('takeoff_speed_kts'),
                                             f'{w}.takeoff_speed_kts', 20.0, 300.0)
            kw['throttle'] = number(s.get('throttle', 1.0), f'{w}.throttle', 0.1, 1.0)
            h = s.get('heading_deg')
            kw['heading_deg'] = math.nan if h is None else \
                number(h, f'{w}.heading_deg', -360.0, 360.0) % 360.0
            default = ['altitude_ft', '>=', kw['altitude_ft']]
        elif cmd == 'go_to_waypoint':
            wp = s.get('waypoint')
            if not isinstance(wp, dict):
                raise ConfigError(f'{w}.waypoint: must be a mapping')
            kw['lat_deg'] = number(wp.get('latitude_deg'), f'{w}.waypoint.latitude_deg',
                                   -90.0, 90.0)
            kw['lon_deg'] = number(wp.get('longitude_deg'), f'{w}.waypoint.longitude_deg',
                                   -180.0, 180.0)
            kw['altitude_ft'] = number(wp.get('altitude_ft'), f'{w}.waypoint.altitude_ft',
                                       -1000.0, 60000.0)
            default = ['distance_ft', '<', 500.0]
        else:
            wp = s.get('waypoint')
            if wp is not None:
                if not isinstance(wp, dict):
                    raise ConfigError(f'{w}.waypoint: must be a mapping')
                kw['lat_deg'] = number(wp.get('latitude_deg'), f'{w}.waypoint.latitude_deg',
                                       -90.0, 90.0)
                kw['lon_deg'] = number(wp.get('longitude_deg'),
                                       f'{w}.waypoint.longitude_deg', -180.0, 180.0)
                kw['altitude_ft'] = number(wp.get('altitude_ft'), f'{w}.waypoint.altitude_ft',
                                           -1000.0, 60000.0)
            default = ['altitude_ft', '<=', 30.0]
        crit = s.get('completion_criteria', default)
        out.append(PlanStep(cmd, criterion=_criterion(crit, w), **kw))
    return tuple(out)


def from_mission(mission, field_alt_m: float, runway_heading_deg: float,
                 rotate_kts: float) -> Tuple[PlanStep, ...]:
    """The scenario's mission items as a plan (alt_m above the origin -> ft MSL).

    takeoff -> takeoff on the runway heading, done at its altitude; waypoint ->
    go_to_waypoint, done within max(acceptance_radius_m, 150 m) (a C172 turns on a 580 m
    radius at 100 kt); land -> land at its position, done at rest on the runway (the
    criterion: within 30 ft of the field, AeroSim's); rtl -> land at the origin.
    """
    steps = []
    for i, it in enumerate(mission):
        alt_ft = (field_alt_m + it.alt_m) / FT_M
        if it.command == 'takeoff':
            steps.append(PlanStep('takeoff', altitude_ft=alt_ft, takeoff_speed_kts=rotate_kts,
                                  heading_deg=runway_heading_deg % 360.0,
                                  criterion=('altitude_ft', '>=', alt_ft - 50.0)))
        elif it.command == 'waypoint':
            radius_ft = max(it.acceptance_radius_m, 150.0) / FT_M
            steps.append(PlanStep('go_to_waypoint', it.lat_deg, it.lon_deg, alt_ft,
                                  criterion=('distance_ft', '<', radius_ft)))
        elif it.command in ('land', 'rtl'):
            steps.append(PlanStep('land', it.lat_deg, it.lon_deg, field_alt_m / FT_M,
                                  criterion=('altitude_ft', '<=', field_alt_m / FT_M + 30.0)))
        else:       # pragma: no cover - the scenario validated the commands
            raise ConfigError(f'mission[{i}].command: {it.command!r} has no plane step')
    return tuple(steps)


def to_json(plan) -> str:
    """A plan as AeroSim's JSON (round-trips through parse_plan)."""
    out = []
    for i, s in enumerate(plan):
        d: dict = {'step': i, 'command': s.command}
        if s.command == 'takeoff':
            d.update(takeoff_speed_kts=s.takeoff_speed_kts, target_altitude_ft=s.altitude_ft,
                     throttle=s.throttle)
            if not math.isnan(s.heading_deg):
                d['heading_deg'] = s.heading_deg
        elif s.has_waypoint:
            d['waypoint'] = {'latitude_deg': s.lat_deg, 'longitude_deg': s.lon_deg,
                             'altitude_ft': s.altitude_ft}
        if not math.isnan(s.airspeed_kts):
            d['airspeed_kts'] = s.airspeed_kts
        d['completion_criteria'] = list(s.criterion)
        out.append(d)
    return json.dumps(out)


def waypoints(plan, start: int = 0, count: Optional[int] = None):
    """[[lat, lon, alt_m MSL], ...] of the steps with a position from step start on."""
    pts = [[s.lat_deg, s.lon_deg, s.altitude_ft * FT_M] for s in plan[start:] if s.has_waypoint]
    return pts if count is None else pts[:count]
