"""A chip stack's silhouette fitted to the image's felt-to-chip edges, for a count finer than its box gives.

A stack's count shows as the offset between its top disc and its base in the image, ~0.5-1.5 px per chip from
overhead cameras, while a detector's box sides are off by ~2 px each. The silhouette (the convex hull of the
base's and the top's ellipses, their shapes known from the camera model) is fitted to edges found along rays
from the stack's centre near the box's fit, each at sub-pixel precision (`refine_silhouette`): the outermost
strong colour change, its position from the area of the transition, kept only where felt lies outside it (not a
neighbour, a hand or the stack's cast shadow). The top's arc and the base's arc each rest on dozens of edge
points (measured on detector boxes, seed 94101: the top's centre off by ~0.55 px sd, the base's by ~1 px, the
box's by ~2 px). The offset between them and its own covariance (the fit's, inflated for edges' correlated
errors) then give each count's likelihood, with the stack's lean, and the count's posterior
(`count_from_silhouette`), as `fit_stack` does from a box. On a dark felt a stack's shaded side may vanish into
it, the base's arc then found at the top's rim: a measured offset may be short of the true one, so short offsets
there are not sure counts.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

import cv2
import numpy as np
import numpy.typing as npt

from floorman.core.geometry import FloatArray
from floorman.vision.chips_geometry import StackFit, TableCamera, count_choice, marginalise

_RAYS = 72
_WINDOWS_PX = (7.0, 3.5)  # edges are looked for this far either side of the box fit's outline, then of the first fit's
_STEP_PX = 0.5
_NORMALS = 120  # half-planes approximating the silhouette (its support function)
_MIN_GRADIENT = 10.0  # 8-bit levels per pixel: weaker transitions are not a chip's edge
_PEAK_SHARE = 0.5  # the edge is the outermost change at least this share of the ray's strongest
_AREA_HALF_PX = 1.5  # the sub-pixel edge integrates the transition over this far either side of the peak
_FELT_TOLERANCE = 0.12  # a colour this close to the felt's (relative) is felt
_NOISE = 10.0  # 8-bit levels of noise allowed on top of that
_SHADOW_RATIOS = (0.3, 1.0 - _FELT_TOLERANCE)  # darkened felt: a shadow
_MIN_RAYS = 0.4  # share of rays that must find an edge
_DARK_FELT = 60.0  # 8-bit mean level: a felt this dark may hide a stack's shaded side ...
_HIDDEN_SIDE = (0.01, 0.15)  # ... so often on a lighter and a dark felt: the base then seems to lie under the top
_ITERATIONS = 6
_HUBER = 1.5  # robust weights beyond this many sigmas
_MIN_SIGMA_PX = 0.35  # an edge point's error is at least this (pixel rounding, the chip's polygonal outline)
_CORRELATION = 4.0  # edge errors along the outline are correlated: the fit's covariance is inflated this much
_LEAN_MM = 0.8  # a stack's top sits about this far off its base (sd per axis), reached over the first five chips
_FLOOR_PX = 0.25  # model error of the offset (the ellipses' affine approximation, the edges' bias)
_TAIL_SHARE = 0.1  # fits this often off by more than their covariance says (a missed or a false edge) ...
_TAIL_SCALE = 3.0  # ... by about this many times more
_PRIOR_PX = 3.0  # the box's fit places the centres this well (sd): what holds them where edges are missing
_PARAMS = 5  # base centre, top centre, the outline's growth


@dataclass(frozen=True, slots=True)
class Silhouette:
    """A stack's base and top ellipse centres in the image, fitted to its edges."""

    base_px: FloatArray  # (2,)
    top_px: FloatArray  # (2,)
    offset_cov: FloatArray  # (2, 2) covariance of top_px - base_px, px^2
    edges: int  # edge points used
    sigma_px: float  # an edge point's error (robust spread of the residuals)
    felt_level: float = 255.0  # the felt's mean 8-bit level round the stack (a dark felt may hide its side)


