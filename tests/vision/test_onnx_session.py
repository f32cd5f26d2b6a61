"""The small recognisers' ONNX sessions: a model that is missing, not a model, or trained on other inputs is refused
naming its file and the recipe that makes it."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from floorman.core.errors import ConfigError
from floorman.vision import chips_box_net, chips_side_net

# each versioned reader: its class, shipped model, metadata key, a value of other inputs, and its recipe
READERS = [(chips_box_net.ChipBoxNet, chips_box_net.MODEL_PATH, "floorman_box_strips", "16,32,0.1",
            "train-chip-boxes"),
           (chips_side_net.ChipSideNet, chips_side_net.MODEL_PATH, "floorman_side_features", "0",
            "train-chip-sides")]


@pytest.mark.parametrize(("reader", "shipped", "key", "other", "recipe"), READERS)
def test_a_reader_trained_on_other_inputs_missing_or_not_a_model_is_refused_naming_the_file(
        tmp_path: Path, reader: Callable[[Path], object], shipped: Path, key: str, other: str, recipe: str) -> None:
    onnx = pytest.importorskip("onnx")
    model = onnx.load(str(shipped))
    assert any(entry.key == key for entry in model.metadata_props)
    for entry in model.metadata_props:
        if entry.key == key:
            entry.value = other
    onnx.save(model, str(tmp_path / "old.onnx"))
    with pytest.raises(ConfigError, match=rf"old\.onnx.*got '{other}'.*{recipe}"):
        reader(tmp_path / "old.onnx")
    with pytest.raises(ConfigError, match=f"missing.onnx.*{recipe}"):
        reader(tmp_path / "missing.onnx")
    (tmp_path / "torn.onnx").write_bytes(shipped.read_bytes()[:100])
    with pytest.raises(ConfigError, match=r"torn\.onnx.*ONNX Runtime loads"):
        reader(tmp_path / "torn.onnx")
    assert shipped.is_file() and shipped.stat().st_size > 0  # the shipped model is left as it was
    shutil.copy(shipped, tmp_path / "same.onnx")
    assert getattr(reader(tmp_path / "same.onnx"), "session", None) is not None
