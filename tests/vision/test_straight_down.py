from __future__ import annotations

import numpy as np
import pytest

from floorman.core.chips import ChipSet
from floorman.core.layout import TableLayout
from floorman.datasets.camera import Camera
from floorman.datasets.render import Renderer
from floorman.datasets.scene import ChipStack, DetectorClass, Lighting, Scene
from floorman.vision.chips import ChipRecogniser
from floorman.vision.straight_down import at_border, read_straight_down, size_change, straight_down_camera

CHIPSET = ChipSet.default()
SIZE = (2400, 1600)


def test_the_implied_camera_is_over_the_centre_scaled_by_the_square_chip_boxes() -> None:
    chip = 120.0  # px across: 120 / 39 px per mm
    boxes = [(300.0, 200.0, 300.0 + chip, 200.0 + chip), (900.0, 700.0, 900.0 + chip + 4, 700.0 + chip),
             (1500.0, 300.0, 1500.0 + chip, 300.0 + chip + 2),
             (100.0, 1000.0, 100.0 + 3 * chip, 1000.0 + chip),  # a rack's row: not square, left out of the scale
             (0.0, 600.0, 40.0, 600.0 + chip)]  # cut by the frame: left out
    camera = straight_down_camera(boxes, image_size=SIZE, chip_diameter_mm=CHIPSET.diameter_mm)
    assert camera is not None and camera.height_assumed
    felt = camera.plane_to_image(0.0)
    centre = felt @ np.array([0.0, 0.0, 1.0])
    assert centre[:2] / centre[2] == pytest.approx((SIZE[0] / 2, SIZE[1] / 2))
    step = felt @ np.array([CHIPSET.diameter_mm, 0.0, 1.0])
    assert step[0] / step[2] - SIZE[0] / 2 == pytest.approx(chip, abs=0.5)
    measured = straight_down_camera(boxes, image_size=SIZE, chip_diameter_mm=CHIPSET.diameter_mm, height_mm=1100.0)
    assert measured is not None and not measured.height_assumed
    assert float(measured.eye[2]) == pytest.approx(1100.0, rel=1e-3)


def test_no_camera_without_a_chip_clear_of_the_border() -> None:
    assert straight_down_camera([], image_size=SIZE, chip_diameter_mm=39.0) is None
    assert straight_down_camera([(0.0, 10.0, 50.0, 130.0), (2300.0, 1500.0, 2400.0, 1600.0)], image_size=SIZE,
                                chip_diameter_mm=39.0) is None
    assert at_border((0.0, 10.0, 50.0, 130.0), image_size=SIZE)
    assert not at_border((5.0, 10.0, 50.0, 130.0), image_size=SIZE)


def _rendered(stacks: list[tuple[float, float, tuple[int, ...]]]) -> tuple[np.ndarray, list[tuple[float, ...]]]:
    """Stacks at (x, y) mm seen straight down from 1 m (2400x1600, 50 degrees: ~2.6 px per mm), no effects."""
    scene = Scene(layout=TableLayout.default(), chipset=CHIPSET,
                  lighting=Lighting(colour_temperature_k=4500.0, shadow_strength=0.3))
    for i, (x, y, chips) in enumerate(stacks):
        scene.chips.append(ChipStack(id=i + 1, x=x, y=y, chips=chips, angle_deg=23.0 * i))
    camera = Camera.look_at(eye=(0.0, 0.0, 1000.0), target=(0.0, 0.0, 0.0), size=SIZE, hfov_deg=50.0)
    result = Renderer(camera).render(scene, rng=np.random.default_rng(24001))
    objects = sorted((o for o in result.objects if o.cls == DetectorClass.CHIP), key=lambda o: o.id)
    assert len(objects) == len(stacks)
    return result.image, [tuple(float(v) for v in o.box) for o in objects]


def test_a_stack_away_from_the_centre_is_counted_from_its_side() -> None:
    stacks = [(380.0, 150.0, (100, 100, 100)), (-380.0, -150.0, (500, 500)), (300.0, -200.0, (25,)),
              (-250.0, 200.0, (1000,)), (-100.0, -250.0, (5000,))]
    image, boxes = _rendered(stacks)
    plain = ChipRecogniser(CHIPSET)
    without = plain.read_frame(image, boxes)
    assert [r.count for r in without] == [1] * len(stacks)  # no camera: a stack is one chip
    # the camera's height measured (a tape): every stack counted from its side, the offset net's evidence in
    read = read_straight_down(image, boxes, recogniser=plain, height_mm=1000.0)
    assert [r.denominations for r in read] == [chips for _, _, chips in stacks]
    assert read[0].count_confidence > 0.5 and read[1].count_confidence > 0.5
    # the height assumed, the geometry alone: the two stacks, 410 mm out, tell it. (With the offset net too the
    # stack of 2 reads 3, 0.4 sure, since session 46's net: the net reads its side right for the true height, 1.9
    # patch px, but the stack of 3's 0.5 px short, so the pair no longer rules out a camera 1400 mm up.)
    geometry = read_straight_down(image, boxes, recogniser=ChipRecogniser(CHIPSET, offset_net=None))
    assert [r.denominations for r in geometry] == [chips for _, _, chips in stacks]
    assert geometry[0].count_confidence > 0.3 and geometry[1].count_confidence > 0.3


