"""sensors_node: IMU, magnetometer, barometer and GNSS from the vehicle state.

Subscribes vehicle_state; publishes at their own rates (decimated on sim time, stamped with the
measurement's sim time) the topics of sim_sensors.topics: imu, imu/data, mag, baro,
baro/temperature, gnss, gnss/fix, and the sensor frames on /tf_static. In hil_plant the
MAVLink bridge publishes the same topics from the samples it sends to the FC, and the graph
starts no sensors_node.
"""

import numpy as np
from rclpy.node import Node

from aerosim_msgs.msg import VehicleState
from sim_core.scenario import load_scenario
from sim_ros import qos
from sim_ros.convert import vehicle_state_arrays
from sim_ros.params import read_config
from sim_ros.run import run_node
from sim_sensors.core.params import SENSORS_PARAMETERS, SensorsConfig
from sim_sensors.core.suite import SensorSuite
from sim_sensors.params import declare_suite, describe
from sim_sensors.topics import SensorTopics, declare_frames


class SensorsNode(Node):
    """Sensor models driven by the vehicle state."""

    def __init__(self):
        """Declare parameters, build the models, create publishers."""
        super().__init__('sensors_node')
        self.scenario_file = read_config(self, SensorsConfig, SENSORS_PARAMETERS).scenario_file
        self.suite_cfg = declare_suite(self)
        frames = declare_frames(self)
        self.scenario = load_scenario(self.scenario_file)
        self.suite = SensorSuite(self.suite_cfg, self.scenario)
        self.topics = SensorTopics(self, *frames)
        # The state stream is the simulation pipeline, not a lossy sensor feed: reliable.
        self.create_subscription(VehicleState, 'vehicle_state', self._on_state, qos.STATE)
        self.get_logger().info(
            f'{describe(self.suite_cfg)}; Earth field at origin '
            f'{np.linalg.norm(self.suite.mag.field_enu) * 1e9:.0f} nT')

    def _on_state(self, msg: VehicleState):
        resets = self.suite.clock_reset.resets
        sample = self.suite.sample(*vehicle_state_arrays(msg))
        if self.suite.clock_reset.resets != resets:
            self.get_logger().info('sim time went backwards: sensors reset')
        self.topics.publish(sample, msg.header.stamp)


def main(args=None):
    """Run sensors_node."""
    run_node(SensorsNode, 'sensors_node', args)


if __name__ == '__main__':
    main()
