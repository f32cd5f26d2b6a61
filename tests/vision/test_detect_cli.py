from __future__ import annotations

import argparse
import json
import math
from dataclasses import replace
from pathlib import Path

import cv2
import numpy as np
import pytest

from floorman.core.chips import ChipSet
from floorman.core.errors import CameraError, ConfigError
from floorman.core.layout import TableLayout
from floorman.vision.calibration import PointPair, calibrate_from_points
from floorman.vision.chips import ChipReading
from floorman.vision.cli import read_image
from floorman.vision.detect_cli import (
    FrameReport,
    chip_totals,
    colour_name,
    counted_chips,
    format_text,
    frames,
    grayscale,
    read_cards,
    read_frame,
    register,
    report,
    zone_values,
)
from floorman.vision.detections import Detections
from floorman.vision.table_state import _hand_point, table_camera
from tests.vision.test_cards import place_card, table
from tests.vision.test_detector import constant_model, yolo_output


def parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="floorman")
    register(parser.add_subparsers())
    return parser.parse_args(argv)


@pytest.fixture
def model(tmp_path: Path) -> Path:
    # Input 64, whole frames: a chip at the centre of the letterboxed frame and a hand in the top-left corner.
    output = yolo_output([(32, 32, 8, 8, 2, 0.9), (8, 20, 8, 8, 4, 0.5)])
    return constant_model(tmp_path / "m.onnx", output, imgsz=64)


def write_images(folder: Path, count: int, size: tuple[int, int] = (128, 64)) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for i in range(count):
        cv2.imwrite(str(folder / f"f{i}.png"), np.full((size[1], size[0], 3), 90, np.uint8))
    return folder


def test_text_output_lists_every_object(tmp_path: Path, model: Path, capsys: pytest.CaptureFixture[str]) -> None:
    images = write_images(tmp_path / "images", 2)
    args = parse(["detect", str(images), "--model", str(model), "--annotate", str(tmp_path / "out")])
    assert args.handler(args) == 0
    text = capsys.readouterr().out
    assert text.count("(128x64): 2 objects") == 2
    assert "chip          0.90  box 56,24,72,40" in text
    chip_line = next(line for line in text.splitlines() if line.strip().startswith("chip "))
    assert "chips 1 x " in chip_line and "count 0.00" in chip_line  # no calibration: the count is not measured
    assert "hand          0.50" in text
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["f0.jpg", "f1.jpg"]


def test_json_output_with_table_positions(tmp_path: Path, model: Path, capsys: pytest.CaptureFixture[str]) -> None:
    image = write_images(tmp_path / "images", 1) / "f0.png"
    layout = TableLayout.bundled("oval9")
    # pixels -> mm: x_mm = 10 * u - 640, y_mm = 320 - 10 * v (a 10 mm/px top-down view centred on the table)
    pairs = [PointPair(pixel=(u, v), table_mm=(10 * u - 640, 320 - 10 * v)) for u, v in
             ((0, 0), (128, 0), (128, 64), (0, 64))]
    calibration = calibrate_from_points(pairs, layout=layout, image_size=(128, 64))
    calibration.save(tmp_path / "cal.yaml")
    args = parse(["detect", str(image), "--model", str(model), "--json", "--layout", "oval9",
                  "--calib", str(tmp_path / "cal.yaml")])
    assert args.handler(args) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["frame"] is None and (report["width"], report["height"]) == (128, 64)
    chip = next(obj for obj in report["objects"] if obj["class_name"] == "chip")
    assert chip["box"] == [56.0, 24.0, 72.0, 40.0]
    # A chip is read (a grey box: some denomination, with a count from the fitted stack and its foot as position).
    assert chip["count"] == len(chip["chips"]) >= 1 and chip["identity"] == str(chip["chips"][-1])
    assert 0.0 <= chip["count_confidence"] <= 1.0
    hand = next(obj for obj in report["objects"] if obj["class_name"] == "hand")
    # A hand is placed as the edge places it (its middle a hand's height up, `table_state._hand_point`), not at
    # its box's bottom centre as before session 43.
    expected = _hand_point(table_camera(calibration), np.array(hand["box"])).tolist()
    x1, _, x2, y2 = hand["box"]
    assert math.dist(expected, (10 * (x1 + x2) / 2 - 640, 320 - 10 * y2)) > 20.0
    assert hand["table_mm"] == pytest.approx(expected, abs=1e-2)
    assert hand["zone"] == layout.zone_names_at(np.array([expected]))[0] and hand["identity"] is None
    assert hand["chips"] is None and hand["count"] is None
    # An image of another size than the calibration's is refused, naming both sizes; what was printed stays.
    calibrate_from_points(pairs, layout=layout, image_size=(256, 128)).save(tmp_path / "cal_big.yaml")
    args = parse(["detect", str(image), "--model", str(model), "--json", "--layout", "oval9",
                  "--calib", str(tmp_path / "cal_big.yaml")])
    with pytest.raises(ConfigError, match=r"f0\.png is 128x64, but the calibration .*cal_big\.yaml was made on "
                                          r"256x128 frames") as info:
        args.handler(args)
    assert info.value.field == "--calib"


