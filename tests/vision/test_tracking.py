from __future__ import annotations

import numpy as np

from floorman.vision.detections import Detections
from floorman.vision.tracking import TableTracker, TrackerConfig

NAMES = {0: "card_face", 1: "card_back", 2: "chip", 3: "dealer_button", 4: "hand"}


def at(points_mm: list[tuple[float, float]], classes: list[int], *, score: float = 0.9) -> Detections:
    xy = np.array(points_mm, dtype=np.float32).reshape(-1, 2)
    boxes = np.hstack([xy * 0.5 + 300.0, xy * 0.5 + 320.0])  # pixel boxes are ignored when xy_mm is set
    return Detections(xyxy=boxes, confidence=np.full(len(xy), score, np.float32),
                      class_id=np.array(classes, dtype=np.int64), xy_mm=xy)


def test_slowly_moving_objects_keep_their_ids() -> None:
    tracker = TableTracker(NAMES)
    seen: list[list[int]] = []
    for step in range(8):
        chip = (100.0 + 4.0 * step, -50.0)  # 4 mm per frame
        card = (-300.0, 20.0 - 6.0 * step)
        out = tracker.update(at([chip, card], [2, 0]))
        seen.append(out.tracker_id.tolist())
    assert all(ids == seen[-1] for ids in seen[1:])
    assert len(set(seen[-1])) == 2 and min(seen[-1]) >= 1


def test_classes_are_tracked_apart_and_order_is_kept() -> None:
    tracker = TableTracker(NAMES)
    for _ in range(3):
        out = tracker.update(at([(0.0, 0.0), (0.0, 0.0), (500.0, 0.0)], [2, 4, 2]))
    ids = out.tracker_id.tolist()
    assert len(set(ids)) == 3 and -1 not in ids
    swapped = tracker.update(at([(500.0, 0.0), (0.0, 0.0), (0.0, 0.0)], [2, 2, 4]))
    assert swapped.tracker_id.tolist() == [ids[2], ids[0], ids[1]]


def test_a_jump_far_beyond_the_footprint_starts_a_new_track() -> None:
    tracker = TableTracker(NAMES, config=TrackerConfig(lost_track_buffer=2))
    first = tracker.update(at([(0.0, 0.0)], [2])).tracker_id[0]
    for _ in range(2):
        tracker.update(at([(0.0, 0.0)], [2]))
    moved = tracker.update(at([(400.0, 0.0)], [2])).tracker_id[0]
    moved = tracker.update(at([(400.0, 0.0)], [2])).tracker_id[0]
    assert moved != first and moved >= 1


def test_without_positions_pixel_boxes_are_tracked() -> None:
    tracker = TableTracker(NAMES)
    ids = []
    for step in range(4):
        boxes = np.array([[10.0 + step, 10.0, 50.0 + step, 50.0]], dtype=np.float32)
        out = tracker.update(Detections(xyxy=boxes, confidence=np.array([0.8], np.float32),
                                        class_id=np.array([0], np.int64)))
        ids.append(int(out.tracker_id[0]))
    assert len(set(ids[1:])) == 1 and ids[-1] >= 1


def test_empty_frames_are_fine_and_footprints_follow_the_class() -> None:
    tracker = TableTracker(NAMES)
    assert len(tracker.update(Detections.empty())) == 0
    boxes = tracker.footprints(at([(0.0, 0.0), (0.0, 0.0)], [2, 4]))
    np.testing.assert_allclose(boxes[:, 2] - boxes[:, 0], [40.0, 160.0])
