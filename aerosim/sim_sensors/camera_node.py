"""camera_node: renders the scenario from the vehicle pose (CPU, numpy) at a fixed sim-time rate.

Subscribes vehicle_state; publishes camera/image_raw (sensor_msgs/Image, rgb8),
camera/camera_info (sensor_msgs/CameraInfo) and camera/image_raw/compressed
(sensor_msgs/CompressedImage, JPEG or PNG), stamped with the rendered state's sim time.
"""

import numpy as np
from rclpy.node import Node
from sensor_msgs.msg import CameraInfo, CompressedImage, Image

from aerosim_msgs.msg import VehicleState
from sim_core.clock import ResetDetector
from sim_core.decimator import Decimator
from sim_core.scenario import load_scenario
from sim_ros import qos
from sim_ros.convert import time_ns
from sim_ros.params import read_config
from sim_ros.run import run_node
from sim_ros.static_tf import publish_static
from sim_sensors.core.camera import PinholeCamera, encode
from sim_sensors.core.params import CAMERA_PARAMETERS, CameraConfig


class CameraNode(Node):
    """Pinhole camera rendered from the vehicle state."""

    def __init__(self):
        """Declare parameters, build the camera, create publishers."""
        super().__init__('camera_node')
        self.cfg = read_config(self, CameraConfig, CAMERA_PARAMETERS)
        params = self.cfg.camera()
        scenario = load_scenario(self.cfg.scenario_file)
        self.camera = PinholeCamera(params, scenario.objects)
        self.tf_static = publish_static(
            self, [(self.cfg.body_frame_id, self.cfg.frame_id, *self.camera.mount())])
        self.decimator = Decimator(self.cfg.rate_hz)
        self._clock_reset = ResetDetector()
        info = self.camera.camera_info()
        self._info = CameraInfo(width=info['width'], height=info['height'],
                                distortion_model=info['distortion_model'], d=info['d'],
                                k=info['k'], r=info['r'], p=info['p'])
        self._info.header.frame_id = self.cfg.frame_id
        self.pub_image = self.create_publisher(Image, 'camera/image_raw', qos.VIEW_PUB)
        self.pub_info = self.create_publisher(CameraInfo, 'camera/camera_info', qos.SENSOR_PUB)
        self.pub_comp = self.create_publisher(CompressedImage, 'camera/image_raw/compressed',
                                              qos.VIEW_PUB)
        self.create_subscription(VehicleState, 'vehicle_state', self._on_state, qos.STATE)
        self.get_logger().info(
            f'{params.width}x{params.height} px, hfov {params.hfov_deg:g} deg, '
            f'{self.cfg.rate_hz:g} Hz, {len(scenario.objects)} scenario objects')

    def _on_state(self, msg: VehicleState):
        t_ns = time_ns(msg.header.stamp)
        if self._clock_reset.went_back(t_ns):
            self.decimator.reset()
        if not self.decimator.due(t_ns):
            return
        pose = msg.state.pose
        p_enu = (pose.position.x, pose.position.y, pose.position.z)
        q = np.array([pose.orientation.w, pose.orientation.x, pose.orientation.y,
                      pose.orientation.z])
        rgb = self.camera.render(p_enu, q)
        img = Image()
        img.header.stamp, img.header.frame_id = msg.header.stamp, self.cfg.frame_id
        img.height, img.width = rgb.shape[0], rgb.shape[1]
        img.encoding = 'rgb8'
        img.is_bigendian = 0
        img.step = rgb.shape[1] * 3
        img.data = rgb.tobytes()
        self.pub_image.publish(img)
        self._info.header.stamp = msg.header.stamp
        self.pub_info.publish(self._info)
        comp = CompressedImage()
        comp.header = img.header
        comp.format = f'rgb8; {self.cfg.compressed_format} compressed rgb8'
        comp.data = encode(rgb, self.cfg.compressed_format, self.camera.params.jpeg_quality)
        self.pub_comp.publish(comp)


def main(args=None):
    """Run camera_node."""
    run_node(CameraNode, 'camera_node', args)


if __name__ == '__main__':
    main()
