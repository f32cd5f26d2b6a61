"""The learned box-side reader's recipe: strips from the detector's boxes on renders, the cache, training, the ONNX
export the reader loads."""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pytest

from floorman.cli import main
from floorman.core.chip_box_strips import SCALARS, STRIP_ALONG, STRIP_DEPTH_PX
from floorman.core.errors import ConfigError
from floorman.models import chip_boxes_data
from floorman.models import cli as models_cli
from floorman.models.chip_boxes_data import BoxTrainConfig, Sides, build_cache, frame_sides, load_cache
from floorman.models.chips_data import ChipBoxes
from floorman.vision.chips_box_net import ChipBoxNet
from floorman.vision.detect_cli import default_model
from floorman.vision.detector import OnnxDetectorConfig, class_boxes, create_detector

torch = pytest.importorskip("torch")
chip_boxes_train = pytest.importorskip("floorman.models.chip_boxes_train")

SEED = 60050  # a training-style seed (never a benchmark's)


def shipped_boxes() -> ChipBoxes:
    return class_boxes(create_detector(OnnxDetectorConfig(model=default_model())), "chip")


def test_a_frames_sides_are_strips_with_the_true_sides_offset_outwards() -> None:
    found = shipped_boxes()
    sides = next(s for s in (frame_sides(SEED, i, chip_boxes=found) for i in range(0, 9, 3)) if len(s))
    assert sides.strip.shape[1:] == (STRIP_ALONG, 2 * STRIP_DEPTH_PX, 3) and sides.scalars.shape[1:] == (SCALARS,)
    assert np.median(np.abs(sides.offset)) < 3.0  # the detector's boxes lie near the stacks' sides
    assert (np.abs(sides.scalars[:, 0]) <= 1.0 + 1e-6).all()

    def grown(image: np.ndarray) -> np.ndarray:
        return found(image) + np.array([-5.0, -5.0, 5.0, 5.0])  # each side 5 px out: the true side 5 px in

    index = int(sides.frame[0])
    moved = frame_sides(SEED, index, chip_boxes=grown)
    assert len(moved) == len(sides)
    np.testing.assert_allclose(moved.offset, sides.offset - 5.0, atol=1e-4)


def test_sides_are_cached_in_chunks_and_read_back(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(chip_boxes_data, "CHUNK", 2)
    made: list[int] = []

    def factory() -> ChipBoxes:
        made.append(1)
        return shipped_boxes()

    paths = build_cache(tmp_path, seed=SEED, frames=4, boxes=factory)
    assert [p.name for p in paths] == [f"boxes_{SEED}_0.npz", f"boxes_{SEED}_2.npz"]
    first = load_cache(paths)
    assert len(first) > 0 and set(first.frame.tolist()) <= {0, 1, 2, 3}
    assert made == [1]  # one detector for the process
    assert build_cache(tmp_path, seed=SEED, frames=4, boxes=factory) == paths and made == [1]  # reused
    (tmp_path / "bad.npz").write_bytes(b"not a chunk")
    with pytest.raises(ValueError, match=r"bad\.npz"):
        load_cache([tmp_path / "bad.npz"])
    other = tmp_path / "other.npz"  # cut with strips of another depth
    np.savez_compressed(other, strip=first.strip[:, :, 1:-1], scalars=first.scalars, offset=first.offset,
                        frame=first.frame)
    with pytest.raises(ValueError, match=r"other\.npz: field strip: expected strips of shape"):
        load_cache([paths[0], other])
    assert len(load_cache([])) == 0


def test_the_recipe_needs_the_detectors_boxes() -> None:
    with pytest.raises(ConfigError, match="chip_boxes"):
        models_cli.run_train_chip_boxes(argparse.Namespace(), chip_boxes=None)


def plain_sides(count: int, rng: np.random.Generator) -> Sides:
    """Strips of a dark stack against light felt, the stack's edge at a known offset outwards of the strip's middle."""
    offsets = rng.uniform(-6.0, 6.0, count).astype(np.float32)
    strips = np.full((count, STRIP_ALONG, 2 * STRIP_DEPTH_PX, 3), 200, np.uint8)
    columns = np.arange(2 * STRIP_DEPTH_PX) + 0.5 - STRIP_DEPTH_PX  # px outwards of the side
    for k, offset in enumerate(offsets):
        strips[k, :, columns < offset] = 50
    strips = np.clip(strips + rng.normal(0, 8, strips.shape), 0, 255).astype(np.uint8)
    return Sides(strips, np.zeros((count, SCALARS), np.float32), offsets, np.zeros(count, np.int64))


@pytest.mark.train
def test_the_net_learns_where_a_side_lies_on_plain_strips() -> None:
    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    net = chip_boxes_train.BoxNet()
    chip_boxes_train.fit(net, plain_sides(800, rng), config=BoxTrainConfig(epochs=4, batch=16, lr=1e-3, threads=2))
    figures = chip_boxes_train.held_out(net, plain_sides(200, rng))
    assert figures.sides == 200
    assert figures.net_mae < 0.5 * figures.box_mae  # the box's error is the edge's whole offset (~3 px)


@pytest.mark.train
def test_floorman_models_train_chip_boxes_renders_cuts_and_writes_the_model(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(chip_boxes_data, "CHUNK", 2)
    out = tmp_path / "boxes.onnx"
    assert main(["models", "train-chip-boxes", "--cache", str(tmp_path / "cache"), "--seed", str(SEED), "--frames",
                 "4", "--val-frames", "2", "--epochs", "1", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert f"wrote {out}" in printed and "held-out sides" in printed and "the detector's" in printed
    assert ChipBoxNet(out).session is not None
