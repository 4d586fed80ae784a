"""Build a launch_ros LaunchDescription from a graph description (real ROS 2 installs only).

launch and launch_ros are imported inside the functions: the pip-only path never needs them.
"""

from sim_launch.graphs import Graph, resolve


def launch_description(graph: Graph):
    """Return the LaunchDescription of a graph.

    One DeclareLaunchArgument per graph argument and, at launch time, one launch_ros Node per
    resolved node (the same resolution as the runner's).
    """
    from launch import LaunchDescription
    from launch.actions import DeclareLaunchArgument, OpaqueFunction

    actions = [DeclareLaunchArgument(a.name, default_value=a.default, description=a.description,
                                     **({'choices': list(a.choices)} if a.choices else {}))
               for a in graph.args]
    actions.append(OpaqueFunction(function=lambda context: node_actions(graph, context)))
    return LaunchDescription(actions)


def node_actions(graph: Graph, context):
    """Launch-time half: substitute the argument values and create the Node actions."""
    from launch.actions import Shutdown
    from launch.substitutions import LaunchConfiguration
    from launch_ros.actions import Node

    values = {a.name: LaunchConfiguration(a.name).perform(context) for a in graph.args}
    nodes = []
    for r in resolve(graph, values):
        nodes.append(Node(
            package=r.package, executable=r.executable, name=r.name if r.rename else None,
            # '' (a fleet's process): no __ns remap, its nodes name their namespaces
            namespace=r.namespace or None,
            parameters=[*r.params_files, r.parameters], remappings=list(r.remappings),
            arguments=[*r.arguments, '--ros-args', '--log-level', r.log_level], output='screen',
            emulate_tty=True, **({'on_exit': Shutdown()} if r.supervisor else {}),
            **({'sigterm_timeout': str(r.stop_grace_s)} if r.stop_grace_s else {})))
    return nodes
