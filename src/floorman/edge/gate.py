"""Run the detector only where the picture changed (Frigate's approach): a static table needs no inference.

`ChangeGatedDetector` has the detector's verb (`detect(frame) -> Detections`). It compares a small grey copy of
each frame with the one it last analysed: when too few pixels changed it answers the last detections again; when
the change is confined to a region, it runs the detector on that region only (the fine pyramid level, in the
model's square windows) and keeps the last detections elsewhere; when much of the frame changed, or every
`refresh_frames`, it runs the whole pyramid.
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np
import numpy.typing as npt

from floorman.core.geometry import tile_origins
from floorman.vision.detections import Detections
from floorman.vision.detector import EDGE_PX, OnnxDetector, nms

Image = npt.NDArray[np.uint8]
SMALL_SIDE = 160


@dataclass
class GateStats:
    frames: int = 0
    skipped: int = 0
    regions: int = 0
    full: int = 0


class ChangeGatedDetector:
    """Detections of the changed region only, the last ones elsewhere (see the module docstring)."""

    def __init__(self, inner: OnnxDetector, *, threshold: int = 12, min_fraction: float = 0.0005,
                 margin_px: int = 48, full_fraction: float = 0.35, refresh_frames: int = 150) -> None:
        if not 0 < threshold < 256 or not 0 <= min_fraction < 1 or not 0 < full_fraction <= 1 or refresh_frames < 1:
            raise ValueError("expected 0 < threshold < 256, 0 <= min_fraction < 1, 0 < full_fraction <= 1 and "
                             f"refresh_frames >= 1, got {threshold}, {min_fraction}, {full_fraction}, {refresh_frames}")
        self.inner = inner
        self.names = inner.names
        self.threshold = threshold
        self.min_fraction = min_fraction
        self.margin_px = margin_px
        self.full_fraction = full_fraction
        self.refresh_frames = refresh_frames
        self.stats = GateStats()
        self._reference: npt.NDArray[np.int16] | None = None
        self._last = Detections.empty()
        self._since_full = 0

    def _small(self, frame: Image) -> npt.NDArray[np.int16]:
        height, width = frame.shape[:2]
        size = (SMALL_SIDE, max(1, round(SMALL_SIDE * height / width)))
        grey = cv2.cvtColor(cv2.resize(frame, size, interpolation=cv2.INTER_AREA), cv2.COLOR_BGR2GRAY)
        return np.asarray(grey, dtype=np.int16)

    def detect(self, frame: Image) -> Detections:
        self.stats.frames += 1
        small = self._small(frame)
        reference = self._reference
        self._since_full += 1
        if reference is None or reference.shape != small.shape or self._since_full >= self.refresh_frames:
            return self._full(frame, small)
        changed = np.abs(small - reference) > self.threshold
        if changed.mean() < self.min_fraction:
            self.stats.skipped += 1
            return self._last
        height, width = frame.shape[:2]
        ys, xs = np.nonzero(changed)
        scale = width / small.shape[1]
        x0 = max(0, int(xs.min() * scale) - self.margin_px)
        y0 = max(0, int(ys.min() * scale) - self.margin_px)
        x1 = min(width, int((xs.max() + 1) * scale) + self.margin_px)
        y1 = min(height, int((ys.max() + 1) * scale) + self.margin_px)
        last = self._last
        x0, y0, x1, y1 = _grown((x0, y0, x1, y1), last.xyxy, width=width, height=height)
        if (x1 - x0) * (y1 - y0) > self.full_fraction * width * height:
            return self._full(frame, small)
        self.stats.regions += 1
        found = self._region(frame, (x0, y0, x1, y1))
        centres = (last.xyxy[:, :2] + last.xyxy[:, 2:]) / 2
        outside = ~((centres[:, 0] >= x0) & (centres[:, 0] < x1) & (centres[:, 1] >= y0) & (centres[:, 1] < y1))
        self._last = Detections.merge([last[outside], found])
        self._reference = small
        return self._last

    def _full(self, frame: Image, small: npt.NDArray[np.int16]) -> Detections:
        self.stats.full += 1
        self._since_full = 0
        self._reference = small
        self._last = self.inner.detect(frame)
        return self._last

    def _region(self, frame: Image, box: tuple[int, int, int, int]) -> Detections:
        """The fine pyramid level's detections inside `box` (frame pixels), in the model's square windows, boxes of
        the detector's `refine_classes` found again finer (`OnnxDetector.refine`)."""
        x0, y0, x1, y1 = box
        height, width = frame.shape[:2]
        scale = max(self.inner.levels) / max(width, height)
        tile = max(1, int(self.inner.imgsz / scale))
        overlap = self.inner.config.overlap
        parts: list[Detections] = []
        for ty in tile_origins(y1 - y0, tile=tile, overlap=overlap):
            for tx in tile_origins(x1 - x0, tile=tile, overlap=overlap):
                left, top = x0 + tx, y0 + ty
                window = frame[top:min(top + tile, y1), left:min(left + tile, x1)]
                size = (max(1, round(window.shape[1] * scale)), max(1, round(window.shape[0] * scale)))
                resized = np.asarray(cv2.resize(window, size, interpolation=cv2.INTER_AREA), dtype=np.uint8)
                found = nms(self.inner.infer(resized), iou=self.inner.config.iou)
                cut = _cut(found.xyxy, size=size, inner_edges=(left > x0, top > y0, left + tile < x1, top + tile < y1))
                found.xyxy = found.xyxy / np.float32(scale) + np.array([left, top, left, top], dtype=np.float32)
                parts.append(found.with_data(group=np.full(len(found), len(parts), dtype=np.int64), cut=cut))
        merged = Detections.merge(parts)
        if len(parts) > 1 and len(merged):
            merged = nms(merged, iou=self.inner.config.iou, containment=self.inner.config.merge_containment,
                         group=merged.data["group"], cut=merged.data["cut"])
        return self.inner.refine(frame, Detections(xyxy=merged.xyxy, confidence=merged.confidence,
                                                   class_id=merged.class_id))


