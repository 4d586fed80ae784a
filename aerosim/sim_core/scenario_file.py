"""A scenario file's model: every key, its type, range, unit and meaning (pure, no rclpy).

The shape of config/scenarios/*.yaml as written (sim_core.schema: strict, unknown keys
refused with the nearest name, the JSON Schema of ``aerosim schema scenario``).
sim_core.scenario turns a validated ``ScenarioFile`` into the ``Scenario`` the nodes use
(vehicle files found, defaults taken from the vehicle section and the origin, depths as
altitudes).
"""

from typing import TYPE_CHECKING, Annotated, Any, List, Literal, Optional, Tuple, Union

from pydantic import Field, model_validator

from sim_core.kinds import KINDS, info
from sim_core.schema import NAME_PATTERN, FileModel, quantity, rule, vector

if TYPE_CHECKING:
    KindName = str
    ControllerName = str
else:
    # a kind's name (its folder, sim_core.kinds); a controller of any kind ('' = its default)
    KindName = Literal[tuple(KINDS)]
    ControllerName = Literal[('',) + tuple(sorted({c for i in KINDS.values()
                                                   for c in i.controllers}))]
# The kind of a scenario's vehicle when it names none (the scenarios written before kinds)
DEFAULT_KIND = 'multirotor'
Command = Literal['takeoff', 'waypoint', 'land', 'rtl']
Turbulence = Literal['none', 'light', 'moderate', 'severe']
Surface = Literal['ground', 'water']

# Most vehicles in one simulation (a `vehicles:` list, or the launch argument vehicles:=N).
MAX_FLEET = 32
MAX_OBJECTS = 1000

Lat = Annotated[float, Field(ge=-90.0, le=90.0)]
Lon = Annotated[float, Field(ge=-180.0, le=180.0)]
Start = Annotated[float, Field(ge=-1e5, le=1e5)]            # a start's east, north [m]
StartUp = Annotated[float, Field(ge=0.0, le=1e5)]           # a start's height: above ground
Wind = Annotated[float, Field(ge=-60.0, le=60.0)]
Current = Annotated[float, Field(ge=-10.0, le=10.0)]
Size = Annotated[float, Field(gt=0.0, lt=1e4)]
Byte = Annotated[int, Field(ge=0, le=255)]
Name = Annotated[str, Field(pattern=NAME_PATTERN)]

_YAW = 'Compass heading at the start, 0 = north, clockwise'
_START = 'Start position east, north, up from the origin (up >= 0: above the ground)'


class Origin(FileModel):
    """Home, the origin of the local tangent plane (ENU)."""

    lat_deg: Lat = quantity(..., 'Latitude, WGS-84', 'deg')
    lon_deg: Lon = quantity(..., 'Longitude, WGS-84', 'deg')
    alt_m: float = quantity(0.0, 'Altitude, taken as MSL and as ellipsoid height (the geoid '
                            'undulation neglected)', 'm', ge=-1000.0, le=20000.0)


class VehicleSection(FileModel):
    """The vehicle, and the defaults of every entry of `vehicles:`."""

    kind: KindName = Field(DEFAULT_KIND, description='The vehicle kind; its vehicle files are '
                           'in kinds/<kind>/params')
    params: str = Field(..., min_length=1, description='Its vehicle file: a path, relative '
                        "to the scenario, or a name in its kind's params folder (.yaml "
                        'optional)')
    initial_position_enu: Tuple[Start, Start, StartUp] = vector(
        (0.0, 0.0, 0.0), _START + '; a plane above 0.5 m starts airborne, trimmed', 'm')
    initial_yaw_deg: float = quantity(0.0, _YAW, 'deg', ge=-360.0, le=360.0)
    initial_speed_mps: float = quantity(0.0, 'Airspeed of a plane starting airborne (0 = its '
                                        'cruise speed)', 'm/s', ge=0.0, le=300.0)


