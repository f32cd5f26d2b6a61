"""Court cards (J, Q, K): a framed, double-headed, multi-colour stylised figure with the rank letter and a pip.

The figure is drawn once in the upper half of the frame and mirrored (rotated 180 degrees) into the lower
half across a horizontal or diagonal split, as on real court cards. Kings wear a crown and a beard and hold
a sword (the king of diamonds an axe), queens a tiara, long hair and a flower, jacks a feathered cap and a
spear; the robe colours, patterns and the side of the held item change with the suit.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from floorman.core.cards import Card, Rank, Suit
from floorman.datasets.textures._common import (
    Colour,
    FloatArray,
    Image,
    bgr,
    blend,
    circle,
    ellipse_points,
    fill_poly,
    mix,
    polyline,
)
from floorman.datasets.textures.design import DeckDesign
from floorman.datasets.textures.glyphs import text_mask
from floorman.datasets.textures.suits import draw_suit

_SKIN = bgr((250, 216, 178))
_GOLD = bgr((236, 188, 48))
_OUTLINE = bgr((20, 20, 24))
_WHITE = bgr((250, 250, 246))
_SUIT_ORDER = (Suit.SPADES, Suit.HEARTS, Suit.DIAMONDS, Suit.CLUBS)


@dataclass(frozen=True)
class _Pen:
    """Maps figure units (u across the frame width, v down the half height) to canvas pixels."""

    width: float
    half: float
    line: float

    def pts(self, points: Sequence[tuple[float, float]] | FloatArray) -> FloatArray:
        array = np.asarray(points, dtype=np.float64)
        out: FloatArray = array * np.array([self.width, self.half])
        return out

    def shape(self, canvas: Image, points: Sequence[tuple[float, float]] | FloatArray, colour: Colour) -> None:
        px = self.pts(points)
        fill_poly(canvas, px, colour)
        polyline(canvas, px, _OUTLINE, width=self.line, closed=True)

    def stroke(self, canvas: Image, points: Sequence[tuple[float, float]], *, width: float = 1.0) -> None:
        polyline(canvas, self.pts(points), _OUTLINE, width=self.line * width)

    def oval(self, canvas: Image, centre: tuple[float, float], axes: tuple[float, float], colour: Colour) -> None:
        self.shape(canvas, ellipse_points(centre, axes, n=36), colour)

    def dot(self, canvas: Image, centre: tuple[float, float], radius: float, colour: Colour) -> None:
        circle(canvas, (centre[0] * self.width, centre[1] * self.half), radius * self.width, colour)


def _palette(spec: DeckDesign, card: Card) -> tuple[Colour, Colour, Colour, Colour]:
    colours = [bgr(c) for c in spec.court_palette]
    shift = _SUIT_ORDER.index(card.suit) + (int(card.rank) - 11) * 2
    n = len(colours)
    a, b, c, d = (colours[(shift + k) % n] for k in range(4))
    return a, b, c, d


_SHOULDERS = ((0.0, 0.8), (0.1, 0.64), (0.36, 0.53), (0.64, 0.53), (0.9, 0.64), (1.0, 0.8))


def _motif(canvas: Image, pen: _Pen, card: Card, *, at: tuple[float, float], colour: Colour) -> None:
    """One small repeated ornament of the robe: diamonds (king), flowers (queen), crosses (jack)."""
    u, v = at
    if card.rank is Rank.KING:
        pen.shape(canvas, [(u, v - 0.03), (u + 0.018, v), (u, v + 0.03), (u - 0.018, v)], colour)
    elif card.rank is Rank.QUEEN:
        for du, dv in ((0.014, 0.0), (-0.014, 0.0), (0.0, 0.022), (0.0, -0.022)):
            pen.dot(canvas, (u + du, v + dv), 0.011, colour)
        pen.dot(canvas, (u, v), 0.008, _GOLD)
    else:
        pen.stroke(canvas, [(u - 0.02, v), (u + 0.02, v)], width=1.5)
        pen.stroke(canvas, [(u, v - 0.03), (u, v + 0.03)], width=1.5)


def _robe(canvas: Image, pen: _Pen, card: Card, colours: tuple[Colour, Colour, Colour, Colour]) -> None:
    a, b, c, d = colours
    shoulders = np.array(_SHOULDERS)
    pen.shape(canvas, [(0.0, 1.4), *_SHOULDERS, (1.0, 1.4)], a)
    pen.shape(canvas, [(0.5, 0.53), *_SHOULDERS[3:], (1.0, 1.4), (0.5, 1.4)], b)
    for u in np.arange(0.06, 0.95, 0.085):  # ornaments over both panels, kept inside the shoulders
        for v in np.arange(0.74, 1.36, 0.09):
            if abs(u - 0.5) > 0.12 and v > np.interp(u, shoulders[:, 0], shoulders[:, 1]) + 0.07:
                _motif(canvas, pen, card, at=(float(u), float(v)), colour=mix(d if u < 0.5 else c, _WHITE, 0.15))
    pen.shape(canvas, [(0.41, 0.55), (0.59, 0.55), (0.59, 1.4), (0.41, 1.4)], c)
    step = 0.045
    for i in range(18):  # checker / stripe pattern down the centre band
        v = 0.58 + i * step
        if card.rank is Rank.JACK:
            pen.shape(canvas, [(0.41, v), (0.59, v), (0.59, v + step * 0.45), (0.41, v + step * 0.45)], d)
        else:
            u = 0.41 if i % 2 else 0.5
            pen.shape(canvas, [(u, v), (u + 0.09, v), (u + 0.09, v + step), (u, v + step)], d)
    pen.shape(canvas, [(0.06, 0.8), (0.16, 0.68), (0.94, 1.14), (0.88, 1.24)], _GOLD)  # sash
    for k in range(7):
        t = (k + 0.5) / 7
        pen.dot(canvas, (0.13 + 0.76 * t, 0.76 + 0.42 * t), 0.012, mix(d, _OUTLINE, 0.5))
    for side in (-1, 1):  # sleeve folds
        x = 0.5 + side * 0.33
        pen.stroke(canvas, [(x, 0.82), (x - side * 0.05, 0.97), (x, 1.12), (x - side * 0.04, 1.32)])
    collar = ellipse_points((0.5, 0.55), (0.2, 0.07), start=0.0, end=180.0, n=20)
    pen.shape(canvas, np.concatenate([collar, [(0.3, 0.55)]]), _WHITE if card.rank is Rank.KING else _GOLD)
    for k in range(6):
        u = 0.34 + 0.064 * k
        pen.dot(canvas, (u, 0.58), 0.011, _OUTLINE if card.rank is Rank.KING else c)


def _head(canvas: Image, pen: _Pen, card: Card, colours: tuple[Colour, Colour, Colour, Colour]) -> None:
    a, b, _, _ = colours
    hair = mix(_GOLD, bgr((120, 70, 30)), 0.35 if card.suit.is_red else 0.75)
    if card.rank is Rank.QUEEN:  # long hair and a veil behind the head
        pen.shape(canvas, [(0.3, 0.2), (0.7, 0.2), (0.76, 0.56), (0.24, 0.56)], b)
        pen.shape(canvas, [(0.34, 0.22), (0.66, 0.22), (0.68, 0.5), (0.32, 0.5)], hair)
    pen.oval(canvas, (0.5, 0.34), (0.13, 0.15), _SKIN)
    if card.rank is Rank.KING:  # beard and moustache
        pen.shape(canvas, [(0.38, 0.36), (0.62, 0.36), (0.6, 0.47), (0.5, 0.54), (0.4, 0.47)], hair)
        pen.shape(canvas, [(0.43, 0.4), (0.5, 0.37), (0.57, 0.4), (0.5, 0.42)], mix(hair, _OUTLINE, 0.3))
    elif card.rank is Rank.JACK:
        for side in (-1, 1):
            pen.oval(canvas, (0.5 + side * 0.13, 0.3), (0.04, 0.08), hair)
        pen.stroke(canvas, [(0.45, 0.42), (0.5, 0.4), (0.55, 0.42)], width=1.2)
    for side in (-1, 1):  # eyes and brows
        pen.dot(canvas, (0.5 + side * 0.05, 0.31), 0.013, _OUTLINE)
        pen.stroke(canvas, [(0.5 + side * 0.02, 0.27), (0.5 + side * 0.08, 0.265)])
    pen.stroke(canvas, [(0.5, 0.31), (0.49, 0.37), (0.51, 0.375)])
    if card.rank is not Rank.KING:
        pen.stroke(canvas, [(0.46, 0.44), (0.5, 0.45), (0.54, 0.44)], width=1.2)
    _headwear(canvas, pen, card, a)


def _headwear(canvas: Image, pen: _Pen, card: Card, colour: Colour) -> None:
    if card.rank is Rank.JACK:  # cap with a brim and a feather
        pen.shape(canvas, [(0.33, 0.22), (0.36, 0.1), (0.5, 0.05), (0.64, 0.1), (0.67, 0.22)], colour)
        pen.shape(canvas, [(0.3, 0.2), (0.7, 0.2), (0.7, 0.25), (0.3, 0.25)], _GOLD)
        pen.shape(canvas, [(0.62, 0.12), (0.86, 0.0), (0.9, 0.04), (0.66, 0.17)], _WHITE)
        return
    tall = 0.13 if card.rank is Rank.KING else 0.09
    points = [(0.34, 0.22)]
    for k in range(5):
        u = 0.36 + 0.07 * k
        points += [(u, 0.17), (u, 0.17 - tall)] if k < 4 else [(u, 0.17 - tall), (0.66, 0.17)]
    points += [(0.66, 0.22)]
    pen.shape(canvas, points, _GOLD)
    for k in range(3):
        pen.dot(canvas, (0.41 + 0.09 * k, 0.195), 0.018, colour if k != 1 else bgr((40, 90, 190)))
    if card.rank is Rank.QUEEN:
        for k in range(5):
            pen.dot(canvas, (0.36 + 0.07 * k, 0.17 - tall), 0.016, _WHITE)


def _item(canvas: Image, pen: _Pen, card: Card, colours: tuple[Colour, Colour, Colour, Colour]) -> None:
    side = 1 if card.suit in (Suit.HEARTS, Suit.DIAMONDS) else -1
    x = 0.5 + side * 0.25
    steel = bgr((205, 210, 218))
    wood = bgr((130, 88, 48))
    if card.rank is Rank.KING and card.suit is not Suit.DIAMONDS:  # sword raised behind the shoulder
        pen.shape(canvas, [(x, 0.2), (x + 0.025, 0.25), (x + 0.025, 0.64), (x - 0.025, 0.64), (x - 0.025, 0.25)], steel)
        pen.stroke(canvas, [(x, 0.26), (x, 0.6)])
        pen.shape(canvas, [(x - 0.09, 0.64), (x + 0.09, 0.64), (x + 0.09, 0.68), (x - 0.09, 0.68)], _GOLD)
        pen.shape(canvas, [(x - 0.025, 0.68), (x + 0.025, 0.68), (x + 0.025, 0.8), (x - 0.025, 0.8)], colours[3])
    elif card.rank is Rank.KING:  # axe
        pen.shape(canvas, [(x - 0.015, 0.24), (x + 0.015, 0.24), (x + 0.015, 0.9), (x - 0.015, 0.9)], wood)
        pen.shape(canvas, [(x, 0.26), (x + side * 0.13, 0.19), (x + side * 0.13, 0.44), (x, 0.38)], steel)
    elif card.rank is Rank.QUEEN:  # flower
        pen.stroke(canvas, [(x, 0.85), (x - side * 0.02, 0.6), (x, 0.4)], width=1.6)
        pen.shape(canvas, [(x, 0.6), (x + side * 0.07, 0.52), (x + side * 0.03, 0.62)], bgr((60, 130, 60)))
        for k in range(6):
            angle = np.radians(60 * k)
            pen.dot(canvas, (x + 0.045 * np.cos(angle), 0.36 + 0.032 * np.sin(angle)), 0.028, colours[0])
        pen.dot(canvas, (x, 0.36), 0.022, _GOLD)
    else:  # spear
        pen.shape(canvas, [(x - 0.012, 0.3), (x + 0.012, 0.3), (x + 0.012, 0.95), (x - 0.012, 0.95)], wood)
        pen.shape(canvas, [(x, 0.16), (x + 0.045, 0.26), (x, 0.32), (x - 0.045, 0.26)], steel)
    pen.oval(canvas, (x, 0.76), (0.05, 0.045), _SKIN)  # the hand holding it
    pen.shape(canvas, [(x - 0.06, 0.8), (x + 0.06, 0.8), (x + 0.07, 0.86), (x - 0.07, 0.86)], _WHITE)  # cuff


def _half_figure(card: Card, spec: DeckDesign, *, size: tuple[int, int], ppm: float, figure: Rank,
                 suit_shape: int = 0) -> Image:
    """The figure of `figure` (a court rank), with its letter, drawn in the upper half of a (height, width) frame
    canvas, with the pip of `card`."""
    height, width = size
    canvas = np.empty((height, width, 3), dtype=np.uint8)
    canvas[...] = bgr(spec.paper_rgb)
    pen = _Pen(width=float(width), half=height / 2.0, line=max(1.0, 0.2 * ppm))
    drawn = Card(figure, card.suit)
    colours = _palette(spec, drawn)
    _robe(canvas, pen, drawn, colours)
    _item(canvas, pen, drawn, colours)
    _head(canvas, pen, drawn, colours)
    ink = bgr(spec.red_rgb if card.suit.is_red else spec.black_rgb)
    pip_h = 0.15 * width
    draw_suit(canvas, card.suit, centre=(0.13 * width, 0.09 * height), height=pip_h, colour=ink, shape=suit_shape)
    letter = text_mask(
        figure.index_glyph,
        font=spec.font,
        weight=spec.font_weight,
        height_px=max(2, round(0.14 * width)),
        condense=spec.glyph_condense,
    )
    blend(canvas, letter, ink, x=round(0.87 * width - letter.shape[1] / 2), y=round(0.04 * height))
    return canvas


def draw_court(image: Image, card: Card, spec: DeckDesign, *, ppm: float, figure: Rank | None = None,
               suit_shape: int = 0) -> None:
    """Draw the framed court figure of `card` onto the face `image` (BGR, in place); with `figure`, the figure
    of that court rank instead, the letter in its frame too (the pip stays the card's): a deck whose figures
    are not ours, where only the corner indices tell the rank."""
    x0, y0, x1, y1 = (round(v * ppm) for v in spec.court_frame())
    height, width = y1 - y0, x1 - x0
    canvas = _half_figure(card, spec, size=(height, width), ppm=ppm, figure=card.rank if figure is None else figure,
                          suit_shape=suit_shape)
    turned = canvas[::-1, ::-1]
    rows = np.arange(height, dtype=np.float32)[:, None]
    cols = np.arange(width, dtype=np.float32)[None, :]
    if spec.court_split == "diagonal":
        upper = rows < height / 2 + (cols - width / 2) * (0.35 * height / width)
    else:
        upper = np.broadcast_to(rows < height / 2, (height, width))
    frame = np.where(upper[..., None], canvas, turned)
    line = max(1.0, 0.22 * ppm)
    if spec.court_split == "diagonal":
        dy = 0.35 * height / width * width / 2
        polyline(frame, np.array([(0.0, height / 2 - dy), (width, height / 2 + dy)]), _OUTLINE, width=line)
    else:
        polyline(frame, np.array([(0.0, height / 2), (width, height / 2)]), _OUTLINE, width=line)
    image[y0:y1, x0:x1] = frame
    border = np.array([(x0, y0), (x1, y0), (x1, y1), (x0, y1)], dtype=np.float64)
    polyline(image, border, bgr(spec.court_frame_colour), width=line * 1.6, closed=True)
    inner = border + np.array([(1, 1), (-1, 1), (-1, -1), (1, -1)]) * line * 2.2
    polyline(image, inner, _OUTLINE, width=line * 0.8, closed=True)
