"""A boat's landing deck: its shape on the hull, and where its pad is now (pure, no rclpy).

A boat type may carry a deck (kinds/boat/params/*.yaml, ``deck:``): a flat rectangle on the hull,
level with the hull's own axes, centred on a landing pad. Given in the hull's body frame FLU
(x forward, y to port, z up) from the hull's reference point, which is on the waterline (the
boat models' position, heave included):

    pad_flu_m:   [x, y, z] the pad's centre [m]; z is the deck's height above the waterline
    size_m:      [length, width] of the flat deck around the pad [m] (along x, along y)
    friction:    Coulomb friction coefficient of the deck under a landing gear [-]
    beacon:      the pad carries a landing beacon (an IR beacon, a tag) that a vehicle's
                 landing-target sensor sees (sim_sensors.core.landing_target)

The deck moves with the hull's full motion: surge, sway and yaw, and the wave model's heave,
roll and pitch (sim_dynamics.core.usv). ``pad_pose(deck, sample)`` gives the pad's pose and
velocity in the world from the hull's VehicleSample; ``on_deck`` the coordinates of a point in
the deck's frame (x, y along the deck from the pad's centre, h above the deck's plane).
"""

import math
from typing import Annotated, NamedTuple, Sequence, Tuple, Union

import numpy as np
from pydantic import Field
from transforms3d import quaternions as tq

from sim_core.schema import FileModel, quantity, vector

Vec = Union[Sequence[float], np.ndarray]      # a point or a vector
Along = Annotated[float, Field(ge=-100.0, le=100.0)]
Above = Annotated[float, Field(ge=0.0, le=100.0)]
Side = Annotated[float, Field(ge=0.2, le=100.0)]


class DeckSpec(FileModel):
    """A deck on a hull (see the module docstring); lengths [m] in the hull's FLU frame."""

    what = 'deck'
    pad_flu_m: Tuple[Along, Along, Above] = vector(
        ..., "The pad's centre in the hull's FLU frame from its reference point on the "
        "waterline; z: the deck's height above the waterline", 'm')
    size_m: Tuple[Side, Side] = vector(
        ..., 'The flat deck around the pad: length (along x), width (along y)', 'm')
    friction: float = quantity(0.6, 'Coulomb friction coefficient of the deck under a '
                               'landing gear', '-', ge=0.0, le=2.0)
    beacon: bool = Field(True, description="The pad carries a landing beacon a vehicle's "
                         'landing-target sensor sees')

    @property
    def height_m(self) -> float:
        """The deck's height above the waterline [m]."""
        return self.pad_flu_m[2]


class PadPose(NamedTuple):
    """Where a deck's pad is, in the world (ENU)."""

    p_enu: np.ndarray           # the pad's centre [m]
    R: np.ndarray               # ENU <- deck (the hull's FLU axes), 3x3
    v_enu: np.ndarray           # the pad centre's velocity [m/s]
    w_enu: np.ndarray           # the hull's angular velocity [rad/s], ENU
    q_enu_flu: np.ndarray       # the hull's attitude (w, x, y, z)


def pad_pose(deck: DeckSpec, hull_p_enu: Sequence[float], hull_v_enu: Sequence[float],
             hull_q_enu_flu: Sequence[float], hull_w_flu: Sequence[float]) -> PadPose:
    """The pad of deck on the hull whose state is given (a VehicleSample's fields).

    Rigid body: p = p_hull + R r, v = v_hull + w x (R r), with r the pad in the hull's frame.
    """
    q = np.asarray(hull_q_enu_flu, dtype=float)
    R = tq.quat2mat(q)
    r = R @ np.asarray(deck.pad_flu_m, dtype=float)
    w = R @ np.asarray(hull_w_flu, dtype=float)
    return PadPose(np.asarray(hull_p_enu, dtype=float) + r,
                   R, np.asarray(hull_v_enu, dtype=float) + np.cross(w, r), w, q)


def on_deck(pose: PadPose, p_enu: Vec) -> np.ndarray:
    """(x, y, h) of the world point p_enu in the deck's frame [m].

    x, y along the deck from the pad's centre (x forward, y to port), h above its plane.
    """
    return pose.R.T @ (np.asarray(p_enu, dtype=float) - pose.p_enu)


def over_deck(deck: DeckSpec, xyh: Vec) -> bool:
    """The point (x, y, h) of the deck's frame lies over (or under) the deck's rectangle."""
    return abs(xyh[0]) <= 0.5 * deck.size_m[0] and abs(xyh[1]) <= 0.5 * deck.size_m[1]


def point_velocity(pose: PadPose, p_enu: Vec) -> np.ndarray:
    """The velocity [m/s, ENU] of the deck's point at p_enu (rigid with the hull)."""
    return pose.v_enu + np.cross(pose.w_enu, np.asarray(p_enu, dtype=float) - pose.p_enu)


def yaw_of(R: np.ndarray) -> float:
    """The ENU yaw [rad] of a frame's x axis projected on the horizontal."""
    return math.atan2(float(R[1, 0]), float(R[0, 0]))
