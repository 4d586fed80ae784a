"""Parameters the sim_viz nodes share."""

from sim_core.errors import ConfigError
from sim_ros.params import declare

MODES = ('vehicle', 'swarm')


def declare_mode(node) -> str:
    """Declare and check `mode`: one vehicle (odom) or a swarm (SwarmState)."""
    mode = declare(node, 'mode', 'vehicle', 'vehicle (odom) or swarm (SwarmState)')
    if mode not in MODES:
        raise ConfigError(f"mode: 'vehicle' or 'swarm', got {mode!r}")
    return mode