def test_video_frames_are_numbered(tmp_path: Path, model: Path, capsys: pytest.CaptureFixture[str]) -> None:
    video = tmp_path / "clip.avi"
    writer = cv2.VideoWriter(str(video), cv2.VideoWriter_fourcc(*"MJPG"), 10, (96, 64))
    for _ in range(5):
        writer.write(np.full((64, 96, 3), 80, np.uint8))
    writer.release()
    args = parse(["detect", str(video), "--model", str(model), "--every", "2", "--json"])
    assert args.handler(args) == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [line["frame"] for line in lines] == [0, 2, 4]


def test_bad_inputs_are_named(tmp_path: Path, model: Path) -> None:
    with pytest.raises(CameraError, match="no such file or folder"):
        list(frames(tmp_path / "missing.png"))
    (tmp_path / "empty").mkdir()
    with pytest.raises(CameraError, match="no images"):
        list(frames(tmp_path / "empty"))
    (tmp_path / "junk.png").write_bytes(b"not a png")
    with pytest.raises(CameraError, match="not a readable image"):
        list(frames(tmp_path / "junk.png"))
    args = parse(["detect", str(tmp_path / "junk.png"), "--model", str(model), "--layout", "oval9"])
    with pytest.raises(ConfigError, match="expected --layout and --calib together"):
        args.handler(args)
    args = parse(["detect", str(tmp_path / "junk.png"), "--straight-down", "--layout", "oval9", "--calib", "c.yaml"])
    with pytest.raises(ConfigError, match="--straight-down is for photos without a calibration") as refused:
        args.handler(args)
    assert refused.value.field == "--straight-down"
    with pytest.raises(SystemExit):
        parse(["detect", "x.png", "--levels", "320,abc"])
    for bad in ("-5", "0", "20000", "nan"):  # checked before any image is read or model loaded
        args = parse(["detect", str(tmp_path / "missing.png"), "--camera-height", bad])
        with pytest.raises(ConfigError, match=r"camera's height above the felt in mm, in \(0, 10000\]") as caught:
            args.handler(args)
        assert caught.value.field == "--camera-height"


def test_face_up_cards_get_their_identity() -> None:
    image = table()
    box, _ = place_card(image, "QS", design=0, angle_deg=20.0)
    detections = Detections(xyxy=np.array([box, [5, 5, 60, 60]], dtype=np.float32),
                            confidence=np.array([0.9, 0.8], dtype=np.float32), class_id=np.array([0, 2]))
    names = {0: "card_face", 2: "chip"}
    identities = read_cards(image, detections, names=names)
    assert identities[0][0] == "QS" and identities[0][1] is not None and identities[0][1] > 0.35
    assert identities[1] == (None, None)
    result = report(detections, names=names, source="x.png", frame=None, image_size=(420, 420),
                    identities=identities)
    assert result.objects[0].identity == "QS"
    assert "card QS" in format_text(result)


def test_chips_are_totalled_per_denomination_with_a_colour_word() -> None:
    chipset = ChipSet.default()
    readings = {0: ChipReading(denominations=(100, 100, 25), confidence=0.9, count_confidence=0.8),
                3: ChipReading(denominations=(100,), confidence=0.9, count_confidence=0.8),
                4: ChipReading(denominations=(5000,), confidence=0.9, count_confidence=0.8)}
    totals = chip_totals(readings, chipset)
    assert [(t.value, t.colour_name, t.chips, t.stacks) for t in totals] == [
        (5000, "blue", 1, 1), (100, "red", 3, 2), (25, "white", 1, 1)]
    assert [colour_name(d.rgb) for d in chipset.denominations] == ["white", "red", "green", "black", "blue"]
    frame = FrameReport(source="x.jpg", frame=None, width=10, height=10, objects=[], chip_totals=totals)
    assert "chips by denomination: 5K (blue) x 1, 100 (red) x 3, 25 (white) x 1" in format_text(frame)


