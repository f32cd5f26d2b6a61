"""The learned side reader: the chips under a stack's top read from their rims against the club's colours."""

from __future__ import annotations

import numpy as np
import pytest

from floorman.core.chip_sides import RIM_ANGLES_DEG, SIDE_SHADE
from floorman.core.chips import ChipSet
from floorman.datasets.chip_designs import club_chipset
from floorman.vision.chips import ChipRecogniser
from floorman.vision.chips_colour import nominal_bgr
from floorman.vision.chips_geometry import BOX_SIGMA_PX
from floorman.vision.chips_side import read_side
from floorman.vision.chips_side_net import MODEL_PATH, SAMPLE_MIN_PX, ChipSideNet, default_side_net, side_samples
from tests.vision.test_chips import CHIPSET, exact_table_camera, render_chips, tilted_camera

WHITE, RED, GREEN, BLACK, BLUE = range(5)  # indices of the default set: 25, 100, 500, 1K, 5K


def shipped() -> ChipSideNet:
    net = default_side_net()
    assert net is not None, f"the shipped side reader {MODEL_PATH} is missing"
    return net


def recogniser_for(camera_size: tuple[int, int], chipset: ChipSet = CHIPSET) -> tuple[ChipRecogniser, object]:
    camera = tilted_camera(size=camera_size)
    return ChipRecogniser(chipset, camera=exact_table_camera(camera), box_sigma_px=BOX_SIGMA_PX), camera


def rim_of(denomination: int, illuminant: np.ndarray, *, chips: int = 3) -> np.ndarray:
    """A rim of one colour, the denomination's body under the light, as its side shows it."""
    body, _ = nominal_bgr(CHIPSET.denominations[denomination])
    return np.tile(body * SIDE_SHADE * illuminant, (chips, len(RIM_ANGLES_DEG), 1))


def test_the_shipped_reader_scores_every_candidate_of_any_chip_set() -> None:
    net = shipped()
    illuminant = np.array([0.9, 0.85, 0.8])
    rim = rim_of(GREEN, illuminant)
    valid = np.ones(rim.shape[:2], dtype=bool)
    evidence = net.log_evidence(rim, valid, illuminant=illuminant, px_per_chip=4.0, chipset=CHIPSET)
    assert evidence.shape == (3, 5)
    np.testing.assert_allclose(np.exp(evidence).sum(axis=1), 1.0, atol=1e-6)
    assert (evidence.argmax(axis=1) == GREEN).all()
    # the candidates are the club's: a set of four (no green) scores four, and the green rim is none of them
    four = CHIPSET.model_copy(update={"denominations": [d for d in CHIPSET.denominations if d.value != 500]})
    assert net.log_evidence(rim, valid, illuminant=illuminant, px_per_chip=4.0, chipset=four).shape == (3, 4)
    assert net.log_evidence(rim[:0], valid[:0], illuminant=illuminant, px_per_chip=4.0, chipset=CHIPSET).shape == (0, 5)


def test_the_learned_evidence_replaces_the_labels_and_a_lone_chip_needs_much_of_it() -> None:
    labels = np.full((4, 5), WHITE)  # every side label white: the labels alone read white
    valid = np.ones((4, 5), dtype=bool)
    from floorman.vision.chips_side import emission_log

    emission = emission_log(CHIPSET, px_per_chip=3.0)
    learned = np.log(np.full((4, 5), 0.02))
    learned[:, RED] = np.log(0.92)
    assert read_side(labels, valid, emission, top=RED, learned=learned).chips == (RED,) * 4
    # one chip the net finds black among reds: 0.92 against 0.02 is not enough to turn it (two changes cost more)
    unsure = learned.copy()
    unsure[1] = np.log([0.02, 0.3, 0.02, 0.64, 0.02])
    assert read_side(labels, valid, emission, top=RED, learned=unsure).chips == (RED,) * 4
    # a side whose every chip the net reads surely as itself is read chip by chip (drawn each alone)
    mixed = np.log(np.full((4, 5), 0.001))
    for k, d in enumerate((BLACK, GREEN, BLUE, WHITE)):
        mixed[k, d] = np.log(0.996)
    assert read_side(labels, valid, emission, top=RED, learned=mixed).chips == (BLACK, GREEN, BLUE, WHITE)


