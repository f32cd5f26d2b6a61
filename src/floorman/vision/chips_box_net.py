"""The learned box-side reader: where each side of a detector's chip box lies in the image at its own pixels, read
by a small network (`floorman models train-chip-boxes`) from a strip across the side (`core.chip_box_strips`),
run with ONNX Runtime. `chips_box.refine_box` takes its sides, with their spread, in place of the detector's where
the net is surer of them; where it reads a side `chips_box.LOOSE_SIDE_SIGMA_PX` or more off (a box cut short of a
tall stack's base), the box says little of that side: no edge near it is taken for it, and the box run on past it
(`chips_extend`) is read whether or not its count comes out surer (`chips._cut_short`).

Why: the detector sees a 4K frame at a quarter of its pixels (its pyramid's 960 px level), so its chip boxes are a
pixel or two off each side, most at the stack's base (short by a pixel on average): with the true base's side in
place of the detector's, 80.2 -> 86.3 % of the dev seats' stacks were counted right (88.6 % on the true box).
The net regresses the true side's offset from the detector's along the side's outward normal, with its own spread
(Gaussian negative log-likelihood), from the strip and where the stack grows (its top's end or its base's).
Measured: see the README's Chips section (session 60).

The training samples are cut by `floorman.models.chip_boxes_data` on the shipped detector's boxes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np
import numpy.typing as npt

from floorman.core.chip_box_strips import (
    OUTWARD,
    SCALARS,
    STRIP_DEPTH_PX,
    STRIPS_KEY,
    side_strip,
    strip_scalars,
    strips_spec,
)
from floorman.core.errors import ConfigError
from floorman.core.geometry import FloatArray
from floorman.vision.chips_cnn import growth_direction
from floorman.vision.chips_geometry import Box, TableCamera
from floorman.vision.onnx_session import versioned_session

MODEL_PATH = Path(__file__).resolve().parent / "data" / "chip_boxes.onnx"
RECIPE = "floorman models train-chip-boxes"
MAX_SHIFT_PX = STRIP_DEPTH_PX - 4  # a side is moved at most this far (the strip shows a little past it)
MIN_SIGMA_PX = 0.3  # the net's spread is taken as at least this (a mask's rounding)
BASE_END_AXIS = 0.05  # a side is at the base's end where the stack grows away from it this much (unit direction)

Image = npt.NDArray[np.uint8]


@dataclass(frozen=True)
class LearnedSides:
    """A box's sides as the net reads them (xyxy) and each one's spread (px)."""

    box: Box
    sigma_px: tuple[float, float, float, float]


class ChipBoxNet:
    """An ONNX Runtime session over the exported box-side reader (one thread by default)."""

    def __init__(self, path: Path = MODEL_PATH, *, threads: int = 1) -> None:
        self.session = versioned_session(path, threads=threads, what="chip box-side reader", recipe=RECIPE,
                                         key=STRIPS_KEY, value=strips_spec(),
                                         inputs="the strips `core.chip_box_strips` cuts")

    def offsets(self, strips: Sequence[Image], scalars: Sequence[FloatArray]) -> tuple[FloatArray, FloatArray]:
        """(n,) each strip's true side outwards of its middle (px) and (n,) its spread."""
        if len(strips) != len(scalars):
            raise ValueError(f"expected as many scalars as strips, got {len(scalars)} and {len(strips)}")
        if not strips:
            return np.zeros(0), np.zeros(0)
        batch = np.ascontiguousarray(np.stack(strips).transpose(0, 3, 1, 2), dtype=np.float32) / 255.0
        extra = np.asarray(scalars, dtype=np.float32).reshape(len(strips), SCALARS)
        (out,) = self.session.run(None, {"strip": batch, "scalars": extra})
        values = np.asarray(out, dtype=np.float64).reshape(len(strips), 2)
        return values[:, 0], np.exp(values[:, 1])

    def sides(self, image: Image, box: Box, camera: TableCamera) -> LearnedSides:
        """`box`'s four sides as the net reads them, each moved at most MAX_SHIFT_PX."""
        growth = box_growth(camera, box)
        offsets, sigmas = self.offsets([side_strip(image, box, k) for k in range(4)],
                                       [strip_scalars(box, k, growth) for k in range(4)])
        moved = [box[k] + OUTWARD[k] * float(np.clip(offsets[k], -MAX_SHIFT_PX, MAX_SHIFT_PX)) for k in range(4)]
        if not (moved[2] > moved[0] and moved[3] > moved[1]):
            return LearnedSides(box, (float("inf"),) * 4)  # sides crossed: not read
        spread = np.maximum(sigmas, MIN_SIGMA_PX)
        return LearnedSides((moved[0], moved[1], moved[2], moved[3]),
                            (float(spread[0]), float(spread[1]), float(spread[2]), float(spread[3])))


def box_growth(camera: TableCamera, box: Box) -> FloatArray:
    """The unit direction (2,) in which a stack standing under `box`'s centre grows in the image."""
    centre = ((box[0] + box[2]) / 2.0, (box[1] + box[3]) / 2.0)
    ground = camera.to_plane(np.array([centre]), z=0.0)[0]
    return growth_direction(camera, (float(ground[0]), float(ground[1])))


def base_end_sides(camera: TableCamera, box: Box) -> tuple[int, ...]:
    """The sides of `box` (0-3: x1, y1, x2, y2) at its stack's base end: those the stack grows away from."""
    growth = box_growth(camera, box)
    return tuple(k for k in range(4) if OUTWARD[k] * float(growth[k % 2]) <= -BASE_END_AXIS)


@lru_cache(maxsize=1)
def default_box_net() -> ChipBoxNet | None:
    """The shipped box-side reader, or None when it is missing (the detector's boxes are then refined as before)."""
    try:
        return ChipBoxNet()
    except ConfigError:
        return None

