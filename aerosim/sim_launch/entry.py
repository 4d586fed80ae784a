"""The nodes' console scripts (`ros2 run`, `ros2 launch`): SIGINT restored before the imports.

A shell starts a background job (`ros2 launch ... &`, a CI script) with SIGINT ignored, and an
ignored signal stays ignored across exec: launch's SIGINT to a node still importing its
libraries (numba, JSBSim, scipy: up to 5 s on a busy machine, before rclpy.init installs its
handler) was lost, the node ran on, and launch escalated to SIGTERM after its 5 s. Each script
restores Python's handler first, then imports its node's module and runs its main(). The
runner (`aerosim launch`) runs the same modules with `python -m` and restores it itself.
"""

import importlib
import signal
from typing import Callable

# console script -> the node's module (its main() is the script); setup.py lists the same names
NODES = {
    'sensors_node': 'sim_sensors.sensors_node',
    'camera_node': 'sim_sensors.camera_node',
    'mavlink_bridge_node': 'mavlink_bridge.mavlink_bridge_node',
    'builtin_fc': 'mavlink_bridge.fc.fc_node',
    'imc_bridge_node': 'imc_bridge.imc_bridge_node',
    'usv_swarm_node': 'sim_dynamics.usv_swarm_node',
    'usv_bridge_node': 'usv_bridge.usv_bridge_node',
    'recorder': 'sim_bag.recorder',
    'player': 'sim_bag.player',
    'viz_node': 'sim_viz.viz_node',
    'foxglove_node': 'sim_viz.foxglove_node',
    'world_node': 'sim_world.world_node',
    'world_plant': 'sim_world.world_plant',
}


def restore_sigint() -> None:
    """Give SIGINT back Python's handler where it was inherited ignored."""
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


def run(module: str) -> None:
    """Restore SIGINT, then import module and run its main().

    Ctrl-C while the module imports is a normal stop: exit 0, no traceback (launch reported
    the node as died with exit code -2, and printed the import's stack).
    """
    restore_sigint()
    try:
        main = importlib.import_module(module).main
    except KeyboardInterrupt:
        raise SystemExit(0) from None
    main()


def __getattr__(name: str) -> Callable[[], None]:
    """The console script `name` (`from sim_launch.entry import dynamics_node`)."""
    module = NODES.get(name)
    if module is None:
        raise AttributeError(f'module {__name__!r} has no attribute {name!r}')
    return lambda: run(module)
