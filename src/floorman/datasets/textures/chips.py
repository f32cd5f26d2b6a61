"""Casino chips and the dealer button seen from above, and the colours around a chip's side.

Angles: edge spot k of n is centred at angle 2*pi*k/n, measured in the top-face image from +x toward +y
(image y points down). `chip_edge_colours` uses the same angles, so a renderer that rotates the top face by
the stack's angle and starts the side band at that angle keeps the spots aligned.
"""

from __future__ import annotations

import functools
import math

import cv2
import numpy as np

from floorman.core.chips import ChipDenomination
from floorman.datasets.textures._common import (
    Colour,
    Image,
    bgr,
    blend,
    check_ppm,
    circle,
    fill_poly,
    mix,
    read_only,
    to_bgra,
)
from floorman.datasets.textures.glyphs import text_mask

_MIN_RENDER_PPM = 8.0
_SPOT_FILL = 0.42  # fraction of the circumference covered by edge spots
_SPOT_INNER = 0.78  # inner end of a spot, fraction of the radius


def _check_diameter(diameter_mm: float) -> None:
    if not (math.isfinite(diameter_mm) and 10.0 <= diameter_mm <= 120.0):
        raise ValueError(f"expected a diameter within 10..120 mm, got {diameter_mm}")


def _luma(colour: Colour) -> float:
    b, g, r = colour
    return 0.114 * b + 0.587 * g + 0.299 * r


def _label_colour(inlay: Colour, candidates: tuple[Colour, ...]) -> Colour:
    """The candidate with the most luminance contrast against the inlay."""
    return max(candidates, key=lambda c: abs(_luma(c) - _luma(inlay)))


def _disc_alpha(size: int) -> Image:
    alpha = np.zeros((size, size), dtype=np.uint8)
    circle(alpha, (size / 2, size / 2), size / 2, (255, 255, 255))
    return alpha


def _shade(image: Image, *, strength: float) -> None:
    """Darken toward the rim a little (the bevelled edge of a moulded chip)."""
    size = image.shape[0]
    coords = (np.arange(size, dtype=np.float32) + 0.5) / (size / 2) - 1.0
    r2 = coords[None, :] ** 2 + coords[:, None] ** 2
    gain = 1.0 - strength * np.clip(r2, 0.0, 1.0) ** 3
    image[...] = (image.astype(np.float32) * gain[..., None] + 0.5).astype(np.uint8)


def _label(image: Image, text: str, *, colour: Colour, width: float) -> None:
    size = image.shape[0]
    height = max(3, round(width * (0.32 if len(text) <= 2 else 0.26)))
    mask = text_mask(
        text, font=cv2.FONT_HERSHEY_DUPLEX, weight=0.14, height_px=height, condense=0.9, max_width_px=round(width * 0.8)
    )
    blend_at = (round(size / 2 - mask.shape[1] / 2), round(size / 2 - mask.shape[0] / 2))
    blend(image, mask, colour, x=blend_at[0], y=blend_at[1])


