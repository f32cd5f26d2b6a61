"""An ONNX Runtime session on the CPU for the small recognisers' models (the card classifier, the chip offset net)."""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

from floorman.core.errors import ConfigError


def cpu_session(path: Path, *, threads: int, what: str, recipe: str) -> tuple[Any, dict[str, str]]:
    """A session on `path` (`threads` intra-op threads, one inter-op) and the model's custom metadata; ConfigError
    naming the file when it is missing (`what` names the model, `recipe` the command that makes it)."""
    if not path.is_file():
        raise ConfigError(f"expected the {what} at {path}, got no such file (run `{recipe}`)", field="model")
    ort = importlib.import_module("onnxruntime")  # untyped
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    session = ort.InferenceSession(str(path), sess_options=options, providers=["CPUExecutionProvider"])
    return session, dict(session.get_modelmeta().custom_metadata_map)
