"""A plane's own interfaces in a world (a MemberIo of sim_world.member_io): placeholder.

To be completed: the PFD, effector states, actor model and physical properties, the
FlightControlCommand in, and AeroSim's autopilot interface with the autopilot in the step.
"""

from typing import Tuple

from rclpy.node import Node

from sim_core.members import Member


class PlaneIo:
    """A plane's topics and parameters (see the module docstring)."""

    nodes: Tuple[Node, ...] = ()

    def __init__(self, world, member: Member, model, controller):
        """The interfaces of member's aircraft (model: a PlaneModel)."""
        self.world, self.member, self.model, self.controller = world, member, model, controller

    def publish(self, stamp, t_ns: int) -> None:
        """After each world step."""

    def reset(self) -> None:
        """The world went back to t = 0."""
