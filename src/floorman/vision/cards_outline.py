"""Card outlines from straight edges: card-shaped rectangles whose sides run along strong image edges.

The colour regions of `cards.find_card_quads` fail where the card's paper touches something of its colour (a
neighbouring card, a chip's white edge, a light table): the region is then the card merged with its
neighbour, or nothing; and a detector box off the card's centre misleads the rectangles fitted to the box.
A card's sides are still there as straight edges, including the one it draws over a card below it.
`edge_quads(image, box)` looks for them: in the box (grown a little, scaled to a fixed working size), the
dominant edge directions (`_dominant_angles`); for each, the crop turned so that a card at that angle has its
sides along the pixel axes, where a side is a peak of the summed edge strength of a column or a row
(`_profile_peaks`). Rectangles (`_hypotheses`): every pair of vertical and pair of horizontal peaks of a
card's shape, and, for a card with one end covered, a pair and one peak with the fourth side a card's length
away; kept when they span the box, scored by the mean edge strength along their found sides
(`_side_supports`). The best few, after dropping near-duplicates, and the whole ones with each side moved onto
the strongest edge nearby (`_refine`: perspective makes a card a general quadrilateral) go back to image
pixels for the card classifier to choose from.

A card seen at a slant (a low camera foreshortens and shears it) is a parallelogram in the image, not a
rectangle, and may look nearly square: `line_quads` finds the strongest lines of each dominant edge direction
apart (`_line_directions`, `_line_offsets`: a Hough transform over the directions that are there) and gives the
parallelograms between two lines of each of two directions about a right angle apart, or between two of one and
one of the other with the fourth side a card's proportion away (`_parallelograms`), scored as `edge_quads` does.

A card cut by the image frame has a box cut by it too, and no fourth side in the image: `frame_quads` gives
the card-shaped rectangles at the crop's dominant edge directions whose bounding box spans the box across the
frame's side and runs on past the frame, for the classifier to read (the warp repeats the border pixels).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import cv2
import numpy as np
import numpy.typing as npt

from floorman.core.geometry import short_side

FloatArray = npt.NDArray[np.float32]
Image = npt.NDArray[np.uint8]

_WORK_PX = 96.0  # the box's short side is scaled to this many pixels
_GROW = 0.12  # the crop is the box grown by this share of its size on each side (a covered card sticks out)
_ASPECT = (1.25, 1.75)  # long / short side of a card in the image (seen at a slant: not quite its own)
_CARD_ASPECT = (1.40, 1.56)  # long / short side of a poker (63.5 x 88.9 mm) and a bridge card (57 x 89 mm)
_ANGLE_PEAKS = 3  # dominant edge directions tried
_ANGLE_SPREAD_DEG = 7.0  # dominant directions closer than this are one
_FINE_DEG = (-1.0, 1.0)  # turns tried around each dominant direction
_PEAK_SHARE = 0.2  # a profile peak must reach this share of the profile's maximum
_MAX_PEAKS = 8  # strongest profile peaks kept per axis
_SIDE_TRIM = 0.12  # each side's ends (rounded corners, the neighbour's edges crossing) are not scored
_MIN_BOX_COVER = 0.8  # a rectangle's bounding box must cover this share of the box
_MIN_OWN_COVER = 0.55  # and the box this share of the rectangle's bounding box (covered cards stick out)
_REFINE_REACH = 0.05  # a side may move this share of the card's width when refined onto its edge
_REFINE_TURNS_DEG = (-2.0, -1.0, 0.0, 1.0, 2.0)  # and turn by one of these
_COMPLETED_LIMIT = 3  # rectangles completed from three sides kept, besides the `limit` found whole
_PER_TURN = 6  # best rectangles of each kind kept from one turn of the crop
_DUPLICATE = 0.06  # rectangles whose corners all lie this close (share of the box's short side) are one
_FRAME_TOUCH = 2  # a box side this close to the image's edge (pixels) touches the frame,
_FRAME_NEAR = 0.1  # or this close (share of the box's size): a detector's box may stop short of the frame
_FRAME_MARGIN = 1.1  # a detector box's size over the card's bounding box
_FRAME_STEP_DEG = 2.0  # turns tried for a card cut by the frame
_FRAME_LIMIT = 4  # outlines kept for it
_FRAME_MIN_INSIDE = 0.35  # share of a cut card's bounding box that must lie inside the image
_LINE_ASPECT = (0.95, 1.9)  # long / short side of a card seen at a slant from a low camera (foreshortened)
_LINE_RATIOS = (1.0, 1.2, *_CARD_ASPECT)  # length over width of a card whose fourth side is hidden
_LINE_DIRECTIONS = 5  # edge directions (0..180 degrees) whose lines are tried
_LINE_SPREAD_DEG = 6.0  # directions closer than this are one
_LINE_TOLERANCE_DEG = 5.0  # an edge pixel this close in direction votes for a line
_LINE_SHARE = 0.15  # a direction's weight must reach this share of the strongest one
_LINE_PAIR_DEG = (65.0, 115.0)  # the angle between a card's two side directions in the image


@dataclass(frozen=True)
class EdgeQuad:
    """A card-shaped rectangle (TL, TR, BR, BL in image pixels), its edge support (mean edge strength along
    its sides, about 0..1), and whether all four sides were found."""

    corners: FloatArray
    support: float
    complete: bool = True  # False: three sides found, the fourth a card's length from its opposite


def _gradients(crop: npt.NDArray[np.float32]) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.float32]]:
    """|d/dx| and |d/dy| of the image, the strongest colour channel at each pixel."""
    gx, gy = np.abs(cv2.Sobel(crop, cv2.CV_32F, 1, 0, ksize=3)), np.abs(cv2.Sobel(crop, cv2.CV_32F, 0, 1, ksize=3))
    return _channel_max(gx), _channel_max(gy)


def _channel_max(image: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    """The largest of the three channels at each pixel (faster than a reduction over the last axis)."""
    return np.maximum(np.maximum(image[..., 0], image[..., 1]), image[..., 2])


def _dominant_angles(crop: npt.NDArray[np.float32]) -> list[float]:
    """Up to `_ANGLE_PEAKS` edge directions (degrees in 0..90: a card's sides are at a and a + 90) weighted by
    squared gradient strength, strongest first."""
    gray = _channel_max(crop)
    gx, gy = cv2.Sobel(gray, cv2.CV_32F, 1, 0, ksize=3), cv2.Sobel(gray, cv2.CV_32F, 0, 1, ksize=3)
    weight = (gx * gx + gy * gy).ravel()
    angle = np.degrees(np.arctan2(gy, gx)).ravel() % 90.0
    hist, _ = np.histogram(angle, bins=90, range=(0.0, 90.0), weights=weight)
    kernel = np.array([1.0, 2.0, 3.0, 2.0, 1.0]) / 9.0
    smooth = np.convolve(np.concatenate([hist[-2:], hist, hist[:2]]), kernel, mode="valid")
    peaks: list[float] = []
    for index in np.argsort(smooth)[::-1]:
        if smooth[index] < _PEAK_SHARE * smooth.max() or len(peaks) >= _ANGLE_PEAKS:
            break
        angle_deg = float(index) + 0.5
        if all(min(abs(angle_deg - p), 90.0 - abs(angle_deg - p)) >= _ANGLE_SPREAD_DEG for p in peaks):
            peaks.append(angle_deg)
    return peaks


def _profile_peaks(profile: npt.NDArray[np.float64]) -> npt.NDArray[np.int64]:
    """Positions of the strongest local maxima of `profile` (at most `_MAX_PEAKS`)."""
    inner = (profile[1:-1] >= profile[:-2]) & (profile[1:-1] >= profile[2:]) & (
        profile[1:-1] >= _PEAK_SHARE * profile.max())
    positions = np.flatnonzero(inner) + 1
    return np.sort(positions[np.argsort(profile[positions])[::-1][:_MAX_PEAKS]])


@dataclass(frozen=True)
class _Turned:
    """The crop turned by `angle_deg` about its centre (edge strengths along the axes as cumulative sums) and
    the affine map from turned back to crop pixels."""

    cum_gx: npt.NDArray[np.float64]  # cumulative sum of |d/dx| down each column
    cum_gy: npt.NDArray[np.float64]  # cumulative sum of |d/dy| along each row
    back: npt.NDArray[np.float64]  # 2 x 3 affine, turned -> crop


def _turn(crop: npt.NDArray[np.float32], angle_deg: float, *, level: float) -> _Turned:
    h, w = crop.shape[:2]
    matrix = cv2.getRotationMatrix2D((w / 2.0, h / 2.0), angle_deg, 1.0)
    turned = cv2.warpAffine(crop, matrix, (w, h), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
    gx, gy = _gradients(np.asarray(turned, dtype=np.float32))
    gx, gy = np.minimum(gx / level, 1.0), np.minimum(gy / level, 1.0)
    cum_gx = np.vstack([np.zeros((1, w)), np.cumsum(gx, axis=0, dtype=np.float64)])
    cum_gy = np.hstack([np.zeros((h, 1)), np.cumsum(gy, axis=1, dtype=np.float64)])
    return _Turned(cum_gx=cum_gx, cum_gy=cum_gy, back=cv2.invertAffineTransform(matrix).astype(np.float64))


def _pairs(peaks: npt.NDArray[np.int64]) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    first, second = np.triu_indices(len(peaks), k=1)
    return peaks[first], peaks[second]


def _hypotheses(xs: npt.NDArray[np.int64], ys: npt.NDArray[np.int64]) -> tuple[npt.NDArray[np.int64], ...]:
    """Rectangles x0, x1, y0, y1 (arrays) and the side each lacks (-1 none; 0..3 left, right, top, bottom):
    every pair of vertical and pair of horizontal peaks, and every pair on one axis with one peak on the other
    and the fourth side a card's length away (the card partly covered: its fourth side hidden)."""
    xa, xb = _pairs(xs)
    ya, yb = _pairs(ys)
    parts = [(np.repeat(xa, len(ya)), np.repeat(xb, len(ya)), np.tile(ya, len(xa)), np.tile(yb, len(xa)),
              np.full(len(xa) * len(ya), -1))]
    ratios = np.array([*_CARD_ASPECT, *(1.0 / a for a in _CARD_ASPECT)])
    for lo, hi, peaks, vertical in ((xa, xb, ys, True), (ya, yb, xs, False)):
        span = np.repeat(hi - lo, len(peaks) * len(ratios))
        first, second = np.repeat(lo, len(peaks) * len(ratios)), np.repeat(hi, len(peaks) * len(ratios))
        at = np.tile(np.repeat(peaks, len(ratios)), len(lo))
        extent = np.round(span * np.tile(ratios, len(lo) * len(peaks))).astype(np.int64)
        for sign, lacking in ((1, 3 if vertical else 1), (-1, 2 if vertical else 0)):
            ends = np.sort(np.stack([at, at + sign * extent]), axis=0)
            parts.append((first, second, ends[0], ends[1], np.full(len(at), lacking)) if vertical
                         else (ends[0], ends[1], first, second, np.full(len(at), lacking)))
    return tuple(np.concatenate([p[i] for p in parts]) for i in range(5))


def _side_supports(turned: _Turned, x0: npt.NDArray[np.int64], x1: npt.NDArray[np.int64],
                   y0: npt.NDArray[np.int64], y1: npt.NDArray[np.int64]) -> npt.NDArray[np.float64]:
    """Mean edge strength along each side (left, right, top, bottom; N x 4) of the rectangles, ends trimmed;
    the parts outside the crop count as no edge."""
    h, w = turned.cum_gx.shape[0] - 1, turned.cum_gx.shape[1]
    ty, tx = np.round(_SIDE_TRIM * (y1 - y0)).astype(int), np.round(_SIDE_TRIM * (x1 - x0)).astype(int)
    r0, r1 = np.clip(y0 + ty, 0, h), np.clip(y1 - ty, 0, h)
    c0, c1 = np.clip(x0 + tx, 0, w), np.clip(x1 - tx, 0, w)
    rows, cols = np.maximum(y1 - y0 - 2 * ty, 1), np.maximum(x1 - x0 - 2 * tx, 1)
    out = np.zeros((len(x0), 4))
    for side, x in enumerate((x0, x1)):
        inside = (x >= 0) & (x < w)
        xc = np.clip(x, 0, w - 1)
        out[:, side] = np.where(inside, turned.cum_gx[r1, xc] - turned.cum_gx[r0, xc], 0.0) / rows
    for side, y in enumerate((y0, y1)):
        inside = (y >= 0) & (y < h)
        yc = np.clip(y, 0, h - 1)
        out[:, 2 + side] = np.where(inside, turned.cum_gy[yc, c1] - turned.cum_gy[yc, c0], 0.0) / cols
    return out


def _rectangles(turned: _Turned, box: tuple[float, float, float, float]) -> list[EdgeQuad]:
    """Every card-shaped rectangle between profile peaks of `turned` that spans `box` (crop pixels), with the
    mean edge strength along its sides (ends trimmed; a completed rectangle's hidden side left out)."""
    h, w = turned.cum_gx.shape[0] - 1, turned.cum_gx.shape[1]
    x0, x1, y0, y1, lacking = _hypotheses(_profile_peaks(turned.cum_gx[-1]), _profile_peaks(turned.cum_gy[:, -1]))
    short, long = np.minimum(x1 - x0, y1 - y0), np.maximum(x1 - x0, y1 - y0)
    ok = (long >= _ASPECT[0] * short) & (long <= _ASPECT[1] * short) & (short >= 0.25 * min(w, h))
    x0, x1, y0, y1, lacking = x0[ok], x1[ok], y0[ok], y1[ok], lacking[ok]
    if len(x0) == 0:
        return []
    centre = np.stack([x0 + x1, y0 + y1], axis=1) / 2.0 @ turned.back[:, :2].T + turned.back[:, 2]
    half = np.stack([x1 - x0, y1 - y0], axis=1) / 2.0 @ np.abs(turned.back[:, :2]).T  # of the bounding box
    keep = _covers_box(centre - half, centre + half, box)
    if not keep.any():
        return []
    x0, x1, y0, y1, lacking = x0[keep], x1[keep], y0[keep], y1[keep], lacking[keep]
    sides = _side_supports(turned, x0, x1, y0, y1)
    hidden = np.arange(4)[None, :] == lacking[:, None]
    support = np.where(hidden, 0.0, sides).sum(axis=1) / np.where(lacking >= 0, 3.0, 4.0)
    out: list[EdgeQuad] = []
    for complete in (True, False):
        for i in sorted(np.flatnonzero((lacking < 0) == complete), key=lambda i: -support[i])[:_PER_TURN]:
            square = np.array([[x0[i], y0[i]], [x1[i], y0[i]], [x1[i], y1[i]], [x0[i], y1[i]]], dtype=np.float64)
            corners = square @ turned.back[:, :2].T + turned.back[:, 2]
            out.append(EdgeQuad(corners=corners.astype(np.float32), support=float(support[i]), complete=complete))
    return out


def _covers_box(lo: npt.NDArray[np.float64], hi: npt.NDArray[np.float64],
                box: tuple[float, float, float, float]) -> npt.NDArray[np.bool_]:
    """Whether each rectangle's bounding box (lo, hi: N x 2) and the box mostly cover each other."""
    inter = np.clip(np.minimum(hi, box[2:]) - np.maximum(lo, box[:2]), 0.0, None)
    inter_area = inter[:, 0] * inter[:, 1]
    box_area = (box[2] - box[0]) * (box[3] - box[1])
    own_area = np.prod(hi - lo, axis=1)
    return np.asarray((inter_area >= _MIN_BOX_COVER * box_area) & (inter_area >= _MIN_OWN_COVER * own_area),
                      dtype=np.bool_)


def _work_crop(image_bgr: Image, box: tuple[int, int, int, int]) -> tuple[npt.NDArray[np.float32], float,
                                                                          tuple[int, int]]:
    """The box grown by `_GROW`, scaled so that its short side is `_WORK_PX`, smoothed; the scale and the
    crop's offset in the image."""
    x0, y0, x1, y1 = box
    grow = _GROW * max(x1 - x0, y1 - y0)
    cx0, cy0 = max(0, int(x0 - grow)), max(0, int(y0 - grow))
    cx1, cy1 = min(image_bgr.shape[1], int(x1 + grow) + 1), min(image_bgr.shape[0], int(y1 + grow) + 1)
    scale = _WORK_PX / max(min(x1 - x0, y1 - y0), 1)
    crop = cv2.resize(image_bgr[cy0:cy1, cx0:cx1], None, fx=scale, fy=scale,
                      interpolation=cv2.INTER_AREA if scale < 1.0 else cv2.INTER_LINEAR)
    crop_f = np.asarray(cv2.GaussianBlur(np.asarray(crop, dtype=np.float32), (0, 0), 1.0), dtype=np.float32)
    return crop_f, scale, (cx0, cy0)


def frame_quads(image_bgr: Image, box: tuple[int, int, int, int], *, margin: float = _FRAME_MARGIN,
                limit: int = _FRAME_LIMIT) -> list[FloatArray]:
    """Up to `limit` card-shaped rectangles (TL, TR, BR, BL in image pixels, partly outside the image) for a
    card cut by one side of the image frame: `box` (x0, y0, x1, y1, a detector box with `margin` over the
    card's bounding box, clipped to the image) touches that side, or nearly (`_FRAME_NEAR`). At every turn
    (`_FRAME_STEP_DEG`) and for a poker and a bridge card's shape, the card whose bounding box fits the box
    across the frame's side, starts at the box's far side and runs on past the frame (`_cut_card`); the best
    supported by edges along their sides inside the image (`_inside_support`) first. None when the box touches
    no side of the frame, or two."""
    height, width = image_bgr.shape[:2]
    x0, y0, x1, y1 = box
    near_x, near_y = max(_FRAME_TOUCH, _FRAME_NEAR * (x1 - x0)), max(_FRAME_TOUCH, _FRAME_NEAR * (y1 - y0))
    touched = [x0 <= near_x, y0 <= near_y, x1 >= width - near_x, y1 >= height - near_y]
    if sum(touched) != 1:
        return []
    frame = _Frame(side=touched.index(True), box=box, size=(width, height), margin=margin)
    cut = [_cut_card(frame, angle=float(angle), aspect=aspect)
           for angle in np.radians(np.arange(0.0, 180.0, _FRAME_STEP_DEG)) for aspect in _CARD_ASPECT]
    quads = [q for q in cut if q is not None]
    if not quads:
        return []
    crop, scale, offset = _work_crop(image_bgr, box)
    support = _inside_support(crop, [(q - np.asarray(offset, np.float32)) * scale for q in quads])
    ranked = [EdgeQuad(corners=quads[i], support=float(support[i])) for i in np.argsort(-support)]
    tolerance = _DUPLICATE * min(x1 - x0, y1 - y0)
    return [q.corners for q in _best_distinct(ranked, limit=limit, tolerance=tolerance)]


def _inside_support(crop: npt.NDArray[np.float32], quads: list[FloatArray]) -> npt.NDArray[np.float64]:
    """Mean edge strength across each quad's sides (ends trimmed), over the points that lie inside `crop`,
    averaged over the sides with at least half their points inside."""
    gx = np.asarray(cv2.Sobel(crop, cv2.CV_32F, 1, 0, ksize=3), dtype=np.float32)
    gy = np.asarray(cv2.Sobel(crop, cv2.CV_32F, 0, 1, ksize=3), dtype=np.float32)
    level = max(float(np.percentile(np.maximum(np.abs(gx), np.abs(gy)), 97)), 1.0)
    along = np.linspace(_SIDE_TRIM, 1.0 - _SIDE_TRIM, 24)
    corners = np.stack(quads).astype(np.float64)  # Q x 4 x 2
    a, b = corners, np.roll(corners, -1, axis=1)
    points = a[:, :, None, :] + along[None, None, :, None] * (b - a)[:, :, None, :]  # Q x 4 x P x 2
    units = (b - a) / np.maximum(np.linalg.norm(b - a, axis=2, keepdims=True), 1e-9)
    normals = np.stack([-units[..., 1], units[..., 0]], axis=2)  # Q x 4 x 2
    map_x, map_y = points[..., 0].astype(np.float32), points[..., 1].astype(np.float32)
    h, w = crop.shape[:2]
    inside = (map_x >= 1) & (map_x < w - 2) & (map_y >= 1) & (map_y < h - 2)
    flat_x, flat_y = map_x.reshape(-1, along.size), map_y.reshape(-1, along.size)
    sx = cv2.remap(gx, flat_x, flat_y, cv2.INTER_LINEAR, borderMode=cv2.BORDER_CONSTANT)
    sy = cv2.remap(gy, flat_x, flat_y, cv2.INTER_LINEAR, borderMode=cv2.BORDER_CONSTANT)
    n = normals.reshape(-1, 1, 1, 2)
    across = np.abs(sx * n[..., 0] + sy * n[..., 1]).reshape(*points.shape[:3], 3)
    strength = np.minimum(_channel_max(across.astype(np.float32)) / level, 1.0)  # Q x 4 x P
    count = inside.sum(axis=2)
    side = np.where(inside, strength, 0.0).sum(axis=2) / np.maximum(count, 1)
    seen = count >= along.size // 2
    return np.asarray(np.where(seen, side, 0.0).sum(axis=1) / np.maximum(seen.sum(axis=1), 1), dtype=np.float64)


@dataclass(frozen=True)
class _Frame:
    """A box (x0, y0, x1, y1) touching the image's side `side` (0 left, 1 top, 2 right, 3 bottom) in an image
    of `size` (width, height); the box is `margin` times the card's bounding box across that side."""

    side: int
    box: tuple[int, int, int, int]
    size: tuple[int, int]
    margin: float


def _cut_card(frame: _Frame, *, angle: float, aspect: float) -> FloatArray | None:
    """The card turned by `angle` (radians) of height / width `aspect` whose bounding box spans the box across
    the frame's side, less the margin, and runs from the box's far side on past the frame; None when less than
    `_FRAME_MIN_INSIDE` of it (along the cut axis) or all of it lies inside the image."""
    x0, y0, x1, y1 = frame.box
    across = 1 if frame.side in (0, 2) else 0  # the axis along which the box holds the card whole (0: x, 1: y)
    lo, hi = (x0, x1) if across == 0 else (y0, y1)
    pad = (hi - lo) * (1.0 - 1.0 / frame.margin) / 2.0
    unit = np.array([[-0.5, -aspect / 2], [0.5, -aspect / 2], [0.5, aspect / 2], [-0.5, aspect / 2]])
    corners = unit @ np.array([[np.cos(angle), -np.sin(angle)], [np.sin(angle), np.cos(angle)]]).T
    extent = corners.max(axis=0) - corners.min(axis=0)
    size = (hi - lo - 2.0 * pad) / extent[across]
    length = size * extent[1 - across]  # the card's bounding box along the cut axis
    towards = -1.0 if frame.side in (0, 1) else 1.0  # from the box's far side toward the frame
    far = {0: x1, 1: y1, 2: x0, 3: y0}[frame.side]
    near = far + towards * pad  # where the card's bounding box starts
    inside = (frame.size[1 - across] - near if towards > 0 else near) / length
    if not _FRAME_MIN_INSIDE <= inside < 1.0:
        return None
    centre = np.zeros(2)
    centre[across] = (lo + hi) / 2.0
    centre[1 - across] = near + towards * length / 2.0
    return np.asarray(centre + corners * size, dtype=np.float32)


def edge_quads(image_bgr: Image, box: tuple[int, int, int, int], *, limit: int = 4) -> list[EdgeQuad]:
    """Up to `limit` card-shaped rectangles along strong straight edges that span `box` (x0, y0, x1, y1 in
    pixels, a detector box with some margin), best supported first, corners in image pixels (in the order
    of the rectangle's sides: callers order them as a card's)."""
    x0, y0, x1, y1 = box
    crop_f, scale, (cx0, cy0) = _work_crop(image_bgr, box)
    gx, gy = _gradients(crop_f)
    level = max(float(np.percentile(np.maximum(gx, gy), 97)), 1.0)
    work_box = ((x0 - cx0) * scale, (y0 - cy0) * scale, (x1 - cx0) * scale, (y1 - cy0) * scale)
    found: list[EdgeQuad] = []
    for angle in _dominant_angles(crop_f):
        for fine in _FINE_DEG:
            found += _rectangles(_turn(crop_f, angle + fine, level=level), work_box)
    kept: list[EdgeQuad] = []
    for complete, budget in ((True, limit), (False, _COMPLETED_LIMIT)):
        chosen = _best_distinct(sorted((q for q in found if q.complete == complete), key=lambda q: -q.support),
                                limit=budget, tolerance=_DUPLICATE * _WORK_PX)
        kept += [q for q in chosen if all(_distinct(q.corners, k.corners, tolerance=1.0) for k in kept)]
    signed = (np.asarray(cv2.Sobel(crop_f, cv2.CV_32F, 1, 0, ksize=3), dtype=np.float32),
              np.asarray(cv2.Sobel(crop_f, cv2.CV_32F, 0, 1, ksize=3), dtype=np.float32))
    refined = [_refine(q, signed, level=level) for q in kept if q.complete]
    kept += [r for r in refined if all(_distinct(r.corners, k.corners, tolerance=1.0) for k in kept)]
    offset = np.array([cx0, cy0], dtype=np.float32)
    return [replace(q, corners=(q.corners / scale + offset).astype(np.float32)) for q in kept]


def _line_support(signed: tuple[FloatArray, FloatArray], points: npt.NDArray[np.float64],
                  normals: npt.NDArray[np.float64], *, level: float) -> npt.NDArray[np.float64]:
    """Mean edge strength across each line of sample points (points: L x P x 2, normals: L x 2)."""
    map_x, map_y = points[..., 0].astype(np.float32), points[..., 1].astype(np.float32)
    gx = cv2.remap(signed[0], map_x, map_y, cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
    gy = cv2.remap(signed[1], map_x, map_y, cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
    across = np.abs(gx * normals[:, None, None, 0] + gy * normals[:, None, None, 1])
    return np.asarray(np.minimum(_channel_max(across.astype(np.float32)) / level, 1.0).mean(axis=1),
                      dtype=np.float64)


def _refine(quad: EdgeQuad, signed: tuple[FloatArray, FloatArray], *, level: float) -> EdgeQuad:
    """`quad` with each side moved and turned a little onto the strongest straight edge near it, as
    perspective and the rectangle search's coarse steps leave it; unchanged when a corner would move far."""
    corners = quad.corners.astype(np.float64)
    short = short_side(corners)
    reach = _REFINE_REACH * short
    offsets = np.linspace(-reach, reach, 2 * max(2, round(reach)) + 1)
    turns = np.radians(_REFINE_TURNS_DEG)
    along = np.linspace(_SIDE_TRIM, 1.0 - _SIDE_TRIM, 24) - 0.5
    lines: list[tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]] = []
    support = 0.0
    for i in range(4):
        a, b = corners[i], corners[(i + 1) % 4]
        length = float(np.linalg.norm(b - a))
        base = np.arctan2(b[1] - a[1], b[0] - a[0])
        angle, shift = (grid.ravel() for grid in np.meshgrid(base + turns, offsets, indexing="ij"))
        units = np.stack([np.cos(angle), np.sin(angle)], axis=1)
        normals = np.stack([-units[:, 1], units[:, 0]], axis=1)
        centres = (a + b) / 2.0 + shift[:, None] * normals
        points = centres[:, None, :] + along[None, :, None] * length * units[:, None, :]
        scores = _line_support(signed, points, normals, level=level)
        best = int(np.argmax(scores))
        support += float(scores[best]) / 4.0
        lines.append((centres[best], units[best]))
    out = meeting_points(lines)
    if out is None or np.abs(out - corners).max() > 2.0 * reach:
        return quad
    return replace(quad, corners=out.astype(np.float32), support=support)


def meeting_points(lines: list[tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]]
                    ) -> npt.NDArray[np.float64] | None:
    """Where each of four lines (point, unit direction) meets the one before it; None when two are parallel."""
    out = np.zeros((4, 2), dtype=np.float64)
    for i in range(4):
        (p, u), (q, v) = lines[i - 1], lines[i]
        det = u[0] * -v[1] - u[1] * -v[0]
        if abs(det) < 1e-6:
            return None
        t = ((q - p)[0] * -v[1] - (q - p)[1] * -v[0]) / det
        out[i] = p + t * u
    return out


def _best_distinct(ranked: list[EdgeQuad], *, limit: int, tolerance: float) -> list[EdgeQuad]:
    """The first `limit` of `ranked`, skipping any within `tolerance` of one already taken."""
    kept: list[EdgeQuad] = []
    for quad in ranked:
        if len(kept) >= limit:
            break
        if all(_distinct(quad.corners, k.corners, tolerance=tolerance) for k in kept):
            kept.append(quad)
    return kept


def _distinct(a: FloatArray, b: FloatArray, *, tolerance: float) -> bool:
    """Whether two rectangles differ by more than `tolerance` at some corner, matching corners in any order."""
    turns = np.stack([np.roll(a, k, axis=0) for k in range(4)])
    return bool((np.abs(turns - b).max(axis=(1, 2)) > tolerance).all())


@dataclass(frozen=True)
class _EdgeField:
    """The work crop's edges: per pixel the signed gradient of the strongest channel (gx, gy), its normal's
    direction in degrees (0..180) and weight (strength over `level`, at most 1); and the per-channel signed
    gradients that `_line_support` samples."""

    direction: npt.NDArray[np.float32]
    weight: npt.NDArray[np.float32]
    signed: tuple[FloatArray, FloatArray]
    level: float


def _edge_field(crop: npt.NDArray[np.float32]) -> _EdgeField:
    sx = np.asarray(cv2.Sobel(crop, cv2.CV_32F, 1, 0, ksize=3), dtype=np.float32)
    sy = np.asarray(cv2.Sobel(crop, cv2.CV_32F, 0, 1, ksize=3), dtype=np.float32)
    channel = (sx * sx + sy * sy).argmax(axis=2)[..., None]
    gx, gy = np.take_along_axis(sx, channel, 2)[..., 0], np.take_along_axis(sy, channel, 2)[..., 0]
    level = max(float(np.percentile(np.maximum(np.abs(gx), np.abs(gy)), 97)), 1.0)
    return _EdgeField(direction=(np.degrees(np.arctan2(gy, gx)) % 180.0).astype(np.float32),
                      weight=np.minimum(np.hypot(gx, gy) / level, 1.0).astype(np.float32), signed=(sx, sy),
                      level=level)


def _line_directions(field: _EdgeField) -> list[float]:
    """Up to `_LINE_DIRECTIONS` edge normal directions (whole degrees, 0..180), strongest first: peaks of the
    weighted direction histogram, smoothed."""
    bins = np.round(field.direction).astype(np.int64).ravel() % 180
    hist = np.bincount(bins, weights=field.weight.ravel(), minlength=180)
    kernel = np.exp(-0.5 * (np.arange(-6, 7) / 2.0) ** 2)
    smooth = np.convolve(np.concatenate([hist[-6:], hist, hist[:6]]), kernel, mode="same")[6:-6]
    peaks = [i for i in np.argsort(smooth)[::-1]
             if smooth[i] >= smooth[i - 1] and smooth[i] >= smooth[(i + 1) % 180]
             and smooth[i] >= _LINE_SHARE * smooth.max()]
    out: list[int] = []
    for i in peaks:
        if len(out) < _LINE_DIRECTIONS and all(min(abs(i - j), 180 - abs(i - j)) >= _LINE_SPREAD_DEG for j in out):
            out.append(int(i))
    return [float(a) for a in out]


def _line_offsets(field: _EdgeField, angle: float) -> npt.NDArray[np.float64]:
    """Offsets r of the strongest straight lines x cos(angle) + y sin(angle) = r: peaks of the weight of the
    edge pixels of about that normal direction, summed along each line."""
    h, w = field.weight.shape
    near = np.abs((field.direction - angle + 90.0) % 180.0 - 90.0) <= _LINE_TOLERANCE_DEG
    ys, xs = np.nonzero(near)
    reach = int(np.ceil(np.hypot(h, w)))
    r = xs * np.cos(np.radians(angle)) + ys * np.sin(np.radians(angle))
    votes = np.bincount(np.round(r).astype(np.int64) + reach, weights=field.weight[near], minlength=2 * reach + 1)
    profile = np.convolve(votes, [0.25, 0.5, 0.25], mode="same").astype(np.float64)
    return (_profile_peaks(profile) - reach).astype(np.float64)


def _parallelograms(a: npt.NDArray[np.float64], b: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """Rows (a0, a1, b0, b1, lacking) from the line offsets of two directions: every pair of each, and every pair
    of one with one line of the other and the fourth line `_LINE_RATIOS` times the pair's distance away (the side
    it lacks: 0 a0, 1 a1, 2 b0, 3 b1; -1 none)."""
    ia, ja = np.triu_indices(len(a), 1)
    ib, jb = np.triu_indices(len(b), 1)
    rows = [np.stack([np.repeat(a[ia], len(ib)), np.repeat(a[ja], len(ib)), np.tile(b[ib], len(ia)),
                      np.tile(b[jb], len(ia)), np.full(len(ia) * len(ib), -1.0)], axis=1)]
    ratios = np.array([*_LINE_RATIOS, *(1.0 / np.array(_LINE_RATIOS))])
    for first, second, single, pair_is_a in ((a[ia], a[ja], b, True), (b[ib], b[jb], a, False)):
        pair, at, ratio, sign = (g.ravel() for g in np.meshgrid(np.arange(len(first)), single, ratios, (1.0, -1.0),
                                                                 indexing="ij"))
        lo, hi = first[pair], second[pair]
        other = at + sign * ratio * (hi - lo)
        lacking = np.where(sign > 0, 3.0, 2.0) if pair_is_a else np.where(sign > 0, 1.0, 0.0)
        ends = np.sort(np.stack([at, other]), axis=0)
        parts = (lo, hi, ends[0], ends[1]) if pair_is_a else (ends[0], ends[1], lo, hi)
        rows.append(np.stack([*parts, lacking], axis=1))
    return np.concatenate(rows)


def _meet(angle_a: float, r_a: npt.NDArray[np.float64], angle_b: float,
          r_b: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """Where the lines x cos(a) + y sin(a) = r_a meet the lines of angle b at r_b (N x 2)."""
    ca, sa, cb, sb = np.cos(angle_a), np.sin(angle_a), np.cos(angle_b), np.sin(angle_b)
    det = ca * sb - sa * cb
    return np.stack([(r_a * sb - sa * r_b) / det, (ca * r_b - r_a * cb) / det], axis=-1)


def line_quads(image_bgr: Image, box: tuple[int, int, int, int], *, limit: int = 4) -> list[EdgeQuad]:
    """Card outlines between the straight lines of two edge directions in `box` (x0, y0, x1, y1 pixels): for
    each pair of the crop's dominant edge directions about a right angle apart, parallelograms between two
    lines of each, or two of one and one of the other with the fourth side a card's proportion away (one side
    hidden), kept when card-shaped (foreshortened cards of a low camera included) and spanning the box, best
    supported by edges along their sides first: up to `limit` whole and `_COMPLETED_LIMIT` completed. Unlike
    `edge_quads`, the two directions are found apart, so a card seen at a slant (not a rectangle in the image)
    is found too."""
    x0, y0, x1, y1 = box
    crop_f, scale, (cx0, cy0) = _work_crop(image_bgr, box)
    field = _edge_field(crop_f)
    directions = _line_directions(field)
    offsets = {angle: _line_offsets(field, angle) for angle in directions}
    quads, lacking = [], []
    for i, first in enumerate(directions):
        for second in directions[i + 1:]:
            if not _LINE_PAIR_DEG[0] <= abs(first - second) <= _LINE_PAIR_DEG[1]:
                continue
            rows = _parallelograms(offsets[first], offsets[second])
            a, b = np.radians(first), np.radians(second)
            quads.append(np.stack([_meet(a, rows[:, 0], b, rows[:, 2]), _meet(a, rows[:, 0], b, rows[:, 3]),
                                   _meet(a, rows[:, 1], b, rows[:, 3]), _meet(a, rows[:, 1], b, rows[:, 2])], axis=1))
            lacking.append(rows[:, 4].astype(np.int64))
    if not quads:
        return []
    corners, lack = np.concatenate(quads), np.concatenate(lacking)
    keep = _card_like(corners, box=((x0 - cx0) * scale, (y0 - cy0) * scale, (x1 - cx0) * scale, (y1 - cy0) * scale),
                      shortest=0.25 * min(crop_f.shape[:2]))
    if not keep.any():
        return []
    corners, lack = corners[keep], lack[keep]
    sides = _quad_side_supports(field, corners)  # sides on a0, b1, a1, b0
    hidden = np.zeros(sides.shape, dtype=bool)
    has_hidden = np.flatnonzero(lack >= 0)
    hidden[has_hidden, np.array([0, 2, 3, 1])[lack[has_hidden]]] = True
    support = np.where(hidden, 0.0, sides).sum(axis=1) / np.where(lack >= 0, 3.0, 4.0)
    found = [EdgeQuad(corners=c.astype(np.float32), support=float(s), complete=bool(k < 0))
             for c, s, k in zip(corners, support, lack, strict=True)]
    kept: list[EdgeQuad] = []
    for complete, budget in ((True, limit), (False, _COMPLETED_LIMIT)):
        kept += _best_distinct(sorted((q for q in found if q.complete == complete), key=lambda q: -q.support),
                               limit=budget, tolerance=_DUPLICATE * _WORK_PX)
    offset = np.array([cx0, cy0], dtype=np.float32)
    return [replace(q, corners=(q.corners / scale + offset).astype(np.float32)) for q in kept]


def _card_like(corners: npt.NDArray[np.float64], *, box: tuple[float, float, float, float],
               shortest: float) -> npt.NDArray[np.bool_]:
    """Which parallelograms (N x 4 x 2) have a card's proportions (`_LINE_ASPECT`), a short side of at least
    `shortest` and a bounding box that covers the box and is mostly covered by it."""
    first = np.linalg.norm(corners[:, 1] - corners[:, 0], axis=1)
    second = np.linalg.norm(corners[:, 3] - corners[:, 0], axis=1)
    short, long = np.minimum(first, second), np.maximum(first, second)
    shaped = (long >= _LINE_ASPECT[0] * short) & (long <= _LINE_ASPECT[1] * short) & (short >= shortest)
    return np.asarray(shaped & _covers_box(corners.min(axis=1), corners.max(axis=1), box), dtype=np.bool_)


def _quad_side_supports(field: _EdgeField, corners: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """Mean edge strength across each side of each quadrilateral (N x 4 x 2 -> N x 4), ends trimmed."""
    along = np.linspace(_SIDE_TRIM, 1.0 - _SIDE_TRIM, 16)
    ends = np.roll(corners, -1, axis=1)
    points = corners[:, :, None, :] + along[None, None, :, None] * (ends - corners)[:, :, None, :]
    units = (ends - corners) / np.maximum(np.linalg.norm(ends - corners, axis=2, keepdims=True), 1e-9)
    normals = np.stack([-units[..., 1], units[..., 0]], axis=-1)
    points, normals = points.reshape(-1, len(along), 2), normals.reshape(-1, 2)
    chunk = 8192  # lines per remap (its maps must stay under 32767 rows)
    support = np.concatenate([_line_support(field.signed, points[i:i + chunk], normals[i:i + chunk],
                                            level=field.level) for i in range(0, len(points), chunk)])
    return support.reshape(len(corners), 4)
