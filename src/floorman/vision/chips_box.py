"""A detector's chip box with its sides found again in the full-resolution frame, to a fraction of a pixel.

A stack's count rests on its box's sides: ~0.5-1.5 px per chip from overhead cameras. The detector sees frames
downscaled, so its sides are off by more the larger the frame (`detector_sigma_px`; measured against mask boxes
on 40 mixed frames of seed 91001 and 16 of 91039 at 3840x2160: robust sd ~0.8 px at 1280x720, ~1.2 at 3000x2000,
~1.7 at 3840x2160; biases under 0.5 px but at 3840x2160, where its boxes are ~1 px narrower and ~1.3 px shorter,
and correcting that did not help). Each side is looked for again in the frame (`measure_sides`): along each
pixel row (left and right sides) or column (top and bottom) near it, the felt-to-chip edge at sub-pixel precision
(the pixels' share of the chip's colour against the felt's, summed across the transition, which blur leaves
unchanged), and the side lies where the stack's outline fitted to the box would put it given those edges (their
median offset from the outline over the rows within _NEAR_PX of its extreme: a tall stack's straight side counts
as much as a round end). Such a side is off by ~0.6-0.8 px against the mask's box (the same frames; against ~1-2 px
for the detector's at 2560 px and more); it is averaged with the detector's side, weighted by their spreads
(`refine_box`). A side not found (no felt beyond it: a neighbour, a card, a hand; the image's border; a chip of the
felt's colour) or more than _MAX_APART_PX from the detector's is the detector's. Measured on fresh seeds
(`benchmarks/chips.py`, detector boxes): count exact -0.2 to +1.5 points on mixed sizes (99011, 99012, 98011,
98012), +0.8 / +5.0 at 3840x2160 (99039, 98039); counts given >= 0.8 confidence 9.5-30 -> 15-40 % of stacks,
88.6-97.8 % of them exact. It costs ~10 ms per stack read (a box solved twice, the sides searched).
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np
import numpy.typing as npt

from floorman.core.geometry import FloatArray
from floorman.vision.chips_box_net import LearnedSides
from floorman.vision.chips_geometry import Box

Image = npt.NDArray[np.uint8]

# The detector's side error (sd, px) grows with the frame's downscale into its input: this plus this much per
# DETECTOR_INPUT_PX of the frame's longer side.
DETECTOR_SIDE_SIGMA_PX = 0.5
DETECTOR_SIDE_PER_INPUT = 0.2
DETECTOR_INPUT_PX = 640.0
MEASURED_SIDE_SIGMA_PX = 0.7  # a side found in the image, against the mask's (measured, seeds above)
# A mask box's side (first pixel; one past the last) lies this far out from the image's edge found for it, per side
# (x1, y1, x2, y2; medians on the seeds above: the anti-aliased drawing sits a quarter pixel up and left).
EDGE_TO_SIDE_PX = (0.42, 0.34, 0.62, 0.63)
_INSIDE_PX = 6  # edges are looked for this far inside the detector's side ...
_OUTSIDE_PX = 6  # ... and this far out (its last two pixels must be felt)
_RING_GAP_PX = 4  # the felt's colour: a ring this far outside the box ...
_RING_WIDTH_PX = 3  # ... this wide
_MIN_CONTRAST = 25.0  # 8-bit levels (colour distance): a weaker change is no chip's edge
_FELT_TOLERANCE = 0.12  # a colour this close to the felt's (relative) is felt ...
_NOISE = 10.0  # ... give or take this much noise (8-bit levels)
_COVER_PX = 6  # an edge's coverage is summed over this many pixels from 2 inside its strongest change
_NEAR_PX = 2.0  # rows whose outline lies this close to its extreme tell the side
_MIN_ROWS = 2
# a side the box-side reader puts this far off or more (its spread, px) is the box cut short or run on there: the
# box says little of it and an edge near it is something else's (session 60: a tall stack's box cut at its base)
LOOSE_SIDE_SIGMA_PX = 4.0
_MAX_APART_PX = 2.5  # a side found further than this from the detector's is something else's edge


@dataclass(frozen=True, slots=True)
class RefinedBox:
    """A box whose sides are the detector's averaged with the image's, each with its error (sd, px)."""

    box: Box
    sigma_px: tuple[float, float, float, float]
    found: int  # sides found in the image


def detector_sigma_px(image_size: tuple[int, int]) -> float:
    """A detector box side's error (sd, px) on a frame of `image_size` (width, height)."""
    return DETECTOR_SIDE_SIGMA_PX + DETECTOR_SIDE_PER_INPUT * max(image_size) / DETECTOR_INPUT_PX


