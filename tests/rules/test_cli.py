"""`floorman ruling` and `floorman rules`: the JSON contract, --rulebook, stdin, and errors."""

from __future__ import annotations

import io
import json
from importlib import resources
from pathlib import Path
from typing import Any

import pytest

from floorman.cli import main

CONTRACT_FIELDS = ("action", "total_to", "chips_to_add", "chips_returned", "reopens_betting", "next_min_raise_to",
                   "options", "citations", "explanation")

ISSUE_EXAMPLE = {
    "rulebook": "tda2024", "game": "nlhe", "blinds": [100, 200], "street": "turn",
    "facing_bet_to": 800, "actor_in_before": 0, "last_raise_size": 800,
    "trips": [[{"denom": 500, "count": 2}, {"denom": 25, "count": 4}]],
    "declaration": None, "stack_before": None,
}


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, dict[str, Any], str]:
    code = main(argv)
    out, err = capsys.readouterr()
    return code, (json.loads(out) if code == 0 and out.startswith("{") else {}), err


def test_ruling_prints_the_contract_fields(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "push.json"
    path.write_text(json.dumps(ISSUE_EXAMPLE), encoding="utf-8")
    code, ruling, _ = _run(["ruling", str(path)], capsys)
    assert code == 0
    assert tuple(ruling)[: len(CONTRACT_FIELDS)] == CONTRACT_FIELDS
    # 1100 facing 800, minimum raise 1600: TDA 45 B then 50% of 800 → threshold 1200, so a call, 300 back.
    assert (ruling["action"], ruling["total_to"], ruling["chips_returned"]) == ("call", 800, 300)
    assert ruling["explanation"] and ruling["provisional"] is True


def test_rulebook_flag_overrides_the_file_000_9_9(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "push.json"
    path.write_text(json.dumps(ISSUE_EXAMPLE), encoding="utf-8")
    code, ruling, _ = _run(["ruling", "--rulebook", "club_000", str(path)], capsys)
    assert code == 0
    assert ruling["action"] == "player_choice"
    assert [option["action"] for option in ruling["options"]] == ["call", "raise"]


def test_ruling_reads_stdin_and_a_rulebook_path(monkeypatch: pytest.MonkeyPatch,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    book = resources.files("floorman.rules").joinpath("rulebooks/club_004.yaml")
    monkeypatch.setattr("sys.stdin", io.StringIO(json.dumps({**ISSUE_EXAMPLE, "rulebook": "ggc"})))
    code, ruling, _ = _run(["ruling", "--rulebook", str(book), "-"], capsys)
    assert code == 0
    assert ruling["rulebook"] == "club_004"


@pytest.mark.parametrize(("payload", "message"), [
    ('{"blinds": [100, 200]', "<stdin>: not valid JSON"),
    (json.dumps({**ISSUE_EXAMPLE, "street": "showdown"}), "field 'street'"),
    (json.dumps({**ISSUE_EXAMPLE, "rulebook": "house"}), "unknown rulebook 'house'"),
])
def test_ruling_errors_exit_2_with_a_message(payload: str, message: str, monkeypatch: pytest.MonkeyPatch,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO(payload))
    code, _, err = _run(["ruling", "-"], capsys)
    assert code == 2
    assert message in err


def test_ruling_missing_file_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = _run(["ruling", str(tmp_path / "nope.json")], capsys)
    assert code == 2
    assert "nope.json: cannot read the file" in err


def test_rules_list_and_check(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["rules", "list"]) == 0
    out = capsys.readouterr().out
    assert "tda2024" in out and "club_004" in out
    assert main(["rules", "check", "ggc"]) == 0
    assert "ggc: valid" in capsys.readouterr().out


def test_rules_check_bad_file_names_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "club.yaml"
    path.write_text("id: club\n", encoding="utf-8")
    assert main(["rules", "check", str(path)]) == 2
    assert f"{path}: field 'title': required field is missing" in capsys.readouterr().err
