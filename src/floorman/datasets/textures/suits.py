"""The four suit symbols as anti-aliased vector shapes (heart, spade with stem, three-lobed club, diamond).

Each shape is a list of polygons in unit coordinates: height 1 from y = -0.5 (top) to y = 0.5 (bottom), centred
on x = 0, y down. Polygons of one shape are filled one after the other in the same colour (their union).

Shape 0 is our deck's; shapes 1 .. `N_SUIT_SHAPES` are other decks' (`suit_shape_params`): wider or narrower
bodies, thin flared stems or broad ones, rounder or flatter lobes, straight or concave diamonds. Real decks'
suit symbols are not ours, and a card reader trained on one set of shapes reads another deck's spade as a club.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from floorman.core.cards import Suit
from floorman.datasets.scene import N_SUIT_SHAPES
from floorman.datasets.textures._common import Colour, FloatArray, Image, ellipse_points, fill_poly

SUIT_ASPECT: dict[Suit, float] = {Suit.HEARTS: 0.98, Suit.SPADES: 0.88, Suit.DIAMONDS: 0.76, Suit.CLUBS: 0.95}
"""Width / height of each suit symbol of our deck (shape 0; `suit_aspect` for any shape)."""


@dataclass(frozen=True, slots=True)
class SuitShapeParams:
    """What sets one deck's suit symbols apart (shape 0, our own deck, is the defaults)."""

    heart_width: float = 0.9  # the heart's width over its height
    heart_notch: float = 5.0  # depth of the cleft between the lobes (the outline's cos 2t term)
    spade_width: float = 0.97  # the spade body's width, relative to an upturned heart
    spade_body: float = 0.8  # the spade body's share of the symbol's height
    club_lobe: float = 0.215  # a club lobe's radius (symbol heights)
    club_spread: float = 0.245  # the side lobes' distance from the axis
    club_drop: float = 0.045  # the side lobes' centre below the middle
    stem_neck: float = 0.03  # a stem's half width where it leaves the body
    stem_foot: float = 0.175  # how much the stem widens to its foot
    stem_flare: float = 2.4  # how late it widens (1: a straight triangle; 4: thin, then a sudden foot)
    diamond_width: float = 0.38  # the diamond's half width
    diamond_bulge: float = 0.86  # 1: straight sides; less: concave
    # 0: the spade's body is an upturned heart; > 0: two round lobes of this radius under a pointed arch, as
    # type designers draw it (DejaVu Sans's spade, read as a club by a classifier that knew only hearts)
    spade_lobes: float = 0.0
    spade_spread: float = 0.2  # the lobes' centres' distance from the axis
    spade_arch: float = 0.8  # how full the arch's sides are (1: bulging; 0.5: nearly straight)


_RANGES = (
    ("heart_width", 0.8, 1.02),
    ("heart_notch", 3.5, 6.5),
    ("spade_width", 0.8, 1.08),
    ("spade_body", 0.7, 0.86),
    ("club_lobe", 0.19, 0.24),
    ("club_spread", 0.21, 0.27),
    ("club_drop", 0.0, 0.1),
    ("stem_neck", 0.012, 0.06),
    ("stem_foot", 0.07, 0.24),
    ("stem_flare", 1.0, 4.5),
    ("diamond_width", 0.3, 0.43),
    ("diamond_bulge", 0.78, 1.0),
)
"""Other decks' shapes: each parameter drawn uniformly in its range, in this order (then the spade's lobes)."""


def suit_shape_params(shape: int) -> SuitShapeParams:
    """The suit symbols of shape `shape`: 0 ours, 1 .. `N_SUIT_SHAPES` other decks' (seeded by the number)."""
    if not isinstance(shape, int | np.integer) or not 0 <= int(shape) <= N_SUIT_SHAPES:
        raise ValueError(f"suit shape: expected an integer in 0..{N_SUIT_SHAPES}, got {shape!r}")
    if int(shape) == 0:
        return SuitShapeParams()
    rng = np.random.default_rng([int(shape), 4217])
    values = {name: float(rng.uniform(low, high)) for name, low, high in _RANGES}
    lobed = rng.random() < 0.5
    values["spade_lobes"] = float(rng.uniform(0.16, 0.23)) if lobed else 0.0
    values["spade_spread"] = float(rng.uniform(0.14, 0.22))
    values["spade_arch"] = float(rng.uniform(0.5, 1.0))
    return SuitShapeParams(**values)


def _heart_outline(width: float, notch: float, n: int = 96) -> FloatArray:
    t = np.linspace(0.0, 2.0 * np.pi, n, endpoint=False)
    x = 16.0 * np.sin(t) ** 3
    y = 13.0 * np.cos(t) - notch * np.cos(2 * t) - 2.0 * np.cos(3 * t) - np.cos(4 * t)
    # y spans about -17 (tip) .. 12 (top of the lobes); flip to y down, scale to height 1, width `width`.
    top, bottom = float(y.max()), float(y.min())
    height = top - bottom
    points = np.stack([x / height * width, (top - y) / height - 0.5], axis=1)
    return points


