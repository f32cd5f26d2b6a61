"""Camera calibration: the homography from image pixels to table millimetres.

Fitted from ArUco markers laid at the layout's known positions (`TableLayout.markers`), or from four or more
hand-picked point pairs. Lens distortion is not modelled: the homography is exact for a distortion-free
camera and the felt plane (z = 0); the reprojection error in mm says how well it fits.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

import cv2
import numpy as np
import yaml
from pydantic import BaseModel, ConfigDict, Field, field_validator

from floorman.core.config import model_from_yaml_file
from floorman.core.errors import ConfigError, FloormanError
from floorman.core.geometry import FloatArray, apply_homography, fit_homography, invert_homography
from floorman.core.layout import TableLayout

logger = logging.getLogger(__name__)


MAX_CAMERA_HEIGHT_MM = 10000.0  # a calibration file's measured camera height is in (0, this]


def check_camera_height(height_mm: float | None, *, field: str) -> float | None:
    """A camera height given on a command line, checked: None, or a finite height in (0, MAX_CAMERA_HEIGHT_MM]."""
    if height_mm is not None and not (math.isfinite(height_mm) and 0.0 < height_mm <= MAX_CAMERA_HEIGHT_MM):
        raise ConfigError(f"expected the camera's height above the felt in mm, in (0, {MAX_CAMERA_HEIGHT_MM:.0f}], "
                          f"got {height_mm}", field=field)
    return height_mm


class CalibrationError(FloormanError):
    """A calibration cannot be fitted from what was given."""


class PointPair(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    pixel: tuple[float, float] = Field(description="Image point [u, v] in pixels.")
    table_mm: tuple[float, float] = Field(description="The same point on the table [x, y] in mm.")
    marker_id: int | None = Field(default=None, description="ArUco marker id, when the point is a marker corner.")


class ReprojectionError(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    mean_mm: float = Field(ge=0, description="Mean distance between mapped pixels and their table points, mm.")
    max_mm: float = Field(ge=0, description="Largest such distance, mm.")


class Calibration(BaseModel):
    """One camera's calibration file (YAML)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    camera_id: str = Field(default="cam0", min_length=1, description="Camera id.")
    layout: str = Field(description="Name of the table layout the table points refer to.")
    image_size: tuple[int, int] = Field(description="Image width and height in pixels.")
    method: Literal["aruco", "points"] = Field(description="How the homography was fitted.")
    homography: tuple[tuple[float, float, float], ...] = Field(
        description="3x3 matrix mapping pixels [u, v, 1] to table mm [x, y, 1] (row-major)."
    )
    points: tuple[PointPair, ...] = Field(min_length=4, description="The point pairs it was fitted on.")
    reprojection_error: ReprojectionError = Field(description="Fit quality in table mm.")
    camera_height_mm: float | None = Field(
        default=None, gt=0, le=MAX_CAMERA_HEIGHT_MM,
        description="The camera lens's height above the felt in mm, measured (optional). A straight-down view's "
        "homography cannot tell it, and stack counts need it: `benchmarks/chips.py`, detector boxes at 3840x2160, "
        "count exact 68.4 % with the height told by the frame's stacks, 74.4 % with it measured.",
    )

    @field_validator("homography")
    @classmethod
    def _three_by_three(cls, value: tuple[tuple[float, float, float], ...]) -> tuple[tuple[float, float, float], ...]:
        if len(value) != 3:
            raise ValueError(f"expected 3 rows of 3 numbers, got {len(value)} rows")
        if abs(float(np.linalg.det(np.asarray(value)))) < 1e-15:
            raise ValueError("the matrix is singular")
        return value

    @property
    def pixels_to_mm(self) -> FloatArray:
        return np.asarray(self.homography, dtype=np.float64)

    @property
    def mm_to_pixels(self) -> FloatArray:
        return invert_homography(self.pixels_to_mm)

    def to_table(self, pixels: FloatArray) -> FloatArray:
        """Map (N, 2) pixels to table mm."""
        return apply_homography(self.pixels_to_mm, pixels)

    def to_image(self, table_mm: FloatArray) -> FloatArray:
        return apply_homography(self.mm_to_pixels, table_mm)

    @classmethod
    def load(cls, path: str | Path) -> Calibration:
        return model_from_yaml_file(cls, path)

    def save(self, path: str | Path) -> None:
        data: dict[str, Any] = self.model_dump(mode="json")
        Path(path).write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")


