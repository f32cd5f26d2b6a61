"""Drawing primitives of the renderer: a canvas (image + instance mask) and ROI-limited fills and warps.

Every primitive works inside the bounding box of what it draws, never on the full frame, and writes the
object's id into the instance mask in the same pass as its pixels, so mask and image always agree.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import cv2
import numpy as np
import numpy.typing as npt

from floorman.core.geometry import FloatArray

ImageU8 = npt.NDArray[np.uint8]
MaskI32 = npt.NDArray[np.int32]
IntArray = npt.NDArray[np.int32]

FloatImage = npt.NDArray[np.float32]


def u8(array: object) -> ImageU8:
    """A cv2 result as a typed uint8 array (no copy)."""
    return np.asarray(array, dtype=np.uint8)


def f32(array: object) -> FloatImage:
    """A cv2 result as a typed float32 array (no copy)."""
    return np.asarray(array, dtype=np.float32)


# Fixed-point shift for cv2 polygon fills: sub-pixel vertices, 1/16 px.
_SHIFT = 4
_SCALE = float(1 << _SHIFT)


@dataclass(frozen=True, slots=True)
class Roi:
    """A clipped rectangle of the image: columns x0..x1-1, rows y0..y1-1."""

    x0: int
    y0: int
    x1: int
    y1: int

    @property
    def empty(self) -> bool:
        return self.x1 <= self.x0 or self.y1 <= self.y0

    @property
    def size(self) -> tuple[int, int]:
        return self.x1 - self.x0, self.y1 - self.y0

    @property
    def slices(self) -> tuple[slice, slice]:
        return slice(self.y0, self.y1), slice(self.x0, self.x1)


def roi_of(points: FloatArray, *, width: int, height: int, pad: float = 1.0) -> Roi:
    """The image rectangle covering `points` (N, 2) plus `pad` pixels, clipped to the image."""
    pts = points.reshape(-1, 2)
    lo = pts.min(axis=0)
    hi = pts.max(axis=0)
    return Roi(max(0, math.floor(lo[0] - pad)), max(0, math.floor(lo[1] - pad)),
               min(width, math.ceil(hi[0] + pad) + 1), min(height, math.ceil(hi[1] + pad) + 1))


def fixed(points: FloatArray, roi: Roi) -> IntArray:
    """Polygon vertices relative to the ROI, in cv2's fixed-point format (see `_SHIFT`)."""
    pts = np.asarray(points, dtype=np.float64).reshape(-1, 2) - (roi.x0, roi.y0)
    result: IntArray = np.round(pts * _SCALE).astype(np.int32)
    return result


class Canvas:
    """The image being drawn (BGR uint8) and the instance mask (int32 ids, 0 = background)."""

    def __init__(self, image: ImageU8, mask: MaskI32 | None = None) -> None:
        self.image = image
        self.height, self.width = image.shape[:2]
        self.mask: MaskI32 = np.zeros((self.height, self.width), dtype=np.int32) if mask is None else mask

    def roi(self, points: FloatArray, pad: float = 1.0) -> Roi:
        return roi_of(points, width=self.width, height=self.height, pad=pad)

    def fill_polygons(
        self, polygons: list[FloatArray] | FloatArray, *, colour: tuple[float, float, float], object_id: int | None
    ) -> None:
        """Fill polygons (pixels; a list, or an (N, P, 2) array of N polygons) with one colour; write
        `object_id` into the mask when given."""
        if len(polygons) == 0:
            return
        if isinstance(polygons, np.ndarray):
            roi = self.roi(polygons.reshape(-1, 2))
            if roi.empty:
                return
            pts = list(np.round((polygons - (roi.x0, roi.y0)) * _SCALE).astype(np.int32))
        else:
            roi = self.roi(np.concatenate(polygons, axis=0))
            if roi.empty:
                return
            pts = [fixed(p, roi) for p in polygons]
        sl = self.image[roi.slices]
        cv2.fillPoly(sl, pts, colour, lineType=cv2.LINE_AA, shift=_SHIFT)
        if object_id is not None:
            cv2.fillPoly(self.mask[roi.slices], pts, int(object_id), lineType=cv2.LINE_8, shift=_SHIFT)

    def polylines(self, lines: list[FloatArray] | FloatArray, *, colour: tuple[float, float, float],
                  thickness: int = 1) -> None:
        """Open polylines (a list, or an (N, P, 2) array), anti-aliased, image only."""
        if len(lines) == 0:
            return
        flat = lines.reshape(-1, 2) if isinstance(lines, np.ndarray) else np.concatenate(lines, axis=0)
        roi = self.roi(flat, pad=thickness + 1.0)
        if roi.empty:
            return
        if isinstance(lines, np.ndarray):
            pts = list(np.round((lines - (roi.x0, roi.y0)) * _SCALE).astype(np.int32))
        else:
            pts = [fixed(p, roi) for p in lines]
        cv2.polylines(self.image[roi.slices], pts, False, colour, thickness, lineType=cv2.LINE_AA, shift=_SHIFT)

    def warp_rgba(self, texture: ImageU8, homography: FloatArray, *, outline: FloatArray, object_id: int) -> int:
        """Warp a BGRA texture by `homography` (image <- texture pixels) inside the outline's ROI.

        Alpha-blends the colour, writes the id where alpha > 1/2 and returns the number of id pixels.
        """
        roi = self.roi(outline, pad=2.0)
        if roi.empty:
            return 0
        shift = np.array([[1.0, 0.0, -roi.x0], [0.0, 1.0, -roi.y0], [0.0, 0.0, 1.0]])
        warped = cv2.warpPerspective(texture, shift @ homography, roi.size, flags=cv2.INTER_LINEAR,
                                     borderMode=cv2.BORDER_CONSTANT, borderValue=(0, 0, 0, 0))
        alpha = warped[:, :, 3]
        sl = self.image[roi.slices]
        colour = cv2.cvtColor(warped, cv2.COLOR_BGRA2BGR)
        cv2.copyTo(colour, (alpha == 255).view(np.uint8), sl)
        ys, xs = np.nonzero((alpha > 0) & (alpha < 255))  # the anti-aliased rim
        if ys.size:
            a = alpha[ys, xs].astype(np.float32)[:, None] / 255.0
            sl[ys, xs] = (sl[ys, xs] * (1.0 - a) + colour[ys, xs] * a + 0.5).astype(np.uint8)
        covered = (alpha > 127).view(np.uint8)
        cv2.copyTo(np.full(alpha.shape, object_id, dtype=np.int32), covered, self.mask[roi.slices])
        return int(cv2.countNonZero(covered))

    def shade(self, polygons: list[FloatArray], *, strength: float, blur_px: float) -> None:
        """Darken the image under soft-edged polygons (a cast shadow) by up to `strength`."""
        if not polygons or strength <= 0.0:
            return
        sigma = max(0.6, blur_px)
        roi = self.roi(np.concatenate(polygons, axis=0), pad=3.0 * sigma + 2.0)
        if roi.empty:
            return
        # Draw in a padded local frame so the blur sees the polygon even where it leaves the image.
        layer = np.zeros((roi.y1 - roi.y0, roi.x1 - roi.x0), dtype=np.float32)
        cv2.fillPoly(layer, [fixed(p, roi) for p in polygons], 1.0, lineType=cv2.LINE_AA, shift=_SHIFT)
        layer = f32(cv2.GaussianBlur(layer, (0, 0), sigma))
        factor = 1.0 - strength * layer
        sl = self.image[roi.slices]
        sl[:] = (sl * factor[:, :, None]).astype(np.uint8)

    def count(self, object_id: int, roi: Roi) -> int:
        if roi.empty:
            return 0
        return int(np.count_nonzero(self.mask[roi.slices] == object_id))


