"""The error hierarchy. Messages name the file and the field that is wrong."""

from __future__ import annotations


class FloormanError(Exception):
    """Base class of every error floorman raises on purpose."""


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


class SchemaError(FloormanError):
    """A message (event, alert, HTTP body) does not match its schema."""


class CameraError(FloormanError):
    """A camera or frame source cannot be opened or read."""
