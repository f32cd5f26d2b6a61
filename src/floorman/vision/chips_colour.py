"""Chip colours under unknown light: matching a chip's observed body and edge-spot colours to a chip set.

A chip's top face shows two colours: the body and the edge spots (the inlay is a light tint of the body, the
label small). Both are lit by the same light, so a denomination is scored by how well one illuminant (a
warm-to-cool colour shift, a small green-magenta shift, and an overall brightness) maps its nominal body and
spot colours onto the observed pair. Inverse pairs (a white chip with blue spots against a blue chip with
white spots) cannot both fit. The number of spots around the rim, when it can be measured, is a third cue.
A small or blurred chip merges body and spots (the two clusters end up close, even swapped): the less they
differ, the more the score rests on the mean colour of the rim against the nominal body-and-spot mix. Even on a
sharp chip the body band (between the light inlay and the printed ring, a pixel or two wide on a small chip)
takes in some of the light colours around it: the body is fitted as the nominal body with up to _BODY_MIX of
the spot colour mixed in (measured: a black chip then no longer passes for a dim blue one). How much may bleed in
falls with the chip's size (`body_mixes`: all of _BODY_MIX up to 40 px across, at most _LARGE_MIX from 90 px): on a
large chip the band is pixels wide, and with 45 % of light print in it the black chip's body is a mid grey that
passed for another club's muted green or red (session 30, photo-like frames of such chips, dev seeds 30901 / 30903:
tops wrong 13 -> 6 of 266, 7 -> 5 of 251; our own chips, 30902: 2 -> 1 of 268).
One chip alone often cannot tell its light: a black chip under bluish light fits a dim blue chip's colours about
as well as the blue chip does. The frame's light does: its brightest things are white (cards, chip spots and
inlays, printed lines), so their colour is the light's (`scene_light`), and a chip's light is drawn towards it
(`match_top`'s `light`: a penalty _LIGHT_PRIOR x the squared log distance of the two lights' channel gains).
Measured on 60 frames each of seeds 94001/94002 (tuned on) and 94021/94022, truth boxes with the camera's
height: top value 95.9/93.0/92.9/92.6 % -> 99.0/98.7/97.5/98.8 %; boxes alone (no camera; `chips.box_discs`' new
candidates too) 77.1/78.4/74.6/72.8 % -> 92.2/93.5/91.7/91.6 %.
The frame's exposure bounds a chip's brightness too (`scene_white`: no chip is lit more than _EXPOSURE_MARGIN times
as bright as the frame's whitest unclipped pixels): blurred together, a black chip's body and white spots are a grey
that, lit 2.2 times as bright, fitted a plain white chip (white spots on white) as well as the white chip with blue
spots does (session 29, photo-like frames of another club's chips, fresh seed 29703: every colour counted exact
45 -> 60 % of 40 photos with `detect_cli._MIN_IN_VIEW`; the issue's mixed set, dev seed 29011: unchanged).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from floorman.core.chip_sides import SIDE_SHADE  # a chip's side, lit from above, looks this much darker
from floorman.core.chips import ChipDenomination, ChipSet

Bgr = npt.NDArray[np.float64]  # (..., 3) colours, BGR order, 0..255
_WARM = np.linspace(-0.5, 0.5, 21)  # log red/blue gain ratio / 2: 3000-6500 K light plus a white-balance error
_GREEN = np.linspace(-0.15, 0.15, 5)
_BRIGHTNESS = (0.3, 2.2)
_CHROMA_WEIGHT = 3.0  # weight of the body's chromaticity mismatch (`_chroma_mismatch`) on a sharp chip
_CHROMA_FLOOR = 30.0  # added to a colour's channel sum: a near-black body's shares are noise
_SPOT_WEIGHT = 0.35  # weight of the spot count's evidence on chips up to `_SPOT_SIZE_PX[0]` across ...
_SPOT_WEIGHT_LARGE = 0.02  # ... and on chips `_SPOT_SIZE_PX[1]` across or more (linear between): a large chip's
_SPOT_SIZE_PX = (60.0, 120.0)  # colours tell its denomination; its spot count only where they nearly tie
_SPOT_DECIDES = 0.06  # colour errors this far apart: the spot count cannot reorder them (`_colours_first`)
_SHARP_CONTRAST = 250.0  # body and spot colours this far apart are read as two colours; closer, blur merged them
SPOT_SHARE = 0.33  # share of spot colour in the sampled rim (spots and the printed ring)
_BLUR_WEIGHT = 4.0  # a one-colour fit leaves smaller errors than a two-colour one
_BODY_MIX = (0.0, 0.15, 0.3, 0.45)  # share of light colour (inlay, ring, spots) bled into the sampled body
_MIX_SIZE_PX = (40.0, 90.0)  # on chips this wide or narrower all of _BODY_MIX is tried; this wide or wider ...
_LARGE_MIX = 0.15  # ... at most this much (linear between): a large chip's body band is pixels wide
_LIGHT = np.array([240.0, 242.0, 242.0])  # the light print around the body band
_MAX_GLARE = 40.0  # grey offset from specular light, 8-bit levels
_LIGHT_PRIOR = 0.2  # weight of the frame's light on a chip's (relative squared error per squared log gain)
_WHITE_SHARE = 0.02  # the frame's brightest pixels taken for white (measured: 1 % and 5 % did worse)
_WHITE = np.array([240.0, 244.0, 244.0])  # what white print looks like under neutral light
WHITE_LEVEL = float(_WHITE.mean())  # its level: a frame whose `scene_white` is this is exposed as white print
_SATURATED = 250  # pixels this bright in any channel are clipped: their colour is not the light's
_LIGHT_SAMPLES = 100_000  # the frame is looked at on a grid of about this many pixels
_MIN_WHITE = 20  # fewer bright pixels than this tell no light
_EXPOSURE_SHARE = 0.002  # the frame's brightest pixels whose level bounds a chip's brightness (`scene_white`) ...
_EXPOSURE_MARGIN = 1.5  # ... at this many times their level over white print's
_SPLIT_ITERATIONS = 20  # `two_means` stops after this many steps ...
_SPLIT_TOLERANCE = 0.5  # ... or when no centre moves more than this (8-bit levels)
# A match's confidence is the winner's separation from the runner-up times exp(-error / FIT_SCALE): how well it fits
# at all. `ColourMatch.on_chip` uses ON_CHIP_FIT: whether the sampled disc lies on the chip (`ChipRecogniser` stops
# looking for the top disc off the fit at a match that sure), kept apart so the reported confidence can be tuned
# without moving the search. FIT_SCALE 0.3 (tried in session 13, `benchmarks/chips.py`, camera height given): on dev
# seeds more stacks sure on count and values at the same exactness (mixed 99602, detector boxes: 80 -> 89, 98.8 ->
# 98.9 %), but on fresh seeds the stacks it made sure were mostly wrong (mixed 99607: 99 -> 105, 100 -> 95.2 %;
# 3840x2160 99608: 66 -> 71, 100 -> 98.6 %; truth boxes 141 -> 150, 99.3 -> 96.7 %).
FIT_SCALE = 0.15
ON_CHIP_FIT = 0.15


def _illuminants() -> Bgr:
    """(K, 3) BGR channel gains, geometric mean 1."""
    warm, green = np.meshgrid(_WARM, _GREEN, indexing="ij")
    gains = np.stack([np.exp(-warm), np.exp(green), np.exp(warm)], axis=-1).reshape(-1, 3)
    result: Bgr = gains / np.exp(np.log(gains).mean(axis=1, keepdims=True))
    return result


ILLUMINANTS = _illuminants()
_LOG_ILLUMINANTS = np.log(ILLUMINANTS)


def scene_light(image: npt.NDArray[np.uint8]) -> Bgr | None:
    """The frame's light as log channel gains (3,), mean 0: the mean colour of its brightest _WHITE_SHARE of
    pixels (clipped ones left out) against white print's; None when too few pixels are left."""
    return scene_light_and_white(image)[0]


