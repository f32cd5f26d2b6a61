"""Without a camera model: where a chip's top disc may lie in its box (`box_discs`)."""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt

from floorman.core.geometry import FloatArray
from floorman.vision.chips_geometry import Box

_CORNER_SHRINK = (1.0, 0.85, 0.7)  # without a camera: a stack's top disc, as wide as the box is narrow or less
_DIAGONAL = 0.2  # |ux| - |uy| below this: the box's sides do not tell the disc from the side
_MIN_DISC = 0.3  # a disc narrower than this share of the box is no solution
# A box side this close to the image's border is cut by it. Wider than `detections.BORDER_PX`: a detector's box
# stops a pixel or two short of the border (0.7-1.4 px on photo-like frames), and a whole chip taken for a cut one
# still gets a circle about its own (a whole chip's box is about square). Dev photos (`photo_labels.py --singles
# --rack always`, 31003 / 31004 / 32001 / 32002, 160 photos), at 0.5 px four chips cut by the border were read
# on the ellipse inscribed in their box, three of them another colour: every colour exact 135 -> 138.
_BORDER_PX = 2.0
_COVERED_ASPECT = 1.1  # a box this much longer than wide may hold a chip partly covered (a hand, a card) ...
_COVERED_MAX_ASPECT = 2.5  # ... up to this: a longer box is a stack's side, not a covered chip
# Of a covered chip's two circles, the one whose rim inside the box runs along the chip's edge (the colour changes
# across it) is the chip's; the other's runs through the chip's face. A rim this many times as contrasted as the
# other's decides (dev photo 31004/photo_20: three blue chips half under an arm, 1.9-2.0x; read on the circle flush
# with the arm's edge, which samples a pale inlay as the body, they were taken for white chips).
_COVERED_RIM_RATIO = 1.3
_RIM_ANGLES = 180
_RIM_STEP = 0.06  # colours compared this share of the radius inside and outside the rim (at least _RIM_STEP_PX)
_RIM_STEP_PX = 2.0


def box_discs(box: Box, radius_mm: float, *, image_size: tuple[int, int] | None = None,
              image: npt.NDArray[np.uint8] | None = None) -> list[FloatArray]:
    """Without a camera model, where the top disc may lie in a box (3x3 pixels <- disc frame in mm), the likeliest
    first: the ellipse inscribed in the box (a single chip); with the image's size, the disc of a stack seen from
    a camera over the image's centre (its top lies away from the centre, the box as long as the side shows); and
    circles _CORNER_SHRINK times as wide as the box is narrow in each of its corners (a stack leaning any way:
    measured on 120 frames of seeds 94001/94002, top value of stacks of 5+ chips 61 -> 83 %). A box cut by the
    image's border holds a circle as wide as the box is long, reaching out of the image; a box inside the image
    but longer than wide may be a chip partly covered: a circle as wide as the box is long, flush with either
    end of its short side, comes last (its samples are read within the box only: `top_colours(within=...)`); with
    the `image`, only the one whose rim runs along the chip's edge (`covered_edge`) when one clearly does."""
    cx, cy, width, height = _box_shape(box)
    cut = _cut_discs(box, image_size, radius_mm) if image_size is not None else []
    discs = cut or [_circle(cx, cy, width, height, radius_mm)]  # a cut box's inscribed ellipse is not the chip's
    side = min(width, height)
    if image_size is not None:
        radial = _radial_disc(box, image_size)
        if radial is not None:
            discs.append(_circle(radial[0], radial[1], radial[2], radial[2], radius_mm))
    for shrink in _CORNER_SHRINK:
        diameter = shrink * side
        for sx, sy in ((-1.0, -1.0), (1.0, -1.0), (-1.0, 1.0), (1.0, 1.0)):
            discs.append(_circle(cx + sx * (width - diameter) / 2.0, cy + sy * (height - diameter) / 2.0,
                                 diameter, diameter, radius_mm))
    if not cut:
        covered = _covered_discs(cx, cy, width, height, radius_mm)
        discs.extend(covered_edge(image, box, covered, radius_mm) if image is not None and covered else covered)
    return discs


def covered_edge(image: npt.NDArray[np.uint8], box: Box, covered: list[FloatArray],
                 radius_mm: float) -> list[FloatArray]:
    """Of a partly covered chip's two circles (`_covered_discs`), the one whose rim, where it runs inside the box,
    shows the larger colour change across it, when that is _COVERED_RIM_RATIO times the other's; both otherwise."""
    contrast = [_rim_contrast(image, disc, box, radius_mm) for disc in covered]
    strong, weak = max(contrast), min(contrast)
    if strong < _COVERED_RIM_RATIO * weak:
        return covered
    return [covered[contrast.index(strong)]]


