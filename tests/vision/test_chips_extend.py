"""A stack's box that stops short of its base, run on to where its side meets the felt (`chips_extend`)."""

from __future__ import annotations

from typing import cast

import numpy as np
import pytest

from floorman.core.cards import Card
from floorman.core.geometry import FloatArray
from floorman.core.layout import TableLayout
from floorman.datasets.render import Renderer
from floorman.datasets.scene import CardObject, ChipStack, DetectorClass, Lighting, Scene
from floorman.vision.chips import ChipRecogniser
from floorman.vision.chips_box_net import ChipBoxNet, LearnedSides
from floorman.vision.chips_extend import MIN_PX_PER_CHIP, RUN, SIDE_CHANGE, extended_box, felt_shares, side_end
from floorman.vision.chips_geometry import Box, TableCamera, fit_stack
from floorman.vision.chips_refine import felt_mask, shadow_mask
from tests.vision.test_chips import CHIPSET, Rendered, exact_table_camera, render_chips, tilted_camera

STACKS: list[tuple[int, ...]] = [(100,) * 20, (1000,) * 18, (25,) * 12, (5000,) * 3]


@pytest.fixture(scope="module")
def rendered() -> Rendered:
    """Tall stacks seen from a camera low enough that their sides run 45-75 px below their tops."""
    return render_chips(STACKS, camera=tilted_camera(size=(1920, 1080), tilt_deg=40.0, hfov=40.0), seed=5001)


def short_box(model: TableCamera, truth: Box, position_mm: tuple[float, float], count: int) -> Box:
    """The stack's box with its base end cut by 60 % of its side's length, as the detector boxes a tall stack's
    dark side at times."""
    base = model.project(np.array([[*position_mm, 0.0]]))[0]
    top = model.project(np.array([[*position_mm, count * CHIPSET.thickness_mm]]))[0]
    along = top - base
    k = int(np.argmax(np.abs(along)))
    cut = list(truth)
    if along[k] > 0:
        cut[k] += 0.6 * abs(float(along[k]))
    else:
        cut[k + 2] -= 0.6 * abs(float(along[k]))
    return (cut[0], cut[1], cut[2], cut[3])


@pytest.mark.parametrize("count", [20, 18, 12])
def test_a_tall_stacks_box_cut_short_of_its_base_is_read_whole(rendered: Rendered, count: int) -> None:
    model = exact_table_camera(rendered.camera)
    truth = next(o for o in rendered.chips if o.chips is not None and len(o.chips) == count)
    box = short_box(model, truth.box, truth.position_mm, count)
    assert ChipRecogniser(CHIPSET, camera=model, extend=False, box_net=None).read(rendered.image, box).count < count - 4
    for box_net in (None, "default"):  # the box-side reader, where it reads the base's side as far off, lets it run on
        assert ChipRecogniser(CHIPSET, camera=model, box_net=box_net).read(rendered.image, box).count == count
    fit = fit_stack(model, box, diameter_mm=CHIPSET.diameter_mm, thickness_mm=CHIPSET.thickness_mm)
    longer = extended_box(rendered.image, box, fit=fit, camera=model, chipset=CHIPSET, max_count=30)
    np.testing.assert_allclose(longer, truth.box, atol=6.0)  # to about a chip's side (3.7 px here)


class _CutAt:
    """A box-side reader that reads the given sides of every box far off (the box cut there), the others where the
    box has them."""

    def __init__(self, *cut: int) -> None:
        self.cut = cut

    def sides(self, _image: object, box: Box, _camera: object) -> LearnedSides:
        return LearnedSides(box, (12.0 if 0 in self.cut else 0.5, 12.0 if 1 in self.cut else 0.5,
                                  12.0 if 2 in self.cut else 0.5, 12.0 if 3 in self.cut else 0.5))


@pytest.fixture(scope="module")
def wide() -> Rendered:
    """The same stacks through a wider lens: their sides run 30-50 px below their tops."""
    return render_chips(STACKS, camera=tilted_camera(size=(1920, 1080), tilt_deg=40.0, hfov=60.0), seed=5001)


