"""The IMC bridge's ROS side: commands as ROS messages, the vehicle's gains, discovery sockets."""

import collections
import math
import socket
import struct
import time

from rcl_interfaces.msg import Parameter, ParameterType, ParameterValue
from rcl_interfaces.srv import GetParameters, SetParametersAtomically
from rclpy.clock import Clock, ClockType

from aerosim_msgs.msg import AcousticData, AircraftEffectorCommand, AutopilotCommand
from imc_bridge.core.discovery import DISCOVERY_GROUP
from sim_core.timeutil import NS_PER_S
from sim_core.units import KNOT_MPS
from sim_dynamics.core.node_params import USV_GAINS
from sim_ros.convert import time_msg

GAINS = tuple(USV_GAINS)      # usv_node's live gains, which DynamicsSimParam reads and sets


def effector_msg(header, throttle, rudder, elevators=None) -> AircraftEffectorCommand:
    """AeroSim throttle [-1, 1] and control surfaces [rad] (None: not commanded, empty).

    rudder: one angle (a boat) or a sequence (an AUV's rudder fins, in fin order); elevators:
    a sequence (an AUV's elevator fins) or None.
    """
    rud = [] if rudder is None else [float(rudder)] if isinstance(rudder, (int, float)) \
        else [float(x) for x in rudder]
    return AircraftEffectorCommand(
        header=header, throttle_cmd=[] if throttle is None else [float(throttle)],
        rudder_cmd_angle_rad=rud,
        elevator_cmd_angle_rad=[] if elevators is None else [float(x) for x in elevators])


def autopilot_msg(header, speed_mps, heading_rad) -> AutopilotCommand:
    """Manual setpoints of the boat's holds: speed [m/s] -> kt, heading [rad] -> deg."""
    m = AutopilotCommand(header=header, flight_plan_command=AutopilotCommand.RUN,
                         use_manual_setpoints=True)
    if speed_mps is not None:
        m.airspeed_hold, m.airspeed_setpoint_kts = True, speed_mps / KNOT_MPS
    if heading_rad is not None:
        m.heading_hold = True
        m.heading_setpoint_deg = math.degrees(heading_rad) % 360.0
    return m


def acoustic_msg(dl) -> AcousticData:
    """An acoustic Delivery for us, stamped with its arrival (sim) time."""
    m = AcousticData(type=dl.kind, src=dl.src, dst=dl.dst, speed_bps=dl.speed_bps,
                     range_m=dl.range_m, delay_s=dl.delay_s, data=list(dl.data))
    m.header.stamp = time_msg(int(dl.t_s * NS_PER_S))
    return m


