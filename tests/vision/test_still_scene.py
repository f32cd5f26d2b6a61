from __future__ import annotations

import numpy as np

from floorman.datasets.scene import DetectorClass
from floorman.vision.detections import Detections
from floorman.vision.still_scene import StillScene, same_pixels

CHIP, CARD_BACK, HAND = DetectorClass.CHIP.value, DetectorClass.CARD_BACK.value, DetectorClass.HAND.value
STACK = (100.0, 60.0, 132.0, 96.0)


def _frame(seed: int = 5) -> np.ndarray:
    image = np.random.default_rng(seed).integers(0, 255, (200, 300, 3), dtype=np.uint8)
    image[60:96, 100:132] = (30, 30, 200)  # a red stack's side
    return image


def _detections(*objects: tuple[tuple[float, float, float, float], int]) -> Detections:
    return Detections(xyxy=np.array([box for box, _ in objects], dtype=np.float32).reshape(-1, 4),
                      confidence=np.full(len(objects), 0.6, np.float32),
                      class_id=np.array([cls for _, cls in objects], dtype=np.int64))


def _hands(detections: Detections) -> list[tuple[float, ...]]:
    return [tuple(float(v) for v in detections.xyxy[i]) for i in np.flatnonzero(detections.class_id == HAND)]


def test_a_hand_where_a_stack_lay_unchanged_is_the_stack() -> None:
    scene, image = StillScene(), _frame()
    scene.without_still_hands(image, _detections((STACK, CHIP)), hand_class=HAND, t=0.0)
    moved = (101.0, 61.0, 133.0, 95.0)  # the same place, boxed a pixel aside
    kept = scene.without_still_hands(image.copy(), _detections((moved, HAND), ((10.0, 10.0, 40.0, 40.0), CHIP)),
                                     hand_class=HAND, t=4.0)
    assert _hands(kept) == [] and len(kept) == 1 and scene.dropped == 1


def test_a_card_back_seen_there_counts_as_well() -> None:
    scene, image = StillScene(), _frame()
    scene.without_still_hands(image, _detections((STACK, CARD_BACK)), hand_class=HAND, t=0.0)
    assert _hands(scene.without_still_hands(image, _detections((STACK, HAND)), hand_class=HAND, t=1.0)) == []


def test_a_hand_that_came_in_is_kept() -> None:
    scene, image = StillScene(), _frame()
    scene.without_still_hands(image, _detections((STACK, CHIP)), hand_class=HAND, t=0.0)
    covered = image.copy()
    covered[62:96, 98:134] = (120, 160, 210)  # skin over the stack
    kept = scene.without_still_hands(covered, _detections((STACK, HAND)), hand_class=HAND, t=1.0)
    assert _hands(kept) == [STACK]
    # resting there, it stays a hand: a stack boxed under it was not seen clear of hands
    again = scene.without_still_hands(covered, _detections((STACK, HAND), (STACK, CHIP)), hand_class=HAND, t=2.0)
    assert _hands(again) == [STACK]
    assert _hands(scene.without_still_hands(covered, _detections((STACK, HAND)), hand_class=HAND, t=3.0)) == [STACK]


def test_a_hand_elsewhere_or_after_the_memory_is_kept() -> None:
    scene, image = StillScene(memory_s=10.0), _frame()
    scene.without_still_hands(image, _detections((STACK, CHIP)), hand_class=HAND, t=0.0)
    wider = (80.0, 50.0, 160.0, 110.0)  # over the stack, but mostly elsewhere (IoU 0.24)
    assert _hands(scene.without_still_hands(image, _detections((wider, HAND)), hand_class=HAND, t=1.0)) == [wider]
    assert _hands(scene.without_still_hands(image, _detections((STACK, HAND)), hand_class=HAND, t=10.5)) == [STACK]
    assert scene.dropped == 0


def test_memory_is_bounded() -> None:
    scene, image = StillScene(max_views=3), _frame()
    for k in range(6):
        box = (10.0 + 30 * k, 10.0, 30.0 + 30 * k, 30.0)
        scene.without_still_hands(image, _detections((box, CHIP)), hand_class=HAND, t=float(k))
    # the first places are forgotten, the last three remembered
    first, last = (10.0, 10.0, 30.0, 30.0), (160.0, 10.0, 180.0, 30.0)
    assert _hands(scene.without_still_hands(image, _detections((first, HAND)), hand_class=HAND, t=6.0)) == [first]
    assert _hands(scene.without_still_hands(image, _detections((last, HAND)), hand_class=HAND, t=6.0)) == []


def test_same_pixels() -> None:
    image = _frame()
    assert same_pixels(image, image.copy())
    assert not same_pixels(image, 255 - image)
    assert not same_pixels(image, image[:-1])