def _grown(box: tuple[int, int, int, int], known: npt.NDArray[np.float32], *, width: int,
           height: int) -> tuple[int, int, int, int]:
    """The region grown to hold every known box that overlaps it (a few rounds: a box taken in may overlap
    another), so that the region's border cuts no object seen before: a card half inside the region would come
    back as a strip beside its whole box kept from the last frame."""
    x0, y0, x1, y1 = box
    for _ in range(4):
        hit = (known[:, 0] < x1) & (known[:, 2] > x0) & (known[:, 1] < y1) & (known[:, 3] > y0)
        if not hit.any():
            break
        grown = (max(0, min(x0, int(np.floor(known[hit, 0].min())))),
                 max(0, min(y0, int(np.floor(known[hit, 1].min())))),
                 min(width, max(x1, int(np.ceil(known[hit, 2].max())))),
                 min(height, max(y1, int(np.ceil(known[hit, 3].max())))))
        if grown == (x0, y0, x1, y1):
            break
        x0, y0, x1, y1 = grown
    return x0, y0, x1, y1


def _cut(box: npt.NDArray[np.float32], *, size: tuple[int, int],
         inner_edges: tuple[bool, bool, bool, bool]) -> npt.NDArray[np.bool_]:
    """Which of a window's boxes touch one of its edges inside the region (left, top, right, bottom): a piece,
    merged into the neighbouring window's whole box when one holds it (`nms` with containment, as the pyramid)."""
    left, top, right, bottom = inner_edges
    return np.asarray(((box[:, 0] <= EDGE_PX) & left) | ((box[:, 1] <= EDGE_PX) & top)
                      | ((box[:, 2] >= size[0] - EDGE_PX) & right) | ((box[:, 3] >= size[1] - EDGE_PX) & bottom))
