"""State builders: one frame in, the `TableState` of what the camera saw out.

`StateBuilder` is the interface the edge's analysis stage calls; `floorman.vision` implements the full one
(detector, card and chip recognisers, tracking). Here:
- `DetectorStateBuilder` wraps the ONNX detector alone: boxes mapped to table mm with the calibration
  homography and to zones with the layout, with no card or chip identity;
- `TruthStateBuilder` replays a simulator's `frames.jsonl` by frame number (what a perfect perception would
  build), to drive the derivation from ground truth;
The detector may be `floorman.edge.gate.ChangeGatedDetector`, which runs the model only where the frame
changed.
"""

from __future__ import annotations

import logging
import time
from pathlib import Path
from typing import Protocol

import numpy as np
import numpy.typing as npt
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from floorman.core.errors import ConfigError
from floorman.core.layout import TableLayout
from floorman.core.table_state import SeenButton, SeenCard, SeenChips, SeenHand, TableState
from floorman.vision.calibration import Calibration
from floorman.vision.detector import Detector

logger = logging.getLogger(__name__)

Image = npt.NDArray[np.uint8]


class StateBuilder(Protocol):
    """What the analysis stage calls for each frame it analyses."""

    def build(self, frame_bgr: Image, frame_no: int, t: float) -> TableState: ...


class DetectorStateBuilder:
    """Detector boxes -> table mm (calibration) -> zones (layout); no identities, no tracks."""

    def __init__(self, detector: Detector, *, calibration: Calibration, layout: TableLayout,
                 camera_id: str) -> None:
        self.detector = detector
        self.calibration = calibration
        self.layout = layout
        self.camera_id = camera_id
        self.inferences = 0

    def build(self, frame_bgr: Image, frame_no: int, t: float) -> TableState:
        started = time.perf_counter()
        found = self.detector.detect(frame_bgr)
        self.inferences += 1
        names = [self.detector.names.get(int(c), str(int(c))) for c in found.class_id]
        height, width = frame_bgr.shape[:2]
        scale_x = self.calibration.image_size[0] / width
        scale_y = self.calibration.image_size[1] / height
        centres = np.stack([(found.xyxy[:, 0] + found.xyxy[:, 2]) / 2 * scale_x,
                            (found.xyxy[:, 1] + found.xyxy[:, 3]) / 2 * scale_y], axis=1).astype(np.float64)
        table = self.calibration.to_table(centres) if len(found) else np.zeros((0, 2))
        zones = self.layout.zone_names_at(table) if len(found) else []
        cards: list[SeenCard] = []
        chips: list[SeenChips] = []
        hands: list[SeenHand] = []
        button: SeenButton | None = None
        for i, name in enumerate(names):
            box = tuple(float(v) for v in found.xyxy[i])
            box4 = (box[0], box[1], box[2], box[3])
            conf = float(found.confidence[i])
            point = (round(float(table[i, 0]), 1), round(float(table[i, 1]), 1))
            if name in ("card_face", "card_back"):
                cards.append(SeenCard(face_up=name == "card_face", box=box4, confidence=conf, position_mm=point,
                                      zone=zones[i]))
            elif name == "chip":
                chips.append(SeenChips(box=box4, confidence=conf, position_mm=point, zone=zones[i]))
            elif name == "hand":
                hands.append(SeenHand(box=box4, confidence=conf, position_mm=point, zone=zones[i]))
            elif name == "dealer_button" and (button is None or conf > button.confidence):
                button = SeenButton(box=box4, confidence=conf, position_mm=point)
        return TableState(frame=frame_no, t=t, camera_id=self.camera_id, cards=tuple(cards), chips=tuple(chips),
                          hands=tuple(hands), button=button, size=(width, height),
                          extra={"detect_ms": (time.perf_counter() - started) * 1000.0})


class TruthObject(BaseModel):
    """One object of a simulator frames.jsonl line (`floorman.datasets.truth.ObjectRecord`; the edge may not
    import datasets, so the line is read here)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: int
    cls: str
    box: tuple[float, float, float, float]
    visible_fraction: float = Field(ge=0, le=1)
    position_mm: tuple[float, float]
    zone: str | None = None
    card: str | None = None
    face_up: bool | None = None
    chips: tuple[int, ...] | None = None
    count: int | None = None


class TruthFrame(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    frame: int = Field(ge=0)
    t: float = Field(ge=0)
    objects: tuple[TruthObject, ...]


def truth_state(frame: TruthFrame, *, frame_no: int, t: float, camera_id: str) -> TableState:
    """The `TableState` a perfect perception builds from a truth frame (as `FrameTruth.table_state`)."""
    cards: list[SeenCard] = []
    chips: list[SeenChips] = []
    hands: list[SeenHand] = []
    button: SeenButton | None = None
    for o in frame.objects:
        if o.cls in ("card_face", "card_back"):
            up = bool(o.face_up) if o.face_up is not None else o.cls == "card_face"
            cards.append(SeenCard(face_up=up, box=o.box, confidence=1.0, position_mm=o.position_mm, zone=o.zone,
                                  identity=o.card if up else None, identity_confidence=1.0 if up and o.card else 0.0,
                                  count=o.count or 1, track_id=o.id))
        elif o.cls == "chip":
            chips.append(SeenChips(box=o.box, confidence=1.0, position_mm=o.position_mm, zone=o.zone,
                                   denominations=o.chips or (), denomination_confidence=1.0,
                                   visible_fraction=o.visible_fraction, track_id=o.id))
        elif o.cls == "hand":
            hands.append(SeenHand(box=o.box, confidence=1.0, position_mm=o.position_mm, zone=o.zone, track_id=o.id))
        elif o.cls == "dealer_button":
            button = SeenButton(box=o.box, confidence=1.0, position_mm=o.position_mm, track_id=o.id)
    return TableState(frame=frame_no, t=t, camera_id=camera_id, cards=tuple(cards), chips=tuple(chips),
                      hands=tuple(hands), button=button)


def read_truth_frames(path: Path) -> list[TruthFrame]:
    """Every line of a simulator frames.jsonl; ConfigError names the file and line that is wrong."""
    if not path.is_file():
        raise ConfigError(f"no such frames file: {path}", field="--truth")
    frames: list[TruthFrame] = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            frames.append(TruthFrame.model_validate_json(line))
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"]) or "<root>"
            raise ConfigError(f"line {number}: {first['msg']}", source=str(path), field=where) from None
    if not frames:
        raise ConfigError("expected at least one frame, got an empty file", source=str(path))
    return frames


class TruthStateBuilder:
    """The simulator's per-frame truth, looked up by frame number (a looping source wraps around)."""

    def __init__(self, frames: list[TruthFrame], *, camera_id: str) -> None:
        if not frames:
            raise ValueError("expected at least one truth frame, got none")
        self.frames = {f.frame: f for f in frames}
        self.count = max(self.frames) + 1
        self.camera_id = camera_id

    @classmethod
    def load(cls, path: Path, *, camera_id: str) -> TruthStateBuilder:
        return cls(read_truth_frames(path), camera_id=camera_id)

    def build(self, frame_bgr: Image, frame_no: int, t: float) -> TableState:
        del frame_bgr
        truth = self.frames.get(frame_no % self.count)
        if truth is None:
            return TableState(frame=frame_no, t=t, camera_id=self.camera_id)
        return truth_state(truth, frame_no=frame_no, t=t, camera_id=self.camera_id)
