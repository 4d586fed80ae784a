"""How the viewers draw a boat: its hull, and its landing deck if it has one (scene's shapes)."""

from sim_core.frames import quat_rotate
from sim_dynamics.core.usv import BoatType
from sim_viz.core import scene

DECK_COLOR = (0.95, 0.55, 0.10, 1.0)      # a landing deck's pad (orange)


def boat_body(params: BoatType, ns: str) -> scene.BodyShapes:
    """A hull of the boat's length; its landing deck (a flat box at the pad) if it has one."""
    deck = params.deck
    if deck is None:
        return lambda p, q: scene.boat_shapes(params.length_m, p, q, ns)

    def shapes(p, q):
        w = quat_rotate(q, deck.pad_flu_m)
        pad = (float(p[0] + w[0]), float(p[1] + w[1]), float(p[2] + w[2]) - 0.025)
        return scene.boat_shapes(params.length_m, p, q, ns) + [
            scene.Shape(ns, 10, 'cube', pad, tuple(float(x) for x in q),
                        (deck.size_m[0], deck.size_m[1], 0.05), DECK_COLOR)]
    return shapes
