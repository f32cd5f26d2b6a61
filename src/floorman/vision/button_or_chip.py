"""A plain white chip the detector took for the dealer button, told apart by its size and its print.

A white chip with white edge spots (the issue's photographs' white chip) is a white disc with a small printed value,
and the detector, which saw such discs only as the dealer button (the simulator's home scenes hold no button),
boxes it as `dealer_button`, often with no `chip` box beside it: the chip goes uncounted. Two things tell the two
apart in a frame read without a calibration (`floorman detect` without `--calib`): a button is 50-75 mm across
against a chip's 39 (a button box as narrow as the frame's chip boxes is a chip's size), and a button's print is a
word across its face ("DEALER") where a chip's is a short value
in its middle. `buttons_as_chips` takes a `dealer_button` box for a chip when its short side is `SIZE_RANGE` times
the frame's typical chip box's short side (the median over chip boxes clear of the image's border, at least
`_MIN_TYPICAL` of them) and the dark print inside its inner disc spans less than `MAX_PRINT_SPAN` of its radius
along its longest direction (`print_span`); such a box is relabelled `chip`, or dropped where a chip box already
covers it (IoU >= `_SAME_CHIP_IOU`). A box cut by the image's border, or narrower than `_MIN_SIDE_PX`, is left as it
is (its disc, or its print, is not seen whole).

Measured (session 30) on photo-like frames of single chips (`benchmarks/photo_labels.py --singles --rack always
--chip-designs 1`, dev seeds 30901-30905, 200 photos): 42 `dealer_button` boxes, every one on a chip (7 with no chip
box: missed chips), their print spanning 0.43-0.58 of the radius; on 100 mixed casino and home frames with real
buttons (dev seed 29101), the 27 button boxes' "DEALER" spans 0.91-1.09 (one box cut by the border).
"""

from __future__ import annotations

from dataclasses import replace

import cv2
import numpy as np

from floorman.vision.detections import Detections, clear_of_border
from floorman.vision.detector import Image, box_iou

SIZE_RANGE = (0.85, 1.2)  # a chip-sized box: its short side over the frame's typical chip box's short side
MAX_PRINT_SPAN = 0.75  # a chip's value spans less of the disc's radius than this; "DEALER" spans 0.9-1.1
_INNER = 0.55  # the print is looked for within this share of the disc's radius (a chip's rings lie outside it)
_DARK = 0.55  # print: pixels darker than this share of the inner disc's median grey level
_MIN_PRINT_SHARE = 0.01  # fewer dark pixels than this share of the inner disc: no print seen
_SPAN_PERCENTILES = (5.0, 95.0)  # the print's extent along its longest direction, its stray pixels left out
_MIN_SIDE_PX = 40.0
_MIN_TYPICAL = 3
_SAME_CHIP_IOU = 0.5


def print_span(gray: np.ndarray, box: tuple[float, float, float, float]) -> float | None:
    """How far the dark print inside the disc inscribed in `box` reaches along its longest direction, in radii of
    the disc (a chip's value about 0.5, the button's "DEALER" about 1); None when no print is seen."""
    x1, y1, x2, y2 = box
    cx, cy, radius = (x1 + x2) / 2.0, (y1 + y2) / 2.0, min(x2 - x1, y2 - y1) / 2.0
    top, left = max(int(cy - radius), 0), max(int(cx - radius), 0)
    bottom, right = min(int(cy + radius) + 1, gray.shape[0]), min(int(cx + radius) + 1, gray.shape[1])
    ys, xs = np.mgrid[top:bottom, left:right]
    inner = np.hypot(xs - cx, ys - cy) < _INNER * radius
    if not inner.any():
        return None
    levels = gray[top:bottom, left:right][inner].astype(np.float64)
    dark = levels < _DARK * float(np.median(levels))
    if dark.sum() < max(_MIN_PRINT_SHARE * dark.size, 3):
        return None
    points = np.stack([xs[inner][dark] - cx, ys[inner][dark] - cy], axis=1) / radius
    points -= points.mean(axis=0)
    _, vectors = np.linalg.eigh(points.T @ points / len(points))
    along = points @ vectors[:, -1]
    low, high = np.percentile(along, _SPAN_PERCENTILES)
    return float(high - low)


def buttons_as_chips(image: Image, detections: Detections, *, names: dict[int, str]) -> Detections:
    """`detections` with every `dealer_button` box that is a chip's size and print (module doc) relabelled `chip`,
    or left out where a chip box covers it already."""
    ids = {name: class_id for class_id, name in names.items()}
    if "chip" not in ids or "dealer_button" not in ids or len(detections) == 0:
        return detections
    chip_id, button_id = ids["chip"], ids["dealer_button"]
    boxes = detections.xyxy.astype(np.float64)
    clear = clear_of_border(boxes, (image.shape[1], image.shape[0]))
    short = np.minimum(boxes[:, 2] - boxes[:, 0], boxes[:, 3] - boxes[:, 1])
    chips = detections.class_id == chip_id
    if int((chips & clear).sum()) < _MIN_TYPICAL:
        return detections
    typical = float(np.median(short[chips & clear]))
    gray: np.ndarray | None = None
    relabel: list[int] = []
    drop: list[int] = []
    for i in np.flatnonzero((detections.class_id == button_id) & clear & (short >= _MIN_SIDE_PX)):
        if not SIZE_RANGE[0] * typical <= short[i] <= SIZE_RANGE[1] * typical:
            continue
        if gray is None:
            gray = cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
        x1, y1, x2, y2 = (float(v) for v in boxes[i])
        span = print_span(gray, (x1, y1, x2, y2))
        if span is None or span >= MAX_PRINT_SPAN:
            continue
        overlap, _ = box_iou(detections.xyxy[i], detections.xyxy[chips])
        (drop if overlap.size and float(overlap.max()) >= _SAME_CHIP_IOU else relabel).append(int(i))
    if not relabel and not drop:
        return detections
    class_id = detections.class_id.copy()
    class_id[relabel] = chip_id
    keep = np.ones(len(detections), dtype=bool)
    keep[drop] = False
    return replace(detections, class_id=class_id)[keep]
