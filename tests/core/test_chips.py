from __future__ import annotations

from pathlib import Path

import pytest

from floorman.core.chips import ChipCount, ChipSet, chips_value, count_chips
from floorman.core.errors import ConfigError
from tests.factories import CHIPSET_YAML


def test_default_chip_set_has_five_colours() -> None:
    chips = ChipSet.default()
    assert chips.values == (25, 100, 500, 1000, 5000)
    assert len({d.colour for d in chips.denominations}) == 5
    assert chips.by_value(100).rgb == (0xC0, 0x20, 0x2A)


def test_load_from_file(tmp_path: Path) -> None:
    path = tmp_path / "club.yaml"
    path.write_text(CHIPSET_YAML)
    chips = ChipSet.load(path)
    assert chips.values == (25, 100)
    assert chips.diameter_mm == 39.0


@pytest.mark.parametrize(
    ("mutation", "field", "message"),
    [
        (("  - {value: 25,", "  - {value: 25, sparkle: 1,"), "denominations[0].sparkle", "unknown field"),
        (('colour: "#ecebe6", ', ""), "denominations[0].colour", "required field is missing"),
        (('"#c0202a"', '"red"'), "denominations[1].colour", "#rrggbb"),
        (("value: 100", "value: 25"), "denominations", "duplicates [25]"),
        (("value: 100", "value: -5"), "denominations[1].value", "greater than 0"),
    ],
)
def test_bad_yaml_names_file_and_field(tmp_path: Path, mutation: tuple[str, str], field: str, message: str) -> None:
    path = tmp_path / "bad.yaml"
    old, new = mutation
    assert old in CHIPSET_YAML
    path.write_text(CHIPSET_YAML.replace(old, new, 1))
    with pytest.raises(ConfigError) as info:
        ChipSet.load(path)
    text = str(info.value)
    assert str(path) in text
    assert f"field '{field}'" in text
    assert message in text


def test_missing_file_is_named(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"nope\.yaml: file not found"):
        ChipSet.load(tmp_path / "nope.yaml")


def test_not_yaml(tmp_path: Path) -> None:
    path = tmp_path / "x.yaml"
    path.write_text("name: [unclosed\n")
    with pytest.raises(ConfigError, match="not valid YAML at line"):
        ChipSet.load(path)


def test_unknown_denomination() -> None:
    with pytest.raises(ValueError, match=r"no denomination 7, expected one of \[25, 100, 500, 1000, 5000\]"):
        ChipSet.default().by_value(7)


def test_counts_and_value() -> None:
    counts = count_chips([100, 25, 100, 500])
    assert counts == (ChipCount(denom=500, count=1), ChipCount(denom=100, count=2), ChipCount(denom=25, count=1))
    assert chips_value(counts) == 725