def test_without_a_calibration_a_box_too_long_for_a_chip_is_not_counted() -> None:
    """Four chips ~100 px wide and a 100 x 260 px box (a rack's row of chips on edge): the row is left out of the
    totals; a box cut by the image's border does not set the typical size, and counts when 30 px or more of a chip
    shows across the border (40 px at the left), not as a sliver (25 px at the bottom, 20 px at the right); with
    counts (a calibration) all count."""
    boxes = [[100, 100, 200, 198], [300, 100, 398, 200], [500, 100, 601, 201], [700, 100, 799, 199],
             [900, 100, 1000, 360], [0, 500, 40, 600], [400, 775, 500, 800], [1180, 300, 1200, 400]]
    detections = Detections(xyxy=np.array(boxes, dtype=np.float32), confidence=np.full(8, 0.9, np.float32),
                            class_id=np.full(8, 2))
    flat = {i: ChipReading(denominations=(100,), confidence=0.9, count_confidence=0.0) for i in range(8)}
    assert sorted(counted_chips(flat, detections, image_size=(1200, 800))) == [0, 1, 2, 3, 5]
    assert sorted(counted_chips({i: flat[i] for i in (0, 4, 5, 7)}, detections, image_size=(1200, 800))) == [
        0, 4, 5, 7]  # two boxes clear of the border that disagree (a chip, a rack's row) tell no typical size ...
    assert sorted(counted_chips({i: flat[i] for i in (0, 1, 5, 7)}, detections, image_size=(1200, 800))) == [
        0, 1, 5]  # ... two that agree do (since session 35), one alone does not
    assert sorted(counted_chips({i: flat[i] for i in (0, 5, 7)}, detections, image_size=(1200, 800))) == [0, 5, 7]
    counted = {i: ChipReading(denominations=(100, 100), confidence=0.9, count_confidence=0.7, base_mm=(0.0, 0.0))
               for i in range(8)}
    assert sorted(counted_chips(counted, detections, image_size=(1200, 800))) == list(range(8))


def test_without_a_calibration_a_chip_box_the_detector_is_unsure_of_is_not_counted() -> None:
    """Six boxes, three chips of 100 px sure, two under 0.4 (a rack's row boxed 100 x 80 at 0.39 and a chip-sized
    box whose colours read no denomination surely at 0.33) and one at 0.41: four count; with counts (a calibration)
    all six do, and a straight-down photo's boxes (`every_box`) are held to the same bar."""
    boxes = [[100, 100, 200, 200], [300, 100, 400, 180], [500, 100, 600, 200], [700, 100, 800, 200],
             [900, 100, 1000, 200], [100, 400, 200, 500]]
    detections = Detections(xyxy=np.array(boxes, dtype=np.float32),
                            confidence=np.array([0.9, 0.39, 0.41, 0.33, 0.8, 0.9], dtype=np.float32),
                            class_id=np.full(6, 2))
    flat = {i: ChipReading(denominations=(100,), confidence=0.2 if i == 3 else 0.9, count_confidence=0.0)
            for i in range(6)}
    assert sorted(counted_chips(flat, detections, image_size=(1200, 800))) == [0, 2, 4, 5]
    counted = {i: ChipReading(denominations=(100, 100), confidence=0.9, count_confidence=0.7, base_mm=(0.0, 0.0))
               for i in range(6)}
    assert sorted(counted_chips(counted, detections, image_size=(1200, 800))) == list(range(6))
    assert sorted(counted_chips({i: replace(counted[i], confidence=flat[i].confidence) for i in range(6)},
                                detections, image_size=(1200, 800), every_box=True)) == [0, 2, 4, 5]


def test_without_a_calibration_an_unsure_box_with_a_lone_chips_outline_and_colours_is_counted() -> None:
    """Another club's plain white chip on light wood, boxed at 0.26-0.33 (dev seed 34102, photos 7, 14, 24): a box
    clear of the border, each side within 0.9-1.12 of the typical chip box, read as one denomination with confidence
    0.45 or more, counts; the same box cut by the border, 0.8 of a chip across, or read at 0.4 does not."""
    sure = [[100, 100, 200, 200], [300, 100, 400, 200], [500, 100, 600, 200]]
    cases = {"lone": ([700, 100, 805, 203], 0.8, True), "at the border": ([1098, 100, 1200, 200], 0.8, False),
             "small": ([700, 100, 780, 180], 0.8, False), "unsure colours": ([700, 100, 805, 203], 0.4, False)}
    for name, (box, value_confidence, counts) in cases.items():
        detections = Detections(xyxy=np.array([*sure, box], dtype=np.float32),
                                confidence=np.array([0.9, 0.9, 0.9, 0.3], dtype=np.float32), class_id=np.full(4, 2))
        flat = {i: ChipReading(denominations=(25,), confidence=value_confidence if i == 3 else 0.9,
                               count_confidence=0.0) for i in range(4)}
        assert (3 in counted_chips(flat, detections, image_size=(1200, 800))) is counts, name


def sure_boxes_read(boxes: list[list[int]], values: list[float], denomination: int,
                    ) -> tuple[Detections, dict[int, ChipReading]]:
    """Chip boxes the detector is sure of (0.9), each read as one chip of `denomination` with its value confidence
    (no count: no calibration)."""
    detections = Detections(xyxy=np.array(boxes, dtype=np.float32), confidence=np.full(len(boxes), 0.9, np.float32),
                            class_id=np.full(len(boxes), 2))
    return detections, {i: ChipReading(denominations=(denomination,), confidence=value, count_confidence=0.0)
                        for i, value in enumerate(values)}


