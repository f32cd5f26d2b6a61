"""JSON-lines files of our own (a scenario's `truth.jsonl` and `frames.jsonl`): one reader, one error format.

A bad line is a `JsonLineError` (a SchemaError) naming the file, the line and the field: ``PATH:LINE: field
'F': message``. Blank lines are skipped.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from pydantic import ValidationError

from floorman.core.alerts import TRUTH_ADAPTER, TruthRecord
from floorman.core.errors import SchemaError

T = TypeVar("T")


class JsonLineError(SchemaError):
    """One line of a JSON-lines file does not validate."""

    def __init__(self, *, path: Path, line: int, field: str, message: str) -> None:
        self.path, self.line, self.field, self.message = path, line, field, message
        super().__init__(f"{path}:{line}: field '{field}': {message}")


def read_jsonl(path: Path, parse: Callable[[str], T]) -> list[T]:
    """Every non-blank line of `path` through `parse` (a pydantic `validate_json`)."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise SchemaError(f"{path}: cannot read the file: {exc.strerror or exc}") from None
    records: list[T] = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            records.append(parse(line))
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"]) or "<root>"
            raise JsonLineError(path=path, line=number, field=where, message=str(first["msg"])) from None
    return records


def read_truth(path: Path) -> list[TruthRecord]:
    """A truth.jsonl: events in seq order, then expected alerts."""
    return read_jsonl(path, TRUTH_ADAPTER.validate_json)
