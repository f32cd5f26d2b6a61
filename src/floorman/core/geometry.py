"""Plane geometry in table millimetres: polygons, point-in-zone, line crossing, homographies.

All functions take and return numpy arrays of shape (N, 2) in millimetres (or pixels for the homography's
image side). Nothing here knows about pixels beyond the homography itself.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]


def as_points(points: Sequence[Sequence[float]] | FloatArray, *, name: str = "points") -> FloatArray:
    """Coerce to a float (N, 2) array, or raise ValueError naming `name`."""
    array = np.asarray(points, dtype=np.float64)
    if array.ndim == 1 and array.shape[0] == 2:
        array = array.reshape(1, 2)
    if array.ndim != 2 or array.shape[1] != 2:
        raise ValueError(f"{name}: expected an array of (x, y) points with shape (N, 2), got {array.shape}")
    if not np.all(np.isfinite(array)):
        raise ValueError(f"{name}: expected finite coordinates, got NaN or infinity")
    return array


def points_in_polygon(points: FloatArray, polygon: FloatArray) -> npt.NDArray[np.bool_]:
    """Even-odd test of many points against one simple polygon; points on an edge count as inside."""
    pts = as_points(points)
    poly = as_points(polygon, name="polygon")
    x = pts[:, 0:1]
    y = pts[:, 1:2]
    x0 = poly[:, 0][None, :]
    y0 = poly[:, 1][None, :]
    x1 = np.roll(poly[:, 0], -1)[None, :]
    y1 = np.roll(poly[:, 1], -1)[None, :]
    straddles = (y0 > y) != (y1 > y)
    with np.errstate(divide="ignore", invalid="ignore"):
        x_cross = x0 + (y - y0) * (x1 - x0) / (y1 - y0)
    inside = np.logical_and(straddles, x < x_cross).sum(axis=1) % 2 == 1
    on_edge = _distance_to_edges(pts, poly).min(axis=1) < 1e-6
    result: npt.NDArray[np.bool_] = inside | on_edge
    return result


def _distance_to_edges(points: FloatArray, polygon: FloatArray) -> FloatArray:
    a = polygon[None, :, :]
    b = np.roll(polygon, -1, axis=0)[None, :, :]
    p = points[:, None, :]
    ab = b - a
    denom = np.maximum((ab**2).sum(axis=2), 1e-12)
    t = np.clip(((p - a) * ab).sum(axis=2) / denom, 0.0, 1.0)
    closest = a + t[:, :, None] * ab
    distances: FloatArray = np.sqrt(((p - closest) ** 2).sum(axis=2))
    return distances


def distance_to_boundary(points: FloatArray, polygon: FloatArray) -> FloatArray:
    """Distance from each point to the nearest edge of the polygon, in the polygon's units."""
    result: FloatArray = _distance_to_edges(as_points(points), as_points(polygon, name="polygon")).min(axis=1)
    return result


def short_side(corners: npt.NDArray[np.floating[Any]] | Sequence[Sequence[float]]) -> float:
    """The shorter side of a quadrilateral given as four corners in order (a card's width in pixels). Not checked
    for finite values: a corner at infinity (a homography's horizon) gives an infinite or NaN side, as it did."""
    quad = np.asarray(corners, dtype=np.float64)
    if quad.shape != (4, 2):
        raise ValueError(f"corners: expected 4 (x, y) corners, shape (4, 2), got {quad.shape}")
    return float(min(np.linalg.norm(quad[1] - quad[0]), np.linalg.norm(quad[2] - quad[1])))


def polygon_area(polygon: FloatArray) -> float:
    """Signed area (positive when counter-clockwise)."""
    poly = as_points(polygon, name="polygon")
    x, y = poly[:, 0], poly[:, 1]
    return float(0.5 * (np.dot(x, np.roll(y, -1)) - np.dot(y, np.roll(x, -1))))


