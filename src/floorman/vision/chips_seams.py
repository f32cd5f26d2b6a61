"""A stack's count from the seams of its side: evidence to add to its silhouette's.

Where a stack's side shows 2 pixels or more per chip, the dark seams between its chips cross lines drawn up the
side facing the camera: a stack of n chips shows n - 1 seams, evenly spaced between the base's rim and the top's.
Each line rises as its own rim point does (`side_lines`): under perspective the front of a side is shorter in the
image than the centres' offset. The lines' brightness profiles, averaged, are fitted for each count with a comb of
n - 1 dark dips (`_SEAM_SIGMA_PX` wide), moved along the side and stretched a little off the silhouette's measured
base and top (`_MOVE_SIGMA_PX`, `_STRETCH_SIGMA_PX`, marginalised): the share of the profile's variance the comb
explains is that count's evidence. Seams closer than `_MIN_PERIOD_PX` explain nothing. The seams
count the chips whatever the stack's lean, which is what limits the count from the offset alone (`chips_refine`):
a count one chip off puts its middle seams half a chip off the real ones. The evidence is added to the silhouette's
log-likelihood (`chips.ChipRecogniser`).

Session 40 replaced the power at whole numbers of cycles between the centres (session 5): those lines were as long as
the centres' offset, a few per cent too long at the front, and the spectrum's resolution left n and n + 1 within a
log unit of each other. Dev seeds 40101 (3840x2160) + 40102 (mixed), truth boxes, camera height given, the 157
stacks whose seams were read: count exact 143 (spectrum) -> 147 (spectrum on `side_lines`) -> 155 (the comb).
`benchmarks/chips.py --frames 30 --seed 40202 --size 3840x2160` (dev), detector boxes, camera height given: count
exact 75.5 -> 78.9 %, counts given >= 0.8 128 -> 161 of 298 stacks (98.4 -> 98.1 % exact), 18.9 -> 19.7 ms a stack.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import cv2
import numpy as np
import numpy.typing as npt

from floorman.core.geometry import FloatArray
from floorman.vision.chips_geometry import TableCamera, side_points

# Thinner sides hold no countable seams. The spectrum (until session 40) gave sure counts one chip off from 2-2.5 px
# per chip, so it began at 2.5; the comb reads them from 2.0 (session 40, camera height given, 2.5 -> 2.0: dev
# seed 40202 (3840x2160) detector boxes count exact 78.9 -> 79.5 %, counts >= 0.8 99.3 -> 99.4 % exact; dev seed
# 40201 (mixed sizes, with the comb's first version, its two ends each free within 2.5 px) 65.6 -> 66.3 %, 97.3 ->
# 97.3 %).
MIN_PX_PER_CHIP = 2.0
WEIGHT = 1.0  # log-evidence per unit of the profile's variance the comb explains (over 2 x its noise variance)
_LINES_DEG = (-50.0, -35.0, -20.0, -10.0, 0.0, 10.0, 20.0, 35.0, 50.0)  # about the side facing the camera
_SAMPLES_PER_PX = 4
_DETREND_PX = 4.0  # the moving average removed from each profile: shading, not seams
_EXTEND_PX = 4.0  # the profile runs on this far past the base and the top (the comb's ends may move)
_MARGIN_PX = 1.0  # the fitted region stops this short of the base and the top (the felt's and the top's edges)
_MIN_BAND_PX = 3.0
_SEAM_SIGMA_PX = 0.7  # a seam's dip: a 1-px dark line, blurred
_MIN_PERIOD_PX = 1.5  # seams closer than this (a blur's width) are not told apart
_MIN_CONTRAST = 0.05  # a comb whose variance is under this share of its square is about flat
# The comb may lie off the silhouette's ends: moved along the side (the rim's points are placed by the camera model,
# whose scale may be a few per cent off: 1-2 px on a photo read straight down without a calibration) and stretched
# (the silhouette's offset, which is what tells a count from the next, is measured within about a pixel).
_MOVE_SIGMA_PX = 2.0
_MOVES_PX = np.arange(-3.0, 3.0001, 0.5)
_STRETCH_SIGMA_PX = 1.0
_STRETCHES_PX = np.arange(-2.5, 2.5001, 0.5)
_PROBE_MM = 10.0  # a first height at which the centre's rise per mm is measured
_HEIGHT_ITERATIONS = 3
_GREY = np.array([0.114, 0.587, 0.299])  # BGR weights of the luma


def seam_log_evidence(image: npt.NDArray[np.uint8], camera: TableCamera, *, base_px: FloatArray, top_px: FloatArray,
                      radius_mm: float, max_count: int) -> FloatArray | None:
    """(max_count,) log-evidence of counts 1..max_count from the side's seams, up to a constant (its maximum 0);
    None when the band between base and top is too short to hold seams."""
    profile = side_profile(image, camera, base_px=base_px, top_px=top_px, radius_mm=radius_mm)
    if profile is None:
        return None
    along, values, length = profile
    region = (along > _MARGIN_PX) & (along < length - _MARGIN_PX)
    centred = np.where(region, values - values[region].mean(), 0.0)
    variance = max(float(np.mean(centred[region] ** 2)), 1.0)
    step = 1.0 / _SAMPLES_PER_PX
    half = math.ceil(4.0 * _SEAM_SIGMA_PX / step)
    dip = -np.exp(-0.5 * (np.arange(-half, half + 1) * step / _SEAM_SIGMA_PX) ** 2)
    if len(centred) < len(dip):
        return None
    matched = np.correlate(centred, dip, mode="same")  # the profile's product with a dip centred at each sample
    moved, stretched = (a.ravel()[:, None] for a in np.meshgrid(_MOVES_PX, _STRETCHES_PX, indexing="ij"))
    ends_base, ends_top = moved - stretched / 2.0, moved + stretched / 2.0  # (S, 1) each
    log_prior = -0.5 * ((moved / _MOVE_SIGMA_PX) ** 2 + (stretched / _STRETCH_SIGMA_PX) ** 2)
    low, high = along[region][0] - step / 2.0, along[region][-1] + step / 2.0  # the region's samples' extent
    # counts whose seams would lie closer than _MIN_PERIOD_PX, however far the ends move, explain nothing
    resolved = min(max_count, int((length + float(_STRETCHES_PX[-1])) / _MIN_PERIOD_PX))
    combs = _combs(max(resolved, 2))
    period = (length + ends_top - ends_base) / combs.counts[None, :]  # (S, C): counts 2..max_count
    seams = ends_base + combs.rank[None, :] * period[:, combs.comb]  # (S, J): every comb's seams, side by side
    product = np.interp(seams, along, matched) @ combs.member  # (S, C)
    norm, squares = _comb_norm(seams, combs, low, high, samples=int(region.sum()))
    explained = product**2 / np.maximum(norm, 1e-12)
    # seams are dark; closer ones do not show; a comb about as flat as the region (its dips merged) tells nothing
    explained[(product <= 0) | (period < _MIN_PERIOD_PX) | (norm < _MIN_CONTRAST * squares)] = 0.0
    log_likelihood = WEIGHT * explained / (2.0 * variance * _SAMPLES_PER_PX)
    unexplained = float(np.logaddexp.reduce(log_prior[:, 0]))  # one chip (no seam), or seams too close to show
    evidence = np.full(max_count, unexplained)
    seen = np.logaddexp.reduce(log_likelihood + log_prior, axis=0)
    evidence[1:1 + len(seen)] = seen[:max_count - 1]
    result: FloatArray = evidence - evidence.max()
    return result


@dataclass(frozen=True, slots=True)
class _Combs:
    """The seams of every count's comb laid side by side (J of them): each one's comb (index into `counts`) and rank
    (1..count-1); `member` (J, C) sums per comb; `pairs[g]`: (first, second, comb's one-hot) of seams g + 1 apart."""

    counts: FloatArray  # (C,) 2..max_count
    comb: npt.NDArray[np.int64]  # (J,)
    rank: FloatArray  # (J,)
    member: FloatArray  # (J, C)
    pairs: tuple[tuple[npt.NDArray[np.int64], npt.NDArray[np.int64], FloatArray], ...]


@lru_cache(maxsize=8)
def _combs(max_count: int) -> _Combs:
    counts = np.arange(2, max_count + 1)
    comb = np.concatenate([np.full(c - 1, i) for i, c in enumerate(counts)]).astype(np.int64)
    rank = np.concatenate([np.arange(1, c) for c in counts]).astype(np.float64)
    member = np.zeros((len(comb), len(counts)))
    member[np.arange(len(comb)), comb] = 1.0
    pairs = []
    for gap in (1, 2):
        first = np.flatnonzero(rank + gap <= counts[comb] - 1)
        pairs.append((first, first + gap, member[first]))
    return _Combs(counts.astype(np.float64), comb, rank, member, tuple(pairs))


def _comb_norm(seams: FloatArray, combs: _Combs, low: float, high: float, *,
               samples: int) -> tuple[FloatArray, FloatArray]:
    """(S, C) sums of squares of each comb of dips (`seams` (S, J) laid out as `combs`) on the profile's grid
    between `low` and `high`, about their mean over the region's `samples` and about zero (dips cut by the
    region's ends counted as cut; seams three apart or more do not overlap)."""
    sigma = _SEAM_SIGMA_PX
    root2 = math.sqrt(2.0)

    def within(centres: FloatArray, spread: float) -> FloatArray:
        return 0.5 * (_erf((high - centres) / (root2 * spread)) - _erf((low - centres) / (root2 * spread)))

    mass = (_SAMPLES_PER_PX * math.sqrt(2.0 * math.pi) * sigma * within(seams, sigma)) @ combs.member
    self_product = _SAMPLES_PER_PX * math.sqrt(math.pi) * sigma
    squares = (self_product * within(seams, sigma / root2)) @ combs.member
    for first, second, member in combs.pairs:
        a, b = seams[:, first], seams[:, second]
        overlap = np.exp(-((b - a) ** 2) / (4.0 * sigma**2)) * within((a + b) / 2.0, sigma / root2)
        squares += 2.0 * self_product * overlap @ member
    centred: FloatArray = squares - mass**2 / max(samples, 1)
    return centred, squares


def _erf(x: FloatArray) -> FloatArray:
    """The error function, interpolated in a table (within 1e-5; +-1 beyond +-4)."""
    result: FloatArray = np.interp(x, _ERF_X, _ERF_Y)
    return result


_ERF_X = np.linspace(-4.0, 4.0, 801)
_ERF_Y = np.array([math.erf(v) for v in _ERF_X])


def side_profile(image: npt.NDArray[np.uint8], camera: TableCamera, *, base_px: FloatArray, top_px: FloatArray,
                 radius_mm: float) -> tuple[FloatArray, FloatArray, float] | None:
    """The side's brightness up the lines of `side_lines` (their shading removed, averaged over the lines): px
    along the side from the base (each line's position scaled to the mean line), the profile there, and the mean
    line's length; None when the band between base and top is too short to hold seams."""
    starts, ends = side_lines(camera, base_px=base_px, top_px=top_px, radius_mm=radius_mm)
    length = float(np.linalg.norm(ends - starts, axis=1).mean())
    if length < _MIN_BAND_PX:
        return None
    along = np.arange(-_EXTEND_PX, length + _EXTEND_PX + 1e-9, 1.0 / _SAMPLES_PER_PX)
    fractions = along / length
    points = (starts[:, None, :] + fractions[None, :, None] * (ends - starts)[:, None, :]).astype(np.float32)
    sampled = cv2.remap(image, points[..., 0], points[..., 1], cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
    profiles = sampled.astype(np.float64) @ _GREY  # (L, T)
    window = int(_DETREND_PX * _SAMPLES_PER_PX) | 1
    kernel = np.ones(window) / window
    pad = window // 2
    shading = np.stack([np.convolve(np.pad(p, pad, mode="edge"), kernel, mode="valid") for p in profiles])
    values: FloatArray = (profiles - shading).mean(axis=0)
    return along, values, length


def side_lines(camera: TableCamera, *, base_px: FloatArray, top_px: FloatArray,
               radius_mm: float) -> tuple[FloatArray, FloatArray]:
    """(L, 2) starts and (L, 2) ends of the lines up the side facing the camera (`_LINES_DEG`), from the base's rim
    to the top's. Each line rises as its own rim point does: under perspective a rim point nearer the camera's foot
    rises less in the image than the stack's centre (on a 4K frame a 12-chip side 300 mm from the foot is ~6 %
    shorter at the front than the centres' offset; lines as long as that offset read it a chip taller). The top's
    height is the centre's rise that best gives the top's measured offset (a lean along it cannot be told apart);
    the rest of the offset is the stack's lean, added to every line."""
    base = np.asarray(base_px, dtype=np.float64)
    offset = np.asarray(top_px, dtype=np.float64) - base
    base_mm = camera.to_plane(base[None, :], z=0.0)[0]
    height = 0.0
    for _ in range(_HEIGHT_ITERATIONS):  # the rise per mm shrinks a little with height (perspective)
        probe = height + _PROBE_MM
        rise = camera.project(np.array([[base_mm[0], base_mm[1], probe]]))[0] - base
        height = max(0.0, float(offset @ rise) / max(float(rise @ rise), 1e-12) * probe)
    centre_top = camera.project(np.array([[base_mm[0], base_mm[1], height]]))[0]
    rims = side_points(camera, base_mm, radius_mm=radius_mm, angles_deg=_LINES_DEG, heights_mm=(0.0, height))
    starts, tops = camera.project(rims[0]), camera.project(rims[1])
    lean = np.asarray(top_px, dtype=np.float64) - centre_top
    ends: FloatArray = tops + lean[None, :]
    return starts, ends
