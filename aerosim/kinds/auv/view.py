"""How the viewers draw an AUV: a torpedo with its cruciform tail (sim_viz.core.scene)."""

from sim_dynamics.core.auv import AuvType
from sim_viz.core import scene


def auv_body(params: AuvType, ns: str) -> scene.BodyShapes:
    """A torpedo of the AUV's length and diameter, its cruciform tail."""
    return lambda p, q: scene.auv_shapes(params.length_m, params.diameter_m, p, q, ns)
