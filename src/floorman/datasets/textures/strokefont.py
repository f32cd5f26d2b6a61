"""A small stroke font for card indices: the rank glyphs 0-9, J, Q, K, A as centre-line paths.

Drawn with thick anti-aliased polylines (round caps), the paths give a bold sans-serif at any weight; the
"slab" style adds slab serifs at the stroke ends, as on many classic decks. Being our own, the glyphs look
the same with every OpenCV version (OpenCV 5 draws its Hershey font ids with a slashed zero that no deck
prints).

Paths live in a unit box: x 0..1 across the glyph's natural width, y 0 (top) .. 1 (baseline).
"""

from __future__ import annotations

import functools
from typing import Literal

import numpy as np

from floorman.datasets.textures._common import FloatArray, Image, fill_poly, polyline

FontStyle = Literal["sans", "slab"]

_ASPECT = 0.62  # natural width / height of a glyph box


def _arc(cx: float, cy: float, rx: float, ry: float, start: float, end: float, n: int = 28) -> FloatArray:
    """Points along an elliptical arc; angles in degrees, image convention (y down, 90 = bottom, 270 = top)."""
    t = np.radians(np.linspace(start, end, n))
    return np.stack([cx + rx * np.cos(t), cy + ry * np.sin(t)], axis=1)


def _line(*points: tuple[float, float]) -> FloatArray:
    return np.asarray(points, dtype=np.float64)


def _join(*parts: FloatArray) -> FloatArray:
    return np.concatenate(parts, axis=0)


def _six() -> tuple[FloatArray, ...]:
    loop = _arc(0.5, 0.68, 0.42, 0.32, 0, 360, n=40)
    hook = _arc(0.62, 0.62, 0.54, 0.6, 285, 180, n=24)
    return loop, hook


def _paths() -> dict[str, tuple[FloatArray, ...]]:
    six = _six()
    return {
        "0": (_arc(0.5, 0.5, 0.46, 0.5, 0, 360, n=48),),
        "1": (_line((0.62, 1.0), (0.62, 0.0), (0.22, 0.24)),),
        "2": (_join(_arc(0.5, 0.28, 0.42, 0.28, 175, 380), _line((0.05, 1.0), (0.96, 1.0))),),
        "3": (_join(_line((0.12, 0.0), (0.86, 0.0), (0.46, 0.4)), _arc(0.5, 0.69, 0.44, 0.31, 265, 485)),),
        "4": (_line((0.72, 1.0), (0.72, 0.0), (0.03, 0.7), (0.98, 0.7)),),
        "5": (_join(_line((0.86, 0.0), (0.2, 0.0), (0.13, 0.46)), _arc(0.5, 0.67, 0.44, 0.33, 218, 485)),),
        "6": six,
        "7": (_line((0.04, 0.0), (0.96, 0.0), (0.36, 1.0)),),
        "8": (_arc(0.5, 0.24, 0.36, 0.24, 0, 360, n=36), _arc(0.5, 0.71, 0.44, 0.29, 0, 360, n=40)),
        "9": tuple(1.0 - p for p in six),
        "J": (_join(_line((0.74, 0.0), (0.74, 0.7)), _arc(0.43, 0.7, 0.31, 0.3, 0, 165)),),
        "Q": (_arc(0.5, 0.47, 0.46, 0.47, 0, 360, n=48), _line((0.56, 0.68), (0.98, 1.0))),
        "K": (_line((0.1, 0.0), (0.1, 1.0)), _line((0.92, 0.0), (0.1, 0.62)), _line((0.36, 0.43), (0.94, 1.0))),
        "A": (_line((0.02, 1.0), (0.5, 0.0), (0.98, 1.0)), _line((0.2, 0.66), (0.8, 0.66))),
    }


_PATHS = _paths()

# Slab serifs: (x0, x1, y) horizontal bars added by the "slab" style.
_SERIFS: dict[str, tuple[tuple[float, float, float], ...]] = {
    "1": ((0.3, 0.94, 1.0),),
    "4": ((0.5, 0.94, 1.0),),
    "J": ((0.44, 1.0, 0.0),),
    "K": ((-0.08, 0.3, 0.0), (-0.08, 0.3, 1.0), (0.72, 1.06, 0.0), (0.76, 1.1, 1.0)),
    "A": ((-0.1, 0.18, 1.0), (0.82, 1.1, 1.0)),
}

GLYPHS = frozenset(_PATHS)


@functools.lru_cache(maxsize=128)
def stroke_master(char: str, *, style: FontStyle, weight: float, height: int = 160) -> Image:
    """The glyph `char` drawn `height` px tall with strokes of `weight * height` px, cropped to its ink."""
    if char not in _PATHS:
        raise ValueError(f"expected a rank glyph among {''.join(sorted(GLYPHS))}, got {char!r}")
    stroke = max(1.0, weight * height)
    pad = round(stroke) + 4
    scale = np.array([_ASPECT * height, height], dtype=np.float64)
    canvas = np.zeros((height + 2 * pad, round(_ASPECT * height * 1.25) + 2 * pad), dtype=np.uint8)
    offset = np.array([pad + 0.1 * _ASPECT * height, pad], dtype=np.float64)
    for path in _PATHS[char]:
        polyline(canvas, path * scale + offset, (255, 255, 255), width=stroke)
    if style == "slab":  # square bars flush with the stroke ends
        thick = 0.55 * stroke
        for x0, x1, y in _SERIFS.get(char, ()):
            (left, yy), (right, _) = np.array([(x0, y), (x1, y)]) * scale + offset
            top = yy + stroke / 2 - thick if y > 0.5 else yy - stroke / 2
            fill_poly(canvas, np.array([(left, top), (right, top), (right, top + thick), (left, top + thick)]), 255)
    ys, xs = np.nonzero(canvas)
    return np.ascontiguousarray(canvas[ys.min() : ys.max() + 1, xs.min() : xs.max() + 1])
