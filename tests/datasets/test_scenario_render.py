"""Rendering scenarios: per-frame truth against the instance mask, the mp4, the CLI and the preview."""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np
import pytest

from floorman.cli import main
from floorman.datasets.scenario import load_scenario, scenario_from_text
from floorman.datasets.scenario_render import render_frames, write_calibration_frame
from floorman.datasets.timeline import compile_timeline
from floorman.datasets.truth import read_frames, read_truth, visible_objects
from floorman.datasets.video import probe_video
from floorman.vision.calibration import calibrate_from_markers

TINY = """\
name: tiny
duration: 3
seed: 3
seats:
  - {seat: 1, stack: {1000: 2, 100: 10}}
  - {seat: 5, stack: {1000: 2, 100: 10}}
button: 5
timeline:
  - {do: push, seat: 1, chips: {100: 2}, at: 0.3}
  - {do: tap, seat: 5, after: 0.1}
"""


def test_frame_truth_boxes_are_the_mask_bounding_boxes() -> None:
    timeline = compile_timeline(scenario_from_text(TINY, source="tiny.yaml", base=Path.cwd()))
    checked = 0
    for _, result in render_frames(timeline, size=(320, 180), frames=range(0, 90, 12)):
        mask = result.instance_mask
        objects = visible_objects(result.objects)
        assert any(o.cls.label == "hand" for o in objects) or not timeline.scene_at(0).hands
        for obj in objects:
            ys, xs = np.nonzero(mask == obj.id)
            assert xs.size > 0, obj
            assert obj.box == (float(xs.min()), float(ys.min()), float(xs.max() + 1), float(ys.max() + 1))
            checked += 1
    assert checked > 20


def test_cli_renders_a_tiny_spec_end_to_end(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    spec = tmp_path / "tiny.yaml"
    spec.write_text(TINY, encoding="utf-8")
    out = tmp_path / "out"
    assert main(["datasets", "scenario", str(spec), "--out", str(out), "--size", "320x180"]) == 0
    summary = capsys.readouterr().out
    assert "tiny: 90 frames" in summary and "expected alerts" in summary
    assert sorted(p.name for p in out.iterdir()) == ["calibration.png", "frames.jsonl", "scenario.yaml",
                                                     "truth.jsonl", "video.mp4"]
    info = probe_video(out / "video.mp4")
    assert (info.frames, info.width, info.height, round(info.fps)) == (90, 320, 180, 30)
    frames = read_frames(out / "frames.jsonl")
    assert [f.frame for f in frames] == list(range(90))
    assert any(o.cls == "chip" and o.chips == (100, 100) for f in frames for o in f.objects)
    records = read_truth(out / "truth.jsonl")
    assert any(getattr(r, "type", "") == "chips_pushed" for r in records)
    assert (out / "scenario.yaml").read_text(encoding="utf-8") == TINY
    # A non-empty folder is refused without --overwrite, then replaced with it.
    assert main(["datasets", "scenario", str(spec), "--out", str(out), "--truth-only"]) == 2
    assert "--overwrite" in capsys.readouterr().err
    assert main(["datasets", "scenario", str(spec), "--out", str(out), "--truth-only", "--overwrite"]) == 0
    assert sorted(p.name for p in out.iterdir()) == ["scenario.yaml", "truth.jsonl"]


def test_the_calibration_frame_calibrates_the_scenario_camera(tmp_path: Path) -> None:
    loaded = load_scenario("string_bet_01")
    timeline = compile_timeline(loaded)
    write_calibration_frame(timeline, tmp_path / "calibration.png", size=(1280, 720))
    image = cv2.imread(str(tmp_path / "calibration.png"))
    calibration = calibrate_from_markers(image, layout=loaded.layout)
    assert sorted({p.marker_id for p in calibration.points}) == [m.id for m in loaded.layout.markers]
    assert calibration.reprojection_error.mean_mm < 2.0
    truth = timeline.camera((1280, 720)).table_homography()
    centre = np.array([300.0, -200.0, 1.0])
    expected, found = truth @ centre, np.asarray(calibration.mm_to_pixels) @ centre
    assert np.allclose(expected[:2] / expected[2], found[:2] / found[2], atol=1.5)


def test_cli_lists_the_library(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["datasets", "scenario", "--list"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) >= 16
    by_name = {line.split()[0]: line for line in lines}
    assert "A8@5" in by_name["string_bet_01"] and "24.0 s" in by_name["string_bet_01"]
    assert by_name["clean_hand_01"].rstrip().endswith("-")


def test_cli_bad_size_and_bad_spec_are_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["datasets", "scenario", "clean_hand_01", "--out", str(tmp_path / "a"), "--size", "big"]) == 2
    assert "WIDTHxHEIGHT" in capsys.readouterr().err
    bad = tmp_path / "bad.yaml"
    bad.write_text(TINY.replace("seed: 3", "seed: 3\nspeed: 2"), encoding="utf-8")
    assert main(["datasets", "scenario", str(bad), "--out", str(tmp_path / "b")]) == 2
    err = capsys.readouterr().err
    assert str(bad) in err and "speed" in err


def test_preview_writes_an_annotated_video(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    spec = tmp_path / "tiny.yaml"
    spec.write_text(TINY, encoding="utf-8")
    assert main(["datasets", "preview", "--out", str(tmp_path), "--scenario", str(spec), "--size", "320x180"]) == 0
    assert "preview.mp4" in capsys.readouterr().out
    info = probe_video(tmp_path / "preview.mp4")
    assert (info.frames, info.width) == (90, 320)
    assert info.height > 180  # the caption band


def test_frames_jsonl_lines_are_plain_json(tmp_path: Path) -> None:
    spec = tmp_path / "tiny.yaml"
    spec.write_text(TINY, encoding="utf-8")
    out = tmp_path / "o"
    assert main(["datasets", "scenario", str(spec), "--out", str(out), "--size", "160x90"]) == 0
    first = json.loads((out / "frames.jsonl").read_text(encoding="utf-8").splitlines()[0])
    assert set(first) == {"frame", "t", "objects"}
    assert {o["cls"] for o in first["objects"]} >= {"chip", "dealer_button"}


def test_cli_resolves_bundled_names(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["datasets", "scenario", "pocket_chips_01", "--out", str(tmp_path), "--truth-only"]) == 0
    assert "pocket_chips_01: 900 frames" in capsys.readouterr().out
    records = read_truth(tmp_path / "truth.jsonl")
    assert [(r.rule.value, r.seat) for r in records if r.type == "expected_alert"] == [("D2", 4)]
