"""The MAVLink HIL bridge's configuration (pure): BridgeConfig, PARAMETERS, what they set up.

BridgeConfig is read once by the node (sim_ros.params.read_config) from PARAMETERS, whose
ranges and choices sim_core.config.build checks without ROS; HilBridge checks a config it is
handed directly the same way (sim_core.config.checked). The helpers build what the config
names: the served vehicle's scenario, its mixer, the UTC of sim time 0.

Reject kinds: no complete frame in a datagram; a frame pymavlink refused (CRC, unknown id, bad
length); a signed frame (we hold no key: the MAVLink spec has a system without signing drop
them); a message for another system/component; actuator values refused; the handler raised
(the node's guard). 'peer': a system id not allowed, or actuators from a system that is not
the served FC, or anything speaking as the FC (its ids, actuator outputs, an FC's HEARTBEAT)
from another address or port than the FC's on a pinned link (`fc_address`, `mission_link`:
Endpoint.at_pin); PortNode adds the addresses refused by allow_peers. 'connection' (TCP): a
connection closed without being served, one per connection: a second one while the FC's is
open, or one whose first bytes are not a frame of the FC's ids (endpoint.first_frame), or
that proves nothing within sim_core.link.PENDING_S.
"""

from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, Dict, Tuple

from mavlink_bridge.core.mixer import (
    MIXERS,
    PLANE_LAYOUTS,
    PX4_PLANE,
    PX4_PLANE_REVERSED,
    MixerConfig,
    check_layout,
)
from sim_core.config import Param
from sim_core.errors import ConfigError
from sim_core.kinds import info
from sim_core.members import world_members
from sim_core.scenario import MAX_FLEET, Scenario, load_scenario

REJECT_KINDS = ('truncated', 'undecodable', 'signed', 'target', 'value', 'invalid',
                'connection')


@dataclass(frozen=True)
class BridgeConfig:
    """The bridge's parameters, read once (units in the names; ranges in PARAMETERS)."""

    scenario_file: str = 'default'
    transport: str = 'udp'
    bind: str = '127.0.0.1:14560'
    fc_address: str = '127.0.0.1:14561'
    tcp_bind: str = '127.0.0.1:4560'
    mission_link: str = ''
    mission_bind: str = ''
    system_id: int = 51
    component_id: int = 1
    fc_system_id: int = 1
    fc_component_id: int = 1
    autostart: bool = False
    autostart_ready_s: float = 5.0
    autostart_timeout_s: float = 30.0
    fc_param_file: str = ''
    heartbeat_rate_hz: float = 1.0
    home_rate_hz: float = 1.0
    hil_state_rate_hz: float = 50.0
    mission_timeout_s: float = 1.5
    mission_retries: int = 5
    mixer_motor_channels: Tuple[int, ...] = (0, 1, 2, 3)
    mixer_plane_layout: str = 'px4'
    mixer_plane_channels: Tuple[int, ...] = PX4_PLANE
    mixer_plane_reversed: Tuple[int, ...] = PX4_PLANE_REVERSED
    gps_utc_start: str = ''
    peer_timeout_s: float = 3.0
    warn_period_s: float = 2.0
    allow_system_ids: Any = ''
    sensor_topics: bool = False
    quiet_streams: bool = True
    spin_wait_us: int = 1000
    vehicles: int = 1
    vehicle_index: int = 0


