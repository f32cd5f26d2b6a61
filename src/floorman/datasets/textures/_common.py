"""Drawing helpers shared by the texture modules: anti-aliased polygons, masks and alpha blending."""

from __future__ import annotations

import math
import operator
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Sequence
from typing import SupportsIndex

import cv2
import numpy as np
import numpy.typing as npt

Image = npt.NDArray[np.uint8]
FloatArray = npt.NDArray[np.float64]
Colour = tuple[int, int, int]  # BGR

_SHIFT = 4  # sub-pixel bits for cv2 drawing calls
_ONE = 1 << _SHIFT


def bgr(rgb: tuple[int, int, int]) -> Colour:
    """An (r, g, b) tuple as a BGR colour for OpenCV."""
    return int(rgb[2]), int(rgb[1]), int(rgb[0])


def mix(a: Colour, b: Colour, t: float) -> Colour:
    """Linear mix of two colours: `a` at t=0, `b` at t=1."""
    return (
        round(a[0] + (b[0] - a[0]) * t),
        round(a[1] + (b[1] - a[1]) * t),
        round(a[2] + (b[2] - a[2]) * t),
    )


def check_index(value: object, *, what: str, count: int) -> int:
    """`value` as an index in 0..count-1 (numpy integers accepted, bools not), or ValueError naming it."""
    index = operator.index(value) if isinstance(value, SupportsIndex) else -1
    if isinstance(value, bool) or not 0 <= index < count:
        raise ValueError(f"expected {what} in 0..{count - 1}, got {value!r}")
    return index


def check_ppm(px_per_mm: float) -> None:
    if not (math.isfinite(px_per_mm) and 0.2 <= px_per_mm <= 64.0):
        raise ValueError(f"expected px_per_mm within 0.2..64, got {px_per_mm}")


def read_only(image: Image) -> Image:
    """Mark a cached array read-only so that callers cannot alter the cache by accident."""
    image.flags.writeable = False
    return image


def _fixed(points: FloatArray) -> npt.NDArray[np.int32]:
    return np.round(np.asarray(points, dtype=np.float64) * _ONE - 0.5 * _ONE).astype(np.int32).reshape(-1, 1, 2)


def fill_poly(image: Image, points: FloatArray, colour: Colour | int) -> None:
    """Fill one polygon given in pixel coordinates (pixel centres at integer + 0.5), anti-aliased."""
    value = (colour, colour, colour) if isinstance(colour, int) else colour
    cv2.fillPoly(image, [_fixed(points)], value, lineType=cv2.LINE_AA, shift=_SHIFT)


def polyline(image: Image, points: FloatArray, colour: Colour, *, width: float, closed: bool = False) -> None:
    """An anti-aliased polyline of `width` pixels."""
    cv2.polylines(image, [_fixed(points)], closed, colour, max(1, round(width)), lineType=cv2.LINE_AA, shift=_SHIFT)


def circle(image: Image, centre: tuple[float, float], radius: float, colour: Colour, *, width: float = -1) -> None:
    """An anti-aliased circle (filled when `width` < 0)."""
    centre_fx = (round((centre[0] - 0.5) * _ONE), round((centre[1] - 0.5) * _ONE))
    thickness = -1 if width < 0 else max(1, round(width))
    cv2.circle(image, centre_fx, max(1, round(radius * _ONE)), colour, thickness, lineType=cv2.LINE_AA, shift=_SHIFT)


def ellipse_points(
    centre: tuple[float, float], axes: tuple[float, float], *, start: float = 0.0, end: float = 360.0, n: int = 48
) -> FloatArray:
    """Points along an ellipse arc (degrees, y down)."""
    t = np.radians(np.linspace(start, end, n))
    return np.stack([centre[0] + axes[0] * np.cos(t), centre[1] + axes[1] * np.sin(t)], axis=1)


def rounded_rect_points(x0: float, y0: float, x1: float, y1: float, radius: float) -> FloatArray:
    """The outline of a rounded rectangle as a polygon."""
    r = max(0.0, min(radius, (x1 - x0) / 2, (y1 - y0) / 2))
    corners = ((x1 - r, y0 + r, -90.0), (x1 - r, y1 - r, 0.0), (x0 + r, y1 - r, 90.0), (x0 + r, y0 + r, 180.0))
    parts = [ellipse_points((cx, cy), (r, r), start=a, end=a + 90.0, n=12) for cx, cy, a in corners]
    return np.concatenate(parts, axis=0)


