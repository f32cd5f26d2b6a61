"""`Detections`: the one detection type every vision stage takes and returns.

One numpy array per field, all of the same length N: boxes in pixels, confidence, class id, tracker id (-1
until a tracker assigns one), optional table-mm positions (filled by calibration), and a `data` dict of
per-detection arrays for what later stages add (card identity, chip denomination, zone names...).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float32]
IntArray = npt.NDArray[np.int64]
Mask = npt.NDArray[np.bool_]
Index = int | slice | Sequence[int] | npt.NDArray[np.bool_] | npt.NDArray[np.integer[Any]]


BORDER_PX = 1.0  # a box side this close to the image's border is cut by it


def border_cuts(xyxy: npt.ArrayLike, image_size: tuple[int, int]) -> tuple[Mask, Mask]:
    """Per box (N, 4, pixels), whether the image's left or right border cuts it, and whether its top or bottom
    border does."""
    boxes = np.asarray(xyxy, dtype=np.float64).reshape(-1, 4)
    width, height = image_size
    cut_x: Mask = (boxes[:, 0] <= BORDER_PX) | (boxes[:, 2] >= width - BORDER_PX)
    cut_y: Mask = (boxes[:, 1] <= BORDER_PX) | (boxes[:, 3] >= height - BORDER_PX)
    return cut_x, cut_y


def clear_of_border(xyxy: npt.ArrayLike, image_size: tuple[int, int]) -> Mask:
    """Per box (N, 4, pixels), whether it stays clear of the image's border (not cut by the frame)."""
    cut_x, cut_y = border_cuts(xyxy, image_size)
    return ~(cut_x | cut_y)


# `Detections.data` key: (N, 4) a second box of the same object where a finer look found it otherwise (NaN where
# not), for a recogniser to read too (`OnnxDetectorConfig.refine_native_px`, `alternative_box`).
ALTERNATIVE_BOX = "alternative_box"


def alternative_box(detections: Detections, index: int) -> tuple[float, float, float, float] | None:
    """Detection `index`'s second box (`ALTERNATIVE_BOX`), or None where it has none."""
    boxes = detections.data.get(ALTERNATIVE_BOX)
    if boxes is None:
        return None
    row = np.asarray(boxes[index], dtype=np.float64)
    if row.shape != (4,) or not np.all(np.isfinite(row)):
        return None
    return (float(row[0]), float(row[1]), float(row[2]), float(row[3]))


def _check(name: str, value: np.ndarray[Any, Any], *, shape: tuple[int | None, ...]) -> None:
    if value.ndim != len(shape) or any(want is not None and got != want for got, want in
                                       zip(value.shape, shape, strict=True)):
        wanted = "(" + ", ".join("N" if s is None else str(s) for s in shape) + ")"
        raise ValueError(f"Detections.{name}: expected shape {wanted}, got {value.shape}")


