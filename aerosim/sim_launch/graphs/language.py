"""The graph language: launch arguments, references to their values, node and graph specs.

A graph is data (sim_launch.graphs): LaunchArg, the values a node's parameters take from the
arguments (Arg, ConfigFile, PackageFile, Computed, PerMember), NodeSpec and Graph; and how an
argument string becomes a parameter value (convert). No rclpy, no launch import.
"""

from dataclasses import dataclass
from typing import Callable, Optional, Tuple, Union

from sim_core.members import Member, world_members
from sim_core.scenario import load_scenario


@dataclass(frozen=True)
class LaunchArg:
    """A launch argument: name, default (string, as on a command line), description, choices."""

    name: str
    default: str
    description: str
    choices: Tuple[str, ...] = ()


@dataclass(frozen=True)
class Arg:
    """Reference to a launch argument's value inside a node's parameters or remappings.

    kind: the parameter type the node declares ('str', 'float', 'int', 'bool'); the argument
    string is converted to it, so `time_scale:=0` reaches a DOUBLE parameter as 0.0.
    """

    name: str
    kind: str = 'str'


@dataclass(frozen=True)
class ConfigFile:
    """A file in the package's config/ folder (resolved to share/aerosim/config when installed)."""

    relpath: str


@dataclass(frozen=True)
class PackageFile:
    """A package file named by a launch argument (rviz configs).

    The argument holds a path, or a name in the package's `folder` (share/aerosim/<folder>
    when installed).
    """

    arg: str
    folder: str


@dataclass(frozen=True)
class Computed:
    """A parameter value computed from the launch argument values (strings by name).

    fn returns the value, or None to leave the parameter out (the node's YAML or default
    holds). Both launch paths resolve it the same way (resolve() runs at launch time).
    """

    fn: Callable[[dict], object]


@dataclass(frozen=True)
class PerMember:
    """A parameter value of the node of one vehicle of a world: fn(argument values, member).

    member: a sim_core.members.Member (its name, kind, controller, MAVLink instance `link`).
    None leaves the parameter out.
    """

    fn: Callable[[dict, Member], object]


Value = Union[str, int, float, bool, Arg, ConfigFile, PackageFile, Computed, PerMember]

# NodeSpec.fleet in a world (Graph.world): one node per vehicle for which NodeSpec.members
# holds, in the vehicle's namespace /<name> (sim_core.members: quad0, plane0, boat0)
MEMBER = 'member'


@dataclass(frozen=True)
class NodeSpec:
    """One node of a graph.

    executable: console script (ros2 run aerosim <executable>); module: the same entry point as
    a Python module (the runner runs ``python -m module``). params_file: launch argument(s)
    holding the node's YAML (keyed ``/**/<name>:`` or ``/**/*:``, any namespace), several
    are applied in order. parameters: overrides applied after the files. condition: (launch
    arg, value) the node needs, e.g. ('fc', 'builtin'). use_sim_time: False for the time
    source itself and for nodes that need no ROS clock (the built-in FC runs on the HIL
    sensor time, like PX4; flight_report reads the stamps of what it judges).
    supervisor: the graph ends when this node exits, with its exit code (launch_ros: Shutdown
    on exit; the runner: the supervisor process). rename: False for a process that composes
    several nodes (a `__node` remap would give them all the same name); name then only labels
    the process. condition may also be a tuple of (arg, value) pairs that must all hold;
    any_condition: pairs of which one must hold. module None: not a Python node of ours (rviz2):
    the runner starts the executable if it is installed and says so if not. arguments: command
    line arguments before --ros-args. stop_grace_s: wall time the node may take to end after
    SIGINT before it is escalated to SIGTERM (nodes that write files at the end); 0 = the
    launcher's default (5 s, launch's sigterm_timeout). fleet: '' = one node in the root
    namespace; MEMBER in a world: a node per vehicle (a sim_core.members.Member) for which
    `members(member)` holds, in its namespace.
    """

    name: str
    executable: str
    module: Optional[str]
    params_file: Union[None, str, Tuple[str, ...]] = None
    parameters: Tuple[Tuple[str, Value], ...] = ()
    remappings: Tuple[Tuple[str, Value], ...] = ()
    condition: Union[None, Tuple[str, str], Tuple[Tuple[str, str], ...]] = None
    use_sim_time: bool = True
    package: str = 'aerosim'
    supervisor: bool = False
    rename: bool = True
    any_condition: Tuple[Tuple[str, str], ...] = ()
    arguments: Tuple[Value, ...] = ()
    stop_grace_s: float = 0.0
    fleet: str = ''
    members: Optional[Callable[[Member], bool]] = None


# Nodes that write their results after SIGINT (summary plots, bags): time for it.
WRITER_GRACE_S = 20.0
# A plant (a model and its bridges in one process) stops its bridges' reader threads, then the
# model, each bridge logging its figures: a fleet of two real PX4s under a load average of 15
# took 5.6-6.4 s, past launch's 5 s
PLANT_GRACE_S = 15.0


@dataclass(frozen=True)
class Graph:
    """A named graph: its launch arguments and nodes, all under the `namespace` argument.

    world: the vehicles of the scenario, any mix of kinds (sim_core.members), each in its own
    namespace; its other nodes run in the root namespace (no __ns remap: the world's process
    names its nodes' namespaces). renamed: (argument, its name in this graph) pairs: a preset
    shows an argument of the world under the name its users know (sim_quad_hil's fc is the
    world's controller); fixed: the world's arguments a preset does not offer, with the value
    they keep.
    """

    name: str
    description: str
    args: Tuple[LaunchArg, ...]
    nodes: Tuple[NodeSpec, ...]
    world: bool = False
    renamed: Tuple[Tuple[str, str], ...] = ()
    fixed: Tuple[Tuple[str, str], ...] = ()
    summary: str = ''           # one line for lists (`aerosim graphs`)

    def arg(self, name: str) -> LaunchArg:
        """Return the launch argument called name."""
        for a in self.args:
            if a.name == name:
                return a
        raise KeyError(f'graph {self.name} has no launch argument {name!r}')


def with_defaults(args, **defaults):
    """The launch arguments args with some defaults replaced."""
    return tuple(LaunchArg(a.name, defaults.get(a.name, a.default), a.description, a.choices)
                 for a in args)


def parse_value(text: str):
    """Parse a launch-argument string the way ROS parses `-p name:=value` (YAML scalars)."""
    import yaml
    try:
        v = yaml.safe_load(text)
    except yaml.YAMLError:
        return text
    return v if isinstance(v, (str, int, float, bool)) else text


def convert(arg: Arg, text: str):
    """Convert a launch-argument string to the parameter type arg.kind; clear error if it can't."""
    v = parse_value(text)
    try:
        if arg.kind == 'str':
            return str(text)
        if arg.kind == 'bool':
            if not isinstance(v, bool):
                raise ValueError
            return v
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            raise ValueError
        if arg.kind == 'int':
            if v != int(v):
                raise ValueError
            return int(v)
        return float(v)
    except ValueError:
        raise ValueError(
            f'launch argument {arg.name}: expected {arg.kind}, got {text!r}') from None


def members_of(values: dict) -> Tuple[Member, ...]:
    """The vehicles of a world of these argument values (the world's argument names).

    Its scenario, vehicles, namespace and controller, as resolve_args gives them.
    """
    return world_members(load_scenario(values['scenario']),
                         convert(Arg('vehicles', 'int'), values.get('vehicles', '0')),
                         values.get('namespace', ''), values.get('controller', ''))
