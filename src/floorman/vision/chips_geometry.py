"""Chip-stack geometry: a full pinhole camera from a calibration's homography, and a stack's base position
and chip count fitted to its box in the image.

A calibration (`floorman calibrate`) gives the homography of the felt plane only. A stack's height shows in the
image as the offset between its top disc and its base, which needs the projection of points above the felt:
`TableCamera.from_homography` decomposes the homography into intrinsics and pose, taking the principal point at
the image centre and square pixels. The focal length follows from the homography when the camera is tilted
(the felt plane's vanishing line); for a camera looking nearly straight down it cannot, and a camera height
(measured, or 1400 mm by default: `height_assumed`, and `at_heights` gives the cameras of other heights) fixes
it. A straight-down view sees a stack's side only away from the point under the camera, and the box rounds each
side to the pixel, so a count is a posterior over counts (`fit_stack`): confident only where the box tells the
counts apart (measured calibrated: counts given 0.8+ are right about 95 % of the time, those under 0.5 about
40 %).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from floorman.core.geometry import FloatArray

DEFAULT_CAMERA_HEIGHT_MM = 1400.0
CAMERA_HEIGHTS_MM = (1000.0, 1800.0)  # overhead cameras hang this high over the felt (reference/physical.md)
_MIN_HFOV_DEG, _MAX_HFOV_DEG = 15.0, 130.0
_CIRCLE = 32
Box = tuple[float, float, float, float]


@dataclass(frozen=True)
class TableCamera:
    """A pinhole camera over the table: `projection` (3x4) maps table mm (x, y, z up) to pixels."""

    projection: FloatArray
    image_size: tuple[int, int]
    focal_from_homography: bool  # False when the focal length came from a camera height (given or assumed)
    height_assumed: bool = False  # True when that height is DEFAULT_CAMERA_HEIGHT_MM, not a measured one

    def __post_init__(self) -> None:
        if np.asarray(self.projection).shape != (3, 4):
            raise ValueError(f"TableCamera: expected a 3x4 projection, got {np.asarray(self.projection).shape}")

    @classmethod
    def from_homography(cls, image_from_table: FloatArray, *, image_size: tuple[int, int],
                        focal_px: float | None = None, height_mm: float | None = None) -> TableCamera:
        """Decompose pixels <- table mm (z = 0) with the principal point at the image centre. `focal_px` when
        known; else estimated from the homography, or (near straight down) set so the camera is `height_mm`
        above the felt (DEFAULT_CAMERA_HEIGHT_MM when not given)."""
        h = np.asarray(image_from_table, dtype=np.float64)
        if h.shape != (3, 3):
            raise ValueError(f"expected a 3x3 homography, got shape {h.shape}")
        width, height = image_size
        from_homography = False
        if focal_px is None and height_mm is None:
            focal_px = _focal_from_homography(h, image_size=image_size)
            from_homography = focal_px is not None
        assumed = focal_px is None and height_mm is None
        if focal_px is None:
            focal_px = _focal_for_height(h, image_size=image_size, height_mm=height_mm or DEFAULT_CAMERA_HEIGHT_MM)
        if not (math.isfinite(focal_px) and focal_px > 0):
            raise ValueError(f"expected a positive focal length in pixels, got {focal_px}")
        return cls(_projection(h, focal_px, (width / 2.0, height / 2.0)), image_size, from_homography, assumed)

    def at_heights(self, heights_mm: Sequence[float]) -> list[TableCamera]:
        """The same felt plane seen from cameras at other heights (straight-down views cannot tell them apart)."""
        felt = self.plane_to_image(0.0)
        return [TableCamera.from_homography(felt, image_size=self.image_size, height_mm=h) for h in heights_mm]

    @property
    def eye(self) -> FloatArray:
        """Camera centre in table mm."""
        return _eye(self.projection)

    def project(self, points: FloatArray) -> FloatArray:
        """(N, 2) pixels of (N, 3) table-mm points."""
        pts = np.asarray(points, dtype=np.float64).reshape(-1, 3)
        uvw = pts @ self.projection[:, :3].T + self.projection[:, 3]
        result: FloatArray = uvw[:, :2] / uvw[:, 2:3]
        return result

    def plane_to_image(self, z: float) -> FloatArray:
        """3x3 homography pixels <- table mm on the plane at height z."""
        p = self.projection
        result: FloatArray = np.column_stack([p[:, 0], p[:, 1], p[:, 2] * z + p[:, 3]])
        return result

    def to_plane(self, pixels: FloatArray, *, z: float) -> FloatArray:
        """(N, 2) table mm on the plane at height z seen at (N, 2) pixels."""
        inverse = np.linalg.inv(self.plane_to_image(z))
        pts = np.hstack([np.asarray(pixels, dtype=np.float64).reshape(-1, 2), np.ones((len(pixels), 1))])
        mapped = pts @ inverse.T
        result: FloatArray = mapped[:, :2] / mapped[:, 2:3]
        return result

    def ray_points(self, pixel: FloatArray, z: FloatArray) -> FloatArray:
        """(N, 2) table mm where the ray through `pixel` (2,) crosses the planes at heights `z` (N,)."""
        direction = np.linalg.solve(self.projection[:, :3], np.array([pixel[0], pixel[1], 1.0]))
        eye = self.eye
        steps = (np.asarray(z, dtype=np.float64) - eye[2]) / direction[2]
        result: FloatArray = eye[None, :2] + steps[:, None] * direction[None, :2]
        return result

    @property
    def tilt_deg(self) -> float:
        """Angle between the optical axis and straight down."""
        m = self.projection[:, :3]
        axis = np.linalg.inv(m) @ np.array([self.image_size[0] / 2.0, self.image_size[1] / 2.0, 1.0])
        axis /= np.linalg.norm(axis)
        return float(math.degrees(math.acos(min(1.0, abs(float(axis[2]))))))


def _centred(h: FloatArray, centre: tuple[float, float]) -> FloatArray:
    shift = np.array([[1.0, 0.0, -centre[0]], [0.0, 1.0, -centre[1]], [0.0, 0.0, 1.0]])
    result: FloatArray = shift @ h
    return result


def _focal_from_homography(h: FloatArray, *, image_size: tuple[int, int]) -> float | None:
    """The focal length making the plane's axes orthogonal and equally long; None when the view is too close to
    straight down to tell (or the result is implausible)."""
    width, height = image_size
    c = _centred(h, (width / 2.0, height / 2.0))
    c = c / np.linalg.norm(c[:, 0])
    h1, h2 = c[:, 0], c[:, 1]
    a = np.array([h1[0] * h2[0] + h1[1] * h2[1], h1[0] ** 2 + h1[1] ** 2 - h2[0] ** 2 - h2[1] ** 2])
    b = np.array([h1[2] * h2[2], h1[2] ** 2 - h2[2] ** 2])
    # a * w + b = 0 with w = 1 / f^2
    denominator = float(a @ a)
    if denominator <= 0:
        return None
    w = -float(a @ b) / denominator
    if w <= 0:
        return None
    focal = 1.0 / math.sqrt(w)
    lowest = width / 2.0 / math.tan(math.radians(_MAX_HFOV_DEG) / 2.0)
    highest = width / 2.0 / math.tan(math.radians(_MIN_HFOV_DEG) / 2.0)
    # Near straight down the perspective terms vanish and w is noise: require a clear tilt signal.
    perspective = float(np.hypot(h1[2], h2[2])) * focal
    if not lowest <= focal <= highest or perspective < 0.08:
        return None
    return focal


def _focal_for_height(h: FloatArray, *, image_size: tuple[int, int], height_mm: float) -> float:
    """The focal length at which the decomposed camera is `height_mm` above the felt."""
    if not height_mm > 0:
        raise ValueError(f"expected a positive camera height in mm, got {height_mm}")
    centre = (image_size[0] / 2.0, image_size[1] / 2.0)
    focal = float(image_size[0])
    for _ in range(6):
        eye = _eye(_projection(h, focal, centre))
        if eye[2] <= 0:
            break
        focal *= height_mm / float(eye[2])
    return focal


def _eye(projection: FloatArray) -> FloatArray:
    result: FloatArray = -np.linalg.solve(projection[:, :3], projection[:, 3]).astype(np.float64)
    return result


def _projection(h: FloatArray, focal: float, centre: tuple[float, float]) -> FloatArray:
    k = np.array([[focal, 0.0, centre[0]], [0.0, focal, centre[1]], [0.0, 0.0, 1.0]])
    m = np.linalg.solve(k, h)
    scale = 2.0 / (np.linalg.norm(m[:, 0]) + np.linalg.norm(m[:, 1]))
    m = m * scale
    if m[2, 2] < 0:  # the felt lies in front of the camera
        m = -m
    r1, r2 = m[:, 0] / np.linalg.norm(m[:, 0]), m[:, 1] / np.linalg.norm(m[:, 1])
    r3 = np.cross(r1, r2)
    # Nearest rotation to [r1 r2 r3] (the columns are only nearly orthogonal for a noisy homography).
    u, _, vt = np.linalg.svd(np.column_stack([r1, r2, r3]))
    rotation = u @ vt
    if np.linalg.det(rotation) < 0:
        rotation = -rotation
    result: FloatArray = k @ np.column_stack([rotation, m[:, 2]])
    if _eye(result)[2] < 0:  # z must point up, toward the camera
        flip = np.diag([1.0, 1.0, -1.0])
        result = k @ np.column_stack([rotation @ flip, m[:, 2]])
    return result


@dataclass(frozen=True, slots=True)
class StackFit:
    """A stack's base on the felt, its chip count, and how well the box pins the count down."""

    base_mm: tuple[float, float]
    count: int
    count_confidence: float
    px_per_chip: float  # how much the box grows per chip at this place: the count's resolution
    residual_px: float  # mean box-side error of the best count
    # log p(evidence | count) for counts 1..max_count (up to a constant): to combine with other evidence
    log_likelihood: tuple[float, ...] = ()
    top_px: tuple[float, float] | None = None  # the top disc's centre in the image, where it was seen (a lean too)



