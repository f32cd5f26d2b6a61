"""Cards seen at a slant: with a calibration an outline's top is its short side on the table (`upright_on_table`)."""

from __future__ import annotations

import numpy as np
import pytest

from floorman.core.cards import Card
from floorman.core.geometry import homography_scales
from floorman.core.layout import TableLayout
from floorman.datasets.camera import Camera
from floorman.datasets.render import ObjectTruth, Renderer
from floorman.datasets.scene import CardObject, Lighting, Scene
from floorman.vision.cards import box_quads, plane_box_quads, recognise_card, upright_on_table
from floorman.vision.table_state import recognise_card_reader
from tests.vision.test_chips import CHIPSET
from tests.vision.test_table_state import calibration_of

LAYOUT = TableLayout.default()
# The scenarios' tilted preset at 1280x720 (`datasets.timeline.scenario_camera`): ~50 degrees from vertical at the
# board, where a card lying along the line of sight shows about 29 x 25 px, its long side the shorter in the image.
TILTED = Camera.look_at(eye=(0.0, -1500.0, 1250.0), target=(0.0, -30.0, 0.0), size=(1280, 720), hfov_deg=74.0)
STRAIGHT_DOWN = Camera.look_at(eye=(0.0, 0.0, 1800.0), target=(0.0, 0.0, 0.0), size=(1280, 720), hfov_deg=76.0)
BOARD = ("7H", "2D", "9D", "10C", "8D")


def render_cards(camera: Camera, cards: tuple[str, ...], *, angle_deg: float = 0.0) -> tuple[np.ndarray,
                                                                                              list[ObjectTruth]]:
    scene = Scene(layout=LAYOUT, chipset=CHIPSET, lighting=Lighting(colour_temperature_k=4000.0))
    xs = np.linspace(-300.0, 300.0, len(cards))
    scene.cards = [CardObject(id=i + 1, card=Card.parse(card), face_up=True, x=float(x), y=0.0, angle_deg=angle_deg)
                   for i, (card, x) in enumerate(zip(cards, xs, strict=True))]
    result = Renderer(camera).render(scene, rng=np.random.default_rng(19))
    return result.image, sorted((o for o in result.objects if o.card is not None), key=lambda o: o.id)


def grown(box: tuple[float, float, float, float], margin: float = 0.1) -> tuple[float, float, float, float]:
    x1, y1, x2, y2 = box
    dx, dy = (x2 - x1) * margin, (y2 - y1) * margin
    return x1 - dx, y1 - dy, x2 + dx, y2 + dy


@pytest.fixture(scope="module")
def tilted_board() -> tuple[np.ndarray, list[ObjectTruth]]:
    return render_cards(TILTED, BOARD)


def test_cards_foreshortened_past_square_are_read_upright_on_the_table(
        tilted_board: tuple[np.ndarray, list[ObjectTruth]]) -> None:
    image, objects = tilted_board
    pixels_to_mm = calibration_of(TILTED).pixels_to_mm
    assert all(o.box[3] - o.box[1] < o.box[2] - o.box[0] for o in objects)  # the long side is the shorter
    in_image = [recognise_card(image, box=grown(o.box)).card for o in objects]
    on_table = [recognise_card(image, box=grown(o.box), pixels_to_mm=pixels_to_mm) for o in objects]
    assert [r.card for r in on_table] == list(BOARD)
    assert sum(card == truth for card, truth in zip(in_image, BOARD, strict=True)) <= 1  # read turned a quarter
    for reading, o in zip(on_table, objects, strict=True):  # the outline: the card's, its top the card's top
        assert reading.corners_px is not None and o.corners_px is not None
        truth = np.array(o.corners_px)
        nearest = [int(np.linalg.norm(truth - corner, axis=1).argmin()) for corner in reading.corners_px]
        assert nearest in ([0, 1, 2, 3], [2, 3, 0, 1])  # upright or upside down, never a quarter turned


def test_the_edge_reader_reads_on_the_plane_with_a_calibration(
        tilted_board: tuple[np.ndarray, list[ObjectTruth]]) -> None:
    image, objects = tilted_board
    reader = recognise_card_reader(pixels_to_mm=calibration_of(TILTED).pixels_to_mm)
    assert [reader(image, o.box).card for o in objects] == list(BOARD)


