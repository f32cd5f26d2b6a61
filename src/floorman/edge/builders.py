"""State builders: one frame in, the `TableState` of what the camera saw out.

`StateBuilder` is the interface the edge's analysis stage calls; `floorman.vision` implements the full one
(detector, card and chip recognisers, tracking). Here:
- `VisionStateBuilder` runs `floorman.vision.table_state.TableStateBuilder` (detector, card and chip
  recognisers, ByteTrack) on frames at the calibration's size;
- `TruthStateBuilder` replays a simulator's `frames.jsonl` by frame number (what a perfect perception would
  build), to drive the derivation from ground truth;
The detector may be `floorman.edge.gate.ChangeGatedDetector`, which runs the model only where the frame
changed.
"""

from __future__ import annotations

import logging
from dataclasses import replace
from pathlib import Path
from typing import Protocol

import cv2
import numpy as np
import numpy.typing as npt

from floorman.core.chips import ChipSet
from floorman.core.frame_truth import FrameTruth, read_frames
from floorman.core.layout import TableLayout
from floorman.core.table_state import TableState
from floorman.vision.calibration import Calibration
from floorman.vision.detector import Detector
from floorman.vision.table_state import TableStateBuilder, recognise_card_reader
from floorman.vision.tracking import TableTracker

logger = logging.getLogger(__name__)

Image = npt.NDArray[np.uint8]


class StateBuilder(Protocol):
    """What the analysis stage calls for each frame it analyses."""

    def build(self, frame_bgr: Image, frame_no: int, t: float) -> TableState: ...


class VisionStateBuilder:
    """`floorman.vision`'s `TableStateBuilder` (detector, card and chip recognisers, tracker) on frames at the
    calibration's size: a frame of another size is resized to it first, so boxes stay in calibrated pixels."""

    def __init__(self, detector: Detector, *, calibration: Calibration, layout: TableLayout, camera_id: str,
                 chipset: ChipSet | None = None, camera_height_mm: float | None = None,
                 read_cards: bool = True, track: bool = True) -> None:
        self.size = calibration.image_size
        self.inner = TableStateBuilder(detector, layout, calibration, chipset or ChipSet.default(),
                                       recognise_card_reader(pixels_to_mm=calibration.pixels_to_mm)
                                       if read_cards else None,
                                       TableTracker(detector.names) if track else None, camera_id=camera_id,
                                       camera_height_mm=camera_height_mm)

    def build(self, frame_bgr: Image, frame_no: int, t: float) -> TableState:
        height, width = frame_bgr.shape[:2]
        if (width, height) != self.size:
            shrink = width > self.size[0]
            frame_bgr = np.ascontiguousarray(cv2.resize(frame_bgr, self.size, interpolation=cv2.INTER_AREA if shrink
                                                        else cv2.INTER_LINEAR))
        return self.inner.build(frame_bgr, frame_no, t)


class TruthStateBuilder:
    """The simulator's per-frame truth, looked up by frame number (a looping source wraps around)."""

    def __init__(self, frames: list[FrameTruth], *, camera_id: str) -> None:
        if not frames:
            raise ValueError("expected at least one truth frame, got none")
        self.frames = {f.frame: f for f in frames}
        self.count = max(self.frames) + 1
        self.camera_id = camera_id

    @classmethod
    def load(cls, path: Path, *, camera_id: str) -> TruthStateBuilder:
        return cls(read_frames(path, field="--truth"), camera_id=camera_id)

    def build(self, frame_bgr: Image, frame_no: int, t: float) -> TableState:
        del frame_bgr
        truth = self.frames.get(frame_no % self.count)
        if truth is None:
            return TableState(frame=frame_no, t=t, camera_id=self.camera_id)
        return replace(truth.table_state(camera_id=self.camera_id), frame=frame_no, t=t)
