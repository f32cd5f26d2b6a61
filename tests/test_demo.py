"""`floorman demo`: a scenario through edge, broker and rules on loopback, alerts scored against its truth."""

from __future__ import annotations

from pathlib import Path

import pytest

from floorman.cli import main


@pytest.mark.slow
def test_the_demo_raises_the_expected_alert_through_the_live_pipeline(tmp_path: Path,
                                                                       capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["demo", "--out", str(tmp_path), "--scenario", "string_bet_01", "--no-preview"]) == 0
    out = capsys.readouterr().out
    assert "ALERT A8 seat 5" in out
    assert "expected alerts met: 1/1; unexpected: 0 (precision 1.00, recall 1.00)" in out
    assert "0 lost" in out
    assert (tmp_path / "string_bet_01" / "video.mp4").is_file()


@pytest.mark.slow
def test_with_vision_the_edge_reads_the_video_itself_and_the_alert_is_met(tmp_path: Path,
                                                                         capsys: pytest.CaptureFixture[str]) -> None:
    # out_of_turn_01 at 1280x720: seat 7 pushes out of turn; the edge reads the video with the shipped detector and
    # recognisers (no simulator truth), calibrated on the render's markers first, and the C1 reaches the rules.
    assert main(["demo", "--out", str(tmp_path), "--scenario", "out_of_turn_01", "--no-preview", "--vision"]) == 0
    out = capsys.readouterr().out
    calibrated = next(line for line in out.splitlines() if line.startswith("calibrated cam1"))
    assert "(6 markers)" in calibrated and float(calibrated.split("max ")[1].split(" mm")[0]) < 1.0
    assert "edge sim/cam1 (vision) connected" in out and "edge: 900 of 900 frames analysed" in out
    assert "ALERT C1 seat 7" in out
    assert "expected alerts met: 1/1; unexpected: 0 (precision 1.00, recall 1.00)" in out
    assert (tmp_path / "out_of_turn_01" / "calibration.yaml").is_file()
