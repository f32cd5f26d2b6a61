"""The chips under a stack's top, read from its side as runs: chips of one denomination lie together.

A stack's side is sampled at each lower chip's mid-height on a few lines facing the camera (`chips.side_colours`),
and each sample labelled with the nearest denomination's body colour under the top's light
(`chips_colour.classify_side`). Labels are noisy: of a chip's samples, only a fifth to a half show its own colour
(more as the side shows more pixels per chip), its edge spots show as the denomination of their colour, and greys,
seams and highlights fall to the lightest body (measured on rendered stacks whose count was read right, dev seed
38001: a green chip's samples under 3 px per chip 27-32 % green, 62-68 % white). `emission_log` models that, and the
chips bottom to top are the most likely sequence of denominations with SWITCH_COST per change, the top chip's
value fixed by its top face (`chips.ChipRecogniser._match`): evidence no single chip's five samples give, a run of
chips together does, and a lone label of another colour no longer turns a chip. Each chip's confidence is its
posterior (forward-backward over the same chain, the evidence tempered by TEMPERATURE: neighbouring samples are not
independent).

From PATTERN_MIN_PX pixels per chip each lower chip's rim is read too (`pattern_log_evidence`): sampled round the
side facing the camera and fitted with each denomination's body and spots where its spots lie, it tells apart what
the labels cannot (a white chip with blue spots and a blue chip with white spots; a red chip whose side labels are
mostly white). Its evidence joins the labels' in the chain of runs, and a side better explained by chips each drawn
alone (a fifth of the simulator's stacks) is read chip by chip from the rims (`read_side`).

Measured (`benchmarks/chips.py`; before, each chip was read alone: another denomination than the top's where 60 % of
its samples that could not be the top's spots agreed): see `chips.py`'s module notes and the README's Chips section
(session 38: runs; session 39: rims).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

import cv2
import numpy as np

from floorman.core.chip_sides import RIM_ANGLES_DEG, SIDE_SHADE
from floorman.core.chips import ChipSet
from floorman.core.geometry import FloatArray
from floorman.vision.chips_colour import nominal_bgr

OWN_SHARE = ((1.0, 0.2), (3.0, 0.3), (5.0, 0.5))  # (px per chip, share of a chip's side samples of its own colour)
SPOT_LABEL = 0.3  # share of a chip's side samples taken for the denomination whose body has its spots' colour
STRAY = 0.02  # share taken for each other denomination
_SPOT_ALIAS_LAB = 40.0  # a body colour this close (CIE Lab) to the top's spot colour may be those spots
_LUMA = np.array([0.114, 0.587, 0.299])
SWITCH_COST = 8.0  # log-odds against a change of denomination from one chip to the next
TEMPERATURE = 3.0  # the samples' log-evidence is divided by this for the posterior (neighbouring samples correlate)
# The rims are read from this many pixels per chip (at 1.8-2.2 their evidence lost more one-denomination stacks than
# it gained mixed ones: dev seeds 39001-39004, stacks counted right, right before -> after: 1.8-2.2 px per chip 80 ->
# 76 of 118, 2.2-2.6 86 -> 95 of 133, 2.6-3.5 168 -> 200 of 230, from 3.5 202 -> 233 of 267).
PATTERN_MIN_PX = 2.2
# The rim's pattern (`pattern_log_evidence`): each lower chip's side sampled round the rim at these angles from the
# side facing the camera, at its mid-height, and fitted with each denomination's body and edge spots laid out as its
# spots lie (their count, SPOT_FILL of the rim, any turn).
PATTERN_ANGLES_DEG = RIM_ANGLES_DEG  # as the learned side reader samples them (`core.chip_sides`)
SPOT_FILL = 0.42  # share of the rim the edge spots cover: the simulator's chips (a real set's may cover more or less)
_PHASES = 24  # turns of the spot pattern tried per spot period
_PATTERN_BLUR = 1.0  # sd (samples) of the blur the pixels put on the pattern's edges
_PATTERN_SIGMA = 30.0  # a sample this far (BGR distance) from the fitted pattern costs 1 of log-evidence (twice: 4)
_PATTERN_CAP = 4.0  # the most one sample costs (highlights, seams, a neighbour's chip)
_PATTERN_BRIGHTNESS = (0.4, 1.6)  # a sample's brightness against the top's light times SIDE_SHADE
PATTERN_TEMPERATURE = 5.0  # the rims' log-evidence is divided by this for a chip's posterior from its rim alone
PATTERN_SHARE = 0.1  # weight of the pattern's evidence beside the labels' where the chips lie in runs
# A fifth of the simulator's stacks take a random denomination per chip: a chain of the labels and a third of the
# pattern's evidence is scored as runs (a change costs SWITCH_COST) and as chips drawn each alone; where the latter
# explains it RANDOM_MARGIN better (log-likelihood), each chip is read from the pattern with RANDOM_SWITCH_COST.
_SELECT_TEMPERATURE = 3.0
RANDOM_MARGIN = 2.0
RANDOM_SWITCH_COST = 2.0
# ... and where the learned reader's evidence (`read_side`'s `learned`) explains it so, with this cost per change
# (chosen on dev seeds 54001, 50101, 96001, 57002 and 59801, both lean readings, the session 59 net: stacks of
# chips drawn each alone read right 85 -> 91 of 161 against 2.0, one-denomination stacks and sure readings as before)
LEARNED_RANDOM_SWITCH_COST = 1.0
_RUN_CHANGE = 0.05  # probability of a change from one chip to the next in a stack of runs, for the chains' scores


@dataclass(frozen=True, slots=True)
class SideReading:
    """Denominations (indices into the chip set) of the chips under the top, bottom first, and each one's posterior."""

    chips: tuple[int, ...]
    posterior: tuple[float, ...]