def scene_white(image: npt.NDArray[np.uint8]) -> float | None:
    """The frame's exposure: the mean level (0..255) of its brightest _EXPOSURE_SHARE of pixels (clipped ones left
    out), what the whitest things look like in it; None when too few pixels are left. `match_top(white=...)`
    bounds a chip's brightness by it."""
    return scene_light_and_white(image)[1]


def scene_light_and_white(image: npt.NDArray[np.uint8]) -> tuple[Bgr | None, float | None]:
    """`scene_light` and `scene_white` from one look at the frame."""
    brightest = _brightest(image, shares=(_WHITE_SHARE, _EXPOSURE_SHARE))
    if brightest is None:
        return None, None
    white, whitest = brightest
    gains = np.log(np.maximum(white, 1.0) / _WHITE)
    light: Bgr = gains - gains.mean()
    return light, float(whitest.mean())


def _brightest(image: npt.NDArray[np.uint8], *, shares: tuple[float, ...]) -> list[Bgr] | None:
    """Per share, the mean colour of the frame's brightest that share of pixels, clipped ones left out (None: too
    few)."""
    height, width = image.shape[:2]
    step = max(1, int(math.sqrt(height * width / _LIGHT_SAMPLES)))
    pixels = np.ascontiguousarray(image[::step, ::step]).reshape(-1, 3)
    level = pixels.sum(axis=1, dtype=np.int32)
    level[(pixels >= _SATURATED).any(axis=1)] = -1
    histogram = np.bincount(level + 1, minlength=3 * 256 + 1)[1:]  # clipped pixels (-1) left out
    kept = int(histogram.sum())
    if kept < _MIN_WHITE:
        return None
    above = np.cumsum(histogram[::-1])  # pixels at or above each level, brightest first
    result: list[Bgr] = []
    for share in shares:
        threshold = len(histogram) - 1 - int(np.searchsorted(above, max(_MIN_WHITE, share * kept)))
        result.append(pixels[level >= threshold].mean(axis=0).astype(np.float64))
    return result