def load_calibration(path: Path, *, layout: TableLayout, field: str = "--calib") -> Calibration:
    """A calibration file for `layout`: refused, naming `field`, when missing or made for another layout."""
    if not path.is_file():
        raise ConfigError(f"no such calibration file: {path}", field=field)
    calibration = Calibration.load(path)
    if calibration.layout != layout.name:
        raise ConfigError(f"the calibration is for layout {calibration.layout!r}, expected {layout.name!r} "
                          "(the --layout given)", source=str(path), field="layout")
    return calibration


def calibrate_from_points(
    pairs: Sequence[PointPair], *, layout: TableLayout, image_size: tuple[int, int], camera_id: str = "cam0",
    method: Literal["aruco", "points"] = "points", camera_height_mm: float | None = None,
) -> Calibration:
    """Fit the pixels -> mm homography on four or more point pairs (`camera_height_mm`: measured, kept in the
    file)."""
    if len(pairs) < 4:
        raise CalibrationError(f"expected at least 4 point pairs, got {len(pairs)}")
    pixels = np.asarray([p.pixel for p in pairs], dtype=np.float64)
    table = np.asarray([p.table_mm for p in pairs], dtype=np.float64)
    try:
        homography = fit_homography(pixels, table)
    except ValueError as exc:
        raise CalibrationError(str(exc)) from None
    errors = np.sqrt(((apply_homography(homography, pixels) - table) ** 2).sum(axis=1))
    rows = tuple((float(r[0]), float(r[1]), float(r[2])) for r in homography)
    return Calibration(
        camera_id=camera_id, layout=layout.name, image_size=image_size, method=method, homography=rows,
        points=tuple(pairs),
        reprojection_error=ReprojectionError(mean_mm=float(errors.mean()), max_mm=float(errors.max())),
        camera_height_mm=camera_height_mm,
    )


def _dictionary(name: str) -> cv2.aruco.Dictionary:
    code = getattr(cv2.aruco, name, None)
    if not isinstance(code, int):
        raise ConfigError(f"unknown ArUco dictionary {name!r}", field="marker_dictionary")
    return cv2.aruco.getPredefinedDictionary(code)


def detect_markers(image: np.ndarray[Any, Any], *, dictionary: str) -> dict[int, FloatArray]:
    """ArUco markers in a BGR or grey image: id -> (4, 2) corner pixels (top-left, top-right, ...)."""
    grey = image if image.ndim == 2 else cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
    params = cv2.aruco.DetectorParameters()
    params.cornerRefinementMethod = cv2.aruco.CORNER_REFINE_SUBPIX
    detector = cv2.aruco.ArucoDetector(_dictionary(dictionary), params)
    corners, ids, _ = detector.detectMarkers(grey)
    found: dict[int, FloatArray] = {}
    if ids is None:
        return found
    for marker_corners, marker_id in zip(corners, ids.reshape(-1), strict=True):
        found[int(marker_id)] = np.asarray(marker_corners, dtype=np.float64).reshape(4, 2)
    return found


def calibrate_from_markers(
    image: np.ndarray[Any, Any], *, layout: TableLayout, camera_id: str = "cam0", min_markers: int = 2,
    camera_height_mm: float | None = None,
) -> Calibration:
    """Detect the layout's markers in the image and fit on their corners (4 pairs per marker)."""
    if not layout.markers:
        raise CalibrationError(f"layout {layout.name!r} defines no calibration markers")
    seen = detect_markers(image, dictionary=layout.marker_dictionary)
    known = {m.id: m for m in layout.markers}
    usable = sorted(set(seen) & set(known))
    unknown = sorted(set(seen) - set(known))
    if unknown:
        logger.warning("ignoring ArUco markers %s that layout %s does not define", unknown, layout.name)
    if len(usable) < min_markers:
        raise CalibrationError(
            f"found {len(usable)} of the layout's markers {sorted(known)} (seen: {sorted(seen)}), "
            f"expected at least {min_markers}"
        )
    pairs = [
        PointPair(pixel=(float(px[0]), float(px[1])), table_mm=(float(mm[0]), float(mm[1])), marker_id=marker_id)
        for marker_id in usable
        for px, mm in zip(seen[marker_id], known[marker_id].corners(), strict=True)
    ]
    height, width = image.shape[:2]
    return calibrate_from_points(pairs, layout=layout, image_size=(width, height), camera_id=camera_id,
                                 method="aruco", camera_height_mm=camera_height_mm)


def parse_point_pair(text: str) -> PointPair:
    """``"u,v=x,y"`` (pixels = table mm) to a PointPair; ValueError names the text."""
    try:
        left, right = text.split("=")
        u, v = (float(p) for p in left.split(","))
        x, y = (float(p) for p in right.split(","))
    except ValueError:
        raise ValueError(f"expected a point pair as 'u,v=x,y' (pixels = table mm), got {text!r}") from None
    return PointPair(pixel=(u, v), table_mm=(x, y))
