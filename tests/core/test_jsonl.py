"""JSON-lines reading: blank lines skipped, a bad line named by file, line and field."""

from __future__ import annotations

from pathlib import Path

import pytest

from floorman.core.errors import SchemaError
from floorman.core.jsonl import JsonLineError, read_truth


def test_truth_lines_are_read_and_a_bad_one_is_named(tmp_path: Path) -> None:
    good = tmp_path / "truth.jsonl"
    good.write_text('{"type": "shuffle", "table_id": "t1", "seq": 0, "t": 0.5, "frame": 15}\n\n', encoding="utf-8")
    (record,) = read_truth(good)
    assert record.type == "shuffle" and record.frame == 15
    bad = tmp_path / "bad.jsonl"
    bad.write_text(good.read_text(encoding="utf-8") + '{"type": "tap", "table_id": "t1"}\n', encoding="utf-8")
    with pytest.raises(JsonLineError, match=r"bad\.jsonl:3: field 'tap\.seq'") as raised:
        read_truth(bad)
    assert (raised.value.line, raised.value.field) == (3, "tap.seq")
    with pytest.raises(SchemaError, match="cannot read the file"):
        read_truth(tmp_path / "missing.jsonl")
