"""Scenario spec validation: errors name the file and the field."""

from __future__ import annotations

from pathlib import Path

import pytest

from floorman.core.errors import ConfigError
from floorman.datasets.scenario import bundled_scenario_names, load_scenario, resolve_scenario_path
from floorman.datasets.timeline import compile_timeline

BASE = """\
name: tiny
duration: 12
seats:
  - {seat: 1, stack: {100: 20, 25: 8}}
  - {seat: 3, stack: {100: 20, 500: 2}}
button: 3
timeline:
  - {do: push, seat: 1, chips: {100: 2}, at: 0.5}
"""


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "spec.yaml"
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("old", "new", "field", "message"),
    [
        ("duration: 12", "duration: 12\ncolour: red", "colour", "unknown field"),
        ("seat: 1, chips: {100: 2}, at: 0.5}", "seat: 1, chips: {100: 2}, at: 0.5, speed: 3}",
         "timeline[0].push.speed", "unknown field"),
        ("duration: 12", "duration: 12\nrulebook: wsop", "rulebook", "tda2024"),
        ("{seat: 3, stack: {100: 20, 500: 2}}", "{seat: 1, stack: {100: 20}}", "seats", "once"),
        ("{seat: 3, stack: {100: 20, 500: 2}}", "{seat: 12, stack: {100: 20}}", "seats[1].seat", "less than"),
        ("{seat: 3, stack: {100: 20, 500: 2}}", "{seat: 9, stack: {100: 20}}", "button", "seated"),
        ("{seat: 1, stack: {100: 20, 25: 8}}", "{seat: 1, stack: {100: 20, 250: 8}}", "seats[0].stack", "250"),
        ("{do: push, seat: 1, chips: {100: 2}, at: 0.5}", "{do: push, seat: 1, chips: {200: 2}, at: 0.5}",
         "timeline[0].chips", "200"),
        ("{do: push, seat: 1, chips: {100: 2}, at: 0.5}", "{do: flop, cards: [AS, KD, 1X]}",
         "timeline[0].flop.cards", "1X"),
        ("{do: push, seat: 1, chips: {100: 2}, at: 0.5}", "{do: deal, cards: {1: [AS, ZZ]}}",
         "timeline[0].deal.cards", "ZZ"),
        ("{do: push, seat: 1, chips: {100: 2}, at: 0.5}", "{do: tap, seat: 5}", "timeline[0].seat", "seated"),
        ("{do: push, seat: 1, chips: {100: 2}, at: 0.5}", "{do: jump, seat: 1}", "timeline[0]", "jump"),
    ],
)
def test_spec_errors_name_file_and_field(tmp_path: Path, old: str, new: str, field: str, message: str) -> None:
    assert old in BASE
    path = write(tmp_path, BASE.replace(old, new))
    with pytest.raises(ConfigError) as info:
        load_scenario(path)
    assert info.value.source == str(path)
    assert info.value.field == field
    assert message in str(info.value)


@pytest.mark.parametrize(
    ("timeline", "field", "message"),
    [
        ("  - {do: push, seat: 1, chips: {100: 30}}\n", "timeline[0].chips", "cannot take"),
        ("  - {do: push, seat: 1, amount: 5}\n", "timeline[0].amount", "cannot make 5"),
        ("  - {do: tap, seat: 1, at: 2}\n  - {do: tap, seat: 3, at: 2.5}\n", "timeline[1].at", "before the previous"),
        ("  - {do: tap, seat: 1, at: 11.5}\n", "timeline[0]", "after the scenario's duration"),
        ("  - {do: fold, seat: 1}\n", "timeline[0]", "no cards to fold"),
        ("  - {do: deal, cards: {1: [AS, KD], 3: [AS, QH]}}\n", "timeline[0].cards", "AS is not in the deck"),
        ("  - {do: gather}\n", "timeline[0]", "no bets"),
    ],
)
def test_timeline_errors_name_the_action(tmp_path: Path, timeline: str, field: str, message: str) -> None:
    head = BASE.split("timeline:")[0]
    path = write(tmp_path, head + "timeline:\n" + timeline)
    with pytest.raises(ConfigError) as info:
        compile_timeline(load_scenario(path))
    assert info.value.field == field
    assert str(path) in str(info.value)
    assert message in str(info.value)


def test_both_at_and_after_is_an_error(tmp_path: Path) -> None:
    path = write(tmp_path, BASE.replace("at: 0.5}", "at: 0.5, after: 1}"))
    with pytest.raises(ConfigError, match="either 'at' or 'after'"):
        load_scenario(path)


def test_bundled_names_resolve_and_unknown_names_are_listed(tmp_path: Path) -> None:
    names = bundled_scenario_names()
    assert "clean_hand_01" in names
    assert resolve_scenario_path("clean_hand_01").name == "clean_hand_01.yaml"
    with pytest.raises(ConfigError, match="clean_hand_01"):
        resolve_scenario_path("no_such_scenario")
    with pytest.raises(ConfigError, match="file not found"):
        resolve_scenario_path(str(tmp_path / "missing.yaml"))


def test_layout_path_relative_to_the_spec(tmp_path: Path) -> None:
    from floorman.core.layout import bundled_layout_names

    assert "oval9" in bundled_layout_names()
    path = write(tmp_path, BASE.replace("duration: 12", "duration: 12\nlayout: nowhere.yaml"))
    with pytest.raises(ConfigError) as info:
        load_scenario(path)
    assert info.value.field == "layout"


def test_layout_file_next_to_the_spec_is_used(tmp_path: Path) -> None:
    from importlib import resources

    layout = resources.files("floorman.core").joinpath("data/layouts/oval9.yaml").read_text("utf-8")
    (tmp_path / "mytable.yaml").write_text(layout.replace("name: oval9", "name: mytable"), encoding="utf-8")
    loaded = load_scenario(write(tmp_path, BASE.replace("duration: 12", "duration: 12\nlayout: mytable.yaml")))
    assert loaded.layout.name == "mytable"
