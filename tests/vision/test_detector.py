from __future__ import annotations

import itertools
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from pydantic import TypeAdapter, ValidationError

from floorman.core.errors import ConfigError
from floorman.vision.detections import Detections
from floorman.vision.detector import (
    DETECTOR_TYPES,
    DetectorConfig,
    OnnxDetector,
    OnnxDetectorConfig,
    create_detector,
    decode,
    letterbox,
    nms,
    parse_names,
    tile_origins,
)

NAMES = {0: "card_face", 1: "card_back", 2: "chip", 3: "dealer_button", 4: "hand"}


def yolo_output(rows: list[tuple[float, float, float, float, int, float]], *, anchors: int = 6) -> np.ndarray:
    """A (1, 4 + 5, anchors) YOLO output: one anchor per row (cx, cy, w, h, class, score), the rest empty."""
    out = np.zeros((1, 4 + len(NAMES), anchors), dtype=np.float32)
    for a, (cx, cy, w, h, cls, score) in enumerate(rows):
        out[0, :4, a] = (cx, cy, w, h)
        out[0, 4 + cls, a] = score
        out[0, 4 + (cls + 1) % len(NAMES), a] = score / 10  # a weaker second class
    return out


def constant_model(path: Path, output: np.ndarray, *, imgsz: int, levels: tuple[int, ...] = ()) -> Path:
    """An ONNX 'detector' that ignores its input and always returns `output`, with Ultralytics metadata."""
    onnx = pytest.importorskip("onnx")
    from onnx import TensorProto, helper, numpy_helper

    images = helper.make_tensor_value_info("images", TensorProto.FLOAT, [1, 3, imgsz, imgsz])
    result = helper.make_tensor_value_info("output0", TensorProto.FLOAT, list(output.shape))
    graph = helper.make_graph([helper.make_node("Identity", ["pred"], ["output0"])], "constant", [images],
                              [result], initializer=[numpy_helper.from_array(output, "pred")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 9
    for key, value in {"names": str(NAMES), "imgsz": str([imgsz, imgsz]),
                       "floorman_levels": ",".join(str(level) for level in levels)}.items():
        model.metadata_props.add(key=key, value=value)
    onnx.save(model, str(path))
    return path


def test_decode_keeps_scores_above_conf_and_converts_boxes() -> None:
    out = yolo_output([(50, 40, 20, 10, 2, 0.9), (10, 10, 4, 4, 0, 0.1), (80, 80, 10, 30, 4, 0.6)])
    xyxy, score, cls = decode(out, conf=0.25)
    assert cls.tolist() == [2, 4]
    np.testing.assert_allclose(score, [0.9, 0.6], rtol=1e-6)
    np.testing.assert_allclose(xyxy, [[40, 35, 60, 45], [75, 65, 85, 95]])
    with pytest.raises(ValueError, match=r"expected a YOLO output .* got \(3,\)"):
        decode(np.zeros(3, dtype=np.float32), conf=0.1)


def test_nms_is_class_wise() -> None:
    d = Detections(xyxy=np.array([[0, 0, 10, 10], [1, 1, 11, 11], [0, 0, 10, 10], [50, 50, 60, 60]]),
                   confidence=np.array([0.8, 0.9, 0.7, 0.5]), class_id=np.array([2, 2, 0, 2]))
    kept = nms(d, iou=0.5)
    assert kept.confidence.tolist() == pytest.approx([0.9, 0.7, 0.5])
    assert kept.class_id.tolist() == [2, 0, 2]


def test_nms_merges_a_box_cut_by_a_tile_edge_into_the_whole() -> None:
    d = Detections(xyxy=np.array([[100, 100, 140, 140], [100, 100, 118, 140], [105, 100, 118, 140]]),
                   confidence=np.array([0.6, 0.9, 0.8]), class_id=np.array([2, 2, 2]))
    cut = np.array([False, True, True])
    merged = nms(d, iou=0.5, containment=0.7, group=np.array([0, 1, 1]), cut=cut)
    assert len(merged) == 1
    assert merged.xyxy[0].tolist() == [100, 100, 140, 140]
    assert merged.confidence.tolist() == pytest.approx([0.9])
    uncut = nms(d, iou=0.5, containment=0.7, group=np.array([0, 1, 1]), cut=np.zeros(3, dtype=bool))
    assert len(uncut) == 2  # whole boxes from two windows are distinct objects unless their IoU says otherwise


def test_letterbox_and_tiles() -> None:
    image = np.full((100, 200, 3), 7, dtype=np.uint8)
    boxed, scale, (dx, dy) = letterbox(image, 64)
    assert boxed.shape == (64, 64, 3) and scale == pytest.approx(0.32)
    assert (dx, dy) == (0.0, 16.0)
    assert boxed[0, 0].tolist() == [114, 114, 114] and boxed[32, 32].tolist() == [7, 7, 7]
    assert tile_origins(300, tile=480, overlap=0.25) == [0]
    origins = tile_origins(1280, tile=480, overlap=0.25)
    assert origins[0] == 0 and origins[-1] == 1280 - 480
    assert all(b - a <= 480 * 0.75 for a, b in itertools.pairwise(origins))


def test_config_union_and_backend_table(tmp_path: Path) -> None:
    adapter: TypeAdapter[OnnxDetectorConfig] = TypeAdapter(DetectorConfig)
    config = adapter.validate_python({"type": "onnx", "model": str(tmp_path / "m.onnx"), "threads": 2})
    assert isinstance(config, OnnxDetectorConfig) and config.threads == 2
    assert DETECTOR_TYPES["onnx"] is OnnxDetector
    with pytest.raises(ValidationError, match="does not match any of the expected tags"):
        adapter.validate_python({"type": "tensorrt", "model": "m.engine"})
    with pytest.raises(ConfigError, match="no such file"):
        create_detector(config)


def test_parse_names() -> None:
    assert parse_names("{0: 'a', 1: 'b'}", source=Path("m.onnx")) == {0: "a", 1: "b"}
    assert parse_names("['a', 'b']", source=Path("m.onnx")) == {0: "a", 1: "b"}
    with pytest.raises(ConfigError, match="expected a dict of class names"):
        parse_names("not names", source=Path("m.onnx"))


def test_whole_frame_path_maps_boxes_back_through_the_letterbox(tmp_path: Path) -> None:
    # A 64 px model input; a 200x100 frame letterboxes at scale 0.32 with 16 px of padding above.
    out = yolo_output([(32, 32, 16, 8, 2, 0.9), (10, 40, 4, 4, 4, 0.3)])
    model = constant_model(tmp_path / "c.onnx", out, imgsz=64)
    detector = create_detector(OnnxDetectorConfig(model=model, conf=0.25))
    assert detector.names == NAMES
    found = detector.detect(np.zeros((100, 200, 3), dtype=np.uint8))
    assert found.class_id.tolist() == [2, 4]
    np.testing.assert_allclose(found.xyxy[0], [(24 - 0) / 0.32, (28 - 16) / 0.32, 40 / 0.32, (36 - 16) / 0.32],
                               rtol=1e-5)
    with pytest.raises(ValueError, match=r"expected a BGR uint8 image"):
        detector.detect(np.zeros((10, 10), dtype=np.uint8))


def test_pyramid_levels_window_the_resized_frame(tmp_path: Path) -> None:
    # Input 64; level 384 resizes a 192x128 frame by 2 to 384x256: 6 x 4 windows of 64 without overlap. The
    # constant box sits at (8..24, 8..24) in every window, i.e. (4..12) + window origin / 2 in frame pixels.
    model = constant_model(tmp_path / "t.onnx", yolo_output([(16, 16, 16, 16, 2, 0.8)]), imgsz=64, levels=(384,))
    detector = OnnxDetector(OnnxDetectorConfig(model=model, overlap=0.0))
    assert detector.levels == (384,)
    frame = np.zeros((128, 192, 3), dtype=np.uint8)
    scale, windows = detector.windows(192, 128, level=384)
    assert scale == 2.0 and len(windows) == 24
    found = detector.detect(frame)
    expected = sorted((x0 / 2 + 4, y0 / 2 + 4) for x0, y0, _, _ in windows)
    np.testing.assert_allclose(sorted((float(b[0]), float(b[1])) for b in found.xyxy), expected)
    whole = OnnxDetector(OnnxDetectorConfig(model=model, levels=()))
    assert whole.levels == (64,) and len(whole.detect(frame)) == 1
    two = OnnxDetector(OnnxDetectorConfig(model=model, levels=(64, 384), overlap=0.0, coarse_min_px=0.0))
    assert len(two.detect(frame)) == 25  # the coarse box (whole frame) overlaps none of the fine ones enough
    with pytest.raises(ConfigError, match="expected imgsz 64"):
        OnnxDetector(OnnxDetectorConfig(model=model, imgsz=128))


def test_each_level_keeps_the_box_sizes_it_sees_best(tmp_path: Path) -> None:
    # The same 16 px box in every window of both levels: 16 px is below coarse_min_px at the coarse level
    # (64, one window), so only the 24 fine windows' boxes stay; with fine_max_px under 16 only the coarse one.
    model = constant_model(tmp_path / "t.onnx", yolo_output([(16, 16, 16, 16, 2, 0.8)]), imgsz=64, levels=(384,))
    frame = np.zeros((128, 192, 3), dtype=np.uint8)
    fine = OnnxDetector(OnnxDetectorConfig(model=model, levels=(64, 384), overlap=0.0, coarse_min_px=20.0))
    assert len(fine.detect(frame)) == 24
    coarse = OnnxDetector(OnnxDetectorConfig(model=model, levels=(64, 384), overlap=0.0, coarse_min_px=0.0,
                                             fine_max_px=10.0))
    found = coarse.detect(frame)
    assert len(found) == 1 and float(found.xyxy[0, 2] - found.xyxy[0, 0]) > 40  # 16 px at 64 = 48 frame px


def test_boxes_cut_by_an_inner_window_edge_at_a_fine_level_are_dropped_unless_merged(tmp_path: Path) -> None:
    # Each window finds a chip and a hand touching its right edge (x 48..64 of 64). Without overlap, 384x256 is
    # 6 x 4 windows; only the last column's right edge is the frame's edge, so the other 20 boxes of each class
    # are cut. The coarse level is silenced (coarse_min_px) to look at the fine level alone.
    rows = [(56, 16, 16, 16, 2, 0.8), (56, 48, 16, 16, 4, 0.8)]
    model = constant_model(tmp_path / "t.onnx", yolo_output(rows), imgsz=64, levels=(64, 384))
    frame = np.zeros((128, 192, 3), dtype=np.uint8)
    config = OnnxDetectorConfig(model=model, overlap=0.0, coarse_min_px=1000.0)
    found = OnnxDetector(config).detect(frame)
    assert int((found.class_id == 2).sum()) == 4 and int((found.class_id == 4).sum()) == 4
    assert (found.xyxy[:, 2] == 192).all()  # the boxes kept end at the frame's edge
    hands = OnnxDetector(config.model_copy(update={"merge_cut_classes": ("hand",)})).detect(frame)
    assert int((hands.class_id == 2).sum()) == 4 and int((hands.class_id == 4).sum()) == 24
    both = OnnxDetector(config.model_copy(update={"merge_cut_classes": ("hand", "chip")})).detect(frame)
    assert int((both.class_id == 2).sum()) == 24
    single = OnnxDetector(config.model_copy(update={"levels": (384,)})).detect(frame)
    assert int((single.class_id == 2).sum()) == 24  # one level: nothing coarser to see the whole object


def test_detector_modules_import_neither_torch_nor_ultralytics() -> None:
    code = ("import sys, floorman.vision.detector, floorman.vision.detect_cli, floorman.vision.detections; "
            "bad = [m for m in ('torch', 'ultralytics', 'floorman.models', 'floorman.datasets') if m in sys.modules]; "
            "print(bad); sys.exit(1 if bad else 0)")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stdout + result.stderr
