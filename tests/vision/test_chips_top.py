"""A stack's box cut across its top disc, run on up the stack's axis to where a top disc fits
(`ChipRecogniser.find_top`, on by default since session 56)."""

from __future__ import annotations

import numpy as np
import pytest

from floorman.vision.chips import ChipRecogniser
from floorman.vision.chips_geometry import Box, TableCamera
from tests.vision.test_chips import CHIPSET, Rendered, exact_table_camera, render_chips, tilted_camera

STACKS: list[tuple[int, ...]] = [(100,) * 16, (1000,) * 14, (25,) * 12, (500,) * 18, (5000,) * 3]


@pytest.fixture(scope="module")
def rendered() -> Rendered:
    """Tall stacks seen from a camera low enough that their sides run 40-70 px below their tops (top discs ~55 px)."""
    return render_chips(STACKS, camera=tilted_camera(size=(1920, 1080), tilt_deg=40.0, hfov=40.0), seed=5501)


def cut_top(model: TableCamera, truth: Box, position_mm: tuple[float, float], count: int, *, share: float,
            aside: float = 0.0) -> Box:
    """The stack's box with its top end cut by `share` of the top disc's length along the stack's axis, as the
    detector boxes a stack whose top touches a neighbour's side at times, and moved `aside` px the other way."""
    base = model.project(np.array([[*position_mm, 0.0]]))[0]
    top = model.project(np.array([[*position_mm, count * CHIPSET.thickness_mm]]))[0]
    along = top - base
    k = int(np.argmax(np.abs(along)))
    disc = (truth[k + 2] - truth[k]) - abs(float(along[k]))  # the top disc's length that way, px
    cut = list(truth)
    if along[k] > 0:
        cut[k + 2] -= share * disc
    else:
        cut[k] += share * disc
    cut[1 - k] += aside
    cut[3 - k] += aside
    return (cut[0], cut[1], cut[2], cut[3])


@pytest.mark.parametrize("count", [16, 14, 12, 18])
def test_a_box_cut_across_its_top_disc_is_read_whole(rendered: Rendered, count: int) -> None:
    model = exact_table_camera(rendered.camera)
    truth = next(o for o in rendered.chips if o.chips is not None and len(o.chips) == count)
    box = cut_top(model, truth.box, truth.position_mm, count, share=0.4)
    # (the box-side reader alone reads some such boxes whole: what the run-on up the axis does is seen without it)
    alone = ChipRecogniser(CHIPSET, camera=model, find_top=False, box_net=None)
    assert alone.read(rendered.image, box).count < count - 2
    recogniser = ChipRecogniser(CHIPSET, camera=model, find_top=True)
    reading = recogniser.read(rendered.image, box)
    assert (reading.count, reading.top) == (count, truth.chips[-1])
    np.testing.assert_allclose(recogniser._found_top(rendered.image, box), truth.box, atol=3.0)


@pytest.mark.parametrize("count", [16, 14, 18])
def test_a_box_round_the_side_alone_is_read_whole(rendered: Rendered, count: int) -> None:
    """The top disc left out of the box all but a tenth, the box 4 px off across the stack's axis: the disc is
    found up and across it."""
    model = exact_table_camera(rendered.camera)
    truth = next(o for o in rendered.chips if o.chips is not None and len(o.chips) == count)
    box = cut_top(model, truth.box, truth.position_mm, count, share=0.9, aside=4.0)
    assert ChipRecogniser(CHIPSET, camera=model, find_top=False).read(rendered.image, box).count < count - 4
    recogniser = ChipRecogniser(CHIPSET, camera=model, find_top=True)
    assert recogniser.read(rendered.image, box).count == count
    # the box grown to the truth's top end, its sides where the box and the disc found reach (across the axis the
    # rim's period places the disc to a few px: the sides are found again in the image when the box is read)
    whole = np.concatenate([np.minimum(truth.box, box)[:2], np.maximum(truth.box, box)[2:]])
    np.testing.assert_allclose(recogniser._found_top(rendered.image, box), whole, atol=5.0)


def test_a_whole_stacks_box_is_left_as_it_is(rendered: Rendered) -> None:
    model = exact_table_camera(rendered.camera)
    recogniser = ChipRecogniser(CHIPSET, camera=model, find_top=True)
    for truth in rendered.chips:
        assert recogniser._found_top(rendered.image, truth.box) == truth.box


def test_a_box_on_blank_felt_is_left_as_it_is() -> None:
    camera = tilted_camera(size=(1920, 1080), tilt_deg=40.0, hfov=40.0)
    image = np.full((1080, 1920, 3), (40, 110, 30), dtype=np.uint8)
    box = (900.0, 500.0, 960.0, 560.0)
    assert ChipRecogniser(CHIPSET, camera=exact_table_camera(camera), find_top=True)._found_top(image, box) == box
