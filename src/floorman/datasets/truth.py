"""Scenario ground truth on disk: `truth.jsonl` (events, then expected alerts) and `frames.jsonl` (objects).

`truth.jsonl` holds one JSON object per line: first every event in `seq` order (seq 0, 1, 2, ...; `t` never
decreases), then the expected alerts ordered by `t_start`. Each line decodes with
`floorman.core.alerts.TRUTH_ADAPTER`. `frames.jsonl` holds one line per frame: the frame number, its time and
the rendered objects (`FrameTruth`).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from pathlib import Path
from types import TracebackType
from typing import IO

from pydantic import BaseModel, ConfigDict, Field

from floorman.core.alerts import TRUTH_ADAPTER, ExpectedAlert, TruthRecord
from floorman.core.errors import SchemaError
from floorman.core.events import EventBase
from floorman.core.table_state import SeenButton, SeenCard, SeenChips, SeenHand, TableState
from floorman.datasets.render import ObjectTruth

TRUTH_FILE = "truth.jsonl"
FRAMES_FILE = "frames.jsonl"


def write_truth(path: Path, *, events: Sequence[EventBase], expected: Sequence[ExpectedAlert]) -> int:
    """Write events (seq order) then expected alerts (by t_start); returns the number of lines."""
    lines = [e.model_dump_json() for e in sorted(events, key=lambda e: e.seq)]
    lines += [a.model_dump_json() for a in sorted(expected, key=lambda a: (a.t_start, a.rule.value))]
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return len(lines)


def read_truth(path: Path) -> list[TruthRecord]:
    """Decode a truth.jsonl; SchemaError names the file and line that is wrong."""
    records: list[TruthRecord] = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            records.append(TRUTH_ADAPTER.validate_json(line))
        except ValueError as exc:
            raise SchemaError(f"{path}: line {number}: {exc}") from None
    return records


class ObjectRecord(BaseModel):
    """One rendered object of a frame."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: int = Field(description="Object id (the value in the instance mask).")
    cls: str = Field(description="Detector class: card_face, card_back, chip, dealer_button, hand.")
    box: tuple[float, float, float, float] = Field(description="Box of the visible pixels, xyxy.")
    visible_fraction: float = Field(ge=0, le=1, description="Visible share of the projected object.")
    position_mm: tuple[float, float] = Field(description="Position on the table, mm.")
    zone: str | None = Field(default=None, description="Zone under the object.")
    card: str | None = Field(default=None, description="Card identity, for cards.")
    face_up: bool | None = Field(default=None, description="Whether a card is face up.")
    chips: tuple[int, ...] | None = Field(default=None, description="Chip denominations bottom to top, for stacks.")
    count: int | None = Field(default=None, description="Chips in a stack or cards in a deck stub.")

    @classmethod
    def from_truth(cls, obj: ObjectTruth) -> ObjectRecord:
        x1, y1, x2, y2 = obj.box
        return cls(id=obj.id, cls=obj.cls.label, box=(round(x1, 1), round(y1, 1), round(x2, 1), round(y2, 1)),
                   visible_fraction=round(min(1.0, max(0.0, obj.visible_fraction)), 4),
                   position_mm=(round(obj.position_mm[0], 1), round(obj.position_mm[1], 1)), zone=obj.zone,
                   card=obj.card, face_up=obj.face_up, chips=obj.chips, count=obj.count)


class FrameTruth(BaseModel):
    """The objects of one rendered frame."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    frame: int = Field(ge=0, description="Frame number.")
    t: float = Field(ge=0, description="Time of the frame, seconds.")
    objects: tuple[ObjectRecord, ...] = Field(description="Rendered objects with a visible pixel.")

    def table_state(self, *, camera_id: str = "sim") -> TableState:
        """The `TableState` a perfect perception would build from this frame (confidences 1)."""
        cards: list[SeenCard] = []
        chips: list[SeenChips] = []
        hands: list[SeenHand] = []
        button: SeenButton | None = None
        for o in self.objects:
            if o.cls in ("card_face", "card_back"):
                face_up = bool(o.face_up) if o.face_up is not None else o.cls == "card_face"
                cards.append(SeenCard(face_up=face_up, box=o.box, confidence=1.0, position_mm=o.position_mm,
                                      zone=o.zone, identity=o.card if face_up else None,
                                      identity_confidence=1.0 if face_up and o.card else 0.0,
                                      count=o.count or 1, track_id=o.id))
            elif o.cls == "chip":
                chips.append(SeenChips(box=o.box, confidence=1.0, position_mm=o.position_mm, zone=o.zone,
                                       denominations=o.chips or (), denomination_confidence=1.0,
                                       count_confidence=1.0,
                                       visible_fraction=o.visible_fraction, track_id=o.id))
            elif o.cls == "hand":
                hands.append(SeenHand(box=o.box, confidence=1.0, position_mm=o.position_mm, zone=o.zone,
                                      track_id=o.id))
            elif o.cls == "dealer_button":
                button = SeenButton(box=o.box, confidence=1.0, position_mm=o.position_mm, track_id=o.id)
        return TableState(frame=self.frame, t=self.t, camera_id=camera_id, cards=tuple(cards), chips=tuple(chips),
                          hands=tuple(hands), button=button)


def visible_objects(objects: Iterable[ObjectTruth]) -> list[ObjectTruth]:
    """The objects with at least one visible pixel (the renderer also reports fully hidden ones)."""
    return [o for o in objects if o.box[2] > o.box[0] and o.box[3] > o.box[1]]


class FramesWriter:
    """Appends one FrameTruth per line to frames.jsonl."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._file: IO[str] = path.open("w", encoding="utf-8")
        self.count = 0

    def write(self, *, frame: int, t: float, objects: Iterable[ObjectTruth]) -> None:
        records = tuple(ObjectRecord.from_truth(o) for o in visible_objects(objects))
        self._file.write(FrameTruth(frame=frame, t=round(t, 4), objects=records).model_dump_json() + "\n")
        self.count += 1

    def close(self) -> None:
        self._file.close()

    def __enter__(self) -> FramesWriter:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()


def read_frames(path: Path) -> list[FrameTruth]:
    return [FrameTruth.model_validate(json.loads(line)) for line in path.read_text("utf-8").splitlines() if line]