# name -> (description with units, lo, hi); the defaults are BridgeConfig's
PARAMETERS: Dict[str, Any] = {
    'scenario_file': ('Scenario YAML (origin = home, mission)',),
    'transport': Param('udp, or tcp (a TCP server: PX4 SITL connects to it)',
                       choices=('udp', 'tcp')),
    'bind': ('UDP local address host:port',),
    'fc_address': ("UDP address of the flight controller host:port, where the bridge sends "
                   "and the only address and port the FC's frames are taken from (its ids, "
                   'actuator outputs or an FC HEARTBEAT from elsewhere: rejected_peer); '
                   "'' = reply to the first sender, the FC recognized by its ids only",),
    'tcp_bind': ('TCP server address host:port',),
    'mission_link': ("UDP host:port of the FC's MAVLink instance that takes the mission, "
                     'parameters and arming commands (PX4 SITL: its onboard payload link, '
                     "127.0.0.1:14280 + instance; the FC's frames on that link are taken from "
                     "this address and port only); '' = all on the HIL link",),
    'mission_bind': ('Our UDP address host:port on the mission link (PX4 SITL sends to '
                     "127.0.0.1:14030 + instance); '' = an ephemeral port",),
    'system_id': ("Our MAVLink system id (not the FC's)", 1, 255),
    'component_id': ('Our component id (1: GCS address mission requests to it)', 1, 255),
    'fc_system_id': ('System id of the served FC: the mission goes to it, only its actuator '
                     'outputs are taken (0 = the first FC heard)', 0, 255),
    'fc_component_id': ('Component id of the served FC (0 = the first heard)', 0, 255),
    'autostart': ('Arm the FC and start its mission once it accepted the mission and reports '
                  'ready (HEARTBEAT STANDBY): MAV_CMD_COMPONENT_ARM_DISARM, then '
                  'MAV_CMD_MISSION_START (PX4; the built-in FC arms itself)',),
    'autostart_ready_s': ('Autostart: arm anyway this long after the FC took the mission if it '
                          'does not say STANDBY, to hear why it refuses [s, sim]', 0.0, 600.0),
    'autostart_timeout_s': ('Autostart: give up this long after the FC took the mission, an '
                            'error that ends a judged run [s, sim]', 1.0, 3600.0),
    'fc_param_file': ("FC parameters to set before the mission (QGroundControl's .params "
                      "format; a path or a name in config/px4, e.g. c172r); '' = none",),
    'heartbeat_rate_hz': ('HEARTBEAT rate [Hz] (wall)', 0.1, 50.0),
    'home_rate_hz': ('HOME_POSITION rate [Hz] (wall)', 0.1, 50.0),
    'hil_state_rate_hz': ('HIL_STATE_QUATERNION (ground truth) rate [Hz] (sim); 0 = off',
                          0.0, 1000.0),
    'mission_timeout_s': ('Mission protocol timeout [s]', 0.05, 60.0),
    'mission_retries': ('Mission protocol retries [-]', 0, 100),
    'mixer_motor_channels': ('controls[] channel driving each motor (motor index order of the '
                             'model)',),
    'mixer_plane_layout': ('Planes: what HIL_ACTUATOR_CONTROLS.controls[] carry. '
                           + ' '.join(f"'{k}': {v}." for k, v in PLANE_LAYOUTS.items()),),
    'mixer_plane_channels': ("Planes, mixer_plane_layout 'px4' (aetr4 has its own order and "
                             'refuses another table): controls[] channel of the throttle, left '
                             'aileron, right aileron, elevator, rudder, left flap, right flap, '
                             "nose wheel (default: PX4 v1.16's SITL plane, airframe 1030: "
                             'outputs 5, 6, 7, 8, 3, 4, 9, and output 10 for the nose wheel as '
                             'config/px4/c172r.params sets it, PWM_MAIN_FUNC10 440; -1 = no '
                             'nose-wheel channel: it turns with the rudder where the aircraft '
                             'links them)',),
    'mixer_plane_reversed': ("Planes, layout 'px4': controls[] channels whose value is negated "
                             'first (PX4 PWM_MAIN_REV; airframe 1030 reverses output 9)',),
    'gps_utc_start': ("UTC at sim time 0 for HIL_GPS, ISO-8601; '' = now",),
    'peer_timeout_s': ('Peer silence before it is dropped [s] (wall and sim time both, while '
                       'the simulation runs)', 0.5, 600.0),
    'warn_period_s': ('Minimum period of repeated warnings [s]', 0.1, 600.0),
    'allow_system_ids': ("MAVLink systems whose messages are taken, comma-separated; '' = any. "
                         'Others are counted as rejected_peer',),
    'sensor_topics': ('Also publish the ROS sensor topics (imu, imu/data, mag, baro, '
                      'baro/temperature, gnss, gnss/fix, /tf_static) from the samples sent to '
                      'the FC: hil_plant does, instead of a sensors_node process',),
    'quiet_streams': ("Ask the FC to stop, on the mission link, each stream the bridge does not "
                      'read (MAV_CMD_SET_MESSAGE_INTERVAL -1; PX4 streams its onboard telemetry '
                      'there): each message costs the FC and the bridge a datagram, times the '
                      "real-time factor. A ground station's link keeps its streams",),
    'vehicles': ('Vehicles in the simulation (a fleet: one bridge per vehicle, each its own '
                 "links); 0 = as many as the scenario's vehicles: list", 0, MAX_FLEET),
    'vehicle_index': ('The vehicle this bridge serves (0-based): its start, mission and links '
                      '(hil_plant sets it for each vehicle of a fleet)', 0, MAX_FLEET - 1),
    'spin_wait_us': ('As fast as possible (time_scale 0): poll the HIL link this long for the '
                     "FC's answer before sleeping on it [µs], while answers come that fast (a "
                     'sleeping receiver is woken by an interrupt that costs tens of µs on a '
                     'VM); 0 = never', 0, 20000),
}
ANY_TYPE = ('allow_system_ids',)       # `-p allow_system_ids:=1` arrives as an int