def nominal_bgr(denomination: ChipDenomination) -> tuple[Bgr, Bgr]:
    """Body and edge-spot colours (BGR floats)."""
    r, g, b = denomination.rgb
    er, eg, eb = denomination.edge_rgb
    return np.array([b, g, r], dtype=np.float64), np.array([eb, eg, er], dtype=np.float64)


@dataclass(frozen=True, slots=True)
class ColourMatch:
    """The chip set's best denomination for an observed (body, spot) pair, with the light that explains it."""

    value: int
    confidence: float
    error: float  # relative squared error of the best fit, 0 = exact
    illuminant: Bgr  # (3,) channel gains x brightness that map nominal colours to observed ones
    errors: dict[int, float]
    on_chip: float = 0.0  # how surely the sampled disc lies on a chip's top: the stricter fit (`ON_CHIP_FIT`)


@dataclass(frozen=True, slots=True)
class TopColours:
    """What a chip's top face shows: body and spot colours (BGR), spot count evidence, pixels used."""

    body: Bgr
    spot: Bgr
    mean: Bgr  # mean of all samples: what a blurred chip still shows when body and spots merge
    spot_power: dict[int, float]  # spot count -> share of the rim's angular variation at that frequency
    samples: int
    diameter_px: float = 0.0  # the top disc's size in the image (0: not known)