def refine_box(image: Image, box: Box, *, outline: FloatArray, detector_sigma: float,
               learned: LearnedSides | None = None) -> RefinedBox:
    """`box` (the detector's, xyxy) with each side found in `image` averaged in; `outline` (P, 2): pixels of the
    stack's rims as fitted to the box (their convex hull is its silhouette). `learned`: the box's sides as the
    box-side reader reads them (`chips_box_net`), taken in place of the detector's where surer; a side it reads
    LOOSE_SIDE_SIGMA_PX or more off keeps the detector's place with the reader's spread, and no edge near it."""
    if not detector_sigma > 0:
        raise ValueError(f"expected detector_sigma > 0, got {detector_sigma}")
    edges = measure_sides(image, box, outline=outline)
    start = list(box)
    spread = [detector_sigma] * 4
    loose = [False] * 4
    if learned is not None:
        for k in range(4):
            if learned.sigma_px[k] < detector_sigma:
                start[k], spread[k] = learned.box[k], learned.sigma_px[k]
            elif learned.sigma_px[k] >= LOOSE_SIDE_SIGMA_PX:
                spread[k], loose[k] = learned.sigma_px[k], True
    sides = list(start)
    sigmas = list(spread)
    weight_edge = MEASURED_SIDE_SIGMA_PX**-2
    found = 0
    for k, edge in enumerate(edges):
        if edge is None or loose[k]:
            continue
        side = edge + EDGE_TO_SIDE_PX[k]
        if abs(side - start[k]) > _MAX_APART_PX:
            continue
        weight_box = spread[k] ** -2
        sides[k] = (weight_box * start[k] + weight_edge * side) / (weight_box + weight_edge)
        sigmas[k] = (weight_box + weight_edge) ** -0.5
        found += 1
    return RefinedBox(box=(sides[0], sides[1], sides[2], sides[3]),
                      sigma_px=(sigmas[0], sigmas[1], sigmas[2], sigmas[3]), found=found)


def measure_sides(image: Image, box: Box, *, outline: FloatArray) -> list[float | None]:
    """Per side (left, top, right, bottom) the stack's edge in `image` (pixel-centre coordinates: the extreme of
    the outline moved to the edges found near it), None where not found."""
    felt = felt_colour(image, box)
    if felt is None or len(outline) < 3:
        return [None] * 4
    hull = cv2.convexHull(np.asarray(outline, dtype=np.float32)).reshape(-1, 2).astype(np.float64)
    found: list[float | None] = []
    for side in range(4):
        strip = _strip(image, box, side=side)
        if strip is None:
            found.append(None)
            continue
        pixels, origin, sign, along = strip
        observed = origin + sign * row_edges(pixels, felt)
        predicted = _hull_extent(hull, along, outward=side >= 2, rows=side % 2 == 0)
        valid = np.isfinite(observed) & np.isfinite(predicted)
        if valid.sum() < _MIN_ROWS:
            found.append(None)
            continue
        extreme = float(np.nanmax(predicted) if side >= 2 else np.nanmin(predicted))  # rows without an edge too
        near = valid & (np.abs(predicted - extreme) <= _NEAR_PX)
        found.append(extreme + float(np.median(observed[near] - predicted[near]))
                     if near.sum() >= _MIN_ROWS else None)
    return found


def felt_colour(image: Image, box: Box) -> FloatArray | None:
    """The median colour of a ring round the box, _RING_GAP_PX out (None when the image holds too little of it)."""
    height, width = image.shape[:2]
    x1, y1, x2, y2 = (round(v) for v in box)
    outer = _RING_GAP_PX + _RING_WIDTH_PX
    left, top, right, bottom = max(0, x1 - outer), max(0, y1 - outer), min(width, x2 + outer), min(height, y2 + outer)
    if right <= left or bottom <= top:
        return None
    ys, xs = np.mgrid[top:bottom, left:right]
    ring = ((xs < x1 - _RING_GAP_PX) | (xs >= x2 + _RING_GAP_PX) | (ys < y1 - _RING_GAP_PX)
            | (ys >= y2 + _RING_GAP_PX))
    if ring.sum() < 8:
        return None
    result: FloatArray = np.median(image[top:bottom, left:right][ring].astype(np.float64), axis=0)
    return result


