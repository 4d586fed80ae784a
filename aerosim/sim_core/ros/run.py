"""The common main() of aerosim nodes: init, spin, clean shutdown, clear configuration errors."""

import rclpy
from rclpy.executors import ExternalShutdownException

from sim_core.errors import ConfigError


def run_node(node_cls, name: str, args=None) -> None:
    """Create node_cls() and spin it until Ctrl-C/SIGTERM.

    A ConfigError (bad parameter or file) is logged as fatal and exits with code 2. Errors
    raised by rclpy while the context is already shutting down (a signal arrived mid-callback)
    are part of a normal stop, not failures.
    """
    rclpy.init(args=args)
    node = None
    try:
        node = node_cls()
        rclpy.spin(node)
    except ConfigError as exc:
        rclpy.logging.get_logger(name).fatal(f'configuration error: {exc}')
        raise SystemExit(2) from exc
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    except RuntimeError:
        if rclpy.ok():
            raise
    finally:
        if node is not None:
            node.destroy_node()
        rclpy.try_shutdown()
