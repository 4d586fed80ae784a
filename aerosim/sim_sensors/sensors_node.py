"""sensors_node: IMU, magnetometer, barometer and GNSS from the vehicle state.

Subscribes vehicle_state; publishes at their own rates (decimated on sim time, stamped with the
measurement's sim time):
  imu (aerosim_msgs/IMU), imu/data (sensor_msgs/Imu), mag (sensor_msgs/MagneticField),
  baro (sensor_msgs/FluidPressure), baro/temperature (sensor_msgs/Temperature),
  gnss (aerosim_msgs/GNSS), gnss/fix (sensor_msgs/NavSatFix).
"""

from dataclasses import dataclass

from aerosim_msgs.msg import GNSS, IMU, VehicleState
import numpy as np
from rclpy.node import Node
from sensor_msgs.msg import FluidPressure, Imu, MagneticField, NavSatFix, NavSatStatus, Temperature

from sim_core.ros import qos
from sim_core.ros.convert import set_vec3, time_msg, time_ns
from sim_core.ros.params import declare
from sim_core.ros.run import run_node
from sim_core.scenario import load_scenario
from sim_sensors.core.decimator import Decimator
from sim_sensors.core.barometer import BaroModel, BaroParams
from sim_sensors.core.gnss import GnssModel, GnssParams
from sim_sensors.core.imu import ImuModel, ImuParams
from sim_sensors.core.magnetometer import MagModel, MagParams, earth_field_enu

KELVIN = 273.15


@dataclass(frozen=True)
class SensorsConfig:
    """Parameters of sensors_node, read once at start."""

    scenario_file: str
    seed: int
    noise_scale: float
    imu_rate_hz: float
    mag_enabled: bool
    mag_rate_hz: float
    baro_enabled: bool
    baro_rate_hz: float
    gnss_enabled: bool
    gnss_rate_hz: float
    gnss_latency_s: float
    gnss_eph_m: float
    gnss_epv_m: float
    gnss_satellites: int
    imu_frame_id: str
    gnss_frame_id: str