def test_without_a_calibration_a_box_cut_by_the_border_counts_only_when_its_colours_read_surely() -> None:
    """Two chips in full view and two boxes cut by the image's right border, read at 0.25 (a rack row's end, dev seed
    31003 photo 12) and at 0.6: the first is not counted, even where one box alone tells no typical size; a box in
    full view read at 0.25 still counts."""
    boxes = [[100, 100, 200, 200], [300, 100, 400, 200], [1140, 300, 1200, 400], [1140, 500, 1200, 600],
             [500, 100, 600, 200]]
    detections, flat = sure_boxes_read(boxes, [0.9, 0.25, 0.25, 0.6, 0.9], 100)
    assert sorted(counted_chips(flat, detections, image_size=(1200, 800))) == [0, 1, 3, 4]
    assert sorted(counted_chips({i: flat[i] for i in range(4)}, detections, image_size=(1200, 800))) == [0, 1, 3]
    assert sorted(counted_chips({i: flat[i] for i in (0, 2, 3)}, detections, image_size=(1200, 800))) == [0, 3]


def test_without_a_calibration_a_box_in_a_corner_counts_only_when_its_colours_read_surer() -> None:
    """A rack's corner in the photo's corner read as a white chip at 0.35-0.45 (dev seeds 31004 photo 37, 32001 photo
    22, 34102 photo 32): a box cut by two borders counts from 0.5, one cut by a single border still from 0.3."""
    boxes = [[100, 100, 200, 200], [300, 100, 400, 200], [1140, 740, 1200, 800], [1140, 0, 1200, 60],
             [1140, 300, 1200, 400]]
    detections, flat = sure_boxes_read(boxes, [0.9, 0.9, 0.45, 0.7, 0.45], 25)
    assert sorted(counted_chips(flat, detections, image_size=(1200, 800))) == [0, 1, 3, 4]


