"""Table surfaces seen from above: felt (fibre noise, pilling, mottling, vignetting) or wood (planks, grain).

Deterministic from `TableAppearance.texture_seed` (and the requested size and scale). Built from cheap
pieces: a low-resolution colour field (mottling, vignette, plank tones, wood grain) resized to full size,
plus one full-resolution noise plane from random bytes, blurred into fibres or pores and added with
`cv2.addWeighted`; about 20-40 ms for 2400 x 1300 px on one core.
"""

from __future__ import annotations

import math

import cv2
import numpy as np
import numpy.typing as npt

from floorman.datasets.scene import SurfaceKind, TableAppearance
from floorman.datasets.textures._common import Image, bgr, check_ppm

F32 = npt.NDArray[np.float32]
_UNIFORM_STD = 73.9  # standard deviation of uniform bytes 0..255


def _check_size(width_px: int, height_px: int) -> None:
    for name, value in (("width_px", width_px), ("height_px", height_px)):
        if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 16384:
            raise ValueError(f"expected {name} within 1..16384, got {value!r}")


def _smooth_noise(rng: np.random.Generator, shape: tuple[int, int], cell: tuple[float, float]) -> F32:
    """Value noise of unit-ish amplitude with features about `cell` (rows, cols) pixels, at full `shape`."""
    h, w = shape
    gh, gw = max(2, math.ceil(h / cell[0]) + 2), max(2, math.ceil(w / cell[1]) + 2)
    grid = rng.standard_normal((gh, gw)).astype(np.float32)
    return np.asarray(cv2.resize(grid, (w, h), interpolation=cv2.INTER_CUBIC), dtype=np.float32)


def _vignette(shape: tuple[int, int], strength: float) -> F32:
    h, w = shape
    y = np.linspace(-1.0, 1.0, h, dtype=np.float32)[:, None]
    x = np.linspace(-1.0, 1.0, w, dtype=np.float32)[None, :]
    return np.asarray(1.0 - strength * (0.5 * (x * x + y * y)) ** 1.5, dtype=np.float32)


def _upscale(low: F32, colour: tuple[float, float, float], size: tuple[int, int]) -> Image:
    """A low-resolution gain map times `colour` (BGR), resized to `size` (w, h) as uint8."""
    coloured = np.clip(low[..., None] * np.asarray(colour, dtype=np.float32), 0, 255).astype(np.uint8)
    return np.asarray(cv2.resize(coloured, size, interpolation=cv2.INTER_LINEAR), dtype=np.uint8)


def _add_noise(base: Image, noise: Image, *, std_levels: float, noise_std: float) -> Image:
    """base + (noise - 127.5) scaled to `std_levels` grey levels, saturated, in one pass."""
    gain = std_levels / max(noise_std, 1e-3)
    noise3 = cv2.cvtColor(noise, cv2.COLOR_GRAY2BGR)
    return np.asarray(cv2.addWeighted(base, 1.0, noise3, gain, -127.5 * gain), dtype=np.uint8)


def _random_plane(rng: np.random.Generator, shape: tuple[int, int]) -> Image:
    return np.frombuffer(rng.bytes(shape[0] * shape[1]), dtype=np.uint8).reshape(shape)  # read-only


