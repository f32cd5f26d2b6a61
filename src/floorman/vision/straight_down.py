"""Chip stacks counted in a photograph taken straight down, without a calibration (`floorman detect --straight-down`).

Without a calibration the recogniser has no camera model, and every chip box counts as one chip of its top's colour:
a stack of three is one chip. A photo taken straight down over the table implies a camera model all the same: the
principal point at the image's centre, the table plane square to the lens axis, its scale (px per mm) told by the
chips themselves (a chip box clear of the frame and about square is a chip's diameter across), and the camera's
height unknown (the recogniser's alternatives: the count must hold for any height over `CAMERA_HEIGHTS_MM`, the
frame's stacks telling it where they can; or the height measured with a tape, `height_mm`). Away from the image's
centre a stack then shows its side, and the recogniser counts it as with a calibration.

These keep the reading without a camera (one chip, its top's colour): a box at the image's border (a chip cut by the
frame: its sliver looks like a tall stack's side), a box wider across than any stack (`_WIDEST`: a chip boxed with the
card under it), a count given less than `MIN_COUNT_CONFIDENCE` (near the image's centre a stack shows no side, and the
box's noise then reads as one) and a count at the end of the recogniser's range (the fit run out of counts). A photo
whose chips grow across it (`size_change` over `MAX_SIZE_CHANGE`: taken tilted, its nadir off the image's centre,
where this camera would look for the stacks' sides in the wrong direction and count single chips as stacks) keeps
every reading without a camera. Measured in session 24 on home-style photo-like frames (`benchmarks/chips_photo.py
--straight-down`; README, Detector).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from floorman.vision.chips import ChipReading, ChipRecogniser, Image
from floorman.vision.chips_geometry import Box, TableCamera
from floorman.vision.detections import clear_of_border

MAX_SIZE_CHANGE = 0.05  # chips this much larger at the image's side than at its centre: the photo is tilted
_MIN_FIT = 4  # square chip boxes needed to tell a tilt
_FIT_OUTLIER = 0.08  # a box this far off the first fit's size is left out of the second
MIN_COUNT_CONFIDENCE = 0.3  # a count less sure than this keeps the reading without a camera: one chip
_SQUARE = 1.25  # a box whose sides differ by less than this ratio is a chip's diameter across (a chip lying flat)
# A stack's box is a chip swept along its side, out from the nadir: its short side at most ~1.6 chips (20 chips seen
# diagonally from 1 m, 0.5 m out); a box wider than this many chips across is no stack
_WIDEST = 1.6

log = logging.getLogger(__name__)


def at_border(box: Box, *, image_size: tuple[int, int]) -> bool:
    """Whether `box` reaches the image's border (a chip cut by the frame)."""
    return not bool(clear_of_border([box], image_size)[0])


def size_change(boxes: Sequence[Box], *, image_size: tuple[int, int]) -> float | None:
    """How much larger the chips seem at the image's side than at its centre, relative (the size of the square
    `boxes` fitted as a plane over the image, its slope times half the image's width over its value at the centre):
    a camera tilted from vertical sees the table nearer on one side; fitted again without the boxes `_FIT_OUTLIER` off
    the first fit. None with fewer than _MIN_FIT boxes."""
    if len(boxes) < _MIN_FIT:
        return None
    b = np.asarray(boxes, dtype=np.float64).reshape(-1, 4)
    size = np.minimum(b[:, 2] - b[:, 0], b[:, 3] - b[:, 1])
    u = (b[:, 0] + b[:, 2]) / 2.0 - image_size[0] / 2.0
    v = (b[:, 1] + b[:, 3]) / 2.0 - image_size[1] / 2.0
    design = np.column_stack([np.ones_like(u), u, v])
    coef, *_ = np.linalg.lstsq(design, size, rcond=None)
    fitted = design @ coef
    kept = np.abs(size - fitted) <= _FIT_OUTLIER * np.abs(fitted)  # a chip partly covered, a box's miss
    if _MIN_FIT <= int(kept.sum()) < len(size):
        coef, *_ = np.linalg.lstsq(design[kept], size[kept], rcond=None)
    if not coef[0] > 0:
        return None
    return float(np.hypot(coef[1], coef[2]) * image_size[0] / 2.0 / coef[0])


def _clear(boxes: Sequence[Box], *, image_size: tuple[int, int]) -> tuple[list[Box], npt.NDArray[np.bool_]]:
    """The boxes clear of the border, and which of them are about square and of about the others' size (a chip lying
    flat; not a chip boxed with what lies round it, `_WIDEST`)."""
    clear = [b for b in boxes if not at_border(b, image_size=image_size) and b[2] > b[0] and b[3] > b[1]]
    sides = np.array([(b[2] - b[0], b[3] - b[1]) for b in clear], dtype=np.float64).reshape(-1, 2)
    short, long = sides.min(axis=1), sides.max(axis=1)
    typical = float(np.median(short)) if len(short) else 0.0
    return clear, (long < _SQUARE * short) & (short <= _WIDEST * typical) & (short >= typical / _WIDEST)


