"""A time source's /sim/* services, its latched /sim/status and its parameter callbacks.

Split out of sim_ros.sim_time_node: the services only call the node's public controls
(``pause``, ``step``, ``reset``, ``set_time_scale``), each serialized under its step lock.
"""

from rcl_interfaces.msg import SetParametersResult

from aerosim_msgs.msg import SimStatus
from aerosim_msgs.srv import Reset, SetPaused, SetTimeScale, Step
from sim_core.clock import validate_time_scale
from sim_core.errors import ConfigError
from sim_core.timeutil import NS_PER_S
from sim_ros import qos
from sim_ros.convert import time_msg

# Shortest wall interval over which the real-time factor is measured [s].
RTF_WINDOW_S = 0.2


def serve(node) -> None:
    """Serve /sim/pause, /sim/step, /sim/reset and /sim/set_time_scale for node."""
    def pause(req, resp):
        resp.success, resp.message = node.pause(req.paused)
        return resp

    def step(req, resp):
        resp.success, resp.message = node.step(req.steps)
        resp.sim_time = time_msg(node.clock.t_ns)
        return resp

    def reset(req, resp):
        resp.success, resp.message = node.reset()
        return resp

    def time_scale(req, resp):
        resp.success, resp.message = node.set_time_scale(req.time_scale)
        return resp
    node.create_service(SetPaused, '/sim/pause', pause)
    node.create_service(Step, '/sim/step', step)
    node.create_service(Reset, '/sim/reset', reset)
    node.create_service(SetTimeScale, '/sim/set_time_scale', time_scale)


class StatusPublisher:
    """The latched /sim/status of a time source, with its measured real-time factor."""

    def __init__(self, node, wall_now: float):
        """Create the publisher on node; wall_now: the start of the first RTF window [s]."""
        self.pub = node.create_publisher(SimStatus, '/sim/status', qos.LATCHED)
        self._wall = wall_now
        self._t_ns = 0
        self._rtf = 0.0

    def publish(self, node, wall_now: float) -> None:
        """Publish node's clock, lockstep, rejected inputs and message (wall_now [s])."""
        c, gate = node.clock, node.gate
        if wall_now - self._wall >= RTF_WINDOW_S:
            self._rtf = (c.t_ns - self._t_ns) / NS_PER_S / (wall_now - self._wall)
            self._wall, self._t_ns = wall_now, c.t_ns
        st = SimStatus()
        st.header.stamp = time_msg(c.t_ns)
        st.state = int(c.state)
        st.sim_time = time_msg(c.t_ns)
        st.step_size = c.dt
        st.steps = c.steps
        st.time_scale = c.time_scale
        st.real_time_factor = float(self._rtf)
        st.late_steps = c.late_steps
        st.lockstep = gate.active
        st.lockstep_timeouts = gate.timeouts
        st.rejected_inputs = node.rejected
        st.message = node.message
        self.pub.publish(st)


def refuse_sim_time(node):
    """An on-set-parameters callback refusing use_sim_time true: node is the time source."""
    def callback(params):
        for p in params:
            if p.name == 'use_sim_time' and p.value:
                reason = (f'use_sim_time: must stay false for {node.get_name()}, the time '
                          f'source (it publishes /clock on the steady wall clock)')
                node.get_logger().warning(f'refused: {reason}')
                return SetParametersResult(successful=False, reason=reason)
        return SetParametersResult(successful=True)
    return callback


def time_scale_parameter(node):
    """An on-set-parameters callback applying time_scale (validated) through node."""
    def callback(params):
        for p in params:
            if p.name != 'time_scale':
                continue
            try:
                ts = validate_time_scale(p.value)
            except (ConfigError, TypeError, ValueError) as exc:
                return SetParametersResult(successful=False, reason=str(exc))
            node.apply_time_scale(ts)
        return SetParametersResult(successful=True)
    return callback
