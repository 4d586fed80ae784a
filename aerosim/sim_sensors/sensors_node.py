"""sensors_node: IMU, magnetometer, barometer and GNSS of a world's vehicle, from its state.

Subscribes vehicle_state (or, composed in the world's process, world_plant, takes each step's
state by a direct call); publishes at their own rates (decimated on sim time, stamped with
the measurement's sim time) the topics of sim_sensors.topics: imu, imu/data, mag, baro,
baro/temperature, gnss, gnss/fix (and airspeed for a kind with a pitot), and the sensor
frames on /tf_static. The vehicle is vehicle_index of the world (sim_core.members.
MemberSource): its kind and start decide its suite. A vehicle flown over MAVLink has its
bridge publish the same topics from the samples it sends to the FC instead.
"""

import numpy as np
from rclpy.node import Node

from aerosim_msgs.msg import VehicleState
from sim_core.members import MemberSource
from sim_ros import qos
from sim_ros.convert import time_msg, vehicle_state_arrays
from sim_ros.params import read_config
from sim_ros.run import run_node
from sim_sensors.core.params import SENSORS_PARAMETERS
from sim_sensors.core.suite import SensorSuite
from sim_sensors.params import declare_suite, describe
from sim_sensors.topics import SensorTopics, declare_frames


class SensorsNode(Node):
    """Sensor models driven by the vehicle state."""

    def __init__(self, direct_state: bool = False, **node_kw):
        """Declare parameters, build the models, create publishers.

        direct_state: the states come through on_state() from the world of the same process
        (world_plant); vehicle_state is not subscribed. node_kw: rclpy Node's keywords
        (namespace=, parameter_overrides=).
        """
        super().__init__('sensors_node', **node_kw)
        source = read_config(self, MemberSource, SENSORS_PARAMETERS)
        self.suite_cfg = declare_suite(self)
        frames = declare_frames(self)
        self.member = source.member()
        self.scenario = self.member.scenario
        self.suite = SensorSuite(self.suite_cfg, self.scenario)
        self.topics = SensorTopics(self, *frames)
        if not direct_state:
            # The state stream is the simulation pipeline, not a lossy sensor feed: reliable.
            self.create_subscription(VehicleState, 'vehicle_state', self._on_state, qos.STATE)
        self.get_logger().info(
            f'{self.member.name} ({self.member.kind}): {describe(self.suite_cfg)}; '
            f'Earth field at origin {np.linalg.norm(self.suite.mag.field_enu) * 1e9:.0f} nT')

    def _on_state(self, msg: VehicleState):
        self.on_state(vehicle_state_arrays(msg))

    def on_state(self, s):
        """The sensors of one simulation step (a VehicleSample), published when due."""
        resets = self.suite.clock_reset.resets
        sample = self.suite.sample(*s)
        if self.suite.clock_reset.resets != resets:
            self.get_logger().info('sim time went backwards: sensors reset')
        self.topics.publish(sample, time_msg(s.t_ns))


def main(args=None):
    """Run sensors_node."""
    run_node(SensorsNode, 'sensors_node', args)


if __name__ == '__main__':
    main()