def emission_log(chipset: ChipSet, *, px_per_chip: float,
                 spots: Sequence[Sequence[int]] | None = None) -> FloatArray:
    """(D, D) log p(a side sample is labelled j | its chip is denomination d) for `chips_colour.classify_side`'s
    labels: a chip's own colour on a share of its samples that grows with the side's pixels per chip, its edge
    spots' colour (`spot_aliases`, per denomination: `spots` when the caller has them) on SPOT_LABEL of them, the
    lightest body (greys, seams, highlights and spots all fall to it) on the rest, any other colour on STRAY each."""
    values = [d.value for d in chipset.denominations]
    n = len(values)
    if spots is None:
        spots = [spot_aliases(chipset, value) for value in values]
    light = int(np.argmax([float(np.dot(nominal_bgr(d)[0], _LUMA)) for d in chipset.denominations]))
    own = float(np.interp(px_per_chip, [p for p, _ in OWN_SHARE], [o for _, o in OWN_SHARE]))
    table = np.full((n, n), STRAY)
    for d in range(n):
        aliases = [i for i in spots[d] if i != d]
        for i in aliases:
            table[d, i] += SPOT_LABEL
        table[d, d] = own if d != light else max(own, 1.0 - SPOT_LABEL * len(aliases) - STRAY * n)
        if d != light:
            table[d, light] += max(0.0, 1.0 - table[d].sum())
    table /= table.sum(axis=1, keepdims=True)
    result: FloatArray = np.log(table)
    return result


def spot_aliases(chipset: ChipSet, top_value: int) -> list[int]:
    """Indices of the denominations whose body has the colour of the top chip's edge spots: on the side of a stack
    of such chips, samples of that colour may be their spots (a white chip's body or a red chip's white spots)."""
    top = chipset.by_value(top_value)
    spot = _lab(top.edge_rgb)
    return [i for i, d in enumerate(chipset.denominations)
            if d.value != top_value and float(np.linalg.norm(_lab(d.rgb) - spot)) < _SPOT_ALIAS_LAB]


def swapped_colours(chipset: ChipSet, value: int) -> list[int]:
    """Indices of the denominations whose body and spot colours are those of `value`'s swapped (a white chip with
    blue spots and a blue chip with white spots): from a stack's side the two show the same colours."""
    own = chipset.by_value(value)
    body, spot = _lab(own.rgb), _lab(own.edge_rgb)
    return [i for i, d in enumerate(chipset.denominations)
            if d.value != value and float(np.linalg.norm(_lab(d.rgb) - spot)) < _SPOT_ALIAS_LAB
            and float(np.linalg.norm(_lab(d.edge_rgb) - body)) < _SPOT_ALIAS_LAB]


def _lab(rgb: tuple[int, int, int]) -> FloatArray:
    pixel = np.array([[[rgb[2], rgb[1], rgb[0]]]], dtype=np.uint8)
    result: FloatArray = cv2.cvtColor(pixel, cv2.COLOR_BGR2LAB)[0, 0].astype(np.float64)
    return result


