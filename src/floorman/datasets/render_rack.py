"""Chip racks (and calibration markers) seen from above, painted into the static table raster
(`render_table.compose_table`).

A rack is a tray of parallel channels, each holding up to 20 chips standing on edge. From above, each chip is
a strip as wide as the chip's diameter and as deep as its thickness: its rim's upper half, shaded like a
cylinder, with the edge spots where the rim's spot pattern faces up (the chip's turn is random per chip).
"""

from __future__ import annotations

import math

import cv2
import numpy as np
import numpy.typing as npt

from floorman.core.layout import TableLayout
from floorman.datasets.render_draw import ImageU8, u8
from floorman.datasets.scene import ChipRack

CHIP_DIAMETER_MM = 39.0
CHIP_THICKNESS_MM = 3.3
CHANNEL_PITCH_MM = 43.0
CHIPS_PER_CHANNEL = 20
MARGIN_MM = 6.0
EDGE_SPOTS = 6
SPOT_HALF_WIDTH_RAD = math.pi / EDGE_SPOTS * 0.45
_MIN_PX_PER_MM = 2.0

FloatGrid = npt.NDArray[np.float64]


def rack_size_mm(rack: ChipRack) -> tuple[float, float]:
    """(long side, short side) of the tray in mm."""
    return (len(rack.rows) * CHANNEL_PITCH_MM + 2.0 * MARGIN_MM,
            CHIPS_PER_CHANNEL * CHIP_THICKNESS_MM + 2.0 * MARGIN_MM)


def _bgr(rgb: tuple[int, int, int]) -> npt.NDArray[np.float64]:
    return np.array([rgb[2], rgb[1], rgb[0]], dtype=np.float64)


def rack_texture(rack: ChipRack, *, px_per_mm: float) -> ImageU8:
    """The rack's top view, BGR, long side along the image's x axis, at `px_per_mm`."""
    if not rack.rows:
        raise ValueError("expected a rack with at least one row, got none")
    width_mm, depth_mm = rack_size_mm(rack)
    w, h = max(2, round(width_mm * px_per_mm)), max(2, round(depth_mm * px_per_mm))
    u = (np.arange(w) + 0.5) / px_per_mm - width_mm / 2.0
    v = (np.arange(h) + 0.5) / px_per_mm - depth_mm / 2.0
    uu, vv = np.meshgrid(u, v)
    tray = _bgr(rack.tray_rgb)
    image = np.empty((h, w, 3), dtype=np.float64)
    image[:] = tray * 1.25 + 8.0  # the walls between channels catch the light
    channel = np.floor((uu + width_mm / 2.0 - MARGIN_MM) / CHANNEL_PITCH_MM).astype(np.int64)
    centre = -width_mm / 2.0 + MARGIN_MM + (channel + 0.5) * CHANNEL_PITCH_MM
    across = (uu - centre) / (CHIP_DIAMETER_MM / 2.0)  # -1..1 over a chip's width
    inside = (channel >= 0) & (channel < len(rack.rows)) & (np.abs(across) < 1.0) & (np.abs(vv) < depth_mm / 2 - 2)
    image[inside] = tray * 0.7  # the channel floor, in shadow
    rng = np.random.default_rng(abs(hash((round(rack.x), round(rack.y), len(rack.rows)))) % 2**32)
    start = -CHIPS_PER_CHANNEL * CHIP_THICKNESS_MM / 2.0
    slot = np.floor((vv - start) / CHIP_THICKNESS_MM).astype(np.int64)
    theta = np.arcsin(np.clip(across, -1.0, 1.0))  # rim angle seen at this point (0 = the top of the rim)
    shade = 0.55 + 0.45 * np.sqrt(np.clip(1.0 - across**2, 0.0, 1.0))
    seam = ((vv - start) / CHIP_THICKNESS_MM) % 1.0
    for index, row in enumerate(rack.rows):
        count = min(max(row.count, 0), CHIPS_PER_CHANNEL)
        phases = rng.uniform(0.0, 2.0 * math.pi / EDGE_SPOTS, size=max(count, 1))
        chips = inside & (channel == index) & (slot >= 0) & (slot < count)
        if not chips.any():
            continue
        phase = phases[np.clip(slot[chips], 0, count - 1)]
        period = 2.0 * math.pi / EDGE_SPOTS
        offset = np.abs((theta[chips] - phase + period / 2.0) % period - period / 2.0)
        colour = np.where((offset < SPOT_HALF_WIDTH_RAD)[:, None], _bgr(row.spot_colour)[None, :],
                          _bgr(row.colour)[None, :])
        dark = np.where(((seam[chips] < 0.12) | (seam[chips] > 0.92))[:, None], 0.6, 1.0)
        image[chips] = colour * shade[chips][:, None] * dark
    return u8(np.clip(image, 0, 255))