def test_views_of_one_moment_are_printed_then_fused(tmp_path: Path, model: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    images = write_images(tmp_path / "images", 2)
    layout = TableLayout.bundled("oval9")
    corners = ((0, 0), (128, 0), (128, 64), (0, 64))
    # Two cameras facing each other over the table's centre, 2 mm per pixel: the chip at each frame's centre is
    # the same stack, the hand in each top-left corner another hand.
    calibrate_from_points([PointPair(pixel=(u, v), table_mm=(2 * u - 128, 64 - 2 * v)) for u, v in corners],
                          layout=layout, image_size=(128, 64)).save(tmp_path / "a.yaml")
    calibrate_from_points([PointPair(pixel=(u, v), table_mm=(128 - 2 * u, 2 * v - 64)) for u, v in corners],
                          layout=layout, image_size=(128, 64)).save(tmp_path / "b.yaml")
    args = parse(["detect", str(images / "f0.png"), "--model", str(model), "--json", "--layout", "oval9",
                  "--calib", str(tmp_path / "a.yaml"), "--view", str(images / "f1.png"), str(tmp_path / "b.yaml")])
    assert args.handler(args) == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [line.get("source") for line in lines[:2]] == [str(images / "f0.png"), str(images / "f1.png")]
    fused = lines[2]
    assert fused["fused"] == [str(images / "f0.png"), str(images / "f1.png")]
    assert len(fused["stacks"]) == 1 and fused["cards"] == []  # one stack, seen by both
    stack = fused["stacks"][0]
    assert stack["count"] == len(stack["chips"]) and stack["camera"] in fused["fused"]
    assert fused["zone_values"] == ({stack["zone"]: sum(stack["chips"])} if stack["zone"] else {})
    args = parse(["detect", str(images / "f0.png"), "--model", str(model), "--layout", "oval9",
                  "--calib", str(tmp_path / "a.yaml"), "--view", str(images / "f1.png"), str(tmp_path / "b.yaml"),
                  "--annotate", str(tmp_path / "out")])
    assert args.handler(args) == 0
    text = capsys.readouterr().out
    assert f"fused in table mm ({images / 'f0.png'} + {images / 'f1.png'}): 1 stacks, 0 cards" in text
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["f0.jpg", "f1.jpg"]


def test_views_are_refused_without_what_fusing_needs(tmp_path: Path, model: Path) -> None:
    images = write_images(tmp_path / "images", 2)
    view = ["--view", str(images / "f1.png"), str(tmp_path / "b.yaml")]
    refusals = [
        (["--model", str(model), *view], "expected --layout and --calib", "--view"),
        (["--layout", "oval9", "--calib", "a.yaml", "--view", str(images / "f0.png"), "b.yaml"],
         "f0.png given twice", "--view"),
    ]
    for extra, message, field in refusals:
        args = parse(["detect", str(images / "f0.png"), *extra])
        with pytest.raises(ConfigError, match=message) as refused:
            args.handler(args)
        assert refused.value.field == field
    args = parse(["detect", str(images), "--layout", "oval9", "--calib", "a.yaml", *view])
    with pytest.raises(ConfigError, match=r"expected IMAGE to be an image file, got .*images") as refused:
        args.handler(args)
    assert refused.value.field == "source"


def test_each_view_calibration_must_be_for_the_layout_given(tmp_path: Path, model: Path) -> None:
    images = write_images(tmp_path / "images", 2)
    pairs = [PointPair(pixel=(u, v), table_mm=(2 * u - 128, 64 - 2 * v))
             for u, v in ((0, 0), (128, 0), (128, 64), (0, 64))]
    calibrate_from_points(pairs, layout=TableLayout.bundled("oval9"), image_size=(128, 64)).save(tmp_path / "a.yaml")
    text = (tmp_path / "a.yaml").read_text(encoding="utf-8")
    (tmp_path / "b.yaml").write_text(text.replace("layout: oval9", "layout: club6"), encoding="utf-8")
    for calib, view in (("b.yaml", "a.yaml"), ("a.yaml", "b.yaml")):
        args = parse(["detect", str(images / "f0.png"), "--model", str(model), "--layout", "oval9",
                      "--calib", str(tmp_path / calib), "--view", str(images / "f1.png"), str(tmp_path / view)])
        with pytest.raises(ConfigError, match="calibration is for layout 'club6', expected 'oval9'") as refused:
            args.handler(args)
        assert refused.value.field == "layout" and refused.value.source == str(tmp_path / "b.yaml")
    args = parse(["detect", str(images / "f0.png"), "--model", str(model), "--layout", "oval9",
                  "--calib", str(tmp_path / "b.yaml")])  # one photo, no --view
    with pytest.raises(ConfigError, match="calibration is for layout 'club6', expected 'oval9'"):
        args.handler(args)
    args = parse(["detect", str(images / "f0.png"), "--model", str(model), "--layout", "oval9", "--calib",
                  str(tmp_path / "missing.yaml"), "--view", str(images / "f1.png"), str(tmp_path / "a.yaml")])
    with pytest.raises(ConfigError, match=r"no such calibration file: .*missing\.yaml") as refused:
        args.handler(args)
    assert refused.value.field == "--calib"


def test_images_are_read_with_the_photo_detector_and_videos_with_the_video_detector(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from floorman.models.registry import model_info
    from floorman.vision import detect_cli

    photo, video = detect_cli.default_model(photos=True), detect_cli.default_model()
    assert (photo.name, video.name) == ("photo_detector_int8.onnx", "detector_int8.onnx")
    for path in (photo, photo.with_name("photo_detector.onnx")):
        assert path.stat().st_size < 15_000_000
        info = model_info(path)
        assert info.levels == (320, 960) and info.names == model_info(video).names
    used: list[Path] = []

    def recording(config: object) -> object:
        used.append(config.model)  # type: ignore[attr-defined]
        raise SystemExit(0)

    monkeypatch.setattr(detect_cli, "create_detector", recording)
    (tmp_path / "photo.jpg").write_bytes(b"x")
    (tmp_path / "clip.mp4").write_bytes(b"x")
    for source in ("photo.jpg", ".", "clip.mp4"):
        with pytest.raises(SystemExit):
            detect_cli.run_detect(parse(["detect", str(tmp_path / source)]))
    assert used == [photo, photo, video]
    assert detect_cli.is_video(tmp_path / "clip.mp4") and not detect_cli.is_video(tmp_path)


@pytest.mark.parametrize(("seed", "chips"), [(3, 10), (4, 3)])
def test_the_photo_detector_finds_another_clubs_plain_chips(seed: int, chips: int) -> None:
    """Home-style 3000x2000 frames of another club's chips (`--chip-designs 1`) whose plain chips (white spots on a
    white chip) the video detector missed, 2 of 10 and 1 of 3 chips at least 90 % in view (session 28)."""
    from floorman.datasets.effects import Effects
    from floorman.datasets.random_scene import SceneStyle, random_sample
    from floorman.datasets.render import Renderer
    from floorman.datasets.render_dataset import TRAINING_OPTIONS
    from floorman.datasets.scene import DetectorClass
    from floorman.vision.detect_cli import default_model
    from floorman.vision.detector import OnnxDetector, OnnxDetectorConfig, box_iou

    rng = np.random.default_rng(seed)
    scene, camera = random_sample(rng, size=(3000, 2000), style=SceneStyle.HOME, chip_designs=1.0)
    result = Renderer(camera, options=TRAINING_OPTIONS).render(scene, effects=Effects.random(rng), rng=rng)
    truth = [np.asarray(o.box, np.float32) for o in result.objects
             if o.cls == DetectorClass.CHIP and o.visible_fraction >= 0.9]
    found = OnnxDetector(OnnxDetectorConfig(model=default_model(photos=True))).detect(result.image)
    boxes = found.xyxy[(found.class_id == 2) & (found.confidence >= 0.25)]
    assert len(truth) == chips
    assert all(len(boxes) and box_iou(box, boxes)[0].max() >= 0.5 for box in truth)


def jpeg_with_orientation(image: np.ndarray, orientation: int) -> bytes:
    """`image` as a JPEG whose EXIF orientation tag (0x0112) says how a viewer turns it, as a phone writes it."""
    ok, encoded = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, 95])
    assert ok
    tiff = b"MM\x00\x2a\x00\x00\x00\x08" + b"\x00\x01" + b"\x01\x12\x00\x03\x00\x00\x00\x01" + \
        orientation.to_bytes(2, "big") + b"\x00\x00" + b"\x00\x00\x00\x00"
    app1 = b"Exif\x00\x00" + tiff
    data = encoded.tobytes()
    return data[:2] + b"\xff\xe1" + (len(app1) + 2).to_bytes(2, "big") + app1 + data[2:]


