"""Where a hand is placed on the table: its box's middle taken at a hand's height above the felt, a tenth of the way
towards the table centre."""

from __future__ import annotations

import math

import numpy as np
import pytest

from floorman.core.layout import TableLayout
from floorman.datasets.camera import Camera
from floorman.vision.calibration import Calibration, PointPair, calibrate_from_points
from floorman.vision.table_state import HAND_HEIGHT_MM, HAND_TOWARDS_TIPS, _hand_point, table_camera

_CORNERS_MM = ((-1100.0, -550.0), (1100.0, -550.0), (1100.0, 550.0), (-1100.0, 550.0))


def _calibration(camera: Camera) -> Calibration:
    """The calibration `floorman calibrate` would fit from four marks on the felt seen by `camera`."""
    pixels, _ = camera.project(np.array([[x, y, 0.0] for x, y in _CORNERS_MM]))
    pairs = [PointPair(pixel=(float(u), float(v)), table_mm=mm) for (u, v), mm in zip(pixels, _CORNERS_MM, strict=True)]
    return calibrate_from_points(pairs, layout=TableLayout.default(), image_size=(camera.width, camera.height))


@pytest.fixture(scope="module")
def straight_down() -> Calibration:
    # 2 mm per pixel, the table centre at the image centre (640, 360), table y up.
    pairs = [PointPair(pixel=(u, v), table_mm=((u - 640) * 2.0, (360 - v) * 2.0))
             for u, v in ((0, 0), (1280, 0), (1280, 720), (0, 720))]
    return calibrate_from_points(pairs, layout=TableLayout.default(), image_size=(1280, 720))


@pytest.mark.parametrize(("box", "towards"), [
    ((600, 500, 680, 660), (0.0, 1.0)),  # a player's hand below the centre: fingertips up, towards the centre
    ((100, 320, 260, 400), (1.0, 0.0)),  # from the left: fingertips to the right
    ((600, 100, 680, 200), (0.0, -1.0)),  # from above the centre: fingertips down
])
def test_a_hand_is_placed_from_its_box_centre_a_tenth_of_the_way_to_the_fingertips(
        straight_down: Calibration, box: tuple[int, int, int, int], towards: tuple[float, float]) -> None:
    camera = table_camera(straight_down)
    centre_px = np.array([[(box[0] + box[2]) / 2, (box[1] + box[3]) / 2]])
    centre = camera.to_plane(centre_px, z=HAND_HEIGHT_MM)[0]
    got = _hand_point(camera, np.array(box, dtype=np.float32))
    shift = got - centre
    half_side_mm = (box[3] - box[1] if towards[0] == 0 else box[2] - box[0]) / 2 * 2.0  # 2 mm per pixel at z = 0
    assert np.dot(shift, towards) == pytest.approx(HAND_TOWARDS_TIPS * half_side_mm, rel=0.05)
    assert abs(float(shift[0] * towards[1] - shift[1] * towards[0])) < 0.5


def test_a_hand_off_centre_seen_straight_down_is_placed_nearer_the_centre_than_the_felt_under_its_image() -> None:
    """Seen from above, a palm 40 mm up at a seat lies over a point nearer the camera than the felt its pixels show."""
    camera = Camera.look_at(eye=(0.0, 0.0, 1400.0), target=(0.0, 0.0, 0.0), size=(1280, 720), hfov_deg=95.0)
    calibration = _calibration(camera)
    palm = np.array([0.0, 380.0, 40.0])
    (u, v), = camera.project(palm[None, :])[0]
    box = np.array([u - 6, v - 6, u + 6, v + 6], dtype=np.float32)
    on_felt = calibration.to_table(np.array([[u, v]]))[0]
    got = _hand_point(table_camera(calibration), box)
    assert math.dist(on_felt, palm[:2]) > 10.0  # what the felt's homography alone makes of it
    assert math.dist(got, palm[:2]) < math.dist(on_felt, palm[:2]) / 2


def test_a_hand_seen_from_a_tilted_camera_is_placed_over_where_it_is_not_beyond_it() -> None:
    """From the scenarios' tilted camera (~50 degrees from vertical, behind the dealer) a hand at seat 3's cards
    lies 30 mm up; the felt's homography alone put it ~35 mm further from the camera (session 42: seat 3's taps,
    made over its cards, were read over its stack, and lost)."""
    camera = Camera.look_at(eye=(0.0, -1500.0, 1250.0), target=(0.0, 150.0, 0.0), size=(1280, 720), hfov_deg=90.0)
    calibration = _calibration(camera)
    hand = np.array([-880.0, 260.0, HAND_HEIGHT_MM])
    (u, v), = camera.project(hand[None, :])[0]
    box = np.array([u - 4, v - 4, u + 4, v + 4], dtype=np.float32)
    on_felt = calibration.to_table(np.array([[u, v]]))[0]
    got = _hand_point(table_camera(calibration), box)
    assert math.dist(on_felt, hand[:2]) > 25.0
    assert math.dist(got, hand[:2]) < 3.0
