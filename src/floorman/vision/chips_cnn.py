"""A learned count evidence for chip stacks: a small CNN (`floorman models train-chips`) run with ONNX Runtime reads
how far a stack's top disc sits above its base in a patch cut by the camera's geometry, and the geometry turns
that offset into evidence per count and camera model.

The patch (`StackPatch`): the box's neighbourhood rotated so that the stack's growth direction in the image (its
axis projected by the camera) points up, scaled so that a chip's diameter is `PatchSpec.diameter_px`, centred on the
box. The net regresses the top's offset over the base along that direction in patch pixels, with its own spread;
the count's evidence is that offset against each count's expected one (`offset_log_likelihood`). Regressing the
offset, not the count: the net needs no idea of the px per chip (a camera whose height was assumed has one per
height, and the geometry knows them all), and no count prior is learned from the training scenes' stacks.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np
import numpy.typing as npt

from floorman.core import stack_patch
from floorman.core.errors import ConfigError
from floorman.core.geometry import FloatArray
from floorman.core.stack_patch import PatchSpec
from floorman.vision.chips_geometry import Box, TableCamera
from floorman.vision.onnx_session import cpu_session

MODEL_PATH = Path(__file__).resolve().parent / "data" / "chip_offsets.onnx"
PATCH_KEY = "floorman_patch"  # "width,height,diameter_px,supersample"
SIGMA_SCALE = 1.5  # the net's spread is taken this many times wider (measured on a dev seed: calibrated counts)
TAIL_SHARE = 0.05  # this share of its readings lies far off (a neighbour's top taken for the stack's) ...
TAIL_SCALE = 5.0  # ... within this many spreads

Image = npt.NDArray[np.uint8]


@dataclass(frozen=True)
class StackPatch:
    """How a box's patch was cut: `matrix` (2x3) maps image pixels to patch pixels; `ground_mm` is the felt point
    under the box's centre; `scale` is patch px per image px."""

    matrix: FloatArray
    ground_mm: tuple[float, float]
    scale: float

    def to_patch(self, pixels: FloatArray) -> FloatArray:
        """(N, 2) patch pixels of (N, 2) image pixels."""
        pts = np.asarray(pixels, dtype=np.float64).reshape(-1, 2)
        result: FloatArray = pts @ self.matrix[:, :2].T + self.matrix[:, 2]
        return result


def growth_direction(camera: TableCamera, ground_mm: tuple[float, float]) -> FloatArray:
    """The unit direction (2,) in which a stack standing at `ground_mm` grows in the image (up when the camera looks
    straight down on it)."""
    return stack_patch.growth_direction(camera.project, ground_mm)


def patch_geometry(camera: TableCamera, box: Box, *, diameter_mm: float, spec: PatchSpec) -> StackPatch:
    """The transform of a box's patch (`core.stack_patch.patch_matrix`) on a calibration's camera."""
    centre = ((box[0] + box[2]) / 2.0, (box[1] + box[3]) / 2.0)
    ground = camera.to_plane(np.array([centre]), z=0.0)[0]
    ground_mm = (float(ground[0]), float(ground[1]))
    matrix, scale = stack_patch.patch_matrix(camera.project, centre, ground_mm, diameter_mm=diameter_mm, spec=spec)
    return StackPatch(matrix, ground_mm, scale)


def cut_patch(image: Image, geometry: StackPatch, *, spec: PatchSpec) -> Image:
    """The patch (spec.height, spec.width, 3) of `image` under `geometry`."""
    return stack_patch.cut_patch(image, geometry.matrix, spec=spec)


def expected_offsets(camera: TableCamera, geometry: StackPatch, *, thickness_mm: float, max_count: int) -> FloatArray:
    """(max_count,) the top disc's offset over the base (patch px, up) of stacks of 1..max_count chips standing at
    the patch's ground point, seen by `camera`."""
    x, y = geometry.ground_mm
    heights = np.arange(max_count + 1, dtype=np.float64) * thickness_mm
    pixels = camera.project(np.column_stack([np.full_like(heights, x), np.full_like(heights, y), heights]))
    patch = geometry.to_patch(pixels)
    result: FloatArray = patch[0, 1] - patch[1:, 1]
    return result


def offset_log_likelihood(offset: float, sigma: float, expected: FloatArray) -> FloatArray:
    """log p(offset | count) per count (up to a constant): a Gaussian of the net's spread `sigma` on each count's
    expected offset, with a tail TAIL_SCALE times as wide holding TAIL_SHARE of the readings."""
    z = (offset - np.asarray(expected, dtype=np.float64)) / sigma
    result: FloatArray = np.logaddexp(math.log(1.0 - TAIL_SHARE) - 0.5 * z**2,
                                      math.log(TAIL_SHARE) - 0.5 * (z / TAIL_SCALE) ** 2 - math.log(TAIL_SCALE))
    return result


@dataclass(frozen=True)
class OffsetReading:
    """The net's reading of one patch: the top's offset over the base (patch px, up) and its spread."""

    offset: float
    sigma: float


class ChipOffsetNet:
    """An ONNX Runtime session over the exported offset net (one thread by default)."""

    def __init__(self, path: Path = MODEL_PATH, *, threads: int = 1) -> None:
        self.session, meta = cpu_session(path, threads=threads, what="chip offset net",
                                         recipe="floorman models train-chips")
        try:
            self.spec = PatchSpec.decode(meta[PATCH_KEY])
        except (KeyError, ValueError) as exc:
            raise ConfigError(f"expected {PATCH_KEY} metadata 'width,height,diameter_px,supersample' in {path}, "
                              f"got {dict(meta)}: {exc}", field="metadata") from None

    def read(self, patches: list[Image]) -> list[OffsetReading]:
        """One reading per patch (all in one batch)."""
        if not patches:
            return []
        batch = np.ascontiguousarray(np.stack(patches).transpose(0, 3, 1, 2), dtype=np.float32)
        (out,) = self.session.run(None, {"patch": batch})
        values = np.asarray(out, dtype=np.float64).reshape(len(patches), -1)
        return [OffsetReading(float(v[0]), float(math.exp(v[1]))) for v in values]


@lru_cache(maxsize=1)
def default_offset_net() -> ChipOffsetNet | None:
    """The shipped offset net, or None when it is missing (the recogniser then counts by the geometry alone)."""
    try:
        return ChipOffsetNet()
    except ConfigError:
        return None


def learned_log_likelihood(net: ChipOffsetNet, image: Image, box: Box, camera: TableCamera,
                           alternatives: Sequence[TableCamera] = (), *, diameter_mm: float, thickness_mm: float,
                           max_count: int) -> FloatArray:
    """(M, N) log p(net's offset | camera model, count) of a box's patch: `camera` first, then `alternatives`."""
    spec = net.spec
    geometry = patch_geometry(camera, box, diameter_mm=diameter_mm, spec=spec)
    reading = net.read([cut_patch(image, geometry, spec=spec)])[0]
    sigma = reading.sigma * SIGMA_SCALE
    return np.stack([offset_log_likelihood(reading.offset, sigma, expected_offsets(model, geometry,
                                                                                   thickness_mm=thickness_mm,
                                                                                   max_count=max_count))
                     for model in (camera, *alternatives)])