def test_a_phone_photo_is_read_turned_as_its_exif_orientation_says(tmp_path: Path) -> None:
    """A portrait phone photo stored sideways with orientation 6 (turn 90 degrees clockwise to view): read as shown,
    so the boxes of `floorman photos score` labels drawn in a viewer fall on the same pixels."""
    upright = np.zeros((300, 200, 3), np.uint8)
    upright[:60, :] = (0, 0, 255)  # red along the top as shown
    stored = cv2.rotate(upright, cv2.ROTATE_90_COUNTERCLOCKWISE)
    path = tmp_path / "IMG_0001.jpg"
    path.write_bytes(jpeg_with_orientation(stored, 6))
    image = read_image(path)
    assert image.shape == (300, 200, 3)
    assert image[:50, :, 2].mean() > 200 and image[70:, :, 2].mean() < 30


def test_files_it_cannot_load_or_write_are_named_not_tracebacks(tmp_path: Path, model: Path,
                                                                 capsys: pytest.CaptureFixture[str],
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    from floorman.cli import main

    images = write_images(tmp_path / "images", 1)
    not_a_model = tmp_path / "weights.onnx"
    not_a_model.write_bytes(b"\x89PNG not a model")
    assert main(["detect", str(images), "--model", str(not_a_model)]) == 2
    error = capsys.readouterr().err
    assert f"expected the detector at {not_a_model} to be an ONNX model ONNX Runtime loads, got:" in error
    assert "Traceback" not in error
    blocked = tmp_path / "a_file"
    blocked.write_text("in the way")
    assert main(["detect", str(images), "--model", str(model), "--annotate", str(blocked / "out")]) == 2
    error = capsys.readouterr().err
    assert f"cannot make the folder {blocked / 'out'}" in error and "field '--annotate'" in error
    monkeypatch.setattr(cv2, "imwrite", lambda *_, **__: False)  # a full disk: OpenCV only returns False
    assert main(["detect", str(images), "--model", str(model), "--annotate", str(tmp_path / "out")]) == 2
    assert f"{tmp_path / 'out' / 'f0.jpg'}: could not write the image" in capsys.readouterr().err


def test_a_folder_the_command_cannot_make_is_named(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from floorman.cli import main

    blocked = tmp_path / "a_file"
    blocked.write_text("in the way")
    assert main(["markers", "--layout", "oval9", "--out", str(blocked / "markers")]) == 2
    assert f"cannot make the folder {blocked / 'markers'}" in capsys.readouterr().err
    # any command's file error, caught by floorman's main: the file and the reason, not a traceback
    assert main(["datasets", "render", "--count", "1", "--seed", "1", "--out", str(blocked / "set")]) == 2
    error = capsys.readouterr().err
    assert error.startswith(f"floorman: error: {blocked / 'set'}") and "Traceback" not in error


FELT = (40, 110, 30)  # a green felt (BGR): a frame with colour


class _StubDetector:
    """The given detections for every frame."""

    def __init__(self, detections: Detections) -> None:
        self.detections = detections
        self.names = {0: "card_face", 1: "card_back", 2: "chip", 3: "dealer_button", 4: "hand"}

    def detect(self, frame: np.ndarray) -> Detections:  # noqa: ARG002 (the detector's signature)
        return self.detections


class _StubRecogniser:
    """The given readings, one per chip box in order, with the default chip set and no camera of its own."""

    camera = None
    chipset = ChipSet.default()

    def __init__(self, readings: list[ChipReading]) -> None:
        self.readings = readings

    def evidence(self, image: np.ndarray, box: tuple[float, ...], *,  # noqa: ARG002 (the recogniser's signature)
                 alternative: object = None) -> object:  # noqa: ARG002
        return box

    def read_evidence(self, image: np.ndarray, evidence: list[object], *,  # noqa: ARG002 (the recogniser's signature)
                      previous: object = None) -> list[ChipReading]:  # noqa: ARG002
        assert len(evidence) == len(self.readings)
        return self.readings


def test_with_a_calibration_a_stack_boxed_twice_counts_once_and_zone_values_are_given() -> None:
    # clean_hand_02 at 1280x720, frame 100: a box over a lone 5000 and the stack beside it read 10 x 5000 (the
    # detector 0.47 sure) besides the 5000's own box (0.67): per colour 11 blue chips for 1. With a calibration, a box
    # whose stack's foot lies within half a chip's diameter of a surer box's is one stack boxed twice (as the edge's
    # table state drops it): marked, and left out of the totals and of the zone values.
    layout = TableLayout.bundled("oval9")
    pairs = [PointPair(pixel=(u, v), table_mm=(10 * u - 640, 320 - 10 * v)) for u, v in
             ((0, 0), (128, 0), (128, 64), (0, 64))]
    calibration = calibrate_from_points(pairs, layout=layout, image_size=(128, 64))
    boxes = [(60.0, 30.0, 64.0, 34.0), (59.0, 28.0, 66.0, 34.0), (20.0, 30.0, 24.0, 34.0)]
    detections = Detections(xyxy=np.array(boxes, np.float32), confidence=np.array([0.67, 0.47, 0.9], np.float32),
                            class_id=np.full(3, 2, np.int64))
    feet = [(-200.0, -100.0), (-191.0, -88.0), (-700.0, 500.0)]  # the pot, 15 mm from it (under 19.5), stack_4
    readings = [ChipReading(denominations=(5000,), confidence=0.81, count_confidence=0.49, base_mm=feet[0]),
                ChipReading(denominations=(5000,) * 10, confidence=0.27, count_confidence=0.09, base_mm=feet[1]),
                ChipReading(denominations=(100,) * 4, confidence=0.9, count_confidence=0.9, base_mm=feet[2])]
    image = np.full((64, 128, 3), FELT, np.uint8)
    result, seen = read_frame(image, detector=_StubDetector(detections),  # type: ignore[arg-type]
                              recogniser=_StubRecogniser(readings),  # type: ignore[arg-type]
                              source="f.png", placement=(layout, calibration))
    assert [o.boxed_twice for o in result.objects] == [False, True, False]
    assert {t.value: t.chips for t in result.chip_totals} == {5000: 1, 100: 4}
    zones = [o.zone for o in result.objects]
    assert result.zone_values == zone_values({0: readings[0], 2: readings[2]}, zones)
    assert result.zone_values == {"pot": 5000, "stack_4": 400}
    assert len(seen) == 3  # every box's reading is kept for the next video frame
    text = format_text(result)
    assert text.count("(a stack boxed twice: not counted)") == 1 and "5K (blue) x 1" in text
    assert "  zone values: " + ", ".join(f"{z} {v}" for z, v in result.zone_values.items()) in text
    # Without a calibration nothing is placed: every box counts, no zone values.
    plain, _ = read_frame(image, detector=_StubDetector(detections),  # type: ignore[arg-type]
                          recogniser=_StubRecogniser(readings), source="f.png")  # type: ignore[arg-type]
    assert not any(o.boxed_twice for o in plain.objects) and plain.zone_values == {}


def test_zone_values_sum_each_zones_chips_sorted_by_zone() -> None:
    chips = {0: ChipReading(denominations=(100, 500), confidence=1.0, count_confidence=1.0),
             2: ChipReading(denominations=(25,) * 4, confidence=1.0, count_confidence=1.0),
             3: ChipReading(denominations=(1000,), confidence=1.0, count_confidence=1.0),
             4: ChipReading(denominations=(5000,), confidence=1.0, count_confidence=1.0)}
    assert zone_values(chips, ["stack_3", "card", "pot", "stack_3", None]) == {"pot": 100, "stack_3": 1600}


def test_a_views_stack_boxed_twice_is_fused_once() -> None:
    # `floorman detect --view`: each photo's report, as printed, becomes that camera's table state; a chip box the
    # report marks as a stack boxed twice is not a second stack there.
    from floorman.vision.detect_views import view_state

    layout = TableLayout.bundled("oval9")
    pairs = [PointPair(pixel=(u, v), table_mm=(10 * u - 640, 320 - 10 * v)) for u, v in
             ((0, 0), (128, 0), (128, 64), (0, 64))]
    calibration = calibrate_from_points(pairs, layout=layout, image_size=(128, 64))
    readings = [ChipReading(denominations=(5000,), confidence=0.81, count_confidence=0.49, base_mm=(-200.0, -100.0)),
                ChipReading(denominations=(5000,) * 10, confidence=0.27, count_confidence=0.09,
                            base_mm=(-191.0, -88.0))]
    boxes = [(60.0, 30.0, 64.0, 34.0), (59.0, 28.0, 66.0, 34.0)]
    detections = Detections(xyxy=np.array(boxes, np.float32), confidence=np.array([0.67, 0.47], np.float32),
                            class_id=np.full(2, 2, np.int64))
    result, seen = read_frame(np.full((64, 128, 3), FELT, np.uint8), detector=_StubDetector(detections),  # type: ignore[arg-type]
                              recogniser=_StubRecogniser(readings),  # type: ignore[arg-type]
                              source="a.png", placement=(layout, calibration))
    state = view_state(result, seen, calibration=calibration, layout=layout, camera_id="a.png")
    assert [s.denominations for s in state.chips] == [(5000,)] and state.zone_values() == {"pot": 5000}


def test_a_grayscale_image_values_no_chip() -> None:
    # A monochrome (infrared) camera's frame or a grayscale file: chips are valued by their colours, so none is
    # known; the boxes and counts are printed, each chip's value 0 sure, and nothing totalled per colour or zone.
    layout = TableLayout.bundled("oval9")
    pairs = [PointPair(pixel=(u, v), table_mm=(10 * u - 640, 320 - 10 * v)) for u, v in
             ((0, 0), (128, 0), (128, 64), (0, 64))]
    calibration = calibrate_from_points(pairs, layout=layout, image_size=(128, 64))
    detections = Detections(xyxy=np.array([(20.0, 30.0, 24.0, 34.0)], np.float32),
                            confidence=np.array([0.9], np.float32), class_id=np.full(1, 2, np.int64))
    readings = [ChipReading(denominations=(100,) * 4, confidence=0.9, count_confidence=0.9, base_mm=(-700.0, 500.0))]
    colour = np.full((64, 128, 3), FELT, np.uint8)
    for image, gray in ((colour, False), (cv2.cvtColor(cv2.cvtColor(colour, cv2.COLOR_BGR2GRAY), cv2.COLOR_GRAY2BGR),
                                          True)):
        assert grayscale(image) == gray
        result, _ = read_frame(image, detector=_StubDetector(detections),  # type: ignore[arg-type]
                               recogniser=_StubRecogniser(readings),  # type: ignore[arg-type]
                               source="f.png", placement=(layout, calibration))
        (chip,) = result.objects
        assert result.grayscale == gray and chip.chips == (100,) * 4 and chip.count == 4
        assert chip.identity_confidence == (0.0 if gray else 0.9)
        assert (result.chip_totals == [] and result.zone_values == {}) == gray
        assert ("no colour in the image (grayscale)" in format_text(result)) == gray
    neutral = np.full((64, 128, 3), 128, np.int16)  # a colour camera's grey card: its channels' noise parts them
    noisy = neutral + np.random.default_rng(0).integers(-2, 3, neutral.shape)
    assert grayscale(neutral.astype(np.uint8)) and not grayscale(noisy.astype(np.uint8))


def test_a_grayscale_views_stacks_are_valued_by_a_camera_with_colour_or_not_at_all() -> None:
    # `floorman detect --view` with one photo without colour: a stack both cameras read keeps the colour photo's
    # values; a zone whose stack only the gray photo read has no value (its chips 0 sure), and the report says so.
    from floorman.vision.detect_views import format_fused, fused_report, view_state

    layout = TableLayout.bundled("oval9")
    pairs = [PointPair(pixel=(u, v), table_mm=(10 * u - 640, 320 - 10 * v)) for u, v in
             ((0, 0), (128, 0), (128, 64), (0, 64))]
    calibration = calibrate_from_points(pairs, layout=layout, image_size=(128, 64))
    pot = ChipReading(denominations=(5000,) * 2, confidence=0.9, count_confidence=0.9, base_mm=(-200.0, -100.0))
    stack = ChipReading(denominations=(100,) * 4, confidence=0.9, count_confidence=0.9, base_mm=(-700.0, 500.0))
    colour = np.full((64, 128, 3), FELT, np.uint8)
    gray = cv2.cvtColor(cv2.cvtColor(colour, cv2.COLOR_BGR2GRAY), cv2.COLOR_GRAY2BGR)
    states = []
    for name, image, readings, boxes in (("a.png", colour, [pot], [(60.0, 30.0, 64.0, 34.0)]),
                                         ("b.png", gray, [pot, stack], [(60.0, 30.0, 64.0, 34.0),
                                                                        (20.0, 30.0, 24.0, 34.0)])):
        detections = Detections(xyxy=np.array(boxes, np.float32), confidence=np.full(len(boxes), 0.9, np.float32),
                                class_id=np.full(len(boxes), 2, np.int64))
        result, seen = read_frame(image, detector=_StubDetector(detections),  # type: ignore[arg-type]
                                  recogniser=_StubRecogniser(readings),  # type: ignore[arg-type]
                                  source=name, placement=(layout, calibration))
        states.append(view_state(result, seen, calibration=calibration, layout=layout, camera_id=name))
    assert [s.denomination_confidence for s in states[1].chips] == [0.0, 0.0]
    report = fused_report(states, grayscale=["b.png"])
    assert sorted((s.zone, s.camera, s.values_confidence) for s in report.stacks) == [
        ("pot", "a.png", 0.9), ("stack_4", "b.png", 0.0)]
    assert report.zone_values == {"pot": 10000} and report.grayscale == ["b.png"]
    assert "no colour in b.png (grayscale)" in format_fused(report)
    assert fused_report(states[:1]).grayscale == [] and "no colour" not in format_fused(fused_report(states[:1]))
