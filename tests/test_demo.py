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
