"""A boat's own interfaces in a world: its MemberIo (sim_world.member_io finds ``Io`` here).

Its hold gains as the live parameters of its own node /<name>/usv_node (spun with the
world's): IMC's DynamicsSimParam reaches them through the imc_bridge's vehicle_node. A
change is applied under the world's step lock.
"""

from rcl_interfaces.msg import SetParametersResult
from rclpy.node import Node

from sim_core.members import Member
from sim_dynamics.core.node_params import USV_GAINS, USV_GAINS_PARAMETERS, UsvGainsConfig
from sim_ros.params import read_config


class BoatIo:
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

    def publish(self, stamp, t_ns: int) -> None:
        """Nothing to publish: its state is the world's vehicle_state."""

    def reset(self) -> None:
        """The gains stay as set."""


# its kind's MemberIo factory (world node, member, model, in-process controller or None)
Io = BoatIo
