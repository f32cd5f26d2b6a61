"""The strips across a chip box's sides that the learned box-side reader reads, shared by its training recipe
(`floorman.models.chip_boxes_data`) and its reader (`floorman.vision.chips_box_net`).

A detector that sees a 4K frame at a quarter of its pixels boxes a stack a pixel or two off each side, and a side
off by a pixel at the base of a stack seen at 2-3 px per chip is half a chip of count. Each side's strip is the
image at its own pixels across that side: STRIP_DEPTH_PX either side of it along its outward normal (one sample per
pixel: the net's offset is in image pixels) by STRIP_ALONG samples along it (the box's extent on that side and
ALONG_MARGIN of it each way, resampled: a stack's width is no count). Rows run along the side, columns outwards.
Beside the strip the net is given two numbers (`strip_scalars`): how much the stack grows towards that side (its
growth direction's component along the side's outward normal: +1 the top disc's end, -1 the base's) and the log of
the side's length over LENGTH_UNIT_PX.
"""

from __future__ import annotations

import math

import cv2
import numpy as np
import numpy.typing as npt

from floorman.core.geometry import FloatArray

STRIPS_KEY = "floorman_box_strips"  # ONNX metadata: the strip's shape, "depth,along,margin"
STRIP_DEPTH_PX = 24  # samples either side of a box's side, one per pixel
STRIP_ALONG = 32  # samples along the side
ALONG_MARGIN = 0.1  # the side's extent and this share of it each way
LENGTH_UNIT_PX = 50.0
OUTWARD = (-1.0, -1.0, 1.0, 1.0)  # per side (x1, y1, x2, y2): the sign of its outward normal on its axis
SCALARS = 2

Image = npt.NDArray[np.uint8]
Box = tuple[float, float, float, float]


def strips_spec() -> str:
    """The metadata value a model trained on these strips carries."""
    return f"{STRIP_DEPTH_PX},{STRIP_ALONG},{ALONG_MARGIN}"


def side_strip(image: Image, box: Box, side: int) -> Image:
    """(STRIP_ALONG, 2 * STRIP_DEPTH_PX, 3) the image across side `side` (0: x1, 1: y1, 2: x2, 3: y2) of `box`
    (xyxy pixels), column c at (c - STRIP_DEPTH_PX + 0.5) px outwards of the side; the image's border replicated."""
    if side not in range(4):
        raise ValueError(f"expected a side 0-3 (x1, y1, x2, y2), got {side}")
    if not (box[2] > box[0] and box[3] > box[1]):
        raise ValueError(f"expected a box with x2 > x1 and y2 > y1, got {box}")
    lo, hi = (box[1], box[3]) if side in (0, 2) else (box[0], box[2])
    margin = ALONG_MARGIN * (hi - lo)
    along = np.linspace(lo - margin, hi + margin, STRIP_ALONG)
    across = box[side] + OUTWARD[side] * (np.arange(-STRIP_DEPTH_PX, STRIP_DEPTH_PX, dtype=np.float64) + 0.5)
    normal, tangent = np.meshgrid(across, along)
    xs, ys = (normal, tangent) if side in (0, 2) else (tangent, normal)
    strip = cv2.remap(image, xs.astype(np.float32), ys.astype(np.float32), cv2.INTER_LINEAR,
                      borderMode=cv2.BORDER_REPLICATE)
    return np.asarray(strip, dtype=np.uint8)


def strip_scalars(box: Box, side: int, growth: FloatArray) -> FloatArray:
    """(SCALARS,) float32: the stack's growth direction (unit, image px) along the side's outward normal, and the
    log of the side's length over LENGTH_UNIT_PX."""
    length = (box[3] - box[1]) if side in (0, 2) else (box[2] - box[0])
    toward = OUTWARD[side] * float(growth[side % 2])
    return np.array([toward, math.log(max(length, 1.0) / LENGTH_UNIT_PX)], dtype=np.float32)