def top_disc_box(model: TableCamera, position_mm: tuple[float, float], count: int) -> Box:
    """The box round a stack's top disc alone, as the detector boxes a stack whose side runs under a neighbour."""
    angles = np.linspace(0.0, 2.0 * np.pi, 64, endpoint=False)
    rim = np.column_stack([position_mm[0] + CHIPSET.diameter_mm / 2.0 * np.cos(angles),
                           position_mm[1] + CHIPSET.diameter_mm / 2.0 * np.sin(angles),
                           np.full(64, count * CHIPSET.thickness_mm)])
    points = model.project(rim)
    return (float(points[:, 0].min()), float(points[:, 1].min()), float(points[:, 0].max()),
            float(points[:, 1].max()))


@pytest.mark.parametrize("count", [20, 18, 12])
def test_a_box_round_the_top_disc_alone_is_run_on_where_the_box_side_reader_reads_its_base_end_cut(
        wide: Rendered, count: int) -> None:
    model = exact_table_camera(wide.camera)
    truth = next(o for o in wide.chips if o.chips is not None and len(o.chips) == count)
    box = top_disc_box(model, truth.position_mm, count)
    fit = fit_stack(model, box, diameter_mm=CHIPSET.diameter_mm, thickness_mm=CHIPSET.thickness_mm)
    assert fit.count <= 2 and fit.px_per_chip < MIN_PX_PER_CHIP  # too thin a side to be run on by itself

    def read(*cut: int) -> int:
        reader = cast(ChipBoxNet, _CutAt(*cut))
        return ChipRecogniser(CHIPSET, camera=model, box_net=reader).read(wide.image, box).count

    assert ChipRecogniser(CHIPSET, camera=model, box_net=None).read(wide.image, box).count <= 3
    assert read() <= 3 and read(0, 1) <= 3  # sides read sound, or cut at the top's end: the box stands
    assert read(3) == count  # the base's end (the stack grows up the image) cut: run on to the felt


def test_a_whole_stacks_box_is_left_as_it_is(rendered: Rendered) -> None:
    model = exact_table_camera(rendered.camera)
    for truth in rendered.chips:
        fit = fit_stack(model, truth.box, diameter_mm=CHIPSET.diameter_mm, thickness_mm=CHIPSET.thickness_mm)
        assert extended_box(rendered.image, truth.box, fit=fit, camera=model, chipset=CHIPSET,
                            max_count=30) == truth.box


def test_past_a_stacks_base_the_slabs_are_felt(rendered: Rendered) -> None:
    model = exact_table_camera(rendered.camera)
    truth = next(o for o in rendered.chips if o.chips is not None and len(o.chips) == 20)
    top: FloatArray = model.project(np.array([[*truth.position_mm, 20 * CHIPSET.thickness_mm]]))[0]
    felt = np.median(rendered.image[:40, :40].reshape(-1, 3).astype(np.float64), axis=0)
    shares = felt_shares(rendered.image, model, top, counts=np.arange(2, 31), chipset=CHIPSET, felt=felt)
    assert np.all(shares[:17] < 0.6)  # chips 2-18: the side
    assert np.all(shares[20:] > 0.7)  # chips 22-30: felt past the base


def test_a_box_on_blank_felt_is_left_as_it_is() -> None:
    camera = tilted_camera(size=(1920, 1080), tilt_deg=40.0, hfov=40.0)
    model = exact_table_camera(camera)
    image = np.full((1080, 1920, 3), (40, 110, 30), dtype=np.uint8)
    box = (900.0, 500.0, 960.0, 560.0)
    fit = fit_stack(model, box, diameter_mm=CHIPSET.diameter_mm, thickness_mm=CHIPSET.thickness_mm)
    assert extended_box(image, box, fit=fit, camera=model, chipset=CHIPSET, max_count=30) == box


def test_the_felt_and_shadow_masks_tell_felt_from_its_shadow_and_from_chips() -> None:
    """`chips_refine.felt_mask` and `shadow_mask`, which both the slabs here and the silhouette's rays test."""
    felt = np.array([40.0, 110.0, 30.0])
    colours = np.array([felt, felt + 6.0, felt * 0.6, felt * 0.2, (200.0, 200.0, 200.0), (30.0, 30.0, 160.0)])
    np.testing.assert_array_equal(felt_mask(colours, felt), [True, True, False, False, False, False])
    np.testing.assert_array_equal(shadow_mask(colours, felt), [False, False, True, False, False, False])


