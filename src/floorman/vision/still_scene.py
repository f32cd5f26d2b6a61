"""`StillScene`: hands the detector sees where nothing moved are not hands.

A hand is something that comes onto the table. A `hand` box over a place where, in the last `memory_s` seconds, the
detector saw a stack, a card or the button clear of any hand, with the same pixels under that box now as then, is
that object seen again under another class: nothing came in. From video at 1280x720 the detector takes a tall
stack leaning towards the camera (its side a long band of one colour) now for chips, now for a card back, now for a
hand; resting there as a hand, it hid the stack it is and raised a D1 (`hidden_chips_covered_02`, session 13).

The same pixels: the mean absolute difference of the crops under `SAME_LEVEL` (8-bit levels), as for a stack read
once while at rest (`TableStateBuilder`). A real hand that rests has pixels of its own; a hand over a stack changes
the stack's pixels.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from floorman.vision.detections import Detections
from floorman.vision.detector import Image, box_iou

SAME_LEVEL = 3.0  # mean absolute difference (8-bit levels) under which two crops are the same pixels
# A hand box overlapping a remembered object's box this much is over the same place. At 0.7 the false D1 stayed:
# after a hand had passed by, the leaning stack's only view unchanged was boxed shorter (IoU 0.65); its older views
# differed by 3.3-3.5 levels (video coding after motion), as do real hands' (3-8 levels, so the level stays). On
# the sixteen 1280x720 evaluation videos (session 13's states) 0.6 drops 503 of 16,019 hand boxes, none on a
# rendered hand (IoU >= 0.3 with one); 0.7 dropped 376.
SAME_PLACE_IOU = 0.6
MEMORY_S = 10.0  # how long an object seen clear of hands is remembered
MAX_VIEWS = 512  # the most places remembered (the oldest forgotten first)
_REPLACE_IOU = 0.95  # a new view of a place boxed (nearly) the same replaces the old one


def crop(image: Image, box: tuple[float, float, float, float] | np.ndarray) -> Image:
    """The pixels under a box (rounded to the pixel, clipped at the image's top-left)."""
    x1, y1, x2, y2 = (round(float(v)) for v in box)
    return image[max(0, y1):max(0, y2), max(0, x1):max(0, x2)]


def same_pixels(before: Image, now: Image, *, level: float = SAME_LEVEL) -> bool:
    """Whether two crops are the same object at rest: same size, mean difference under `level` levels."""
    return bool(before.shape == now.shape and now.size
                and float(np.abs(before.astype(np.int16) - now).mean()) < level)


@dataclass
class _View:
    box: np.ndarray
    pixels: Image
    t: float


class StillScene:
    """Remembers the objects seen clear of hands; `without_still_hands` drops the hands over them unchanged."""

    def __init__(self, *, memory_s: float = MEMORY_S, same_place_iou: float = SAME_PLACE_IOU,
                 max_views: int = MAX_VIEWS) -> None:
        self.memory_s = memory_s
        self.same_place_iou = same_place_iou
        self.max_views = max_views
        self._views: list[_View] = []
        self.dropped = 0  # hands dropped so far

    def without_still_hands(self, image: Image, detections: Detections, *, hand_class: int, t: float) -> Detections:
        """The detections less the hands over a remembered place whose pixels have not changed; this frame's other
        objects that no hand box overlaps are remembered."""
        self._views = [view for view in self._views if 0.0 <= t - view.t <= self.memory_s]
        hands = np.flatnonzero(detections.class_id == hand_class)
        still = [int(i) for i in hands if self._still(image, detections.xyxy[i])]
        self._remember(image, detections, hands, t=t)
        if not still:
            return detections
        self.dropped += len(still)
        return detections[np.array([i for i in range(len(detections)) if i not in still], dtype=np.int64)]

    def _still(self, image: Image, box: np.ndarray) -> bool:
        if not self._views:
            return False
        overlaps = box_iou(box.astype(np.float32), np.stack([view.box for view in self._views]))[0]
        return any(same_pixels(self._views[k].pixels, crop(image, self._views[k].box))
                   for k in np.flatnonzero(overlaps >= self.same_place_iou).tolist())

    def _remember(self, image: Image, detections: Detections, hands: np.ndarray, *, t: float) -> None:
        hand_boxes, skip = detections.xyxy[hands].astype(np.float32), set(hands.tolist())
        for i in range(len(detections)):
            if i in skip:
                continue
            box = detections.xyxy[i].astype(np.float32)
            if len(hand_boxes) and float(box_iou(box, hand_boxes)[0].max()) > 0.0:
                continue  # a hand overlaps it: what is under it may be the hand's
            if self._views:
                same = box_iou(box, np.stack([view.box for view in self._views]))[0] >= _REPLACE_IOU
                self._views = [view for view, replaced in zip(self._views, same, strict=True) if not replaced]
            self._views.append(_View(box=box.copy(), pixels=crop(image, box).copy(), t=t))
        del self._views[:max(0, len(self._views) - self.max_views)]