def _stem(y_top: float, p: SuitShapeParams) -> FloatArray:
    s = np.linspace(0.0, 1.0, 16)
    half = p.stem_neck + p.stem_foot * s**p.stem_flare
    y = y_top + (0.5 - y_top) * s
    right = np.stack([half, y], axis=1)
    left = np.stack([-half[::-1], y[::-1]], axis=1)
    return np.concatenate([right, left], axis=0)


def _diamond(p: SuitShapeParams) -> FloatArray:
    tips = np.array([(0.0, -0.5), (p.diamond_width, 0.0), (0.0, 0.5), (-p.diamond_width, 0.0)])
    t = np.linspace(0.0, 1.0, 12, endpoint=False)[:, None]
    parts = []
    for i in range(4):
        a, b = tips[i], tips[(i + 1) % 4]
        control = (a + b) / 2 * p.diamond_bulge  # pulled toward the centre: concave sides
        parts.append((1 - t) ** 2 * a + 2 * (1 - t) * t * control + t**2 * b)
    return np.concatenate(parts, axis=0)


def _lobed_spade(p: SuitShapeParams) -> tuple[FloatArray, ...]:
    """A spade of two round lobes under a pointed arch, on a stem."""
    r, spread = p.spade_lobes, p.spade_spread
    centre_y = 0.5 - 0.18 - r  # the lobes' bottoms leave the stem's lower part bare
    outer = spread + r
    t = np.linspace(0.0, 1.0, 24)[:, None]
    apex, foot = np.array([0.0, -0.5]), np.array([outer, centre_y])
    control = np.array([outer * p.spade_arch + 0.05, -0.5 + (centre_y + 0.5) * 0.55])
    right = (1 - t) ** 2 * apex + 2 * (1 - t) * t * control + t**2 * foot
    left = right[::-1] * np.array([-1.0, 1.0])
    arch = np.concatenate([right, np.array([(spread, centre_y), (0.0, centre_y + 0.3 * r), (-spread, centre_y)]),
                           left])
    lobes = tuple(ellipse_points((side * spread, centre_y), (r, r), n=40) for side in (-1.0, 1.0))
    return (arch, *lobes, _stem(centre_y, p))


@functools.cache
def suit_polygons(suit: Suit, shape: int = 0) -> tuple[FloatArray, ...]:
    """The polygons making up `suit` in shape `shape` (`suit_shape_params`), in unit coordinates."""
    p = suit_shape_params(shape)
    if suit is Suit.HEARTS:
        return (_heart_outline(p.heart_width, p.heart_notch),)
    if suit is Suit.DIAMONDS:
        return (_diamond(p),)
    if suit is Suit.SPADES and p.spade_lobes > 0.0:
        return _lobed_spade(p)
    if suit is Suit.SPADES:
        body = _heart_outline(0.9 * p.spade_width, 5.0)
        # Tip up at -0.5, the body's rounded end at its share of the height; the stem leaves from inside it.
        body = np.stack([body[:, 0], -body[:, 1] * p.spade_body - 0.5 + p.spade_body / 2], axis=1)
        return (body, _stem(-0.5 + 0.6875 * p.spade_body, p))
    r = p.club_lobe
    lobes = tuple(
        ellipse_points(centre, (r, r), n=40)
        for centre in ((0.0, -0.5 + r + 0.015), (-p.club_spread, p.club_drop), (p.club_spread, p.club_drop))
    )
    core = np.array([(0.0, -0.2), (-0.2, 0.06), (0.0, 0.2), (0.2, 0.06)])
    return (*lobes, core, _stem(0.0, p))


@functools.cache
def suit_aspect(suit: Suit, shape: int = 0) -> float:
    """Width / height of the symbol of `suit` in shape `shape` (our deck's: `SUIT_ASPECT`)."""
    if shape == 0:
        return SUIT_ASPECT[suit]
    points = np.concatenate(suit_polygons(suit, shape))
    return float(points[:, 0].max() - points[:, 0].min())


def suit_outline(
    suit: Suit, *, centre: tuple[float, float], height: float, rotate: bool = False, shape: int = 0
) -> list[FloatArray]:
    """The polygons of `suit` in pixels, `height` px tall, centred at `centre`; `rotate` turns it 180 degrees."""
    sign = -1.0 if rotate else 1.0
    offset = np.array(centre, dtype=np.float64)
    return [poly * (sign * height) + offset for poly in suit_polygons(suit, shape)]


def draw_suit(
    image: Image,
    suit: Suit,
    *,
    centre: tuple[float, float],
    height: float,
    colour: Colour,
    rotate: bool = False,
    shape: int = 0,
) -> None:
    """Fill the symbol of `suit` in shape `shape`, `height` px tall, centred at `centre` (pixels), anti-aliased."""
    for poly in suit_outline(suit, centre=centre, height=height, rotate=rotate, shape=shape):
        fill_poly(image, poly, colour)