def box_holding(box: Box, points: FloatArray, *, image_size: tuple[int, int]) -> Box:
    """`box` grown to hold `points` (N, 2 pixels; a point's pixel whole), within an image of `image_size` (w, h)."""
    width, height = image_size
    return (max(0.0, min(box[0], float(points[:, 0].min()))), max(0.0, min(box[1], float(points[:, 1].min()))),
            min(float(width), max(box[2], float(points[:, 0].max()) + 1.0)),
            min(float(height), max(box[3], float(points[:, 1].max()) + 1.0)))


def side_points(camera: TableCamera, base_mm: Sequence[float] | FloatArray, *, radius_mm: float,
                angles_deg: Sequence[float], heights_mm: Sequence[float] | FloatArray) -> FloatArray:
    """(H, A, 3) table points on a stack's side (mm, z up): at each height, round the rim at `angles_deg` from the
    direction of the camera (0: the side facing it)."""
    eye = camera.eye
    facing = math.atan2(float(eye[1] - base_mm[1]), float(eye[0] - base_mm[0]))
    angles = facing + np.radians(np.asarray(angles_deg, dtype=np.float64))
    heights = np.asarray(heights_mm, dtype=np.float64)
    points = np.zeros((len(heights), len(angles), 3))
    points[:, :, 0] = base_mm[0] + radius_mm * np.cos(angles)[None, :]
    points[:, :, 1] = base_mm[1] + radius_mm * np.sin(angles)[None, :]
    points[:, :, 2] = heights[:, None]
    return points

