"""Pinhole camera rendered on the CPU with numpy: textured ground plane, sky, scenario objects.

Frames: the camera's optical frame follows REP-103 (z forward, x right, y down). The camera is
mounted on the body (FLU) at ``position_flu`` and tilted down by ``pitch_down_deg``.
Rendering is ray casting: one ray per pixel (precomputed in the optical frame), rotated into the
world (ENU), intersected with the ground plane z = 0 and with the objects (spheres and
axis-aligned boxes); the nearest hit wins. Ground: a checkerboard of ``tile_m`` tiles in two
grass tones with distance haze; sky: a vertical gradient.
"""

from dataclasses import dataclass, field
import io
import math

import numpy as np
from PIL import Image
from transforms3d import quaternions as tq

from sim_core.errors import ConfigError
from sim_core.scenario import SceneObject  # noqa: F401 (re-exported for callers)

# R_FLU_OPT: optical axes expressed in body FLU (columns: x right = -y_flu, y down = -z_flu,
# z = x_flu)
R_FLU_OPT = np.array([[0.0, 0.0, 1.0], [-1.0, 0.0, 0.0], [0.0, -1.0, 0.0]])
SKY_ZENITH = np.array([70, 120, 200], dtype=np.float32)
SKY_HORIZON = np.array([190, 210, 230], dtype=np.float32)
GRASS_A = np.array([86, 130, 60], dtype=np.float32)
GRASS_B = np.array([110, 150, 75], dtype=np.float32)
HAZE_M = 400.0   # m, distance at which the ground has faded 63 % toward the horizon colour
LEVELS = 64      # colour levels of haze and sky gradient
HAZE_FAR_M = 3000.0   # m, distance of the last haze level


@dataclass(frozen=True)
class CameraParams:
    """Image size [px], horizontal field of view [deg], mount (body FLU) and tilt, ground tiles."""

    width: int = 640
    height: int = 480
    hfov_deg: float = 90.0
    position_flu: tuple = (0.1, 0.0, -0.05)     # m
    pitch_down_deg: float = 20.0              # deg, 0 = looking forward, 90 = straight down
    tile_m: float = 2.0                       # m, checkerboard tile size
    jpeg_quality: int = 80

    def __post_init__(self):
        """Validate ranges."""
        if not (16 <= self.width <= 4096 and 16 <= self.height <= 4096):
            raise ConfigError(f'camera size: must be 16..4096 px, got {self.width}x{self.height}')
        if not 10.0 <= self.hfov_deg <= 170.0:
            raise ConfigError(f'hfov_deg: must be in [10, 170], got {self.hfov_deg}')
        if not -90.0 <= self.pitch_down_deg <= 90.0:
            raise ConfigError(f'pitch_down_deg: must be in [-90, 90], got {self.pitch_down_deg}')
        if not 1 <= self.jpeg_quality <= 100:
            raise ConfigError(f'jpeg_quality: must be in [1, 100], got {self.jpeg_quality}')


