"""The INT8 export: which nodes stay fp32, the calibration method, quantising an existing fp32 ONNX."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest

from floorman.cli import main
from floorman.models.registry import WEIGHTS_DIR

onnx = pytest.importorskip("onnx")
pytest.importorskip("pydantic")

from floorman.models.export import ExportConfig, calibration_chunk, export_detector, float_nodes  # noqa: E402

STEM = "/model.0/conv/Conv"
HEAD_OUTPUTS = [f"/model.23/{branch}.{scale}/{branch}.{scale}.2/Conv"
                for scale in range(3) for branch in ("cv2", "cv3")]


def _silu_conv(name: str, source: str, weight: np.ndarray) -> tuple[list[Any], Any, str]:
    """Ultralytics' Conv block: NAME/conv/Conv, then SiLU as NAME/act/Sigmoid and NAME/act/Mul."""
    from onnx import helper, numpy_helper

    out = f"{name}/act/Mul_output_0"
    nodes = [helper.make_node("Conv", [source, f"{name}.w"], [f"{name}/conv/Conv_output_0"], name=f"{name}/conv/Conv",
                              pads=[1, 1, 1, 1]),
             helper.make_node("Sigmoid", [f"{name}/conv/Conv_output_0"], [f"{name}/act/Sigmoid_output_0"],
                              name=f"{name}/act/Sigmoid"),
             helper.make_node("Mul", [f"{name}/conv/Conv_output_0", f"{name}/act/Sigmoid_output_0"], [out],
                              name=f"{name}/act/Mul")]
    return nodes, numpy_helper.from_array(weight, f"{name}.w"), out


def tiny_yolo(path: Path, *, imgsz: int = 32) -> Path:
    """A stem, one backbone conv and a one-scale head with Ultralytics' node names (cv2 box, cv3 class branch)."""
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(0)
    weight = lambda *shape: rng.normal(0, 0.3, shape).astype(np.float32)  # noqa: E731
    nodes: list[Any] = []
    weights: list[Any] = []
    for name, source, shape in (
            ("/model.0", "images", (8, 3, 3, 3)), ("/model.1", "/model.0/act/Mul_output_0", (8, 8, 3, 3)),
            ("/model.2/cv2.0/cv2.0.0", "/model.1/act/Mul_output_0", (8, 8, 3, 3)),
            ("/model.2/cv3.0/cv3.0.0/cv3.0.0.0", "/model.1/act/Mul_output_0", (8, 8, 3, 3))):
        block, w, _ = _silu_conv(name, source, weight(*shape))
        nodes += block
        weights.append(w)
    for branch, channels, source in (("cv2", 4, "/model.2/cv2.0/cv2.0.0/act/Mul_output_0"),
                                     ("cv3", 5, "/model.2/cv3.0/cv3.0.0/cv3.0.0.0/act/Mul_output_0")):
        name = f"/model.2/{branch}.0/{branch}.0.2/Conv"
        nodes.append(helper.make_node("Conv", [source, f"{name}.w"], [f"{name}_output_0"], name=name))
        weights.append(numpy_helper.from_array(weight(channels, 8, 1, 1), f"{name}.w"))
    heads = ["/model.2/cv2.0/cv2.0.2/Conv_output_0", "/model.2/cv3.0/cv3.0.2/Conv_output_0"]
    nodes += [helper.make_node("Concat", heads, ["cat"], name="/model.2/Concat", axis=1),
              helper.make_node("Reshape", ["cat", "shape"], ["output0"], name="/model.2/Reshape")]
    weights.append(numpy_helper.from_array(np.array([1, 9, imgsz * imgsz], dtype=np.int64), "shape"))
    graph = helper.make_graph(nodes, "tiny", [helper.make_tensor_value_info("images", TensorProto.FLOAT,
                                                                            [1, 3, imgsz, imgsz])],
                              [helper.make_tensor_value_info("output0", TensorProto.FLOAT, [1, 9, imgsz * imgsz])],
                              initializer=weights)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 9
    for key, value in {"names": "{0: 'a', 1: 'b', 2: 'c', 3: 'd', 4: 'e'}", "imgsz": f"[{imgsz}, {imgsz}]",
                       "stride": "8", "floorman_levels": str(imgsz)}.items():
        model.metadata_props.add(key=key, value=value)
    onnx.save(model, str(path))
    return path


def calibration_windows(folder: Path, *, count: int, imgsz: int = 32) -> tuple[Path, ...]:
    folder.mkdir(parents=True)
    rng = np.random.default_rng(1)
    paths = tuple(folder / f"w{i}.png" for i in range(count))
    for path in paths:
        cv2.imwrite(str(path), rng.integers(0, 256, (imgsz, imgsz, 3), dtype=np.uint8))
    return paths


def weight_sources(model: Any) -> dict[str, str]:
    """Conv name -> 'fp32' when its weight is a float initializer, 'int8' when a DequantizeLinear makes it."""
    floats = {t.name for t in model.graph.initializer if t.data_type == onnx.TensorProto.FLOAT}
    dequantised = {out for node in model.graph.node if node.op_type == "DequantizeLinear" for out in node.output}
    sources = {}
    for node in model.graph.node:
        if node.op_type == "Conv":
            sources[node.name] = "fp32" if node.input[1] in floats else "int8" if node.input[1] in dequantised else "?"
    return sources