@pytest.mark.parametrize("count", [20, 12])
def test_a_second_box_of_a_stack_is_read_where_its_count_is_surer(rendered: Rendered, count: int) -> None:
    # The detector's second finer look (`detections.ALTERNATIVE_BOX`): a box cut short of the base beside the whole
    # stack's, either way round, reads the whole stack; two cut boxes read as cut.
    model = exact_table_camera(rendered.camera)
    truth = next(o for o in rendered.chips if o.chips is not None and len(o.chips) == count)
    box = short_box(model, truth.box, truth.position_mm, count)
    recogniser = ChipRecogniser(CHIPSET, camera=model, extend=False)
    assert recogniser.read(rendered.image, box).count < count - 4
    for first, second in ((box, truth.box), (truth.box, box)):
        found = recogniser.evidence(rendered.image, first, alternative=second)
        assert found.box == truth.box
        assert recogniser.read_evidence(rendered.image, [found])[0].count == count
    assert recogniser.evidence(rendered.image, box, alternative=box).box == box


@pytest.fixture(scope="module")
def on_a_card() -> Rendered:
    """A stack of sixteen 1000s whose base meets a face-up card lying past it (towards the point under the camera),
    not felt: as a seat's stack meets its neighbour's side or the hole cards."""
    camera = tilted_camera(size=(1920, 1080), tilt_deg=40.0, hfov=40.0)
    scene = Scene(layout=TableLayout.default(), chipset=CHIPSET,
                  lighting=Lighting(colour_temperature_k=4500.0, shadow_strength=0.3))
    scene.chips.append(ChipStack(id=1, x=0.0, y=0.0, chips=(1000,) * 16))
    scene.cards.append(CardObject(id=2, card=Card.parse("7H"), face_up=True, x=0.0, y=-64.0))
    result = Renderer(camera).render(scene, rng=np.random.default_rng(5002))
    chips = [o for o in result.objects if o.cls == DetectorClass.CHIP]
    return Rendered(result.image, chips, camera)


def test_a_cut_box_whose_side_meets_no_felt_is_run_on_to_where_its_colour_changes(on_a_card: Rendered) -> None:
    model = exact_table_camera(on_a_card.camera)
    truth = on_a_card.chips[0]
    box = short_box(model, truth.box, truth.position_mm, 16)
    fit = fit_stack(model, box, diameter_mm=CHIPSET.diameter_mm, thickness_mm=CHIPSET.thickness_mm)
    assert fit.count < 12
    # no felt past the base: run on only where the box-side reader reads the box cut there
    assert extended_box(on_a_card.image, box, fit=fit, camera=model, chipset=CHIPSET, max_count=30) == box
    longer = extended_box(on_a_card.image, box, fit=fit, camera=model, chipset=CHIPSET, max_count=30, cut=True)
    np.testing.assert_allclose(longer, truth.box, atol=6.0)

    def read(*cut: int) -> int:
        reader = cast(ChipBoxNet, _CutAt(*cut))
        return ChipRecogniser(CHIPSET, camera=model, box_net=reader).read(on_a_card.image, box).count

    assert read() < 12  # read sound: the box stands
    assert read(3) == 16  # cut at the base's end (the stack grows up the image)


def test_a_sides_end_is_the_first_slab_past_the_box_unlike_its_side_in_the_box() -> None:
    side = np.tile(np.array([[40.0, 40.0, 45.0], [200.0, 200.0, 200.0], [42.0, 38.0, 44.0]]), (4, 1))  # body, spots
    card = np.full_like(side, 235.0)
    held = np.stack([side] * 5)  # (slabs, samples, BGR): the side the box holds
    assert side_end(np.stack([side] * 6 + [card] * 4), held=held) == 6
    assert side_end(np.stack([side] * 10), held=held) is None  # the side runs on: no end found
    lighter = np.stack([side + SIDE_CHANGE / 4.0] * 3 + [side + 2.0 * SIDE_CHANGE] * 2)
    assert side_end(lighter, held=held) == 3  # a side a little lighter (its shade) goes on; a change ends it
    assert side_end(np.stack([card] * RUN + [side] * 4), held=held) is None  # past the box lies no side of it
    assert side_end(np.stack([side] * 6 + [card] * 4), held=held[:RUN - 1]) is None  # too little side in the box