class EnvironmentSection(FileModel):
    """Wind, current, gravity, sea state, turbulence and what lies at z = 0."""

    wind_enu: Tuple[Wind, Wind, Wind] = vector(
        (0.0, 0.0, 0.0), "Wind: the air's velocity over ground, ENU", 'm/s')
    gravity: float = quantity(9.80665, 'Gravity', 'm/s^2', ge=0.0, le=30.0)
    current_enu: Tuple[Current, Current, Current] = vector(
        (0.0, 0.0, 0.0), "Current: the water's velocity over ground, ENU", 'm/s')
    sea_state: int = quantity(0, 'WMO sea state code: 0 calm (glassy) .. 9 phenomenal (boats)',
                              '-', ge=0, le=9)
    turbulence: Turbulence = Field(default='none', description='Turbulence intensity '
                                   '(MIL-F-8785C), for aircraft')
    surface: Surface = Field(default='ground', description='What lies at z = 0 under an air '
                             'vehicle in a world: ground (a touchdown lands, or impacts when '
                             'fast) or water (any touchdown ditches)')
    wave_seed: int = quantity(0, "Seed of the phases of the boats' wave motion", '-', ge=0,
                              le=2 ** 31 - 1)
    water_depth_m: float = quantity(0.0, "A flat seabed this deep below the surface (an AUV's "
                                    'DVL locks on it within its range); 0: none within reach',
                                    'm', ge=0.0, le=11000.0)


class MissionItemFile(FileModel):
    """One mission item; lat_deg/lon_deg default to the origin's (required for waypoint, land)."""

    command: Command = Field(..., description='What to do: takeoff, waypoint, land, rtl')
    lat_deg: Optional[Lat] = quantity(None, 'Latitude, WGS-84', 'deg')
    lon_deg: Optional[Lon] = quantity(None, 'Longitude, WGS-84', 'deg')
    alt_m: Optional[float] = quantity(None, 'Altitude above the origin (relative altitude); '
                                      'default 0', 'm', ge=-1000.0, le=10000.0)
    depth_m: Optional[float] = quantity(None, 'Depth below the surface, instead of alt_m '
                                        '(depth_m: 5 is alt_m: -5)', 'm', ge=0.0, le=1000.0)
    hold_s: float = quantity(0.0, 'Time to hold at the item', 's', ge=0.0, le=3600.0)
    acceptance_radius_m: float = quantity(1.0, 'Reached within this distance', 'm', ge=0.1,
                                          le=1000.0)
    deck: Name = Field('', description='land: on the deck of this '
                                           'vehicle (boat0, ...): a precision landing on its '
                                           "pad's beacon; lat/lon: where to meet it")

    @model_validator(mode='before')
    @classmethod
    def _no_on_key(cls, data: Any) -> Any:
        if isinstance(data, dict) and any(k is True for k in data):
            raise rule('a key `on` (YAML reads it as true): the deck to land on is '
                       '`deck: boat0`')
        return data

    @model_validator(mode='after')
    def _rules(self) -> 'MissionItemFile':
        if self.command in ('waypoint', 'land'):
            for key in ('lat_deg', 'lon_deg'):
                if getattr(self, key) is None:
                    raise rule(f'required for a {self.command}', key)
        if self.deck and self.command != 'land':
            raise rule(f'only a land item lands on a deck, not a {self.command}', 'deck')
        if self.alt_m is not None and self.depth_m is not None:
            raise rule(f'alt_m or depth_m, not both (depth_m: {self.depth_m:g} is alt_m '
                       f'{-self.depth_m:g})')
        return self


Mission = List[MissionItemFile]