def polygon_centroid(polygon: FloatArray) -> tuple[float, float]:
    poly = as_points(polygon, name="polygon")
    x, y = poly[:, 0], poly[:, 1]
    cross = x * np.roll(y, -1) - np.roll(x, -1) * y
    area = cross.sum() / 2.0
    if abs(area) < 1e-12:
        return float(x.mean()), float(y.mean())
    cx = ((x + np.roll(x, -1)) * cross).sum() / (6.0 * area)
    cy = ((y + np.roll(y, -1)) * cross).sum() / (6.0 * area)
    return float(cx), float(cy)


def segments_intersect(p0: FloatArray, p1: FloatArray, q0: FloatArray, q1: FloatArray) -> npt.NDArray[np.bool_]:
    """Whether segment p0-p1 (one) crosses each of the segments q0[i]-q1[i] (proper or touching)."""
    a = np.asarray(p0, dtype=np.float64).reshape(1, 2)
    b = np.asarray(p1, dtype=np.float64).reshape(1, 2)
    c = as_points(q0)
    d = as_points(q1)

    def orient(u: FloatArray, v: FloatArray, w: FloatArray) -> FloatArray:
        value: FloatArray = (v[:, 0] - u[:, 0]) * (w[:, 1] - u[:, 1]) - (v[:, 1] - u[:, 1]) * (w[:, 0] - u[:, 0])
        return value

    o1 = orient(a, b, c)
    o2 = orient(a, b, d)
    o3 = orient(c, d, a)
    o4 = orient(c, d, b)
    proper = (np.sign(o1) * np.sign(o2) <= 0) & (np.sign(o3) * np.sign(o4) <= 0)
    # Collinear, disjoint segments satisfy the sign test too; reject them by their bounding boxes.
    overlap_x = np.minimum(np.maximum(a[:, 0], b[:, 0]), np.maximum(c[:, 0], d[:, 0])) >= np.maximum(
        np.minimum(a[:, 0], b[:, 0]), np.minimum(c[:, 0], d[:, 0])
    )
    overlap_y = np.minimum(np.maximum(a[:, 1], b[:, 1]), np.maximum(c[:, 1], d[:, 1])) >= np.maximum(
        np.minimum(a[:, 1], b[:, 1]), np.minimum(c[:, 1], d[:, 1])
    )
    result: npt.NDArray[np.bool_] = proper & overlap_x & overlap_y
    return result


def crosses_polyline(start: Sequence[float], end: Sequence[float], polyline: FloatArray) -> bool:
    """Whether the motion from `start` to `end` crosses the open polyline (e.g. a seat's bet line)."""
    line = as_points(polyline, name="polyline")
    if line.shape[0] < 2:
        raise ValueError(f"polyline: expected at least 2 points, got {line.shape[0]}")
    p0 = np.asarray(start, dtype=np.float64)
    p1 = np.asarray(end, dtype=np.float64)
    return bool(segments_intersect(p0, p1, line[:-1], line[1:]).any())


def polygons_overlap(first: FloatArray, second: FloatArray, *, tolerance: float = 1e-6) -> bool:
    """Whether two simple polygons share interior area (touching edges do not count)."""
    a = as_points(first, name="polygon")
    b = as_points(second, name="polygon")
    if (a[:, 0].max() <= b[:, 0].min() + tolerance or b[:, 0].max() <= a[:, 0].min() + tolerance
            or a[:, 1].max() <= b[:, 1].min() + tolerance or b[:, 1].max() <= a[:, 1].min() + tolerance):
        return False
    # A vertex strictly inside the other polygon.
    for inner, outer in ((a, b), (b, a)):
        inside = points_in_polygon(inner, outer)
        far = _distance_to_edges(inner, outer).min(axis=1) > tolerance
        if np.any(inside & far):
            return True
    # Edges crossing properly.
    a_next = np.roll(a, -1, axis=0)
    b_next = np.roll(b, -1, axis=0)
    for i in range(a.shape[0]):
        if np.any(_proper_crossings(a[i], a_next[i], b, b_next, tolerance)):
            return True
    # Identical or nested polygons with shared vertices: compare midpoints of edges.
    mids = (a + a_next) / 2.0
    centre = np.asarray(polygon_centroid(a)).reshape(1, 2)
    probes = mids + (centre - mids) * 1e-3
    return bool(np.any(points_in_polygon(probes, b) & (_distance_to_edges(probes, b).min(axis=1) > tolerance)))


