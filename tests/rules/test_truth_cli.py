"""`floorman rules check-truth` on a scenario's truth, and `floorman rules` without what the service needs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from floorman.cli import main
from floorman.datasets.scenario import load_scenario
from floorman.datasets.timeline import compile_timeline
from floorman.datasets.truth import write_truth


def _truth(tmp_path: Path, name: str, *, with_spec: bool = True) -> Path:
    timeline = compile_timeline(load_scenario(name))
    write_truth(tmp_path / "truth.jsonl", events=timeline.events, expected=timeline.expected)
    if with_spec:
        (tmp_path / "scenario.yaml").write_text(f"name: {name}\nrulebook: {timeline.spec.rulebook}\n",
                                                encoding="utf-8")
    return tmp_path


def test_check_truth_prints_each_expected_alert_and_the_scores(tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    folder = _truth(tmp_path, "string_bet_02")
    assert main(["rules", "check-truth", str(folder)]) == 0
    out = capsys.readouterr().out
    assert "rulebook club_004" in out and "expected A8  seat  6" in out and "MISSED" not in out
    assert "precision 1.000  recall 1.000" in out


def test_check_truth_json_with_another_rulebook_shows_misses(tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    folder = _truth(tmp_path, "pocket_chips_01")
    assert main(["rules", "check-truth", str(folder / "truth.jsonl"), "--rulebook", "club_004", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["rulebook"] == "club_004" and report["recall"] == 0.0  # club_004 has no D2
    assert [e["expected"]["rule"] for e in report["expected"]] == ["D2"] and not report["expected"][0]["raised"]


def test_check_truth_errors_name_the_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = _truth(tmp_path, "splash_02", with_spec=False)
    assert main(["rules", "check-truth", str(folder)]) == 2
    assert "scenario.yaml" in capsys.readouterr().err
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"type": "tap", "table_id": "t"}\n', encoding="utf-8")
    assert main(["rules", "check-truth", str(bad), "--rulebook", "ggc"]) == 2
    assert "bad.jsonl:1" in capsys.readouterr().err


def test_rules_service_needs_its_endpoints(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["rules", "--rulebook", "ggc"]) == 2
    assert "--subscribe" in capsys.readouterr().err