def stack_outline(camera: TableCamera, fit: StackFit, *, radius_mm: float, thickness_mm: float) -> FloatArray:
    """(2C, 2) pixels round the base's and the top's rims of the stack `fit` (their hull is its silhouette)."""
    result: FloatArray = _outline(camera, np.array([fit.base_mm]), np.array([fit.count * thickness_mm]), radius_mm)[0]
    return result


_ANGLES = np.arange(_CIRCLE) * 2.0 * math.pi / _CIRCLE
_RING = np.stack([np.cos(_ANGLES), np.sin(_ANGLES)], axis=1)  # (C, 2): the unit circle


def _outline(camera: TableCamera, centres: FloatArray, heights: FloatArray, radius: float) -> FloatArray:
    """(N, 2C, 2) pixels of the base and top rims of cylinders standing at `centres` (N, 2), `heights` (N,)."""
    ring = _RING * radius
    n = len(centres)
    pts = np.zeros((n, 2 * _CIRCLE, 3))
    pts[:, :, :2] = np.concatenate([ring, ring])[None] + centres[:, None, :]
    pts[:, _CIRCLE:, 2] = heights[:, None]
    result: FloatArray = camera.project(pts.reshape(-1, 3)).reshape(n, 2 * _CIRCLE, 2)
    return result


