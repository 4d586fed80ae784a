"""The multirotor: a quad of sim_dynamics.core.multirotor, flown over MAVLink or by any node.

Its controllers (kind.yaml): the built-in FC (builtin_fc), PX4 SITL, another MAVLink HIL FC,
or any ROS node on its effector_command topic; none in the world's process. Judged by
MissionJudge (judge.py), drawn with its rotors (view.py). Its parameter files: params/ (iris,
jmavsim_quad); its example: config/scenarios/default.yaml (sim_quad's).
"""

from kinds.entry import ANY_NODE, BUILTIN_FC, EXTERNAL_FC, PX4, KindEntry, View, name_of
from sim_dynamics.core.multirotor import MultirotorParams

from .judge import multirotor_judge
from .model import QuadModel
from .view import quad_body

ENTRY = KindEntry(
    kind=name_of(__name__), example='default', schema=MultirotorParams,
    model=QuadModel, view=View(quad_body, 0.6), judge=multirotor_judge,
    controllers={'builtin': BUILTIN_FC, 'px4': PX4, 'external': EXTERNAL_FC,
                 'topic': ANY_NODE})
