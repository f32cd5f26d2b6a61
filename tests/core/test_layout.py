from __future__ import annotations

from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml

from floorman.core.errors import ConfigError
from floorman.core.geometry import polygon_centroid
from floorman.core.layout import TableLayout, ZoneKind, bundled_layout_names
from floorman.core.layout_gen import racetrack_layout_data
from tests.factories import layout_data, layout_yaml


def test_default_layout() -> None:
    layout = TableLayout.default()
    assert layout.name == "oval9"
    assert layout.seat_numbers == tuple(range(1, 10))
    assert len(layout.all_zones) == 9 * 3 + 5
    assert "oval9" in bundled_layout_names()


def test_shipped_yaml_is_the_generator_output() -> None:
    text = resources.files("floorman.core").joinpath("data/layouts/oval9.yaml").read_text("utf-8")
    assert yaml.safe_load(text) == racetrack_layout_data()


def test_every_zone_finds_itself_at_its_centroid() -> None:
    layout = TableLayout.default()
    for zone in layout.all_zones:
        x, y = polygon_centroid(zone.points)
        assert layout.zone_name_at(x, y) == zone.name


def test_seats_run_clockwise_from_the_dealers_left() -> None:
    layout = TableLayout.default()
    dealer_x, dealer_y = layout.dealer_position
    assert dealer_y < 0 and abs(dealer_x) < 1
    angles = [np.arctan2(layout.seat(n).position[1], layout.seat(n).position[0]) for n in layout.seat_numbers]
    # Clockwise seen from above = decreasing angle, starting just left (-x) of the dealer at the bottom.
    assert layout.seat(1).position[0] < 0 and layout.seat(1).position[1] < 0
    unwrapped = np.unwrap(angles)
    assert np.all(np.diff(unwrapped) < 0)


def test_rail_edge_and_off_table() -> None:
    layout = TableLayout.default()
    assert layout.zone_name_at(0.0, 598.0) == "rail_edge"
    assert layout.in_rail_edge(np.array([[0.0, 700.0]]))[0]  # off the table counts as over the rail
    assert not layout.on_table(np.array([[0.0, 700.0]]))[0]
    assert layout.zone_name_at(0.0, 0.0) is None


def test_bet_line_crossing() -> None:
    layout = TableLayout.default()
    stack = layout.zone("stack_5")
    bet = layout.zone("bet_5")
    start = polygon_centroid(stack.points)
    end = polygon_centroid(bet.points)
    assert layout.crosses_bet_line(5, start, end)
    assert layout.crosses_bet_line(5, end, start)
    assert not layout.crosses_bet_line(5, start, (start[0] + 30, start[1]))
    assert not layout.crosses_bet_line(4, start, end)


def test_zone_trigger_returns_a_mask() -> None:
    zone = TableLayout.default().zone("board")
    x, y = polygon_centroid(zone.points)
    mask = zone.trigger(np.array([[x, y], [5000.0, 0.0]]))
    assert mask.tolist() == [True, False]


def test_unknown_names() -> None:
    layout = TableLayout.default()
    with pytest.raises(ValueError, match="no zone named 'bets_1'"):
        layout.zone("bets_1")
    with pytest.raises(ValueError, match=r"no seat 10, expected 1\.\.9"):
        layout.seat(10)
    with pytest.raises(ConfigError, match="unknown bundled layout 'oval12'"):
        TableLayout.bundled("oval12")


def _write(tmp_path: Path, data: dict[str, Any]) -> Path:
    path = tmp_path / "table.yaml"
    path.write_text(layout_yaml(data))
    return path


def _move_zone(data: dict[str, Any], seat_index: int, kind: str, dx: float, dy: float) -> None:
    zone = data["seats"][seat_index][kind]
    zone["polygon"] = [[x + dx, y + dy] for x, y in zone["polygon"]]


def test_bad_layouts_name_file_and_field(tmp_path: Path) -> None:
    cases: list[tuple[dict[str, Any], str, str]] = []

    unknown = layout_data()
    unknown["seats"][2]["chairs"] = 1
    cases.append((unknown, "seats[2].chairs", "unknown field"))

    outside = layout_data()
    _move_zone(outside, 4, "stack", 0.0, 400.0)
    cases.append((outside, "seats[4].stack", "zone reaches outside the table outline"))

    overlapping = layout_data()
    overlapping["seats"][0]["stack"]["polygon"] = [[x + 40, y] for x, y in overlapping["seats"][1]["stack"]["polygon"]]
    cases.append((overlapping, "seats[0].stack", "zone overlaps seats[1].stack"))

    missing = layout_data()
    del missing["zones"]["muck"]
    cases.append((missing, "zones.muck", "required field is missing"))

    numbering = layout_data()
    numbering["seats"][3]["number"] = 1
    cases.append((numbering, "seats", "expected numbers 1..9 each once"))

    two_outlines = layout_data(outline={"racetrack": {"length": 2400, "width": 1200},
                                        "ellipse": {"length": 2400, "width": 1200}})
    cases.append((two_outlines, "outline", "expected exactly one of racetrack, ellipse or polygon"))

    for data, field, message in cases:
        path = _write(tmp_path, data)
        with pytest.raises(ConfigError) as info:
            TableLayout.load(path)
        text = str(info.value)
        assert str(path) in text, text
        assert f"field '{field}'" in text, text
        assert message in text, text


def test_a_custom_six_seat_layout_loads(tmp_path: Path) -> None:
    data = racetrack_layout_data(name="six", seats=6, length=2000, width=1100)
    layout = TableLayout.load(_write(tmp_path, data))
    assert layout.seat_numbers == (1, 2, 3, 4, 5, 6)
    assert {z.kind for z in layout.all_zones} == set(ZoneKind) - {ZoneKind.RAIL_EDGE}