def _felt(appearance: TableAppearance, rng: np.random.Generator, shape: tuple[int, int], ppm: float) -> Image:
    h, w = shape
    step = max(1, round(8 * ppm))  # the low-resolution field has one sample per 8 mm
    low_shape = (max(2, h // step), max(2, w // step))
    mottle = _smooth_noise(rng, low_shape, (60.0 / 8, 60.0 / 8)) * 0.025
    mottle += _smooth_noise(rng, low_shape, (300.0 / 8, 300.0 / 8)) * 0.02
    gain = (1.0 + mottle) * _vignette(low_shape, 0.09)
    colour = tuple(float(c) for c in bgr(appearance.colour))
    base = _upscale(np.asarray(gain, dtype=np.float32), (colour[0], colour[1], colour[2]), (w, h))
    raw = _random_plane(rng, shape)
    length = max(1, round(0.9 * ppm))  # fibres ~1 mm: blur the noise along both axes, unequally
    kernel = np.zeros((length + 2, length + 2), dtype=np.float32)
    kernel[1 + length // 2, 1:-1] = 0.6 / length
    kernel[1:-1, 1 + length // 3] += 0.4 / length
    fibres = np.asarray(cv2.filter2D(raw, -1, kernel, borderType=cv2.BORDER_REFLECT), dtype=np.uint8)
    noise_std = _UNIFORM_STD * float(np.sqrt(np.sum(kernel * kernel)))
    threshold = 254 - round(0.5 * min(ppm, 4.0))
    pills = np.asarray(cv2.threshold(_random_plane(rng, shape), threshold, 255, cv2.THRESH_BINARY)[1], dtype=np.uint8)
    if ppm >= 3:
        pills = np.asarray(cv2.dilate(pills, np.ones((2, 2), np.uint8)), dtype=np.uint8)
    cv2.add(fibres, np.full_like(fibres, 40), dst=fibres, mask=pills)  # lighter specks: pilled fibres
    brightness = float(np.mean(colour))
    return _add_noise(base, fibres, std_levels=2.0 + 0.03 * brightness, noise_std=noise_std)


def _plank_rows(rng: np.random.Generator, height_mm: float) -> tuple[list[float], bool]:
    """Plank boundaries (mm from the top) and whether seams are visible (planks) or not (one slab)."""
    planked = bool(rng.random() < 0.6)
    if not planked:
        return [0.0, height_mm], False
    width = float(rng.uniform(90.0, 190.0))
    start = -float(rng.uniform(0.0, width))
    edges = list(np.arange(start, height_mm + width, width))
    return [float(e) for e in edges], True


def _wood_field(
    rng: np.random.Generator, *, shape: tuple[int, int], ppm: float, xstep: int
) -> tuple[F32, list[float], bool]:
    """Grain gain map at (h, w // xstep): planks of their own tone and ring pattern, warped grain lines."""
    h, w = shape
    lw = max(2, w // xstep)
    y_mm = (np.arange(h, dtype=np.float32) + 0.5) / ppm
    edges, planked = _plank_rows(rng, h / ppm)
    plank = np.clip(np.searchsorted(np.asarray(edges), y_mm, side="right") - 1, 0, len(edges) - 2)
    count = len(edges) - 1
    tone = (1.0 + rng.normal(0.0, 0.05, count)).astype(np.float32)[plank][:, None]
    period = rng.uniform(2.0, 5.5, count).astype(np.float32)[plank][:, None]
    phase = rng.uniform(0.0, 100.0, count).astype(np.float32)[plank][:, None]
    # Slow fields are built at a quarter of the rows (>= 4 mm per row at 1 px/mm) and resized once.
    rows = max(2, h // 4)
    low_ppm = ppm * rows / h
    warp = _smooth_noise(rng, (rows, lw), (90.0 * low_ppm, 350.0 * ppm / xstep)) * float(rng.uniform(3.0, 9.0))
    warp += _smooth_noise(rng, (rows, lw), (30.0 * low_ppm, 200.0 * ppm / xstep)) * 2.0
    warp += _smooth_noise(rng, (rows, lw), (12.0 * low_ppm, 80.0 * ppm / xstep)) * 0.6
    warp += _smooth_noise(rng, (rows, 2), (15.0 * low_ppm, 1.0))[:, :1] * 1.2 * period.mean()  # uneven rings
    figure = _smooth_noise(rng, (rows, lw), (40.0 * low_ppm, 400.0 * ppm / xstep)) * 0.04
    both = cv2.resize(np.dstack([warp, figure]), (lw, h), interpolation=cv2.INTER_LINEAR)
    warp_full = np.asarray(both[..., 0], dtype=np.float32)
    figure_full = np.asarray(both[..., 1], dtype=np.float32)
    t = (y_mm[:, None] + warp_full + phase) / period
    visible = np.clip((period * ppm - 1.5) / 1.5, 0.0, 1.0)  # rings finer than the pixels blur out
    rings = (0.5 + 0.5 * np.sin(2.0 * np.pi * t)) * visible
    contrast = float(rng.uniform(0.5, 1.3))  # from plain, faint grain to pronounced
    gain = tone * (1.0 - contrast * (0.16 * rings**4 + 0.05 * rings)) + figure_full
    return np.asarray(gain, dtype=np.float32), edges, planked


def _wood(appearance: TableAppearance, rng: np.random.Generator, shape: tuple[int, int], ppm: float) -> Image:
    h, w = shape
    xstep = 8
    gain, edges, planked = _wood_field(rng, shape=shape, ppm=ppm, xstep=xstep)
    gain *= _vignette(gain.shape[:2], 0.05)
    colour = tuple(float(c) for c in bgr(appearance.colour))
    base = _upscale(gain, (colour[0], colour[1], colour[2]), (w, h))
    raw = _random_plane(rng, shape)
    length = max(3, round(3.0 * ppm))  # pores: noise stretched along the grain
    pores = np.asarray(cv2.blur(raw, (length, 1)), dtype=np.uint8)
    image = _add_noise(base, pores, std_levels=4.0, noise_std=_UNIFORM_STD / math.sqrt(length))
    if planked:
        _draw_seams(image, rng, edges=edges, ppm=ppm)
    return image


def _draw_seams(image: Image, rng: np.random.Generator, *, edges: list[float], ppm: float) -> None:
    """Darken the joints between planks and add staggered butt joints."""
    h, w = image.shape[:2]
    seam = max(1, round(0.6 * ppm))
    for i, edge in enumerate(edges[1:-1], start=1):
        y = round(edge * ppm)
        if 0 <= y < h:
            rows = image[max(0, y - seam // 2) : y + (seam + 1) // 2]
            rows[...] = (rows.astype(np.float32) * 0.55).astype(np.uint8)
        x = float(rng.uniform(0.0, w))
        y0, y1 = round(edges[i - 1] * ppm), y
        while x < w:
            if y1 > 0 and y0 < h:
                xi = round(x)
                cols = image[max(0, y0) : max(0, min(h, y1)), max(0, xi - seam // 2) : xi + (seam + 1) // 2]
                cols[...] = (cols.astype(np.float32) * 0.65).astype(np.uint8)
            x += float(rng.uniform(900.0, 1800.0)) * ppm


def table_surface(appearance: TableAppearance, *, width_px: int, height_px: int, px_per_mm: float) -> Image:
    """BGR uint8 (height_px, width_px, 3) texture of the playing surface (felt or wood), top-down.

    Deterministic for a given appearance (texture_seed), size and scale; a fresh writeable array each call.
    """
    _check_size(width_px, height_px)
    check_ppm(px_per_mm)
    rng = np.random.default_rng(appearance.texture_seed)
    shape = (height_px, width_px)
    if appearance.surface == SurfaceKind.WOOD:
        return _wood(appearance, rng, shape, px_per_mm)
    return _felt(appearance, rng, shape, px_per_mm)
