"""The index matcher's readings of corner scores: the whole card, and the rank alone (session 9)."""

from __future__ import annotations

import numpy as np
import pytest

from floorman.vision.cards_index import RANK_CODES, SUIT_CODES, IndexScores
from floorman.vision.cards_matcher import rank_reading, reading_of_corners


def corner(card: str, *, rank_sure: float = 0.95, suit_sure: float = 0.95) -> IndexScores:
    """Scores of one corner reading `card`: similarity `rank_sure` / `suit_sure` for its rank and suit, 0.5 for
    the others; the linear classifiers one for it, zero for the others."""
    rank, suit = RANK_CODES.index(card[:-1]), SUIT_CODES.index(card[-1])
    rank_sim = np.full(len(RANK_CODES), 0.5, dtype=np.float32)
    suit_sim = np.full(len(SUIT_CODES), 0.5, dtype=np.float32)
    rank_sim[rank], suit_sim[suit] = rank_sure, suit_sure
    return IndexScores(rank=rank_sim, suit=suit_sim, rank_linear=np.eye(len(RANK_CODES), dtype=np.float32)[rank],
                       suit_linear=np.eye(len(SUIT_CODES), dtype=np.float32)[suit])


def test_corners_agreeing_on_rank_but_not_suit_read_the_rank_with_the_given_suit() -> None:
    """95031: a motion-blurred 4S whose two index corners read 4D and 4C (the small pips blur), while the
    classifier reads 5S (a finger over the pips): the glyphs' rank with the classifier's suit."""
    found = [corner("4D"), corner("4C")]
    whole = reading_of_corners(found)
    assert whole.corners_agreeing < 2  # the whole card: the corners disagree, no sure reading
    reading = rank_reading(found, suit="S")
    assert reading.card == "4S"
    assert (reading.corners_read, reading.corners_agreeing) == (2, 2)
    assert reading.confidence > whole.confidence


def test_corners_agreeing_on_the_whole_card_read_the_rank_as_sure_as_the_card() -> None:
    found = [corner("6S"), corner("6S"), corner("6S")]
    assert rank_reading(found, suit="C").card == "6C"
    assert rank_reading(found, suit="C").confidence == pytest.approx(reading_of_corners(found).confidence)


@pytest.mark.parametrize("found", [
    [corner("6S")],  # one corner: it could be a neighbour's index
    [corner("6S"), corner("8S")],  # the glyphs disagree
    [corner("6S", rank_sure=0.6), corner("6S", rank_sure=0.6)],  # too poor a match to count
])
def test_no_rank_without_two_corners_agreeing(found: list[IndexScores]) -> None:
    assert rank_reading(found, suit="C").card is None


def test_a_corner_disagreeing_on_rank_lowers_the_confidence() -> None:
    two = rank_reading([corner("7H"), corner("7H")], suit="H")
    three = rank_reading([corner("7H"), corner("7H"), corner("QH")], suit="H")
    assert three.card == "7H"
    assert three.confidence < two.confidence