def two_means(samples: npt.NDArray[np.floating[Any]]) -> npt.NDArray[np.int64]:
    """Two-means labels (0 or 1) of colour samples (N, 3), started the same way every time: split across the
    samples' principal axis at their mean, then Lloyd's steps. OpenCV's k-means++ start drew from its global RNG,
    so a chip's top colours depended on what had been read before it."""
    data = np.asarray(samples, dtype=np.float64)
    centred = data - data.mean(axis=0)
    _, _, axes = np.linalg.svd(centred, full_matrices=False)
    labels: npt.NDArray[np.int64] = (centred @ axes[0] > 0.0).astype(np.int64)
    if labels.min() == labels.max():  # one colour: nothing to split
        return labels
    centres = np.stack([data[labels == k].mean(axis=0) for k in (0, 1)])
    for _ in range(_SPLIT_ITERATIONS):
        distances = np.linalg.norm(data[:, None, :] - centres[None, :, :], axis=2)
        labels = np.argmin(distances, axis=1).astype(np.int64)
        moved = np.stack([data[labels == k].mean(axis=0) if np.any(labels == k) else centres[k] for k in (0, 1)])
        shift = float(np.abs(moved - centres).max())
        centres = moved
        if shift < _SPLIT_TOLERANCE:
            break
    return labels


def _fit(observed: Bgr, models: Bgr, *, max_glare: float = 0.0, prior: npt.NDArray[np.float64] | None = None,
         max_brightness: float = _BRIGHTNESS[1]) -> tuple[npt.NDArray[np.float64], Bgr]:
    """Per nominal colour set (M, P, 3), the best relative error over the illuminants for the observed (P, 3)
    colours and the light that gives it (M, 3): per light, observed ~ brightness * gains * nominal + glare (a
    grey offset, >= 0: specular light on a glossy chip), brightness at most `max_brightness`. `prior` (K,) is
    added to each illuminant's error."""
    bounds = (_BRIGHTNESS[0], max(_BRIGHTNESS[0], min(_BRIGHTNESS[1], max_brightness)))
    count, lights = len(models), len(ILLUMINANTS)
    predicted = (models[:, None, :, :] * ILLUMINANTS[None, :, None, :]).reshape(count * lights, -1)
    obs = observed.reshape(-1)
    n = float(obs.size)
    sum_p, sum_pp, sum_po = predicted.sum(axis=1), (predicted**2).sum(axis=1), predicted @ obs
    sum_o = float(obs.sum())
    det = sum_pp * n - sum_p**2 + 1e-9
    brightness = np.clip((sum_po * n - sum_p * sum_o) / det, *bounds)
    glare = np.clip((sum_o - brightness * sum_p) / n, 0.0, max_glare)
    brightness = np.clip((sum_po - glare * sum_p) / (sum_pp + 1e-9), *bounds)
    residual = ((obs[None, :] - brightness[:, None] * predicted - glare[:, None]) ** 2).sum(axis=1)
    relative = (residual / (float((observed**2).sum()) + 400.0)).reshape(count, lights)
    if prior is not None:
        relative = relative + prior[None, :]
    best = np.argmin(relative, axis=1)
    rows = np.arange(count)
    gains: Bgr = ILLUMINANTS[best] * brightness.reshape(count, lights)[rows, best][:, None]
    errors: npt.NDArray[np.float64] = relative[rows, best]
    return errors, gains


