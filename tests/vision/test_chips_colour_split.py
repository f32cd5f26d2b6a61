from __future__ import annotations

import cv2
import numpy as np

from floorman.vision.chips import top_colours
from floorman.vision.chips_colour import two_means


def test_top_colours_do_not_depend_on_opencvs_random_state() -> None:
    """A chip's top colours are the same whatever was drawn from OpenCV's global RNG before (k-means++ drew from
    it: the same noisy disc gave another body and spot colour per seed)."""
    image = np.random.default_rng(0).integers(0, 256, size=(60, 60, 3), dtype=np.uint8)
    disc = np.array([[1.0, 0.0, 30.0], [0.0, 1.0, 30.0], [0.0, 0.0, 1.0]])  # a 40-px disc at the image's centre
    seen = set()
    for seed in range(4):
        cv2.setRNGSeed(seed)
        top = top_colours(image, disc, radius_mm=20.0)
        assert top is not None
        seen.add((*top.body.tolist(), *top.spot.tolist()))
    assert len(seen) == 1


def test_two_means_splits_body_from_spots() -> None:
    rng = np.random.default_rng(1)
    body = rng.normal((40.0, 40.0, 200.0), 6.0, size=(300, 3))
    spots = rng.normal((230.0, 230.0, 230.0), 6.0, size=(100, 3))
    labels = two_means(np.concatenate([body, spots]))
    assert len(set(labels[:300].tolist())) == 1
    assert len(set(labels[300:].tolist())) == 1
    assert labels[0] != labels[300]


def test_two_means_of_one_colour_is_one_cluster() -> None:
    labels = two_means(np.full((50, 3), 128.0))
    assert labels.min() == labels.max()
