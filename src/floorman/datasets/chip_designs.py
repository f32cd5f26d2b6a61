"""Other clubs' chips: the same denominations in a club's own shades, edge spots and inlays.

The shipped chip set's five colours are one club's. A real club's red may be crimson or scarlet, its blue royal or
navy, its white chip plain (white spots on white, as the issue's photographs describe theirs) or spotted in any
colour, with four to eight spots or none. `club_chipset` draws such a set around a base set: each denomination
keeps its value and its colour's name (a red stays a red: hue within `HUE_SHIFT_DEG`, saturation and brightness
scaled), so that what a club calls its red chip is still read as red by `floorman detect`'s colour words, and the
recogniser given that club's set (as `floorman chips calibrate` would learn it) reads its values.

`random_scene(..., chip_designs=P)` gives a scene such a set with probability P (training data for a detector that
must find chips of designs it was not drawn with); `floorman datasets render --chip-designs P` and the photo
benchmarks' `--chip-designs P` pass it on. With `white_spots` every chip's edge spots are white (a white chip's then
do not show), as on the issue's photographs; the set is otherwise the one drawn without it (same shades, spot counts
and inlays: the random draws are the same).
"""

from __future__ import annotations

import colorsys

import numpy as np

from floorman.core.chips import ChipDenomination, ChipSet

HUE_SHIFT_DEG = 8.0  # a coloured chip's hue moves at most this far
SATURATION_SCALE = (0.8, 1.15)
VALUE_SCALE = (0.8, 1.25)  # brightness of a coloured chip, times the base's
BLACK_VALUE = (0.04, 0.2)  # a black chip's brightness (0-1): jet to charcoal
WHITE_VALUE = (0.84, 0.98)  # a white chip's: off-white to bright
TINT = 0.08  # most saturation a black or white chip takes (a warm or cool cast)
PLAIN_WHITE = 0.4  # share of white chips whose spots are white too (no visible spots)
OTHER_SPOTS = 0.2  # share of coloured chips whose spots are not white
SPOT_COUNTS = (0, 4, 6, 6, 8, 8)
OWN_INLAY = 0.3  # share of chips whose inlay is the body's colour (no light label disc)
_WHITE_SPOT_RGB = ((244, 244, 240), (250, 250, 246), (232, 232, 226))
_WHITE_SPOT_HEX = tuple(f"#{r:02x}{g:02x}{b:02x}" for r, g, b in _WHITE_SPOT_RGB)
_SPOT_RGB = ((42, 85, 181), (190, 30, 40), (30, 120, 60), (20, 20, 22), (120, 120, 120), (230, 190, 40))
_ATTEMPTS = 5


def club_chipset(rng: np.random.Generator, base: ChipSet, *, white_spots: bool = False) -> ChipSet:
    """A chip set with `base`'s denominations, values, names, sizes and colour names, in a club's own shades and
    edge spots (module doc; `white_spots`: every chip's spots white). Raises ValueError when no draw keeps the
    colours distinct (a base set of near-equal colours)."""
    for _ in range(_ATTEMPTS):
        denominations = tuple(_club_denomination(rng, d, white_spots=white_spots) for d in base.denominations)
        if len({d.colour for d in denominations}) == len(denominations):
            return ChipSet.model_validate({**base.model_dump(), "name": f"{base.name} (a club's shades)",
                                           "denominations": [d.model_dump() for d in denominations]})
    raise ValueError(f"chip set {base.name!r}: its colours are too close to draw distinct shades of them")


def _club_denomination(rng: np.random.Generator, denomination: ChipDenomination, *,
                       white_spots: bool = False) -> ChipDenomination:
    h, s, v = colorsys.rgb_to_hsv(*(c / 255.0 for c in denomination.rgb))
    if s >= 0.3:  # a coloured chip
        h = (h + float(rng.uniform(-HUE_SHIFT_DEG, HUE_SHIFT_DEG)) / 360.0) % 1.0
        s = float(np.clip(s * rng.uniform(*SATURATION_SCALE), 0.35, 1.0))
        v = float(np.clip(v * rng.uniform(*VALUE_SCALE), 0.3, 1.0))
        kind = "colour"
    else:  # black, white or grey: keep its lightness class, give it a cast
        h, s = float(rng.uniform(0.0, 1.0)), float(rng.uniform(0.0, TINT))
        kind = "dark" if v < 0.5 else "white"
        if kind == "dark":
            v = float(rng.uniform(*BLACK_VALUE))
        else:
            v = float(rng.uniform(*WHITE_VALUE))
    body = _hex(colorsys.hsv_to_rgb(h, s, v))
    if kind == "white":
        plain = rng.random() < PLAIN_WHITE
        spots = _pick(rng, _WHITE_SPOT_RGB) if plain else _pick(rng, _SPOT_RGB)
    else:
        spots = _pick(rng, _SPOT_RGB) if rng.random() < OTHER_SPOTS else _pick(rng, _WHITE_SPOT_RGB)
    if white_spots and spots not in _WHITE_SPOT_HEX:  # drawn all the same: the other draws stay as they were
        spots = _WHITE_SPOT_HEX[0]
    if spots == body:  # the set's colours must differ from its spots' only where the design says so
        r, g, b = (min(c + 6, 255) / 255.0 for c in denomination.rgb)
        spots = _hex((r, g, b))
    return ChipDenomination.model_validate({
        **denomination.model_dump(), "colour": body, "edge_colour": spots, "edge_spots": int(rng.choice(SPOT_COUNTS)),
        "inlay_colour": body if rng.random() < OWN_INLAY else None,
    })


def _pick(rng: np.random.Generator, colours: tuple[tuple[int, int, int], ...]) -> str:
    r, g, b = colours[int(rng.integers(len(colours)))]
    return _hex((r / 255.0, g / 255.0, b / 255.0))


def _hex(rgb: tuple[float, float, float]) -> str:
    r, g, b = (round(float(np.clip(c, 0.0, 1.0)) * 255) for c in rgb)
    return f"#{r:02x}{g:02x}{b:02x}"
