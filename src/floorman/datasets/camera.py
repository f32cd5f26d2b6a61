"""A pinhole camera model over the table: intrinsics and pose, projection of table-mm points to pixels.

World frame: table millimetres (x, y on the felt, z up). Camera frame: OpenCV convention (x right, y down,
z forward). `Camera.look_at` builds a camera from an eye point and a target; `Camera.table_homography`
gives the exact pixels <- table-mm homography of the felt plane (z = 0), or of any plane z = h.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from floorman.core.geometry import FloatArray


@dataclass(frozen=True)
class Camera:
    """A distortion-free pinhole camera. `rotation` and `translation` map world to camera coordinates."""

    width: int
    height: int
    fx: float
    fy: float
    cx: float
    cy: float
    rotation: FloatArray  # 3x3, world -> camera
    translation: FloatArray  # (3,), world -> camera

    def __post_init__(self) -> None:
        if not (16 <= self.width <= 8192 and 16 <= self.height <= 8192):
            raise ValueError(f"camera: expected an image size within 16..8192 px, got {self.width}x{self.height}")
        if self.fx <= 0 or self.fy <= 0:
            raise ValueError(f"camera: expected positive focal lengths, got fx={self.fx}, fy={self.fy}")
        if np.asarray(self.rotation).shape != (3, 3):
            raise ValueError(f"camera: expected a 3x3 rotation, got {np.asarray(self.rotation).shape}")
        if np.asarray(self.translation).shape != (3,):
            raise ValueError(f"camera: expected a translation of shape (3,), got {np.asarray(self.translation).shape}")

    @classmethod
    def look_at(
        cls,
        *,
        eye: tuple[float, float, float],
        target: tuple[float, float, float],
        size: tuple[int, int],
        hfov_deg: float,
        roll_deg: float = 0.0,
    ) -> Camera:
        """A camera at `eye` (mm) looking at `target`, image `size` (w, h), horizontal field of view."""
        if not 5.0 <= hfov_deg <= 150.0:
            raise ValueError(f"camera: expected a horizontal field of view in 5..150 degrees, got {hfov_deg}")
        eye_v = np.asarray(eye, dtype=np.float64)
        forward = np.asarray(target, dtype=np.float64) - eye_v
        distance = np.linalg.norm(forward)
        if distance < 1e-6:
            raise ValueError("camera: eye and target coincide")
        forward /= distance
        # Image "up" points toward +y of the table unless the camera looks almost straight along it.
        world_up = np.array([0.0, 1.0, 0.0]) if abs(forward[1]) < 0.95 else np.array([1.0, 0.0, 0.0])
        right = np.cross(forward, world_up)
        right /= np.linalg.norm(right)
        down = np.cross(forward, right)
        if roll_deg:
            r = math.radians(roll_deg)
            right, down = right * math.cos(r) + down * math.sin(r), -right * math.sin(r) + down * math.cos(r)
        rotation = np.stack([right, down, forward])
        translation = -rotation @ eye_v
        width, height = size
        fx = width / 2.0 / math.tan(math.radians(hfov_deg) / 2.0)
        return cls(width=width, height=height, fx=fx, fy=fx, cx=width / 2.0, cy=height / 2.0,
                   rotation=rotation, translation=translation)

    @property
    def intrinsics(self) -> FloatArray:
        return np.array([[self.fx, 0.0, self.cx], [0.0, self.fy, self.cy], [0.0, 0.0, 1.0]])

    @property
    def eye(self) -> FloatArray:
        """Camera centre in world mm."""
        result: FloatArray = -self.rotation.T @ self.translation
        return result

    def to_camera(self, points: FloatArray) -> FloatArray:
        pts = np.asarray(points, dtype=np.float64).reshape(-1, 3)
        result: FloatArray = pts @ self.rotation.T + self.translation
        return result

    def project(self, points: FloatArray) -> tuple[FloatArray, FloatArray]:
        """Pixels (N, 2) and depths (N,) of world points (N, 3). Points behind the camera get depth <= 0."""
        cam = self.to_camera(points)
        depth = cam[:, 2]
        safe = np.where(np.abs(depth) < 1e-9, 1e-9, depth)
        u = self.fx * cam[:, 0] / safe + self.cx
        v = self.fy * cam[:, 1] / safe + self.cy
        return np.stack([u, v], axis=1), depth

    def plane_homography(self, z: float = 0.0) -> FloatArray:
        """The 3x3 homography from table mm (x, y) on the plane at height z to pixels."""
        r = self.rotation
        m = np.column_stack([r[:, 0], r[:, 1], r[:, 2] * z + self.translation])
        h = self.intrinsics @ m
        result: FloatArray = h / h[2, 2]
        return result

    def table_homography(self) -> FloatArray:
        """Pixels <- table mm on the felt (z = 0)."""
        return self.plane_homography(0.0)

    def pixels_per_mm(self, x: float = 0.0, y: float = 0.0) -> float:
        """Approximate image scale at a table point (mean of the two axes)."""
        pts = np.array([[x, y, 0.0], [x + 1.0, y, 0.0], [x, y + 1.0, 0.0]])
        uv, _ = self.project(pts)
        return float((np.linalg.norm(uv[1] - uv[0]) + np.linalg.norm(uv[2] - uv[0])) / 2.0)

    @property
    def tilt_deg(self) -> float:
        """Angle between the optical axis and straight down."""
        forward = self.rotation[2]
        return float(math.degrees(math.acos(max(-1.0, min(1.0, -forward[2])))))
