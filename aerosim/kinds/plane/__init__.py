"""The plane: a JSBSim aircraft (the C172), flown by its autopilot in the step or over MAVLink.

Its controllers (kind.yaml): AeroSim's autopilot in the world's process (controllers.py), the
built-in FC (builtin_fc) or PX4 SITL over MAVLink, or any ROS node on its effector_command
(or flight_control_command) topic. Its interfaces of its own (the PFD, effector states, the
autopilot's): ros.py. Judged by PlaneJudge (judge.py). Its example: config/scenarios/circuit.
"""

from kinds.entry import (
    ANY_NODE,
    BUILTIN_FC,
    IN_PROCESS,
    PX4,
    ControllerWay,
    KindEntry,
    View,
    name_of,
)
from sim_dynamics.core.plane import AircraftParams

from .controllers import PlaneAutopilot
from .judge import plane_judge
from .model import PlaneModel
from .view import plane_body

ENTRY = KindEntry(
    kind=name_of(__name__), example='circuit', schema=AircraftParams,
    model=PlaneModel, view=View(plane_body, 30.0), judge=plane_judge,
    controllers={'autopilot': ControllerWay(IN_PROCESS, 'PlaneAutopilot', make=PlaneAutopilot),
                 'builtin': BUILTIN_FC, 'px4': PX4, 'topic': ANY_NODE})
