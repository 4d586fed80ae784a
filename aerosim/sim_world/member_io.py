"""A world vehicle's own topics and parameters, by its kind (node side of the world).

Every vehicle of a world publishes vehicle_state, odom and actor_state (world_node). What a
kind adds is its MemberIo, found by convention: the attribute ``Io`` of the module
``kinds.<kind>.ros`` (a kind without that module has nothing of its own: NoIo), a factory
``(world node, member, model, in-process controller or None) -> MemberIo`` built for each of
its vehicles, in the world's process (a plane's: its PFD, effector states and autopilot
interface; a boat's: its holds' gains as live parameters).

A MemberIo publishes after each step (``publish``, in the stepping thread under the world's
step lock), resets with the world, and may own nodes of its own (``nodes``: spun with the
world's). Its callbacks that touch the model take the world's step lock (``locked``).
"""

import importlib
from typing import Any, Callable, Protocol, Tuple

from rclpy.node import Node

from sim_core.errors import ConfigError
from sim_core.members import Member


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


IoFactory = Callable[[Any, Member, Any, Any], MemberIo]
IO_MODULE = 'kinds.{kind}.ros'         # where a kind's MemberIo factory is, as ``Io``


def io_factory(kind: str):
    """The MemberIo factory of kind (its ros module's ``Io``), or None: it has no ros module.

    ConfigError for a ros module without ``Io``; its own import errors propagate.
    """
    name = IO_MODULE.format(kind=kind)
    try:
        module = importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if exc.name != name:        # a module it imports is missing: its own error
            raise
        return None
    make = getattr(module, 'Io', None)
    if not callable(make):
        raise ConfigError(f'{name}: no Io (its MemberIo factory: (world, member, model, '
                          'controller) -> MemberIo)')
    return make


def member_io(world, member: Member) -> MemberIo:
    """The MemberIo of world's vehicle member (NoIo for a kind with none)."""
    make = io_factory(member.kind)
    if make is None:
        return NoIo()
    return make(world, member, world.models[member.index], world.controllers[member.index])