def match_top(top: TopColours, chipset: ChipSet, *, light: Bgr | None = None,
              white: float | None = None) -> ColourMatch:
    """Score every denomination against the observed body and spot colours (and spot count when measured). The
    nominal body is tried with each of _BODY_MIX of light print bled into it; the best mix counts. `light`: the
    frame's light (`scene_light`), which the chip's is drawn towards; `white`: the frame's white level
    (`scene_white`), which bounds a chip's brightness (`_EXPOSURE_MARGIN`)."""
    prior = None if light is None else _LIGHT_PRIOR * ((_LOG_ILLUMINANTS - light[None, :]) ** 2).sum(axis=1)
    limit = _BRIGHTNESS[1] if white is None else _EXPOSURE_MARGIN * white / float(_WHITE.mean())
    observed = np.stack([top.body, top.spot])
    sharp = min(1.0, float(np.linalg.norm(top.body - top.spot)) / _SHARP_CONTRAST)
    pairs = [nominal_bgr(d) for d in chipset.denominations]
    bodies = np.stack([body for body, _ in pairs])  # (D, 3)
    spots = np.stack([spot if d.edge_spots else body for d, (body, spot) in zip(chipset.denominations, pairs,
                                                                                    strict=True)])
    mixes = body_mixes(top.diameter_px)
    mix = np.asarray(mixes)[None, :, None]
    mixed = (1.0 - mix) * bodies[:, None, :] + mix * _LIGHT[None, None, :]  # (D, W, 3)
    models = np.stack([mixed, np.broadcast_to(spots[:, None, :], mixed.shape)], axis=2).reshape(-1, 2, 3)
    fitted, lights = _fit(observed, models, max_glare=_MAX_GLARE, prior=prior, max_brightness=limit)
    fitted, lights = fitted.reshape(len(pairs), len(mixes)), lights.reshape(len(pairs), len(mixes), 3)
    best_mix = np.argmin(fitted, axis=1)
    rows = np.arange(len(pairs))
    error = fitted[rows, best_mix] + sharp * _chroma_mismatch(top.body, lights[rows, best_mix] * mixed[rows, best_mix])
    if sharp < 1.0:
        blend = ((1.0 - SPOT_SHARE) * bodies + SPOT_SHARE * spots)[:, None, :]
        blurred, _ = _fit(top.mean[None, :], blend, prior=prior, max_brightness=limit)
        error = sharp * error + (1.0 - sharp) * _BLUR_WEIGHT * blurred
    errors: dict[int, float] = {}
    gains: dict[int, Bgr] = {}
    for i, denomination in enumerate(chipset.denominations):
        value = float(error[i])
        if top.spot_power and denomination.edge_spots in top.spot_power:
            missing = 1.0 - top.spot_power[denomination.edge_spots]
            value += spot_weight(top.diameter_px) * missing * _spot_contrast(top)
        errors[denomination.value] = value
        gains[denomination.value] = lights[i, best_mix[i]]
    if top.diameter_px >= _SPOT_SIZE_PX[0]:
        errors = _colours_first(errors, {d.value: float(error[i]) for i, d in enumerate(chipset.denominations)})
    return _decide(errors, gains)


def _colours_first(errors: dict[int, float], colour: dict[int, float]) -> dict[int, float]:
    """On a chip large enough that its colours tell its denomination (`spot_weight`), the spot count decides only
    between denominations whose colours fit within _SPOT_DECIDES of the best: one whose colours fit worse by more
    ends that much worse than the best of those. Dev photos (seed 34102, photo 8): another club's red chips with 8
    spots, as many as the shipped black chip's, 98 px across, were read black (colours 0.11 apart, the count 0.14);
    on 1,660 chip boxes of six dev photo sets nothing else changed. Session 35 narrowed 0.08 to 0.06: another
    club's green chips with 8 spots, colours 0.073 from the black's, were read black (dev seed 34202, photo 5); a
    blue chip read white but for its spot count had colours 0.045 from the white's (dev seed 32002, photo 32)."""
    best = min(colour.values())
    close = [errors[v] for v in colour if colour[v] <= best + _SPOT_DECIDES]
    floor = min(close)
    return {v: e if colour[v] <= best + _SPOT_DECIDES else max(e, floor + colour[v] - best - _SPOT_DECIDES)
            for v, e in errors.items()}


def _chroma_mismatch(body: Bgr, predicted: Bgr) -> npt.NDArray[np.float64]:
    """Per denomination (D,), how far the observed body's chromaticity (its colour's channel shares, brightness
    left out) lies from each model's under its fitted light (`predicted`, (D, 3)), times `_CHROMA_WEIGHT`. The fit
    weighs colours by their brightness, so a bright rim drowns the body's hue: another club's red chip with white
    spots (a bluish light) fitted the black chip's body, grey with its light print, better than the red's."""
    observed = body / (float(body.sum()) + _CHROMA_FLOOR)
    model = predicted / (predicted.sum(axis=1, keepdims=True) + _CHROMA_FLOOR)
    mismatch: npt.NDArray[np.float64] = _CHROMA_WEIGHT * ((model - observed[None, :]) ** 2).sum(axis=1)
    return mismatch