def chip_size_px(boxes: Sequence[Box], *, image_size: tuple[int, int]) -> float | None:
    """A chip's diameter across in this photo: the median short side of the chip boxes clear of the border and about
    square (of all those clear of the border when none is). None without a box clear of the border."""
    clear, square = _clear(boxes, image_size=image_size)
    if not clear:
        return None
    short = np.array([min(b[2] - b[0], b[3] - b[1]) for b in clear], dtype=np.float64)
    return float(np.median(short[square] if square.any() else short))


def straight_down_camera(boxes: Sequence[Box], *, image_size: tuple[int, int], chip_diameter_mm: float,
                         height_mm: float | None = None) -> TableCamera | None:
    """The camera a photo taken straight down implies: over the image's centre, its scale `chip_size_px` over
    `chip_diameter_mm`; `height_mm` when measured, else assumed (`TableCamera.height_assumed`). None without a
    chip box clear of the border, or when the square ones grow across the photo by more than `MAX_SIZE_CHANGE`
    (`size_change`: a camera tilted from vertical, whose stacks' sides show elsewhere than this camera puts them)."""
    chip_px = chip_size_px(boxes, image_size=image_size)
    if chip_px is None:
        return None
    clear, square = _clear(boxes, image_size=image_size)
    change = size_change([b for b, flat in zip(clear, square, strict=True) if flat], image_size=image_size)
    if change is not None and change > MAX_SIZE_CHANGE:
        log.info("chips %.0f %% larger on one side of the photo than on the other: not straight down", 200 * change)
        return None
    scale = chip_px / chip_diameter_mm
    width, height = image_size
    # table mm (x right, y up in the image) to pixels; y flipped so the camera looks down at the felt
    image_from_table = np.array([[scale, 0.0, width / 2.0], [0.0, -scale, height / 2.0], [0.0, 0.0, 1.0]])
    return TableCamera.from_homography(image_from_table, image_size=image_size, height_mm=height_mm)


def read_straight_down(image: Image, boxes: Sequence[Box], *, recogniser: ChipRecogniser,
                       height_mm: float | None = None,
                       previous: Sequence[ChipReading | None] | None = None) -> list[ChipReading]:
    """Every chip box of one straight-down photo read with the camera it implies (`straight_down_camera`); a box at
    the border, a box wider across than any stack (`_WIDEST` chips: two chips boxed as one, a chip with the card
    under it), a count less sure than `MIN_COUNT_CONFIDENCE` or one at the recogniser's `max_count` (the fit run out
    of counts, not a stack measured) read by `recogniser` (no camera: one chip).
    `previous`: per box, the last video frame's reading at the same place (`ChipRecogniser.read_evidence`)."""
    size = (int(image.shape[1]), int(image.shape[0]))
    chip_px = chip_size_px(boxes, image_size=size)
    camera = straight_down_camera(boxes, image_size=size, chip_diameter_mm=recogniser.chipset.diameter_mm,
                                  height_mm=height_mm)
    counted: dict[int, ChipReading] = {}
    if camera is not None and chip_px is not None:
        counting = ChipRecogniser(recogniser.chipset, camera=camera, max_count=recogniser.max_count,
                                  box_sigma_px=recogniser.box_sigma_px, refine=recogniser.refine,
                                  log_prior=recogniser.log_prior, height_from_frame=recogniser.height_from_frame,
                                  offset_net=recogniser.offset_net,  # `recogniser`'s settings, with the camera
                                  # the box-side reader learned the calibrated scenes' cameras, not one guessed from
                                  # the chips' size: here it turned a lone 5000's top to a 25 (session 60)
                                  box_net=None)
        inside = [i for i, box in enumerate(boxes) if not at_border(box, image_size=size)
                  and min(box[2] - box[0], box[3] - box[1]) <= _WIDEST * chip_px]
        read = counting.read_evidence(image, [counting.evidence(image, boxes[i]) for i in inside],
                                      previous=None if previous is None else [previous[i] for i in inside])
        counted = {i: r for i, r in zip(inside, read, strict=True)
                   if r.count_confidence >= MIN_COUNT_CONFIDENCE and r.count < counting.max_count}
    rest = [i for i in range(len(boxes)) if i not in counted]  # read once, without a camera: one chip each
    plain = recogniser.read_evidence(image, [recogniser.evidence(image, boxes[i]) for i in rest],
                                     previous=None if previous is None else [previous[i] for i in rest])
    counted.update(zip(rest, plain, strict=True))
    return [counted[i] for i in range(len(boxes))]
