"""The chip offset net's recipe: patches and targets from renders, the cache, the network, the ONNX export."""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pytest

from floorman.cli import main
from floorman.core.errors import ConfigError
from floorman.core.stack_patch import PatchSpec
from floorman.datasets.camera import Camera
from floorman.models import chips_data
from floorman.models import cli as models_cli
from floorman.models.chips_data import build_cache, frame_samples, jittered, load_cache, patch_matrix
from floorman.vision.chips_cnn import ChipOffsetNet
from floorman.vision.detections import Detections
from floorman.vision.detector import class_boxes

torch = pytest.importorskip("torch")
chips_train = pytest.importorskip("floorman.models.chips_train")

SEED = 8050  # a training-style seed (never a benchmark's)


def test_a_rendered_frame_gives_each_stack_its_patches_and_offsets() -> None:
    spec = PatchSpec()
    samples = next(s for s in (frame_samples(SEED, i, spec=spec, chip_boxes=None) for i in range(6)) if len(s))
    assert samples.patches.shape[1:] == (96, 48, 3)
    assert set(samples.kind.tolist()) <= {0, 1} and (samples.kind == 0).sum() >= 1  # no detector: masks, jitters
    assert (samples.count >= 1).all()
    # the top never below the base, and taller stacks (of one frame's camera) further up
    assert (samples.offset > -0.5).all()
    masks = samples.kind == 0
    order = np.argsort(samples.count[masks])
    assert samples.offset[masks][order][-1] >= samples.offset[masks][order][0]
    # the base lies in the patch, about where the box's centre puts it
    assert ((samples.base[:, 0] > 0) & (samples.base[:, 0] < spec.width)).mean() > 0.9


def test_a_jittered_box_moves_its_sides_by_a_few_pixels() -> None:
    rng = np.random.default_rng(0)
    moves = np.array([np.subtract(jittered((100.0, 50.0, 130.0, 90.0), rng) or (0, 0, 0, 0), (100, 50, 130, 90))
                      for _ in range(200)])
    assert 1.0 < float(np.abs(moves).mean()) < 4.0


def test_patches_are_cached_in_chunks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(chips_data, "CHUNK", 2)
    spec = PatchSpec()
    paths = build_cache(tmp_path, seed=SEED, frames=3, spec=spec, chip_boxes=None)
    assert [p.name for p in paths] == [f"chunk_{SEED}_0.npz", f"chunk_{SEED}_2.npz"]
    samples = load_cache(paths, spec=spec)
    again = load_cache(build_cache(tmp_path, seed=SEED, frames=3, spec=spec, chip_boxes=None), spec=spec)
    assert np.array_equal(again.patches, samples.patches) and np.array_equal(again.offset, samples.offset)
    with pytest.raises(ValueError, match="another patch spec"):
        load_cache(paths, spec=PatchSpec(width=40))


def test_a_config_names_frames_off_the_chunks() -> None:
    with pytest.raises(ValueError, match="multiples of"):
        chips_train.ChipTrainConfig(frames=120, val_frames=50)
    with pytest.raises(ValueError, match="frames > val_frames"):
        chips_train.ChipTrainConfig(frames=50, val_frames=50)


@pytest.mark.train
def test_a_trained_net_exports_to_a_model_the_reader_loads(tmp_path: Path) -> None:
    spec = PatchSpec()
    samples = load_cache(build_cache(tmp_path / "cache", seed=SEED, frames=2, spec=spec, chip_boxes=None), spec=spec)
    net = chips_train.OffsetNet(spec)
    config = chips_train.ChipTrainConfig(cache=tmp_path, frames=100, val_frames=50, steps=3, batch=8)
    assert chips_train.fit(net, samples, config=config, spec=spec) == 3
    path = chips_train.export_onnx(net, tmp_path / "chips.onnx", spec=spec)
    reader = ChipOffsetNet(path)
    assert reader.spec.encode() == spec.encode()
    readings = reader.read(list(samples.patches[:3]))
    net.eval()
    with torch.no_grad():
        out = net(torch.from_numpy(samples.patches[:3].transpose(0, 3, 1, 2).copy()).float()).numpy()
    np.testing.assert_allclose([r.offset for r in readings], out[:, 0] * chips_train.OFFSET_UNIT, rtol=1e-3,
                               atol=1e-3)
    assert all(r.sigma > 0 for r in readings)


@pytest.mark.train
def test_an_exported_net_loads_back_for_fine_tuning(tmp_path: Path) -> None:
    """`train-chips --init NET`: the exported net's weights (batch norms folded into the convolutions) read back
    into an `OffsetNet` give the exported outputs; its norms stay frozen while it trains; a file that is no such
    net is named."""
    spec = PatchSpec()
    net = chips_train.OffsetNet(spec)
    with torch.no_grad():  # norms with statistics of their own, as a trained net has
        for module in net.modules():
            if isinstance(module, torch.nn.BatchNorm2d):
                module.running_mean.uniform_(-0.5, 0.5)
                module.running_var.uniform_(0.5, 2.0)
                module.weight.uniform_(0.5, 1.5)
                module.bias.uniform_(-0.2, 0.2)
    path = chips_train.export_onnx(net, tmp_path / "net.onnx", spec=spec)
    loaded = chips_train.load_exported(chips_train.OffsetNet(spec), path).eval()
    patches = np.random.default_rng(0).integers(0, 256, (4, 96, 48, 3), dtype=np.uint8)
    with torch.no_grad():
        out = loaded(torch.from_numpy(patches.transpose(0, 3, 1, 2).copy()).float()).numpy()
    readings = ChipOffsetNet(path).read(list(patches))
    np.testing.assert_allclose([r.offset for r in readings], out[:, 0] * chips_train.OFFSET_UNIT, rtol=1e-4,
                               atol=1e-3)
    samples = chips_data.Samples(patches, np.ones(4, np.float32), np.full((4, 2), 20.0, np.float32),
                                 np.ones(4, np.int64), np.zeros(4, np.int64), np.full(4, 1280, np.int64))
    config = chips_train.ChipTrainConfig(cache=tmp_path, frames=100, val_frames=50, steps=2, batch=4, init=path)
    norm = next(m for m in loaded.modules() if isinstance(m, torch.nn.BatchNorm2d))
    before = norm.running_mean.clone()
    assert chips_train.fit(loaded, samples, config=config, spec=spec) == 2
    assert torch.equal(norm.running_mean, before)
    (tmp_path / "bad.onnx").write_bytes(b"not a net")
    with pytest.raises(ValueError, match=r"bad\.onnx: cannot read"):
        chips_train.load_exported(chips_train.OffsetNet(spec), tmp_path / "bad.onnx")


