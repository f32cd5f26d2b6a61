"""The derivation harness: truth frames -> edge derivation -> events, scored against the truth."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from floorman.core.errors import ConfigError
from floorman.core.events import BlindsLevel, ButtonMoved, CardDealt, EventBase, Tap, ZoneCards
from floorman.core.layout import TableLayout
from floorman.core.table_state import TableState
from floorman.datasets.scenario_render import run_scenario
from floorman.datasets.truth import FrameTruth, ObjectRecord
from floorman.evaluation import derivation
from floorman.evaluation.__main__ import main
from floorman.evaluation.derivation import (
    NameScore,
    compare_events,
    compare_names,
    derive_events,
    evaluate_scenario,
    with_feeds,
    with_oracle,
)
from floorman.evaluation.report import scenario_lines
from tests.datasets.test_scenario_render import TINY

LAYOUT = TableLayout.default()


def button_frames(seat: int, count: int) -> list[FrameTruth]:
    x, y = LAYOUT.seat(seat).position
    button = ObjectRecord(id=2, cls="dealer_button", box=(0, 0, 1, 1), visible_fraction=1.0,
                          position_mm=(x * 0.8, y * 0.8))
    return [FrameTruth(frame=i, t=i / 30, objects=(button,)) for i in range(count)]


def test_derived_events_are_numbered_from_0() -> None:
    events = derive_events(button_frames(7, 10), layout=LAYOUT)
    assert [(e.seq, e.model_dump()["type"]) for e in events] == [(0, "button_moved")]


def test_events_match_by_type_key_and_time_within_the_tolerance() -> None:
    def cards(t: float, up: tuple[str, ...]) -> ZoneCards:
        return ZoneCards(table_id="t", seq=0, t=t, frame=0, zone="board", face_up=up)

    truth: list[EventBase] = [cards(1.0, ("AS", "KD")), cards(5.0, ("AS", "KD", "2C")), cards(9.0, ())]
    derived: list[EventBase] = [cards(1.2, ("KD", "AS")), cards(6.5, ("AS", "KD", "2C")), cards(9.1, ("QH",))]
    score = compare_events(derived, truth, tolerance_s=1.0)["zone_cards"]
    assert (score.truth, score.derived, score.matched) == (3, 3, 1)
    assert score.precision == pytest.approx(1 / 3) and score.median_delay == pytest.approx(0.2)


def test_face_up_cards_dealt_are_named_right_wrong_unread_or_not_derived() -> None:
    def dealt(t: float, zone: str, card: str | None, *, face_up: bool = True) -> CardDealt:
        return CardDealt(table_id="t", seq=0, t=t, frame=0, to_zone=zone, face_up=face_up, card=card)

    truth: list[EventBase] = [dealt(1.0, "board", "4H"), dealt(1.5, "board", "10S"), dealt(2.0, "board", "3D"),
                              dealt(5.0, "deck", "KC"), dealt(8.0, "board", "2C"), dealt(0.5, "hole_1", None,
                                                                                          face_up=False)]
    derived: list[EventBase] = [dealt(1.1, "board", "4H"), dealt(1.6, "board", "10C"), dealt(2.2, "board", None),
                                dealt(5.2, "board", "KC"), dealt(0.6, "hole_1", None, face_up=False)]
    names = compare_names(derived, truth, tolerance_s=1.0)
    # 4H right, 10S read 10C, 3D unread; KC was dealt to the deck (a rabbit card), none derived there; 2C none
    assert (names.right, names.wrong, names.unread, names.missed, names.truth) == (1, 1, 1, 2, 5)
    assert names.misread == ["10S -> 10C"]
    total = compare_names([], truth)
    total.add(names)
    assert (total.right, total.missed, total.misread) == (1, 7, ["10S -> 10C"])
    # whatever the name, a deal matches by zone and time; compare_events' key holds the name
    assert compare_events(derived, truth)["card_dealt"].matched == 2
    # two rabbit cards turned 0.7 s apart, both derived together, the first unread (named 3.4 s later): the second's
    # name is right and the first is unread, not the first read as the second (rabbit_hunt_02 from video)
    rabbit: list[EventBase] = [dealt(28.4, "deck", "KC"), dealt(29.1, "deck", "AH")]
    late = compare_names([dealt(29.07, "deck", "AH"), dealt(29.07, "deck", None), dealt(31.8, "deck", "KC")], rabbit)
    assert (late.right, late.wrong, late.unread, late.missed, late.misread) == (1, 0, 1, 0, [])


def test_feeds_are_merged_by_time_before_derived_events_of_the_same_time() -> None:
    derived: list[EventBase] = [ButtonMoved(table_id="t", seq=0, t=0.5, frame=15, seat=3)]
    truth: list[EventBase] = [BlindsLevel(table_id="t", seq=0, t=0.5, frame=15, level=1, small_blind=50,
                                          big_blind=100), Tap(table_id="t", seq=1, t=0.2, frame=6, seat=2)]
    merged = with_feeds(derived, truth)
    assert [(e.seq, e.model_dump()["type"]) for e in merged] == [(0, "blinds_level"), (1, "button_moved")]
    oracle = with_feeds(derived, truth, kinds=("blinds_level", "tap"))
    assert [e.model_dump()["type"] for e in oracle] == ["tap", "blinds_level", "button_moved"]


def test_an_oracle_replaces_the_derived_events_of_its_types() -> None:
    derived: list[EventBase] = [Tap(table_id="t", seq=0, t=0.3, frame=9, seat=5),
                                ButtonMoved(table_id="t", seq=1, t=0.5, frame=15, seat=3)]
    truth: list[EventBase] = [Tap(table_id="t", seq=0, t=0.2, frame=6, seat=2)]
    stream = with_oracle(derived, truth, kinds=("tap",))
    assert [(e.model_dump()["type"], e.model_dump().get("seat")) for e in stream] == [("tap", 2), ("button_moved", 3)]


@pytest.fixture(scope="module")
def scenario(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """string_bet_01's truth (no render) with frames in which only the button is seen."""
    folder = tmp_path_factory.mktemp("scenario")
    run_scenario("string_bet_01", folder, truth_only=True)
    lines = [f.model_dump_json() for f in button_frames(7, 60)]
    (folder / "frames.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return folder


def test_a_scenario_is_scored_on_events_and_alerts(scenario: Path) -> None:
    score = evaluate_scenario(scenario)
    assert score.name == "string_bet_01" and score.frames == 60
    assert (score.events["button_moved"].truth, score.events["button_moved"].matched) == (1, 1)
    assert score.events["chips_pushed"].truth == 5 and score.events["chips_pushed"].recall == 0.0
    assert "blinds_level" not in score.events  # a feed, not derived
    assert score.truth_alerts.recall == 1.0
    assert score.alerts.recall == 0.0  # the string bet's pushes are not in these frames


def test_the_command_prints_each_scenario_and_the_totals(scenario: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main([str(scenario), "--events"]) == 0
    out = capsys.readouterr().out
    assert "string_bet_01" in out and "0/1 expected met" in out and "missed A8 seat 5" in out
    assert "button_moved   truth    1  derived    1  matched    1" in out


def test_another_rulebook_checks_the_events_and_expects_only_what_it_checks(scenario: Path,
                                                                          capsys: pytest.CaptureFixture[str]) -> None:
    """string_bet_01 is club_000's; ggc checks A8 too, tda2024 does not (nothing is then expected of it)."""
    assert evaluate_scenario(scenario, rulebook="ggc").truth_alerts.recall == 1.0
    assert len(evaluate_scenario(scenario, rulebook="ggc").alerts.outcomes) == 1
    assert evaluate_scenario(scenario, rulebook="tda2024").alerts.outcomes == ()
    assert main([str(scenario), "--rulebook", "tda2024"]) == 0
    assert "0/0 expected met" in capsys.readouterr().out
    assert main([str(scenario), "--rulebook", "no_such_book"]) == 2
    assert "no_such_book" in capsys.readouterr().err


@pytest.mark.slow
def test_vision_on_the_video_is_scored_like_the_truth_frames(tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    import cv2

    from floorman.vision.calibration import calibrate_from_markers

    spec = tmp_path / "tiny.yaml"
    spec.write_text(TINY, encoding="utf-8")
    folder = tmp_path / "render"
    run_scenario(spec, folder, size=(1280, 720))
    calibration = calibrate_from_markers(cv2.imread(str(folder / "calibration.png")), layout=LAYOUT)
    calibration.save(folder / "cam.yaml")
    seen = evaluate_scenario(folder, calibration=folder / "cam.yaml")
    truth = evaluate_scenario(folder)
    assert seen.frames == truth.frames == 90 and seen.name == "tiny"
    assert set(truth.events) <= set(seen.events)  # every truth event type is scored for vision too
    assert sum(s.derived for s in seen.events.values()) > 0  # the detector saw the table's stacks
    assert main([str(folder), "--vision", "cam.yaml", "--model", str(tmp_path / "none.onnx")]) == 2
    stored = evaluate_scenario(folder, calibration=folder / "cam.yaml", states="vision.jsonl")
    assert stored.events == seen.events and (folder / "vision.jsonl").is_file()

    def no_vision(*_args: object, **_kwargs: object) -> Iterator[TableState]:
        raise AssertionError("the stored states should have been read")
        yield TableState(frame=0, t=0.0)

    monkeypatch.setattr(derivation, "vision_states", no_vision)
    again = evaluate_scenario(folder, calibration=folder / "cam.yaml", states="vision.jsonl")
    assert again.events == seen.events and again.alerts == seen.alerts


@pytest.mark.slow
def test_another_camera_s_render_is_read_in_step_and_fused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import cv2

    from floorman.vision.calibration import calibrate_from_markers

    spec = tmp_path / "tiny.yaml"
    spec.write_text(TINY, encoding="utf-8")
    folder = tmp_path / "render"
    run_scenario(spec, folder, size=(640, 360))
    calibrate_from_markers(cv2.imread(str(folder / "calibration.png")), layout=LAYOUT).save(folder / "cam.yaml")
    # The same video as a second camera's: every object seen twice at one place, fused into one.
    both = evaluate_scenario(folder, calibration=folder / "cam.yaml", views=[(folder, folder / "cam.yaml")])
    assert both.frames == 90 and sum(s.derived for s in both.events.values()) > 0
    kept = evaluate_scenario(folder, calibration=folder / "cam.yaml", views=[(folder, folder / "cam.yaml")],
                             states="fused.jsonl")
    assert kept.events == both.events and kept.alerts == both.alerts  # made, stored
    header = json.loads((folder / "fused.jsonl").read_text(encoding="utf-8").splitlines()[0])
    assert [v["video"] for v in header["views"]] == ["render/video.mp4"]
    again = evaluate_scenario(folder, calibration=folder / "cam.yaml", views=[(folder, folder / "cam.yaml")],
                              states="fused.jsonl")
    assert again.events == both.events  # read back
    with pytest.raises(ConfigError, match="other cameras' views need vision") as refused:
        evaluate_scenario(folder, views=[(folder, folder / "cam.yaml")])
    assert refused.value.field == "--view"
    with pytest.raises(SystemExit):
        main([str(folder), "--view", str(folder), "cam.yaml"])  # without --vision
    assert "--view needs --vision" in capsys.readouterr().err


def test_the_scenario_lines_give_the_face_up_names_with_the_events(scenario: Path) -> None:
    score = evaluate_scenario(scenario)
    named = replace(score, names=NameScore(right=3, wrong=1, unread=1, missed=0, misread=["5S -> 5C"]))
    assert "    face-up names  3 right, 1 wrong (5S -> 5C), 1 unread, 0 not derived of 5" in scenario_lines(
        named, events=True)
    assert not any("face-up names" in line for line in scenario_lines(named))
    assert not any("face-up names" in line for line in scenario_lines(replace(score, names=NameScore()),
                                                                      events=True))


def test_a_missing_calibration_or_scenario_file_is_named_not_a_traceback(tmp_path: Path,
                                                                        capsys: pytest.CaptureFixture[str],
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    # --vision CALIB is read in each folder: a path given from the working directory was a FileNotFoundError's
    # traceback (session 58); now one line naming the file and how to make it.
    folder = tmp_path / "render"
    folder.mkdir()
    assert main([str(folder), "--vision", "cam.yaml"]) == 2
    err = capsys.readouterr().err
    assert f"field '--vision': no such calibration file: {folder / 'cam.yaml'}" in err
    assert f"floorman calibrate {folder / 'calibration.png'} --out {folder / 'cam.yaml'}" in err
    # any other file the folder lacks, found missing while reading it, is named too
    def missing(*_args: object, **_kwargs: object) -> None:
        raise FileNotFoundError(2, "No such file or directory", str(folder / "video.mp4"))

    monkeypatch.setattr("floorman.evaluation.__main__.evaluate_scenario", missing)
    assert main([str(folder)]) == 2
    assert capsys.readouterr().err == f"error: {folder / 'video.mp4'}: No such file or directory\n"
