"""The static layer of a render: the table seen from above (surface, printed bet line, logo, padded rail,
floor), composed once per (layout, appearance, visible region) in table millimetres and warped into the
camera with the felt-plane homography.

The rail is drawn flat, as a shaded leather band around the outline; the floor beyond it is a dark carpet.
"""

from __future__ import annotations

import math
from collections import OrderedDict
from dataclasses import dataclass

import cv2
import numpy as np

from floorman.core.geometry import FloatArray, apply_homography, invert_homography
from floorman.core.layout import TableLayout
from floorman.datasets.camera import Camera
from floorman.datasets.render_draw import ImageU8, f32, u8
from floorman.datasets.render_rack import paint_markers, paint_rack
from floorman.datasets.scene import SurfaceKind, TableAppearance
from floorman.datasets.textures import table_surface

FLOOR_BGR = (58, 52, 50)
_FLOOR_MARGIN_MM = 200.0
_GRID_MM = 50.0
_LEVELS = (0.25, 0.5, 1.0, 2.0, 4.0, 8.0)
_CACHE_SIZE = 4
_RAIL_BANDS = 10


@dataclass(frozen=True, slots=True)
class TableRegion:
    """A top-down raster of the table: mm rectangle [x0, x1] x [y0, y1] at `px_per_mm` (image y = -table y)."""

    x0: float
    y0: float
    x1: float
    y1: float
    px_per_mm: float

    @property
    def size_px(self) -> tuple[int, int]:
        return (max(1, round((self.x1 - self.x0) * self.px_per_mm)),
                max(1, round((self.y1 - self.y0) * self.px_per_mm)))

    def to_px(self, points_mm: FloatArray) -> FloatArray:
        pts = np.asarray(points_mm, dtype=np.float64).reshape(-1, 2)
        out = np.empty_like(pts)
        out[:, 0] = (pts[:, 0] - self.x0) * self.px_per_mm - 0.5
        out[:, 1] = (self.y1 - pts[:, 1]) * self.px_per_mm - 0.5
        return out

    def mm_from_px(self) -> FloatArray:
        """Affine 3x3: table mm <- raster pixel (centres at integers)."""
        inv = 1.0 / self.px_per_mm
        return np.array([[inv, 0.0, self.x0 + 0.5 * inv], [0.0, -inv, self.y1 - 0.5 * inv], [0.0, 0.0, 1.0]])


def table_bounds(layout: TableLayout) -> tuple[float, float, float, float]:
    pts = layout.outline_points
    margin = layout.rail_width_mm + _FLOOR_MARGIN_MM
    return (float(pts[:, 0].min()) - margin, float(pts[:, 1].min()) - margin,
            float(pts[:, 0].max()) + margin, float(pts[:, 1].max()) + margin)


def visible_region(camera: Camera, layout: TableLayout, *, max_pixels: float) -> TableRegion | None:
    """The part of the table (plus rail and a floor margin) the camera sees, at a resolution >= its scale."""
    w, h = camera.width, camera.height
    t = np.linspace(0.0, 1.0, 9)
    border = np.concatenate([
        np.stack([t * w, np.zeros_like(t)], 1), np.stack([t * w, np.full_like(t, h)], 1),
        np.stack([np.zeros_like(t), t * h], 1), np.stack([np.full_like(t, w), t * h], 1),
    ])
    inverse = invert_homography(camera.table_homography())
    bx0, by0, bx1, by1 = table_bounds(layout)
    w_h = np.hstack([border, np.ones((border.shape[0], 1))]) @ inverse[2]
    if np.any(w_h <= 1e-9):  # the view reaches the horizon: take the whole table
        mm = np.array([[bx0, by0], [bx1, by1]])
    else:
        mm = apply_homography(inverse, border)
    x0 = max(bx0, math.floor(float(mm[:, 0].min()) / _GRID_MM) * _GRID_MM)
    y0 = max(by0, math.floor(float(mm[:, 1].min()) / _GRID_MM) * _GRID_MM)
    x1 = min(bx1, math.ceil(float(mm[:, 0].max()) / _GRID_MM) * _GRID_MM)
    y1 = min(by1, math.ceil(float(mm[:, 1].max()) / _GRID_MM) * _GRID_MM)
    if x1 - x0 < 1.0 or y1 - y0 < 1.0:
        return None
    clipped = np.clip(mm, (x0, y0), (x1, y1))
    scale = max(camera.pixels_per_mm(float(x), float(y)) for x, y in clipped)
    levels = [lv for lv in _LEVELS if (x1 - x0) * (y1 - y0) * lv * lv <= max_pixels] or [_LEVELS[0]]
    level = next((lv for lv in levels if lv >= scale), levels[-1])
    return TableRegion(x0, y0, x1, y1, level)