def rounded_rect_alpha(height: int, width: int, radius_px: float) -> Image:
    """A (height, width) uint8 mask, 255 inside a rounded rectangle filling the image, anti-aliased edge.

    Small masks are drawn 2-4x larger and area-averaged down, so the corners' coverage is close to exact.
    """
    scale = int(np.clip(math.ceil(24.0 / max(radius_px, 1.0)), 1, 4))
    mask = np.zeros((height * scale, width * scale), dtype=np.uint8)
    outline = rounded_rect_points(0.0, 0.0, float(width * scale), float(height * scale), radius_px * scale)
    fill_poly(mask, outline, 255)
    if scale > 1:
        mask = np.asarray(cv2.resize(mask, (width, height), interpolation=cv2.INTER_AREA), dtype=np.uint8)
    return mask


def blend(image: Image, mask: Image, colour: Colour, *, x: int, y: int) -> None:
    """Paint `colour` through a uint8 coverage `mask` whose top-left lands at (x, y); clipped to the image."""
    h, w = mask.shape[:2]
    x0, y0 = max(x, 0), max(y, 0)
    x1, y1 = min(x + w, image.shape[1]), min(y + h, image.shape[0])
    if x1 <= x0 or y1 <= y0:
        return
    alpha = mask[y0 - y : y1 - y, x0 - x : x1 - x].astype(np.float32)[..., None] * (1.0 / 255.0)
    roi = image[y0:y1, x0:x1].astype(np.float32)
    ink = np.asarray(colour, dtype=np.float32)
    image[y0:y1, x0:x1] = (roi + (ink - roi) * alpha + 0.5).astype(np.uint8)


def to_bgra(image: Image, alpha: Image) -> Image:
    """Stack a BGR image and an alpha mask into one BGRA array."""
    out = np.empty((*image.shape[:2], 4), dtype=np.uint8)
    out[..., :3] = image
    out[..., 3] = alpha
    return out


def smooth_coverage(distance: npt.NDArray[np.float32], half_width: float, px: float) -> npt.NDArray[np.float32]:
    """Coverage in 0..1 of a line of half-width `half_width` (mm) at `distance` (mm), with pixel size `px` (mm)."""
    cover = np.clip((half_width - distance) / px + 0.5, 0.0, 1.0)
    return np.asarray(cover, dtype=np.float32)


def paint(image: Image, coverage: npt.NDArray[np.float32], colour: Colour) -> None:
    """Blend `colour` over the whole `image` with a float coverage map (0..1), in place."""
    ink = np.asarray(colour, dtype=np.float32)
    roi = image.astype(np.float32)
    image[...] = (roi + (ink - roi) * coverage[..., None] + 0.5).astype(np.uint8)


def transform(points: Sequence[tuple[float, float]] | FloatArray, *, scale: float, dx: float, dy: float) -> FloatArray:
    """Scale then translate unit-shape points to pixels."""
    array = np.asarray(points, dtype=np.float64)
    out: FloatArray = array * scale + np.array([dx, dy])
    return out


class ImageCache:
    """A least-recently-used cache of read-only images bounded by their total size in bytes, thread-safe.

    Texture levels differ a lot in size (a face is 0.36 MB at 4 px/mm, 5.8 MB at 16 px/mm), so a bound on the
    number of entries is no bound on memory.
    """

    def __init__(self, *, max_bytes: int) -> None:
        self.max_bytes = max_bytes
        self._entries: OrderedDict[Hashable, Image] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()

    def get(self, key: Hashable, make: Callable[[], Image]) -> Image:
        """The cached image for `key`, made (and marked read-only) by `make()` on a miss."""
        with self._lock:
            image = self._entries.get(key)
            if image is not None:
                self._entries.move_to_end(key)
                return image
        image = read_only(make())
        with self._lock:
            if key not in self._entries:
                self._entries[key] = image
                self._bytes += image.nbytes
            while self._bytes > self.max_bytes and len(self._entries) > 1:
                _, evicted = self._entries.popitem(last=False)
                self._bytes -= evicted.nbytes
        return image

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self._bytes = 0

    @property
    def nbytes(self) -> int:
        return self._bytes

    def __len__(self) -> int:
        return len(self._entries)
