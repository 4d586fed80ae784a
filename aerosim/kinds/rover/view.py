"""How the viewers draw a rover: its chassis, four wheels and a heading arrow.

Drawn with sim_viz.core.scene's Shape in the world frame from the rover's pose: the chassis a
box of its length and width above the wheels, each wheel a cylinder of its diameter at a
corner of the wheelbase and track, its axis across the rover (a cylinder's axis is its z: the
body's quaternion turned 90 deg about its x).
"""

import math

from transforms3d import quaternions as tq

from sim_core.frames import quat_rotate
from sim_viz.core import scene

from .model import RoverParams

WHEEL = (0.1, 0.1, 0.1, 1.0)                    # tyres: near black
AXLE_X = (math.cos(math.pi / 4.0), math.sin(math.pi / 4.0), 0.0, 0.0)   # 90 deg about x


def rover_body(params: RoverParams, ns: str) -> scene.BodyShapes:
    """The chassis, the four wheels and the heading of a rover of params."""
    r = 0.5 * params.wheel_diameter_m
    h = 0.5 * r + 0.1                           # the chassis' height [m]
    wheels = [(sx * 0.5 * params.wheelbase_m, sy * 0.5 * params.width_m, r)
              for sx in (1.0, -1.0) for sy in (1.0, -1.0)]

    def shapes(p, q):
        p = tuple(float(x) for x in p)
        q = tuple(float(x) for x in q)

        def at(off):
            w = quat_rotate(q, off)
            return (p[0] + float(w[0]), p[1] + float(w[1]), p[2] + float(w[2]))

        q_wheel = tuple(float(x) for x in tq.qmult(q, AXLE_X))
        out = [scene.Shape(ns, 0, 'cube', at((0.0, 0.0, r + 0.5 * h)), q,
                           (params.length_m, 0.8 * params.width_m, h), scene.BODY),
               scene.Shape(ns, 1, 'arrow', at((0.0, 0.0, r + h)), q,
                           (0.8 * params.length_m, 0.08, 0.08), (0.9, 0.9, 0.9, 1.0))]
        for k, off in enumerate(wheels):
            out.append(scene.Shape(ns, 2 + k, 'cylinder', at(off), q_wheel,
                                   (2.0 * r, 2.0 * r, 0.1), WHEEL))
        return out
    return shapes