def offset_outline(points: FloatArray, distance: float) -> FloatArray:
    """The closed outline (counter-clockwise) moved outward by `distance` mm along its vertex normals."""
    pts = np.asarray(points, dtype=np.float64)
    area2 = float(np.dot(pts[:, 0], np.roll(pts[:, 1], -1)) - np.dot(pts[:, 1], np.roll(pts[:, 0], -1)))
    orient = 1.0 if area2 > 0 else -1.0
    edges = np.roll(pts, -1, axis=0) - pts
    normals = np.stack([edges[:, 1], -edges[:, 0]], axis=1) * orient
    normals /= np.maximum(np.linalg.norm(normals, axis=1, keepdims=True), 1e-9)
    vertex = normals + np.roll(normals, 1, axis=0)
    vertex /= np.maximum(np.linalg.norm(vertex, axis=1, keepdims=True), 1e-9)
    cos_half = np.clip((vertex * normals).sum(axis=1), 0.5, 1.0)
    result: FloatArray = pts + vertex * (distance / cos_half)[:, None]
    return result


def bet_line_curve(layout: TableLayout) -> FloatArray:
    """The closed printed bet line through every seat's `bet_line`, ordered by angle round the centre."""
    pts = np.concatenate([np.asarray(seat.bet_line, dtype=np.float64) for seat in layout.seats])
    angles = np.arctan2(pts[:, 1], pts[:, 0])
    result: FloatArray = pts[np.argsort(angles)]
    return result


def _bgr(rgb: tuple[int, int, int]) -> tuple[int, int, int]:
    return rgb[2], rgb[1], rgb[0]


def _poly(region: TableRegion, points_mm: FloatArray) -> list[np.ndarray]:
    return [np.round(region.to_px(points_mm) * 16.0).astype(np.int32)]


def _draw_rail(raster: ImageU8, layout: TableLayout, appearance: TableAppearance, region: TableRegion) -> None:
    outline = layout.outline_points
    width = layout.rail_width_mm
    base = np.array(_bgr(appearance.rail_colour), dtype=np.float64)
    if width <= 0:
        return
    # Concentric bands, each a thick closed line along the outline (the felt later covers the inner half of
    # the innermost one): a padded cushion, darker at both edges.
    thickness = math.ceil(width / _RAIL_BANDS * region.px_per_mm) + 2
    for k in range(_RAIL_BANDS):
        d = width * (k + 0.5) / _RAIL_BANDS
        profile = 0.55 + 0.75 * math.sin(math.pi * d / width) ** 2
        colour = tuple(float(c) for c in np.clip(base * profile + 6.0, 0, 255))
        cv2.polylines(raster, _poly(region, offset_outline(outline, d)), True, colour, thickness, cv2.LINE_AA,
                      shift=4)
    cv2.polylines(raster, _poly(region, offset_outline(outline, width)), True, (10, 10, 10),
                  max(1, round(2 * region.px_per_mm)), cv2.LINE_AA, shift=4)


def _draw_print(raster: ImageU8, layout: TableLayout, appearance: TableAppearance, region: TableRegion) -> None:
    p = region.px_per_mm
    if appearance.bet_line_visible:
        colour = _bgr(appearance.bet_line_colour)
        cv2.polylines(raster, _poly(region, bet_line_curve(layout)), True, colour, max(1, round(8 * p)),
                      cv2.LINE_AA, shift=4)
    if appearance.logo:
        felt = np.array(_bgr(appearance.colour), dtype=np.float64)
        ink = tuple(float(c) for c in np.clip(felt * 0.7 + 40.0, 0, 255))
        centre = region.to_px(np.array([[0.0, 0.0]]))[0]
        axes = (max(1, round(260 * p)), max(1, round(90 * p)))
        cv2.ellipse(raster, (round(centre[0]), round(centre[1])), axes, 0, 0, 360, ink, max(1, round(6 * p)),
                    cv2.LINE_AA)
        scale = 1.6 * p
        (tw, th), _ = cv2.getTextSize("FLOORMAN", cv2.FONT_HERSHEY_DUPLEX, scale, max(1, round(4 * p)))
        cv2.putText(raster, "FLOORMAN", (round(centre[0] - tw / 2), round(centre[1] + th / 2)),
                    cv2.FONT_HERSHEY_DUPLEX, scale, ink, max(1, round(4 * p)), cv2.LINE_AA)