@functools.lru_cache(maxsize=64)
def chip_top(denomination: ChipDenomination, *, diameter_mm: float, px_per_mm: float) -> Image:
    """The top face of a chip: body colour, edge spots on the rim, dashed ring, inlay with the value label.

    BGRA uint8 of shape (n, n, 4), n = round(diameter * ppm); alpha is the disc. Cached and read-only.
    """
    _check_diameter(diameter_mm)
    check_ppm(px_per_mm)
    out = max(2, round(diameter_mm * px_per_mm))
    ppm = max(px_per_mm, _MIN_RENDER_PPM)
    size = round(diameter_mm * ppm)
    body, spot, inlay = bgr(denomination.rgb), bgr(denomination.edge_rgb), bgr(denomination.inlay_rgb)
    radius = size / 2
    centre = (radius, radius)
    image = np.empty((size, size, 3), dtype=np.uint8)
    image[...] = body
    n = denomination.edge_spots
    if n:
        half = math.pi * _SPOT_FILL / n
        half_width = radius * math.sin(half)
        for k in range(n):
            angle = 2 * math.pi * k / n
            u = np.array([math.cos(angle), math.sin(angle)])
            v = np.array([-u[1], u[0]])
            inner, outer = radius * _SPOT_INNER, radius * 1.1
            corners = [
                inner * u - half_width * v,
                outer * u - half_width * v,
                outer * u + half_width * v,
                inner * u + half_width * v,
            ]
            fill_poly(image, np.array(corners) + np.array(centre), spot)
    ring = radius * 0.7
    circle(image, centre, ring, spot, width=max(1.0, radius * 0.025))
    for k in range(24):  # dashes between the ring and the spots
        angle = 2 * math.pi * (k + 0.5) / 24
        x, y = centre[0] + radius * 0.74 * math.cos(angle), centre[1] + radius * 0.74 * math.sin(angle)
        circle(image, (x, y), radius * 0.018, mix(spot, body, 0.3))
    circle(image, centre, radius * 0.6, mix(body, (0, 0, 0), 0.25))
    circle(image, centre, radius * 0.57, inlay)
    label_colour = _label_colour(inlay, (body, spot, (20, 20, 20)))
    _label(image, denomination.label, colour=label_colour, width=radius * 1.1)
    _shade(image, strength=0.12)
    if size != out:
        image = np.asarray(cv2.resize(image, (out, out), interpolation=cv2.INTER_AREA), dtype=np.uint8)
    return read_only(to_bgra(image, _disc_alpha(out)))


def chip_edge_colours(denomination: ChipDenomination, *, segments: int) -> np.ndarray:
    """(segments, 3) uint8 BGR colours around the chip's side: body colour, edge-spot colour over the spots.

    Segment i spans angles [2*pi*i/segments, 2*pi*(i+1)/segments) in the top face's convention.
    """
    if isinstance(segments, bool) or not isinstance(segments, int) or not 3 <= segments <= 4096:
        raise ValueError(f"expected segments within 3..4096, got {segments!r}")
    colours = np.empty((segments, 3), dtype=np.uint8)
    colours[:] = bgr(denomination.rgb)
    n = denomination.edge_spots
    if n == 0:
        return colours
    centres = 2 * math.pi * (np.arange(segments) + 0.5) / segments
    period = 2 * math.pi / n
    offset = np.abs((centres + period / 2) % period - period / 2)  # angle to the nearest spot centre
    colours[offset <= math.pi * _SPOT_FILL / n] = bgr(denomination.edge_rgb)
    return colours


@functools.lru_cache(maxsize=32)
def dealer_button_top(*, diameter_mm: float, px_per_mm: float) -> Image:
    """The white dealer button seen from above, "DEALER" across it; BGRA, alpha = disc. Cached, read-only."""
    _check_diameter(diameter_mm)
    check_ppm(px_per_mm)
    out = max(2, round(diameter_mm * px_per_mm))
    ppm = max(px_per_mm, _MIN_RENDER_PPM)
    size = round(diameter_mm * ppm)
    radius = size / 2
    centre = (radius, radius)
    image = np.empty((size, size, 3), dtype=np.uint8)
    image[...] = (236, 240, 242)
    ink = (24, 24, 24)
    circle(image, centre, radius * 0.86, ink, width=max(1.0, radius * 0.03))
    circle(image, centre, radius * 0.8, (30, 30, 170), width=max(1.0, radius * 0.015))
    mask = text_mask(
        "DEALER",
        font=cv2.FONT_HERSHEY_DUPLEX,
        weight=0.13,
        height_px=max(3, round(radius * 0.32)),
        condense=0.85,
        max_width_px=round(radius * 1.4),
    )
    blend(image, mask, ink, x=round(radius - mask.shape[1] / 2), y=round(radius - mask.shape[0] / 2))
    _shade(image, strength=0.1)
    if size != out:
        image = np.asarray(cv2.resize(image, (out, out), interpolation=cv2.INTER_AREA), dtype=np.uint8)
    return read_only(to_bgra(image, _disc_alpha(out)))
