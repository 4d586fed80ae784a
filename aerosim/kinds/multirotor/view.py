"""How the viewers draw a multirotor: body, arms and rotor discs (sim_viz.core.scene)."""

from sim_dynamics.core.multirotor import MultirotorParams
from sim_viz.core import scene


def quad_body(params: MultirotorParams, ns: str) -> scene.BodyShapes:
    """A multirotor's body, arms and rotor discs (its rotors' positions and directions)."""
    rotors = [(r.position, r.direction) for r in params.rotors]
    return lambda p, q: scene.quad_shapes(rotors, p, q, ns)
