"""sensors_node: IMU, magnetometer, barometer and GNSS from the vehicle state.

Subscribes vehicle_state; publishes at their own rates (decimated on sim time, stamped with the
measurement's sim time):
  imu (aerosim_msgs/IMU), imu/data (sensor_msgs/Imu), mag (sensor_msgs/MagneticField),
  baro (sensor_msgs/FluidPressure), baro/temperature (sensor_msgs/Temperature),
  gnss (aerosim_msgs/GNSS), gnss/fix (sensor_msgs/NavSatFix).
"""

from aerosim_msgs.msg import GNSS, IMU, VehicleState
import numpy as np
from rclpy.node import Node
from sensor_msgs.msg import FluidPressure, Imu, MagneticField, NavSatFix, NavSatStatus, Temperature

from sim_core.ros import qos
from sim_core.ros.convert import set_vec3, time_msg, time_ns, vehicle_state_arrays
from sim_core.ros.params import declare
from sim_core.ros.run import run_node
from sim_core.ros.static_tf import publish_static
from sim_core.scenario import load_scenario
from sim_sensors.core.suite import SensorSuite
from sim_sensors.params import declare_suite, describe

KELVIN = 273.15


class SensorsNode(Node):
    """Sensor models driven by the vehicle state."""

    def __init__(self):
        """Declare parameters, build the models, create publishers."""
        super().__init__('sensors_node')
        self.scenario_file = declare(self, 'scenario_file', 'default',
                                     'Scenario YAML (origin, date)')
        self.suite_cfg = declare_suite(self)
        self.imu_frame_id = declare(self, 'imu_frame_id', 'imu_link',
                                    'IMU/mag/baro frame id (FLU)')
        self.gnss_frame_id = declare(self, 'gnss_frame_id', 'gnss_link', 'GNSS antenna frame id')
        body = declare(self, 'body_frame_id', 'base_link', 'Body frame id (FLU): parent of the '
                       'sensor frames on /tf_static')
        self.scenario = load_scenario(self.scenario_file)
        self.suite = SensorSuite(self.suite_cfg, self.scenario)
        self.pub_imu = self.create_publisher(IMU, 'imu', qos.SENSOR_PUB)
        self.pub_imu_std = self.create_publisher(Imu, 'imu/data', qos.SENSOR_PUB)
        self.pub_mag = self.create_publisher(MagneticField, 'mag', qos.SENSOR_PUB)
        self.pub_baro = self.create_publisher(FluidPressure, 'baro', qos.SENSOR_PUB)
        self.pub_temp = self.create_publisher(Temperature, 'baro/temperature', qos.SENSOR_PUB)
        self.pub_gnss = self.create_publisher(GNSS, 'gnss', qos.SENSOR_PUB)
        self.pub_fix = self.create_publisher(NavSatFix, 'gnss/fix', qos.SENSOR_PUB)
        # The state stream is the simulation pipeline, not a lossy sensor feed: reliable.
        self.create_subscription(VehicleState, 'vehicle_state', self._on_state, qos.STATE)
        self._last_t_ns = -1
        # the IMU (with mag and baro) and the GNSS antenna sit at the body origin, body axes
        identity = ((0.0, 0.0, 0.0), (1.0, 0.0, 0.0, 0.0))
        self.tf_static = publish_static(self, [(body, self.imu_frame_id, *identity),
                                               (body, self.gnss_frame_id, *identity)])

        self.get_logger().info(
            f'{describe(self.suite_cfg)}; Earth field at origin '
            f'{np.linalg.norm(self.suite.mag.field_W) * 1e9:.0f} nT')

    def _on_state(self, msg: VehicleState):
        t_ns = time_ns(msg.header.stamp)
        if t_ns < self._last_t_ns:
            self.get_logger().info('sim time went backwards: sensors reset')
        self._last_t_ns = t_ns
        s = self.suite.sample(*vehicle_state_arrays(msg))
        stamp = msg.header.stamp
        if s.mag_new:
            m = MagneticField()
            m.header.stamp, m.header.frame_id = stamp, self.imu_frame_id
            set_vec3(m.magnetic_field, s.mag)
            self.pub_mag.publish(m)
        if s.imu is not None:
            f_B, w_B = s.imu
            im = IMU()
            im.header.stamp, im.header.frame_id = stamp, self.imu_frame_id
            set_vec3(im.acceleration, f_B)
            set_vec3(im.gyroscope, w_B)
            set_vec3(im.magnetic_field, s.mag)
            self.pub_imu.publish(im)
            std = Imu()
            std.header = im.header
            std.orientation_covariance[0] = -1.0   # no orientation estimate
            std.linear_acceleration = im.acceleration
            std.angular_velocity = im.gyroscope
            self.pub_imu_std.publish(std)
        if s.baro is not None:
            pres, temp, _ = s.baro
            fp = FluidPressure()
            fp.header.stamp, fp.header.frame_id = stamp, self.imu_frame_id
            fp.fluid_pressure = pres
            self.pub_baro.publish(fp)
            tm = Temperature()
            tm.header = fp.header
            tm.temperature = temp - KELVIN
            self.pub_temp.publish(tm)
        for fix in s.gnss:
            self._publish_fix(fix)

    def _publish_fix(self, fix):
        g = GNSS()
        g.header.stamp, g.header.frame_id = time_msg(fix.t_ns), self.gnss_frame_id
        g.latitude, g.longitude, g.altitude = fix.lat_deg, fix.lon_deg, fix.alt_m
        set_vec3(g.velocity, fix.vel_enu)
        g.heading = fix.course_deg
        g.fix_type = fix.fix_type
        g.eph, g.epv = fix.eph_m, fix.epv_m
        g.satellites_visible = fix.satellites
        self.pub_gnss.publish(g)
        n = NavSatFix()
        n.header = g.header
        n.status.status = NavSatStatus.STATUS_FIX
        n.status.service = NavSatStatus.SERVICE_GPS
        n.latitude, n.longitude, n.altitude = fix.lat_deg, fix.lon_deg, fix.alt_m
        h2, v2 = fix.eph_m ** 2, fix.epv_m ** 2
        n.position_covariance = [h2, 0.0, 0.0, 0.0, h2, 0.0, 0.0, 0.0, v2]
        n.position_covariance_type = NavSatFix.COVARIANCE_TYPE_DIAGONAL_KNOWN
        self.pub_fix.publish(n)


def main(args=None):
    """Run sensors_node."""
    run_node(SensorsNode, 'sensors_node', args)


if __name__ == '__main__':
    main()
