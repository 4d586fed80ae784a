"""The boat: one USV of sim_dynamics.core.usv on the water, by its waypoints or DUNE over IMC.

Its controllers (kind.yaml): a line-of-sight waypoint follower in the world's process
(controllers.py), or DUNE over IMC (an imc_bridge in /<name>). Its hold gains are live
parameters of its own node (ros.py). A boat type may carry a landing deck. Judged by its
waypoints (judge.py). Its example: config/scenarios/harbour (sim_imc's).
"""

from kinds.entry import DUNE, IN_PROCESS, ControllerWay, KindEntry, View, name_of
from sim_dynamics.core.usv import BoatType

from .controllers import BoatWaypoints
from .judge import boat_judge
from .model import BoatModel
from .view import boat_body

ENTRY = KindEntry(
    kind=name_of(__name__), example='harbour', schema=BoatType,
    model=BoatModel, view=View(boat_body, 0.6), judge=boat_judge,
    controllers={'waypoint': ControllerWay(IN_PROCESS, 'BoatWaypoints', make=BoatWaypoints),
                 'imc': DUNE})
