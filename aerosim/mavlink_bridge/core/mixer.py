"""Actuator channel -> motor or surface mapping for HIL_ACTUATOR_CONTROLS (pure).

Multirotors (Mixer): only controls[0..3] are used. The table lists, per motor index of the
vehicle model, the actuator channel that drives it. The vehicle models order their motors the
PX4 Quad X way (0 front-right CCW, 1 rear-left CCW, 2 front-left CW, 3 rear-right CW), so the
default table is the identity (0, 1, 2, 3).

Validation (the vehicle never flies on garbage):
- NaN or infinite values in the used channels: rejected;
- values outside [-1, 1] (the field's documented range): rejected;
- values in [-1, 0): clamped to 0 (PX4 sends -1 for a disarmed motor); (1, 1]: n/a.

Planes, by layout (`mixer_plane_layout`, PLANE_LAYOUTS): 'px4', PX4 v1.16's SITL plane
(FixedWingMixer: its outputs on the channels of `mixer_plane_channels`, servos -1..1); 'aetr4',
seed 003's four channels (FourChannelMixer: controls[0..3] = aileron, elevator, throttle,
rudder, each 0..1).

Which mixer a vehicle gets is its kind's (its kind.yaml names one of MIXERS: a factory per
airframe's outputs, from the bridge's MixerConfig and the vehicle's parameter file); a kind
that names none (a boat) is not flown over MAVLink.
"""

from dataclasses import dataclass
import math
from typing import Callable, Dict, Sequence, Tuple, Union

from sim_core.errors import ConfigError
from sim_dynamics.core.plane import AircraftParams, EffectorCommand

N_CHANNELS = 4
PX4_QUAD_X = (0, 1, 2, 3)


class ActuatorError(ValueError):
    """An actuator message that must not drive the vehicle."""


@dataclass(frozen=True)
class Mixer:
    """motor_channels[i]: the controls[] channel that drives motor i."""

    motor_channels: Tuple[int, ...] = PX4_QUAD_X
    name = 'quad-x'

    def __post_init__(self):
        """Validate: one distinct channel in 0..3 per motor."""
        ch = tuple(self.motor_channels)
        if len(ch) != N_CHANNELS or sorted(ch) != list(range(N_CHANNELS)):
            raise ConfigError(f'mixer: motor_channels must be a permutation of 0..3, got {ch}')

    def describe(self) -> str:
        """The table, as the start-up log line says it."""
        return f'motor channels {self.motor_channels}'

    def idle(self) -> Tuple[float, ...]:
        """Motors stopped: the command before the FC's first answer."""
        return (0.0,) * N_CHANNELS

    def command(self, controls: Sequence[float], armed: bool = True) -> Tuple[float, ...]:
        """The motor throttles of controls (every mixer's call; a multirotor has no brakes)."""
        return self.throttles(controls)

    def throttles(self, controls: Sequence[float]) -> Tuple[float, ...]:
        """Map HIL_ACTUATOR_CONTROLS.controls to motor throttles 0..1; raise ActuatorError."""
        if controls is None or len(controls) < N_CHANNELS:
            raise ActuatorError(f'need {N_CHANNELS} control channels, got '
                                f'{0 if controls is None else len(controls)}')
        used = [float(controls[c]) for c in range(N_CHANNELS)]
        for i, v in enumerate(used):
            if not math.isfinite(v):
                raise ActuatorError(f'controls[{i}] is {v}')
            if not -1.0 <= v <= 1.0:
                raise ActuatorError(f'controls[{i}] = {v:g} outside [-1, 1]')
        return tuple(max(0.0, used[c]) for c in self.motor_channels)