class FleetEntryFile(FileModel):
    """One vehicle of `vehicles:`; what it leaves out comes from the vehicle section."""

    kind: Optional[KindName] = Field(None, description='Its kind (default: vehicle.kind)')
    controller: ControllerName = Field('', description="Who flies it: one of its kind's "
                                       "controllers (sim_core.kinds); '' = the kind's first")
    params: Optional[str] = Field(None, min_length=1, description='Its vehicle file (default: '
                                  'vehicle.params; required for another kind than vehicle.kind)')
    initial_position_enu: Tuple[Start, Start, StartUp] = vector(..., _START, 'm')
    initial_yaw_deg: Optional[float] = quantity(None, _YAW + " (default: vehicle's)", 'deg',
                                                ge=-360.0, le=360.0)
    initial_speed_mps: float = quantity(0.0, 'Airspeed of a plane starting airborne (0 = its '
                                        'cruise speed)', 'm/s', ge=0.0, le=300.0)
    mission: Optional[Mission] = Field(None, description='Its own mission (default: the '
                                       "scenario's, moved with its start)")
    start_on: Name = Field('', description='Starts resting on the deck of '
                                               'this vehicle (boat0, ...)')
    cruise_speed_mps: float = quantity(0.0, "A boat's waypoint speed; 0 = its default", 'm/s',
                                       ge=0.0, le=100.0)


class SceneObjectFile(FileModel):
    """An object the camera sees: a sphere or an axis-aligned box."""

    type: Literal['sphere', 'box'] = Field(..., description='sphere or box')
    position_enu: Tuple[float, float, float] = vector(..., 'Its centre, ENU from the origin',
                                                      'm')
    size: Union[Size, Annotated[List[Size], Field(min_length=1, max_length=3)]] = quantity(
        ..., "A sphere's radius (or [radius]); a box's full lengths [dx, dy, dz]", 'm')
    color: Tuple[Byte, Byte, Byte] = vector((200, 60, 50), 'Its colour, RGB 0..255', '-')

    @model_validator(mode='after')
    def _shape(self) -> 'SceneObjectFile':
        n = len(self.size) if isinstance(self.size, list) else 1
        if n != (1 if self.type == 'sphere' else 3):
            raise rule(f'must be {"a radius" if self.type == "sphere" else "[dx, dy, dz]"}, '
                       f'got {n} numbers', 'size')
        return self


class ScenarioFile(FileModel):
    """A scenario (config/scenarios/*.yaml): where, which vehicles, their missions, the world."""

    what = 'scenario'
    name: Optional[str] = Field(None, description='Its name (default: the file name)')
    decimal_year: float = quantity(2026.9, 'The date as a decimal year, for the World '
                                   'Magnetic Model', ge=2025.0, le=2030.0)
    origin: Origin = Field(..., description='Home, the origin of the local ENU frame')
    vehicle: VehicleSection = Field(..., description='The vehicle (and the defaults of '
                                    '`vehicles:`)')
    environment: EnvironmentSection = Field(default=EnvironmentSection(),
                                            description='Wind, current, sea, the surface')
    mission: Mission = Field([], description='The mission (of every vehicle without its own)')
    objects: List[SceneObjectFile] = Field([], max_length=MAX_OBJECTS,
                                           description='Objects the camera sees')
    vehicles: Optional[List[FleetEntryFile]] = Field(
        None, min_length=1, max_length=MAX_FLEET, description='A fleet, or a world of several '
        "kinds: each vehicle's start and mission (names: the kind's prefix and its count)")
    separation_m: Optional[float] = quantity(
        None, 'The least planned distance between two listed vehicles (sim_core.fleet); 0: '
        'not checked (a collision staged on purpose)', 'm', ge=0.0, le=1000.0)

    @model_validator(mode='after')
    def _fleet_rules(self) -> 'ScenarioFile':
        for i, e in enumerate(self.vehicles or ()):
            kind = e.kind or self.vehicle.kind
            if e.controller and e.controller not in info(kind).controllers:
                raise rule(f'a {kind} is flown by one of {", ".join(info(kind).controllers)}, '
                           f'got {e.controller!r}', 'vehicles', i, 'controller')
            if e.params is None and kind != self.vehicle.kind:
                raise rule(f'required for a {kind} (vehicle.params is for a '
                           f'{self.vehicle.kind})', 'vehicles', i, 'params')
        return self