def body_mixes(diameter_px: float) -> tuple[float, ...]:
    """The shares of light print (`_BODY_MIX`) a chip's sampled body may hold, by the chip's size in the image (0:
    unknown, all of them)."""
    if diameter_px <= 0.0:
        return _BODY_MIX
    limit = float(np.interp(diameter_px, _MIX_SIZE_PX, (max(_BODY_MIX), _LARGE_MIX)))
    return tuple(m for m in _BODY_MIX if m <= limit + 1e-9)


def spot_weight(diameter_px: float) -> float:
    """How much a chip's spot count weighs beside its colours, by the chip's size in the image (0: unknown, the
    full weight). On a small chip body and spots blur together and the count of spots tells a white chip with blue
    spots (6) from a blue one with white spots (8); on a large one the colours are plain, and another club's chips
    need not have the shipped set's counts (`datasets.chip_designs`; photo-like frames of such chips, dev seed
    27901: tops read wrong 45 of 121 with the full weight, 12 with this, 6 with `_chroma_mismatch` too; the shipped
    set's chips 1, 1 and 2 of 130)."""
    return float(np.interp(diameter_px, _SPOT_SIZE_PX, (_SPOT_WEIGHT, _SPOT_WEIGHT_LARGE)))


def _spot_contrast(top: TopColours) -> float:
    """0..1: how different spots and body are (a spot count from a flat rim means nothing)."""
    distance = float(np.linalg.norm(top.body - top.spot))
    return min(1.0, distance / 80.0)


def _decide(errors: dict[int, float], gains: dict[int, Bgr]) -> ColourMatch:
    ranked = sorted(errors, key=lambda v: errors[v])
    best = ranked[0]
    second = errors[ranked[1]] if len(ranked) > 1 else 1.0
    # Confidence: how much worse the runner-up fits, and how well the winner fits at all.
    separation = 1.0 - math.exp(-max(second - errors[best], 0.0) / 0.02)
    return ColourMatch(value=best, confidence=float(separation * math.exp(-errors[best] / FIT_SCALE)),
                       error=errors[best], illuminant=gains[best], errors=errors,
                       on_chip=float(separation * math.exp(-errors[best] / ON_CHIP_FIT)))


def classify_side(colours: Bgr, chipset: ChipSet, *, illuminant: Bgr) -> tuple[npt.NDArray[np.int64], Bgr]:
    """Denomination index (into `chipset.denominations`) and distance for each side colour (N, 3), under the
    light found on the top face; the side's own brightness may differ from the top's by 0.5-1.4x."""
    bodies = np.stack([nominal_bgr(d)[0] for d in chipset.denominations]) * SIDE_SHADE * illuminant[None]
    observed = np.asarray(colours, dtype=np.float64).reshape(-1, 1, 3)
    dot = (observed * bodies[None]).sum(axis=2)
    norm = (bodies**2).sum(axis=1)[None] + 1e-9
    scale = np.clip(dot / norm, 0.5, 1.4)
    distance = np.sqrt(((observed - scale[..., None] * bodies[None]) ** 2).sum(axis=2))  # (N, D)
    index = np.argmin(distance, axis=1).astype(np.int64)
    best: Bgr = distance[np.arange(len(index)), index]
    return index, best


GRAY_STEP = 4  # `grayscale` looks at every this many pixels each way


def grayscale(image: npt.NDArray[np.uint8]) -> bool:
    """Whether a BGR image holds no colour: its three channels equal (a grayscale file, as OpenCV reads it, or a
    monochrome or infrared camera's frame), on a grid of every GRAY_STEP pixels. A colour camera's noise alone parts
    them. Chips are valued by their colours: in such an image none is (`floorman detect`, the edge's table state)."""
    grid = image[::GRAY_STEP, ::GRAY_STEP]
    return bool(np.array_equal(grid[..., 0], grid[..., 1]) and np.array_equal(grid[..., 1], grid[..., 2]))
