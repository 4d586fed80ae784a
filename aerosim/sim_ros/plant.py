"""Plant: the typed contract between a time source and the nodes that fly its vehicles in-process.

A composition (mavlink_bridge.hil_plant, plane_plant; sim_world's world_plant) puts a model
node and the nodes flying its vehicles (one MAVLink bridge per vehicle) in one process: each
step's state reaches a bridge by a direct call and the bridge's answer steps the model, with no
middleware hop in the lockstep loop. What the composition may use of the model node is this
Protocol, nothing else: no method names passed as strings, no duck typing, no rclpy internals.

A plant lists its vehicles (``plant_members``): each one's listener index, namespace, kind,
MAVLink instance and ``answer``, the callable taking what its controller sends back. The answer
is per vehicle because in a world of several kinds each takes its kind's command: a quad's
motor throttles (the multirotor mixer's output), a plane's EffectorCommand (the fixed-wing
mixer's).
"""

from dataclasses import dataclass
from typing import Callable, List, Protocol, Sequence, Tuple, Union, runtime_checkable

from sim_core.frames import VehicleSample
from sim_dynamics.core.plane import EffectorCommand

# What a vehicle's controller answers a state with: motor throttles 0..1 (a multirotor), or
# surface angles and throttle (a plane, mavlink_bridge.core.mixer's FixedWingMixer).
Command = Union[Sequence[float], EffectorCommand]
# answer(command, stamp_ns): the command answering the state stamped stamp_ns [ns]
Answer = Callable[[Command, int], None]
StateListener = Callable[[VehicleSample], None]


@dataclass(frozen=True)
class PlantMember:
    """One vehicle of a plant, as a composition sees it."""

    index: int          # its state listener / lockstep member index in the plant
    name: str           # namespace without '/' (a fleet's: quad0, plane0); '' = the node's own
    kind: str           # its kind's name (sim_core.kinds)
    link: int           # its MAVLink instance (sim_core.fleet.member_ports), -1: none
    answer: Answer      # takes its controller's command; safe from any thread


@runtime_checkable
class Plant(Protocol):
    """A time source whose vehicles are flown by other nodes of its process.

    fleet: the vehicles live in their own namespaces (/<name>/...), the nodes flying them too;
    otherwise the one vehicle is the node's namespace's. fleet_start_timeout_s: how long
    (wall) a fleet's clock waits at t = 0 for every vehicle's controller (0 = it does not).
    """

    fleet: bool
    fleet_start_timeout_s: float

    def plant_members(self) -> Tuple[PlantMember, ...]:
        """Its vehicles, in member index order."""

    def add_state_listener(self, fn: StateListener, member: int = 0) -> None:
        """Call fn(state of vehicle member) after every step, before the topics go out."""

    def hold_start(self, missing: Callable[[], List[str]], timeout_s: float) -> None:
        """Keep sim time at 0 while missing() names vehicles not ready, at most timeout_s."""

    def destroy_node(self) -> None:
        """Destroy the node (its publishers, timers and services)."""
