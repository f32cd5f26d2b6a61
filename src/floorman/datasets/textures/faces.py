"""Card faces: paper, corner indices, the standard pip layouts, aces and (via `courts`) the court cards."""

from __future__ import annotations

import functools

import cv2
import numpy as np

from floorman.core.cards import Card, Rank, Suit
from floorman.datasets.textures._common import (
    Colour,
    Image,
    ImageCache,
    bgr,
    blend,
    check_ppm,
    polyline,
    read_only,
    rounded_rect_alpha,
    to_bgra,
)
from floorman.datasets.textures.courts import draw_court
from floorman.datasets.textures.design import DeckDesign, corner_box, deck_design
from floorman.datasets.textures.glyphs import text_mask
from floorman.datasets.textures.suits import draw_suit, suit_aspect, suit_outline, suit_shape_params

# Pip positions (column, row) for 2..10: column -1/0/1 = left/centre/right, row 0 = top .. 1 = bottom pip row.
_PIPS: dict[int, tuple[tuple[int, float], ...]] = {
    2: ((0, 0.0), (0, 1.0)),
    3: ((0, 0.0), (0, 0.5), (0, 1.0)),
    4: ((-1, 0.0), (1, 0.0), (-1, 1.0), (1, 1.0)),
    5: ((-1, 0.0), (1, 0.0), (0, 0.5), (-1, 1.0), (1, 1.0)),
    6: ((-1, 0.0), (1, 0.0), (-1, 0.5), (1, 0.5), (-1, 1.0), (1, 1.0)),
    7: ((-1, 0.0), (1, 0.0), (0, 0.25), (-1, 0.5), (1, 0.5), (-1, 1.0), (1, 1.0)),
    8: ((-1, 0.0), (1, 0.0), (0, 0.25), (-1, 0.5), (1, 0.5), (0, 0.75), (-1, 1.0), (1, 1.0)),
    9: ((-1, 0.0), (1, 0.0), (-1, 1 / 3), (1, 1 / 3), (0, 0.5), (-1, 2 / 3), (1, 2 / 3), (-1, 1.0), (1, 1.0)),
    10: (
        (-1, 0.0),
        (1, 0.0),
        (0, 1 / 6),
        (-1, 1 / 3),
        (1, 1 / 3),
        (-1, 2 / 3),
        (1, 2 / 3),
        (0, 5 / 6),
        (-1, 1.0),
        (1, 1.0),
    ),
}


def pip_positions(rank: Rank) -> tuple[tuple[int, float], ...]:
    """The conventional pip arrangement of a number card (2..10) as (column, row) pairs."""
    return _PIPS[int(rank)]


def ink_rgb(spec: DeckDesign, suit: Suit) -> tuple[int, int, int]:
    return spec.red_rgb if suit.is_red else spec.black_rgb


@functools.lru_cache(maxsize=1024)
def index_mask(card: Card, *, design: int, px_per_mm: float, suit_shape: int = 0) -> Image:
    """Coverage mask of the top-left corner index (rank over suit pip; the pip in suit shape `suit_shape`), the
    size of the index box in pixels."""
    spec = deck_design(design)
    x0, y0, x1, y1 = spec.index_box()
    width, height = round((x1 - x0) * px_per_mm), round((y1 - y0) * px_per_mm)
    mask = np.zeros((height, width), dtype=np.uint8)
    rank_h = max(2, round(spec.index_height_mm * px_per_mm))
    glyphs = text_mask(
        card.rank.index_glyph,
        font=spec.font,
        weight=spec.font_weight,
        height_px=rank_h,
        condense=spec.glyph_condense,
        max_width_px=width,
    )
    gx = (width - glyphs.shape[1]) // 2
    mask[:rank_h, gx : gx + glyphs.shape[1]] = glyphs[: min(rank_h, height)]
    pip_h = spec.index_pip_mm * px_per_mm
    pip_h = min(pip_h, width / suit_aspect(card.suit, suit_shape))
    centre_y = (spec.index_height_mm + spec.index_gap_mm + spec.index_pip_mm / 2) * px_per_mm
    draw_suit(mask, card.suit, centre=(width / 2, centre_y), height=pip_h, colour=(255, 255, 255), shape=suit_shape)
    return read_only(mask)


def _draw_indices(image: Image, card: Card, spec: DeckDesign, *, design: int, ppm: float, shape: int) -> None:
    mask = index_mask(card, design=design, px_per_mm=ppm, suit_shape=shape)
    turned = np.ascontiguousarray(mask[::-1, ::-1])
    colour = bgr(ink_rgb(spec, card.suit))
    for corner in spec.index_corners:
        x0, y0, _, _ = corner_box(spec.index_box(), corner, spec.size_mm)
        patch = mask if corner in ("tl", "tr") else turned
        blend(image, patch, colour, x=round(x0 * ppm), y=round(y0 * ppm))


def _draw_pips(image: Image, card: Card, spec: DeckDesign, *, ppm: float, shape: int) -> None:
    w, h = spec.size_mm
    colour = bgr(ink_rgb(spec, card.suit))
    left, right = spec.pip_columns
    top, bottom = spec.pip_rows
    xs = {-1: left * w, 0: 0.5 * w, 1: right * w}
    for column, row in pip_positions(card.rank):
        x = xs[column] * ppm
        y = (top + (bottom - top) * row) * h * ppm
        draw_suit(image, card.suit, centre=(x, y), height=spec.pip_height_mm * ppm, colour=colour, rotate=row > 0.5,
                  shape=shape)