@dataclass
class Detections:
    """N detections; index with a boolean mask, an index array, a slice or an int (keeps the type)."""

    xyxy: FloatArray
    confidence: FloatArray
    class_id: IntArray
    tracker_id: IntArray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    xy_mm: FloatArray | None = None
    data: dict[str, np.ndarray[Any, Any]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.xyxy = np.asarray(self.xyxy, dtype=np.float32)
        if self.xyxy.size == 0:
            self.xyxy = self.xyxy.reshape(0, 4)
        _check("xyxy", self.xyxy, shape=(None, 4))
        n = len(self.xyxy)
        self.confidence = np.asarray(self.confidence, dtype=np.float32)
        _check("confidence", self.confidence, shape=(n,))
        self.class_id = np.asarray(self.class_id, dtype=np.int64)
        _check("class_id", self.class_id, shape=(n,))
        tracker = np.asarray(self.tracker_id, dtype=np.int64)
        self.tracker_id = np.full(n, -1, dtype=np.int64) if tracker.size == 0 and n > 0 else tracker
        _check("tracker_id", self.tracker_id, shape=(n,))
        if self.xy_mm is not None:
            self.xy_mm = np.asarray(self.xy_mm, dtype=np.float32)
            if n == 0 and self.xy_mm.size == 0:
                self.xy_mm = self.xy_mm.reshape(0, 2)
            _check("xy_mm", self.xy_mm, shape=(n, 2))
        for key, value in self.data.items():
            array = np.asarray(value)
            if array.ndim == 0 or len(array) != n:
                raise ValueError(f"Detections.data[{key!r}]: expected {n} entries, got shape {array.shape}")
            self.data[key] = array

    @classmethod
    def empty(cls) -> Detections:
        return cls(xyxy=np.zeros((0, 4), dtype=np.float32), confidence=np.zeros(0, dtype=np.float32),
                   class_id=np.zeros(0, dtype=np.int64))

    def __len__(self) -> int:
        return len(self.xyxy)

    def __getitem__(self, index: Index) -> Detections:
        if isinstance(index, int):
            index = [index]
        selector: Any = index if isinstance(index, slice) else np.asarray(index)
        if isinstance(selector, np.ndarray) and selector.dtype == np.bool_ and selector.shape != (len(self),):
            raise ValueError(f"Detections mask: expected shape ({len(self)},), got {selector.shape}")
        return Detections(
            xyxy=self.xyxy[selector], confidence=self.confidence[selector], class_id=self.class_id[selector],
            tracker_id=self.tracker_id[selector], xy_mm=None if self.xy_mm is None else self.xy_mm[selector],
            data={key: value[selector] for key, value in self.data.items()},
        )

    @property
    def bottom_centre(self) -> FloatArray:
        """(N, 2) pixel points at the middle of each box's lower edge (where an object meets the felt)."""
        points: FloatArray = np.stack([(self.xyxy[:, 0] + self.xyxy[:, 2]) / 2, self.xyxy[:, 3]], axis=1)
        return points.astype(np.float32)

    @property
    def area(self) -> FloatArray:
        widths = np.clip(self.xyxy[:, 2] - self.xyxy[:, 0], 0, None)
        heights = np.clip(self.xyxy[:, 3] - self.xyxy[:, 1], 0, None)
        result: FloatArray = (widths * heights).astype(np.float32)
        return result

    def with_data(self, **arrays: npt.ArrayLike) -> Detections:
        """A copy with more per-detection arrays in `data`."""
        data = dict(self.data)
        data.update({key: np.asarray(value) for key, value in arrays.items()})
        return Detections(xyxy=self.xyxy, confidence=self.confidence, class_id=self.class_id,
                          tracker_id=self.tracker_id, xy_mm=self.xy_mm, data=data)

    @classmethod
    def merge(cls, parts: Iterable[Detections]) -> Detections:
        """Concatenate; xy_mm and data keys must be present in all parts or in none."""
        items = [p for p in parts if len(p) > 0]
        if not items:
            return cls.empty()
        with_mm = {p.xy_mm is not None for p in items}
        keys = {frozenset(p.data) for p in items}
        if len(with_mm) > 1 or len(keys) > 1:
            raise ValueError(f"Detections.merge: expected the same fields in every part, got xy_mm {with_mm}, "
                             f"data keys {sorted(sorted(k) for k in keys)}")
        return cls(
            xyxy=np.concatenate([p.xyxy for p in items]), confidence=np.concatenate([p.confidence for p in items]),
            class_id=np.concatenate([p.class_id for p in items]),
            tracker_id=np.concatenate([p.tracker_id for p in items]),
            xy_mm=None if items[0].xy_mm is None else np.concatenate([_mm(p) for p in items]),
            data={key: np.concatenate([p.data[key] for p in items]) for key in items[0].data},
        )


def _mm(detections: Detections) -> FloatArray:
    if detections.xy_mm is None:
        raise ValueError("Detections.xy_mm: expected an array, got None")
    return detections.xy_mm


def class_names_of(detections: Detections, names: Mapping[int, str]) -> list[str]:
    return [names.get(int(c), str(int(c))) for c in detections.class_id]
