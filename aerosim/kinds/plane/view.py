"""How the viewers draw a plane: a light aircraft (sim_viz.core.scene)."""

from sim_dynamics.core.plane import AircraftParams
from sim_viz.core import scene


def plane_body(params: AircraftParams, ns: str) -> scene.BodyShapes:
    """A light aircraft of a C172's proportions."""
    return lambda p, q: scene.plane_shapes(p, q, ns)