# PX4 v1.16's SITL plane, ROMFS/px4fmu_common/init.d-posix/airframes/1030_gazebo-classic_plane:
# PWM_MAIN_FUNC3 204 (servo 4: CA_SV_CS3 rudder), FUNC4 205 (servo 5: left flap), FUNC5 101
# (motor 1), FUNC6 201 (servo 1: left aileron, CA_SV_CS0_TRQ_R -0.5), FUNC7 202 (servo 2:
# right aileron, TRQ_R 0.5), FUNC8 203 (servo 3: elevator, TRQ_P 1), FUNC9 206 (servo 6: right
# flap), PWM_MAIN_REV 256 (the 9th output reversed). controls[i] is output i + 1. The nose
# wheel: output 10 as config/px4/c172r.params sets it, PWM_MAIN_FUNC10 440 (Landing_Gear_Wheel,
# the fixed-wing wheel controller's steering, FW_W_EN: +1 turns the nose right).
# Order: throttle, left aileron, right aileron, elevator, rudder, left flap, right flap, wheel.
PX4_PLANE = (4, 5, 6, 7, 2, 3, 8, 9)
PX4_PLANE_REVERSED = (8,)
PLANE_OUTPUTS = ('throttle', 'aileron_left', 'aileron_right', 'elevator', 'rudder',
                 'flap_left', 'flap_right', 'nose_wheel')
NONE = -1       # a PLANE_OUTPUTS entry no channel drives (the nose wheel: then the rudder's)
N_ALL = 16