def _rail_lip_shadow(raster: ImageU8, layout: TableLayout, region: TableRegion) -> None:
    """The rail's cushion casts a soft shadow onto the surface just inside it (computed at a quarter scale)."""
    width, height = region.size_px
    small = TableRegion(region.x0, region.y0, region.x1, region.y1, region.px_per_mm / 4.0)
    sw, sh = small.size_px
    lip = np.zeros((sh, sw), dtype=np.float32)
    cv2.polylines(lip, _poly(small, layout.outline_points), True, 1.0, max(1, round(24 * small.px_per_mm)),
                  cv2.LINE_AA, shift=4)
    lip = f32(cv2.GaussianBlur(lip, (0, 0), max(0.6, 8.0 * small.px_per_mm)))
    inside = np.zeros((sh, sw), dtype=np.float32)
    cv2.fillPoly(inside, _poly(small, layout.outline_points), 1.0, cv2.LINE_AA, shift=4)
    factor = np.clip(255.0 * (1.0 - 0.35 * lip * inside), 0, 255).astype(np.uint8)
    full = u8(cv2.resize(factor, (width, height), interpolation=cv2.INTER_LINEAR))
    raster[:] = u8(cv2.multiply(raster, cv2.merge([full, full, full]), scale=1.0 / 255.0))


def compose_table(layout: TableLayout, appearance: TableAppearance, region: TableRegion) -> ImageU8:
    """The top-down raster of `region`: floor, rail, surface inside the outline, bet line and logo."""
    width, height = region.size_px
    raster = np.empty((height, width, 3), dtype=np.uint8)
    cv2.rectangle(raster, (0, 0), (width, height), FLOOR_BGR, -1)
    _draw_rail(raster, layout, appearance, region)
    inside = np.zeros((height, width), dtype=np.uint8)
    cv2.fillPoly(inside, _poly(region, layout.outline_points), 255, cv2.LINE_8, shift=4)
    surface = table_surface(appearance, width_px=width, height_px=height, px_per_mm=region.px_per_mm)
    cv2.copyTo(surface, inside, raster)
    _rail_lip_shadow(raster, layout, region)
    _draw_print(raster, layout, appearance, region)
    p = region.px_per_mm
    to_px = np.array([[p, 0.0, -region.x0 * p - 0.5], [0.0, -p, region.y1 * p - 0.5]])
    for rack in appearance.racks:
        paint_rack(raster, rack, to_px=to_px, px_per_mm=p)
    if appearance.markers:
        paint_markers(raster, layout, to_px=to_px, px_per_mm=p)
    return raster


# Keyed by the layout's identity (the entry holds the layout, so its id stays unique while cached): pydantic's
# equality would compare the layout's cached numpy properties.
_cache: OrderedDict[tuple[int, TableAppearance, TableRegion], tuple[TableLayout, ImageU8]] = OrderedDict()


def cached_table(layout: TableLayout, appearance: TableAppearance, region: TableRegion) -> ImageU8:
    key = (id(layout), appearance, region)
    found = _cache.get(key)
    if found is not None and found[0] is layout:
        _cache.move_to_end(key)
        return found[1]
    raster = compose_table(layout, appearance, region)
    _cache[key] = (layout, raster)
    while len(_cache) > _CACHE_SIZE:
        _cache.popitem(last=False)
    return raster


def render_table(camera: Camera, layout: TableLayout, appearance: TableAppearance, *,
                 max_pixels: float) -> ImageU8:
    """The camera's view of the empty table (BGR), floor colour where no table raster reaches."""
    size = (camera.width, camera.height)
    region = visible_region(camera, layout, max_pixels=max_pixels)
    if region is None:
        image = np.empty((camera.height, camera.width, 3), dtype=np.uint8)
        image[:] = FLOOR_BGR
        return image
    raster = cached_table(layout, appearance, region)
    homography = camera.table_homography() @ region.mm_from_px()
    return u8(cv2.warpPerspective(raster, homography, size, flags=cv2.INTER_LINEAR,
                                  borderMode=cv2.BORDER_CONSTANT, borderValue=FLOOR_BGR))


def surface_gloss(appearance: TableAppearance) -> float:
    """How much glare the bare surface takes (felt is matte, varnished wood shines)."""
    return 0.55 if appearance.surface == SurfaceKind.WOOD else 0.15
