from __future__ import annotations

import argparse
from pathlib import Path

import cv2
import numpy as np
import pytest

from floorman.core.chips import ChipSet, parse_hex_colour
from floorman.vision.chips import ChipRecogniser
from floorman.vision.chips_calibrate import ChipCalibrationError, calibrated_chipset, chip_tops, learn_colours
from floorman.vision.chips_colour import nominal_bgr
from floorman.vision.cli import register
from tests.vision.test_chips import CHIPSET, VALUES, render_chips, tilted_camera
from tests.vision.test_detector import constant_model, yolo_output

# A club whose chips differ from the shipped colours: every body colour shifted, seen under a warm light.
CLUB = ChipSet.from_yaml("""
name: club
denominations:
  - {value: 25, colour: "#d8d0c0", edge_colour: "#3050a0", edge_spots: 6}
  - {value: 100, colour: "#a83040", edge_colour: "#f0f0e8", edge_spots: 6}
  - {value: 500, colour: "#2f7040", edge_colour: "#f0f0e8", edge_spots: 6}
  - {value: 1000, colour: "#303034", edge_colour: "#f0f0e8", edge_spots: 8}
  - {value: 5000, colour: "#4050a0", edge_colour: "#f0f0e8", edge_spots: 8}
""")


def club_frame(seed: int, chipset: ChipSet = CHIPSET) -> tuple[np.ndarray, list[tuple[float, float, float, float]]]:
    camera = tilted_camera(tilt_deg=0.0, hfov=25.0)
    rendered = render_chips([(v,) for v in VALUES], camera=camera, seed=seed, kelvin=3600.0, chipset=chipset)
    ordered = sorted(rendered.chips, key=lambda o: o.id)
    return rendered.image, [o.box for o in ordered]


def test_learned_colours_go_to_their_denominations() -> None:
    frames = [club_frame(93201)]
    # Rendered with the shipped set: the learned colours must land on the right values, close to what is seen.
    tops = chip_tops(frames, radius_mm=19.5)
    learned = {item.value: item for item in learn_colours(tops, CHIPSET)}
    assert sorted(learned) == list(VALUES)
    for value, item in learned.items():
        body, _ = nominal_bgr(CHIPSET.by_value(value))
        assert item.chips == 1
        hue_error = np.linalg.norm(item.body / np.linalg.norm(item.body) - body / np.linalg.norm(body))
        assert hue_error < 0.35, (value, item.body, body)


def test_calibrated_chipset_reads_the_club_frames() -> None:
    image, boxes = club_frame(93202, CLUB)
    learned = learn_colours(chip_tops([(image, boxes)], radius_mm=19.5), CLUB)
    result = calibrated_chipset(CLUB, learned)
    assert result.name == "club-calibrated" and result.values == CLUB.values
    recogniser = ChipRecogniser(result)
    assert [recogniser.read(image, box).top for box in boxes] == list(VALUES)


def test_too_few_chips_is_an_error() -> None:
    image, boxes = club_frame(93203)
    with pytest.raises(ChipCalibrationError, match="expected at least 5 chips"):
        learn_colours(chip_tops([(image, boxes[:3])], radius_mm=19.5), CHIPSET)


def test_values_restrict_what_is_learned() -> None:
    image, boxes = club_frame(93204)
    learned = learn_colours(chip_tops([(image, boxes[:2])], radius_mm=19.5), CHIPSET, values=[25, 100])
    assert sorted(item.value for item in learned) == [25, 100]
    result = calibrated_chipset(CHIPSET, learned)
    assert result.by_value(500) == CHIPSET.by_value(500)
    assert result.by_value(25).colour != CHIPSET.by_value(25).colour


def test_cli_writes_a_chipset(tmp_path: Path) -> None:
    image, boxes = club_frame(93205)
    height, width = image.shape[:2]
    size = max(width, height)
    # A constant 'detector' returning the five chip boxes (model input = the frame's long side, whole frames).
    top = (size - height) / 2
    rows = [((x1 + x2) / 2, (y1 + y2) / 2 + top, x2 - x1, y2 - y1, 2, 0.9) for x1, y1, x2, y2 in boxes]
    model = constant_model(tmp_path / "m.onnx", yolo_output(rows, anchors=8), imgsz=size)
    frame = tmp_path / "frame.png"
    cv2.imwrite(str(frame), image)
    parser = argparse.ArgumentParser(prog="floorman")
    register(parser.add_subparsers())
    out = tmp_path / "club.yaml"
    args = parser.parse_args(["chips", "calibrate", "--frames", str(frame), "--model", str(model), "--out",
                              str(out)])
    assert args.handler(args) == 0
    learned = ChipSet.load(out)
    assert learned.values == CHIPSET.values
    red = parse_hex_colour(learned.by_value(100).colour)
    assert red[0] > red[1] + 40 and red[0] > red[2] + 40  # the red chip is still red


def test_cli_refuses_unknown_values(tmp_path: Path) -> None:
    parser = argparse.ArgumentParser(prog="floorman")
    register(parser.add_subparsers())
    args = parser.parse_args(["chips", "calibrate", "--frames", "x.png", "--values", "7", "--out",
                              str(tmp_path / "o.yaml")])
    from floorman.core.errors import ConfigError

    with pytest.raises(ConfigError, match="no denomination 7"):
        args.handler(args)


def test_boxes_of_stacks_seen_from_the_side_are_not_learned_from() -> None:
    """A tilted camera sees 8-chip stacks' sides: their boxes are long, and where their tops lie is not known."""
    rendered = render_chips([(v,) * 8 for v in VALUES] + [(v,) for v in VALUES], camera=tilted_camera(tilt_deg=35.0),
                            seed=93205)
    boxes = [o.box for o in rendered.chips]
    long = [b for b in boxes if max(b[2] - b[0], b[3] - b[1]) > 1.15 * min(b[2] - b[0], b[3] - b[1])]
    assert len(long) >= 4
    assert len(chip_tops([(rendered.image, boxes)], radius_mm=19.5)) == len(boxes) - len(long)


def test_frames_under_different_lights_are_learned_together() -> None:
    """One frame under warm light, one under cool: each chip's colours are taken back to neutral light first, and
    every denomination learns its two chips, its learned colours still nearest its own."""
    camera = tilted_camera(tilt_deg=0.0, hfov=25.0)
    frames = []
    for seed, kelvin in ((93206, 3000.0), (93207, 6500.0)):
        rendered = render_chips([(v,) for v in VALUES], camera=camera, seed=seed, kelvin=kelvin)
        frames.append((rendered.image, [o.box for o in sorted(rendered.chips, key=lambda o: o.id)]))
    learned = {item.value: item for item in learn_colours(chip_tops(frames, radius_mm=19.5), CHIPSET)}
    assert sorted(learned) == list(VALUES)
    assert all(item.chips == 2 and item.nearest == value for value, item in learned.items())