def test_an_outline_is_turned_upright_on_the_table(tilted_board: tuple[np.ndarray, list[ObjectTruth]]) -> None:
    _, objects = tilted_board
    pixels_to_mm = calibration_of(TILTED).pixels_to_mm
    truth = np.array(objects[0].corners_px, dtype=np.float32)  # TL, TR, BR, BL of the upright card
    high, low = homography_scales(pixels_to_mm, tuple(truth.mean(axis=0)))
    assert high / low > 1.5  # ~50 degrees from vertical
    turned = np.roll(truth, 1, axis=0)  # as `order_corners` orders it: its top the side shorter in the image
    assert np.array_equal(upright_on_table([turned], pixels_to_mm)[0], np.roll(turned, -1, axis=0))
    assert np.array_equal(upright_on_table([truth], pixels_to_mm)[0], truth)
    assert upright_on_table([turned], None)[0] is turned


def test_a_card_seen_square_on_is_read_as_without_a_calibration() -> None:
    image, objects = render_cards(STRAIGHT_DOWN, ("7H", "KS"), angle_deg=20.0)
    pixels_to_mm = calibration_of(STRAIGHT_DOWN).pixels_to_mm
    for o in objects:
        high, low = homography_scales(pixels_to_mm, ((o.box[0] + o.box[2]) / 2, (o.box[1] + o.box[3]) / 2))
        assert high / low == pytest.approx(1.0, abs=1e-6)
        on_table = recognise_card(image, box=grown(o.box), pixels_to_mm=pixels_to_mm)
        in_image = recognise_card(image, box=grown(o.box))
        assert on_table.card == in_image.card == o.card
        assert on_table.confidence == in_image.confidence
        assert np.array_equal(on_table.corners_px, in_image.corners_px)


def _nearest_quad_error(quads: list[np.ndarray], truth: np.ndarray) -> float:
    """The largest corner distance (px) of the quad in `quads` closest to `truth`, taken in any corner order."""
    best = np.inf
    for quad in quads:
        for turn in range(4):
            best = min(best, float(np.linalg.norm(np.roll(quad, turn, axis=0) - truth, axis=1).max()))
    return best


@pytest.mark.parametrize("angle_deg", [0.0, 30.0, 65.0, 90.0])
def test_a_card_seen_at_a_slant_is_fitted_to_its_box_on_the_table(angle_deg: float) -> None:
    # Cards turned on the table, from the tilted preset: the card-shaped outlines fitted in the image are
    # rectangles of a card's aspect, which its outline seen at a slant is not; fitted on the table, one is.
    _, objects = render_cards(TILTED, ("7H", "2D", "9D"), angle_deg=angle_deg)
    pixels_to_mm = calibration_of(TILTED).pixels_to_mm
    for o in objects:
        assert o.corners_px is not None
        truth = np.array(o.corners_px)
        box = tuple(round(v) for v in grown(o.box, (1.15 - 1.0) / 2.0))
        on_table = plane_box_quads(box, pixels_to_mm)  # type: ignore[arg-type]
        width = min(np.linalg.norm(truth[1] - truth[0]), np.linalg.norm(truth[2] - truth[1]))
        assert _nearest_quad_error(on_table, truth) <= 0.2 * width
        assert len(on_table) <= 6
    far = objects[0]
    assert far.corners_px is not None
    truth = np.array(far.corners_px)
    in_image = box_quads(tuple(round(v) for v in grown(far.box, 0.075)))  # type: ignore[arg-type]
    on_table = plane_box_quads(tuple(round(v) for v in grown(far.box, 0.075)), pixels_to_mm)  # type: ignore[arg-type]
    if angle_deg in (0.0, 90.0):  # along or across the line of sight: a rectangle of the wrong aspect
        assert _nearest_quad_error(in_image, truth) > 2.0 * _nearest_quad_error(on_table, truth)


def test_plane_fits_on_a_straight_down_camera_are_the_image_fits_and_a_box_past_the_horizon_gets_none() -> None:
    pixels_to_mm = calibration_of(STRAIGHT_DOWN).pixels_to_mm
    box = (600, 300, 640, 352)
    on_table, in_image = plane_box_quads(box, pixels_to_mm), box_quads(box)
    assert len(on_table) == len(in_image) > 0
    assert _nearest_quad_error(on_table, in_image[0]) < 1.5
    horizon = np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.01, -0.2]])  # image row 20 maps to infinity
    assert plane_box_quads((600, 0, 640, 40), horizon) == []
