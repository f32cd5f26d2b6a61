"""`floorman models recover`: the shipped ONNX detector back to a checkpoint that exports and trains as it was."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest

from floorman.cli import main
from floorman.models.registry import WEIGHTS_DIR
from tests.models.toy_data import make_toy_dataset

pytest.importorskip("onnx")
SHIPPED = WEIGHTS_DIR / "detector.onnx"


def _images(tmp_path: Path) -> list[Path]:
    """Four 320x240 toy frames (fed whole) and one 1280x720 frame (cut into the pyramid's windows)."""
    source = make_toy_dataset(tmp_path / "toy", count=4)
    small = sorted((source / "images").rglob("*.png"))
    big = tmp_path / "big.png"
    cv2.imwrite(str(big), cv2.resize(cv2.imread(str(small[0])), (1280, 720)))
    return [*small, big]


def _raw(network: Any, batch: Any, *, train: bool) -> Any:
    import torch

    net = copy.deepcopy(network)
    net.train(train)
    with torch.no_grad():
        out = net(batch)
    return (out if train else out[1])["scores"]


@pytest.mark.train
@pytest.mark.slow
def test_recover_rebuilds_the_shipped_detector(tmp_path: Path) -> None:
    pytest.importorskip("ultralytics")
    import onnxruntime as ort
    import torch

    from floorman.models.export import ExportConfig, export_detector, letterbox_tensor
    from floorman.models.recover import RecoverConfig, recover_checkpoint, windows
    from floorman.models.train import TrainConfig, train_detector

    images = _images(tmp_path)
    result = recover_checkpoint(RecoverConfig(onnx_path=SHIPPED, out=tmp_path / "rec.pt", images=tuple(images),
                                              threads=1))
    assert (result.convolutions, result.norms, result.images) == (88, 81, 5)
    assert result.windows == 4 + len(windows(np.zeros((720, 1280, 3), np.uint8), imgsz=320, levels=(320, 960)))
    assert result.box_px < 0.01 and result.score < 1e-4

    checkpoint = torch.load(str(result.out), map_location="cpu", weights_only=False)
    network = checkpoint["model"].float()
    assert network.names == {0: "card_face", 1: "card_back", 2: "chip", 3: "dealer_button", 4: "hand"}
    assert checkpoint["floorman_levels"] == "320,960" and checkpoint["optimizer"] is None
    # the norms hold measured statistics: in train mode (batch statistics) the network stays closer to itself
    # than one whose norms were unfolded as mean 0, variance 1 (what the function alone would allow)
    naive = copy.deepcopy(network)
    for norm in (m for m in naive.modules() if isinstance(m, torch.nn.BatchNorm2d)):
        assert float(norm.running_var.std()) > 0
        with torch.no_grad():
            norm.bias.sub_(norm.running_mean)
            norm.running_mean.zero_()
            norm.running_var.fill_(1.0)
            norm.weight.fill_(float(np.sqrt(1.0 + norm.eps)))
    batch = torch.from_numpy(np.concatenate([letterbox_tensor(cv2.imread(str(p)), 320) for p in images[:4]]))
    recovered_gap = (_raw(network, batch, train=True) - _raw(network, batch, train=False)).abs().mean()
    naive_gap = (_raw(naive, batch, train=True) - _raw(naive, batch, train=False)).abs().mean()
    assert float((_raw(naive, batch, train=False) - _raw(network, batch, train=False)).abs().max()) < 1e-3
    assert float(recovered_gap) < 0.7 * float(naive_gap)  # toy frames 1.95 against 3.20; rendered windows 0.80 / 3.22

    # exported again, it is the shipped detector
    exported = export_detector(ExportConfig(weights=result.out, out_dir=tmp_path / "onnx", name="again", int8=False))
    tensor = letterbox_tensor(cv2.imread(str(images[0])), 320)
    outputs = [ort.InferenceSession(str(path), providers=["CPUExecutionProvider"]).run(None, {"images": tensor})[0]
               for path in (SHIPPED, exported.fp32)]
    assert np.abs(outputs[0] - outputs[1]).max() < 1e-2

    # and it fine-tunes: `floorman models train --weights` starts from it
    tuned = train_detector(TrainConfig(
        data=make_toy_dataset(tmp_path / "tune", count=6), levels=(320,), imgsz=320, epochs=1, batch=4,
        loader_workers=0, device="cpu", runs_dir=tmp_path / "runs", name="tuned", cache=False, weights=result.out,
        freeze=10, optimizer="AdamW", lr0=0.0001, warmup_epochs=0.0, threads=1))
    assert tuned.is_file()


@pytest.mark.train
def test_recover_names_the_tensor_another_model_size_has_no_room_for(tmp_path: Path) -> None:
    pytest.importorskip("ultralytics")
    from floorman.models.recover import RecoverConfig, RecoverError, recover_checkpoint

    out = tmp_path / "rec.pt"
    with pytest.raises(RecoverError, match=r"model\.0\.conv\.weight has shape \(16, 3, 3, 3\), the model YAML's "
                                           r"\(32, 3, 3, 3\)"):
        recover_checkpoint(RecoverConfig(onnx_path=SHIPPED, out=out, images=tuple(_images(tmp_path)),
                                         model="yolo11s.yaml"))
    assert not out.exists()


def test_recover_flags_are_checked_before_anything_is_read(tmp_path: Path,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "rec.pt"
    assert main(["models", "recover", "--calibration", str(tmp_path / "none"), "--out", str(out)]) == 2
    assert "--calibration" in capsys.readouterr().err
    assert main(["models", "recover", "--calibration", str(tmp_path), "--calibration-count", "0",
                 "--out", str(out)]) == 2
    assert "field '--calibration-count': expected at least 1, got 0" in capsys.readouterr().err
    assert not out.exists()


@pytest.mark.train
def test_recover_names_an_unreadable_image_and_writes_nothing(tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("ultralytics")
    folder = tmp_path / "calib"
    folder.mkdir()
    (folder / "broken.jpg").write_bytes(b"not a jpeg")
    out = tmp_path / "rec.pt"
    out.write_bytes(b"an earlier checkpoint")
    assert main(["models", "recover", "--calibration", str(folder), "--out", str(out)]) != 0
    assert "broken.jpg: not a readable calibration image" in capsys.readouterr().err
    assert out.read_bytes() == b"an earlier checkpoint"
    missing = tmp_path / "missing.onnx"
    assert main(["models", "recover", "--onnx", str(missing), "--calibration", str(folder), "--out", str(out)]) != 0
    assert "missing.onnx" in capsys.readouterr().err