class SensorsNode(Node):
    """Sensor models driven by the vehicle state."""

    def __init__(self):
        """Declare parameters, build the models, create publishers."""
        super().__init__('sensors_node')
        d = lambda *a, **k: declare(self, *a, **k)  # noqa: E731
        self.cfg = cfg = SensorsConfig(
            scenario_file=d('scenario_file', 'default', 'Scenario YAML (origin, date)'),
            seed=d('seed', 0, 'Noise RNG seed [-]; same seed = identical streams', 0, 2**31 - 1),
            noise_scale=d('noise_scale', 1.0, 'Multiplier on every noise term [-]; 0 = ideal',
                          0.0, 100.0),
            imu_rate_hz=d('imu_rate_hz', 250.0, 'IMU rate [Hz]', 1.0, 1000.0),
            mag_enabled=d('mag_enabled', True, 'Publish the magnetometer'),
            mag_rate_hz=d('mag_rate_hz', 100.0, 'Magnetometer rate [Hz]', 1.0, 1000.0),
            baro_enabled=d('baro_enabled', True, 'Publish the barometer'),
            baro_rate_hz=d('baro_rate_hz', 50.0, 'Barometer rate [Hz]', 1.0, 1000.0),
            gnss_enabled=d('gnss_enabled', True, 'Publish GNSS'),
            gnss_rate_hz=d('gnss_rate_hz', 10.0, 'GNSS rate [Hz]', 0.1, 100.0),
            gnss_latency_s=d('gnss_latency_s', 0.0, 'GNSS output latency [s]', 0.0, 2.0),
            gnss_eph_m=d('gnss_eph_m', 0.3, 'GNSS horizontal accuracy, 1 sigma [m]', 0.0, 100.0),
            gnss_epv_m=d('gnss_epv_m', 0.5, 'GNSS vertical accuracy, 1 sigma [m]', 0.0, 100.0),
            gnss_satellites=d('gnss_satellites', 12, 'Satellites used [-]', 0, 64),
            imu_frame_id=d('imu_frame_id', 'imu_link', 'IMU/mag/baro frame id (FLU)'),
            gnss_frame_id=d('gnss_frame_id', 'gnss_link', 'GNSS antenna frame id'),
        )
        self.scenario = load_scenario(cfg.scenario_file)
        self._build_models()
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
        self._mag_last = self.mag.sample(np.array([1.0, 0.0, 0.0, 0.0]))

        def rate(on, hz):
            return f'{hz:g} Hz' if on else 'off'
        self.get_logger().info(
            f'IMU {cfg.imu_rate_hz:g} Hz, mag {rate(cfg.mag_enabled, cfg.mag_rate_hz)}, '
            f'baro {rate(cfg.baro_enabled, cfg.baro_rate_hz)}, '
            f'GNSS {rate(cfg.gnss_enabled, cfg.gnss_rate_hz)}; seed {cfg.seed}, '
            f'noise x{cfg.noise_scale:g}; Earth field at origin '
            f'{np.linalg.norm(self.mag.field_W) * 1e9:.0f} nT')

    def _build_models(self):
        cfg, sc = self.cfg, self.scenario
        rng = np.random.default_rng(cfg.seed)
        k = cfg.noise_scale
        imu_def = ImuParams()
        self.imu = ImuModel(ImuParams(cfg.imu_rate_hz, imu_def.accel.scaled(k),
                                      imu_def.gyro.scaled(k)), rng, sc.environment.gravity)
        self.mag = MagModel(MagParams(cfg.mag_rate_hz, MagParams().noise.scaled(k)),
                            earth_field_enu(sc.origin, sc.decimal_year), rng)
        self.baro = BaroModel(BaroParams(cfg.baro_rate_hz, BaroParams().noise.scaled(k)), rng)
        self.gnss = GnssModel(GnssParams(cfg.gnss_rate_hz, cfg.gnss_latency_s,
                                         cfg.gnss_eph_m * k, cfg.gnss_epv_m * k,
                                         GnssParams().vel_std_mps * k,
                                         satellites=cfg.gnss_satellites), sc.origin, rng)
        self.dec_imu = Decimator(cfg.imu_rate_hz)
        self.dec_mag = Decimator(cfg.mag_rate_hz)
        self.dec_baro = Decimator(cfg.baro_rate_hz)
        self.dec_gnss = Decimator(cfg.gnss_rate_hz)

    def _on_state(self, msg: VehicleState):
        t_ns = time_ns(msg.header.stamp)
        if t_ns < self._last_t_ns:   # sim reset: restart the sample grids and the noise
            self.get_logger().info('sim time went backwards: sensors reset')
            self._build_models()
        self._last_t_ns = t_ns
        pose = msg.state.pose
        q = np.array([pose.orientation.w, pose.orientation.x, pose.orientation.y,
                      pose.orientation.z])
        p = (pose.position.x, pose.position.y, pose.position.z)
        stamp = msg.header.stamp
        cfg = self.cfg
        if cfg.mag_enabled and self.dec_mag.due(t_ns):
            self._mag_last = self.mag.sample(q)
            m = MagneticField()
            m.header.stamp, m.header.frame_id = stamp, cfg.imu_frame_id
            set_vec3(m.magnetic_field, self._mag_last)
            self.pub_mag.publish(m)
        if self.dec_imu.due(t_ns):
            a = msg.acceleration
            w = msg.angular_velocity
            f_B, w_B = self.imu.sample(q, (a.x, a.y, a.z), (w.x, w.y, w.z))
            im = IMU()
            im.header.stamp, im.header.frame_id = stamp, cfg.imu_frame_id
            set_vec3(im.acceleration, f_B)
            set_vec3(im.gyroscope, w_B)
            set_vec3(im.magnetic_field, self._mag_last)
            self.pub_imu.publish(im)
            std = Imu()
            std.header = im.header
            std.orientation_covariance[0] = -1.0   # no orientation estimate
            std.linear_acceleration = im.acceleration
            std.angular_velocity = im.gyroscope
            self.pub_imu_std.publish(std)
        if cfg.baro_enabled and self.dec_baro.due(t_ns):
            pres, temp, _ = self.baro.sample(self.scenario.origin.alt_m + p[2])
            fp = FluidPressure()
            fp.header.stamp, fp.header.frame_id = stamp, cfg.imu_frame_id
            fp.fluid_pressure = pres
            self.pub_baro.publish(fp)
            tm = Temperature()
            tm.header = fp.header
            tm.temperature = temp - KELVIN
            self.pub_temp.publish(tm)
        if cfg.gnss_enabled:
            if self.dec_gnss.due(t_ns):
                v = msg.velocity
                self.gnss.measure(t_ns, p, (v.x, v.y, v.z))
            for fix in self.gnss.release(t_ns):
                self._publish_fix(fix)

    def _publish_fix(self, fix):
        cfg = self.cfg
        g = GNSS()
        g.header.stamp, g.header.frame_id = time_msg(fix.t_ns), cfg.gnss_frame_id
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
