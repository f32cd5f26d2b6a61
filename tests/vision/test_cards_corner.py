"""The corner index searched for around the corners of an outline a few per cent off the card."""

from __future__ import annotations

import numpy as np
import pytest

from floorman.datasets.textures import N_DECK_DESIGNS
from floorman.vision import cards
from floorman.vision.cards import order_corners
from floorman.vision.cards_cnn import CnnReading
from floorman.vision.cards_corner import rectify_with_margin, search_corners
from floorman.vision.cards_index import CANON_H, CANON_W, RANK_CODES, SUIT_CODES, IndexScores
from floorman.vision.cards_matcher import IndexReading, default_templates, read_rectified, rectify, score_index
from tests.vision.test_cards import place_card, table


def _card_of(scores: IndexScores) -> str:
    return RANK_CODES[int(scores.rank_linear.argmax())] + SUIT_CODES[int(scores.suit_linear.argmax())]


def _cut_at_top(corners: np.ndarray, share: float) -> np.ndarray:
    """The outline with its top side moved down by `share` of the card's width (a card partly hidden there)."""
    tl, tr, br, bl = order_corners(corners.astype(np.float32))
    step = share * float(np.linalg.norm(tr - tl))
    down = (bl - tl) / float(np.linalg.norm(bl - tl))
    return np.array([tl + step * down, tr + step * down, br, bl], dtype=np.float32)


def test_reads_the_index_of_an_outline_cut_short() -> None:
    bank = default_templates()
    fixed_corners, searched_corners = 0, 0
    for design in range(N_DECK_DESIGNS):
        image = table(seed=design)
        _, corners = place_card(image, "7C", design=design, angle_deg=20.0)
        outline = _cut_at_top(corners, 0.06)
        found = search_corners(image, outline, score=lambda f: score_index(bank, f))
        assert len(found) >= 2, f"design {design}"
        assert all(_card_of(scores) == "7C" for scores in found), f"design {design}"
        fixed_corners += read_rectified(rectify(image, outline)).corners_read
        searched_corners += len(found)
    assert searched_corners > fixed_corners  # the fixed crops cut through the top index on some designs


def test_finds_nothing_on_bare_table() -> None:
    image = table(seed=3)
    _, corners = place_card(table(seed=3), "7C", design=0, angle_deg=20.0)
    bank = default_templates()
    assert search_corners(image, order_corners(corners.astype(np.float32)), score=lambda f: score_index(bank, f)) == []


def test_rectify_with_margin_keeps_the_surroundings() -> None:
    image = table(seed=1)
    _, corners = place_card(image, "2H", design=1, angle_deg=0.0)
    outline = order_corners(corners.astype(np.float32))
    framed = rectify_with_margin(image, outline, margin=12)
    assert framed.shape == (CANON_H + 24, CANON_W + 24, 3)
    plain = rectify(image, outline)
    inner = framed[12:12 + CANON_H, 12:12 + CANON_W].astype(np.float32)
    assert float(np.abs(inner - plain.astype(np.float32)).mean()) < 3.0
    assert float(framed[:6].mean(axis=(0, 1))[1]) > float(framed[:6].mean(axis=(0, 1))[2])  # green felt above


def test_rejects_a_negative_margin() -> None:
    image = table(seed=1)
    with pytest.raises(ValueError, match="margin"):
        rectify_with_margin(image, np.array([[0, 0], [10, 0], [10, 14], [0, 14]], dtype=np.float32), margin=-1)


@pytest.mark.parametrize(("classifier_says", "taken"), [("8C", "7C"), ("8S", "7S"), ("7S", None)])
def test_the_searched_index_gives_its_rank_and_the_suit_only_when_the_classifiers(classifier_says: str,
                                                                               taken: str | None) -> None:
    """A 7C whose outline is cut short at the top (a hand over that end): the fixed crops read nothing, the
    search reads 7C at several corners. Of the classifier's suit it is taken whole; of another suit (a small
    index pip blurs into the other suit of its colour) only its rank is taken, with the classifier's suit (since
    session 9); and when that is the classifier's own reading the search adds nothing."""
    image = table(seed=2)
    _, corners = place_card(image, "7C", design=2, angle_deg=20.0)
    outline = _cut_at_top(corners, 0.06)
    nothing = IndexReading(card=None, confidence=0.0)
    learned = (CnnReading(card=classifier_says, confidence=0.6, face=1.0), outline)
    index, where = cards._searched_reading(image, learned, index=nothing, outline=None, templates=None)
    if taken is not None:
        assert (index.card, index.searched) == (taken, True)
        assert index.corners_agreeing >= 2
        assert index.confidence >= 0.6
        assert where is outline
    else:
        assert (index, where) == (nothing, None)
