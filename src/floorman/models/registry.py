"""The model registry: the detector weights shipped in `floorman/models/weights/` and what they declare."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from floorman.core.errors import ConfigError

WEIGHTS_DIR = Path(__file__).resolve().parent / "weights"
Precision = Literal["fp32", "int8"]
LEVELS_KEY = "floorman_levels"  # ONNX metadata: the pyramid levels (long side, px) it was trained on, "320,960"
SHIPPED: dict[Precision, str] = {"fp32": "detector.onnx", "int8": "detector_int8.onnx"}


class ModelInfo(BaseModel):
    """What an exported detector declares in its ONNX metadata."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    path: Path = Field(description="The ONNX file.")
    names: tuple[str, ...] = Field(description="Class names in class-id order.")
    imgsz: int = Field(description="Square input size in pixels.")
    levels: tuple[int, ...] = Field(description="Pyramid levels: long side in px of each resized frame.")
    size_mb: float = Field(description="File size in MB.")


def shipped_model(precision: Precision = "int8") -> Path:
    """Path of a shipped detector; ConfigError when it was not exported yet."""
    path = WEIGHTS_DIR / SHIPPED[precision]
    if not path.is_file():
        raise ConfigError(f"expected the shipped {precision} detector at {path}, got no such file "
                          "(run `floorman models export`)", field="model")
    return path


def model_info(path: Path) -> ModelInfo:
    if not path.is_file():
        raise ConfigError(f"expected an ONNX file, got no such file: {path}", field="model")
    onnx = importlib.import_module("onnx")  # part of the export tooling, not of the runtime
    model = onnx.load(str(path), load_external_data=False)
    meta = {p.key: p.value for p in model.metadata_props}
    try:
        names = ast.literal_eval(meta["names"])
        imgsz = ast.literal_eval(meta["imgsz"])
    except (KeyError, ValueError, SyntaxError):
        raise ConfigError("expected Ultralytics metadata 'names' and 'imgsz'", source=str(path),
                          field="metadata_props") from None
    levels_text = meta.get(LEVELS_KEY, "")
    return ModelInfo(
        path=path, names=tuple(str(names[key]) for key in sorted(names)),
        imgsz=int(imgsz[0] if isinstance(imgsz, list) else imgsz),
        levels=tuple(int(v) for v in levels_text.split(",") if v.strip()), size_mb=path.stat().st_size / 1e6,
    )
