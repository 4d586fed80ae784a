"""Camera: pinhole projection, CameraInfo, rendering of ground, sky and objects, encoding."""

import io
import math
import sys

import numpy as np
from PIL import Image
import pytest
from transforms3d import quaternions as tq

from sim_core.errors import ConfigError
from sim_core.scenario import SceneObject
from sim_sensors.core.camera import CameraParams, PinholeCamera, encode

LEVEL_EAST = np.array([1.0, 0.0, 0.0, 0.0])      # body x = east


def cam(**kw):
    params = {'width': 640, 'height': 480, 'hfov_deg': 90.0, 'position_flu': (0.0, 0.0, 0.0),
              'pitch_down_deg': 0.0}
    params.update(kw.pop('params', {}))
    return PinholeCamera(CameraParams(**params), **kw)


def test_intrinsics_from_field_of_view():
    c = cam()
    assert math.isclose(c.fx, 320.0)                  # (w/2) / tan(45 deg)
    info = c.camera_info()
    assert np.allclose(info['k'], [320.0, 0.0, 319.5, 0.0, 320.0, 239.5, 0.0, 0.0, 1.0])
    assert np.allclose(info['p'][:4], [320.0, 0.0, 319.5, 0.0])
    assert info['distortion_model'] == 'plumb_bob' and info['d'] == [0.0] * 5


def test_known_world_points_project_to_expected_pixels():
    c = cam()
    # straight ahead (east) -> principal point
    assert np.allclose(c.project((10.0, 0.0, 0.0), (0, 0, 0), LEVEL_EAST), (319.5, 239.5))
    # 10 m ahead, 10 m to the left (north) -> 45 deg left = left image edge (u = cx - fx)
    assert np.allclose(c.project((10.0, 10.0, 0.0), (0, 0, 0), LEVEL_EAST), (-0.5, 239.5))
    # 10 m ahead, 2 m down -> v = cy + fx * 0.2
    assert np.allclose(c.project((10.0, 0.0, -2.0), (0, 0, 0), LEVEL_EAST), (319.5, 303.5))
    assert c.project((-10.0, 0.0, 0.0), (0, 0, 0), LEVEL_EAST) is None   # behind


def test_mount_tilt_and_vehicle_yaw_move_the_projection():
    c = cam(params={'pitch_down_deg': 45.0})
    # tilted 45 deg down, a ground point 10 m ahead of a camera at 10 m height is centred
    assert np.allclose(c.project((10.0, 0.0, 0.0), (0, 0, 10.0), LEVEL_EAST), (319.5, 239.5))
    q_north = tq.axangle2quat([0, 0, 1], math.pi / 2)
    assert np.allclose(c.project((0.0, 10.0, 0.0), (0, 0, 10.0), q_north), (319.5, 239.5))


def test_render_shows_sky_above_and_ground_below_the_horizon():
    img = cam().render((0.0, 0.0, 2.0), LEVEL_EAST)
    assert img.shape == (480, 640, 3) and img.dtype == np.uint8
    sky, ground = img[10, 320].astype(int), img[470, 320].astype(int)
    assert sky[2] > sky[1] and sky[2] > sky[0]             # blue
    assert ground[1] > ground[0] and ground[1] > ground[2]  # green
    # checkerboard: neighbouring tiles below the camera differ
    row = img[470].astype(int)
    assert len({tuple(px) for px in row[::8]}) >= 2


def is_color(px, rgb):
    """Return True if px shows rgb (objects are shaded darker with distance, by < 10 %)."""
    return all(abs(int(a) - b) < 0.1 * 255 for a, b in zip(px, rgb))


def test_object_appears_at_its_projection_with_its_colour_and_occludes():
    red = SceneObject('sphere', (20.0, 0.0, 2.0), (1.0,), (255, 0, 0))
    blue = SceneObject('box', (40.0, 0.0, 2.0), (8.0, 8.0, 8.0), (0, 0, 255))
    c = cam(objects=(red, blue))
    img = c.render((0.0, 0.0, 2.0), LEVEL_EAST)
    u, v = c.project(red.center_enu, (0, 0, 2.0), LEVEL_EAST)
    assert is_color(img[int(round(v)), int(round(u))], (255, 0, 0))   # sphere before the box
    # the box shows around the sphere: radius 16 px for the sphere, half-width 32 px for the box
    assert is_color(img[int(round(v)), int(round(u)) + 24], (0, 0, 255))
    # a sphere's silhouette is round: corners of its bounding square show the box, not red
    r_px = c.fx * 1.0 / 20.0
    assert is_color(img[int(round(v - 0.8 * r_px)), int(round(u + 0.8 * r_px))], (0, 0, 255))


