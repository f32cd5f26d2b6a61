"""Where a hand is placed on the table: its box's middle, a quarter of the way towards the table centre."""

from __future__ import annotations

import numpy as np
import pytest

from floorman.core.layout import TableLayout
from floorman.vision.calibration import PointPair, calibrate_from_points
from floorman.vision.table_state import HAND_TOWARDS_TIPS, _hand_point


@pytest.fixture(scope="module")
def calibration():  # type: ignore[no-untyped-def]
    # 2 mm per pixel, the table centre at the image centre (640, 360), table y up.
    pairs = [PointPair(pixel=(u, v), table_mm=((u - 640) * 2.0, (360 - v) * 2.0))
             for u, v in ((0, 0), (1280, 0), (1280, 720), (0, 720))]
    return calibrate_from_points(pairs, layout=TableLayout.default(), image_size=(1280, 720))


@pytest.mark.parametrize(("box", "tips_edge"), [
    ((600, 500, 680, 660), (640, 500)),  # a player's hand below the centre: fingertips up, towards the centre
    ((100, 320, 260, 400), (260, 360)),  # from the left: fingertips to the right
    ((600, 100, 680, 200), (640, 200)),  # from above the centre: fingertips down
])
def test_a_hand_is_placed_a_quarter_of_the_way_from_its_box_centre_to_the_fingertips(
        calibration, box: tuple[int, int, int, int], tips_edge: tuple[int, int]) -> None:  # type: ignore[no-untyped-def]
    centre = np.array([(box[0] + box[2]) / 2, (box[1] + box[3]) / 2])
    expected_px = centre + HAND_TOWARDS_TIPS * (np.array(tips_edge) - centre)
    got = _hand_point(calibration, np.array(box, dtype=np.float32))
    assert np.allclose(got, calibration.to_table(expected_px[None, :])[0], atol=0.5)