def _support(projections: FloatArray, centres: FloatArray, heights: FloatArray, radius: float) -> FloatArray:
    """(M, N, 4): for each camera model's projection (M, 3, 4) and each cylinder standing at `centres` (M, N, 2)
    with `heights` (N,), how far its outline reaches left, up, right and down (-min x, -min y, max x, max y: the
    support of the outline along each of the box's outward directions). The rims' homogeneous pixels are the
    centre's plus the ring's, each projected once (`_outline` projects every point: 4.5 times the time)."""
    across = projections[:, :, :2].transpose(0, 2, 1)  # (M, 2, 3): the felt's x and y
    ring = (_RING * radius) @ across  # (M, C, 3)
    base = centres @ across + projections[:, None, :, 3]  # (M, N, 3)
    top = base + heights[None, :, None] * projections[:, None, :, 2]
    uvw = np.concatenate([base[:, :, None] + ring[:, None], top[:, :, None] + ring[:, None]], axis=2)
    u = uvw[..., 0] / uvw[..., 2]
    v = uvw[..., 1] / uvw[..., 2]
    result: FloatArray = np.stack([-u.min(axis=2), -v.min(axis=2), u.max(axis=2), v.max(axis=2)], axis=2)
    return result


@dataclass(frozen=True, slots=True)
class _Observations:
    values: FloatArray  # (4,) the box's observed support left, up, right and down (`_support`)
    weights: FloatArray  # (4,)


def _observations(box: Box, image_size: tuple[int, int], *, border_px: float) -> _Observations:
    # Boxes count whole pixels: x2, y2 lie one past the last pixel, whose centre is at the integer coordinate.
    x1, y1, x2, y2 = np.asarray(box, dtype=np.float64) - (0.0, 0.0, 1.0, 1.0)
    width, height = image_size
    weights = np.array([x1 > border_px, y1 > border_px, x2 < width - 1 - border_px, y2 < height - 1 - border_px],
                       dtype=np.float64)
    if weights.sum() < 2:
        weights = np.ones(4)
    return _Observations(np.array([-x1, -y1, x2, y2]), weights)


BOX_SIGMA_PX = 0.3  # a box from an instance mask: each side rounded to the pixel (sd of a uniform +-0.5 px)
_LEAN_MM = 0.8  # a stack's top sits about this far off its base (sd per axis), reached over the first five chips
_OUTLIER_SHARE = 0.05  # box sides far off the cylinder: a neighbour or a hand merged into the box
_OUTLIER_RANGE_PX = 20.0
# A stack's previous count stays while its posterior is at least this share of the likeliest count's
# (`count_choice`): a box moved by a pixel, or another stack come or gone, no longer flips an undecided count.
HOLD_SHARE = 0.25