@dataclass(frozen=True, slots=True)
class _Outline:
    """Shapes of the base's and the top's ellipses (2x2, pixels <- unit circle) and the rays' origin."""

    base_shape: FloatArray
    top_shape: FloatArray
    origin: FloatArray  # (2,)
    rays: FloatArray  # (K, 2) unit directions
    normals: FloatArray  # (M, 2) unit directions
    # what `radii` reads for every params, found once: each ellipse's reach along each normal, the origin's
    # support, and each ray's cosine to each normal where it faces it (`_faces`; 1 where not)
    _reach_b: FloatArray = field(init=False)
    _reach_t: FloatArray = field(init=False)
    _origin_support: FloatArray = field(init=False)
    _faces: npt.NDArray[np.bool_] = field(init=False)
    _facing: FloatArray = field(init=False)

    def __post_init__(self) -> None:
        facing = self.rays @ self.normals.T
        object.__setattr__(self, "_reach_b", np.linalg.norm(self.normals @ self.base_shape, axis=1))
        object.__setattr__(self, "_reach_t", np.linalg.norm(self.normals @ self.top_shape, axis=1))
        object.__setattr__(self, "_origin_support", self.normals @ self.origin)
        object.__setattr__(self, "_faces", facing > 0.05)
        object.__setattr__(self, "_facing", np.where(self._faces, facing, 1.0))

    def radii(self, params: FloatArray) -> FloatArray:
        """(K,) distance from the origin along each ray to the hull of the two ellipses (params: base centre, top
        centre, a growth of both outward: blur, anti-aliasing, the edge's threshold)."""
        base, top = params[:2], params[2:4]
        support = (np.maximum(self.normals @ base + self._reach_b, self.normals @ top + self._reach_t) + params[4]
                   - self._origin_support)
        hits = np.where(self._faces, support[None, :] / self._facing, np.inf)
        result: FloatArray = hits.min(axis=1)
        return result


def _jacobian(h: FloatArray, point: FloatArray) -> FloatArray:
    """2x2 derivative of the homography `h` at `point` (mm)."""
    p = np.array([point[0], point[1], 1.0])
    w = float(h[2] @ p)
    uv = (h[:2] @ p) / w
    result: FloatArray = (h[:2, :2] - uv[:, None] * h[2, :2][None, :]) / w
    return result


