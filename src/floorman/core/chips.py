"""A club's chip set: denominations, colours and edge patterns (YAML), and chip counts (`ChipCount`)."""

from __future__ import annotations

import re
from collections.abc import Iterable
from importlib import resources
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from floorman.core.config import FieldError, model_from_yaml_file, model_from_yaml_text

_HEX = re.compile(r"^#[0-9a-fA-F]{6}$")


def parse_hex_colour(value: str) -> tuple[int, int, int]:
    """``"#rrggbb"`` to an (r, g, b) tuple of 0..255 ints."""
    if not _HEX.match(value):
        raise ValueError(f"expected a colour as '#rrggbb', got {value!r}")
    return int(value[1:3], 16), int(value[3:5], 16), int(value[5:7], 16)


class ChipDenomination(BaseModel):
    """One denomination of the club's chip set."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    value: int = Field(gt=0, description="Face value of the chip in tournament units.")
    name: str = Field(default="", description="Name shown in the UI (defaults to the value).")
    colour: str = Field(description="Main body colour, '#rrggbb'.")
    edge_colour: str = Field(description="Colour of the edge spots (inserts), '#rrggbb'.")
    edge_spots: int = Field(default=6, ge=0, le=16, description="Number of edge spots around the rim.")
    inlay_colour: str | None = Field(
        default=None, description="Colour of the central inlay (label), '#rrggbb'; defaults to a light tint."
    )

    @field_validator("colour", "edge_colour", "inlay_colour")
    @classmethod
    def _check_colour(cls, value: str | None) -> str | None:
        if value is not None:
            parse_hex_colour(value)
        return value

    @property
    def label(self) -> str:
        return self.name or str(self.value)

    @property
    def rgb(self) -> tuple[int, int, int]:
        return parse_hex_colour(self.colour)

    @property
    def edge_rgb(self) -> tuple[int, int, int]:
        return parse_hex_colour(self.edge_colour)

    @property
    def inlay_rgb(self) -> tuple[int, int, int]:
        if self.inlay_colour is not None:
            return parse_hex_colour(self.inlay_colour)
        r, g, b = self.rgb
        return (r + 2 * 235) // 3, (g + 2 * 235) // 3, (b + 2 * 225) // 3


class ChipSet(BaseModel):
    """The chips a club plays with. Chip sizes follow reference/physical.md (39 mm x 3.4 mm)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(description="Name of the chip set.")
    diameter_mm: float = Field(default=39.0, gt=20, lt=60, description="Chip diameter in millimetres.")
    thickness_mm: float = Field(default=3.4, gt=1, lt=8, description="Chip thickness in millimetres.")
    denominations: tuple[ChipDenomination, ...] = Field(
        min_length=1, description="The denominations, each with a distinct value and colour."
    )

    @model_validator(mode="after")
    def _check_distinct(self) -> ChipSet:
        values = [d.value for d in self.denominations]
        duplicates = sorted({v for v in values if values.count(v) > 1})
        if duplicates:
            raise FieldError("denominations", f"each value must appear once, got duplicates {duplicates}")
        colours = [d.colour.lower() for d in self.denominations]
        same = sorted({c for c in colours if colours.count(c) > 1})
        if same:
            raise FieldError("denominations", f"each colour must be distinct, got duplicates {same}")
        return self

    def by_value(self, value: int) -> ChipDenomination:
        for denomination in self.denominations:
            if denomination.value == value:
                return denomination
        known = [d.value for d in self.denominations]
        raise ValueError(f"chip set {self.name!r}: no denomination {value}, expected one of {known}")

    @property
    def values(self) -> tuple[int, ...]:
        return tuple(sorted(d.value for d in self.denominations))

    @classmethod
    def from_yaml(cls, text: str, *, source: str = "<chip set>") -> ChipSet:
        return model_from_yaml_text(cls, text, source=source)

    @classmethod
    def load(cls, path: str | Path) -> ChipSet:
        return model_from_yaml_file(cls, path)

    @classmethod
    def default(cls) -> ChipSet:
        """The shipped five-colour set (white 25, red 100, green 500, black 1000, blue 5000)."""
        text = resources.files("floorman.core").joinpath("data/chipset_default.yaml").read_text("utf-8")
        return cls.from_yaml(text, source="floorman/core/data/chipset_default.yaml")


class ChipCount(BaseModel):
    """`count` chips of denomination `denom`."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    denom: int = Field(gt=0, description="Chip value.")
    count: int = Field(ge=1, description="Number of chips of that value.")


def chips_value(chips: Iterable[ChipCount]) -> int:
    """Total value of a list of chip counts."""
    return sum(c.denom * c.count for c in chips)


def count_chips(values: Iterable[int]) -> tuple[ChipCount, ...]:
    """Group chip values into counts, highest denomination first."""
    tally: dict[int, int] = {}
    for value in values:
        tally[value] = tally.get(value, 0) + 1
    return tuple(ChipCount(denom=v, count=n) for v, n in sorted(tally.items(), reverse=True))