def fit_stack(camera: TableCamera, box: Box, *, diameter_mm: float, thickness_mm: float, max_count: int = 30,
              border_px: float = 1.0, box_sigma_px: float = BOX_SIGMA_PX, alternatives: Sequence[TableCamera] = (),
              log_prior: Sequence[float] = ()) -> StackFit:
    """The base position and chip count whose projected cylinder best matches `box` (visible pixels, xyxy).

    Every count 1..max_count is tried; the base position of each is solved by Gauss-Newton on the box sides
    (sides on the image border are ignored: the stack may continue beyond it). Each count's likelihood takes
    the box sides as off by `box_sigma_px` (rounding to whole pixels, or a detector's error) plus the stack's
    lean, with a few sides far off (a neighbour or a hand merged into the box); `count_confidence` is the
    chosen count's posterior probability under `log_prior` (counts 1..max_count, up to a constant; flat when not
    given: `count_prior`). `alternatives` are other camera models equally likely (an unknown camera height): the
    counts' likelihoods are averaged over them and `camera`. `log_likelihood` is the evidence alone, no prior.
    """
    if not box_sigma_px > 0:
        raise ValueError(f"expected box_sigma_px > 0, got {box_sigma_px}")
    solution = solve_box(camera, box, diameter_mm=diameter_mm, thickness_mm=thickness_mm, max_count=max_count,
                         border_px=border_px, alternatives=alternatives)
    return solution.fit(solution.log_likelihood(box_sigma_px), log_prior=log_prior)


@dataclass(frozen=True, slots=True)
class BoxSolution:
    """Each count's base solved to a box, per camera model (the first is the main one): the box's evidence at any
    `box_sigma_px` follows without solving again."""

    centres: FloatArray  # (M, N, 2) the base per model and count (mm)
    residuals: FloatArray  # (M, N, 4) box-side errors of each model and count (pixels)
    side_weights: FloatArray  # (4,) sides used (0: on the image's border)
    lean_px: FloatArray  # (M, N) the stack's lean (sd) in pixels at each base
    px_per_chip: FloatArray  # (N,) the main model's box growth per chip at each count's base

    def log_likelihood(self, box_sigma_px: float | Sequence[float] | FloatArray) -> FloatArray:
        """(M, N) log p(box | model, count) with the sides off by `box_sigma_px` (one for all, or one per side:
        x1, y1, x2, y2) plus the lean, a few far off."""
        sides = np.broadcast_to(np.asarray(box_sigma_px, dtype=np.float64), (len(self.side_weights),))
        if not np.all(sides > 0):
            raise ValueError(f"expected box_sigma_px > 0, got {box_sigma_px}")
        sigma = np.sqrt(sides**2 + self.lean_px[..., None] ** 2)
        density = np.exp(-0.5 * (self.residuals / sigma) ** 2) / (math.sqrt(2.0 * math.pi) * sigma)
        mixed = (1.0 - _OUTLIER_SHARE) * density + _OUTLIER_SHARE / _OUTLIER_RANGE_PX
        result: FloatArray = (np.log(mixed) * self.side_weights).sum(axis=2)
        return result

    def fit(self, evidence: FloatArray, *, log_prior: Sequence[float] = (),
            model_log_weights: FloatArray | None = None, previous: int | None = None) -> StackFit:
        """The count from `evidence` (M, N): the models averaged (weighted by `model_log_weights`, else equally),
        under `log_prior` (a `previous` count held as `count_choice` holds it); the base and the box's residual of
        the main model at that count."""
        marginal = marginalise(evidence, model_log_weights)
        best, confidence = count_choice(marginal, log_prior, previous=None if previous is None else previous - 1)
        residual = np.abs(self.residuals[0, best] * self.side_weights).sum() / self.side_weights.sum()
        return StackFit(base_mm=(float(self.centres[0, best, 0]), float(self.centres[0, best, 1])), count=best + 1,
                        count_confidence=confidence, px_per_chip=float(self.px_per_chip[best]),
                        residual_px=float(residual), log_likelihood=tuple(float(v) for v in marginal))


