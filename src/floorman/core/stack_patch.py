"""The chip offset net's patch geometry, shared by its training recipe (`floorman.models.chips_data`, on the
simulator's camera) and its reader (`floorman.vision.chips_cnn`, on a calibration's camera): both give a camera as
`project`, table mm (N, 3) to pixels (N, 2).

The patch: a box's neighbourhood rotated so that the stack's growth direction in the image (its axis projected at
the felt point under the box's centre) points up, scaled so that a chip's diameter (the mean of its two projected
felt axes) is `PatchSpec.diameter_px`, the box's centre at the patch's.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import cv2
import numpy as np
import numpy.typing as npt

from floorman.core.geometry import FloatArray

Project = Callable[[FloatArray], FloatArray]  # table mm (N, 3) -> pixels (N, 2)
AXIS_MM = 100.0  # the stack's axis is projected from its foot to this high
_MIN_AXIS_PX = 1e-3  # shorter: a camera straight above the stack, whose growth direction is then taken as up


@dataclass(frozen=True)
class PatchSpec:
    """The net's input: `width` x `height` px, a chip's diameter `diameter_px`, warped at `supersample` times that
    size then area-averaged down (no aliasing from 4K chips). Travels in the model's metadata (`encode`)."""

    width: int = 48
    height: int = 96
    diameter_px: float = 28.0
    supersample: int = 2

    def __post_init__(self) -> None:
        if self.width < 8 or self.height < 8 or not self.diameter_px > 0 or self.supersample < 1:
            raise ValueError(f"expected a patch of at least 8x8 px, a positive diameter and supersample >= 1, "
                             f"got {self}")

    def encode(self) -> str:
        return f"{self.width},{self.height},{self.diameter_px},{self.supersample}"

    @classmethod
    def decode(cls, text: str) -> PatchSpec:
        try:
            width, height, diameter, supersample = text.split(",")
            return cls(int(width), int(height), float(diameter), int(supersample))
        except ValueError:
            raise ValueError(f"expected a patch spec 'width,height,diameter_px,supersample', got {text!r}") from None


def growth_direction(project: Project, ground_mm: tuple[float, float]) -> FloatArray:
    """The unit direction (2,) in which a stack standing at `ground_mm` grows in the image (up when the camera looks
    straight down on it)."""
    x, y = ground_mm
    ends = project(np.array([[x, y, 0.0], [x, y, AXIS_MM]]))
    axis = ends[1] - ends[0]
    norm = float(np.linalg.norm(axis))
    if norm < _MIN_AXIS_PX:
        return np.array([0.0, -1.0])
    result: FloatArray = axis / norm
    return result


def diameter_px(project: Project, ground_mm: tuple[float, float], *, diameter_mm: float) -> float:
    """A chip's diameter in image px lying at `ground_mm` (the mean of its two projected axes)."""
    x, y = ground_mm
    r = diameter_mm / 2.0
    points = project(np.array([[x - r, y, 0.0], [x + r, y, 0.0], [x, y - r, 0.0], [x, y + r, 0.0]]))
    return float((np.linalg.norm(points[1] - points[0]) + np.linalg.norm(points[3] - points[2])) / 2.0)


def patch_matrix(project: Project, centre_px: tuple[float, float], ground_mm: tuple[float, float], *,
                 diameter_mm: float, spec: PatchSpec) -> tuple[FloatArray, float]:
    """2x3 patch px <- image px for a box centred at `centre_px` over the felt point `ground_mm`, and its scale
    (patch px per image px)."""
    up = growth_direction(project, ground_mm)
    scale = spec.diameter_px / max(diameter_px(project, ground_mm, diameter_mm=diameter_mm), 1e-6)
    # rows: patch x along `up` turned a quarter clockwise on screen, patch y against `up`
    rotation = np.array([[-up[1], up[0]], [-up[0], -up[1]]]) * scale
    offset = np.array([spec.width / 2.0, spec.height / 2.0]) - rotation @ np.asarray(centre_px, dtype=np.float64)
    result: FloatArray = np.hstack([rotation, offset[:, None]])
    return result, scale


def cut_patch(image: npt.NDArray[np.uint8], matrix: FloatArray, *, spec: PatchSpec) -> npt.NDArray[np.uint8]:
    """The patch (spec.height, spec.width, 3) of the BGR `image` under `matrix` (2x3, `patch_matrix`), warped at
    `spec.supersample` times its size then area-averaged down."""
    big = np.asarray(matrix, dtype=np.float64) * spec.supersample
    warped = cv2.warpAffine(image, big, (spec.width * spec.supersample, spec.height * spec.supersample),
                            flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
    if spec.supersample == 1:
        return np.asarray(warped, dtype=np.uint8)
    return np.asarray(cv2.resize(warped, (spec.width, spec.height), interpolation=cv2.INTER_AREA), dtype=np.uint8)