def _draw_ace(image: Image, card: Card, spec: DeckDesign, *, ppm: float, shape: int) -> None:
    w, h = spec.size_mm
    colour = bgr(ink_rgb(spec, card.suit))
    centre = (w / 2 * ppm, h / 2 * ppm)
    size = spec.ace_height_mm * ppm
    if card.suit is Suit.SPADES:  # the ornate ace of spades: a larger spade with an inner line and a motif
        paper = bgr(spec.paper_rgb)
        big = size * 1.4
        draw_suit(image, card.suit, centre=centre, height=big, colour=colour, shape=shape)
        body = suit_outline(card.suit, centre=(centre[0], centre[1] - 0.02 * big), height=big * 0.86, shape=shape)[0]
        polyline(image, body, paper, width=max(1.0, 0.3 * ppm), closed=True)
        _draw_flourish(image, centre=centre, size=size, colour=bgr(spec.court_palette[0]))
    else:
        draw_suit(image, card.suit, centre=centre, height=size, colour=colour, shape=shape)


def _draw_flourish(image: Image, *, centre: tuple[float, float], size: float, colour: Colour) -> None:
    """A small decorative motif inside the ace of spades."""
    cx, cy = centre
    for k in range(5):
        angle = np.radians(-90 + (k - 2) * 28)
        r = size * 0.22
        x, y = cx + r * np.cos(angle), cy - size * 0.05 + r * np.sin(angle)
        draw_suit(image, Suit.DIAMONDS, centre=(float(x), float(y)), height=size * 0.09, colour=colour)


FACE_CACHE = ImageCache(max_bytes=768 << 20)
"""Faces already drawn, by (card, design, px_per_mm): at most 768 MB (all 312 faces of six designs at 8 px/mm)."""

_MIN_DRAW_PPM = 5.0  # faces are drawn at no less than this scale, then area-averaged down


def _draw_face(card: Card, spec: DeckDesign, *, design: int, ppm: float, figure: Rank | None, shape: int) -> Image:
    """The face as a BGR image drawn at `ppm` (no alpha)."""
    w_mm, h_mm = spec.size_mm
    image = np.empty((round(h_mm * ppm), round(w_mm * ppm), 3), dtype=np.uint8)
    image[...] = bgr(spec.paper_rgb)
    if card.rank.is_court:
        draw_court(image, card, spec, ppm=ppm, figure=figure, suit_shape=shape)
    elif card.rank is Rank.ACE:
        _draw_ace(image, card, spec, ppm=ppm, shape=shape)
    else:
        _draw_pips(image, card, spec, ppm=ppm, shape=shape)
    _draw_indices(image, card, spec, design=design, ppm=ppm, shape=shape)
    return image


def card_face(card: Card, *, design: int, px_per_mm: float, figure: Rank | None = None, suit_shape: int = 0) -> Image:
    """The upright face of `card` in deck `design`: BGRA uint8, (round(h*ppm), round(w*ppm), 4).

    Index top-left; alpha 255 inside the rounded card outline and 0 outside (anti-aliased). Small scales
    are drawn at 5 px/mm and area-averaged down, as a camera would integrate them. A court card shows the
    figure of `figure` (a court rank; None: its own) with that figure's letter in its frame, its corner
    indices unchanged: real decks' figures are not ours, and only the corner indices tell a jack from a king
    on every deck. Its suit symbols (pips, indices, a court's pip) are drawn in suit shape `suit_shape`
    (`suits.suit_shape_params`: 0 ours, others another deck's). Cached by (card, design, px_per_mm, figure,
    suit_shape); the returned array is shared and read-only (copy it before drawing on it).
    """
    deck_design(design)
    check_ppm(px_per_mm)
    if not isinstance(card, Card):
        raise ValueError(f"expected a Card, got {card!r}")
    if figure is not None and not (card.rank.is_court and isinstance(figure, Rank) and figure.is_court):
        raise ValueError(f"expected a court figure (J, Q or K) for a court card, got figure {figure!r} for {card}")
    suit_shape_params(suit_shape)
    if figure is card.rank:
        figure = None  # its own: the same face
    key = (card, int(design), float(px_per_mm), figure, int(suit_shape))
    return FACE_CACHE.get(key, lambda: _make_card_face(card, int(design), float(px_per_mm), figure, int(suit_shape)))


def _make_card_face(card: Card, design: int, px_per_mm: float, figure: Rank | None, suit_shape: int) -> Image:
    spec = deck_design(design)
    w_mm, h_mm = spec.size_mm
    width, height = round(w_mm * px_per_mm), round(h_mm * px_per_mm)
    image = _draw_face(card, spec, design=design, ppm=max(px_per_mm, _MIN_DRAW_PPM), figure=figure, shape=suit_shape)
    if image.shape[:2] != (height, width):
        image = np.asarray(cv2.resize(image, (width, height), interpolation=cv2.INTER_AREA), dtype=np.uint8)
    alpha = rounded_rect_alpha(height, width, spec.corner_radius_mm * px_per_mm)
    return to_bgra(image, alpha)