def marginalise(evidence: FloatArray, model_log_weights: FloatArray | None = None) -> FloatArray:
    """(N,) log-likelihood of each count from (M, N) per camera model: their average, weighted by
    `model_log_weights` (M,) (log, up to a constant; equal weights when None)."""
    logs = np.asarray(evidence, dtype=np.float64)
    if model_log_weights is not None:
        if len(model_log_weights) != len(logs):
            raise ValueError(f"expected {len(logs)} model weights, got {len(model_log_weights)}")
        weights = np.asarray(model_log_weights, dtype=np.float64)
        logs = logs + (weights - np.logaddexp.reduce(weights))[:, None]
    else:
        logs = logs - math.log(len(logs))
    result: FloatArray = np.logaddexp.reduce(logs, axis=0)
    return result


def solve_box(camera: TableCamera, box: Box, *, diameter_mm: float, thickness_mm: float, max_count: int = 30,
              border_px: float = 1.0, alternatives: Sequence[TableCamera] = ()) -> BoxSolution:
    """Each count's base solved to `box` for `camera` and each of `alternatives` (see `fit_stack`)."""
    if max_count < 1:
        raise ValueError(f"expected max_count >= 1, got {max_count}")
    shape = _StackShape(diameter_mm / 2.0, thickness_mm, max_count)
    obs = _observations(box, camera.image_size, border_px=border_px)
    models = (camera, *alternatives)
    counts = np.arange(1, max_count + 1)
    heights: FloatArray = counts.astype(np.float64) * thickness_mm
    x1, y1, x2, y2 = box
    middle = np.array([(x1 + x2 - 1.0) / 2.0, (y1 + y2 - 1.0) / 2.0])
    projections = np.stack([model.projection for model in models])
    start = np.stack([model.ray_points(middle, heights / 2.0) for model in models])
    centres = _solve_bases(projections, start, heights, radius=shape.radius_mm, obs=obs)
    residuals = _support(projections, centres, heights, shape.radius_mm) - obs.values
    lean = _LEAN_MM * np.clip((counts - 1) / 4.0, 0.0, 1.0)
    lean_px = np.stack([lean * _px_per_mm(model, at) for model, at in zip(models, centres, strict=True)])
    return BoxSolution(centres=centres, residuals=residuals, side_weights=obs.weights, lean_px=lean_px,
                       px_per_chip=_growth(camera, centres[0], shape=shape))


def count_prior(max_count: int, *, single_share: float, usual_max: int, beyond_share: float) -> FloatArray:
    """(max_count,) log-prior of counts 1..max_count: a single chip with probability `single_share` (loose chips,
    a bet of one chip), counts 2..usual_max equally likely, and `beyond_share` spread over taller stacks."""
    if max_count < 1:
        raise ValueError(f"expected max_count >= 1, got {max_count}")
    if not (0.0 < single_share < 1.0 and 0.0 <= beyond_share < 1.0 - single_share):
        raise ValueError(f"expected 0 < single_share, 0 <= beyond_share, their sum < 1, got {single_share}, "
                         f"{beyond_share}")
    if max_count == 1:
        return np.zeros(1)
    usual = min(max(usual_max, 2), max_count)
    tall = max_count - usual
    prior = np.empty(max_count)
    prior[0] = single_share
    prior[1:usual] = (1.0 - single_share - (beyond_share if tall else 0.0)) / (usual - 1)
    prior[usual:] = beyond_share / tall if tall else 0.0
    result: FloatArray = np.log(prior)
    return result