def test_a_box_at_the_border_keeps_the_reading_without_a_camera() -> None:
    image, boxes = _rendered([(380.0, 150.0, (100, 100, 100)), (300.0, -200.0, (25,)), (-250.0, 200.0, (1000,))])
    x1, _, x2, _ = boxes[0]
    if (x1 + x2) / 2 > SIZE[0] / 2:  # the stack cut by the frame's right edge, 30 px of it left out
        edge = int(x2) - 30
        cut, shifted = image[:, :edge], [(b[0], b[1], min(b[2], float(edge)), b[3]) for b in boxes]
    else:  # by its left edge
        edge = int(x1) + 30
        cut, shifted = image[:, edge:], [(max(0.0, b[0] - edge), b[1], b[2] - edge, b[3]) for b in boxes]
    assert all(b[2] > b[0] for b in shifted)
    plain = ChipRecogniser(CHIPSET)
    read = read_straight_down(np.ascontiguousarray(cut), shifted, recogniser=plain)
    assert read[0].count == 1 and read[0].count_confidence == 0.0


def _chip_boxes(gain: float, count: int = 12) -> list[tuple[float, float, float, float]]:
    """Square chip boxes spread over the photo, 120 px across at its centre and `gain` times more at its right side
    (linearly across: the table nearer the camera there)."""
    rng = np.random.default_rng(24)
    boxes = []
    for _ in range(count):
        u, v = float(rng.uniform(300, SIZE[0] - 300)), float(rng.uniform(300, SIZE[1] - 300))
        half = 60.0 * (1.0 + gain * (u - SIZE[0] / 2) / (SIZE[0] / 2))
        boxes.append((u - half, v - half, u + half, v + half))
    return boxes


def test_chips_growing_across_the_photo_tell_a_tilted_camera_and_no_camera_is_implied() -> None:
    level = _chip_boxes(0.0)
    assert straight_down_camera(level, image_size=SIZE, chip_diameter_mm=39.0) is not None
    assert size_change(level, image_size=SIZE) == pytest.approx(0.0, abs=1e-6)
    tilted = _chip_boxes(0.08)  # 8 % larger at the right side than at the centre: a camera tilted some 10 degrees
    assert size_change(tilted, image_size=SIZE) == pytest.approx(0.08, rel=1e-3)
    assert straight_down_camera(tilted, image_size=SIZE, chip_diameter_mm=39.0) is None
    x1, y1, _, _ = level[0]
    covered = [(x1, y1, x1 + 80.0, y1 + 80.0), *level[1:]]  # a chip two-thirds the others' size: partly covered
    assert size_change(covered, image_size=SIZE) == pytest.approx(0.0, abs=1e-6)
    assert size_change(tilted[:3], image_size=SIZE) is None  # too few chips to tell: taken as straight down
    assert straight_down_camera(tilted[:3], image_size=SIZE, chip_diameter_mm=39.0) is not None


def test_a_box_wider_than_any_stack_or_a_count_at_the_end_of_the_range_is_one_chip() -> None:
    stacks = [(380.0, 150.0, (100, 100, 100)), (-380.0, -150.0, (500, 500)), (300.0, -200.0, (25,)),
              (-250.0, 200.0, (1000,)), (-100.0, -250.0, (5000,))]
    image, boxes = _rendered(stacks)
    x1, y1, x2, y2 = boxes[2]
    grown = 0.6 * (x2 - x1)  # the single 25 boxed with the felt round it: 2.2 chips across each way
    wide = [*boxes, (x1 - grown, y1 - grown, x2 + grown, y2 + grown)]
    read = read_straight_down(image, wide, recogniser=ChipRecogniser(CHIPSET), height_mm=1000.0)
    assert read[-1].count == 1 and read[-1].count_confidence == 0.0
    assert [r.count for r in read[:2]] == [3, 2]
    # a recogniser that counts up to 3: the stack of 3 is at the end of its range, not measured; no reading is ever
    # the end of the range. (The stack of 2, 1 px of side from 3 here, read 2 until session 45; with its chips drawn at
    # their own turns it reads 3 by a hair, so it is one chip unmeasured too.)
    short = read_straight_down(image, boxes, recogniser=ChipRecogniser(CHIPSET, max_count=3))
    assert short[0].count == 1 and short[0].count_confidence == 0.0
    assert all(r.count < 3 for r in short)
    assert all(r.count_confidence == 0.0
               for r, (_, _, chips) in zip(short, stacks, strict=True) if r.count < len(chips))
