"""The rover: a kinematic-bicycle ground rover on waypoints (the template kind; copy it).

A kind is this folder and one line in kinds/__init__.py: kind.yaml (its facts), params/ (its
parameter files), scenarios/ (its example, rover_yard), model.py (RoverParams, RoverModel),
controllers.py (RoverWaypoints, in the world's step), judge.py (its waypoints on ground
truth), view.py (its body), and here its KindEntry. Its controllers (kind.yaml): waypoint, or
any ROS node on its effector_command topic (throttle and wheel steer). It names itself
nowhere: a copy of this folder under another name is another kind (docs/extending.md).
"""

from kinds.entry import ANY_NODE, IN_PROCESS, ControllerWay, KindEntry, View, name_of

from .controllers import RoverWaypoints
from .judge import rover_judge
from .model import RoverModel, RoverParams
from .view import rover_body

ENTRY = KindEntry(
    kind=name_of(__name__), example='rover_yard', schema=RoverParams,
    model=RoverModel, view=View(rover_body, 0.5), judge=rover_judge,
    controllers={'waypoint': ControllerWay(IN_PROCESS, 'RoverWaypoints', make=RoverWaypoints),
                 'topic': ANY_NODE})