def count_choice(log_likelihood: FloatArray, log_prior: Sequence[float] = (), *,
                 previous: int | None = None) -> tuple[int, float]:
    """The likeliest count (index into counts 1..N) under `log_prior`, and its confidence: its posterior, but no
    more than the evidence alone gives it (its posterior under a flat prior), so that a prior can pick a count
    where the evidence leaves several open, never make one trusted. A `previous` count (index: the same stack's
    last reading) stays where its posterior is at least HOLD_SHARE of the likeliest's: evidence that leaves both
    open does not flip a stack at rest from one to the other."""
    posterior = count_posterior(log_likelihood, log_prior)
    best = int(np.argmax(posterior))
    if previous is not None and 0 <= previous < len(posterior) and posterior[previous] >= HOLD_SHARE * posterior[best]:
        best = previous
    confidence = min(float(posterior[best]), float(count_posterior(log_likelihood)[best]))
    return best, float(np.clip(confidence, 0.0, 1.0))


def count_posterior(log_likelihood: FloatArray, log_prior: Sequence[float] = ()) -> FloatArray:
    """Normalised posterior of counts 1..N from their log-likelihood and log-prior (flat when empty)."""
    logs = np.asarray(log_likelihood, dtype=np.float64)
    if len(log_prior):
        if len(log_prior) != len(logs):
            raise ValueError(f"expected a log-prior of {len(logs)} counts, got {len(log_prior)}")
        logs = logs + np.asarray(log_prior, dtype=np.float64)
    result: FloatArray = np.exp(logs - np.logaddexp.reduce(logs))
    return result


@dataclass(frozen=True, slots=True)
class _StackShape:
    radius_mm: float
    thickness_mm: float
    max_count: int


def _growth(camera: TableCamera, centres: FloatArray, *, shape: _StackShape) -> FloatArray:
    """(N,) how much a stack's box grows per chip at each count's base: the count's resolution."""
    if shape.max_count == 1:
        return np.zeros(1)
    heights = np.arange(1, shape.max_count + 1, dtype=np.float64) * shape.thickness_mm
    reach = _support(camera.projection[None], centres[None], heights, shape.radius_mm)[0]  # left, up, right, down
    spans = np.hypot(reach[:, 2] + reach[:, 0], reach[:, 3] + reach[:, 1])
    result: FloatArray = np.abs(np.gradient(spans))
    return result


def _px_per_mm(camera: TableCamera, centres: FloatArray) -> FloatArray:
    """(N,) image scale on the felt at each centre."""
    n = len(centres)
    pts = np.zeros((n, 2, 3))
    pts[:, :, :2] = centres[:, None, :]
    pts[:, 1, 0] += 1.0
    uv = camera.project(pts.reshape(-1, 3)).reshape(n, 2, 2)
    result: FloatArray = np.linalg.norm(uv[:, 1] - uv[:, 0], axis=1)
    return result


def _solve_bases(projections: FloatArray, start: FloatArray, heights: FloatArray, *, radius: float,
                 obs: _Observations, iterations: int = 3) -> FloatArray:
    """(M, N, 2): Gauss-Newton on (x, y) per camera model (`projections` (M, 3, 4)) and candidate height (`start`
    (M, N, 2), `heights` (N,)): weighted support residuals, numeric Jacobian."""
    centres = start.copy()
    step_mm = 0.5
    n = centres.shape[1]
    tripled = np.concatenate([heights, heights, heights])
    for _ in range(iterations):
        # the residuals at the centres and a step along x and along y, projected together
        at = np.concatenate([centres, centres + np.array([step_mm, 0.0]), centres + np.array([0.0, step_mm])],
                            axis=1)
        residuals = (_support(projections, at, tripled, radius) - obs.values) * obs.weights
        base, dx, dy = residuals[:, :n], residuals[:, n:2 * n], residuals[:, 2 * n:]
        jac = np.stack([(dx - base) / step_mm, (dy - base) / step_mm], axis=3)  # (M, N, 4, 2)
        jtj = np.einsum("mnki,mnkj->mnij", jac, jac) + np.eye(2) * 1e-6
        jtr = np.einsum("mnki,mnk->mni", jac, base)
        delta = np.linalg.solve(jtj, jtr[..., None])[..., 0]
        centres = centres - delta
    return centres