def row_edges(pixels: FloatArray, felt: FloatArray) -> FloatArray:
    """(R,) per row of `pixels` (R, C, 3; felt outward, at the end) the sub-pixel position (column index) of the
    outermost chip-to-felt edge: from 2 pixels inside its outermost strong change outward, each pixel's share of
    that inner colour against the felt's, summed (NaN where the row ends on no felt or shows no chip)."""
    rows, cols = pixels.shape[:2]
    distance = np.linalg.norm(pixels - felt, axis=2)
    tolerance = _FELT_TOLERANCE * float(np.linalg.norm(felt)) + _NOISE
    peak = distance.max(axis=1)
    strong = distance >= 0.5 * peak[:, None]
    outermost = cols - 1 - np.argmax(strong[:, ::-1], axis=1)
    start = np.maximum(outermost - 2, 0)
    index = np.arange(rows)
    inner = pixels[index, start] - felt
    norm = (inner**2).sum(axis=1)
    columns = start[:, None] + np.arange(_COVER_PX)[None, :]
    used = columns <= np.minimum(outermost + _COVER_PX - 3, cols - 1)[:, None]
    shades = pixels[index[:, None], np.minimum(columns, cols - 1)] - felt
    share = np.minimum((shades * inner[:, None, :]).sum(axis=2) / np.maximum(norm, 1e-9)[:, None], 1.0)
    edge = start - 0.5 + np.where(used, share, 0.0).sum(axis=1)
    ok = ((peak >= _MIN_CONTRAST) & (distance[:, -1] <= tolerance) & (distance[:, -2] <= tolerance)
          & (norm >= _MIN_CONTRAST**2))
    result: FloatArray = np.where(ok, edge, np.nan)
    return result


def _strip(image: Image, box: Box, *, side: int) -> tuple[FloatArray, float, float, FloatArray] | None:
    """The pixels across side `side` (0 left, 1 top, 2 right, 3 bottom) of the box, turned so that each row runs
    outward (R, C, 3); the image coordinate of the first column, the direction (+1 or -1) columns run in the image,
    and each row's image coordinate along the side. None where the strip leaves the image."""
    height, width = image.shape[:2]
    x1, y1, x2, y2 = (round(v) for v in box)
    sides = (x1, y1, x2, y2)
    x1, y1, x2, y2 = max(x1, 0), max(y1, 0), min(x2, width), min(y2, height)  # the rows and columns it spans
    extent = width if side % 2 == 0 else height
    if side >= 2:
        first, last = sides[side] - 1 - _INSIDE_PX, sides[side] - 1 + _OUTSIDE_PX
    else:
        first, last = sides[side] - _OUTSIDE_PX, sides[side] + _INSIDE_PX
    if first < 0 or last >= extent or x2 <= x1 or y2 <= y1:
        return None
    if side % 2 == 0:
        pixels = image[y1:y2, first:last + 1]
        along = np.arange(y1, y2, dtype=np.float64)
    else:
        pixels = image[first:last + 1, x1:x2].transpose(1, 0, 2)
        along = np.arange(x1, x2, dtype=np.float64)
    data = pixels.astype(np.float64)
    if side >= 2:
        return data, float(first), 1.0, along
    return data[:, ::-1], float(last), -1.0, along


def _hull_extent(hull: FloatArray, along: FloatArray, *, outward: bool, rows: bool) -> FloatArray:
    """(R,) the convex polygon `hull`'s furthest point across each row (rows: y = along, x out) or column (x =
    along, y out): its max (outward) or min; NaN where the row misses it."""
    a, b = (1, 0) if rows else (0, 1)
    start, end = hull, np.roll(hull, -1, axis=0)
    low, high = np.minimum(start[:, a], end[:, a]), np.maximum(start[:, a], end[:, a])
    span = end[:, a] - start[:, a]
    crosses = (low[None, :] <= along[:, None]) & (along[:, None] <= high[None, :]) & (high > low)[None, :]
    with np.errstate(divide="ignore", invalid="ignore"):
        t = (along[:, None] - start[None, :, a]) / span[None, :]
    at = start[None, :, b] + t * (end[None, :, b] - start[None, :, b])
    fill = -np.inf if outward else np.inf
    values = np.where(crosses, at, fill)
    extent = values.max(axis=1) if outward else values.min(axis=1)
    result: FloatArray = np.where(np.isfinite(extent), extent, np.nan)
    return result
