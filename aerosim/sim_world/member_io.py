"""A world vehicle's own topics and parameters, by its kind (node side of the world).

Every vehicle of a world publishes vehicle_state, odom and actor_state (world_node). What a
kind adds is its MemberIo, built by its factory in IO for each of its vehicles, in the
world's process, with the vehicle's model and in-process controller:

- a plane (PlaneIo): its PFD, effector states, actor model and physical properties, the
  normalized FlightControlCommand in; with its autopilot in the step, AeroSim's autopilot
  interface (autopilot_command in; autopilot/status, trajectory/* and /diagnostics out);
- a boat (BoatIo): its holds' gains as the live parameters of /<name>/usv_node (IMC
  DynamicsSimParam reaches them through the imc_bridge's vehicle_node).

A MemberIo publishes after each step (``publish``, in the stepping thread under the world's
step lock), resets with the world, and may own nodes of its own (``nodes``: spun with the
world's). Its callbacks that touch the model take the world's step lock (``locked``).
"""

from typing import Any, Callable, Dict, Protocol, Tuple

from rcl_interfaces.msg import SetParametersResult
from rclpy.node import Node

from sim_core.kinds import VehicleKind
from sim_core.members import Member
from sim_dynamics.core.node_params import USV_GAINS, USV_GAINS_PARAMETERS, UsvGainsConfig
from sim_ros.params import read_config


class MemberIo(Protocol):
    """What a kind adds to a world vehicle's interfaces (module docstring)."""

    nodes: Tuple[Node, ...]

    def publish(self, stamp, t_ns: int) -> None:
        """After each world step: the kind's state topics that are due (stamp: t_ns's)."""

    def reset(self) -> None:
        """The world went back to t = 0."""


class NoIo:
    """A kind with nothing of its own to publish or take."""

    nodes: Tuple[Node, ...] = ()

    def publish(self, stamp, t_ns: int) -> None:
        """Nothing."""

    def reset(self) -> None:
        """Nothing."""


class BoatIo(NoIo):
    """A boat's hold gains: live parameters of its own node /<name>/usv_node."""

    def __init__(self, world, member: Member, model, controller):
        """The gains node of member's boat (model: a BoatModel with its control)."""
        self.node = Node('usv_node', namespace=f'/{member.name}', context=world.context)
        self.model, self.world = model, world
        cfg = read_config(self.node, UsvGainsConfig, USV_GAINS_PARAMETERS)
        for name, attr in USV_GAINS.items():
            setattr(model.control, attr, float(getattr(cfg, name)))
        self.node.add_on_set_parameters_callback(self._on_set)
        self.nodes = (self.node,)

    def _on_set(self, params) -> SetParametersResult:
        """Apply the gains (read-only parameters are refused by rclpy before this)."""
        with self.world.step_lock:
            for p in params:
                if p.name in USV_GAINS:
                    setattr(self.model.control, USV_GAINS[p.name], float(p.value))
        return SetParametersResult(successful=True)


IoFactory = Callable[[Any, Member, Any, Any], MemberIo]


def _plane_io(world, member: Member, model, controller) -> MemberIo:
    from sim_world.plane_io import PlaneIo  # deferred: JSBSim's messages only with a plane
    return PlaneIo(world, member, model, controller)


# each kind's MemberIo factory: (world node, member, model, in-process controller or None)
IO: Dict[VehicleKind, IoFactory] = {
    VehicleKind.PLANE: _plane_io,
    VehicleKind.BOAT: BoatIo,
}


def member_io(world, member: Member) -> MemberIo:
    """The MemberIo of world's vehicle member (NoIo for a kind with none)."""
    make = IO.get(member.kind)
    if make is None:
        return NoIo()
    return make(world, member, world.models[member.index], world.controllers[member.index])