@dataclass(frozen=True)
class FixedWingMixer:
    """HIL_ACTUATOR_CONTROLS of a fixed-wing PX4 -> surface angles and throttle.

    Signs (PX4 control allocation, ActuatorEffectivenessControlSurfaces: a positive roll
    torque moves the left aileron's servo negative, the right one's positive; pitch and yaw
    torques move the elevator's and rudder's servos positive): a servo at +1 is its trailing
    edge fully up (ailerons, elevator) or right (rudder). pwm_out_sim sends servos in [-1, 1],
    non-reversible motors in [0, 1] (PWMSim::updateOutputs). Flaps: -1..0 retracted (PX4
    drives a flap servo (2 flaps - 1) * CA_SV_CSn_FLAP: -1 retracted at scale 1, 0 at the
    1030 airframe's scale 0), 0..1 to fully extended. Angles come out in AeroSim's
    AircraftEffectorCommand signs: positive trailing edge down (ailerons [left, right],
    elevator), left (rudder), down (flaps).

    Ground handling: the nose wheel (``steer_deg`` > 0, the aircraft's nose wheel travel) is
    steered by its channel (+1 = nose right, PX4's Landing_Gear_Wheel output) or, with none
    (-1) and ``rudder_steers``, turns with the rudder, as the C172's is linked to the rudder
    pedals (the rudder fraction times steer_deg, nose left with trailing edge left). The wheel
    brakes are set while the FC says it is disarmed (HIL_ACTUATOR_CONTROLS.mode without
    SAFETY_ARMED: PX4 has no wheel-brake output function; its land detector disarms after the
    touchdown) and released while it is armed: a disarmed aircraft is a parked one.

    channels: the controls[] index of each PLANE_OUTPUTS entry (7 entries: no nose-wheel
    channel); reversed: controls[] indices whose value is negated first (PWM_MAIN_REV); the
    surface ranges [deg] are the aircraft's.
    """

    channels: Tuple[int, ...] = PX4_PLANE
    reversed: Tuple[int, ...] = PX4_PLANE_REVERSED
    aileron_deg: Tuple[float, float] = (-20.0, 15.0)
    elevator_deg: Tuple[float, float] = (-28.0, 23.0)
    rudder_deg: float = 16.0
    flap_deg: float = 30.0
    steer_deg: float = 0.0
    rudder_steers: bool = False
    name = 'fixed-wing'

    def __post_init__(self):
        """Validate: one distinct channel in 0..15 per output; the nose wheel's may be -1."""
        ch = tuple(self.channels)
        if len(ch) == len(PLANE_OUTPUTS) - 1:
            object.__setattr__(self, 'channels', ch + (NONE,))
            ch = self.channels
        used = list(ch[:-1]) + ([ch[-1]] if ch[-1] != NONE else [])
        if len(ch) != len(PLANE_OUTPUTS) or len(set(used)) != len(used) or \
                not all(0 <= c < N_ALL for c in used):
            raise ConfigError(f'mixer: plane channels must be {len(PLANE_OUTPUTS)} distinct '
                              f'channels in 0..15 ({", ".join(PLANE_OUTPUTS)}; nose_wheel -1 '
                              f'= with the rudder), got {ch}')
        if not all(0 <= c < N_ALL for c in self.reversed):
            raise ConfigError(f'mixer: reversed channels must be in 0..15, got {self.reversed}')

    @classmethod
    def for_aircraft(cls, a: AircraftParams, channels: Sequence[int] = PX4_PLANE,
                     reversed_: Sequence[int] = PX4_PLANE_REVERSED) -> 'FixedWingMixer':
        """The mixer of aircraft a: its surface ranges, its nose wheel if on the rudder."""
        return cls(tuple(int(c) for c in channels), tuple(int(c) for c in reversed_),
                   a.aileron_deg, a.elevator_deg, a.rudder_deg, a.flap_deg, a.steer_deg,
                   a.steer_with_rudder)

    def describe(self) -> str:
        """The table, as the start-up log line says it."""
        return f'controls[] {dict(zip(PLANE_OUTPUTS, self.channels))}, reversed {self.reversed}'

    def idle(self) -> EffectorCommand:
        """Engine idle, surfaces neutral, brakes set: before the FC's first answer."""
        return EffectorCommand((0.0,), (0.0, 0.0), (0.0,), (0.0,), flap_rad=(0.0,),
                               wheel_steer_rad=(0.0,) if self.steers else (),
                               wheel_brake=(1.0,))

    @property
    def steers(self) -> bool:
        """The mixer commands the nose wheel (its channel, or the rudder's linkage)."""
        return self.steer_deg > 0.0 and (self.channels[-1] != NONE or self.rudder_steers)

    def _wheel(self, v: dict) -> tuple:
        """The nose wheel's angle [rad], positive left, or () if not commanded."""
        if not self.steers:
            return ()
        x = v['nose_wheel'] if self.channels[-1] != NONE else v['rudder']
        return (-math.radians(x * self.steer_deg),)

    def command(self, controls: Sequence[float], armed: bool = True):
        """Map controls to throttle, [left, right] aileron, elevator, rudder, flap [rad].

        Also the nose wheel (with the rudder, if linked) and the brakes (set unless armed).
        Returns the plane's EffectorCommand (the other devices empty: unchanged); raises
        ActuatorError on a missing, non-finite or out-of-range used channel.
        """
        if controls is None or len(controls) <= max(self.channels):
            raise ActuatorError(f'need {max(self.channels) + 1} control channels, got '
                                f'{0 if controls is None else len(controls)}')
        v = {}
        for name, c in zip(PLANE_OUTPUTS, self.channels):
            if c == NONE:
                continue
            x = float(controls[c])
            if not math.isfinite(x):
                raise ActuatorError(f'controls[{c}] ({name}) is {x}')
            if not -1.0 <= x <= 1.0:
                raise ActuatorError(f'controls[{c}] ({name}) = {x:g} outside [-1, 1]')
            v[name] = -x if c in self.reversed else x

        def down(s, lo, hi):        # servo +1 = trailing edge up -> angle, TE down positive
            return -math.radians(s * (-lo if s > 0.0 else hi))
        lo, hi = self.aileron_deg
        flap = math.radians(max(0.0, 0.5 * (v['flap_left'] + v['flap_right'])) * self.flap_deg)
        return EffectorCommand(
            throttle=(max(0.0, v['throttle']),),
            aileron_rad=(down(v['aileron_left'], lo, hi), down(v['aileron_right'], -hi, -lo)),
            elevator_rad=(down(v['elevator'], *self.elevator_deg),),
            rudder_rad=(-math.radians(v['rudder'] * self.rudder_deg),),
            flap_rad=(flap,),
            wheel_steer_rad=self._wheel(v),
            wheel_brake=(0.0 if armed else 1.0,))


