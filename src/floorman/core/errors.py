"""The error hierarchy. Messages name the file and the field that is wrong."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pydantic import ValidationError


class FloormanError(Exception):
    """Base class of every error floorman raises on purpose."""


def os_error_text(exc: OSError) -> str:
    """An OSError (a file or folder that could not be read or written) as one line: 'PATH: REASON', or the reason
    alone where it names no file."""
    where = f"{exc.filename}: " if exc.filename is not None else ""
    return f"{where}{exc.strerror or exc}"


class ConfigError(FloormanError):
    """A configuration file (layout, chip set, rulebook, scenario, calibration) is invalid."""

    def __init__(self, message: str, *, source: str | None = None, field: str | None = None) -> None:
        self.source = source
        self.field = field
        where = ""
        if source is not None:
            where += f"{source}: "
        if field is not None:
            where += f"field '{field}': "
        super().__init__(f"{where}{message}")


def flag_error(exc: ValidationError, *, flags: Mapping[str, str] | None = None) -> ConfigError:
    """A command line's settings model refused a value: the ConfigError naming its flag (the field's name with
    dashes, or `flags[field]` where the flag is named otherwise) and the value given."""
    first = exc.errors()[0]
    name = str(first["loc"][-1]) if first["loc"] else ""
    flag = (flags or {}).get(name, "--" + name.replace("_", "-"))
    return ConfigError(f"{first['msg']}, got {first.get('input')!r}", field=flag)


class SchemaError(FloormanError):
    """A message (event, alert, HTTP body) does not match its schema."""


class CameraError(FloormanError):
    """A camera or frame source cannot be opened or read."""
