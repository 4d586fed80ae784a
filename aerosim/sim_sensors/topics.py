"""The ROS sensor topics of SensorSuite samples (sensors_node, and the bridge in hil_plant).

imu (aerosim_msgs/IMU), imu/data (sensor_msgs/Imu), mag (sensor_msgs/MagneticField), baro
(sensor_msgs/FluidPressure), baro/temperature (sensor_msgs/Temperature), gnss
(aerosim_msgs/GNSS), gnss/fix (sensor_msgs/NavSatFix), airspeed (sensor_msgs/FluidPressure:
the pitot differential pressure [Pa], planes only), each stamped with the measurement's sim
time, and the sensor frames on /tf_static. The messages are reused (filled in place): this
runs at the IMU rate. A topic nobody subscribes to is not filled nor published (a
subscriber, `ros2 topic echo`, a bag recorder, Foxglove, gets every sample from its match on):
each publish costs the lockstep loop ~5-15 µs.
"""

from sensor_msgs.msg import FluidPressure, Imu, MagneticField, NavSatFix, NavSatStatus, Temperature

from aerosim_msgs.msg import GNSS, IMU
from sim_ros import qos
from sim_ros.convert import set_vec3, time_msg
from sim_ros.params import read_config
from sim_ros.static_tf import publish_static
from sim_sensors.core.params import FRAME_PARAMETERS, FramesConfig

KELVIN = 273.15


def declare_frames(node):
    """Declare the sensor frame parameters on node: (imu_frame_id, gnss_frame_id, body)."""
    f = read_config(node, FramesConfig, FRAME_PARAMETERS)
    return f.imu_frame_id, f.gnss_frame_id, f.body_frame_id


class SensorTopics:
    """Publishers of the sensor topics of one vehicle, and its sensor frames on /tf_static."""

    def __init__(self, node, imu_frame_id: str, gnss_frame_id: str, body_frame_id: str):
        """Create the publishers (relative names) on node and send the static transforms."""
        c = node.create_publisher
        self.pub_imu = c(IMU, 'imu', qos.SENSOR_PUB)
        self.pub_imu_std = c(Imu, 'imu/data', qos.SENSOR_PUB)
        self.pub_mag = c(MagneticField, 'mag', qos.SENSOR_PUB)
        self.pub_baro = c(FluidPressure, 'baro', qos.SENSOR_PUB)
        self.pub_temp = c(Temperature, 'baro/temperature', qos.SENSOR_PUB)
        self._node = node
        self.pub_airspeed = None        # created at the first airspeed sample (planes)
        self.pub_gnss = c(GNSS, 'gnss', qos.SENSOR_PUB)
        self.pub_fix = c(NavSatFix, 'gnss/fix', qos.SENSOR_PUB)
        self.imu, self.imu_std, self.mag = IMU(), Imu(), MagneticField()
        self.baro, self.temp = FluidPressure(), Temperature()
        for m in (self.imu, self.mag, self.baro, self.temp):
            m.header.frame_id = imu_frame_id
        self.imu_std.header.frame_id = imu_frame_id
        self.imu_std.orientation_covariance[0] = -1.0      # no orientation estimate
        self.gnss_frame_id = gnss_frame_id
        # the IMU (with mag and baro) and the GNSS antenna sit at the body origin, body axes
        identity = ((0.0, 0.0, 0.0), (1.0, 0.0, 0.0, 0.0))
        self.tf_static = publish_static(node, [(body_frame_id, imu_frame_id, *identity),
                                               (body_frame_id, gnss_frame_id, *identity)])

    def publish(self, s, stamp) -> None:
        """Publish what SensorSample s holds, stamped stamp (builtin_interfaces/Time)."""
        if s.mag_new and self.pub_mag.get_subscription_count():
            m = self.mag
            m.header.stamp = stamp
            set_vec3(m.magnetic_field, s.mag)
            self.pub_mag.publish(m)
        if s.imu is not None:
            own, std_wanted = self.pub_imu.get_subscription_count(), \
                self.pub_imu_std.get_subscription_count()
            if own or std_wanted:
                f_flu, w_flu = s.imu
                im = self.imu
                im.header.stamp = stamp
                set_vec3(im.acceleration, f_flu)
                set_vec3(im.gyroscope, w_flu)
                set_vec3(im.magnetic_field, s.mag)
                if own:
                    self.pub_imu.publish(im)
                if std_wanted:
                    std = self.imu_std
                    std.header.stamp = stamp
                    std.linear_acceleration = im.acceleration
                    std.angular_velocity = im.gyroscope
                    self.pub_imu_std.publish(std)
        if s.baro is not None:
            pres, temp, _ = s.baro
            fp, tm = self.baro, self.temp
            if self.pub_baro.get_subscription_count():
                fp.header.stamp = stamp
                fp.fluid_pressure = pres
                self.pub_baro.publish(fp)
            if self.pub_temp.get_subscription_count():
                tm.header.stamp = stamp
                tm.temperature = temp - KELVIN
                self.pub_temp.publish(tm)
        if s.airspeed is not None:
            if self.pub_airspeed is None:
                self.pub_airspeed = self._node.create_publisher(FluidPressure, 'airspeed',
                                                                qos.SENSOR_PUB)
                self.diff = FluidPressure()
                self.diff.header.frame_id = self.baro.header.frame_id
            if self.pub_airspeed.get_subscription_count():
                self.diff.header.stamp = stamp
                self.diff.fluid_pressure = s.airspeed[0]
                self.pub_airspeed.publish(self.diff)
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
