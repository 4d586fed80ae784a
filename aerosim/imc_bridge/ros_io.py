"""The IMC bridge's ROS side: its commands as ROS messages, the vehicle node's gains by service."""

import math

from rcl_interfaces.msg import Parameter, ParameterType, ParameterValue
from rcl_interfaces.srv import GetParameters, SetParametersAtomically

from aerosim_msgs.msg import AcousticData, AircraftEffectorCommand, AutopilotCommand
from sim_core.geodesy import KNOT_MPS
from sim_core.timeutil import NS_PER_S
from sim_ros.convert import time_msg

GAINS = ('tas2acc_pgain', 'bank2p_pgain')


def effector_msg(header, throttle, rudder) -> AircraftEffectorCommand:
    """AeroSim throttle [-1, 1] and rudder [rad] (None: not commanded, an empty array)."""
    return AircraftEffectorCommand(
        header=header, throttle_cmd=[] if throttle is None else [float(throttle)],
        rudder_cmd_angle_rad=[] if rudder is None else [float(rudder)])


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
    """

    def __init__(self, node, vehicle_node: str, report):
        """Clients of vehicle_node's parameter services on node; report(t, b, req, addr)."""
        self.node, self.vehicle_node, self.report = node, vehicle_node, report
        self.cli_get = node.create_client(GetParameters, f'{vehicle_node}/get_parameters')
        self.cli_set = node.create_client(SetParametersAtomically,
                                          f'{vehicle_node}/set_parameters_atomically')

    def handle(self, op: int, msg, addr) -> None:
        """Carry out a DynamicsSimParam REQUEST (op 0) or SET (op 1) from addr."""
        if not (self.cli_get.service_is_ready() and self.cli_set.service_is_ready()):
            return self.node._reject('unavailable', f'DynamicsSimParam: {self.vehicle_node} '
                                     'parameter services not available', addr)
        if op == 0:
            return self._get(msg, addr)
        req = SetParametersAtomically.Request(parameters=[
            Parameter(name=n, value=ParameterValue(type=ParameterType.PARAMETER_DOUBLE,
                                                   double_value=float(getattr(msg, n))))
            for n in GAINS])
        self.cli_set.call_async(req).add_done_callback(lambda f: self._after_set(f, msg, addr))

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
                return self.node._reject('unavailable', 'DynamicsSimParam: no gains from '
                                         f'{self.vehicle_node}', addr)
            self.report(*(v.double_value for v in res.values), req, addr)
        self.cli_get.call_async(GetParameters.Request(names=list(GAINS))).add_done_callback(done)
