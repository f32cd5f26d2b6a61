"""Search for a card's corner index in a small window around where its outline puts it.

An outline found from colour regions or fitted to the detector's box may be a few per cent off the card (a
hand or a chip merged into the region, a side cut short), and the crops of `cards_index.corner_crops`, cut at
one fixed place, then miss the glyphs or cut through them. `search_corners` rectifies the outline with a margin
around it and, at each of the four corners, slides the crop over a few positions up to `SHIFT_STEPS` of the
card's width each way (nearest first), keeping the position whose index matches its templates best (the
first matching at `_GOOD_WINDOW`). An index whose glyphs lie
outside the outline (beyond `_OUTSIDE_MM`) is not taken: it may be a neighbour's.
"""

from __future__ import annotations

from collections.abc import Callable

import cv2
import numpy as np
import numpy.typing as npt

from floorman.vision.cards_index import (
    CANON_H,
    CANON_PPM,
    CANON_W,
    CROP_MM,
    IndexFeatures,
    IndexScores,
    index_features,
)

FloatArray = npt.NDArray[np.float32]
Image = npt.NDArray[np.uint8]
Scorer = Callable[[IndexFeatures], IndexScores]

SHIFT_STEPS = (-0.06, -0.03, 0.0, 0.03, 0.06)  # crop offsets tried along each axis, a share of the card's width
_GOOD_WINDOW = 0.97  # a window matching this well ends the search at its corner (nearest positions first)
_OFFSETS = sorted(((dx, dy) for dy in SHIFT_STEPS for dx in SHIFT_STEPS), key=lambda d: d[0] ** 2 + d[1] ** 2)
_OUTSIDE_MM = 4.0  # glyphs may reach this far past the outline (about the largest shift: the outline is a little off)


def rectify_with_margin(image_bgr: Image, corners: FloatArray, *, margin: int) -> Image:
    """The card with outline `corners` (TL, TR, BR, BL) warped to the canonical upright card, with `margin`
    pixels of its surroundings on every side."""
    if margin < 0:
        raise ValueError(f"expected a margin >= 0, got {margin}")
    target = np.array([[margin, margin], [margin + CANON_W, margin], [margin + CANON_W, margin + CANON_H],
                       [margin, margin + CANON_H]], dtype=np.float32)
    matrix = cv2.getPerspectiveTransform(corners.astype(np.float32), target)
    size = (CANON_W + 2 * margin, CANON_H + 2 * margin)
    warped = cv2.warpPerspective(image_bgr, matrix, size, flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
    return np.asarray(warped, dtype=np.uint8)


def search_corners(image_bgr: Image, corners: FloatArray, *, score: Scorer) -> list[IndexScores]:
    """The best-matching index (by `IndexScores.quality`, scored by `score`) at each of the four corners of the
    card with outline `corners`, over the crop positions of `SHIFT_STEPS`; corners where no index was found
    inside the outline are left out."""
    margin = round(max(abs(s) for s in SHIFT_STEPS) * CANON_W) + 1
    canvas = rectify_with_margin(image_bgr, corners, margin=margin)
    found: list[IndexScores] = []
    for face in (canvas, np.asarray(cv2.rotate(canvas, cv2.ROTATE_180), dtype=np.uint8)):
        for on_right in (False, True):
            best = _best_window(face, margin=margin, on_right=on_right, score=score)
            if best is not None:
                found.append(best)
    return found


def _best_window(face: Image, *, margin: int, on_right: bool, score: Scorer) -> IndexScores | None:
    cw, ch = round(CROP_MM[0] * CANON_PPM), round(CROP_MM[1] * CANON_PPM)
    base_x = margin + (CANON_W - cw if on_right else 0)
    slack = _OUTSIDE_MM * CANON_PPM
    best: IndexScores | None = None
    for dx, dy in _OFFSETS:
        x0, y0 = base_x + round(dx * CANON_W), margin + round(dy * CANON_W)
        features = index_features(np.ascontiguousarray(face[y0:y0 + ch, x0:x0 + cw]), on_right=on_right)
        if features is None:
            continue
        bx0, by0, bx1, by1 = features.box
        inside = (x0 + bx0 >= margin - slack and y0 + by0 >= margin - slack
                  and x0 + bx1 <= margin + CANON_W + slack and y0 + by1 <= margin + CANON_H + slack)
        if not inside:
            continue
        scores = score(features)
        if best is None or scores.quality > best.quality:
            best = scores
            if best.quality >= _GOOD_WINDOW:
                break
    return best