def parse_utc(text: str) -> int:
    """'' -> now; ISO-8601 (Z or offset; naive = UTC) -> µs since the Unix epoch."""
    if not text:
        return int(datetime.now(timezone.utc).timestamp() * 1e6)
    try:
        dt = datetime.fromisoformat(text.replace('Z', '+00:00'))
    except ValueError:
        raise ConfigError(f'gps_utc_start: expected ISO-8601 like 2026-11-22T12:00:00Z, '
                          f'got {text!r}') from None
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=timezone.utc)
    return int(dt.timestamp() * 1e6)


def vehicle_scenario(cfg: BridgeConfig) -> Scenario:
    """The scenario as the served vehicle sees it (vehicle_index of a fleet); ConfigError.

    Vehicle vehicle_index of the world (sim_core.members.world_members): of a fleet, or of a
    scenario of several kinds, with its own kind, start, vehicle file and mission.
    """
    scenario = load_scenario(cfg.scenario_file)
    members = world_members(scenario, cfg.vehicles)
    if cfg.vehicle_index >= len(members):
        raise ConfigError(f'vehicle_index: {cfg.vehicle_index}, but the simulation has '
                          f'{len(members)} vehicle(s) (0-based)')
    return members[cfg.vehicle_index].scenario


def make_mixer(cfg: BridgeConfig, scenario: Scenario):
    """The scenario's vehicle's mixer, the one its kind names (mixer.MIXERS); ConfigError."""
    try:
        check_layout(cfg.mixer_plane_layout)     # a typo is an error on any vehicle
        k = info(scenario.vehicle_kind)
        if not k.mixer:
            raise ConfigError(f'scenario {scenario.name}: a {k.name} is not flown over '
                              'MAVLink (its kind names no mixer)')
        if k.mixer not in MIXERS:
            raise ConfigError(f"scenario {scenario.name}: a {k.name}'s mixer {k.mixer!r} is "
                              f'not one of {", ".join(MIXERS)}')
        return MIXERS[k.mixer](MixerConfig(
            tuple(int(c) for c in cfg.mixer_motor_channels), cfg.mixer_plane_layout,
            tuple(cfg.mixer_plane_channels), tuple(cfg.mixer_plane_reversed)),
            str(scenario.vehicle_file))
    except (TypeError, ValueError) as exc:
        raise ConfigError(str(exc)) from exc