def test_objects_behind_the_camera_are_not_drawn():
    red = SceneObject('sphere', (-20.0, 0.0, 2.0), (1.0,), (255, 0, 0))
    img = cam(objects=(red,)).render((0.0, 0.0, 2.0), LEVEL_EAST)
    assert not np.any(np.all(img == (255, 0, 0), axis=-1))


@pytest.mark.parametrize('fmt', ['jpeg', 'png'])
def test_compression_roundtrip(fmt):
    img = cam().render((0.0, 0.0, 5.0), LEVEL_EAST)
    data = encode(img, fmt, 90)
    back = np.asarray(Image.open(io.BytesIO(data)).convert('RGB'))
    assert back.shape == img.shape
    err = np.abs(back.astype(int) - img.astype(int)).mean()
    assert err == 0 if fmt == 'png' else err < 4.0
    assert len(data) < img.nbytes / 5


@pytest.mark.parametrize('bad', [{'width': 8}, {'hfov_deg': 179.0}, {'jpeg_quality': 0},
                                 {'pitch_down_deg': 100.0}])
def test_bad_camera_params_rejected(bad):
    with pytest.raises(ConfigError):
        CameraParams(**bad)


def test_bad_scene_objects_rejected():
    for bad, match in [({'type': 'cone', 'position_enu': [0, 0, 0], 'size': 1}, 'type'),
                       ({'type': 'sphere', 'position_enu': [0, 0], 'size': 1}, 'position'),
                       ({'type': 'box', 'position_enu': [0, 0, 0], 'size': 1}, 'size'),
                       ({'type': 'sphere', 'position_enu': [0, 0, 0], 'size': -1}, 'size'),
                       ({'type': 'sphere', 'position_enu': [0, 0, 0], 'size': 1,
                         'color': [300, 0, 0]}, 'color')]:
        with pytest.raises(ConfigError, match=match):
            SceneObject.from_dict(bad)


def test_static_transform_of_the_optical_frame():
    """base_link -> camera_optical_frame: optical axes tilted down, at the mount position.

    Optical axes: z forward, x right, y down (REP-103), pitched down by pitch_down_deg.
    """
    cam = PinholeCamera(CameraParams(position_flu=(0.1, 0.0, -0.05), pitch_down_deg=20.0))
    xyz, q = cam.mount()
    assert xyz == (0.1, 0.0, -0.05)
    R = tq.quat2mat(q)                          # optical -> body (FLU)
    th = math.radians(20.0)
    assert np.allclose(R @ [0, 0, 1], [math.cos(th), 0.0, -math.sin(th)])   # forward, down
    assert np.allclose(R @ [1, 0, 0], [0.0, -1.0, 0.0])                      # right
    assert np.allclose(R @ [0, 1, 0], [-math.sin(th), 0.0, -math.cos(th)])  # image down
    assert math.isclose(np.linalg.norm(q), 1.0)


class StaticBroadcasterStandIn:
    """tf2_ros.StaticTransformBroadcaster as tf2_ros_py has it.

    Each sendTransform() is one TFMessage on a latched publisher of depth 1, so a late
    subscriber gets the last one only (kept here as `latched`).
    """

    def __init__(self, node, qos=None):
        self.node, self.latched = node, None

    def sendTransform(self, transform):  # noqa: N802 - tf2_ros's name
        self.latched = list(transform) if isinstance(transform, (list, tuple)) else [transform]


def test_sensor_and_camera_nodes_send_all_their_frames_in_one_static_message(monkeypatch):
    import types

    import rclpy

    from sim_sensors.camera_node import CameraNode
    from sim_sensors.sensors_node import SensorsNode
    monkeypatch.setitem(sys.modules, 'tf2_ros', types.SimpleNamespace(
        StaticTransformBroadcaster=StaticBroadcasterStandIn))
    rclpy.init(args=['--ros-args', '-p', 'pitch_down_deg:=30.0'])
    try:
        sensors, camera = SensorsNode(), CameraNode()
        frames = {(t.header.frame_id, t.child_frame_id): t
                  for t in sensors.topics.tf_static.latched}
        assert set(frames) == {('base_link', 'imu_link'), ('base_link', 'gnss_link')}
        assert all(t.transform.rotation.w == 1.0 for t in frames.values())
        (t,) = camera.tf_static.latched
        assert (t.header.frame_id, t.child_frame_id) == ('base_link', 'camera_optical_frame')
        r = t.transform.rotation
        R = tq.quat2mat((r.w, r.x, r.y, r.z))
        th = math.radians(30.0)
        assert np.allclose(R @ [0, 0, 1], [math.cos(th), 0.0, -math.sin(th)])
        assert (t.transform.translation.x, t.transform.translation.z) == (0.1, -0.05)
        sensors.destroy_node()
        camera.destroy_node()
    finally:
        rclpy.shutdown()
