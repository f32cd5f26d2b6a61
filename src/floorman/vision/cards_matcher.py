"""The index matcher: read a card from the corner indices of its rectified image.

A card outline is warped to the canonical upright card (`rectify`), the index read at its four corner positions
(either corner of a card in any rotation; `cards_index.corner_crops`), each rank glyph and suit pip scored
against templates rendered from every simulator deck design (nearest template by cosine similarity, and a
linear classifier; `data/card_index_templates.npz`, built by `benchmarks/cards.py templates`), red versus
black ink a cue for the suit (`score_index`). The corners read well enough are combined into one reading
(`reading_of_corners`), or into a rank alone (`rank_reading`: corners agreeing on the rank glyph while their
small suit pips blur apart).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import cv2
import numpy as np
import numpy.typing as npt

from floorman.core.geometry import short_side
from floorman.vision.cards_index import (
    CANON_H,
    CANON_W,
    RANK_CODES,
    RED_SUITS,
    SUIT_CODES,
    IndexFeatures,
    IndexScores,
    IndexTemplates,
    corner_crops,
    index_features,
)

FloatArray = npt.NDArray[np.float32]
Image = npt.NDArray[np.uint8]

SINGLE_CORNER = 0.7  # confidence factor of a reading from one corner only
_RESOLUTION_PX = (35.0, 80.0)  # card widths from which confidence is scaled down, and up to which
_LINEAR_MARGIN = 0.5  # a linear classifier's lead over its runner-up that counts as sure
_RED_CUE = (0.12, 0.18)  # redness below the first is black ink, above the second red
_COLOUR_PENALTY = 0.5  # similarity taken off suits of the other colour when the colour is clear
_MIN_QUALITY = 0.75  # corners whose best rank or suit similarity is lower are ignored
_AGREEING = 0.7  # share of the doubt left when more than one corner agrees
_DISAGREEING = 0.3  # confidence factor per corner that disagrees


@dataclass(frozen=True)
class IndexReading:
    """The card read from one rectified card image: its code (None when no index was read), a confidence, how
    many corner indices were read and agreed with it, and whether they were searched for (`cards_corner`)."""

    card: str | None
    confidence: float
    corners_read: int = 0
    corners_agreeing: int = 0
    searched: bool = False


@lru_cache(maxsize=1)
def default_templates() -> IndexTemplates:
    return IndexTemplates.load()


def rectify(image_bgr: Image, corners: FloatArray) -> Image:
    """The card with outline `corners` (TL, TR, BR, BL) warped to the canonical upright card."""
    target = np.array([[0, 0], [CANON_W, 0], [CANON_W, CANON_H], [0, CANON_H]], dtype=np.float32)
    matrix = cv2.getPerspectiveTransform(corners.astype(np.float32), target)
    warped = cv2.warpPerspective(image_bgr, matrix, (CANON_W, CANON_H), flags=cv2.INTER_LINEAR,
                                 borderMode=cv2.BORDER_REPLICATE)
    return np.asarray(warped, dtype=np.uint8)


def score_index(templates: IndexTemplates, features: IndexFeatures) -> IndexScores:
    """`features` scored against `templates`; suits of the other colour lose `_COLOUR_PENALTY` when the ink's
    colour is clear."""
    scores = templates.score(features)
    if not _RED_CUE[0] <= features.redness <= _RED_CUE[1]:
        is_red = features.redness > _RED_CUE[1]
        penalty = np.array([0.0 if red == is_red else _COLOUR_PENALTY for red in RED_SUITS], dtype=np.float32)
        scores = IndexScores(rank=scores.rank, suit=scores.suit - penalty, rank_linear=scores.rank_linear,
                             suit_linear=scores.suit_linear - penalty)
    return scores


def _read_corner(templates: IndexTemplates, crop: Image, *, on_right: bool) -> IndexScores | None:
    features = index_features(crop, on_right=on_right)
    return None if features is None else score_index(templates, features)


def _margin(scores: FloatArray) -> float:
    top = np.sort(scores)[::-1]
    return float(top[0] - top[1])


def _sureness(nearest: FloatArray, linear: FloatArray) -> float:
    """How sure one class choice is: its linear classifier's margin over the runner-up, low when the nearest
    template chooses another class."""
    sure = float(np.clip(_margin(linear) / _LINEAR_MARGIN, 0.0, 1.0))
    return sure * (0.3 if int(nearest.argmax()) != int(linear.argmax()) else 1.0)


def _confidence(scores: IndexScores) -> float:
    """A 0..1 confidence from the nearest templates' similarity and the linear classifiers' margins over the
    runners-up; low when the nearest template and the linear classifier disagree on rank or suit."""
    best = float(min(scores.rank.max(), scores.suit.max()))
    return (float(np.clip((best - 0.6) / 0.3, 0.0, 1.0)) * _sureness(scores.rank, scores.rank_linear)
            * _sureness(scores.suit, scores.suit_linear))


def read_rectified(card_bgr: Image, *, templates: IndexTemplates | None = None) -> IndexReading:
    """The card in a canonical upright card image.

    The class similarities of every corner read well enough are averaged; each corner also votes for its
    own reading, and a corner that disagrees with the result lowers the confidence."""
    bank = templates if templates is not None else default_templates()
    found = [_read_corner(bank, crop, on_right=on_right) for crop, on_right in corner_crops(card_bgr)]
    return reading_of_corners([scores for scores in found if scores is not None])


def _mean(corners: list[IndexScores]) -> IndexScores:
    return IndexScores(rank=np.mean([c.rank for c in corners], axis=0),
                       suit=np.mean([c.suit for c in corners], axis=0),
                       rank_linear=np.mean([c.rank_linear for c in corners], axis=0),
                       suit_linear=np.mean([c.suit_linear for c in corners], axis=0))


def reading_of_corners(found: list[IndexScores]) -> IndexReading:
    """The card the corner indices `found` read (those of `_MIN_QUALITY` at least): their mean scores' choice,
    more confident when several corners agree with it, less for each that does not."""
    corners = [scores for scores in found if scores.quality >= _MIN_QUALITY]
    if not corners:
        return IndexReading(card=None, confidence=0.0)
    mean = _mean(corners)
    rank, suit = int(mean.rank_linear.argmax()), int(mean.suit_linear.argmax())
    agreeing = sum(1 for c in corners if int(c.rank_linear.argmax()) == rank and int(c.suit_linear.argmax()) == suit)
    confidence = _confidence(mean)
    if agreeing > 1:
        confidence = 1.0 - (1.0 - confidence) * _AGREEING
    confidence *= _DISAGREEING ** (len(corners) - agreeing)
    return IndexReading(card=RANK_CODES[rank] + SUIT_CODES[suit], confidence=float(confidence),
                        corners_read=len(corners), corners_agreeing=agreeing)


def rank_reading(found: list[IndexScores], *, suit: str) -> IndexReading:
    """The rank the corner indices `found` read, with the suit `suit` from elsewhere (the classifier, which
    sees every pip): as `reading_of_corners`, but on the rank glyph alone, and only when at least two corners
    agree on it (a single corner's glyph could be a neighbour's); else no reading. For a card whose small index
    pips blur into the other suit of their colour, or apart (one corner a diamond, another a club), while the
    larger rank glyphs agree."""
    corners = [scores for scores in found if scores.quality >= _MIN_QUALITY]
    if len(corners) < 2:
        return IndexReading(card=None, confidence=0.0)
    mean = _mean(corners)
    rank = int(mean.rank_linear.argmax())
    agreeing = sum(1 for c in corners if int(c.rank_linear.argmax()) == rank)
    if agreeing < 2:
        return IndexReading(card=None, confidence=0.0, corners_read=len(corners), corners_agreeing=agreeing)
    confidence = (float(np.clip((float(mean.rank.max()) - 0.6) / 0.3, 0.0, 1.0))
                  * _sureness(mean.rank, mean.rank_linear))
    confidence = (1.0 - (1.0 - confidence) * _AGREEING) * _DISAGREEING ** (len(corners) - agreeing)
    return IndexReading(card=RANK_CODES[rank] + suit, confidence=float(confidence), corners_read=len(corners),
                        corners_agreeing=agreeing)


def resolution_factor(corners: FloatArray) -> float:
    """How far to trust a reading at this card size: the index pip is only a few pixels on a narrow card."""
    width = short_side(corners)
    return float(np.clip((width - _RESOLUTION_PX[0]) / (_RESOLUTION_PX[1] - _RESOLUTION_PX[0]), 0.2, 1.0))
