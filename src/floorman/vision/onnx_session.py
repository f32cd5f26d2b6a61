"""An ONNX Runtime session on the CPU for the small recognisers' models (the card classifier, the chip offset
net, the chip side and box-side readers)."""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

from floorman.core.errors import ConfigError


def cpu_session(path: Path, *, threads: int, what: str, recipe: str) -> tuple[Any, dict[str, str]]:
    """A session on `path` (`threads` intra-op threads, one inter-op) and the model's custom metadata; ConfigError
    naming the file when it is missing (`what` names the model, `recipe` the command that makes it) or not a model
    ONNX Runtime loads."""
    if not path.is_file():
        raise ConfigError(f"expected the {what} at {path}, got no such file (run `{recipe}`)", field="model")
    ort = importlib.import_module("onnxruntime")  # untyped
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    session = open_session(path, options, what=what)
    return session, dict(session.get_modelmeta().custom_metadata_map)


def versioned_session(path: Path, *, threads: int, what: str, recipe: str, key: str, value: str,
                      inputs: str) -> Any:
    """`cpu_session` on a model whose metadata `key` must read `value` (the version of the `inputs` it was trained
    on); ConfigError naming the file, both values and `recipe` otherwise."""
    session, meta = cpu_session(path, threads=threads, what=what, recipe=recipe)
    if meta.get(key) != value:
        raise ConfigError(f"expected {key} metadata {value!r} in {path} ({inputs}), got {meta.get(key)!r}: train it "
                          f"again with `{recipe}`", field="metadata")
    return session


def open_session(path: Path, options: Any, *, what: str) -> Any:
    """An ONNX Runtime session on `path` on the CPU with `options` (an `onnxruntime.SessionOptions`); ConfigError
    naming the file and ONNX Runtime's reason when it does not load (not an ONNX file, cut short, an operator it
    lacks), not ONNX Runtime's own exception."""
    ort = importlib.import_module("onnxruntime")  # untyped
    try:
        return ort.InferenceSession(str(path), sess_options=options, providers=["CPUExecutionProvider"])
    except Exception as exc:  # onnxruntime's errors (InvalidProtobuf, Fail, ...) derive from Exception alone
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ConfigError(f"expected the {what} at {path} to be an ONNX model ONNX Runtime loads, got: {reason}",
                          field="model") from None
