"""Read a face-up card's rank and suit: a small trained classifier on the whole card, and an index matcher.

`recognise_card(image, box=...)` finds candidate outlines of the card inside a detector box (the region of the
paper's colour, with and without cutting it along image edges; a quadrilateral fitted to its sides, as
perspective makes it; and card-shaped cuts of it when it is the card merged with a neighbour). The card
classifier (`cards_cnn`: a CNN trained on rendered cards, `floorman models train-cards`) reads each outline
warped upright to a 64 x 88 patch, in both orientations, together with card-shaped outlines fitted to the box
(`box_quads`); the outlines vote for a card, each with its confidence to the fourth power, and that card's most
confident outline wins, larger ones preferred a little (`_classify`). When it is not sure, it reads the
card-shaped outlines along straight edges in the box too (`cards_outline.edge_quads`: for a card merged in
colour with its neighbour, with an end covered, or in a box off its centre; `cards_outline.line_quads`: outlines
between the lines of two directions found apart, for a card seen at a slant) and, for a card cut by the image
frame, the card run on past it (`cards_outline.frame_quads`), and chooses again; still not sure, it adds the card
run on past each side of the box (a box around the visible part of a covered card; `_classify_in_stages`).
Still not sure, the index matcher reads too (`cards_matcher`): each outline rectified to a canonical upright
card, the index read at the four corner positions and scored against templates of every simulator deck design;
it reads the colour-region outlines that overlap the classifier's outline (`_same_card`: a region merged
with a neighbour holds the neighbour's index too), then that outline; disagreeing with the classifier, it also
searches for the index around each corner of the classifier's outline (`cards_corner`: an outline a few per cent
off the card puts fixed crops beside the glyphs), kept when of the classifier's suit, or, when the corners agree
on the rank glyph only, that rank with the classifier's suit (`cards_matcher.rank_reading`). The two are combined
(`_combine`): agreeing, the confidence rises; disagreeing, the classifier wins when fairly sure (it measures far
better) unless several index corners agree on the matcher's reading, else the more confident, at a lower
confidence. With `corners` (from a keypoint detector, say) the outline search is skipped.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, replace
from typing import Any

import cv2
import numpy as np
import numpy.typing as npt

from floorman.core.cards import Card
from floorman.core.geometry import apply_homography, invert_homography, short_side
from floorman.vision.cards_cnn import CardClassifier, CnnReading, default_classifier
from floorman.vision.cards_corner import search_corners
from floorman.vision.cards_index import IndexTemplates
from floorman.vision.cards_matcher import (
    SINGLE_CORNER,
    IndexReading,
    default_templates,
    rank_reading,
    read_rectified,
    reading_of_corners,
    rectify,
    resolution_factor,
    score_index,
)
from floorman.vision.cards_outline import edge_quads, frame_quads, line_quads, meeting_points

log = logging.getLogger(__name__)

FloatArray = npt.NDArray[np.float32]
Homography = npt.NDArray[np.float64]  # 3x3, image pixels to table mm
Image = npt.NDArray[np.uint8]

MIN_CONFIDENCE = 0.35  # below this the reading is reported as card None
_MIN_CARD_PX = 12.0  # shortest side of a card outline worth reading
_MIN_CONTRAST = 25.0  # colour distance of the surroundings from the paper over the paper's own spread
_OPENING_FRACTION = 0.04  # opening kernel of the paper mask, as a fraction of the box's short side
_GOOD_ENOUGH = 0.9  # a reading this confident ends the search over outline candidates
_MAX_OFF_CENTRE = 0.2  # an outline's centre may be this far from the box centre (fraction of the box side)
_MIN_BOX_FILL = 0.5  # and its bounding box must cover this much of the box
_DISTANCE_CAP = 80.0  # colour distances from the paper above this count as one (ink and table alike)
_SIDE_TOLERANCE = 0.08  # outline points this close to a side (fraction of the card width) fit its line
_MAX_CORNER_SHIFT = 0.15  # how far fitting the sides may move a corner (fraction of the card width)
_CANNY = (30, 80)  # hysteresis thresholds of the edges that cut the paper mask
_CARD_ASPECT = (1.397, 1.544)  # height / width of poker and bridge cards
_CNN_SURE = 0.9  # a classifier reading this confident is taken without the index matcher
_AREA_PREFERENCE = 0.15  # score bonus of the largest outline candidate over a vanishing one
_CNN_TRUSTED = 0.5  # a classifier reading this confident wins over a disagreeing index matcher
_INDEX_CORNERS_SURE = 3  # an index matcher reading this many agreeing corners
_INDEX_SURE = 0.9  # at this confidence wins over a disagreeing classifier that is unsure,
_INDEX_SUIT_CORNERS = 2  # (this many when they differ in suit only, on an outline `_INDEX_MIN_PX` wide),
_INDEX_RANK_SURE = 0.6  # and at this one from any corner when the two differ in rank only (one corner: 0.7 at most)
_INDEX_MIN_PX = 90.0  # on outlines this wide the index matcher may outvote the classifier's count of pips,
_INDEX_CLEAR_MIN_PX = 60.0  # on these when it searched for its index or two corners agree, at `_INDEX_CLEAR`
_INDEX_CLEAR = 0.65  # (one fixed crop alone misreads glyphs below 90 px: a 2H of 74 px read QH at 0.7)
_SAME_OUTLINE_IOU = 0.75  # and then only when it read its index on an outline overlapping the classifier's this much
_PIP_RANKS = ("2", "3", "4", "5", "6", "7", "8", "9", "10")
_RANK_DOUBT = 0.4  # share of the classifier's confidence taken off an index matcher that outvotes it on rank
_BOX_MARGIN = 1.15  # a detector box grown by its margin, over the card's own bounding box
_BOX_STEP_DEG = 5.0  # turns tried by `box_quads`
_SAME_CARD_IOU = 0.6  # the index matcher reads the colour outlines overlapping the classifier's this much
_SQUARE_ASPECT = 1.15  # a found outline whose long side is shorter than this times its short one is read both ways
_VOTE_POWER = 4  # each outline votes for its card with its confidence to this power
_CUT_MIN_PX = 60.0  # the card run on past the sides of its box is tried on outlines this wide
_TRIAL_MM = 60.0  # `plane_box_quads`: the card width whose image extent gives the extent per mm
_BOX_FIT = 0.06  # how far a card-shaped outline's bounding box may be off the box, a share of its long side


@dataclass(frozen=True)
class CardReading:
    """What `recognise_card` read: the card (None when unsure), a confidence in 0..1, the card's outline
    (TL, TR, BR, BL of the upright or upside-down card, in image pixels; None when no outline was found), how
    many corner indices the index matcher read and how many agreed (0 when it did not run), and which reader
    gave the card: "classifier", "index", "both" (they agreed) or "none"."""

    card: str | None
    confidence: float
    corners_px: FloatArray | None
    corners_read: int = 0
    corners_agreeing: int = 0
    source: str = "none"


def _check_image(image_bgr: object) -> Image:
    if not isinstance(image_bgr, np.ndarray):
        raise ValueError(f"expected a BGR image as a numpy array, got {type(image_bgr).__name__}")
    if image_bgr.ndim != 3 or image_bgr.shape[2] != 3 or image_bgr.dtype != np.uint8:
        raise ValueError(f"expected a BGR image of shape (H, W, 3) and dtype uint8, got shape {image_bgr.shape} "
                         f"and dtype {image_bgr.dtype}")
    return image_bgr


def _check_box(box: object, shape: tuple[int, ...]) -> tuple[int, int, int, int]:
    values = np.asarray(box, dtype=np.float64).ravel() if box is not None else np.zeros(0)
    if values.shape != (4,) or not np.isfinite(values).all():
        raise ValueError(f"expected box as 4 finite numbers x0, y0, x1, y1, got {box!r}")
    h, w = shape[:2]
    x0, y0 = max(0, int(np.floor(values[0]))), max(0, int(np.floor(values[1])))
    x1, y1 = min(w, int(np.ceil(values[2]))), min(h, int(np.ceil(values[3])))
    if x1 - x0 < 2 or y1 - y0 < 2:
        raise ValueError(f"expected a box with x1 > x0 and y1 > y0 inside the {w}x{h} image, got {box!r}")
    return x0, y0, x1, y1


def _check_homography(homography: object) -> Homography:
    matrix = np.asarray(homography, dtype=np.float64)
    if matrix.shape != (3, 3) or not np.isfinite(matrix).all():
        got = f"shape {matrix.shape}" if matrix.shape != (3, 3) else "non-finite values"
        raise ValueError(f"pixels_to_mm: expected a finite 3x3 homography, got {got}")
    return matrix


def _check_corners(corners: object) -> FloatArray:
    values = np.asarray(corners, dtype=np.float64)
    if values.shape != (4, 2) or not np.isfinite(values).all():
        raise ValueError(f"expected corners as a (4, 2) array of finite pixel positions, got {corners!r}")
    return values.astype(np.float32)


def order_corners(points: FloatArray) -> FloatArray:
    """Four outline points as TL, TR, BR, BL of a portrait card: clockwise on screen, first side the short one."""
    pts = np.asarray(points, dtype=np.float32).reshape(4, 2)
    centre = pts.mean(axis=0)
    angles = np.arctan2(pts[:, 1] - centre[1], pts[:, 0] - centre[0])
    pts = pts[np.argsort(angles)]  # clockwise on screen (y grows downwards)
    if np.linalg.norm(pts[1] - pts[0]) > np.linalg.norm(pts[2] - pts[1]):
        pts = np.roll(pts, -1, axis=0)
    return pts


def _paper_mask(crop: Image) -> npt.NDArray[np.uint8] | None:
    """Pixels close in colour to the paper (the colour of the brightest tenth of the crop), by Otsu."""
    smooth = cv2.GaussianBlur(crop, (0, 0), 1.0).astype(np.float32)
    pixels = smooth.reshape(-1, 3)
    brightness = pixels.sum(axis=1)
    paper = np.median(pixels[brightness >= np.percentile(brightness, 90)], axis=0)
    distance = np.linalg.norm(smooth - paper, axis=2)
    distance_u8 = np.clip(distance, 0, _DISTANCE_CAP).astype(np.uint8)
    _, far = cv2.threshold(distance_u8, 0, 255, cv2.THRESH_BINARY + cv2.THRESH_OTSU)
    near = far == 0
    if near.all() or not near.any() or distance[~near].mean() < distance[near].mean() + _MIN_CONTRAST:
        return None
    return np.where(near, 255, 0).astype(np.uint8)


def _not_table_mask(crop: Image) -> npt.NDArray[np.uint8] | None:
    """Pixels far in colour from the table (the median colour of the crop's border), by Otsu."""
    smooth = cv2.GaussianBlur(crop, (0, 0), 1.0).astype(np.float32)
    border = np.concatenate([smooth[:2].reshape(-1, 3), smooth[-2:].reshape(-1, 3),
                             smooth[:, :2].reshape(-1, 3), smooth[:, -2:].reshape(-1, 3)])
    distance = np.linalg.norm(smooth - np.median(border, axis=0), axis=2)
    distance_u8 = np.clip(distance, 0, _DISTANCE_CAP).astype(np.uint8)
    _, far = cv2.threshold(distance_u8, 0, 255, cv2.THRESH_BINARY + cv2.THRESH_OTSU)
    card = far > 0
    if card.all() or not card.any() or distance[card].mean() < distance[~card].mean() + _MIN_CONTRAST:
        return None
    return np.where(card, 255, 0).astype(np.uint8)


def _central_quad(mask: npt.NDArray[np.uint8], *, opening: int) -> FloatArray | None:
    """The rotated rectangle around the region of `mask` (holes filled, opened) under the crop's centre, or
    around the largest region when none is."""
    outlines, _ = cv2.findContours(mask, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
    filled = np.zeros_like(mask)
    cv2.drawContours(filled, outlines, -1, 255, thickness=cv2.FILLED)  # the pips and the court figure
    kernel = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (opening, opening))
    opened = cv2.morphologyEx(filled, cv2.MORPH_OPEN, kernel)
    count, labels, stats, _ = cv2.connectedComponentsWithStats(opened, connectivity=8)
    if count < 2:
        return None
    h, w = labels.shape
    label = int(labels[h // 2, w // 2])
    if label == 0:
        label = 1 + int(np.argmax(stats[1:, cv2.CC_STAT_AREA]))
    contours, _ = cv2.findContours((labels == label).astype(np.uint8), cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)
    outline = max(contours, key=len).reshape(-1, 2).astype(np.float32)
    rect = cv2.minAreaRect(cv2.convexHull(outline))
    if min(rect[1]) < _MIN_CARD_PX:
        return None
    box = order_corners(np.asarray(cv2.boxPoints(rect), dtype=np.float32))
    return _fit_sides(outline, box)


def _fit_sides(outline: FloatArray, box: FloatArray) -> FloatArray:
    """`box` (TL, TR, BR, BL) refined to a general quadrilateral, as perspective makes a card: a line fitted to
    the outline points along the middle of each side, and the corners where neighbouring lines meet. Returns
    `box` unchanged when a side has too few points or a corner moves implausibly far."""
    short = short_side(box)
    lines: list[tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]] = []
    for i in range(4):
        a, b = box[i].astype(np.float64), box[(i + 1) % 4].astype(np.float64)
        direction = (b - a) / max(float(np.linalg.norm(b - a)), 1e-6)
        rel = outline.astype(np.float64) - a
        along = rel @ direction / max(float(np.linalg.norm(b - a)), 1e-6)
        across = np.abs(rel @ np.array([-direction[1], direction[0]]))
        near = outline[(along > 0.15) & (along < 0.85) & (across < _SIDE_TOLERANCE * short)]
        if len(near) < 5:
            return box
        vx, vy, x0, y0 = cv2.fitLine(near, cv2.DIST_HUBER, 0, 0.01, 0.01).ravel()
        lines.append((np.array([x0, y0], dtype=np.float64), np.array([vx, vy], dtype=np.float64)))
    met = meeting_points(lines)
    if met is None:
        return box
    corners = met.astype(np.float32)
    if np.abs(corners - box).max() > _MAX_CORNER_SHIFT * short:
        return box
    return corners


def upright_on_table(quads: list[FloatArray], pixels_to_mm: Homography | None) -> list[FloatArray]:
    """`quads` (ordered by `order_corners`), each turned a quarter where its first side is the longer one on the
    table (`pixels_to_mm`: a calibration's homography; None leaves them as they are). A card lying along the line
    of sight of a camera low over the table is foreshortened past square: from the scenarios' tilted preset at
    1280x720 (~50 degrees from vertical) a card 63.5 x 88.9 mm shows 29 x 25 px, its long side the shorter one in
    the image, and `order_corners` turned it a quarter (pips on their side: a 5S read AC, a 2D 6D, session 19)."""
    if pixels_to_mm is None:
        return quads
    out = []
    for quad in quads:
        on_table = apply_homography(pixels_to_mm, quad.astype(np.float64))
        turned = np.linalg.norm(on_table[1] - on_table[0]) > np.linalg.norm(on_table[2] - on_table[1])
        out.append(np.roll(quad, -1, axis=0) if turned else quad)
    return out


def find_card_quads(image_bgr: Image, box: tuple[int, int, int, int]) -> list[FloatArray]:
    """Outlines of the card inside `box`, most likely first: the quadrilateral around the central region of the
    paper's colour (holes filled, opened to drop table texture and thin bridges to neighbours), then around the
    region far from the table's colour, then around the paper region cut along image edges (for a table of
    nearly the paper's colour). Outlines off the box's centre or much smaller than the box are dropped."""
    x0, y0, x1, y1 = box
    crop = image_bgr[y0:y1, x0:x1]
    opening = max(3, round(_OPENING_FRACTION * min(x1 - x0, y1 - y0)))
    paper = _paper_mask(crop)
    variants = [paper, _not_table_mask(crop)]
    if paper is not None:
        gray = cv2.GaussianBlur(cv2.cvtColor(crop, cv2.COLOR_BGR2GRAY), (0, 0), 1.0)
        edges = cv2.dilate(cv2.Canny(gray, _CANNY[0], _CANNY[1]), np.ones((3, 3), np.uint8))
        variants.append(np.where(edges > 0, 0, paper).astype(np.uint8))
    quads: list[FloatArray] = []
    for variant in variants:
        if variant is None:
            continue
        quad = _central_quad(variant, opening=opening)
        if quad is None or any(np.abs(quad - q).max() < 2.0 for q in quads):
            continue
        if _fills_box(quad, width=x1 - x0, height=y1 - y0):
            quads.append(quad)
    return [order_corners(q + np.array([x0, y0], dtype=np.float32)) for q in quads]


def _fills_box(quad: FloatArray, *, width: int, height: int) -> bool:
    """Whether `quad` (in box coordinates) is centred in the box and spans most of it, as the card it was
    drawn around should."""
    lo, hi = quad.min(axis=0), quad.max(axis=0)
    centre = (lo + hi) / 2.0
    off_centre = np.abs(centre - np.array([width, height]) / 2.0) / np.array([width, height])
    area = float(np.prod(np.clip(hi, 0, [width, height]) - np.clip(lo, 0, [width, height])))
    return bool(off_centre.max() <= _MAX_OFF_CENTRE and area >= _MIN_BOX_FILL * width * height)


def quad_candidates(quad: FloatArray, *, pixels_to_mm: Homography | None = None) -> list[FloatArray]:
    """`quad` and, when its aspect is not a card's, the card-shaped quads cut from either end of it (the region
    found may be the card merged with a neighbour) or, when it is too short, grown from either end (the region
    may be the visible part of a card partly covered along its length). With a calibration's homography
    (`pixels_to_mm`) the aspect is the table's and each quad's first side its shorter there (`upright_on_table`)."""
    quad = upright_on_table([quad], pixels_to_mm)[0]
    tl, tr, br, bl = quad
    sides = quad if pixels_to_mm is None else apply_homography(pixels_to_mm, quad.astype(np.float64))
    width, height = float(np.linalg.norm(sides[1] - sides[0])), float(np.linalg.norm(sides[3] - sides[0]))
    aspect = height / max(width, 1e-6)
    out = [quad]
    if aspect > _CARD_ASPECT[1] * 1.05:
        for ratio in _CARD_ASPECT:
            t = width * ratio / height
            out += [np.array([tl, tr, tr + t * (br - tr), tl + t * (bl - tl)], dtype=np.float32),
                    np.array([bl + t * (tl - bl), br + t * (tr - br), br, bl], dtype=np.float32)]
    elif aspect < _CARD_ASPECT[0] * 0.95:
        t = height / _CARD_ASPECT[0] / width
        e = width * _CARD_ASPECT[0] / height
        out += [np.array([tl, tl + t * (tr - tl), bl + t * (br - bl), bl], dtype=np.float32),
                np.array([tr + t * (tl - tr), tr, br, br + t * (bl - br)], dtype=np.float32),
                np.array([tl, tr, tr + e * (br - tr), tl + e * (bl - tl)], dtype=np.float32),
                np.array([bl + e * (tl - bl), br + e * (tr - br), br, bl], dtype=np.float32)]
    return upright_on_table([order_corners(q) for q in out], pixels_to_mm)


def box_quads(box: tuple[int, int, int, int], *, limit: int = 6) -> list[FloatArray]:
    """Card-shaped outlines whose bounding box is `box` shrunk by the detector margin: for each turn in steps
    of `_BOX_STEP_DEG`, the card size that best fits the box, kept when it fits within `_BOX_FIT`; the best
    `limit` fits. A fallback for a card whose outline the colour regions do not give (on a table of nearly the
    paper's colour, overlapped by its neighbours), for the classifier to choose from."""
    x0, y0, x1, y1 = box
    centre = np.array([(x0 + x1) / 2.0, (y0 + y1) / 2.0])
    size = np.array([x1 - x0, y1 - y0], dtype=np.float64) / _BOX_MARGIN
    fits: list[tuple[float, FloatArray]] = []
    for aspect in _CARD_ASPECT:
        for angle in np.radians(np.arange(0.0, 180.0, _BOX_STEP_DEG)):
            corners = _table_card(aspect, angle)
            extent = corners.max(axis=0) - corners.min(axis=0)
            width = float(extent @ size / (extent @ extent))
            error = float(np.abs(extent * width - size).max() / size.max())
            if error <= _BOX_FIT:
                fits.append((error, order_corners((centre + corners * width).astype(np.float32))))
    return [quad for _, quad in sorted(fits, key=lambda item: item[0])[:limit]]


def plane_box_quads(box: tuple[int, int, int, int], pixels_to_mm: Homography, *,
                    limit: int = 6) -> list[FloatArray]:
    """`box_quads` on the table: card-shaped outlines drawn on the table's plane (`pixels_to_mm`, a calibration's
    homography) and seen through the camera, whose bounding box is `box` shrunk by the detector margin; for each
    turn in steps of `_BOX_STEP_DEG`, the card size that best fits, kept when it fits within `_BOX_FIT`; the best
    `limit` fits. Seen at a slant a card is no rectangle of a card's aspect in the image, so `box_quads` fits
    none that is its outline: on cameras 35-55 degrees from vertical, cards read from their true outline 96.3 %,
    from the box 86.9 % (dev seed 19000, session 20)."""
    shapes = np.stack([_table_card(aspect, angle) for aspect in _CARD_ASPECT
                       for angle in np.radians(np.arange(0.0, 180.0, _BOX_STEP_DEG))])
    fitted = _fit_on_table(shapes, box=box, pixels_to_mm=pixels_to_mm)
    if fitted is None:
        return []
    errors, corners = fitted
    best = [i for i in np.argsort(errors, kind="stable") if errors[i] <= _BOX_FIT][:limit]
    return [order_corners(corners[i].astype(np.float32)) for i in best]


def _table_card(aspect: float, angle: float) -> npt.NDArray[np.float64]:
    """The corners of a card 1 wide and `aspect` long (mm on the table, pixels in the image), turned `angle` radians
    about its centre."""
    unit = np.array([[-0.5, -aspect / 2], [0.5, -aspect / 2], [0.5, aspect / 2], [-0.5, aspect / 2]])
    turn = np.array([[np.cos(angle), -np.sin(angle)], [np.sin(angle), np.cos(angle)]])
    result: npt.NDArray[np.float64] = unit @ turn.T
    return result


def _fit_on_table(shapes: npt.NDArray[np.float64], *, box: tuple[int, int, int, int], pixels_to_mm: Homography
                  ) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]] | None:
    """For each card of `shapes` (K, 4, 2: table mm for a card 1 mm wide) the one whose image bounding box best
    fits the box shrunk by the margin: its width by least squares on the box's extent, its centre moved until the
    bounding box is centred on the box's (three rounds). Returns each fit's error (a share of the box's long side)
    and its image corners (K, 4, 2); None when the box or a card lies off the plane (past the horizon)."""
    x0, y0, x1, y1 = box
    size = np.array([x1 - x0, y1 - y0], dtype=np.float64) / _BOX_MARGIN
    target = np.array([[(x0 + x1) / 2.0, (y0 + y1) / 2.0]])
    to_image = invert_homography(pixels_to_mm)
    k = len(shapes)

    def image_of(centres: npt.NDArray[np.float64], widths: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
        on_table = centres[:, None, :] + shapes * widths[:, None, None]
        return apply_homography(to_image, on_table.reshape(-1, 2)).reshape(k, 4, 2)

    try:
        centres = np.repeat(apply_homography(pixels_to_mm, target), k, axis=0)
        widths = np.full(k, _TRIAL_MM)
        for _ in range(3):
            trial = image_of(centres, np.full(k, _TRIAL_MM))
            extent = (trial.max(axis=1) - trial.min(axis=1)) / _TRIAL_MM
            widths = (extent @ size) / np.maximum((extent * extent).sum(axis=1), 1e-12)
            corners = image_of(centres, widths)
            middle = (corners.max(axis=1) + corners.min(axis=1)) / 2.0
            centres = apply_homography(pixels_to_mm, apply_homography(to_image, centres) + (target - middle))
        corners = image_of(centres, widths)
    except ValueError:  # a point beyond the horizon: no card there
        return None
    errors = np.abs(corners.max(axis=1) - corners.min(axis=1) - size).max(axis=1) / size.max()
    return errors, corners


def recognise_card(image_bgr: Any, *, box: Any = None, corners: Any = None, templates: IndexTemplates | None = None,
                   classifier: CardClassifier | None = None, use_classifier: bool = True,
                   min_confidence: float = MIN_CONFIDENCE, pixels_to_mm: Any = None) -> CardReading:
    """Read the face-up card inside `box` (x0, y0, x1, y1 with some margin) or with outline `corners`
    (TL, TR, BR, BL pixels; skips the outline search). Returns card None when unsure (confidence under
    `min_confidence`; 0 gives every reading, for a benchmark to choose the threshold).

    The classifier (`classifier`, default the shipped one; none with `use_classifier=False`) reads every
    outline candidate; when its best reading is not sure, the index matcher reads too, and the two are
    combined (`_combine`). `pixels_to_mm`: the calibration's homography (image pixels to table mm), when there is
    one: each outline's top is then its short side on the table, not in the image (`upright_on_table`)."""
    image = _check_image(image_bgr)
    to_mm = None if pixels_to_mm is None else _check_homography(pixels_to_mm)
    if box is None and corners is None:
        raise ValueError("expected a box or corners, got neither")
    if corners is not None:
        quads = upright_on_table([order_corners(_check_corners(corners))], to_mm)
        candidates = quads
    else:
        quads = find_card_quads(image, _check_box(box, image.shape))  # turned upright by `quad_candidates`
        candidates = [c for quad in quads for c in quad_candidates(quad, pixels_to_mm=to_mm)]
    net = None if not use_classifier else classifier if classifier is not None else default_classifier()
    learned: tuple[CnnReading, FloatArray] | None = None
    if net is not None:
        learned = _classify_in_stages(net, image, candidates, box=None if corners is not None else box,
                                      pixels_to_mm=to_mm)
    if learned is not None and learned[0].confidence >= _CNN_SURE:
        reading = CardReading(card=learned[0].card, confidence=learned[0].confidence, corners_px=learned[1],
                              source="classifier")
    else:
        outlines = quads if learned is None or corners is not None else _same_card(quads, learned[1])
        index, outline = _best_reading(image, outlines, templates=templates, pixels_to_mm=to_mm)
        if learned is not None:
            index, outline = _searched_reading(image, learned, index=index, outline=outline, templates=templates)
        reading = _combine(learned, index, outline)
    if reading.card is None or reading.confidence < min_confidence:
        log.debug("card unsure: best %s at confidence %.2f", reading.card, reading.confidence)
        return replace(reading, card=None)
    return replace(reading, card=str(Card.parse(reading.card)))


def _classify_in_stages(net: CardClassifier, image: Image, candidates: list[FloatArray], *, box: Any,
                        pixels_to_mm: Homography | None = None) -> tuple[CnnReading, FloatArray] | None:
    """The classifier's choice among the colour-region outlines `candidates` and the card-shaped outlines
    fitted to `box` (`box_quads`); when it is not sure (`_CNN_SURE`), among those and the outlines along
    straight edges in the box too (`cards_outline.edge_quads`: the card merged with a neighbour in colour,
    or on a table of its colour; `cards_outline.line_quads`: the same seen at a slant, no longer a rectangle)
    and, for a box at the image's edge, the card run on past the frame (`cards_outline.frame_quads`); still
    unsure, among those and the card run on past each side of the box in turn (`_box_cut_quads`: a box around
    the visible part of a card under a hand or a card; on outlines `_CUT_MIN_PX` wide, as on smaller ones they
    swayed the vote between spades and clubs either way), kept when it reads another card or is sure (up to 16
    more outlines, most reading the card already chosen, raise its share of the vote without new evidence: a
    6C under a chip read 8C at 0.39 rose to 0.46 and outvoted the index). None `box`: `candidates` alone. Every
    outline turned upright on the table with a calibration's homography (`pixels_to_mm`, `upright_on_table`)."""
    if box is None:
        return _classify(net, image, candidates)
    pixel_box = _check_box(box, image.shape)
    fitted = box_quads(pixel_box) if pixels_to_mm is None else plane_box_quads(pixel_box, pixels_to_mm)
    first = candidates + upright_on_table(fitted, pixels_to_mm)
    known = net.read(image, first)
    learned = _classify(net, image, first, known=known)
    if learned is not None and learned[0].confidence >= _CNN_SURE:
        return learned
    lines = [order_corners(q.corners) for q in line_quads(image, pixel_box)]
    more = [order_corners(q.corners) for q in edge_quads(image, pixel_box)] + lines
    if pixels_to_mm is None:  # with a calibration the table tells which sides are short: turned, they are `lines`
        more += _turned_a_quarter(lines)
    more += [order_corners(q) for q in frame_quads(image, pixel_box)]
    more = upright_on_table(more, pixels_to_mm)
    known = known + net.read(image, more)
    learned = _classify(net, image, first + more, known=known)
    if learned is not None and (learned[0].confidence >= _CNN_SURE or short_side(learned[1]) < _CUT_MIN_PX):
        return learned
    cut = _classify(net, image, first + more + upright_on_table(_box_cut_quads(image, pixel_box), pixels_to_mm),
                    known=known)
    if cut is None or learned is None or cut[0].card != learned[0].card or cut[0].confidence >= _CNN_SURE:
        return cut
    return learned  # the outlines past the box re-read the same card: its vote share grows, its evidence does not


def _box_cut_quads(image: Image, box: tuple[int, int, int, int]) -> list[FloatArray]:
    """The outlines of a card whose box is its visible part only, cut along one of the box's sides by what covers
    it (a hand, a card): `cards_outline.frame_quads` for the image cut along each side of the box in turn, that
    side taken for the frame (the card runs on past it, under the cover)."""
    x0, y0, x1, y1 = box
    out: list[FloatArray] = []
    for (cx, cy), part in (((x0, 0), image[:, x0:]), ((0, y0), image[y0:]), ((0, 0), image[:, :x1]),
                           ((0, 0), image[:y1])):
        offset = np.array([cx, cy], dtype=np.float32)
        out += [order_corners(q + offset) for q in frame_quads(part, (x0 - cx, y0 - cy, x1 - cx, y1 - cy))]
    return out


def _turned_a_quarter(quads: list[FloatArray]) -> list[FloatArray]:
    """The nearly square ones of `quads` with their corners taken one on (TR, BR, BL, TL): a card seen at a
    slant from a low camera is foreshortened, so which of its sides are the short ones is not clear from the
    image (`order_corners` takes the shorter)."""
    out = []
    for quad in quads:
        first, second = float(np.linalg.norm(quad[1] - quad[0])), float(np.linalg.norm(quad[2] - quad[1]))
        if second < _SQUARE_ASPECT * first:
            out.append(np.roll(quad, -1, axis=0))
    return out


def _classify(net: CardClassifier, image: Image, candidates: list[FloatArray], *,
              known: list[CnnReading] | None = None) -> tuple[CnnReading, FloatArray] | None:
    """The classifier's choice among `candidates`: the card with the most votes (each outline's confidence to
    the power `_VOTE_POWER`: an outline spanning this card and its neighbour may read another card confidently,
    but the outlines of the card itself mostly agree), its most confident outline, larger ones preferred a
    little (`_AREA_PREFERENCE`: an outline cut short hides pips, so a 9 may read as a 7, but an outline grown
    past the card adds none), at its confidence times the square root of its card's share of the confidence
    summed over all outlines; and that outline. `known`: the readings of the first candidates, already read."""
    if not candidates:
        return None
    done = known if known is not None else []
    readings = done + net.read(image, candidates[len(done):])
    areas = np.array([cv2.contourArea(c.reshape(-1, 1, 2)) for c in candidates], dtype=np.float64)
    scores = [r.confidence + _AREA_PREFERENCE * a / max(float(areas.max()), 1e-9) for r, a in zip(readings, areas,
                                                                                                  strict=True)]
    votes: dict[str, float] = {}
    for reading in readings:
        votes[reading.card] = votes.get(reading.card, 0.0) + reading.confidence ** _VOTE_POWER
    card = max(votes, key=lambda c: votes[c])
    best = max((i for i, r in enumerate(readings) if r.card == card), key=lambda i: scores[i])
    share = sum(r.confidence for r in readings if r.card == readings[best].card) / max(
        sum(r.confidence for r in readings), 1e-9)
    return replace(readings[best], confidence=readings[best].confidence * float(np.sqrt(share))), candidates[best]


def _same_card(quads: list[FloatArray], chosen: FloatArray) -> list[FloatArray]:
    """The colour-region outlines `quads` that overlap the classifier's `chosen` outline by at least
    `_SAME_CARD_IOU` (a region merged with a neighbour holds the neighbour's index too), then `chosen`."""
    return [*(quad for quad in quads if _iou(quad, chosen) >= _SAME_CARD_IOU), chosen]


def _iou(first: FloatArray, second: FloatArray) -> float:
    """Intersection over union of two convex outlines."""
    a, b = first.reshape(-1, 1, 2).astype(np.float32), second.reshape(-1, 1, 2).astype(np.float32)
    inter, _ = cv2.intersectConvexConvex(a, b)
    union = cv2.contourArea(a) + cv2.contourArea(b) - inter
    return float(inter / max(union, 1e-9))


def _combine(learned: tuple[CnnReading, FloatArray] | None, index: IndexReading,
             outline: FloatArray | None) -> CardReading:
    """The classifier's and the index matcher's readings as one: agreeing, the confidence either alone would
    leave unexplained; disagreeing, the classifier's when it is at least fairly sure (`_CNN_TRUSTED`: it
    measures far better) unless three or more corner indices agree on the matcher's (`_INDEX_CORNERS_SURE`; two,
    `_INDEX_SUIT_CORNERS`, when they differ in suit only on a card `_INDEX_MIN_PX` wide, whose index pip is
    clear: a red chip on an AH made the classifier read AD), or, when the two readers differ in rank only, the
    matcher reads at `_INDEX_RANK_SURE` (a chip or a hand on the card's middle hides pips the classifier counts,
    not the index glyphs the matcher reads; on a covered card one corner may be all it sees: then at its own
    confidence less `_RANK_DOUBT` of the classifier's), else the more confident of the two, each at a lower
    confidence."""
    from_index = CardReading(card=index.card, confidence=index.confidence, corners_px=outline,
                             corners_read=index.corners_read, corners_agreeing=index.corners_agreeing, source="index")
    if learned is None:
        return from_index
    cnn, quad = learned
    if index.card is None or index.confidence <= 0.0:
        return CardReading(card=cnn.card, confidence=cnn.confidence, corners_px=quad, source="classifier")
    if index.card == cnn.card:
        confidence = 1.0 - (1.0 - cnn.confidence) * (1.0 - index.confidence)
        return replace(from_index, confidence=float(confidence), corners_px=quad, source="both")
    rank_only = index.card[-1] == cnn.card[-1]  # they differ in rank: the count of pips, or the index glyph
    if rank_only:
        index_sure = index.confidence >= _INDEX_RANK_SURE
    else:
        corners_sure = _INDEX_CORNERS_SURE
        if index.card[:-1] == cnn.card[:-1] and outline is not None and short_side(outline) >= _INDEX_MIN_PX:
            corners_sure = _INDEX_SUIT_CORNERS  # they differ in suit only: a large index pip is clear
        index_sure = index.confidence >= _INDEX_SURE and index.corners_agreeing >= corners_sure
    if not index_sure and cnn.confidence >= min(index.confidence, _CNN_TRUSTED):  # the matcher errs at times
        return CardReading(card=cnn.card, confidence=cnn.confidence * (1.0 - 0.5 * index.confidence),
                           corners_px=quad, source="classifier")
    if index_sure and rank_only and _pips_miscounted(cnn.card, quad, outline, index=index):  # the glyph shows the rank
        return replace(from_index, confidence=index.confidence * (1.0 - _RANK_DOUBT * cnn.confidence))
    return replace(from_index, confidence=index.confidence * (1.0 - cnn.confidence))


def _pips_miscounted(card: str, outline: FloatArray, index_outline: FloatArray | None, *,
                     index: IndexReading) -> bool:
    """Whether a classifier's reading `card` of the card in `outline`, disagreeing on rank only with the index
    matcher reading `index_outline`, is more likely a miscount than the matcher's glyph a misreading: a pip
    card (a chip or a hand on it hides pips or adds round shapes; court figures are not counted) at least
    `_INDEX_MIN_PX` wide (on narrower cards the matcher misreads glyphs: 2 as A or Q at 63-73 px; an index it
    searched for or read at two corners agreeing, at `_INDEX_CLEAR`: `_INDEX_CLEAR_MIN_PX`), its index read on
    nearly the classifier's outline (`_SAME_OUTLINE_IOU`: an outline cut from a region merged with a neighbour
    reads the neighbour's index, 6H on a 3H)."""
    clear = (index.searched or index.corners_agreeing >= 2) and index.confidence >= _INDEX_CLEAR
    min_px = _INDEX_CLEAR_MIN_PX if clear else _INDEX_MIN_PX
    return (card[:-1] in _PIP_RANKS and short_side(outline) >= min_px and index_outline is not None
            and _iou(outline, index_outline) >= _SAME_OUTLINE_IOU)


def _searched_reading(image: Image, learned: tuple[CnnReading, FloatArray], *, index: IndexReading,
                      outline: FloatArray | None, templates: IndexTemplates | None,
                      ) -> tuple[IndexReading, FloatArray | None]:
    """The index matcher's reading `index` on `outline`, or, when it disagrees with the classifier, the index
    searched for around the corners of the classifier's outline (`cards_corner.search_corners`) when that reads
    the classifier's suit more confidently (a neighbour's index is seldom of the same suit); when it reads
    another suit, the rank that two corners or more agree on with the classifier's suit, if that differs from the
    classifier's reading (`cards_matcher.rank_reading`: the small index pips of a blurred card read as the other
    suit of their colour, or apart, where the larger rank glyphs agree)."""
    cnn, quad = learned
    if index.card == cnn.card:
        return index, outline
    bank = templates if templates is not None else default_templates()
    found = search_corners(image, quad, score=lambda f: score_index(bank, f))
    searched = reading_of_corners(found)
    if searched.card is None or searched.card[-1] != cnn.card[-1]:
        searched = rank_reading(found, suit=cnn.card[-1])  # the glyphs' rank, the classifier's suit
        if searched.card is None or searched.card == cnn.card:
            return index, outline
    factor = resolution_factor(quad) * (SINGLE_CORNER if searched.corners_read == 1 else 1.0)
    searched = replace(searched, confidence=searched.confidence * factor, searched=True)
    return (searched, quad) if searched.confidence > index.confidence else (index, outline)


def _best_reading(image: Image, quads: list[FloatArray], *, templates: IndexTemplates | None,
                  pixels_to_mm: Homography | None = None) -> tuple[IndexReading, FloatArray | None]:
    """The most confident reading over the outline candidates of `quads`, and its outline; halved in
    confidence when another outline reads a different card nearly as confidently."""
    readings: list[tuple[IndexReading, FloatArray]] = []
    for candidate in (c for quad in quads for c in quad_candidates(quad, pixels_to_mm=pixels_to_mm)):
        reading = read_rectified(rectify(image, candidate), templates=templates)
        factor = resolution_factor(candidate)
        if reading.corners_read == 1:
            factor *= SINGLE_CORNER  # one corner may belong to a card lying on this one
        readings.append((replace(reading, confidence=reading.confidence * factor), candidate))
        if readings[-1][0].confidence >= _GOOD_ENOUGH:
            break
    if not readings:
        return IndexReading(card=None, confidence=0.0), quads[0] if quads else None
    best, outline = max(readings, key=lambda item: item[0].confidence)
    rival = max((r.confidence for r, _ in readings if r.card is not None and r.card != best.card), default=0.0)
    if rival > 0.5 * best.confidence:
        best = replace(best, confidence=best.confidence * 0.5)
    return best, outline
