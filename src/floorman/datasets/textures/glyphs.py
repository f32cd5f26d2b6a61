"""Glyphs as coverage masks: drawn large, cropped tight and resized to the exact size wanted.

`font` is either one of our stroke-font styles ("sans", "slab": the rank glyphs of card indices, see
`strokefont`) or an OpenCV font id (any text, e.g. chip labels).

Drawing large and resizing with area averaging gives anti-aliased glyphs of an exact height (in pixels) at
any scale; the stroke weight is a fraction of the glyph height, so bold and light index fonts stay bold and
light at every size.
"""

from __future__ import annotations

import functools

import cv2
import numpy as np

from floorman.datasets.textures._common import Image
from floorman.datasets.textures.strokefont import FontStyle, stroke_master

_DRAW_HEIGHT = 160  # px: the height glyphs are drawn at before resizing


Font = int | FontStyle


@functools.lru_cache(maxsize=256)
def _master(char: str, font: Font, weight: float) -> Image:
    """The glyph `char` drawn at about `_DRAW_HEIGHT` px and cropped to its ink."""
    if isinstance(font, str):
        return stroke_master(char, style=font, weight=weight, height=_DRAW_HEIGHT)
    scale = cv2.getFontScaleFromHeight(font, _DRAW_HEIGHT, 1)
    thickness = max(1, round(weight * _DRAW_HEIGHT))
    (w, h), base = cv2.getTextSize(char, font, scale, thickness)
    pad = thickness + 8
    canvas = np.zeros((h + base + 2 * pad, w + 2 * pad), dtype=np.uint8)
    cv2.putText(canvas, char, (pad, pad + h), font, scale, 255, thickness, lineType=cv2.LINE_AA)
    ys, xs = np.nonzero(canvas)
    if ys.size == 0:
        raise ValueError(f"expected a printable glyph, got {char!r}")
    return canvas[ys.min() : ys.max() + 1, xs.min() : xs.max() + 1].copy()


def glyph_aspect(char: str, *, font: Font, weight: float) -> float:
    """Natural width / height of a glyph's ink."""
    master = _master(char, font, weight)
    return float(master.shape[1]) / float(master.shape[0])


@functools.lru_cache(maxsize=4096)
def glyph_mask(char: str, *, font: Font, weight: float, height_px: int, width_px: int) -> Image:
    """The coverage mask (uint8) of `char` resized to exactly `height_px` x `width_px`."""
    master = _master(char, font, weight)
    size = (max(1, width_px), max(1, height_px))
    resized = cv2.resize(master, size, interpolation=cv2.INTER_AREA)
    return np.asarray(resized, dtype=np.uint8)


def text_mask(
    text: str, *, font: Font, weight: float, height_px: int, condense: float, max_width_px: int | None = None
) -> Image:
    """Glyphs of `text` side by side (a small gap between), each `height_px` tall and condensed horizontally.

    `condense` scales the natural glyph width (1 = natural); the whole line is squeezed further when it
    would exceed `max_width_px`.
    """
    gap = max(1, round(0.06 * height_px))
    widths = [max(1, round(glyph_aspect(c, font=font, weight=weight) * height_px * condense)) for c in text]
    total = sum(widths) + gap * (len(text) - 1)
    if max_width_px is not None and total > max_width_px:
        squeeze = (max_width_px - gap * (len(text) - 1)) / max(1, sum(widths))
        widths = [max(1, int(w * squeeze)) for w in widths]
        total = sum(widths) + gap * (len(text) - 1)
    out = np.zeros((height_px, total), dtype=np.uint8)
    x = 0
    for char, width in zip(text, widths, strict=True):
        glyph = glyph_mask(char, font=font, weight=weight, height_px=height_px, width_px=width)
        np.maximum(out[:, x : x + width], glyph, out=out[:, x : x + width])
        x += width + gap
    return out