@dataclass
class PinholeCamera:
    """Intrinsics, projection and rendering of one camera."""

    params: CameraParams = field(default_factory=CameraParams)
    objects: tuple = ()

    def __post_init__(self):
        """Precompute intrinsics, the mount rotation, normalized pixel coordinates and the LUT."""
        p = self.params
        self.fx = self.fy = (p.width / 2.0) / math.tan(math.radians(p.hfov_deg) / 2.0)
        self.cx, self.cy = (p.width - 1) / 2.0, (p.height - 1) / 2.0
        th = math.radians(p.pitch_down_deg)
        r_tilt = np.array([[math.cos(th), 0.0, math.sin(th)], [0.0, 1.0, 0.0],
                           [-math.sin(th), 0.0, math.cos(th)]])    # about +y_flu: nose down
        self.R_flu_opt = r_tilt @ R_FLU_OPT
        # a pixel's ray in the optical frame is (xn[u], yn[v], 1)
        self._xn = ((np.arange(p.width) - self.cx) / self.fx).astype(np.float32)
        self._yn = ((np.arange(p.height) - self.cy) / self.fy).astype(np.float32)
        # colour table, packed RGBA in uint32 (one gather per pixel): [grass A by distance,
        # grass B by distance, sky by elevation], LEVELS entries each
        d = np.linspace(0.0, HAZE_FAR_M, LEVELS, dtype=np.float32)[:, None]
        haze = 1.0 - np.exp(-d / HAZE_M)
        e = np.linspace(0.0, 1.0, LEVELS, dtype=np.float32)[:, None]
        rgb = np.vstack([GRASS_A + (SKY_HORIZON - GRASS_A) * haze,
                         GRASS_B + (SKY_HORIZON - GRASS_B) * haze,
                         SKY_HORIZON + (SKY_ZENITH - SKY_HORIZON) * np.sqrt(e)])
        rgba = np.zeros((3 * LEVELS, 4), dtype=np.uint8)
        rgba[:, :3] = rgb.round()
        self._lut = rgba.view('<u4').ravel()

    # --- geometry ------------------------------------------------------------------------------
    @property
    def K(self):
        """3x3 intrinsic matrix."""
        return np.array([[self.fx, 0.0, self.cx], [0.0, self.fy, self.cy], [0.0, 0.0, 1.0]])

    def mount(self):
        """(position [m], quaternion w, x, y, z) of the optical frame in the body frame (FLU).

        The static transform body -> optical frame (REP-103 optical: z forward, x right,
        y down), tilted down by pitch_down_deg.
        """
        return tuple(float(v) for v in self.params.position_flu), \
            tuple(float(v) for v in tq.mat2quat(self.R_flu_opt))

    def camera_pose(self, p_enu, q_enu_flu):
        """(c_enu camera centre [m], R_enu_opt optical->world rotation) for a body pose."""
        R_enu_flu = tq.quat2mat(q_enu_flu)
        return np.asarray(p_enu, float) + R_enu_flu @ np.asarray(self.params.position_flu), \
            R_enu_flu @ self.R_flu_opt

    def project(self, point_enu, p_enu, q_enu_flu):
        """Pixel (u, v) of a world point, or None if behind the camera."""
        c_enu, R_enu_opt = self.camera_pose(p_enu, q_enu_flu)
        x, y, z = R_enu_opt.T @ (np.asarray(point_enu, float) - c_enu)
        if z <= 0.0:
            return None
        return self.fx * x / z + self.cx, self.fy * y / z + self.cy

    def camera_info(self):
        """Dict with the sensor_msgs/CameraInfo fields (plumb_bob, no distortion)."""
        K = self.K
        P = np.hstack([K, np.zeros((3, 1))])
        return {'width': self.params.width, 'height': self.params.height,
                'distortion_model': 'plumb_bob', 'd': [0.0] * 5,
                'k': K.flatten().tolist(), 'r': np.eye(3).flatten().tolist(),
                'p': P.flatten().tolist()}

    # --- rendering -----------------------------------------------------------------------------
    def _rays(self, R, rows=slice(None), cols=slice(None)):
        """World ray components (dx, dy, dz) for a pixel window; each shape (h, w), float32.

        d = R[:, 0] xn[u] + R[:, 1] yn[v] + R[:, 2]: one broadcast add per component.
        """
        R = R.astype(np.float32)
        xn, yn = self._xn[cols], self._yn[rows]
        return tuple(R[i, 0] * xn[None, :] + (R[i, 1] * yn + R[i, 2])[:, None] for i in range(3))

    def render(self, p_enu, q_enu_flu) -> np.ndarray:
        """Render an RGB8 image, shape (height, width, 3), dtype uint8."""
        p = self.params
        c_enu, R_enu_opt = self.camera_pose(p_enu, q_enu_flu)
        dx, dy, dz = self._rays(R_enu_opt)
        norm = np.sqrt(dx * dx + dy * dy + dz * dz)
        top = LEVELS - 1
        # sky: gradient by elevation
        index = (np.clip(dz / norm, 0.0, 1.0) * top).astype(np.int32)
        index += 2 * LEVELS
        t_ground = np.full(dz.shape, np.inf, dtype=np.float32)
        h = np.float32(c_enu[2])
        if h > 0.0:
            ground = dz < np.float32(-1e-6)
            with np.errstate(divide='ignore', invalid='ignore', over='ignore'):
                t = np.where(ground, -h / dz, np.float32(np.inf))
                inv_tile = np.float32(1.0 / p.tile_m)
                checker = (np.floor((np.float32(c_enu[0]) + t * dx) * inv_tile)
                           + np.floor((np.float32(c_enu[1]) + t * dy) * inv_tile))
                dist_level = np.minimum(t * norm * np.float32(top / HAZE_FAR_M), top)
                gidx = (checker.astype(np.int32) & 1) * LEVELS
                gidx += dist_level.astype(np.int32)
            index = np.where(ground, gidx, index)
            t_ground = t
        img = np.take(self._lut, index).view(np.uint8).reshape(p.height, p.width, 4)
        img = np.ascontiguousarray(img[:, :, :3])
        for obj in self.objects:
            self._draw(obj, c_enu, R_enu_opt, t_ground, img)
        return img

    def _window(self, obj, c_enu, R_enu_opt):
        """Pixel window (rows, cols slices) that can contain obj, or None if not visible."""
        p = self.params
        half = (np.full(3, obj.size[0]) if obj.kind == 'sphere'
                else np.asarray(obj.size) / 2.0)
        corners = np.array([[sx, sy, sz] for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)])
        pts = (np.asarray(obj.center_enu) + corners * half - c_enu) @ R_enu_opt   # optical frame
        if (pts[:, 2] <= 1e-3).all():
            return None
        if (pts[:, 2] <= 1e-3).any():      # straddles the camera plane: whole image
            return slice(None), slice(None)
        u = self.fx * pts[:, 0] / pts[:, 2] + self.cx
        v = self.fy * pts[:, 1] / pts[:, 2] + self.cy
        u0, u1 = max(0, int(np.floor(u.min()))), min(p.width, int(np.ceil(u.max())) + 1)
        v0, v1 = max(0, int(np.floor(v.min()))), min(p.height, int(np.ceil(v.max())) + 1)
        if u0 >= u1 or v0 >= v1:
            return None
        return slice(v0, v1), slice(u0, u1)

    def _draw(self, obj, c_enu, R_enu_opt, t_best, img):
        win = self._window(obj, c_enu, R_enu_opt)
        if win is None:
            return
        rows, cols = win
        dx, dy, dz = self._rays(R_enu_opt, rows, cols)
        o = (c_enu - np.asarray(obj.center_enu)).astype(np.float32)
        with np.errstate(divide='ignore', invalid='ignore', over='ignore'):
            if obj.kind == 'sphere':
                a = dx * dx + dy * dy + dz * dz
                b = dx * o[0] + dy * o[1] + dz * o[2]
                disc = b * b - a * np.float32(o @ o - obj.size[0] ** 2)
                t = np.where(disc >= 0, (-b - np.sqrt(np.maximum(disc, 0))) / a, np.inf)
            else:
                half = np.asarray(obj.size, dtype=np.float32) / 2.0
                tmin = np.full(dx.shape, -np.inf, dtype=np.float32)
                tmax = np.full(dx.shape, np.inf, dtype=np.float32)
                for d, oi, hi in ((dx, o[0], half[0]), (dy, o[1], half[1]), (dz, o[2], half[2])):
                    t1 = (-hi - oi) / d
                    t2 = (hi - oi) / d
                    tmin = np.maximum(tmin, np.minimum(t1, t2))
                    tmax = np.minimum(tmax, np.maximum(t1, t2))
                t = np.where((tmax >= tmin) & (tmax > 0), np.maximum(tmin, 0), np.inf)
        sub_t = t_best[rows, cols]
        closer = (t > 0) & (t < sub_t)
        if closer.any():
            sub_t[closer] = t[closer]
            t_best[rows, cols] = sub_t
            shade = np.clip(1.0 - t / 2000.0, 0.5, 1.0)[..., None]
            color = (np.asarray(obj.color, dtype=np.float32) * shade).astype(np.uint8)
            sub_img = img[rows, cols]
            sub_img[closer] = color[closer]
            img[rows, cols] = sub_img


def encode(image: np.ndarray, fmt: str = 'jpeg', quality: int = 80) -> bytes:
    """Compress an RGB8 image to JPEG or PNG bytes."""
    buf = io.BytesIO()
    if fmt == 'jpeg':
        Image.fromarray(image).save(buf, format='JPEG', quality=quality)
    elif fmt == 'png':
        Image.fromarray(image).save(buf, format='PNG', compress_level=1)
    else:
        raise ConfigError(f'format: must be "jpeg" or "png", got {fmt!r}')
    return buf.getvalue()
