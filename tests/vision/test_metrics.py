from __future__ import annotations

import math

import numpy as np

from floorman.vision.detections import Detections
from floorman.vision.metrics import MeanAveragePrecision, iou_matrix


def _found(boxes: list[list[float]], scores: list[float], classes: list[int]) -> Detections:
    return Detections(xyxy=np.array(boxes, dtype=np.float32).reshape(-1, 4), confidence=np.array(scores),
                      class_id=np.array(classes))


def test_iou_of_every_pair() -> None:
    ious = iou_matrix([[0, 0, 10, 10], [0, 0, 5, 10]], [[0, 0, 10, 10], [20, 20, 30, 30]])
    assert np.allclose(ious, [[1.0, 0.0], [0.5, 0.0]])
    assert iou_matrix(np.zeros((0, 4)), [[0, 0, 1, 1]]).shape == (0, 1)


def test_average_precision_at_each_iou_threshold_over_the_classes_with_truth() -> None:
    metric = MeanAveragePrecision(3)
    # class 0 found exactly; class 1 found at IoU 0.6 (50, 55 and 60 % hit, not 65-95); class 2 has no truth
    metric.update(_found([[0, 0, 10, 10], [0, 0, 6, 10], [50, 50, 60, 60]], [0.9, 0.8, 0.7], [0, 1, 2]),
                  np.array([[0, 0, 10, 10], [0, 0, 10, 10]]), np.array([0, 1]))
    map50, map50_95, per_class = metric.compute()
    assert per_class[0] == 1.0 and per_class[1] == 1.0 and math.isnan(per_class[2])
    assert map50 == 1.0 and math.isclose(map50_95, (1.0 + 0.3) / 2)
    # a false detection more confident than the true one halves precision at every recall
    metric.reset()
    metric.update(_found([[30, 30, 40, 40], [0, 0, 10, 10]], [0.9, 0.5], [0, 0]), np.array([[0, 0, 10, 10]]),
                  np.array([0]))
    assert math.isclose(metric.compute()[0], 0.5)
    metric.reset()
    metric.update(_found([], [], []), np.array([[0, 0, 10, 10]]), np.array([0]))
    assert metric.compute()[0] == 0.0
    metric.reset()
    assert math.isnan(metric.compute()[0])
