"""Cards partly covered (session 7): the index matcher outvoting the classifier on rank is reported, not made
unread, on pip cards wide enough whose index it read on the classifier's own outline."""

from __future__ import annotations

import numpy as np
import pytest

from floorman.vision import cards
from floorman.vision.cards import MIN_CONFIDENCE
from floorman.vision.cards_cnn import CnnReading
from floorman.vision.cards_index import CANON_H, CANON_W
from floorman.vision.cards_matcher import IndexReading

QUAD = np.array([[0, 0], [CANON_W, 0], [CANON_W, CANON_H], [0, CANON_H]], dtype=np.float32)


@pytest.mark.parametrize("classifier_confidence", [0.45, 0.7, 0.89])
@pytest.mark.parametrize(("index_confidence", "corners"), [(0.63, 1), (0.7, 1), (1.0, 2)])
def test_index_outvoting_the_classifier_on_rank_is_read(classifier_confidence: float, index_confidence: float,
                                                         corners: int) -> None:
    """A chip over the pips makes the classifier count 8 where the index shows 7: the index matcher's 7D, read
    at 0.6 or more, is the reading, and sure enough to be reported (before session 7 its confidence was
    scaled by one minus the classifier's, which left most such cards unread)."""
    index = IndexReading(card="7D", confidence=index_confidence, corners_read=corners, corners_agreeing=corners)
    learned = (CnnReading(card="8D", confidence=classifier_confidence, face=1.0), QUAD)
    reading = cards._combine(learned, index, QUAD)
    assert (reading.card, reading.source) == ("7D", "index")
    assert reading.confidence >= MIN_CONFIDENCE
    assert reading.confidence <= index_confidence  # the classifier's doubt still counts


@pytest.mark.parametrize(("classifier_says", "index_says", "index_confidence"), [
    ("8D", "7D", 0.5),  # rank only, the index matcher unsure: the classifier stays
    ("8S", "7D", 0.9),  # suit too: the matcher's suit is the weaker (two corners would not do either)
])
def test_the_classifier_stays_when_the_index_is_not_sure_of_rank_alone(classifier_says: str, index_says: str,
                                                                      index_confidence: float) -> None:
    index = IndexReading(card=index_says, confidence=index_confidence, corners_read=2, corners_agreeing=2)
    reading = cards._combine((CnnReading(card=classifier_says, confidence=0.8, face=1.0), QUAD), index, QUAD)
    assert (reading.card, reading.source) == (classifier_says, "classifier")


@pytest.mark.parametrize(("classifier_says", "index_says", "width_px", "corners", "index_confidence"), [
    ("JD", "5D", 104.0, 2, 1.0),  # a court figure is not counted: the matcher misread the glyph
    ("2H", "AH", 70.0, 1, 0.7),  # too narrow to trust one fixed corner's glyph over the pips (97001: 2H read QH)
    ("2H", "AH", 70.0, 2, 0.6),  # two corners agreeing, but under `_INDEX_CLEAR`
])
def test_the_index_outvoting_a_court_card_or_a_narrow_one_leaves_it_unread(
        classifier_says: str, index_says: str, width_px: float, corners: int, index_confidence: float) -> None:
    """Uncovered cards the matcher misread at 0.7-1.0 (97001/97003): the matcher still wins the vote, but at
    its confidence times one minus the classifier's, under `MIN_CONFIDENCE`: unread rather than wrong."""
    quad = QUAD * np.float32(width_px / CANON_W)
    index = IndexReading(card=index_says, confidence=index_confidence, corners_read=corners,
                         corners_agreeing=corners)
    reading = cards._combine((CnnReading(card=classifier_says, confidence=0.75, face=1.0), quad), index, quad)
    assert reading.card == index_says
    assert reading.confidence < MIN_CONFIDENCE


def test_an_index_read_on_another_outline_does_not_outvote_the_pips() -> None:
    """A region merged with a neighbour, cut to a card's shape, reads the neighbour's index (a 3H read 6H from
    two corners, 96031): read on an outline overlapping the classifier's by less than `_SAME_OUTLINE_IOU`, the
    matcher's rank leaves the card unread rather than wrong."""
    shifted = QUAD + np.array([0.4 * CANON_W, 0.0], dtype=np.float32)  # IoU about 0.43
    index = IndexReading(card="6H", confidence=0.95, corners_read=2, corners_agreeing=2)
    reading = cards._combine((CnnReading(card="3H", confidence=0.72, face=1.0), QUAD), index, shifted)
    assert reading.confidence < MIN_CONFIDENCE


@pytest.mark.parametrize(("width_px", "corners", "searched", "read"), [
    (82.0, 1, True, True),  # 97001: a 7H under a chip stack, its index found by the search around the corners
    (75.0, 2, False, True),  # 96051: a 7D read at two fixed corners agreeing
    (82.0, 1, False, False),  # one fixed corner: too narrow to trust
    (55.0, 1, True, False),  # under `_INDEX_CLEAR_MIN_PX`
])
def test_a_clear_index_outvotes_the_pips_on_narrower_cards(width_px: float, corners: int, searched: bool,
                                                            read: bool) -> None:
    """Since session 8 an index read clearly (searched for around the outline's corners, or at two corners
    agreeing, at `_INDEX_CLEAR` or more) outvotes the classifier's count of pips down to 60 px wide."""
    quad = QUAD * np.float32(width_px / CANON_W)
    index = IndexReading(card="7H", confidence=0.66, corners_read=corners, corners_agreeing=corners,
                         searched=searched)
    reading = cards._combine((CnnReading(card="8H", confidence=0.49, face=1.0), quad), index, quad)
    assert reading.card == "7H"
    assert (reading.confidence >= MIN_CONFIDENCE) == read


@pytest.mark.parametrize(("width_px", "corners", "read"), [
    (202.0, 2, True),  # 96062: an AH under a red chip, the classifier reading AD
    (202.0, 1, False),  # one corner: it could be a neighbour's
    (80.0, 2, False),  # under `_INDEX_MIN_PX`: the index pip is a few pixels
])
def test_two_index_corners_agreeing_outvote_the_classifier_on_suit_alone(width_px: float, corners: int,
                                                                        read: bool) -> None:
    """Since session 9 the index matcher reading at `_INDEX_SURE` from two corners agreeing on an outline at
    least `_INDEX_MIN_PX` wide wins when it differs from an unsure classifier in suit only (a red chip over an
    AH made the classifier read AD); before, it took three corners, and the card was left unread."""
    quad = QUAD * np.float32(width_px / CANON_W)
    index = IndexReading(card="AH", confidence=1.0, corners_read=corners, corners_agreeing=corners)
    reading = cards._combine((CnnReading(card="AD", confidence=0.51, face=1.0), quad), index, quad)
    if read:
        assert (reading.card, reading.source) == ("AH", "index")
        assert reading.confidence >= MIN_CONFIDENCE
    else:
        assert reading.card != "AH" or reading.confidence < MIN_CONFIDENCE