@pytest.mark.train
def test_train_chips_cuts_patches_on_the_detectors_boxes_too(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`floorman models train-chips --detector-boxes`: the `floorman` command passes the shipped detector in (models
    may not import vision), and each stack it finds gets a patch on its box too, cached apart."""
    for module in (chips_data, chips_train):
        monkeypatch.setattr(module, "CHUNK", 2)
    args = ["models", "train-chips", "--seed", str(SEED), "--frames", "4", "--val-frames", "2", "--steps", "2",
            "--cache", str(tmp_path), "--out", str(tmp_path / "net.onnx")]
    assert main([*args, "--detector-boxes"]) == 0
    paths = sorted(tmp_path.glob("chunk_*.npz"))
    assert [p.name for p in paths] == [f"chunk_{SEED}_0_detector.npz", f"chunk_{SEED}_2_detector.npz"]
    samples = load_cache(paths, spec=PatchSpec())
    assert set(samples.kind.tolist()) == {0, 1, 2}
    # a detector box is matched to a stack (IoU >= 0.5): about as many as the stacks, its offset the stack's
    assert (samples.kind == 2).sum() >= 0.5 * (samples.kind == 0).sum()
    assert (samples.count[samples.kind == 2] >= 1).all()
    assert ChipOffsetNet(tmp_path / "net.onnx").spec.encode() == PatchSpec().encode()
    assert main(args) == 0  # without the flag: the plain chunks, rendered apart
    assert {p.name for p in tmp_path.glob("chunk_*.npz")} >= {f"chunk_{SEED}_0.npz", f"chunk_{SEED}_2.npz"}


def test_detector_boxes_need_the_detector_passed_in(tmp_path: Path) -> None:
    parser = argparse.ArgumentParser()
    models_cli.register(parser.add_subparsers())  # as registered without the `floorman` command's detector
    args = parser.parse_args(["models", "train-chips", "--detector-boxes", "--cache", str(tmp_path)])
    with pytest.raises(ConfigError, match="--detector-boxes needs a detector"):
        args.handler(args)


class _Detector:
    def __init__(self) -> None:
        self.names = {0: "card_face", 2: "chip"}

    def detect(self, frame: np.ndarray) -> Detections:
        assert frame.shape == (4, 4, 3)
        return Detections(xyxy=np.array([[0, 0, 10, 10], [5, 5, 20, 30], [1, 2, 3, 4]], dtype=np.float32),
                          confidence=np.ones(3, dtype=np.float32), class_id=np.array([2, 0, 2]))


def test_class_boxes_keep_the_named_class_only() -> None:
    detector = _Detector()
    boxes = class_boxes(detector, "chip")(np.zeros((4, 4, 3), np.uint8))
    np.testing.assert_array_equal(boxes, [[0, 0, 10, 10], [1, 2, 3, 4]])
    assert boxes.dtype == np.float64
    with pytest.raises(ConfigError, match="expected a class 'hand'"):
        class_boxes(detector, "hand")


@pytest.mark.parametrize("tilt", [0.0, 25.0, 45.0])
def test_the_recipes_patches_are_the_recognisers(tilt: float) -> None:
    """`chips_data.patch_matrix` on the simulator's camera and `chips_cnn.patch_geometry` on its exact calibration
    (the camera's height given) cut the same patch."""
    from floorman.vision.chips_cnn import PatchSpec as RuntimeSpec
    from floorman.vision.chips_cnn import patch_geometry
    from floorman.vision.chips_geometry import TableCamera

    height = 1300.0
    offset = height * np.tan(np.radians(tilt))
    camera = Camera.look_at(eye=(40.0, -offset, height), target=(0.0, 0.0, 0.0), size=(1280, 720), hfov_deg=55.0)
    model = TableCamera.from_homography(camera.table_homography(), image_size=(1280, 720), height_mm=height)
    spec = PatchSpec()
    assert RuntimeSpec().encode() == spec.encode()
    for box in ((600.0, 300.0, 630.0, 340.0), (100.0, 80.0, 122.0, 120.0), (1100.0, 600.0, 1125.0, 640.0)):
        ours = patch_matrix(camera, box, diameter_mm=39.0, spec=spec)
        theirs = patch_geometry(model, box, diameter_mm=39.0, spec=RuntimeSpec()).matrix
        corners = np.array([[box[0], box[1], 1.0], [box[2], box[3], 1.0], [box[0], box[3], 1.0]])
        # patch px: a calibration's camera with its height given is the simulator's within a few hundredths of a
        # pixel at small tilts, a tenth or two at 45 degrees (a tenth of a chip's step)
        np.testing.assert_allclose(corners @ ours.T, corners @ theirs.T, atol=0.05 if tilt < 30.0 else 0.25)
