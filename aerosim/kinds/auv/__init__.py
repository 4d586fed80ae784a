"""The AUV: a LAUV-like torpedo (sim_dynamics.core.auv), by its own pilot or DUNE over IMC.

Its controllers (kind.yaml): its pilot in the world's process (controllers.py: depth, pitch,
heading and speed loops on its own sensors), or DUNE over IMC (an imc_bridge in /<name>, the
fins on effector_command). Judged on depth and position (judge.py). Its example:
config/scenarios/dive (sim_auv's); dive_dune (DUNE's) in scenarios/.
"""

from kinds.entry import DUNE, IN_PROCESS, ControllerWay, KindEntry, View, name_of
from sim_dynamics.core.auv import AuvType

from .controllers import AuvPilot
from .judge import auv_judge
from .model import AuvModel
from .view import auv_body

ENTRY = KindEntry(
    kind=name_of(__name__), example='dive', schema=AuvType,
    model=AuvModel, view=View(auv_body, 0.6), judge=auv_judge,
    controllers={'builtin': ControllerWay(IN_PROCESS, 'AuvPilot', make=AuvPilot),
                 'imc': DUNE})