@lru_cache(maxsize=64)
def _unit_circle(samples: int) -> FloatArray:
    angles = np.linspace(0.0, 2.0 * math.pi, samples, endpoint=False)
    result: FloatArray = np.stack([np.cos(angles), np.sin(angles), np.zeros(samples)], axis=1)
    result.setflags(write=False)
    return result


def circle_points(center: FloatArray, radius: float, *, samples: int) -> FloatArray:
    """`samples` points on a horizontal circle (3-D, z of the centre), counter-clockwise from +x."""
    result: FloatArray = np.asarray(center, dtype=np.float64) + radius * _unit_circle(samples)
    return result


def convex_hull(points: FloatArray) -> FloatArray:
    hull = cv2.convexHull(np.asarray(points, dtype=np.float32).reshape(-1, 1, 2))
    result: FloatArray = hull.reshape(-1, 2).astype(np.float64)
    return result


def polygon_area(points: FloatArray) -> float:
    return float(cv2.contourArea(np.asarray(points, dtype=np.float32).reshape(-1, 1, 2)))


def on_image_fraction(hull: FloatArray, *, width: int, height: int) -> float:
    """The fraction of a convex polygon's area that lies on the image."""
    area = polygon_area(hull)
    if area < 1e-6:
        return 1.0
    image = np.array([[0, 0], [width, 0], [width, height], [0, height]], dtype=np.float32)
    inside, _ = cv2.intersectConvexConvex(np.asarray(hull, dtype=np.float32), image)
    return float(min(1.0, max(0.0, inside / area)))


def texture_to_plane(*, center: tuple[float, float], angle_deg: float, size_mm: tuple[float, float],
                     texture_shape: tuple[int, ...]) -> FloatArray:
    """Affine (3x3) from an upright texture's pixels to table mm on its plane.

    The texture (rows, columns) spans `size_mm` (w, h); its top edge points along the object's +y axis,
    rotated by `angle_deg` counter-clockwise. Pixel centres sit at (i + 0.5) / px_per_mm.
    """
    w, h = size_mm
    theta = math.radians(angle_deg)
    c, s = math.cos(theta), math.sin(theta)
    sx = w / texture_shape[1]
    sy = h / texture_shape[0]
    # local x = (u + 0.5) * sx - w/2 ; local y = h/2 - (v + 0.5) * sy
    local = np.array([[sx, 0.0, 0.5 * sx - w / 2.0], [0.0, -sy, h / 2.0 - 0.5 * sy], [0.0, 0.0, 1.0]])
    rotate = np.array([[c, -s, center[0]], [s, c, center[1]], [0.0, 0.0, 1.0]])
    result: FloatArray = rotate @ local
    return result


def quantised_px_per_mm(scale: float, *, levels: tuple[float, ...] = (1.0, 2.0, 4.0, 8.0, 16.0)) -> float:
    """The smallest texture resolution level >= the on-screen scale (the largest level if none is)."""
    for level in levels:
        if level >= scale:
            return level
    return levels[-1]