def test_a_bet_of_5000s_at_two_pixels_per_chip_is_told_from_25s() -> None:
    # The side labels cannot tell blue 5000s (white spots) from white 25s (blue spots): such bets were never given
    # more than 0.5 (`test_chips_side.py`); the learned reader reads the rim's share of each colour.
    recogniser, camera = recogniser_for((1000, 750))
    stacks = [(100,) * 10, (500,) * 8, (1000,) * 9, (100,) * 7, (5000,) * 6]
    rendered = render_chips(stacks, camera=camera, seed=1)
    for o in rendered.chips:
        reading = recogniser.read(rendered.image, o.box)
        assert 2.2 <= reading.px_per_chip < 2.6
        assert reading.denominations == o.chips
        assert reading.confidence >= 0.8


@pytest.mark.parametrize("size", [(960, 720), (1920, 1440)])
def test_chips_among_their_swapped_colours_are_read_and_never_sure_when_wrong(size: tuple[int, int]) -> None:
    recogniser, camera = recogniser_for(size)
    stacks = [(5000, 25, 25, 25, 25), (25, 5000, 5000, 5000), (25, 25, 5000, 25, 25), (100,) * 5]
    rendered = render_chips(stacks, camera=camera, seed=3)
    right = 0
    for o in rendered.chips:
        reading = recogniser.read(rendered.image, o.box)
        assert reading.count == len(o.chips)
        right += reading.denominations == o.chips
        assert reading.denominations == o.chips or reading.confidence < 0.8
    assert right >= 2  # a lone chip in a run of its swapped colours is read as the run


def test_mixed_stacks_at_two_pixels_per_chip_are_never_sure_when_wrong() -> None:
    recogniser, camera = recogniser_for((960, 720))
    stacks = [(25, 100, 100, 100, 100), (500, 1000, 1000, 1000), (5000, 25, 25, 25, 25, 25), (100, 500, 500, 500)]
    rendered = render_chips(stacks, camera=camera, seed=3)
    right = 0
    for o in rendered.chips:
        reading = recogniser.read(rendered.image, o.box)
        right += reading.denominations == o.chips
        assert reading.denominations == o.chips or reading.confidence < 0.8
    assert right >= 3  # the labels read 2 of 4


def test_chips_each_drawn_alone_and_another_clubs_chips_are_read_chip_by_chip() -> None:
    stacks = [(100, 500, 1000, 25, 5000, 100), (5000, 25, 5000, 500, 25), (1000, 100, 100, 25, 500, 500, 1000)]
    for seed, chipset in ((5, CHIPSET), (6, club_chipset(np.random.default_rng(27), base=CHIPSET))):
        recogniser, camera = recogniser_for((1920, 1440), chipset)
        rendered = render_chips(stacks, camera=camera, seed=seed, chipset=chipset)
        assert len(rendered.chips) == 3
        read = [recogniser.read(rendered.image, o.box).denominations == o.chips for o in rendered.chips]
        assert sum(read) >= 2, (chipset, read)


def test_training_samples_are_the_lower_chips_of_stacks_counted_right() -> None:
    camera = tilted_camera(size=(1600, 1200))
    stacks = [(100, 100, 500, 500), (5000,) * 6, (1000, 25, 25), (500,)]
    rendered = render_chips(stacks, camera=camera, seed=2)
    truth = [(o.box, o.chips) for o in rendered.chips]
    samples = side_samples(rendered.image, CHIPSET, homography=camera.table_homography(),
                           camera_height_mm=float(camera.eye[2]), stacks=truth)
    values = [d.value for d in CHIPSET.denominations]
    below = {tuple(values[i] for i in s.truth) for s in samples}
    assert below <= {chips[:-1] for _, chips in truth if len(chips) >= 2}
    assert len(below) >= 2  # most stacks are counted right here
    for s in samples:
        assert s.rim.shape == (len(s.truth), len(RIM_ANGLES_DEG), 3) and s.valid.shape == s.rim.shape[:2]
        assert s.px_per_chip >= SAMPLE_MIN_PX
        assert s.bodies.shape == (5, 3) and s.spot_counts.shape == (5,)
        assert s.illuminant.shape == (3,) and (s.illuminant > 0).all()