@lru_cache(maxsize=32)
def rim_pattern(spots: int) -> FloatArray:
    """(phases, PATTERN_ANGLES_DEG) the share of body colour (1) against spots (0) at each angle round a chip's rim
    with `spots` edge spots, for each of _PHASES turns of the pattern over one spot period, blurred as pixels blur
    it. Read-only (cached)."""
    angles = np.radians(np.asarray(PATTERN_ANGLES_DEG))
    if spots == 0:
        plain = np.ones((1, len(angles)))
        plain.flags.writeable = False
        return plain
    period = 2.0 * np.pi / spots
    taps = np.arange(-3, 4, dtype=np.float64)
    kernel = np.exp(-0.5 * (taps / _PATTERN_BLUR) ** 2)
    kernel /= kernel.sum()
    rows = []
    for phase in np.arange(_PHASES) * period / _PHASES:
        offset = np.abs((angles + phase + period / 2.0) % period - period / 2.0)  # angle to the nearest spot centre
        body = (offset > np.pi * SPOT_FILL / spots).astype(np.float64)
        rows.append(np.convolve(np.pad(body, 3, mode="edge"), kernel, mode="valid"))
    result = np.array(rows)
    result.flags.writeable = False
    return result


def pattern_log_evidence(colours: FloatArray, valid: np.ndarray, chipset: ChipSet, *,
                         illuminant: FloatArray) -> FloatArray:
    """(chips, D) log-evidence of each denomination for each lower chip from its rim's colours (chips, angles, 3:
    PATTERN_ANGLES_DEG at its mid-height) and which lie in the image (chips, angles): the denomination's body and
    spot colours under the top's light, its spots laid out as they lie (their count and share of the rim, the best
    turn), each sample's brightness free within _PATTERN_BRIGHTNESS and its misfit capped. A white chip with blue
    spots and a blue chip with white spots show the same two colours, but not their spots' count or share of the
    rim; a lone colour label cannot tell them (see `emission_log`)."""
    observed = np.asarray(colours, dtype=np.float64)
    seen = np.asarray(valid, dtype=bool)
    low, high = _PATTERN_BRIGHTNESS
    result = np.zeros((observed.shape[0], len(chipset.denominations)))
    for d, denomination in enumerate(chipset.denominations):
        body, spot = (c * SIDE_SHADE * np.asarray(illuminant, dtype=np.float64) for c in nominal_bgr(denomination))
        share = rim_pattern(denomination.edge_spots if np.any(body != spot) else 0)  # (P, A)
        model = share[..., None] * body + (1.0 - share[..., None]) * spot  # (P, A, 3)
        scale = np.einsum("caz,paz->cpa", observed, model) / ((model**2).sum(axis=-1)[None] + 1e-9)
        scale = np.clip(scale, low, high)
        misfit = np.linalg.norm(observed[:, None] - scale[..., None] * model[None], axis=-1)  # (C, P, A)
        cost = np.where(seen[:, None, :], np.minimum((misfit / _PATTERN_SIGMA) ** 2, _PATTERN_CAP), 0.0)
        result[:, d] = -cost.sum(axis=-1).min(axis=1)
    return result


def pattern_posterior(pattern: FloatArray) -> FloatArray:
    """(chips, D) each chip's denomination from its rim alone (`pattern_log_evidence`, tempered by
    PATTERN_TEMPERATURE: neighbouring samples round the rim are not independent), no prior."""
    tempered = np.asarray(pattern, dtype=np.float64) / PATTERN_TEMPERATURE
    result: FloatArray = np.exp(tempered - _logsumexp(tempered, axis=1)[:, None])
    return result


def read_side(labels: np.ndarray, valid: np.ndarray, emission: FloatArray, *, top: int,
              previous: Sequence[int] | None = None, hold: float = 1.0,
              pattern: FloatArray | None = None, learned: FloatArray | None = None) -> SideReading:
    """The lower chips' denominations from their side samples' labels (chips, lines: denomination indices), which
    samples lie in the image (chips, lines) and `emission_log`'s table. `top` is the top chip's denomination index;
    `previous` (indices of a reading of the same stack with as many chips, -1 for none) adds `hold` to each chip's
    last value's log-evidence (a stack at rest keeps its reading). `pattern` (`pattern_log_evidence`, chips x D)
    adds the rims' evidence, and lets a stack whose chips look drawn each alone be read chip by chip. `learned`
    (`chips_side_net.ChipSideNet.log_evidence`, chips x D) is the chips' evidence instead of the labels' and the
    rims': a stack whose chips it finds drawn each alone is read with LEARNED_RANDOM_SWITCH_COST."""
    if learned is not None:
        evidence = np.array(learned, dtype=np.float64)
    else:
        per_sample = emission.T[labels]  # (chips, lines, D): log p(label | each denomination)
        evidence = np.where(np.asarray(valid, dtype=bool)[..., None], per_sample, 0.0).sum(axis=1)  # (C, D)
    chips, denominations = evidence.shape
    if chips == 0:
        return SideReading((), ())
    switch = SWITCH_COST
    if learned is not None:
        if _drawn_each_alone(evidence, top=top):
            switch = LEARNED_RANDOM_SWITCH_COST
    elif pattern is not None:
        if _drawn_each_alone(evidence + pattern / _SELECT_TEMPERATURE, top=top):
            evidence, switch = pattern.copy(), RANDOM_SWITCH_COST
        else:
            evidence = evidence + PATTERN_SHARE * pattern
    if previous is not None:
        for k, last in enumerate(previous):
            if 0 <= last < denominations:
                evidence[k, last] += hold
    change = np.full((denominations, denominations), -switch)
    np.fill_diagonal(change, 0.0)
    path = _viterbi(evidence, change, top=top)
    marginals = _marginals(evidence / TEMPERATURE, change / TEMPERATURE, top=top)
    return SideReading(tuple(int(i) for i in path),
                       tuple(float(marginals[k, i]) for k, i in enumerate(path)))


