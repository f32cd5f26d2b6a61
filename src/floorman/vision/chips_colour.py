"""Chip colours under unknown light: matching a chip's observed body and edge-spot colours to a chip set.

A chip's top face shows two colours: the body and the edge spots (the inlay is a light tint of the body, the
label small). Both are lit by the same light, so a denomination is scored by how well one illuminant (a
warm-to-cool colour shift, a small green-magenta shift, and an overall brightness) maps its nominal body and
spot colours onto the observed pair. Inverse pairs (a white chip with blue spots against a blue chip with
white spots) cannot both fit. The number of spots around the rim, when it can be measured, is a third cue.
A small or blurred chip merges body and spots (the two clusters end up close, even swapped): the less they
differ, the more the score rests on the mean colour of the rim against the nominal body-and-spot mix.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from floorman.core.chips import ChipDenomination, ChipSet

Bgr = npt.NDArray[np.float64]  # (..., 3) colours, BGR order, 0..255
SIDE_SHADE = 0.78  # a chip's side, lit from above, looks about this much darker than its top
_WARM = np.linspace(-0.5, 0.5, 21)  # log red/blue gain ratio / 2: 3000-6500 K light plus a white-balance error
_GREEN = np.linspace(-0.15, 0.15, 5)
_BRIGHTNESS = (0.3, 2.2)
_SPOT_WEIGHT = 0.35
_SHARP_CONTRAST = 250.0  # body and spot colours this far apart are read as two colours; closer, blur merged them
_SPOT_SHARE = 0.33  # share of spot colour in the sampled rim (spots and the printed ring)
_BLUR_WEIGHT = 4.0  # a one-colour fit leaves smaller errors than a two-colour one
_MAX_GLARE = 40.0  # grey offset from specular light, 8-bit levels


def _illuminants() -> Bgr:
    """(K, 3) BGR channel gains, geometric mean 1."""
    warm, green = np.meshgrid(_WARM, _GREEN, indexing="ij")
    gains = np.stack([np.exp(-warm), np.exp(green), np.exp(warm)], axis=-1).reshape(-1, 3)
    result: Bgr = gains / np.exp(np.log(gains).mean(axis=1, keepdims=True))
    return result


ILLUMINANTS = _illuminants()


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


@dataclass(frozen=True, slots=True)
class TopColours:
    """What a chip's top face shows: body and spot colours (BGR), spot count evidence, pixels used."""

    body: Bgr
    spot: Bgr
    mean: Bgr  # mean of all samples: what a blurred chip still shows when body and spots merge
    spot_power: dict[int, float]  # spot count -> share of the rim's angular variation at that frequency
    samples: int


def _fit(observed: Bgr, model: Bgr, *, max_glare: float = 0.0) -> tuple[float, Bgr]:
    """Best relative error over the illuminants for observed (P, 3) against nominal (P, 3) colours: per light,
    observed ~ brightness * gains * nominal + glare (a grey offset, >= 0: specular light on a glossy chip)."""
    predicted = (model[None, :, :] * ILLUMINANTS[:, None, :]).reshape(len(ILLUMINANTS), -1)  # (K, P*3)
    obs = observed.reshape(-1)
    n = float(obs.size)
    sum_p, sum_pp, sum_po = predicted.sum(axis=1), (predicted**2).sum(axis=1), predicted @ obs
    sum_o = float(obs.sum())
    det = sum_pp * n - sum_p**2 + 1e-9
    brightness = np.clip((sum_po * n - sum_p * sum_o) / det, *_BRIGHTNESS)
    glare = np.clip((sum_o - brightness * sum_p) / n, 0.0, max_glare)
    brightness = np.clip((sum_po - glare * sum_p) / (sum_pp + 1e-9), *_BRIGHTNESS)
    residual = ((obs[None, :] - brightness[:, None] * predicted - glare[:, None]) ** 2).sum(axis=1)
    relative = residual / (float((observed**2).sum()) + 400.0)
    best = int(np.argmin(relative))
    gains: Bgr = ILLUMINANTS[best] * brightness[best]
    return float(relative[best]), gains


def match_top(top: TopColours, chipset: ChipSet) -> ColourMatch:
    """Score every denomination against the observed body and spot colours (and spot count when measured)."""
    observed = np.stack([top.body, top.spot])
    sharp = min(1.0, float(np.linalg.norm(top.body - top.spot)) / _SHARP_CONTRAST)
    errors: dict[int, float] = {}
    gains: dict[int, Bgr] = {}
    for denomination in chipset.denominations:
        body, spot = nominal_bgr(denomination)
        if not denomination.edge_spots:
            spot = body
        error, gain = _fit(observed, np.stack([body, spot]), max_glare=_MAX_GLARE)
        if sharp < 1.0:
            blurred, _ = _fit(top.mean[None, :], ((1.0 - _SPOT_SHARE) * body + _SPOT_SHARE * spot)[None, :])
            error = sharp * error + (1.0 - sharp) * _BLUR_WEIGHT * blurred
        if top.spot_power and denomination.edge_spots in top.spot_power:
            error += _SPOT_WEIGHT * (1.0 - top.spot_power[denomination.edge_spots]) * _spot_contrast(top)
        errors[denomination.value] = error
        gains[denomination.value] = gain
    return _decide(errors, gains)


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
    fit = math.exp(-errors[best] / 0.15)
    return ColourMatch(value=best, confidence=float(separation * fit), error=errors[best], illuminant=gains[best],
                       errors=errors)


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
