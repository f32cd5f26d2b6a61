"""Card backs: lattice, fine hatching, ornate (Bicycle-like), solid, dots and logo patterns in several colours.

Patterns are computed analytically per pixel (distance to lines, dots and rings in millimetres) at no less
than 6 px/mm and area-averaged down to the requested scale, so fine patterns blur into their mean colour
at low resolution the way a camera would see them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Literal

import cv2
import numpy as np
import numpy.typing as npt

from floorman.core.cards import Suit
from floorman.datasets.textures._common import (
    Image,
    ImageCache,
    bgr,
    check_index,
    check_ppm,
    mix,
    paint,
    rounded_rect_alpha,
    smooth_coverage,
    to_bgra,
)
from floorman.datasets.textures.suits import draw_suit

F32 = npt.NDArray[np.float32]
Style = Literal["ornate", "lattice", "hatch", "solid", "dots", "logo"]

_MIN_RENDER_PPM = 6.0
_CORNER_RADIUS_MM = 3.0


@dataclass(frozen=True)
class BackDesign:
    """One back pattern: style, ink colour (RGB) and the white border width in mm."""

    style: Style
    ink_rgb: tuple[int, int, int]
    border_mm: float = 3.5
    paper_rgb: tuple[int, int, int] = (248, 247, 242)


_RED = (176, 28, 38)
_DEEP_RED = (150, 22, 40)
_PINK = (228, 112, 152)
_LIGHT_PINK = (236, 140, 172)
_BLUE = (32, 62, 150)
_GREEN = (28, 104, 68)
_BLACK = (32, 32, 36)

BACK_DESIGNS: tuple[BackDesign, ...] = (
    BackDesign("ornate", _RED),
    BackDesign("ornate", _BLUE),
    BackDesign("lattice", _RED, border_mm=4.0),
    BackDesign("hatch", _PINK),
    BackDesign("solid", _DEEP_RED, border_mm=4.5),
    BackDesign("dots", _LIGHT_PINK, border_mm=3.0),
    BackDesign("logo", _BLUE),
    BackDesign("lattice", _PINK, border_mm=3.0),
    BackDesign("hatch", _RED, border_mm=4.0),
    BackDesign("ornate", _PINK),
    BackDesign("logo", _GREEN, border_mm=4.0),
    BackDesign("solid", _BLACK, border_mm=3.0),
    BackDesign("dots", _RED, border_mm=0.0),
    BackDesign("logo", _RED, border_mm=3.0),
)

N_BACK_DESIGNS: int = len(BACK_DESIGNS)


def back_design(back: int) -> BackDesign:
    """The back pattern number `back` (0 .. N_BACK_DESIGNS - 1)."""
    return BACK_DESIGNS[check_index(back, what="a back design", count=N_BACK_DESIGNS)]


def _line_distance(coord: npt.NDArray[np.floating[Any]], period: float) -> F32:
    """Distance (mm) from `coord` to the nearest multiple of `period`."""
    phase = np.mod(coord, period)
    return np.asarray(np.minimum(phase, period - phase), dtype=np.float32)


def _lattice(x: F32, y: F32, px: float) -> F32:
    """A field of ink crossed by a white diamond lattice, a dot in every diamond."""
    a = x * 0.5 + y * 0.866
    b = x * 0.5 - y * 0.866
    lines = np.maximum(
        smooth_coverage(_line_distance(a, 4.2), 0.32, px), smooth_coverage(_line_distance(b, 4.2), 0.32, px)
    )
    dots = smooth_coverage(np.hypot(_line_distance(a - 2.1, 4.2), _line_distance(b - 2.1, 4.2)), 0.55, px)
    return np.asarray(1.0 - np.maximum(lines, dots), dtype=np.float32)


def _hatch(x: F32, y: F32, px: float) -> F32:
    """Fine diagonal cross-hatching of ink on paper."""
    first = smooth_coverage(_line_distance(x + y, 1.15), 0.3, px)
    second = smooth_coverage(_line_distance(x - y, 1.15), 0.3, px)
    return np.asarray(np.maximum(first, second * 0.85), dtype=np.float32)


def _dots(x: F32, y: F32, px: float) -> F32:
    """Ink with white dots on a hexagonal grid."""
    row = np.floor(y / 2.6)
    shifted = x + np.where(np.mod(row, 2) > 0, 1.5, 0.0).astype(np.float32)
    d = np.hypot(_line_distance(shifted - 1.5, 3.0), _line_distance(y - 1.3, 2.6))
    return np.asarray(1.0 - smooth_coverage(np.asarray(d, dtype=np.float32), 0.75, px), dtype=np.float32)


def _ornate(x: F32, y: F32, px: float, *, size: tuple[float, float]) -> F32:
    """Rosettes, rings and wavy scrolls in white on ink, with a central medallion (a Bicycle-like back)."""
    period = 5.6
    dx, dy = _line_distance(x, period), _line_distance(y, period)
    r = np.asarray(np.hypot(dx, dy), dtype=np.float32)
    theta = np.arctan2(y - np.round(y / period) * period, x - np.round(x / period) * period)
    petal_r = (1.0 + 0.9 * np.abs(np.cos(3.0 * theta))).astype(np.float32)
    white = smooth_coverage(np.abs(r - petal_r), 0.18, px)
    white = np.maximum(white, smooth_coverage(np.abs(r - 2.55), 0.16, px))
    white = np.maximum(white, smooth_coverage(r, 0.35, px))
    r2 = np.asarray(np.hypot(_line_distance(x - period / 2, period), _line_distance(y - period / 2, period)))
    white = np.maximum(white, smooth_coverage(np.abs(r2.astype(np.float32) - 0.8), 0.14, px))  # small rings between
    white = np.maximum(white, smooth_coverage(r2.astype(np.float32), 0.3, px))
    for sign in (1.0, -1.0):  # fine wavy scrolls crossing the field
        wave = np.abs(np.sin((x + sign * y) * (math.pi / period) + 0.8 * np.sin((x - sign * y) * (math.pi / period))))
        white = np.maximum(white, smooth_coverage(np.asarray(wave, dtype=np.float32), 0.07, px * 1.5) * 0.85)
    w, h = size
    rm = np.asarray(np.hypot((x - w / 2) / 1.0, (y - h / 2) / 1.25), dtype=np.float32)
    medallion = min(w, h) * 0.2
    inside = rm < medallion
    white = np.where(inside, 0.0, white).astype(np.float32)
    rings = np.maximum(
        smooth_coverage(np.abs(rm - medallion * 0.92), 0.3, px), smooth_coverage(rm, medallion * 0.25, px)
    )
    ray = np.abs(np.sin(8.0 * np.arctan2(y - h / 2, x - w / 2)))
    rays = np.where(
        (rm < medallion * 0.8) & (rm > medallion * 0.3), smooth_coverage(ray.astype(np.float32), 0.35, 0.1), 0
    )
    white = np.maximum(white, np.where(inside, 1.0 - np.maximum(rings, rays), 0.0)).astype(np.float32)
    return np.asarray(1.0 - white, dtype=np.float32)


def _field(spec: BackDesign, x: F32, y: F32, *, px: float, size: tuple[float, float]) -> F32:
    if spec.style == "lattice":
        return _lattice(x, y, px)
    if spec.style == "hatch":
        return _hatch(x, y, px)
    if spec.style == "dots":
        return _dots(x, y, px)
    if spec.style == "ornate":
        return _ornate(x, y, px, size=size)
    if spec.style == "logo":
        return np.asarray(0.82 + 0.18 * _hatch(x, y, px), dtype=np.float32)
    return np.ones_like(x)


def _frame_lines(cover: F32, x: F32, y: F32, *, px: float, size: tuple[float, float]) -> F32:
    """Double white frame lines inside the patterned field."""
    w, h = size
    edge = np.minimum(np.minimum(x, w - x), np.minimum(y, h - y))
    white = np.maximum(smooth_coverage(np.abs(edge - 1.2), 0.3, px), smooth_coverage(np.abs(edge - 2.3), 0.15, px))
    solid = smooth_coverage(np.asarray(edge, dtype=np.float32), 2.8, px)  # the band between is plain ink
    return np.asarray(np.maximum(cover, solid) * (1.0 - white), dtype=np.float32)


def _emblem(image: Image, spec: BackDesign, *, ppm: float) -> None:
    """The central logo of 'logo' and 'solid' backs: an oval cartouche with the four suits."""
    h, w = image.shape[:2]
    paper, ink = bgr(spec.paper_rgb), bgr(spec.ink_rgb)
    centre = (round(w / 2 * 16), round(h / 2 * 16))
    axes = (round(w * 0.3 * 16), round(h * 0.17 * 16))
    if spec.style == "solid":
        axes = (round(w * 0.18 * 16), round(w * 0.18 * 16))
    cv2.ellipse(image, centre, axes, 0, 0, 360, paper, -1, cv2.LINE_AA, 4)
    inner = (axes[0] - round(1.2 * ppm * 16), axes[1] - round(1.2 * ppm * 16))
    cv2.ellipse(image, centre, inner, 0, 0, 360, ink, max(1, round(0.4 * ppm)), cv2.LINE_AA, 4)
    size = min(axes) / 16 * 0.55
    offsets = (
        ((-1.0, 0.0), (0.0, -1.0), (1.0, 0.0), (0.0, 1.0))
        if spec.style == "solid"
        else ((-1.5, 0.0), (-0.5, 0.0), (0.5, 0.0), (1.5, 0.0))
    )
    spread = size * 1.05 if spec.style == "logo" else size * 0.85
    for (ox, oy), suit in zip(offsets, (Suit.SPADES, Suit.HEARTS, Suit.CLUBS, Suit.DIAMONDS), strict=True):
        colour = ink if not suit.is_red else mix(ink, bgr((200, 30, 40)), 0.6)
        draw_suit(image, suit, centre=(w / 2 + ox * spread, h / 2 + oy * spread), height=size, colour=colour)


def card_back(back: int, *, size_mm: tuple[float, float], px_per_mm: float) -> Image:
    """Back pattern `back` on a card of `size_mm` (w, h): BGRA uint8, same conventions as `card_face`.

    Cached; the returned array is shared and read-only.
    """
    back_design(back)
    check_ppm(px_per_mm)
    w_mm, h_mm = float(size_mm[0]), float(size_mm[1])
    if not (20.0 <= w_mm <= 200.0 and 20.0 <= h_mm <= 200.0):
        raise ValueError(f"expected a card size within 20..200 mm, got {size_mm}")
    key = (int(back), w_mm, h_mm, float(px_per_mm))
    return BACK_CACHE.get(key, lambda: _make_card_back(int(back), (w_mm, h_mm), float(px_per_mm)))


BACK_CACHE = ImageCache(max_bytes=256 << 20)
"""Backs already drawn, by (back, width, height, px_per_mm): at most 256 MB."""


def _make_card_back(back: int, size_mm: tuple[float, float], px_per_mm: float) -> Image:
    spec = back_design(back)
    w_mm, h_mm = size_mm
    out_w, out_h = round(w_mm * px_per_mm), round(h_mm * px_per_mm)
    ppm = max(px_per_mm, _MIN_RENDER_PPM)
    width, height = round(w_mm * ppm), round(h_mm * ppm)
    border = spec.border_mm
    field_size = (w_mm - 2 * border, h_mm - 2 * border)
    xs = (np.arange(width, dtype=np.float32) + 0.5) / ppm - border
    ys = (np.arange(height, dtype=np.float32) + 0.5) / ppm - border
    x, y = np.meshgrid(xs, ys)
    px = 1.0 / ppm
    cover = _field(spec, x, y, px=px, size=field_size)
    if border > 0:
        cover = _frame_lines(cover, x, y, px=px, size=field_size) if spec.style != "dots" else cover
        edge = np.minimum(np.minimum(x, field_size[0] - x), np.minimum(y, field_size[1] - y))
        cover = np.asarray(cover * smooth_coverage(-edge, 0.0, px), dtype=np.float32)
    image = np.empty((height, width, 3), dtype=np.uint8)
    image[...] = bgr(spec.paper_rgb)
    paint(image, cover, bgr(spec.ink_rgb))
    if spec.style in ("logo", "solid"):
        _emblem(image, spec, ppm=ppm)
    if (width, height) != (out_w, out_h):
        image = np.asarray(cv2.resize(image, (out_w, out_h), interpolation=cv2.INTER_AREA), dtype=np.uint8)
    alpha = rounded_rect_alpha(out_h, out_w, _CORNER_RADIUS_MM * px_per_mm)
    return to_bgra(image, alpha)
