"""The whole recipe on a toy dataset: train one epoch from a YAML, export fp32 + INT8, detect with the ONNX."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import pytest
from pydantic import ValidationError

from floorman.models.registry import model_info
from floorman.models.train import TrainConfig, TrainingError, prepare_data, train_arguments, train_detector
from floorman.vision.detector import OnnxDetector, OnnxDetectorConfig
from tests.models.toy_data import make_toy_dataset


def tiny_config(tmp_path: Path, *, data: Path) -> TrainConfig:
    return TrainConfig(data=data, levels=(160,), imgsz=160, epochs=1, batch=8, loader_workers=0, device="cpu",
                       runs_dir=tmp_path / "runs", name="tiny", cache=False)


def test_train_arguments_are_offline_from_scratch(tmp_path: Path) -> None:
    config = tiny_config(tmp_path, data=tmp_path / "data")
    arguments = train_arguments(config, data_yaml=tmp_path / "data.yaml")
    assert arguments["pretrained"] is False and arguments["device"] == "cpu" and arguments["imgsz"] == 160
    assert arguments["project"] == str((tmp_path / "runs").resolve()) and arguments["name"] == "tiny"
    assert "time" not in arguments
    timed = TrainConfig(data=tmp_path, time_hours=0.5)
    assert train_arguments(timed, data_yaml=tmp_path / "d.yaml")["time"] == 0.5
    tuned = TrainConfig(data=tmp_path, optimizer="AdamW", lr0=0.0005, lrf=0.1)
    assert {k: train_arguments(tuned, data_yaml=tmp_path / "d.yaml")[k] for k in ("optimizer", "lr0", "lrf")} == {
        "optimizer": "AdamW", "lr0": 0.0005, "lrf": 0.1}
    assert "freeze" not in arguments
    frozen = TrainConfig(data=tmp_path, weights=tmp_path / "last.pt", freeze=10)
    assert train_arguments(frozen, data_yaml=tmp_path / "d.yaml")["freeze"] == 10
    assert arguments["hsv_v"] == 0.4  # Ultralytics' own default, passed on: the shipped recipe's
    brighter = TrainConfig(data=tmp_path, hsv_v=0.6)  # reaches the x1.6 overexposure of benchmarks/photo_effects.py
    assert train_arguments(brighter, data_yaml=tmp_path / "d.yaml")["hsv_v"] == 0.6
    with pytest.raises(ValidationError, match="hsv_v"):
        TrainConfig(data=tmp_path, hsv_v=1.2)


def test_train_takes_the_brightness_flag_and_names_a_value_out_of_range(tmp_path: Path,
                                                                       capsys: pytest.CaptureFixture[str]) -> None:
    from floorman.cli import main

    for flags, message in ((["--hsv-v", "1.5"], "field '--hsv-v': Input should be less than 1, got 1.5"),
                           (["--balance", "2"], "field '--balance': Input should be less than or equal to 1"),
                           (["--render-workers", "0"], "field '--render-workers': Input should be greater")):
        assert main(["models", "train", "--data", str(tmp_path / "none"), *flags]) == 2
        assert message in capsys.readouterr().err
    assert not (tmp_path / "none").exists()  # stopped before anything was rendered or cut


def test_fine_tuning_needs_an_existing_checkpoint(tmp_path: Path) -> None:
    source = make_toy_dataset(tmp_path / "toy", count=4)
    config = tiny_config(tmp_path, data=source).model_copy(update={"weights": tmp_path / "missing.pt"})
    with pytest.raises(TrainingError, match=r"missing\.pt"):
        train_detector(config)


def test_freezing_needs_a_checkpoint(tmp_path: Path) -> None:
    config = tiny_config(tmp_path, data=tmp_path / "data").model_copy(update={"freeze": 10})
    with pytest.raises(TrainingError, match=r"--freeze 10: expected --weights"):
        train_detector(config)


def test_prepare_data_cuts_the_windows_once(tmp_path: Path) -> None:
    source = make_toy_dataset(tmp_path / "toy", count=4)
    config = tiny_config(tmp_path, data=source)
    first = prepare_data(config)
    assert first.name == "data.yaml" and first.parent.name == "windows_160_160"
    assert prepare_data(config) == first


@pytest.mark.train
@pytest.mark.slow
def test_train_export_and_detect(tmp_path: Path) -> None:
    pytest.importorskip("ultralytics")
    pytest.importorskip("onnx")
    from floorman.models.export import ExportConfig, calibration_images, decode_tail_nodes, export_detector

    source = make_toy_dataset(tmp_path / "toy", count=12)
    config = tiny_config(tmp_path, data=source)
    best = train_detector(config)
    assert best.is_file() and (best.parent / "last.pt").is_file()
    assert train_detector(config) == best  # a finished run resumes to nothing and keeps its checkpoint

    tuned = train_detector(config.model_copy(update={"weights": best, "name": "tuned", "optimizer": "AdamW",
                                                     "lr0": 0.0005, "warmup_epochs": 0.0, "threads": 1}))
    assert tuned.is_file() and tuned.parent.parent.name == "tuned"

    images = calibration_images(tmp_path / "runs" / "tiny" / "windows_160_160" / "images", count=8)
    result = export_detector(ExportConfig(weights=best, out_dir=tmp_path / "onnx", imgsz=160, levels=(160,),
                                          calibration_images=images))
    assert result.int8 is not None
    for path in (result.fp32, result.int8):
        info = model_info(path)
        assert info.imgsz == 160 and info.levels == (160,) and info.names[2] == "chip"
        assert info.size_mb <= 15.0

    import onnx

    quantised = onnx.load(str(result.int8))
    ops = {node.op_type for node in quantised.graph.node}
    assert "QuantizeLinear" in ops and "DequantizeLinear" in ops
    tail = set(decode_tail_nodes(onnx.load(str(result.fp32))))
    assert any("dfl" in name for name in tail) and not any("/cv2." in name for name in tail)
    tail_outputs = {out for node in quantised.graph.node if node.name in tail for out in node.output}
    assert tail_outputs, "the decode tail must survive quantisation by name"
    assert not any(set(node.input) & tail_outputs for node in quantised.graph.node if node.op_type == "QuantizeLinear")

    frame = cv2.imread(str(sorted((source / "images" / "train").iterdir())[0]))
    for path in (result.fp32, result.int8):
        detector = OnnxDetector(OnnxDetectorConfig(model=path, conf=0.0001))
        found = detector.detect(np.asarray(frame))
        assert detector.levels == (160,)
        assert len(found) > 0 and np.all(found.xyxy[:, 2] <= frame.shape[1])
