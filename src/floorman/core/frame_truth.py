"""The simulator's per-frame ground truth (`frames.jsonl`): what each rendered frame shows, object by object.

Written by `floorman.datasets` (one `FrameTruth` per line), read back by the edge (to drive its event derivation
from a perfect perception) and by the evaluation harness. `FrameTruth.table_state()` is the `TableState` a
perfect perception would build from the frame.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from floorman.core.errors import ConfigError
from floorman.core.jsonl import JsonLineError, read_jsonl
from floorman.core.table_state import SeenButton, SeenCard, SeenChips, SeenHand, TableState

FRAMES_FILE = "frames.jsonl"


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


def read_frames(path: Path, *, field: str | None = None) -> list[FrameTruth]:
    """Every line of a frames.jsonl; ConfigError names the file, the line and the field that is wrong
    (`field` names the flag or setting the path came from when the file is missing or empty)."""
    if not path.is_file():
        raise ConfigError(f"no such frames file: {path}", field=field)
    try:
        frames = read_jsonl(path, FrameTruth.model_validate_json)
    except JsonLineError as exc:
        raise ConfigError(f"line {exc.line}: {exc.message}", source=str(path), field=exc.field) from None
    if not frames:
        raise ConfigError("expected at least one frame, got an empty file", source=str(path), field=field)
    return frames
