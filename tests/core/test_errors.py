"""A settings model's refusal named by the command-line flag that set the value."""

from __future__ import annotations

import pytest
from pydantic import BaseModel, Field, ValidationError

from floorman.core.errors import ConfigError, flag_error


class _Settings(BaseModel):
    replay_bind: str = "tcp://*:*"
    table_id: str = "t1"
    evidence_mb: float = Field(default=64.0, gt=0)


def _refusal(**values: object) -> ValidationError:
    with pytest.raises(ValidationError) as caught:
        _Settings(**values)  # type: ignore[arg-type]
    return caught.value


def test_a_refused_value_names_its_flag_and_the_value() -> None:
    error = flag_error(_refusal(evidence_mb=-1.0))
    assert isinstance(error, ConfigError) and error.field == "--evidence-mb"
    assert str(error) == "field '--evidence-mb': Input should be greater than 0, got -1.0"
    assert flag_error(_refusal(table_id=3), flags={"table_id": "--table"}).field == "--table"
    assert flag_error(_refusal(replay_bind=None)).field == "--replay-bind"  # dashes, as argparse spells flags
