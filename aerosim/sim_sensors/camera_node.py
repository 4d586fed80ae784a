"""camera_node: renders the scenario from the vehicle pose (CPU, numpy) at a fixed sim-time rate.

Subscribes vehicle_state; publishes camera/image_raw (sensor_msgs/Image, rgb8),
camera/camera_info (sensor_msgs/CameraInfo) and camera/image_raw/compressed
(sensor_msgs/CompressedImage, JPEG or PNG), stamped with the rendered state's sim time.
"""

from dataclasses import dataclass

import numpy as np
from rclpy.node import Node
from sensor_msgs.msg import CameraInfo, CompressedImage, Image

from aerosim_msgs.msg import VehicleState
from sim_core.decimator import Decimator
from sim_core.errors import ConfigError
from sim_core.scenario import load_scenario
from sim_ros import qos
from sim_ros.convert import time_ns
from sim_ros.params import declare
from sim_ros.run import run_node
from sim_ros.static_tf import publish_static
from sim_sensors.core.camera import CameraParams, PinholeCamera, encode


@dataclass(frozen=True)
class CameraConfig:
    """Parameters of camera_node, read once at start."""

    scenario_file: str
    rate_hz: float
    compressed_format: str
    frame_id: str


class CameraNode(Node):
    """Pinhole camera rendered from the vehicle state."""

    def __init__(self):
        """Declare parameters, build the camera, create publishers."""
        super().__init__('camera_node')
        d = lambda *a, **k: declare(self, *a, **k)  # noqa: E731
        self.cfg = CameraConfig(
            scenario_file=d('scenario_file', 'default', 'Scenario YAML (objects to render)'),
            rate_hz=d('rate_hz', 10.0, 'Frame rate on sim time [Hz]', 0.1, 100.0),
            compressed_format=d('compressed_format', 'jpeg', 'camera/image_raw/compressed: '
                                'jpeg or png'),
            frame_id=d('frame_id', 'camera_optical_frame', 'Optical frame id (z fwd, x right)'),
        )
        body = d('body_frame_id', 'base_link', 'Body frame id (FLU): parent of the optical '
                 'frame on /tf_static')
        params = CameraParams(
            width=d('width', 640, 'Image width [px]', 16, 4096),
            height=d('height', 480, 'Image height [px]', 16, 4096),
            hfov_deg=d('hfov_deg', 90.0, 'Horizontal field of view [deg]', 10.0, 170.0),
            position_flu=tuple(d('position_m', [0.1, 0.0, -0.05],
                               'Mount position in base_link (FLU) [m]')),
            pitch_down_deg=d('pitch_down_deg', 20.0, 'Mount tilt below the horizon [deg]',
                             -90.0, 90.0),
            tile_m=d('ground_tile_m', 2.0, 'Ground checkerboard tile [m]', 0.1, 1000.0),
            jpeg_quality=d('jpeg_quality', 80, 'JPEG quality [-]', 1, 100),
        )
        if self.cfg.compressed_format not in ('jpeg', 'png'):
            raise ConfigError(f'compressed_format: must be jpeg or png, got '
                              f'{self.cfg.compressed_format!r}')
        scenario = load_scenario(self.cfg.scenario_file)
        self.camera = PinholeCamera(params, scenario.objects)
        self.tf_static = publish_static(self, [(body, self.cfg.frame_id, *self.camera.mount())])
        self.decimator = Decimator(self.cfg.rate_hz)
        self._last_t_ns = -1
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
        if t_ns < self._last_t_ns:
            self.decimator.reset()
        self._last_t_ns = t_ns
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