def paint_rack(raster: ImageU8, rack: ChipRack, *, to_px: npt.NDArray[np.float64], px_per_mm: float) -> None:
    """Paint `rack` into the top-down `raster`; `to_px` is the 2x3 affine raster px <- table mm."""
    width_mm, depth_mm = rack_size_mm(rack)
    texture = rack_texture(rack, px_per_mm=max(2.0 * px_per_mm, _MIN_PX_PER_MM))
    w, h = max(2, round(width_mm * px_per_mm)), max(2, round(depth_mm * px_per_mm))
    texture = u8(cv2.resize(texture, (w, h), interpolation=cv2.INTER_AREA))
    sx, sy = width_mm / w, depth_mm / h
    # rack mm <- texture px; table mm <- rack mm (rotation, translation); raster px <- table mm.
    from_texture = np.array([[sx, 0.0, 0.5 * sx - width_mm / 2.0], [0.0, sy, 0.5 * sy - depth_mm / 2.0],
                             [0.0, 0.0, 1.0]])
    a = math.radians(rack.angle_deg)
    place = np.array([[math.cos(a), -math.sin(a), rack.x], [math.sin(a), math.cos(a), rack.y], [0.0, 0.0, 1.0]])
    full = np.vstack([to_px, [0.0, 0.0, 1.0]]) @ place @ from_texture
    corners = np.array([[-0.5, -0.5], [w - 0.5, -0.5], [w - 0.5, h - 0.5], [-0.5, h - 0.5]])
    outline = corners @ full[:2, :2].T + full[:2, 2]
    shadow = outline + np.array([2.0, 3.0]) * px_per_mm
    blur = max(0.5, 2.5 * px_per_mm)
    both = np.vstack([outline, shadow])
    x0, y0 = (np.floor(both.min(axis=0) - 3 * blur)).astype(int).clip(0)
    x1 = int(min(raster.shape[1], np.ceil(both[:, 0].max() + 3 * blur)))
    y1 = int(min(raster.shape[0], np.ceil(both[:, 1].max() + 3 * blur)))
    if x1 <= x0 or y1 <= y0:
        return
    roi = raster[y0:y1, x0:x1]
    shift = np.array([x0, y0], dtype=np.float64)
    veil = np.zeros(roi.shape[:2], dtype=np.uint8)
    cv2.fillConvexPoly(veil, np.round((shadow - shift) * 16).astype(np.int32), 255, cv2.LINE_AA, shift=4)
    soft = cv2.GaussianBlur(veil, (0, 0), blur).astype(np.float32) / 255.0
    roi[:] = u8(np.clip(roi.astype(np.float32) * (1.0 - 0.45 * soft)[:, :, None], 0, 255))
    local = full[:2].copy()
    local[:, 2] -= shift
    warped = cv2.warpAffine(texture, local, (x1 - x0, y1 - y0), flags=cv2.INTER_LINEAR,
                            borderMode=cv2.BORDER_CONSTANT)
    mask = np.zeros(roi.shape[:2], dtype=np.uint8)
    cv2.fillConvexPoly(mask, np.round((outline - shift) * 16).astype(np.int32), 255, cv2.LINE_8, shift=4)
    cv2.copyTo(warped, mask, roi)


def paint_markers(raster: ImageU8, layout: TableLayout, *, to_px: npt.NDArray[np.float64], px_per_mm: float) -> None:
    """Paint the layout's ArUco markers (black squares on a white quiet zone of a quarter side) into `raster`."""
    dictionary = cv2.aruco.getPredefinedDictionary(getattr(cv2.aruco, layout.marker_dictionary))
    full = np.vstack([to_px, [0.0, 0.0, 1.0]])
    for marker in layout.markers:
        side = max(32, round(marker.size_mm * px_per_mm * 2))
        code = cv2.aruco.generateImageMarker(dictionary, marker.id, side)
        border = side // 4
        sheet = cv2.copyMakeBorder(code, border, border, border, border, cv2.BORDER_CONSTANT, value=255)
        scale = (side + 2 * border) / side
        corners_mm = (marker.corners() - np.asarray(marker.center)) * scale + np.asarray(marker.center)
        corners_px = corners_mm @ full[:2, :2].T + full[:2, 2]
        n = sheet.shape[0]
        source = np.array([[0.0, 0.0], [n, 0.0], [n, n], [0.0, n]], dtype=np.float32) - 0.5
        warp = cv2.getPerspectiveTransform(source, corners_px.astype(np.float32))
        size = (raster.shape[1], raster.shape[0])
        gray = cv2.warpPerspective(sheet, warp, size, flags=cv2.INTER_AREA, borderMode=cv2.BORDER_CONSTANT,
                                   borderValue=0)
        mask = np.zeros(raster.shape[:2], dtype=np.uint8)
        cv2.fillConvexPoly(mask, np.round(corners_px * 16).astype(np.int32), 255, cv2.LINE_8, shift=4)
        cv2.copyTo(cv2.cvtColor(gray, cv2.COLOR_GRAY2BGR), mask, raster)