def _proper_crossings(
    p0: FloatArray, p1: FloatArray, q0: FloatArray, q1: FloatArray, tolerance: float
) -> npt.NDArray[np.bool_]:
    def orient(u: FloatArray, v: FloatArray, w: FloatArray) -> FloatArray:
        value: FloatArray = (v[..., 0] - u[..., 0]) * (w[..., 1] - u[..., 1]) - (v[..., 1] - u[..., 1]) * (
            w[..., 0] - u[..., 0]
        )
        return value

    o1 = orient(p0[None, :], p1[None, :], q0)
    o2 = orient(p0[None, :], p1[None, :], q1)
    o3 = orient(q0, q1, p0[None, :])
    o4 = orient(q0, q1, p1[None, :])
    result: npt.NDArray[np.bool_] = (o1 * o2 < -tolerance) & (o3 * o4 < -tolerance)
    return result


def rotated_rect(center: Sequence[float], size: Sequence[float], angle_deg: float) -> FloatArray:
    """Corners (counter-clockwise) of a rectangle of `size` (w, h) centred at `center`, rotated by `angle_deg`."""
    cx, cy = float(center[0]), float(center[1])
    w, h = float(size[0]) / 2.0, float(size[1]) / 2.0
    theta = math.radians(angle_deg)
    c, s = math.cos(theta), math.sin(theta)
    corners = np.array([[-w, -h], [w, -h], [w, h], [-w, h]], dtype=np.float64)
    rotation = np.array([[c, -s], [s, c]])
    result: FloatArray = corners @ rotation.T + np.array([cx, cy])
    return result


def racetrack(length: float, width: float, *, points_per_end: int = 24) -> FloatArray:
    """A stadium shape (two half-discs joined by straight sides) centred at the origin, counter-clockwise."""
    if length < width:
        raise ValueError(f"racetrack: expected length >= width, got {length} < {width}")
    radius = width / 2.0
    half_straight = (length - width) / 2.0
    right = [
        (half_straight + radius * math.cos(a), radius * math.sin(a))
        for a in np.linspace(-math.pi / 2, math.pi / 2, points_per_end)
    ]
    left = [
        (-half_straight + radius * math.cos(a), radius * math.sin(a))
        for a in np.linspace(math.pi / 2, 3 * math.pi / 2, points_per_end)
    ]
    return np.asarray(right + left, dtype=np.float64)


def ellipse(length: float, width: float, *, points: int = 72) -> FloatArray:
    """An axis-aligned ellipse centred at the origin, counter-clockwise."""
    angles = np.linspace(0.0, 2 * math.pi, points, endpoint=False)
    return np.stack([length / 2.0 * np.cos(angles), width / 2.0 * np.sin(angles)], axis=1)


def offset_racetrack(length: float, width: float, inset: float, *, points_per_end: int = 24) -> FloatArray:
    """The racetrack of `length` x `width` shrunk by `inset` millimetres all round."""
    return racetrack(length - 2 * inset, width - 2 * inset, points_per_end=points_per_end)


def tile_origins(length: int, *, tile: int, overlap: float) -> list[int]:
    """Start offsets of tiles of side `tile` covering [0, length) with at least `overlap` between neighbours."""
    if length <= tile:
        return [0]
    stride = tile * (1.0 - overlap)
    count = math.ceil((length - tile) / stride) + 1
    step = (length - tile) / (count - 1)
    return [round(i * step) for i in range(count)]


# --- homographies (pixels <-> table millimetres) ---------------------------------------------------------