# Seed 003's actuator input: "Only the first four float channels are used; values are
# normalized to 0.0-1.0". It names no order for a plane; this is the 4-channel order of
# fixed-wing autopilots and radios, AETR: ArduPilot Plane's default outputs SERVO1..4_FUNCTION
# = 4 aileron, 19 elevator, 70 throttle, 21 rudder (ardupilot.org/plane/docs/
# servo-functions.html).
AETR4 = (0, 1, 2, 3)
AETR4_INPUTS = ('aileron', 'elevator', 'throttle', 'rudder')
PLANE_LAYOUTS = {
    'px4': "PX4 v1.16's SITL plane (airframe 1030): its outputs on the channels of "
           'mixer_plane_channels, reversed as mixer_plane_reversed; servos -1..1 (+1 trailing '
           'edge up, rudder right), throttle 0..1, flaps, the nose wheel; the wheel brakes set '
           'while HIL_ACTUATOR_CONTROLS.mode says disarmed',
    'aetr4': "seed 003's four channels: only controls[0..3], each 0.0..1.0: [0] aileron, [1] "
             "elevator, [2] throttle, [3] rudder (AETR, ArduPilot Plane's default outputs 1-4); "
             'a surface at 0.5 is neutral, 1.0 rolls right, pitches the nose up, yaws it right '
             '(full travel), 0.0 the other way; throttle 0 idle, 1 full; no flaps, the nose '
             'wheel with the rudder where the aircraft links them; the wheel brakes set while '
             'the throttle is 0 (the seed has no brake or arming: at idle the aircraft is '
             'parked, and stops after a landing)',
}


@dataclass(frozen=True)
class FourChannelMixer:
    """Seed 003's four 0..1 channels of a plane (AETR4 order) -> surface angles and throttle.

    A surface channel v in [0, 1] is the normalized command 2 v - 1 (roll right, nose up, nose
    right positive); it drives the surfaces as PX4's outputs of that command would
    (fixed_wing_servos -> FixedWingMixer: the same surface signs and aircraft ranges). The
    seed has no brake and no arming: the wheel brakes are set while the throttle is 0 (the
    C172 at idle rolls for kilometres unbraked). channels: the controls[] index of aileron,
    elevator, throttle, rudder. Values outside [0, 1], NaN or infinite are refused
    (ActuatorError).
    """

    surfaces: FixedWingMixer
    channels: Tuple[int, ...] = AETR4
    name = 'fixed-wing'

    def __post_init__(self):
        """Validate: four distinct channels in 0..15."""
        ch = tuple(self.channels)
        if len(ch) != len(AETR4_INPUTS) or len(set(ch)) != len(ch) or \
                not all(0 <= c < N_ALL for c in ch):
            raise ConfigError(f'mixer: the aetr4 layout needs 4 distinct channels in 0..15 '
                              f'({", ".join(AETR4_INPUTS)}), got {ch}')

    @classmethod
    def for_aircraft(cls, a: AircraftParams) -> 'FourChannelMixer':
        """Aircraft a's mixer: its surface ranges; the nose wheel with the rudder if linked."""
        return cls(FixedWingMixer.for_aircraft(a, PX4_PLANE[:-1], PX4_PLANE_REVERSED))

    @property
    def reversed(self) -> tuple:
        """No channel is reversed (the sign is the layout's)."""
        return ()

    def describe(self) -> str:
        """The table, as the start-up log line says it."""
        return (f'aetr4 (seed 003): controls[] {dict(zip(AETR4_INPUTS, self.channels))}, each '
                '0..1, surfaces neutral at 0.5, brakes set at throttle 0')

    def idle(self) -> EffectorCommand:
        """Engine idle, surfaces neutral, brakes set: before the client's first answer."""
        return self.surfaces.idle()

    def command(self, controls: Sequence[float], armed: bool = True):
        """Map controls[0..3] to the plane's EffectorCommand; raise ActuatorError."""
        if controls is None or len(controls) <= max(self.channels):
            raise ActuatorError(f'need {max(self.channels) + 1} control channels, got '
                                f'{0 if controls is None else len(controls)}')
        v = {}
        for name, c in zip(AETR4_INPUTS, self.channels):
            x = float(controls[c])
            if not math.isfinite(x):
                raise ActuatorError(f'controls[{c}] ({name}) is {x}')
            if not 0.0 <= x <= 1.0:
                raise ActuatorError(f'controls[{c}] ({name}) = {x:g} outside [0, 1] (aetr4 '
                                    'layout, seed 003)')
            v[name] = x
        s = self.surfaces
        servos = fixed_wing_servos(v['throttle'], 2.0 * v['aileron'] - 1.0,
                                   2.0 * v['elevator'] - 1.0, 2.0 * v['rudder'] - 1.0, 0.0,
                                   channels=s.channels, reversed_=s.reversed)
        return s.command(servos, armed=v['throttle'] > 0.0)    # brakes set at idle


