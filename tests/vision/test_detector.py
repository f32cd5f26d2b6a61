from __future__ import annotations

import itertools
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from pydantic import TypeAdapter, ValidationError

from floorman.core.errors import ConfigError
from floorman.vision.detections import ALTERNATIVE_BOX, Detections, alternative_box
from floorman.vision.detector import (
    DETECTOR_TYPES,
    DetectorConfig,
    OnnxDetector,
    OnnxDetectorConfig,
    cover_windows,
    create_detector,
    crowded,
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


def constant_model(path: Path, output: np.ndarray, *, imgsz: int, levels: tuple[int, ...] = (),
                   names: dict[int, str] = NAMES) -> Path:
    """An ONNX 'detector' that ignores its input and always returns `output`, with Ultralytics metadata."""
    onnx = pytest.importorskip("onnx")
    from onnx import TensorProto, helper, numpy_helper

    images = helper.make_tensor_value_info("images", TensorProto.FLOAT, [1, 3, imgsz, imgsz])
    result = helper.make_tensor_value_info("output0", TensorProto.FLOAT, list(output.shape))
    graph = helper.make_graph([helper.make_node("Identity", ["pred"], ["output0"])], "constant", [images],
                              [result], initializer=[numpy_helper.from_array(output, "pred")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 9
    for key, value in {"names": str(names), "imgsz": str([imgsz, imgsz]),
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


def test_cover_windows_hold_every_box_once_inside_the_frame() -> None:
    rng = np.random.default_rng(3)
    centres = rng.uniform(0, 1000, size=(40, 2))
    sizes = rng.uniform(5, 40, size=(40, 2))
    boxes = np.clip(np.hstack([centres - sizes / 2, centres + sizes / 2]), 0, [1000, 600, 1000, 600])
    windows = cover_windows(boxes, span=150.0, width=1000, height=600, margin=2.0)
    held = sorted(i for _, members in windows for i in members)
    assert held == list(range(40))
    for (x0, y0, x1, y1), members in windows:
        assert 0 <= x0 < x1 <= 1000 and 0 <= y0 < y1 <= 600 and x1 - x0 == y1 - y0 == 150
        inside = [(boxes[i, :2] >= (x0, y0)).all() and (boxes[i, 2:] <= (x1, y1)).all() for i in members]
        assert sum(inside) >= len(members) - 1  # the box a window is centred on may overrun it
    assert len(windows) < 40  # neighbours share windows
    big = cover_windows(np.array([[10.0, 10.0, 400.0, 300.0]]), span=150.0, width=1000, height=600, margin=2.0)
    assert [members for _, members in big] == [[0]]  # held by the window centred on it, though it overruns it


def test_crowded_boxes_have_a_neighbour_within_a_share_of_their_side() -> None:
    boxes = np.array([[0, 0, 40, 40], [45, 0, 85, 40], [200, 0, 240, 40], [0, 300, 20, 320], [0, 324, 20, 344]],
                     dtype=np.float64)
    # 5 px apart (a quarter of 40 is 10: both crowded), a lone box, two 20 px boxes 4 px apart (a quarter is 5)
    assert crowded(boxes, gap=0.25).tolist() == [True, True, False, True, True]
    assert crowded(boxes, gap=0.1).tolist() == [False, False, False, False, False]
    diagonal = np.array([[0, 0, 40, 40], [48, 48, 88, 88]], dtype=np.float64)  # 8 px apart on both axes
    assert crowded(diagonal, gap=0.25).tolist() == [True, True]
    assert crowded(boxes[:1], gap=1.0).tolist() == [False]


def test_small_chip_boxes_are_found_again_at_a_finer_scale(tmp_path: Path) -> None:
    # Input 64, one level of 128 on a 512x512 frame (scale 0.25): the constant chip (24..40 of every window)
    # is 64 frame px at the pyramid's level, one box per window. refine_px 28 asks for a scale of 28 / 64 =
    # 0.4375: windows of 64 / 0.4375 frame px centred on each box, where the same constant box is 16 / 0.4375
    # = 36.6 frame px, centred on the window. With refine_iou under their IoU the finer box replaces it.
    model = constant_model(tmp_path / "t.onnx", yolo_output([(32, 32, 16, 16, 2, 0.8)]), imgsz=64, levels=(128,))
    frame = np.zeros((512, 512, 3), dtype=np.uint8)
    config = OnnxDetectorConfig(model=model, overlap=0.0, refine_iou=0.3, refine_near=None, refine_px=28.0)
    coarse = OnnxDetector(config.model_copy(update={"refine_classes": ()})).detect(frame)
    fine = OnnxDetector(config).detect(frame)
    assert len(coarse) == len(fine) == 4
    coarse_side = coarse.xyxy[:, 2] - coarse.xyxy[:, 0]
    fine_side = fine.xyxy[:, 2] - fine.xyxy[:, 0]
    np.testing.assert_allclose(coarse_side, 64.0, atol=1e-3)
    np.testing.assert_allclose(fine_side, 16 / 0.4375, atol=0.2)
    np.testing.assert_allclose((fine.xyxy[:, :2] + fine.xyxy[:, 2:]) / 2, (coarse.xyxy[:, :2] + coarse.xyxy[:, 2:]) / 2,
                               atol=1.5)  # each window is centred on its box (to a pixel)
    strict = OnnxDetector(config.model_copy(update={"refine_iou": 0.6})).detect(frame)
    np.testing.assert_allclose(strict.xyxy, coarse.xyxy)  # IoU 0.33: not the same object, kept as it was
    # refine_px 19: a scale of 0.297, under 1.25 x 0.25; the box found there (16 / 0.297 = 54 px, IoU 0.71) would
    # replace it, but a look so little finer than the pyramid's is not taken.
    barely = OnnxDetector(config.model_copy(update={"refine_px": 19.0})).detect(frame)
    np.testing.assert_allclose(barely.xyxy, coarse.xyxy)
    unsure = OnnxDetector(config.model_copy(update={"refine_min_confidence": 0.9})).detect(frame)
    np.testing.assert_allclose(unsure.xyxy, coarse.xyxy)  # the boxes' score is 0.8
    # A 180x180 frame is 1.4 times the level: native pixels (scale 1.0, 1.4 times finer) are not looked at, though
    # the box found there (16 px against 22.5, IoU 0.51) would replace it.
    small = np.zeros((180, 180, 3), dtype=np.uint8)
    kept = OnnxDetector(config.model_copy(update={"refine_classes": ()})).detect(small)
    np.testing.assert_allclose(OnnxDetector(config).detect(small).xyxy, kept.xyxy)


def test_a_second_finer_look_gives_its_box_as_the_objects_second_box(tmp_path: Path) -> None:
    # As above (one level of 128 on a 512x512 frame; the constant chip 64 frame px at the pyramid's level, 36.6 at
    # the first finer look's scale 0.4375). refine_native_px 44.8 asks for a scale of 0.7 (more than 1.25 times
    # finer): there the constant box is 16 / 0.7 = 22.9 frame px (IoU 0.13 with the pyramid's box, over refine_iou
    # 0.1), kept as each box's second box; the first look's box stays the box.
    model = constant_model(tmp_path / "t.onnx", yolo_output([(32, 32, 16, 16, 2, 0.8)]), imgsz=64, levels=(128,))
    frame = np.zeros((512, 512, 3), dtype=np.uint8)
    config = OnnxDetectorConfig(model=model, overlap=0.0, refine_iou=0.1, refine_near=None, refine_px=28.0,
                                refine_native_px=44.8)
    found = OnnxDetector(config).detect(frame)
    assert len(found) == 4
    np.testing.assert_allclose(found.xyxy[:, 2] - found.xyxy[:, 0], 16 / 0.4375, atol=0.2)
    second = found.data[ALTERNATIVE_BOX]
    np.testing.assert_allclose(second[:, 2] - second[:, 0], 16 / 0.7, atol=0.2)
    np.testing.assert_allclose((second[:, :2] + second[:, 2:]) / 2, (found.xyxy[:, :2] + found.xyxy[:, 2:]) / 2,
                               atol=1.5)
    assert alternative_box(found, 0) == tuple(float(v) for v in second[0])
    assert alternative_box(found[[0]], 0) == alternative_box(found, 0)  # kept by indexing, as tracking keeps it
    plain = OnnxDetector(config.model_copy(update={"refine_native_px": None})).detect(frame)  # no second look
    assert ALTERNATIVE_BOX not in plain.data and alternative_box(plain, 0) is None
    np.testing.assert_allclose(plain.xyxy, found.xyxy)
    # A second look at 0.47, not 1.25 times finer than the first, is not taken; a frame without chips is not looked
    # at again: no second boxes, but the field is there (NaN), as the edge's gate merges regions' detections.
    barely = OnnxDetector(config.model_copy(update={"refine_native_px": 30.0})).detect(frame)
    assert np.isnan(barely.data[ALTERNATIVE_BOX]).all() and alternative_box(barely, 0) is None
    none = constant_model(tmp_path / "n.onnx", yolo_output([(32, 32, 16, 16, 0, 0.8)]), imgsz=64, levels=(128,))
    cards = OnnxDetector(config.model_copy(update={"model": none})).detect(frame)
    assert len(cards) == 4 and np.isnan(cards.data[ALTERNATIVE_BOX]).all()
    assert len(Detections.merge([found, cards])) == 8


def test_a_refine_model_takes_the_finer_looks_in_windows_of_its_own_input(tmp_path: Path) -> None:
    # As test_small_chip_boxes_are_found_again_at_a_finer_scale (the pyramid's box 64 frame px, the finer look's
    # scale 0.4375), the finer look taken by another model: input 32, its constant chip 8..24 of every window, so
    # its windows span 32 / 0.4375 frame px and its box is 16 / 0.4375 = 36.6 px, centred on the pyramid's box.
    model = constant_model(tmp_path / "t.onnx", yolo_output([(32, 32, 16, 16, 2, 0.8)]), imgsz=64, levels=(128,))
    refine = constant_model(tmp_path / "r.onnx", yolo_output([(16, 16, 16, 16, 2, 0.8)]), imgsz=32)
    frame = np.zeros((512, 512, 3), dtype=np.uint8)
    config = OnnxDetectorConfig(model=model, overlap=0.0, refine_iou=0.3, refine_near=None, refine_px=28.0)
    coarse = OnnxDetector(config.model_copy(update={"refine_classes": ()})).detect(frame)
    fine = OnnxDetector(config.model_copy(update={"refine_model": refine})).detect(frame)
    assert len(fine) == 4
    np.testing.assert_allclose(fine.xyxy[:, 2] - fine.xyxy[:, 0], 16 / 0.4375, atol=0.2)
    np.testing.assert_allclose((fine.xyxy[:, :2] + fine.xyxy[:, 2:]) / 2, (coarse.xyxy[:, :2] + coarse.xyxy[:, 2:]) / 2,
                               atol=1.5)
    # Its own box, not the detector's: a refine model whose box is a quarter of its input gives that box.
    quarter = constant_model(tmp_path / "q.onnx", yolo_output([(16, 16, 8, 8, 2, 0.8)]), imgsz=32)
    small = OnnxDetector(config.model_copy(update={"refine_model": quarter, "refine_iou": 0.05})).detect(frame)
    np.testing.assert_allclose(small.xyxy[:, 2] - small.xyxy[:, 0], 8 / 0.4375, atol=0.2)
    other = constant_model(tmp_path / "o.onnx", yolo_output([(16, 16, 16, 16, 2, 0.8)]), imgsz=32,
                           names={0: "card", 1: "back", 2: "chip", 3: "button", 4: "hand"})
    with pytest.raises(ConfigError, match=r"o\.onnx: field 'refine_model': expected the classes of .*t\.onnx"):
        OnnxDetector(config.model_copy(update={"refine_model": other}))


def test_detector_modules_import_neither_torch_nor_ultralytics() -> None:
    code = ("import sys, floorman.vision.detector, floorman.vision.detect_cli, floorman.vision.detections; "
            "bad = [m for m in ('torch', 'ultralytics', 'floorman.models', 'floorman.datasets') if m in sys.modules]; "
            "print(bad); sys.exit(1 if bad else 0)")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_shipped_model_places_touching_stacks_closer_when_it_looks_again() -> None:
    # A 3840x2160 whole-table view, each seat's four stacks (8-14 chips) side by side as players keep them: the
    # pyramid's finest level (960) sees a 39 mm chip at ~14 px. Looked at again twice as fine, the shipped
    # detector's boxes of these touching stacks come closer to the rendered truth (measured on this seed: mean
    # side error 2.93 -> 2.06 px over 34 stacks).
    from floorman.datasets.effects import Effects
    from floorman.datasets.random_scene import SceneStyle, random_sample
    from floorman.datasets.render import Renderer
    from floorman.datasets.render_dataset import TRAINING_OPTIONS
    from floorman.datasets.scenario_motion import ZoneGeometry
    from floorman.datasets.scene import ChipStack, DetectorClass
    from floorman.vision.detect_cli import default_model
    from floorman.vision.detector import box_iou

    model = default_model()
    if not model.is_file():
        pytest.skip(f"no shipped model at {model}")
    rng = np.random.default_rng(1)
    scene, camera = random_sample(rng, size=(3840, 2160), style=SceneStyle.CASINO)
    slots = ZoneGeometry(scene.layout).slot
    values = sorted(d.value for d in scene.chipset.denominations)
    scene.chips = [ChipStack(id=50_000 + 10 * seat + i, x=slots(f"stack_{seat}", i)[0], y=slots(f"stack_{seat}", i)[1],
                             chips=(values[i],) * (8 + 2 * i)) for seat in scene.layout.seat_numbers for i in range(4)]
    result = Renderer(camera, options=TRAINING_OPTIONS).render(scene, effects=Effects.random(rng), rng=rng)
    truth = [np.asarray(o.box, dtype=np.float32) for o in result.objects
             if o.cls == DetectorClass.CHIP and o.visible_fraction >= 0.9]
    errors = []
    for classes in ((), ("chip",)):
        found = OnnxDetector(OnnxDetectorConfig(model=model, refine_classes=classes)).detect(result.image)
        chips = found.xyxy[found.class_id == 2]
        matched = []
        for box in truth:
            overlap, _ = box_iou(box, chips)
            if float(overlap.max()) >= 0.5:
                matched.append(float(np.abs(chips[int(np.argmax(overlap))] - box).mean()))
        assert len(matched) >= 0.9 * len(truth) >= 30
        errors.append(float(np.mean(matched)))
    assert errors[1] < errors[0] - 0.4, errors
