"""What the learned side reader sees: a chip's rim against each candidate denomination's colours."""

from __future__ import annotations

import numpy as np

from floorman.core.chip_sides import (
    PER_ANGLE,
    PER_CANDIDATE,
    RIM_ANGLES_DEG,
    SIDE_SHADE,
    chipset_colours,
    side_features,
)
from floorman.core.chips import ChipSet

ANGLES = len(RIM_ANGLES_DEG)


def features_of(rim: np.ndarray, valid: np.ndarray, illuminant: np.ndarray,
                chipset: ChipSet) -> tuple[np.ndarray, np.ndarray]:
    bodies, spots, counts = chipset_colours(chipset)
    n = rim.shape[0]
    return side_features(rim, valid, np.repeat(illuminant[None], n, 0), np.full(n, 3.0), np.repeat(bodies[None], n, 0),
                         np.repeat(spots[None], n, 0), np.repeat(counts[None], n, 0))


def test_a_rim_of_a_candidates_body_under_the_light_is_no_distance_from_it() -> None:
    chipset = ChipSet.default()
    bodies, _, _ = chipset_colours(chipset)
    illuminant = np.array([0.7, 0.8, 1.1], dtype=np.float32)
    rim = np.tile(bodies[1] * SIDE_SHADE * illuminant, (1, ANGLES, 1))  # the red 100's body, as its side shows it
    valid = np.ones((1, ANGLES), dtype=bool)
    valid[0, :3] = False  # outside the image
    per, candidate = features_of(rim, valid, illuminant, chipset)
    assert per.shape == (1, 5, PER_ANGLE, ANGLES) and candidate.shape == (1, 5, PER_CANDIDATE)
    assert per.dtype == candidate.dtype == np.float32
    off_body = per[0, :, 9, 3:]  # the distance from each candidate's body, angles in the image
    np.testing.assert_allclose(off_body[1], 0.0, atol=1e-4)
    assert (off_body[[0, 2, 3, 4]] > 0.1).all()
    assert (per[0, :, :, :3] == 0.0).all()  # a sample outside the image shows nothing
    np.testing.assert_array_equal(per[0, 0, -1], valid[0].astype(np.float32))


def test_candidates_are_scored_alike_whatever_their_order_in_the_chip_set() -> None:
    chipset = ChipSet.default()
    turned = chipset.model_copy(update={"denominations": tuple(reversed(chipset.denominations))})
    rng = np.random.default_rng(1)
    rim = rng.uniform(20, 220, (3, ANGLES, 3))
    valid = rng.random((3, ANGLES)) > 0.2
    illuminant = np.array([0.9, 0.85, 0.8])
    per, candidate = features_of(rim, valid, illuminant, chipset)
    per_turned, candidate_turned = features_of(rim, valid, illuminant, turned)
    np.testing.assert_allclose(per_turned, per[:, ::-1], atol=1e-6)
    np.testing.assert_allclose(candidate_turned, candidate[:, ::-1], atol=1e-6)