def plane_mixer(layout: str, a: AircraftParams, channels: Sequence[int] = PX4_PLANE,
                reversed_: Sequence[int] = PX4_PLANE_REVERSED):
    """Aircraft a's mixer for a layout of PLANE_LAYOUTS; ConfigError on a bad table.

    channels and reversed_ are the px4 layout's; aetr4 has its own order and refuses any
    other px4 table than the default (it would not be used).
    """
    check_layout(layout)
    if layout == 'aetr4':
        if tuple(channels) != PX4_PLANE or tuple(reversed_) != PX4_PLANE_REVERSED:
            raise ConfigError('mixer_plane_channels and mixer_plane_reversed are the px4 '
                              "layout's table; mixer_plane_layout 'aetr4' has its own order "
                              f'(controls[] {dict(zip(AETR4_INPUTS, AETR4))}): leave them at '
                              'their defaults')
        return FourChannelMixer.for_aircraft(a)
    return FixedWingMixer.for_aircraft(a, channels, reversed_)


@dataclass(frozen=True)
class MixerConfig:
    """The bridge's mixer parameters (mixer_*: see mavlink_bridge.core.bridge.PARAMETERS)."""

    motor_channels: Tuple[int, ...] = PX4_QUAD_X
    plane_layout: str = 'px4'
    plane_channels: Tuple[int, ...] = PX4_PLANE
    plane_reversed: Tuple[int, ...] = PX4_PLANE_REVERSED


AnyMixer = Union[Mixer, FixedWingMixer, FourChannelMixer]
# a kind's mixer from the bridge's parameters and the vehicle's parameter file (its path)
MixerFactory = Callable[[MixerConfig, str], AnyMixer]


def multirotor_mixer(cfg: MixerConfig, vehicle_file: str) -> Mixer:
    """A multirotor's motor mixer (the vehicle file is not needed: Quad X outputs 0..3)."""
    return Mixer(tuple(int(c) for c in cfg.motor_channels))


def fixed_wing_mixer(cfg: MixerConfig, vehicle_file: str) -> Union[FixedWingMixer,
                                                                   FourChannelMixer]:
    """A plane's surface mixer: the layout's, with the aircraft's surface ranges."""
    return plane_mixer(cfg.plane_layout, AircraftParams.from_yaml(vehicle_file),
                       cfg.plane_channels, cfg.plane_reversed)


# the mixers by name: a kind flown over MAVLink names its own (sim_core.kinds KindInfo.mixer)
MIXERS: Dict[str, MixerFactory] = {
    'quad_x': multirotor_mixer,
    'fixed_wing': fixed_wing_mixer,
}


def check_layout(layout: str) -> str:
    """Return layout if it is one of PLANE_LAYOUTS; else raise ConfigError naming them."""
    if layout not in PLANE_LAYOUTS:
        raise ConfigError(f'mixer_plane_layout: {layout!r} is not a layout; one of '
                          + '; '.join(f"'{k}' ({v.split(':')[0]})"
                                      for k, v in PLANE_LAYOUTS.items()))
    return layout


def fixed_wing_servos(power: float, roll: float, pitch: float, yaw: float, flap: float,
                      wheel: float = 0.0, channels=PX4_PLANE, reversed_=PX4_PLANE_REVERSED):
    """The 16 controls[] a PX4-like fixed-wing FC sends for normalized commands (FC side).

    roll/pitch/yaw/wheel -1..1 (positive right wing down, nose up, nose right, nose wheel
    right), power and flap 0..1: the inverse of FixedWingMixer's signs (left aileron servo
    -roll, right +roll, elevator +pitch, rudder +yaw, flaps 0..1, nose wheel +wheel).
    """
    out = [0.0] * N_ALL
    vals = (power, -roll, roll, pitch, yaw, flap, flap, wheel)
    for c, x in zip(channels, vals):
        if c != NONE:
            out[c] = -x if c in reversed_ else x
    return out
