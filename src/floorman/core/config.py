"""Loading pydantic models from YAML with errors that name the file and the field."""

from __future__ import annotations

from pathlib import Path
from typing import Any, TypeVar

import yaml
from pydantic import BaseModel, ValidationError

from floorman.core.errors import ConfigError

ModelT = TypeVar("ModelT", bound=BaseModel)


def field_path(location: tuple[int | str, ...]) -> str:
    """Render a pydantic error location as a dotted path: ``seats[2].bet``."""
    parts: list[str] = []
    for item in location:
        if isinstance(item, int):
            parts.append(f"[{item}]")
        elif parts:
            parts.append(f".{item}")
        else:
            parts.append(str(item))
    return "".join(parts) or "<root>"


class FieldError(ValueError):
    """Raised inside a model validator to point at a nested field (``seats[2].stack``) rather than the model."""

    def __init__(self, field: str, message: str) -> None:
        self.field = field
        self.message = message
        super().__init__(f"{field}: {message}")


def validation_to_config_error(exc: ValidationError, *, source: str) -> ConfigError:
    """The first validation problem as a ConfigError naming the file and the field (others are listed)."""
    errors = exc.errors()
    first = errors[0]
    message = first["msg"]
    location = field_path(tuple(first["loc"]))
    cause = first.get("ctx", {}).get("error")
    if isinstance(cause, FieldError):
        prefix = "" if location == "<root>" else f"{location}."
        location = f"{prefix}{cause.field}"
        message = cause.message
    elif first["type"] == "extra_forbidden":
        message = "unknown field"
    elif first["type"] == "missing":
        message = "required field is missing"
    elif first["type"] == "value_error":
        message = message.removeprefix("Value error, ")
    extra = ""
    if len(errors) > 1:
        others = "; ".join(f"{field_path(tuple(e['loc']))}: {e['msg']}" for e in errors[1:4])
        extra = f" (and {len(errors) - 1} more: {others})"
    return ConfigError(f"{message}{extra}", source=source, field=location)


def parse_yaml_text(text: str, *, source: str) -> Any:
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        raise ConfigError(f"not valid YAML{where}: {exc}", source=source) from None


def model_from_yaml_text(model: type[ModelT], text: str, *, source: str) -> ModelT:
    """Validate YAML text against `model`; errors name `source` and the field."""
    data = parse_yaml_text(text, source=source)
    if data is None:
        raise ConfigError("the file is empty", source=source)
    if not isinstance(data, dict):
        raise ConfigError(f"expected a mapping at the top level, got {type(data).__name__}", source=source)
    return model_from_data(model, data, source=source)


def model_from_data(model: type[ModelT], data: Any, *, source: str) -> ModelT:
    try:
        return model.model_validate(data, context={"source": source})
    except ValidationError as exc:
        raise validation_to_config_error(exc, source=source) from None


def model_from_yaml_file(model: type[ModelT], path: str | Path) -> ModelT:
    """Read and validate a YAML file; a missing or unreadable file is a ConfigError naming it."""
    file = Path(path)
    try:
        text = file.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError("file not found", source=str(file)) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read the file: {exc}", source=str(file)) from None
    return model_from_yaml_text(model, text, source=str(file))
