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
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Protocol, runtime_checkable

import cv2
import numpy as np
import numpy.typing as npt

from floorman.core.chips import ChipSet
from floorman.core.frame_truth import FrameTruth, read_frames
from floorman.core.layout import TableLayout
from floorman.core.table_state import TableState
from floorman.vision.calibration import Calibration
from floorman.vision.detections import Detections
from floorman.vision.detector import Detector
from floorman.vision.fusion import Eye, fuse_states
from floorman.vision.table_state import TableStateBuilder, recognise_card_reader
from floorman.vision.tracking import TableTracker

logger = logging.getLogger(__name__)

Image = npt.NDArray[np.uint8]


class StateBuilder(Protocol):
    """What the analysis stage calls for each frame it analyses."""

    def build(self, frame_bgr: Image, frame_no: int, t: float) -> TableState: ...


@runtime_checkable
class ViewsStateBuilder(StateBuilder, Protocol):
    """A state builder of several cameras (`ViewsSource`): the analysis stage calls `build_views` with every
    camera's image of the moment, the first camera's first."""

    def build_views(self, images: Sequence[Image], frame_no: int, t: float) -> TableState: ...


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


class FusedStateBuilder:
    """Several calibrated cameras' `VisionStateBuilder`s (built without trackers), their states of each moment
    fused in table mm (`vision.fusion.fuse_states`: each stack counted from every camera's view, each card once),
    then tracked in table mm (one ByteTrack over the fused objects, so a track keeps its id whichever camera's
    reading is kept)."""

    def __init__(self, builders: Sequence[VisionStateBuilder], *, camera_id: str,
                 chipset: ChipSet | None = None, track: bool = True) -> None:
        if len(builders) < 2:
            raise ValueError(f"expected two or more cameras' builders, got {len(builders)}")
        self.builders = list(builders)
        self.camera_id = camera_id
        self.chipset = chipset or ChipSet.default()
        cameras = [b.inner.chips.camera for b in self.builders]
        self.eyes: list[Eye] = [(float(c.eye[0]), float(c.eye[1]), float(c.eye[2])) for c in cameras if c is not None]
        if len(self.eyes) != len(self.builders):
            raise ValueError("expected every camera calibrated (a camera model per builder)")
        self.tracker = TableTracker(NAMES) if track else None

    def build(self, frame_bgr: Image, frame_no: int, t: float) -> TableState:
        del frame_bgr
        raise ValueError(f"{self.camera_id}: expected every camera's image of frame {frame_no} ({t:.3f} s): "
                         "build_views, from a ViewsSource")

    def build_views(self, images: Sequence[Image], frame_no: int, t: float) -> TableState:
        if len(images) != len(self.builders):
            raise ValueError(f"expected {len(self.builders)} cameras' images, got {len(images)}")
        states = [builder.build(image, frame_no, t) for builder, image in zip(self.builders, images, strict=True)]
        fused = replace(fuse_states(states, eyes=self.eyes, thickness_mm=self.chipset.thickness_mm), frame=frame_no,
                        t=t, camera_id=self.camera_id)
        return fused if self.tracker is None else tracked(fused, self.tracker)


# The tracker's classes (the detector's, `datasets.scene.DetectorClass`: the edge may not import the simulator).
NAMES = {0: "card_face", 1: "card_back", 2: "chip", 3: "dealer_button", 4: "hand"}


def tracked(state: TableState, tracker: TableTracker) -> TableState:
    """`state` with its objects' track ids from `tracker`, on their table-mm places (`TableTracker.update`)."""
    objects: list[tuple[int, float, tuple[float, float] | None]] = []
    for card in state.cards:
        objects.append((0 if card.face_up else 1, card.confidence, card.position_mm))
    for stack in state.chips:
        objects.append((2, stack.confidence, stack.position_mm))
    for hand in state.hands:
        objects.append((4, hand.confidence, hand.position_mm))
    if state.button is not None:
        objects.append((3, state.button.confidence, state.button.position_mm))
    placed = [o for o in objects if o[2] is not None]
    if len(placed) != len(objects):
        raise ValueError("expected every fused object placed on the table (a calibrated camera's)")
    xy = np.array([o[2] for o in placed], dtype=np.float32).reshape(-1, 2)
    detections = Detections(xyxy=np.zeros((len(placed), 4), dtype=np.float32),
                            confidence=np.array([o[1] for o in placed], dtype=np.float32),
                            class_id=np.array([o[0] for o in placed], dtype=np.int64), xy_mm=xy)
    ids = [int(i) if i >= 0 else None for i in tracker.update(detections).tracker_id.tolist()]
    cards, rest = ids[:len(state.cards)], ids[len(state.cards):]
    chips, rest = rest[:len(state.chips)], rest[len(state.chips):]
    hands, rest = rest[:len(state.hands)], rest[len(state.hands):]
    return replace(state, cards=tuple(replace(c, track_id=i) for c, i in zip(state.cards, cards, strict=True)),
                   chips=tuple(replace(c, track_id=i) for c, i in zip(state.chips, chips, strict=True)),
                   hands=tuple(replace(h, track_id=i) for h, i in zip(state.hands, hands, strict=True)),
                   button=None if state.button is None else replace(state.button, track_id=rest[0]))


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
