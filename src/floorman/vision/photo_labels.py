"""Labels of a person's own photographs, to score what `floorman detect` reads on them (`floorman photos score`).

One JSON object per line (JSON Lines), one line per photograph:

    {"image": "IMG_0001.jpg",
     "cards": [{"box": [812, 455, 1010, 731], "card": "10H"}, {"box": [1102, 470, 1300, 745], "card": null}],
     "card_backs": [[300, 1210, 498, 1488]],
     "chips": {"red": 3, "white": 1}}

- `image`: the photo's path, relative to the labels file's folder (or absolute).
- `cards`: every face-up card, its box (x1, y1, x2, y2 in the photo's pixels, as it is on disk) and its identity
  (`10H`, `QS`, `TH`, `as`...), or null where a person cannot tell it (the box is still scored). Required: `[]` for
  a photo with none.
- `card_backs`: the face-down cards' boxes; left out (or null), the photo's card backs are not scored.
- `chips`: chips counted per colour, by colour word (`floorman detect`'s `colour_name`: white, red, green, blue,
  black, ...); a colour left out counts 0. Left out (or null), the photo's chips are not scored.
- `checked`: false on the drafts `floorman photos draft` writes (what floorman read, for a person to correct); the
  scorer refuses them, since a draft scored against itself proves nothing. Left out: true.

Every error names the file, the line and the field.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from floorman.core.cards import Card
from floorman.core.errors import ConfigError

Box = tuple[float, float, float, float]


def _check_box(box: Box) -> Box:
    x1, y1, x2, y2 = box
    if not all(math.isfinite(v) for v in box):
        raise ValueError(f"expected four finite numbers x1, y1, x2, y2, got {list(box)}")
    if x1 < 0 or y1 < 0 or x2 <= x1 or y2 <= y1:
        raise ValueError(f"expected 0 <= x1 < x2 and 0 <= y1 < y2 (pixels), got {list(box)}")
    return box


class CardLabel(BaseModel):
    """A face-up card: its box and identity (None: a person cannot tell it)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    box: Box = Field(description="x1, y1, x2, y2 in the photo's pixels.")
    card: str | None = Field(description="Rank then suit, e.g. 10H, QS, TH; null when it cannot be told.")

    @field_validator("box")
    @classmethod
    def _box(cls, value: Box) -> Box:
        return _check_box(value)

    @field_validator("card")
    @classmethod
    def _card(cls, value: str | None) -> str | None:
        return None if value is None else str(Card.parse(value))


class PhotoLabel(BaseModel):
    """One photograph's labels (see the module's docstring)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    image: str = Field(min_length=1, description="The photo, relative to the labels file's folder or absolute.")
    cards: tuple[CardLabel, ...] = Field(description="Every face-up card.")
    card_backs: tuple[Box, ...] | None = Field(default=None, description="Face-down cards' boxes; null: not labelled.")
    chips: dict[str, int] | None = Field(default=None, description="Chips per colour word; null: not labelled.")
    checked: bool = Field(default=True, description="False on a draft no person has corrected yet.")

    @field_validator("card_backs")
    @classmethod
    def _backs(cls, value: tuple[Box, ...] | None) -> tuple[Box, ...] | None:
        return None if value is None else tuple(_check_box(box) for box in value)

    @field_validator("chips")
    @classmethod
    def _chips(cls, value: dict[str, int] | None) -> dict[str, int] | None:
        if value is None:
            return None
        for word, count in value.items():
            if count < 0:
                raise ValueError(f"expected a count of 0 or more for {word!r}, got {count}")
        return {word.strip().lower(): count for word, count in value.items()}


class LabelledPhoto(BaseModel):
    """A label with where it came from: the photo's resolved path and the labels file's line."""

    model_config = ConfigDict(frozen=True)

    label: PhotoLabel
    path: Path
    source: str  # "labels.jsonl:3", for error messages


def load_labels(path: Path) -> list[LabelledPhoto]:
    """Every line of a labels file, validated; a photo labelled twice is refused, naming both lines."""
    if not path.is_file():
        raise ConfigError("no such labels file", source=str(path))
    photos: list[LabelledPhoto] = []
    seen: dict[Path, str] = {}
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        where = f"{path}:{number}"
        try:
            label = PhotoLabel.model_validate(json.loads(line))
        except json.JSONDecodeError as exc:
            raise ConfigError(f"not a JSON object: {exc.msg} at column {exc.colno}", source=where) from None
        except ValidationError as exc:
            first = exc.errors()[0]
            field = ".".join(str(part) for part in first["loc"]) or None
            raise ConfigError(f"{first['msg']}, got {first.get('input')!r}", source=where, field=field) from None
        image = Path(label.image)
        resolved = (image if image.is_absolute() else path.parent / image).resolve()
        if resolved in seen:
            raise ConfigError(f"{label.image} is labelled twice (also on {seen[resolved]})", source=where,
                              field="image")
        seen[resolved] = where
        photos.append(LabelledPhoto(label=label, path=resolved, source=where))
    if not photos:
        raise ConfigError("no labelled photo in the file", source=str(path))
    return photos


def write_labels(path: Path, labels: Iterable[PhotoLabel]) -> int:
    """Write `labels` as JSON Lines to a new file (an existing one is refused: it may hold a person's work)."""
    if path.exists():
        raise ConfigError("already exists; labels are never overwritten (choose another --out or move it away)",
                          source=str(path))
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [label.model_dump_json(exclude_none=False) for label in labels]
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return len(lines)
