"""The four suit symbols as anti-aliased vector shapes (heart, spade with stem, three-lobed club, diamond).

Each shape is a list of polygons in unit coordinates: height 1 from y = -0.5 (top) to y = 0.5 (bottom), centred
on x = 0, y down. Polygons of one shape are filled one after the other in the same colour (their union).
"""

from __future__ import annotations

import functools

import numpy as np

from floorman.core.cards import Suit
from floorman.datasets.textures._common import Colour, FloatArray, Image, ellipse_points, fill_poly

SUIT_ASPECT: dict[Suit, float] = {Suit.HEARTS: 0.98, Suit.SPADES: 0.88, Suit.DIAMONDS: 0.76, Suit.CLUBS: 0.95}
"""Width / height of each suit symbol."""


def _heart_outline(n: int = 96) -> FloatArray:
    t = np.linspace(0.0, 2.0 * np.pi, n, endpoint=False)
    x = 16.0 * np.sin(t) ** 3
    y = 13.0 * np.cos(t) - 5.0 * np.cos(2 * t) - 2.0 * np.cos(3 * t) - np.cos(4 * t)
    # y spans about -17 (tip) .. 11.9 (top of the lobes); flip to y down, scale to height 1.
    top, bottom = float(y.max()), float(y.min())
    height = top - bottom
    points = np.stack([x / height * 0.9, (top - y) / height - 0.5], axis=1)
    return points


def _stem(y_top: float) -> FloatArray:
    s = np.linspace(0.0, 1.0, 16)
    half = 0.03 + 0.175 * s**2.4
    y = y_top + (0.5 - y_top) * s
    right = np.stack([half, y], axis=1)
    left = np.stack([-half[::-1], y[::-1]], axis=1)
    return np.concatenate([right, left], axis=0)


def _diamond() -> FloatArray:
    tips = np.array([(0.0, -0.5), (0.38, 0.0), (0.0, 0.5), (-0.38, 0.0)])
    t = np.linspace(0.0, 1.0, 12, endpoint=False)[:, None]
    parts = []
    for i in range(4):
        a, b = tips[i], tips[(i + 1) % 4]
        control = (a + b) / 2 * 0.86  # pulled toward the centre: slightly concave sides
        parts.append((1 - t) ** 2 * a + 2 * (1 - t) * t * control + t**2 * b)
    return np.concatenate(parts, axis=0)


@functools.cache
def suit_polygons(suit: Suit) -> tuple[FloatArray, ...]:
    """The polygons making up `suit` in unit coordinates."""
    if suit is Suit.HEARTS:
        return (_heart_outline(),)
    if suit is Suit.DIAMONDS:
        return (_diamond(),)
    if suit is Suit.SPADES:
        body = _heart_outline()
        body = np.stack([body[:, 0] * 0.97, -body[:, 1] * 0.8 - 0.1], axis=1)  # tip up, top 80 % of the height
        return (body, _stem(0.05))
    lobes = tuple(
        ellipse_points(centre, (0.215, 0.215), n=40) for centre in ((0.0, -0.27), (-0.245, 0.045), (0.245, 0.045))
    )
    core = np.array([(0.0, -0.2), (-0.2, 0.06), (0.0, 0.2), (0.2, 0.06)])
    return (*lobes, core, _stem(0.0))


def suit_outline(suit: Suit, *, centre: tuple[float, float], height: float, rotate: bool = False) -> list[FloatArray]:
    """The polygons of `suit` in pixels, `height` px tall, centred at `centre`; `rotate` turns it 180 degrees."""
    sign = -1.0 if rotate else 1.0
    offset = np.array(centre, dtype=np.float64)
    return [poly * (sign * height) + offset for poly in suit_polygons(suit)]


def draw_suit(
    image: Image,
    suit: Suit,
    *,
    centre: tuple[float, float],
    height: float,
    colour: Colour,
    rotate: bool = False,
) -> None:
    """Fill the symbol of `suit`, `height` px tall, centred at `centre` (pixels), anti-aliased."""
    for poly in suit_outline(suit, centre=centre, height=height, rotate=rotate):
        fill_poly(image, poly, colour)
