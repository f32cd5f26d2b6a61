"""The corner index of a rectified card: split it into rank glyph and suit pip and turn each into a feature.

Works on the canonical card (`CANON_PPM` pixels per mm, 63 x 88 mm, upright): a corner crop is turned into
an "ink" map (how much darker than the paper each pixel is), the ink is split into connected components, the
components near the card edge are grouped into the rank glyph (the top group: "10" is two components side by
side) and the suit pip (the next group below; a rank and pip blurred together are cut at their emptiest
row), and each group is scaled, centred and normalised into a vector. `IndexTemplates` scores it against
templates of every deck design by cosine similarity and with ridge-regression classifiers.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float32]
Image = npt.NDArray[np.uint8]

CANON_PPM = 4.0
CANON_SIZE_MM = (63.0, 88.0)  # (width, height) of the canonical card; bridge cards are stretched to it
CANON_W = round(CANON_SIZE_MM[0] * CANON_PPM)
CANON_H = round(CANON_SIZE_MM[1] * CANON_PPM)
CROP_MM = (15.0, 27.0)  # (width, height) of one corner crop: holds the index of every design
RANK_SIDE = 24  # rank features: RANK_SIDE x RANK_SIDE, glyph scaled to the full height
SUIT_SIDE = 20
RANK_CODES = ("2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K", "A")
SUIT_CODES = ("S", "H", "D", "C")
RED_SUITS = (False, True, True, False)
TEMPLATES_PATH = Path(__file__).resolve().parent / "data" / "card_index_templates.npz"

_INK_THRESHOLD = 0.3  # ink above this (a share of the paper's level) is glyph
_MIN_AREA_MM2 = 0.4  # smaller blobs are noise
_EDGE_RANGE_MM = (0.8, 12.0)  # distance of a glyph centre from the card's long edge
_MAX_GLYPH_MM = (12.0, 15.0)  # (width, height)
_SPLIT_EMPTY = 0.25  # a row with less ink than this share of the median row splits rank from suit


@dataclass(frozen=True)
class IndexFeatures:
    """The rank and suit features of one corner crop, how red its ink is (about 0 black, 1 red), and the box
    around the rank glyph and suit pip (x0, y0, x1, y1 in crop pixels)."""

    rank: FloatArray
    suit: FloatArray
    redness: float
    box: tuple[int, int, int, int]


@dataclass(frozen=True)
class _Blob:
    x0: int
    y0: int
    x1: int
    y1: int

    def union(self, other: _Blob) -> _Blob:
        return _Blob(min(self.x0, other.x0), min(self.y0, other.y0), max(self.x1, other.x1), max(self.y1, other.y1))

    def y_overlap(self, other: _Blob) -> float:
        inter = min(self.y1, other.y1) - max(self.y0, other.y0)
        return inter / max(1, min(self.y1 - self.y0, other.y1 - other.y0))


def corner_crops(card: Image) -> list[tuple[Image, bool]]:
    """The four index crops of a canonical card: (crop, index_on_right) for top-left and top-right, upright and
    turned 180 degrees (so bottom corners, and every corner of an upside-down card, are read too)."""
    if card.shape[:2] != (CANON_H, CANON_W):
        raise ValueError(f"expected a canonical card of shape ({CANON_H}, {CANON_W}, 3), got {card.shape}")
    cw, ch = round(CROP_MM[0] * CANON_PPM), round(CROP_MM[1] * CANON_PPM)
    turned = cv2.rotate(card, cv2.ROTATE_180)
    crops: list[tuple[Image, bool]] = []
    for face in (card, turned):
        crops.append((np.ascontiguousarray(face[:ch, :cw]), False))
        crops.append((np.ascontiguousarray(face[:ch, CANON_W - cw:]), True))
    return crops


def ink_map(crop: Image) -> tuple[FloatArray, float]:
    """Ink in 0..1 (darkness below the paper's level in the darkest channel) and the paper's level."""
    darkest = np.minimum(np.minimum(crop[..., 0], crop[..., 1]), crop[..., 2]).astype(np.float32)
    paper = float(np.percentile(darkest, 85))
    ink = np.clip((paper - darkest) / max(paper, 1.0), 0.0, 1.0)
    return ink.astype(np.float32), paper


def _blobs(mask: npt.NDArray[np.uint8], *, on_right: bool) -> list[_Blob]:
    count, _, stats, _ = cv2.connectedComponentsWithStats(mask, connectivity=8)
    h, w = mask.shape
    ppm2 = CANON_PPM * CANON_PPM
    blobs: list[_Blob] = []
    for i in range(1, count):
        x, y, bw, bh, area = (int(v) for v in stats[i])
        if area < _MIN_AREA_MM2 * ppm2 or x == 0 or y == 0 or x + bw >= w or y + bh >= h:
            continue
        if bw > _MAX_GLYPH_MM[0] * CANON_PPM or bh > _MAX_GLYPH_MM[1] * CANON_PPM:
            continue
        centre = x + bw / 2.0
        from_edge = (w - centre if on_right else centre) / CANON_PPM
        if _EDGE_RANGE_MM[0] <= from_edge <= _EDGE_RANGE_MM[1]:
            blobs.append(_Blob(x, y, x + bw, y + bh))
    return sorted(blobs, key=lambda b: b.y0)


def _group(blobs: list[_Blob]) -> tuple[_Blob, list[_Blob]]:
    """The first blob merged with the blobs beside it (same rows), and the blobs left over below."""
    first = blobs[0]
    merged = first
    rest: list[_Blob] = []
    for blob in blobs[1:]:
        if blob.y_overlap(first) > 0.5:
            merged = merged.union(blob)
        else:
            rest.append(blob)
    return merged, [b for b in rest if b.y0 >= merged.y1 - 1]


def _split_rows(mask: npt.NDArray[np.uint8], blob: _Blob) -> tuple[_Blob, _Blob] | None:
    """A rank glyph and suit pip blurred into one blob, cut at the emptiest row of its lower middle; None when
    no row there is nearly empty."""
    rows = mask[blob.y0:blob.y1, blob.x0:blob.x1].sum(axis=1).astype(np.float32)
    h = len(rows)
    lo, hi = int(0.45 * h), int(0.8 * h)
    if hi - lo < 2 or h < 2.0 * CANON_PPM:
        return None
    cut = lo + int(np.argmin(rows[lo:hi]))
    if rows[cut] > _SPLIT_EMPTY * float(np.median(rows)):
        return None
    return (_Blob(blob.x0, blob.y0, blob.x1, blob.y0 + cut),
            _Blob(blob.x0, blob.y0 + cut + 1, blob.x1, blob.y1))


def _patch(ink: FloatArray, blob: _Blob, *, side: int) -> FloatArray:
    """`blob`'s ink scaled to fit `side` x `side` (aspect kept), centred, zero mean and unit norm."""
    region = ink[blob.y0:blob.y1, blob.x0:blob.x1]
    h, w = region.shape
    scale = side / max(h, w)
    nw, nh = max(1, round(w * scale)), max(1, round(h * scale))
    interp = cv2.INTER_AREA if scale < 1.0 else cv2.INTER_LINEAR
    small = cv2.resize(region, (nw, nh), interpolation=interp)
    canvas = np.zeros((side, side), dtype=np.float32)
    x0, y0 = (side - nw) // 2, (side - nh) // 2
    canvas[y0:y0 + nh, x0:x0 + nw] = small
    vec: FloatArray = (canvas.ravel() - canvas.mean()).astype(np.float32)
    norm = float(np.linalg.norm(vec))
    return vec / np.float32(norm) if norm > 1e-6 else vec


def _redness(crop: Image, ink: FloatArray, mask: npt.NDArray[np.bool_]) -> float:
    channels = crop.astype(np.float32)
    r_minus_g = channels[..., 2] - channels[..., 1]
    paper = ink < 0.1
    base = float(np.median(r_minus_g[paper])) if paper.any() else 0.0
    depth = float(ink[mask].mean()) * 255.0
    return float(np.clip((float(r_minus_g[mask].mean()) - base) / max(depth, 1.0), -1.0, 2.0))


def index_features(crop: Image, *, on_right: bool) -> IndexFeatures | None:
    """Rank and suit features of the index in `crop`, or None when no rank-above-suit pair is found."""
    ink, paper = ink_map(crop)
    if paper < 60.0:
        return None
    mask = (ink > _INK_THRESHOLD).astype(np.uint8)
    blobs = _blobs(mask, on_right=on_right)
    if not blobs:
        return None
    rank, rest = _group(blobs)
    if rest:
        suit, _ = _group(rest)
    else:
        split = _split_rows(mask, rank)
        if split is None:
            return None
        rank, suit = split
    if abs((suit.x0 + suit.x1) - (rank.x0 + rank.x1)) / 2.0 > 4.0 * CANON_PPM:
        return None
    glyphs = np.zeros(mask.shape, dtype=bool)
    for blob in (rank, suit):
        glyphs[blob.y0:blob.y1, blob.x0:blob.x1] = mask[blob.y0:blob.y1, blob.x0:blob.x1] > 0
    return IndexFeatures(
        rank=_patch(ink, rank, side=RANK_SIDE),
        suit=_patch(ink, suit, side=SUIT_SIDE),
        redness=_redness(crop, ink, glyphs),
        box=(min(rank.x0, suit.x0), rank.y0, max(rank.x1, suit.x1), suit.y1),
    )


@dataclass(frozen=True)
class IndexScores:
    """One corner crop scored: best cosine similarity per rank (13) and per suit (4) among the templates, and
    linear classifiers' scores per rank and suit (spades and clubs differ in few pixels, which they weigh)."""

    rank: FloatArray
    suit: FloatArray
    rank_linear: FloatArray
    suit_linear: FloatArray

    @property
    def quality(self) -> float:
        return float(min(self.rank.max(), self.suit.max()))


def fit_linear(features: FloatArray, ids: npt.NDArray[np.int64], *, count: int, ridge: float) -> FloatArray:
    """Ridge regression onto one-hot targets: weights (D + 1, count), the last row the bias."""
    x = np.hstack([features, np.ones((features.shape[0], 1), dtype=np.float32)]).astype(np.float64)
    y = np.eye(count)[ids]
    gram = x.T @ x + ridge * np.eye(x.shape[1])
    return np.linalg.solve(gram, x.T @ y).astype(np.float32)


class IndexTemplates:
    """Rank and suit feature templates (rows) with their class ids, compared by cosine similarity, and the
    weights of linear rank and suit classifiers."""

    def __init__(self, *, rank: FloatArray, rank_ids: npt.NDArray[np.int64], suit: FloatArray,
                 suit_ids: npt.NDArray[np.int64], rank_weights: FloatArray, suit_weights: FloatArray) -> None:
        if rank.ndim != 2 or rank.shape[1] != RANK_SIDE * RANK_SIDE or rank.shape[0] != rank_ids.shape[0]:
            raise ValueError(f"expected rank templates (N, {RANK_SIDE * RANK_SIDE}) with N ids, got {rank.shape}")
        if suit.ndim != 2 or suit.shape[1] != SUIT_SIDE * SUIT_SIDE or suit.shape[0] != suit_ids.shape[0]:
            raise ValueError(f"expected suit templates (N, {SUIT_SIDE * SUIT_SIDE}) with N ids, got {suit.shape}")
        if rank_weights.shape != (RANK_SIDE * RANK_SIDE + 1, len(RANK_CODES)):
            raise ValueError(f"expected rank weights ({RANK_SIDE * RANK_SIDE + 1}, 13), got {rank_weights.shape}")
        if suit_weights.shape != (SUIT_SIDE * SUIT_SIDE + 1, len(SUIT_CODES)):
            raise ValueError(f"expected suit weights ({SUIT_SIDE * SUIT_SIDE + 1}, 4), got {suit_weights.shape}")
        rank_order, suit_order = np.argsort(rank_ids, kind="stable"), np.argsort(suit_ids, kind="stable")
        self.rank = np.ascontiguousarray(rank[rank_order], dtype=np.float32)
        self.rank_ids = rank_ids[rank_order].astype(np.int64)
        self.suit = np.ascontiguousarray(suit[suit_order], dtype=np.float32)
        self.suit_ids = suit_ids[suit_order].astype(np.int64)
        if set(self.rank_ids.tolist()) != set(range(len(RANK_CODES))) or set(self.suit_ids.tolist()) != set(
                range(len(SUIT_CODES))):
            raise ValueError("expected templates of every rank and suit, got some missing")
        self._rank_starts = np.searchsorted(self.rank_ids, np.arange(len(RANK_CODES)))
        self._suit_starts = np.searchsorted(self.suit_ids, np.arange(len(SUIT_CODES)))
        self.rank_weights = rank_weights.astype(np.float32)
        self.suit_weights = suit_weights.astype(np.float32)

    @classmethod
    def load(cls, path: Path = TEMPLATES_PATH) -> IndexTemplates:
        with np.load(path) as data:
            return cls(rank=data["rank"], rank_ids=data["rank_ids"], suit=data["suit"], suit_ids=data["suit_ids"],
                       rank_weights=data["rank_weights"], suit_weights=data["suit_weights"])

    def save(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        np.savez_compressed(path, rank=self.rank.astype(np.float16), rank_ids=self.rank_ids.astype(np.int8),
                            suit=self.suit.astype(np.float16), suit_ids=self.suit_ids.astype(np.int8),
                            rank_weights=self.rank_weights, suit_weights=self.suit_weights)

    def score(self, features: IndexFeatures) -> IndexScores:
        rank_linear = np.append(features.rank, np.float32(1.0)) @ self.rank_weights
        suit_linear = np.append(features.suit, np.float32(1.0)) @ self.suit_weights
        rank = np.maximum.reduceat(self.rank @ features.rank, self._rank_starts)
        suit = np.maximum.reduceat(self.suit @ features.suit, self._suit_starts)
        return IndexScores(rank=rank.astype(np.float32), suit=suit.astype(np.float32),
                           rank_linear=rank_linear.astype(np.float32), suit_linear=suit_linear.astype(np.float32))