def activation_scale(model: Any, tensor: str) -> float:
    """The scale of the QuantizeLinear that quantises `tensor`."""
    from onnx import numpy_helper

    initializers = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
    node = next(n for n in model.graph.node if n.op_type == "QuantizeLinear" and n.input[0] == tensor)
    return float(initializers[node.input[1]])


def test_float_nodes_are_the_decode_tail_the_stem_and_the_head_outputs(tmp_path: Path) -> None:
    model = onnx.load(str(tiny_yolo(tmp_path / "tiny.onnx")))
    assert float_nodes(model) == ["/model.2/Concat", "/model.2/Reshape", STEM,
                                  "/model.2/cv2.0/cv2.0.2/Conv", "/model.2/cv3.0/cv3.0.2/Conv"]


def test_the_shipped_fp32_model_keeps_its_stem_and_six_head_outputs() -> None:
    kept = float_nodes(onnx.load(str(WEIGHTS_DIR / "detector.onnx")))
    assert STEM in kept and all(name in kept for name in HEAD_OUTPUTS)
    assert sum(1 for name in kept if name.endswith("Conv") and "/dfl/" not in name) == 1 + len(HEAD_OUTPUTS)


def test_the_shipped_int8_model_runs_its_stem_and_head_outputs_in_fp32() -> None:
    sources = weight_sources(onnx.load(str(WEIGHTS_DIR / "detector_int8.onnx")))
    assert {name: sources[name] for name in [STEM, *HEAD_OUTPUTS]} == dict.fromkeys([STEM, *HEAD_OUTPUTS], "fp32")
    quantised = [name for name, source in sources.items() if source == "int8"]
    # every other conv is INT8 but the DFL's (decode tail, a fixed 0..15 weighting)
    assert "/model.1/conv/Conv" in quantised and len(quantised) == len(sources) - 1 - len(HEAD_OUTPUTS) - 1


def test_quantising_an_fp32_onnx_leaves_the_float_nodes_and_keeps_its_metadata(tmp_path: Path) -> None:
    fp32 = tiny_yolo(tmp_path / "tiny.onnx")
    images = calibration_windows(tmp_path / "windows", count=6)
    result = export_detector(ExportConfig(fp32=fp32, out_dir=tmp_path / "out", name="tiny", imgsz=32,
                                          calibration_images=images))
    assert result.fp32 == fp32 and result.int8 == tmp_path / "out" / "tiny_int8.onnx"
    quantised = onnx.load(str(result.int8))
    assert weight_sources(quantised) == {
        "/model.0/conv/Conv": "fp32", "/model.1/conv/Conv": "int8", "/model.2/cv2.0/cv2.0.0/conv/Conv": "int8",
        "/model.2/cv3.0/cv3.0.0/cv3.0.0.0/conv/Conv": "int8", "/model.2/cv2.0/cv2.0.2/Conv": "fp32",
        "/model.2/cv3.0/cv3.0.2/Conv": "fp32"}
    assert {p.key: p.value for p in quantised.metadata_props}["floorman_levels"] == "32"


def test_percentile_calibration_clips_the_activation_ranges_minmax_keeps_whole(tmp_path: Path) -> None:
    fp32 = tiny_yolo(tmp_path / "tiny.onnx")
    images = calibration_windows(tmp_path / "windows", count=6)
    scales = {}
    for method in ("minmax", "percentile"):
        result = export_detector(ExportConfig(fp32=fp32, out_dir=tmp_path / method, name="tiny", imgsz=32,
                                              calibration_images=images, calibration_method=method,
                                              calibration_percentile=99.0))
        assert result.int8 is not None
        scales[method] = activation_scale(onnx.load(str(result.int8)), "/model.1/act/Mul_output_0")
    assert scales["percentile"] < 0.9 * scales["minmax"]


@pytest.mark.parametrize(("count", "chunk"), [(64, 16), (6, 6), (40, 10), (17, 1), (512, 16)])
def test_calibration_runs_in_chunks_that_divide_the_image_count(count: int, chunk: int) -> None:
    assert calibration_chunk(count) == chunk


@pytest.mark.parametrize(("extra", "message"), [
    ([], r"expected either --weights .* or --fp32 .*, got neither"),
    (["--weights", "best.pt", "--fp32", "detector.onnx"], r"got both"),
    (["--fp32", "detector.onnx", "--no-int8"], r"expected no --no-int8"),
])
def test_export_takes_weights_or_an_fp32_onnx(extra: list[str], message: str, tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["models", "export", "--out", str(tmp_path), *extra]) == 2
    assert re.search(message, capsys.readouterr().err)


def test_export_refuses_a_percentile_outside_90_to_100(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["models", "export", "--fp32", "detector.onnx", "--percentile", "99.9x"])
    with pytest.raises(SystemExit):
        main(["models", "export", "--fp32", "detector.onnx", "--percentile", "50"])
    assert "--percentile: expected a percentage above 90 and at most 100, got '50'" in capsys.readouterr().err