class VehicleGains:
    """DynamicsSimParam on the vehicle node's tas2acc_pgain/bank2p_pgain (parameter services).

    REQUEST: the gains in force go to report(tas2acc, bank2p, req, addr). SET: the vehicle node
    range-checks (its descriptors and callback) and sets both at once or neither; then the
    REPORT tells the gains in force. Refusals and silence are the node's rejects.

    One request at a time, in arrival order: a ROS service keeps the last 10 requests (the
    default service QoS, KEEP_LAST 10), so a burst of 50 calls in flight lost up to 40 without
    a word. Requests wait in a FIFO of at most MAX_PENDING (a request beyond it is refused,
    counted as 'busy'); a call unanswered for CALL_TIMEOUT_S is refused as 'unavailable' and
    the next one goes.
    """

    MAX_PENDING = 1000
    CALL_TIMEOUT_S = 5.0            # s (wall)

    def __init__(self, node, vehicle_node: str, report):
        """Clients of vehicle_node's parameter services on node; report(t, b, req, addr)."""
        self.node, self.vehicle_node, self.report = node, vehicle_node, report
        self.cli_get = node.create_client(GetParameters, f'{vehicle_node}/get_parameters')
        self.cli_set = node.create_client(SetParametersAtomically,
                                          f'{vehicle_node}/set_parameters_atomically')
        self.pending = collections.deque()      # (op, msg, addr) not started yet
        self._call = None           # (future, started [monotonic s]) of the call in flight
        self.answered = 0
        node.create_timer(0.5, self._check_timeout,
                          clock=Clock(clock_type=ClockType.STEADY_TIME))

    def __len__(self) -> int:
        """Requests waiting or in flight."""
        return len(self.pending) + (self._call is not None)

    def handle(self, op: int, msg, addr) -> None:
        """Queue a DynamicsSimParam REQUEST (op 0) or SET (op 1) from addr."""
        if len(self.pending) >= self.MAX_PENDING:
            return self.node._reject('busy', f'DynamicsSimParam: {self.MAX_PENDING} requests '
                                     'already waiting for the vehicle node', addr)
        self.pending.append((op, msg, addr))
        if self._call is None:
            self._next()

    def _next(self) -> None:
        """Start the oldest waiting request, if none is in flight."""
        self._call = None
        while self.pending and self._call is None:
            op, msg, addr = self.pending.popleft()
            if not (self.cli_get.service_is_ready() and self.cli_set.service_is_ready()):
                self.node._reject('unavailable', f'DynamicsSimParam: {self.vehicle_node} '
                                  'parameter services not available', addr)
                continue
            if op == 0:
                self._get(msg, addr)
                continue
            req = SetParametersAtomically.Request(parameters=[
                Parameter(name=n, value=ParameterValue(type=ParameterType.PARAMETER_DOUBLE,
                                                       double_value=float(getattr(msg, n))))
                for n in GAINS])
            self._start(self.cli_set.call_async(req),
                        lambda f, m=msg, a=addr: self._after_set(f, m, a), addr)

    def _start(self, fut, done, addr) -> None:
        token = self._call = (fut, time.monotonic(), addr)

        def finish(f):
            if self._call is token:     # not refused as timed out meanwhile
                done(f)
        fut.add_done_callback(finish)

    def _check_timeout(self) -> None:
        call = self._call
        if call is not None and time.monotonic() - call[1] > self.CALL_TIMEOUT_S:
            self._call = None
            self.node._reject('unavailable', f'DynamicsSimParam: {self.vehicle_node} did not '
                              f'answer within {self.CALL_TIMEOUT_S:g} s', call[2])
            self._next()

    def _after_set(self, fut, req, addr):
        res = fut.result()
        if res is None or not res.result.successful:
            self.node._reject('value', f'DynamicsSimParam SET refused by {self.vehicle_node}: '
                              f'{res.result.reason if res else "no answer"}', addr)
        else:
            self.node.get_logger().info(f'DynamicsSimParam SET tas2acc_pgain '
                                        f'{req.tas2acc_pgain:g}, bank2p_pgain '
                                        f'{req.bank2p_pgain:g}')
        self._get(req, addr)

    def _get(self, req, addr):
        def done(f):
            res = f.result()
            if res is None or len(res.values) != 2:
                self.node._reject('unavailable', 'DynamicsSimParam: no gains from '
                                  f'{self.vehicle_node}', addr)
            else:
                self.answered += 1
                self.report(*(v.double_value for v in res.values), req, addr)
            self._next()
        self._start(self.cli_get.call_async(GetParameters.Request(names=list(GAINS))), done, addr)


def discovery_listener(port: int, log):
    """A socket on the discovery group (its last port): other systems' Announce.

    Bound to the group address, it gets only the group's datagrams (never a unicast
    Announce meant for DUNE's discovery socket on that port); None if it cannot join.
    """
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind((DISCOVERY_GROUP, port))
        s.setsockopt(socket.IPPROTO_IP, socket.IP_ADD_MEMBERSHIP, struct.pack(
            '4s4s', socket.inet_aton(DISCOVERY_GROUP), socket.inet_aton('0.0.0.0')))
    except OSError as exc:
        s.close()
        log.info(f'not listening to {DISCOVERY_GROUP}:{port} for IMC id conflicts '
                 f'({exc.strerror}); a conflicting system is still seen when it sends us its '
                 'Announce')
        return None
    s.setblocking(False)
    return s


def multicast_socket(host: str):
    """A socket for the discovery group: one bound to 127.0.0.1 cannot reach it.

    host: our bind host. Bound to it if that is a routable address (its interface), else to any.
    """
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_TTL, 1)
    s.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_LOOP, 1)
    s.bind((host if host not in ('0.0.0.0', '') and not host.startswith('127.')
            else '0.0.0.0', 0))
    s.setblocking(False)
    return s
