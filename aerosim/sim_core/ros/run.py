"""The common main() of aerosim nodes: init, spin, clean shutdown, clear configuration errors."""

import os

import rclpy
from rclpy.executors import ExternalShutdownException, SingleThreadedExecutor

from sim_core.errors import ConfigError


def make_executor():
    """The executor of every aerosim node: rclpy's SingleThreadedExecutor.

    AEROSIM_EXECUTOR=events selects rclpy's experimental C++ EventsExecutor (Kilted). It is
    not the default: in a first trial the lockstep HIL graph stalled with it (to investigate).
    """
    if os.environ.get('AEROSIM_EXECUTOR', 'single') != 'events':
        return SingleThreadedExecutor()
    from rclpy.experimental import EventsExecutor
    return EventsExecutor()


def spin(node) -> None:
    """The default body of a node's process: spin it on make_executor()."""
    executor = make_executor()
    executor.add_node(node)
    executor.spin()


def run_node(node_cls, name: str, args=None, body=spin) -> None:
    """Create node_cls() and run body(node) (default: spin) until it returns or Ctrl-C/SIGTERM.

    A ConfigError (bad parameter or file) is logged as fatal and exits with code 2. Errors
    raised by rclpy while the context is already shutting down (a signal arrived mid-callback)
    are part of a normal stop, not failures. A body returning an int makes it the exit code.
    """
    rclpy.init(args=args)
    node = None
    code = None
    try:
        node = node_cls()
        code = body(node)
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
    if code:
        raise SystemExit(code)
