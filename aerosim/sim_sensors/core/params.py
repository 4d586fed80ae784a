"""The configurations of the sensor nodes as data (pure): frames, sensors_node, camera_node.

Each is a frozen dataclass (the defaults) and a table of sim_core.config.Param (description
with units, range, choices) that ``sim_ros.params.read_config`` declares; the ranges are the
constants here, the ones the camera model accepts.
"""

from dataclasses import dataclass
from typing import Tuple

from sim_core.config import Param
from sim_core.members import member_source_parameters
from sim_sensors.core.camera import CameraParams

IMAGE_PX = (16, 4096)               # px, the image width and height the camera renders
HFOV_DEG = (10.0, 170.0)            # deg, its horizontal field of view
PITCH_DOWN_DEG = (-90.0, 90.0)      # deg, its mount tilt below the horizon
JPEG_QUALITY = (1, 100)             # -, PIL's JPEG quality
CAMERA_RATE_HZ = (0.1, 100.0)       # Hz (sim time)
TILE_M = (0.1, 1000.0)              # m, the ground checkerboard's tile
COMPRESSED_FORMATS = ('jpeg', 'png')


@dataclass(frozen=True)
class FramesConfig:
    """The sensor frame ids (sensors_node, and the MAVLink bridge in hil_plant)."""

    imu_frame_id: str = 'imu_link'
    gnss_frame_id: str = 'gnss_link'
    body_frame_id: str = 'base_link'


FRAME_PARAMETERS = {
    'imu_frame_id': Param('IMU/mag/baro frame id (FLU)'),
    'gnss_frame_id': Param('GNSS antenna frame id'),
    'body_frame_id': Param('Body frame id (FLU): parent of the sensor frames on /tf_static'),
}


# sensors_node's own parameters: the world's vehicle it serves (sim_core.members.MemberSource);
# its suite: SuiteConfig, its frames: FramesConfig
SENSORS_PARAMETERS = member_source_parameters('sensed')


@dataclass(frozen=True)
class CameraConfig:
    """camera_node: rate, encoding, frames, and the camera model's parameters."""

    scenario_file: str = 'default'
    rate_hz: float = 10.0
    compressed_format: str = 'jpeg'
    frame_id: str = 'camera_optical_frame'
    body_frame_id: str = 'base_link'
    width: int = 640
    height: int = 480
    hfov_deg: float = 90.0
    position_m: Tuple[float, ...] = (0.1, 0.0, -0.05)
    pitch_down_deg: float = 20.0
    ground_tile_m: float = 2.0
    jpeg_quality: int = 80

    def camera(self) -> CameraParams:
        """The camera model's parameters."""
        return CameraParams(width=self.width, height=self.height, hfov_deg=self.hfov_deg,
                            position_flu=tuple(self.position_m),
                            pitch_down_deg=self.pitch_down_deg, tile_m=self.ground_tile_m,
                            jpeg_quality=self.jpeg_quality)


CAMERA_PARAMETERS = {
    'scenario_file': Param('Scenario YAML (objects to render)'),
    'rate_hz': Param('Frame rate on sim time [Hz]', *CAMERA_RATE_HZ),
    'compressed_format': Param('camera/image_raw/compressed: jpeg or png',
                               choices=COMPRESSED_FORMATS),
    'frame_id': Param('Optical frame id (z fwd, x right)'),
    'body_frame_id': Param('Body frame id (FLU): parent of the optical frame on /tf_static'),
    'width': Param('Image width [px]', *IMAGE_PX),
    'height': Param('Image height [px]', *IMAGE_PX),
    'hfov_deg': Param('Horizontal field of view [deg]', *HFOV_DEG),
    'position_m': Param('Mount position in base_link (FLU) [m]'),
    'pitch_down_deg': Param('Mount tilt below the horizon [deg]', *PITCH_DOWN_DEG),
    'ground_tile_m': Param('Ground checkerboard tile [m]', *TILE_M),
    'jpeg_quality': Param('JPEG quality [-]', *JPEG_QUALITY),
}