def fit_homography(source: FloatArray, target: FloatArray) -> FloatArray:
    """Least-squares homography mapping `source` points onto `target` points (DLT, >= 4 pairs).

    Returns a 3x3 matrix H with H[2, 2] == 1 such that target ~ H @ [x, y, 1].
    """
    src = as_points(source, name="source")
    dst = as_points(target, name="target")
    if src.shape != dst.shape:
        raise ValueError(f"expected as many source as target points, got {src.shape[0]} and {dst.shape[0]}")
    if src.shape[0] < 4:
        raise ValueError(f"expected at least 4 point pairs to fit a homography, got {src.shape[0]}")
    src_n, t_src = _normalise(src)
    dst_n, t_dst = _normalise(dst)
    rows = []
    for (x, y), (u, v) in zip(src_n, dst_n, strict=True):
        rows.append([-x, -y, -1.0, 0.0, 0.0, 0.0, u * x, u * y, u])
        rows.append([0.0, 0.0, 0.0, -x, -y, -1.0, v * x, v * y, v])
    _, singular, vt = np.linalg.svd(np.asarray(rows))
    if singular[-2] < 1e-10:
        raise ValueError("the points are degenerate (three or more collinear): cannot fit a homography")
    h_n = vt[-1].reshape(3, 3)
    h = np.linalg.inv(t_dst) @ h_n @ t_src
    if abs(h[2, 2]) < 1e-12:
        raise ValueError("the fitted homography is degenerate")
    result: FloatArray = h / h[2, 2]
    return result


def _normalise(points: FloatArray) -> tuple[FloatArray, FloatArray]:
    centre = points.mean(axis=0)
    spread = np.sqrt(((points - centre) ** 2).sum(axis=1)).mean()
    scale = math.sqrt(2.0) / spread if spread > 0 else 1.0
    t = np.array([[scale, 0.0, -scale * centre[0]], [0.0, scale, -scale * centre[1]], [0.0, 0.0, 1.0]])
    homogeneous = np.hstack([points, np.ones((points.shape[0], 1))])
    normalised: FloatArray = (t @ homogeneous.T).T[:, :2]
    return normalised, t


def apply_homography(homography: FloatArray, points: FloatArray) -> FloatArray:
    """Map (N, 2) points through a 3x3 homography."""
    h = np.asarray(homography, dtype=np.float64)
    if h.shape != (3, 3):
        raise ValueError(f"homography: expected a 3x3 matrix, got shape {h.shape}")
    pts = as_points(points)
    homogeneous = np.hstack([pts, np.ones((pts.shape[0], 1))]) @ h.T
    w = homogeneous[:, 2:3]
    if np.any(np.abs(w) < 1e-12):
        raise ValueError("a point maps to infinity under this homography (it lies on the horizon line)")
    result: FloatArray = homogeneous[:, :2] / w
    return result


def invert_homography(homography: FloatArray) -> FloatArray:
    h = np.asarray(homography, dtype=np.float64)
    if h.shape != (3, 3):
        raise ValueError(f"homography: expected a 3x3 matrix, got shape {h.shape}")
    inverse = np.linalg.inv(h)
    result: FloatArray = inverse / inverse[2, 2]
    return result


def homography_scales(pixels_to_mm: FloatArray, point_px: tuple[float, float]) -> tuple[float, float]:
    """A camera's largest and smallest scale (pixels per mm on the plane) at an image point, from its homography
    from pixels to the plane: the singular values of the plane-to-image map's derivative there. Equal for a camera
    looking square on at the plane; their ratio grows as it looks at the plane more at a slant."""
    at = apply_homography(pixels_to_mm, np.array([point_px], dtype=np.float64))[0]
    points = at + np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0]])
    image = apply_homography(invert_homography(pixels_to_mm), points)
    derivative = np.stack([image[1] - image[0], image[2] - image[0]], axis=1)
    high, low = np.linalg.svd(derivative, compute_uv=False)
    return float(high), float(low)


def reprojection_error(homography: FloatArray, source: FloatArray, target: FloatArray) -> FloatArray:
    """Per-point distance between H(source) and target, in target units."""
    mapped = apply_homography(homography, source)
    errors: FloatArray = np.sqrt(((mapped - as_points(target, name="target")) ** 2).sum(axis=1))
    return errors