def _rim_contrast(image: npt.NDArray[np.uint8], disc: FloatArray, box: Box, radius_mm: float) -> float:
    """Mean colour distance between points just inside and just outside a circle's rim, over the rim's points that
    lie in the box (0 where none does)."""
    cx, cy, radius = float(disc[0, 2]), float(disc[1, 2]), float(disc[0, 0]) * radius_mm  # a circle (`_circle`)
    angles = np.arange(_RIM_ANGLES) * 2.0 * math.pi / _RIM_ANGLES
    cos, sin = np.cos(angles), np.sin(angles)
    x1, y1, x2, y2 = box
    rim_x, rim_y = cx + radius * cos, cy + radius * sin
    keep = (rim_x >= x1 - 1.0) & (rim_x <= x2) & (rim_y >= y1 - 1.0) & (rim_y <= y2)
    if not keep.any():
        return 0.0
    step = max(_RIM_STEP_PX, _RIM_STEP * radius)
    height, width = image.shape[:2]

    def colours(r: float) -> FloatArray:
        xs = np.clip(np.rint(cx + r * cos[keep]), 0, width - 1).astype(np.intp)
        ys = np.clip(np.rint(cy + r * sin[keep]), 0, height - 1).astype(np.intp)
        return image[ys, xs].astype(np.float64)

    return float(np.linalg.norm(colours(radius - step) - colours(radius + step), axis=1).mean())


def _covered_discs(cx: float, cy: float, width: float, height: float, radius_mm: float) -> list[FloatArray]:
    """A chip partly covered along the box's short side: circles as wide as the box is long, flush with either end
    of the short side (the covered part lies out past the other end)."""
    long, short = max(width, height), min(width, height)
    if short <= 0.0 or not _COVERED_ASPECT * short <= long <= _COVERED_MAX_ASPECT * short:
        return []
    slide = (long - short) / 2.0
    if width < height:
        return [_circle(cx + sign * slide, cy, long, long, radius_mm) for sign in (-1.0, 1.0)]
    return [_circle(cx, cy + sign * slide, long, long, radius_mm) for sign in (-1.0, 1.0)]


def _box_shape(box: Box) -> tuple[float, float, float, float]:
    """Centre and size (pixels) of a box's pixels: (cx, cy, width, height), the last pixel at x2 - 1."""
    x1, y1, x2, y2 = box
    return (x1 + x2 - 1.0) / 2.0, (y1 + y2 - 1.0) / 2.0, x2 - x1 - 1.0, y2 - y1 - 1.0


def _circle(cx: float, cy: float, width: float, height: float, radius_mm: float) -> FloatArray:
    """3x3: pixels <- disc frame (mm) of an axis-aligned ellipse `width` x `height` pixels centred at (cx, cy)."""
    return np.array([[width / 2.0 / radius_mm, 0.0, cx], [0.0, height / 2.0 / radius_mm, cy], [0.0, 0.0, 1.0]])


def _radial_disc(box: Box, image_size: tuple[int, int]) -> tuple[float, float, float] | None:
    """Centre and diameter (pixels) of a stack's top disc for a camera straight over the image's centre: the box is
    the disc swept a length L away from the centre, so width = D + L |ux| and height = D + L |uy| for the unit
    direction u from the centre; None where that does not tell D (a box on a diagonal, or no side showing)."""
    cx, cy, width, height = _box_shape(box)
    dx, dy = cx - image_size[0] / 2.0, cy - image_size[1] / 2.0
    norm = math.hypot(dx, dy)
    if norm < 1.0:
        return None
    ux, uy = abs(dx) / norm, abs(dy) / norm
    if abs(ux - uy) < _DIAGONAL:
        return None
    length = (width - height) / (ux - uy)
    diameter = width - length * ux
    if length <= 0.0 or not _MIN_DISC * min(width, height) < diameter <= min(width, height):
        return None
    return cx + math.copysign(length * ux / 2.0, dx), cy + math.copysign(length * uy / 2.0, dy), diameter


def _cut_discs(box: Box, image_size: tuple[int, int], radius_mm: float) -> list[FloatArray]:
    """For a box cut by the image's border: a circle as wide as the box's longer side, reaching out of the image."""
    x1, y1, x2, y2 = box
    middle_x, middle_y, width, height = _box_shape(box)
    diameter = max(width, height)
    cx, cy = middle_x, middle_y
    if x1 <= _BORDER_PX:
        cx = x2 - 1.0 - diameter / 2.0
    elif x2 >= image_size[0] - _BORDER_PX:
        cx = x1 + diameter / 2.0
    if y1 <= _BORDER_PX:
        cy = y2 - 1.0 - diameter / 2.0
    elif y2 >= image_size[1] - _BORDER_PX:
        cy = y1 + diameter / 2.0
    cut = (cx, cy) != (middle_x, middle_y)
    return [_circle(cx, cy, diameter, diameter, radius_mm)] if cut else []
