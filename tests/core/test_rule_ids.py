from __future__ import annotations

import re
from pathlib import Path

import pytest

from floorman.core.rule_ids import USER_NAMED_RULES, RuleId

CATALOG = Path(__file__).resolve().parents[3] / "shared" / "rules" / "CATALOG.md"


@pytest.mark.skipif(not CATALOG.is_file(), reason="shared/rules/CATALOG.md is not beside the checkout")
def test_rule_ids_match_the_catalog_summary() -> None:
    text = CATALOG.read_text(encoding="utf-8")
    summary = text.split("## 1. Summary", 1)[1].split("\n## ", 1)[0]
    ids = re.findall(r"^\| ([A-H][0-9]{0,2}) \|", summary, flags=re.MULTILINE)
    catalog_ids = {i for i in ids if i != "I"}
    assert catalog_ids == {r.value for r in RuleId}
    named = re.findall(r"^\| ([A-H][0-9]+) \|.*\*\*[a-z ]+\*\* \|$", summary, flags=re.MULTILINE)
    assert set(named) == {r.value for r in USER_NAMED_RULES}


@pytest.mark.parametrize(("text", "rule"), [("A8", RuleId.STRING_BET), ("string_bet", RuleId.STRING_BET),
                                            ("f6", RuleId.RABBIT_HUNTING), ("D2", RuleId.CHIPS_FROM_OUTSIDE)])
def test_parse(text: str, rule: RuleId) -> None:
    assert RuleId.parse(text) is rule


def test_parse_rejects() -> None:
    with pytest.raises(ValueError, match="unknown rule id 'Z9'"):
        RuleId.parse("Z9")