def _edges(image: npt.NDArray[np.uint8], outline: _Outline, expected: FloatArray, *,
           window: float) -> tuple[FloatArray, FloatArray]:
    """(K,) sub-pixel distance of the felt-to-chip edge along each ray within `window` of `expected` (NaN where
    none), and the felt's colour round the stack."""
    offsets = np.arange(-window, window + 1e-9, _STEP_PX)
    dist = expected[:, None] + offsets[None, :]  # (K, S)
    points = outline.origin[None, None, :] + dist[..., None] * outline.rays[:, None, :]
    grid = points.astype(np.float32)
    sampled = cv2.remap(image, grid[..., 0], grid[..., 1], cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
    profile = np.asarray(sampled, dtype=np.float64).reshape(len(expected), len(offsets), -1)
    span = 2  # samples (one pixel) either side: the colour's change over two pixels, at the middle sample
    gradient = np.linalg.norm(profile[:, 2 * span:] - profile[:, :-2 * span], axis=2) / (2 * span * _STEP_PX)
    inner = np.zeros_like(gradient, dtype=bool)
    inner[:, 1:-1] = (gradient[:, 1:-1] >= gradient[:, :-2]) & (gradient[:, 1:-1] >= gradient[:, 2:])
    strong = inner & (gradient >= np.maximum(_MIN_GRADIENT, _PEAK_SHARE * gradient.max(axis=1, keepdims=True)))
    half = round(_AREA_HALF_PX / _STEP_PX)
    felt = np.median(profile[:, -1], axis=0)
    result = np.full(len(expected), np.nan)
    rows = np.flatnonzero(strong.any(axis=1))
    # each ray's outermost strong change, as an index into the profile, with room for the area either side
    peaks = strong.shape[1] - 1 - np.argmax(strong[rows, ::-1], axis=1) + span
    room = (peaks - half - 1 >= 0) & (peaks + half + 1 < len(offsets))
    rows, peaks = rows[room], peaks[room]
    inside, outside = profile[rows, peaks - half - 1], profile[rows, peaks + half + 1]
    contrast = inside - outside
    norm = np.einsum("kc,kc->k", contrast, contrast)
    kept = felt_mask(outside, felt) & ~shadow_mask(inside, felt) & (norm >= (2.0 * _MIN_GRADIENT) ** 2)
    rows, peaks, outside, contrast, norm = rows[kept], peaks[kept], outside[kept], contrast[kept], norm[kept]
    area = profile[rows[:, None], peaks[:, None] + np.arange(-half, half + 1)[None, :]]  # (R, 2 half + 1, 3)
    share = np.clip(np.einsum("kwc,kc->kw", area - outside[:, None, :], contrast) / norm[:, None], 0.0, 1.0)
    start = dist[rows, peaks - half] - _STEP_PX / 2.0
    result[rows] = start + share.sum(axis=1) * _STEP_PX
    return result, felt


def felt_mask(colours: FloatArray, felt: FloatArray) -> npt.NDArray[np.bool_]:
    """(...,) whether each of `colours` (..., 3) is the `felt`'s colour, give or take the camera's noise."""
    result: npt.NDArray[np.bool_] = (np.linalg.norm(colours - felt, axis=-1)
                                     <= _FELT_TOLERANCE * float(np.linalg.norm(felt)) + _NOISE)
    return result


def shadow_mask(colours: FloatArray, felt: FloatArray) -> npt.NDArray[np.bool_]:
    """(...,) whether each of `colours` (..., 3) is the `felt`'s colour darkened (a cast shadow)."""
    ratio = (colours @ felt) / max(float(felt @ felt), 1e-9)
    along = np.linalg.norm(colours - ratio[..., None] * felt, axis=-1)
    close = along <= _FELT_TOLERANCE * ratio * float(np.linalg.norm(felt)) + _NOISE
    result: npt.NDArray[np.bool_] = (_SHADOW_RATIOS[0] < ratio) & (ratio < _SHADOW_RATIOS[1]) & close
    return result


def refine_silhouette(image: npt.NDArray[np.uint8], camera: TableCamera, fit: StackFit, *, radius_mm: float,
                      thickness_mm: float) -> Silhouette | None:
    """The stack's base and top centres in the image fitted to its edges near `fit`'s outline (None when too few
    edges are found: a chip the felt's colour, a stack cut by the image's border or hidden by its neighbours)."""
    base_mm = np.array(fit.base_mm, dtype=np.float64)
    top_z = fit.count * thickness_mm
    base = camera.project(np.array([[*base_mm, 0.0]]))[0]
    top = camera.project(np.array([[*base_mm, top_z]]))[0]
    angles = np.arange(_RAYS) * 2.0 * math.pi / _RAYS
    normals = np.arange(_NORMALS) * 2.0 * math.pi / _NORMALS
    outline = _Outline(base_shape=_jacobian(camera.plane_to_image(0.0), base_mm) * radius_mm,
                       top_shape=_jacobian(camera.plane_to_image(top_z), base_mm) * radius_mm,
                       origin=(base + top) / 2.0, rays=np.stack([np.cos(angles), np.sin(angles)], axis=1),
                       normals=np.stack([np.cos(normals), np.sin(normals)], axis=1))
    params = np.concatenate([base, top, [0.0]])
    prior = params.copy()
    width, height = camera.image_size
    ends = outline.origin[None] + (outline.radii(params) + _WINDOWS_PX[0] + 2.0)[:, None] * outline.rays
    if ends.min() < 0.0 or ends[:, 0].max() > width - 1 or ends[:, 1].max() > height - 1:
        return None
    silhouette = None
    for window in _WINDOWS_PX:
        observed, felt = _edges(image, outline, outline.radii(params), window=window)
        valid = np.isfinite(observed)
        if valid.sum() < _MIN_RAYS * _RAYS:
            return None
        silhouette, params = _fit(outline, params, prior=prior, observed=observed[valid], valid=valid)
        silhouette = replace(silhouette, felt_level=float(felt.mean()))
    return silhouette


def _fit(outline: _Outline, params: FloatArray, *, prior: FloatArray, observed: FloatArray,
         valid: npt.NDArray[np.bool_]) -> tuple[Silhouette, FloatArray]:
    """Iteratively reweighted Gauss-Newton of the two centres and the growth on the rays' edge distances, held
    near `prior` (the box's fit) where the edges leave them free."""
    step = 0.05
    sigma = 1.0
    weights = np.ones(len(observed))
    jac = np.zeros((len(observed), _PARAMS))
    for _ in range(_ITERATIONS):
        residual = outline.radii(params)[valid] - observed
        for j in range(_PARAMS):
            moved = params.copy()
            moved[j] += step
            jac[:, j] = (outline.radii(moved)[valid] - observed - residual) / step
        sigma = max(_MIN_SIGMA_PX, 1.4826 * float(np.median(np.abs(residual - np.median(residual)))))
        scaled = np.abs(residual) / sigma
        weights = np.where(scaled <= _HUBER, 1.0, _HUBER / np.maximum(scaled, 1e-9))
        held = np.eye(_PARAMS) * (sigma / _PRIOR_PX) ** 2
        jtj = (jac * weights[:, None]).T @ jac + held
        params = params - np.linalg.solve(jtj, (jac * weights[:, None]).T @ residual + held @ (params - prior))
    cov = np.linalg.inv((jac * weights[:, None]).T @ jac + held) * sigma**2 * _CORRELATION
    pick = np.array([[-1.0, 0.0, 1.0, 0.0, 0.0], [0.0, -1.0, 0.0, 1.0, 0.0]])
    return Silhouette(base_px=params[:2].copy(), top_px=params[2:4].copy(), offset_cov=pick @ cov @ pick.T,
                      edges=len(observed), sigma_px=sigma), params


def count_from_silhouette(camera: TableCamera, silhouette: Silhouette, *, thickness_mm: float, max_count: int,
                          alternatives: Sequence[TableCamera] = (), box: Sequence[float] = (),
                          log_prior: Sequence[float] = ()) -> StackFit:
    """Each count's likelihood of the silhouette's top-to-base offset (the fit's covariance plus the stack's lean),
    averaged over `alternatives` (equally likely cameras) and `camera`, times the `box`'s (`StackFit.log_likelihood`
    of the same counts, when given); the count's posterior under `log_prior` as in `fit_stack`."""
    marginal = marginalise(silhouette_log_likelihood(camera, silhouette, thickness_mm=thickness_mm,
                                                     max_count=max_count, alternatives=alternatives))
    if len(box):
        if len(box) != max_count:
            raise ValueError(f"expected the box's log-likelihood of {max_count} counts, got {len(box)}")
        marginal = marginal + np.asarray(box, dtype=np.float64)
    return silhouette_fit(camera, silhouette, marginal, thickness_mm=thickness_mm, log_prior=log_prior)


def silhouette_log_likelihood(camera: TableCamera, silhouette: Silhouette, *, thickness_mm: float, max_count: int,
                              alternatives: Sequence[TableCamera] = ()) -> FloatArray:
    """(M, N) log-likelihood of the silhouette's top-to-base offset for `camera`, then each of `alternatives`, and
    each count 1..max_count (the fit's covariance plus the stack's lean; a side the felt may hide)."""
    counts = np.arange(1, max_count + 1)
    offset = silhouette.top_px - silhouette.base_px
    base_mm = camera.to_plane(silhouette.base_px[None, :], z=0.0)[0]
    lean = _LEAN_MM * np.clip((counts - 1) / 4.0, 0.0, 1.0)
    hidden = _HIDDEN_SIDE[1] if silhouette.felt_level < _DARK_FELT else _HIDDEN_SIDE[0]
    logs = []
    for model in (camera, *alternatives):
        uv = model.project(_axis_points(base_mm, thickness_mm=thickness_mm, max_count=max_count))
        predicted = uv[1:] - uv[0]  # (N, 2)
        shape = _jacobian(model.plane_to_image(float(counts.mean()) * thickness_mm), base_mm)
        cov = (silhouette.offset_cov[None] + (lean**2)[:, None, None] * (shape @ shape.T)[None]
               + np.eye(2)[None] * _FLOOR_PX**2)
        logs.append(_offset_log_likelihood(offset, predicted, cov, hidden=hidden))
    result: FloatArray = np.stack(logs)
    return result


def silhouette_fit(camera: TableCamera, silhouette: Silhouette, log_likelihood: FloatArray, *, thickness_mm: float,
                   log_prior: Sequence[float] = (), previous: int | None = None) -> StackFit:
    """The stack read from its silhouette: the count from `log_likelihood` (N,) under `log_prior` (a `previous`
    count held as `count_choice` holds it), the base where the silhouette's base lies (on `camera`'s felt), the top
    where its top was seen."""
    max_count = len(log_likelihood)
    base_mm = camera.to_plane(silhouette.base_px[None, :], z=0.0)[0]
    uv = camera.project(_axis_points(base_mm, thickness_mm=thickness_mm, max_count=max_count))
    predicted = uv[1:] - uv[0]
    steps = np.linalg.norm(np.gradient(predicted, axis=0), axis=1) if max_count > 1 else np.zeros(1)
    best, confidence = count_choice(np.asarray(log_likelihood, dtype=np.float64), log_prior,
                                    previous=None if previous is None else previous - 1)
    residual = float(np.linalg.norm(silhouette.top_px - silhouette.base_px - predicted[best]))
    return StackFit(base_mm=(float(base_mm[0]), float(base_mm[1])), count=best + 1,
                    count_confidence=confidence, px_per_chip=float(steps[best]),
                    residual_px=residual, log_likelihood=tuple(float(v) for v in log_likelihood),
                    top_px=(float(silhouette.top_px[0]), float(silhouette.top_px[1])))


def _axis_points(base_mm: FloatArray, *, thickness_mm: float, max_count: int) -> FloatArray:
    """(max_count + 1, 3) points up a stack's axis from its base, one per chip height (0 first)."""
    points = np.zeros((max_count + 1, 3))
    points[:, :2] = base_mm
    points[:, 2] = np.arange(max_count + 1) * thickness_mm
    return points


def _offset_log_likelihood(offset: FloatArray, predicted: FloatArray, cov: FloatArray, *,
                           hidden: float) -> FloatArray:
    """(N,) log-likelihood of the measured top-to-base `offset` (2,) for each count's `predicted` offset (N, 2) and
    covariance (N, 2, 2): seen as predicted (with a wider tail), or, with probability `hidden`, shortened anywhere
    down to nothing by a side the felt hides (the base's arc then found at the top's rim)."""
    diff = offset[None, :] - predicted
    solved = np.linalg.solve(cov, diff[..., None])[..., 0]
    mahalanobis = (diff * solved).sum(axis=1)
    log_det = np.log(np.linalg.det(cov))
    wide = _TAIL_SCALE**2
    seen = np.logaddexp(math.log(1.0 - _TAIL_SHARE) - 0.5 * mahalanobis - 0.5 * log_det,
                        math.log(_TAIL_SHARE) - 0.5 * mahalanobis / wide - 0.5 * log_det - math.log(wide))
    length = np.linalg.norm(predicted, axis=1)
    along_dir = predicted / np.maximum(length, 1e-9)[:, None]
    across_dir = np.stack([-along_dir[:, 1], along_dir[:, 0]], axis=1)
    sd_along = np.sqrt(np.einsum("ni,nij,nj->n", along_dir, cov, along_dir))
    sd_across = np.sqrt(np.einsum("ni,nij,nj->n", across_dir, cov, across_dir))
    along, across = along_dir @ offset, across_dir @ offset
    # uniform over [0, length] along the offset, blurred by the fit's error; Gaussian across it
    erf = np.vectorize(math.erf)
    spread = (erf((length - along) / (math.sqrt(2.0) * sd_along)) - erf(-along / (math.sqrt(2.0) * sd_along))) / 2.0
    density = np.maximum(spread, 1e-12) / np.maximum(length, sd_along)
    shortened = (np.log(density) - 0.5 * (across / sd_across) ** 2 - np.log(math.sqrt(2.0 * math.pi) * sd_across))
    result: FloatArray = math.log(1.0 - hidden) + seen - math.log(2.0 * math.pi)
    if hidden > 0.0:
        result = np.logaddexp(result, math.log(hidden) + shortened)
    return result
