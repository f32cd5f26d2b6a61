"""The learned side reader: each chip under a stack's top scored against each denomination of the club's chip set
from its rim's colours (`core.chip_sides`), a small network (`floorman models train-chip-sides`) run with ONNX
Runtime. Its log-probabilities are the chips' evidence in the chain of runs (`chips_side.read_side`'s `learned`).

Why learned: the side labels' noise model (`chips_side.emission_log`) and the rim's pattern fit take a chip's side
for its body and spot colours under the top's light, but a side washed by glare or a dim frame is neither; the net
learns from rendered stacks what a chip's rim looks like under any light the simulator draws, relative to the
candidate's colours (so it reads another club's set too). Measured: see the README's Chips section (session 59).

`side_samples` cuts the training samples (`floorman models train-chip-sides`, which the models layer cannot
cut itself: it does not import vision): a frame's stacks read on their true boxes, each lower chip's rim kept with
its true denomination where the count was read right.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path

import numpy as np
import numpy.typing as npt

from floorman.core.chip_sides import FEATURES_KEY, FEATURES_VERSION, SideSample, chipset_colours, side_features
from floorman.core.chips import ChipSet
from floorman.core.errors import ConfigError
from floorman.core.geometry import FloatArray
from floorman.vision.chips_geometry import BOX_SIGMA_PX, Box, TableCamera
from floorman.vision.onnx_session import versioned_session

MODEL_PATH = Path(__file__).resolve().parent / "data" / "chip_sides.onnx"
RECIPE = "floorman models train-chip-sides"
SAMPLE_MIN_PX = 1.0  # training samples are cut from sides showing this many pixels per chip or more

Image = npt.NDArray[np.uint8]


class ChipSideNet:
    """An ONNX Runtime session over the exported side reader (one thread by default)."""

    def __init__(self, path: Path = MODEL_PATH, *, threads: int = 1) -> None:
        self.session = versioned_session(path, threads=threads, what="chip side reader", recipe=RECIPE,
                                         key=FEATURES_KEY, value=FEATURES_VERSION,
                                         inputs="the features `core.chip_sides` gives")

    def log_evidence(self, rim: FloatArray, valid: npt.NDArray[np.bool_], *, illuminant: FloatArray,
                     px_per_chip: float, chipset: ChipSet) -> FloatArray:
        """(chips, D) log p(denomination | rim) of each lower chip from its rim's colours (chips, angles, 3:
        `core.chip_sides.RIM_ANGLES_DEG`), which samples lie in the image (chips, angles), the top's light and the
        side's pixels per chip."""
        chips = int(np.asarray(rim).shape[0])
        n = len(chipset.denominations)
        if chips == 0:
            return np.zeros((0, n))
        bodies, spots, counts = chipset_colours(chipset)
        per, candidate = side_features(rim, valid, np.repeat(np.asarray(illuminant, np.float32)[None], chips, 0),
                                       np.full(chips, px_per_chip, np.float32), np.repeat(bodies[None], chips, 0),
                                       np.repeat(spots[None], chips, 0), np.repeat(counts[None], chips, 0))
        (scores,) = self.session.run(None, {"per_angle": per, "per_candidate": candidate})
        values = np.asarray(scores, dtype=np.float64).reshape(chips, n)
        peak = values.max(axis=1, keepdims=True)
        result: FloatArray = values - peak - np.log(np.exp(values - peak).sum(axis=1, keepdims=True))
        return result


@lru_cache(maxsize=1)
def default_side_net() -> ChipSideNet | None:
    """The shipped side reader, or None when it is missing (the recogniser then reads sides by their labels and
    rims alone)."""
    try:
        return ChipSideNet()
    except ConfigError:
        return None


def side_samples(image: Image, chipset: ChipSet, *, homography: FloatArray, camera_height_mm: float,
                 stacks: Sequence[tuple[Box, Sequence[int]]]) -> list[SideSample]:
    """Training samples of one frame: its stacks (true box, true values bottom to top) read on their boxes with
    the camera the homography (table mm -> pixels) and height give; each stack of two chips or more whose count
    was read right and whose side shows SAMPLE_MIN_PX or more per chip gives its lower chips' rims, sampled upright
    and along its lean, with their true values."""
    from floorman.vision.chips import ChipRecogniser  # chips imports this module

    camera = TableCamera.from_homography(np.asarray(homography, dtype=np.float64),
                                         image_size=(image.shape[1], image.shape[0]), height_mm=camera_height_mm)
    recogniser = ChipRecogniser(chipset, camera=camera, box_sigma_px=BOX_SIGMA_PX, side_net=None,
                                min_side_px=SAMPLE_MIN_PX)
    recogniser.side_record = []
    readings = recogniser.read_frame(image, [box for box, _ in stacks])
    values = [d.value for d in chipset.denominations]
    bodies, spots, counts = chipset_colours(chipset)
    samples: list[SideSample] = []
    for (_, truth), reading in zip(stacks, readings, strict=True):
        if len(truth) < 2 or reading.count != len(truth) or reading.base_mm is None:
            continue
        below = np.array([values.index(v) for v in truth[:-1]], dtype=np.int64)
        for record in recogniser.side_record:
            if record.count == reading.count and record.base_mm == reading.base_mm:
                samples.append(SideSample(rim=record.rim.astype(np.float32), valid=record.valid,
                                          illuminant=record.illuminant.astype(np.float32),
                                          px_per_chip=record.px_per_chip, truth=below, bodies=bodies, spots=spots,
                                          spot_counts=counts, lean=record.lean))
    return samples