def _drawn_each_alone(evidence: FloatArray, *, top: int) -> bool:
    """Whether a side's evidence (chips, D) is better explained, by RANDOM_MARGIN, by chips each drawn alone than by
    runs of one denomination."""
    denominations = evidence.shape[1]
    return bool(_chain_log_likelihood(evidence, _random_chain(denominations), top=top)
                - _chain_log_likelihood(evidence, _runs_chain(denominations), top=top) > RANDOM_MARGIN)


def _runs_chain(denominations: int) -> FloatArray:
    """(D, D) log p(next chip's denomination | this one's) in a stack of runs."""
    table = np.full((denominations, denominations), np.log(_RUN_CHANGE / (denominations - 1)))
    np.fill_diagonal(table, np.log(1.0 - _RUN_CHANGE))
    return table


def _random_chain(denominations: int) -> FloatArray:
    """(D, D) log p(next chip's denomination | this one's) in a stack of chips each drawn alone."""
    return np.full((denominations, denominations), -np.log(denominations))


def _chain_log_likelihood(evidence: FloatArray, chain: FloatArray, *, top: int) -> float:
    """log p(the side's evidence, the top's denomination) under a chain of denominations (`_runs_chain`, ...)."""
    forward = _forward(evidence, chain)[-1] - np.log(len(chain))  # the first chip's denomination equally likely
    return float(_logsumexp((forward + chain[:, top])[None, :], axis=1)[0])


def _viterbi(evidence: FloatArray, change: FloatArray, *, top: int) -> list[int]:
    """The most likely denominations (chips, bottom first) given each chip's log-evidence (chips, D), the log-cost
    of each change (D, D: from, to) and the top chip's denomination."""
    chips, _ = evidence.shape
    score = evidence[0].copy()
    back = np.zeros(evidence.shape, dtype=np.int64)
    for k in range(1, chips):
        options = score[:, None] + change  # (from, to)
        back[k] = np.argmax(options, axis=0)
        score = options[back[k], np.arange(len(score))] + evidence[k]
    state = int(np.argmax(score + change[:, top]))
    path = [state]
    for k in range(chips - 1, 0, -1):
        state = int(back[k, state])
        path.append(state)
    return path[::-1]


def _marginals(evidence: FloatArray, change: FloatArray, *, top: int) -> FloatArray:
    """(chips, D) posterior of each chip's denomination: the chain bottom to top, closed by the known top."""
    chips, d = evidence.shape
    forward = _forward(evidence, change)
    backward = np.zeros((chips, d))
    backward[-1] = change[:, top]
    for k in range(chips - 2, -1, -1):
        backward[k] = _logsumexp(change + (evidence[k + 1] + backward[k + 1])[None, :], axis=1)
    joint = forward + backward
    joint -= _logsumexp(joint, axis=1)[:, None]
    result: FloatArray = np.exp(joint)
    return result


def _forward(evidence: FloatArray, change: FloatArray) -> FloatArray:
    """(chips, D) the forward pass bottom to top: log of the evidence so far and each chip's denomination, given the
    log-cost (or log-probability) of each change (D, D: from, to), the first chip's denomination free."""
    forward = np.zeros(evidence.shape)
    forward[0] = evidence[0]
    for k in range(1, len(evidence)):
        forward[k] = evidence[k] + _logsumexp(forward[k - 1][:, None] + change, axis=0)
    return forward


def _logsumexp(values: FloatArray, *, axis: int) -> FloatArray:
    peak = values.max(axis=axis, keepdims=True)
    result: FloatArray = (peak + np.log(np.exp(values - peak).sum(axis=axis, keepdims=True))).squeeze(axis)
    return result
