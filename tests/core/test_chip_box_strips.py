"""The strips across a chip box's sides: one column per image pixel outwards of the side, rows along it."""

from __future__ import annotations

import math

import numpy as np
import pytest

from floorman.core.chip_box_strips import (
    STRIP_ALONG,
    STRIP_DEPTH_PX,
    side_strip,
    strip_scalars,
    strips_spec,
)


def edge_image(*, x: int | None = None, y: int | None = None) -> np.ndarray:
    """200x300 dark image, light from column `x` (or row `y`) on."""
    image = np.full((200, 300, 3), 40, dtype=np.uint8)
    if x is not None:
        image[:, x:] = 220
    if y is not None:
        image[y:, :] = 220
    return image


def first_light_column(strip: np.ndarray) -> int:
    row = strip[STRIP_ALONG // 2, :, 0].astype(int)
    return int(np.argmax(row > 130))


@pytest.mark.parametrize(("side", "box", "image", "expected"), [
    (2, (100.0, 50.0, 150.0, 120.0), edge_image(x=153), STRIP_DEPTH_PX + 3),  # x2 3 px short of an edge outwards
    (3, (100.0, 50.0, 150.0, 120.0), edge_image(y=118), STRIP_DEPTH_PX - 2),  # y2 2 px past an edge
])
def test_a_strip_shows_the_image_at_its_own_pixels_across_the_side(side: int, box: tuple[float, float, float, float],
                                                                    image: np.ndarray, expected: int) -> None:
    strip = side_strip(image, box, side)
    assert strip.shape == (STRIP_ALONG, 2 * STRIP_DEPTH_PX, 3) and strip.dtype == np.uint8
    assert abs(first_light_column(strip) - expected) <= 1


def test_a_strip_of_the_near_side_runs_outwards_away_from_the_box() -> None:
    image = np.full((200, 300, 3), 40, dtype=np.uint8)
    image[:, :100] = 220  # light left of x = 100: outside the box's x1 side
    strip = side_strip(image, (110.0, 50.0, 160.0, 120.0), 0)
    row = strip[STRIP_ALONG // 2, :, 0].astype(int)
    assert row[0] < 130 and row[-1] > 130  # inside the box first, the light outside last
    assert abs(int(np.argmax(row > 130)) - (STRIP_DEPTH_PX + 10)) <= 1


def test_the_scalars_say_which_end_of_the_stack_a_side_is() -> None:
    growth = np.array([1.0, 0.0])  # the stack grows towards +x: its top disc at x2
    box = (0.0, 0.0, 100.0, 50.0)
    assert strip_scalars(box, 2, growth)[0] == pytest.approx(1.0)
    assert strip_scalars(box, 0, growth)[0] == pytest.approx(-1.0)
    assert strip_scalars(box, 1, growth)[0] == pytest.approx(0.0)
    assert strip_scalars(box, 0, growth)[1] == pytest.approx(math.log(50.0 / 50.0))
    assert strip_scalars(box, 1, growth)[1] == pytest.approx(math.log(100.0 / 50.0))


def test_bad_sides_and_boxes_are_refused() -> None:
    image = edge_image(x=150)
    with pytest.raises(ValueError, match="side 0-3"):
        side_strip(image, (0.0, 0.0, 10.0, 10.0), 4)
    with pytest.raises(ValueError, match="x2 > x1"):
        side_strip(image, (10.0, 0.0, 10.0, 10.0), 0)
    assert strips_spec() == f"{STRIP_DEPTH_PX},{STRIP_ALONG},0.1"
