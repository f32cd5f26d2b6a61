"""Detection accuracy as COCO scores it: average precision per class at IoU 0.50 and over 0.50:0.95 (101-point
interpolation), accumulated frame by frame. Used by `floorman photos score` and the detector benchmarks."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from floorman.vision.detections import Detections

FloatArray = npt.NDArray[np.float64]


def iou_matrix(a: npt.ArrayLike, b: npt.ArrayLike) -> FloatArray:
    """IoU of every box of `a` (N, 4) with every box of `b` (M, 4), x1 y1 x2 y2: (N, M)."""
    a = np.asarray(a, dtype=np.float64).reshape(-1, 4)
    b = np.asarray(b, dtype=np.float64).reshape(-1, 4)
    x1 = np.maximum(a[:, None, 0], b[None, :, 0])
    y1 = np.maximum(a[:, None, 1], b[None, :, 1])
    x2 = np.minimum(a[:, None, 2], b[None, :, 2])
    y2 = np.minimum(a[:, None, 3], b[None, :, 3])
    inter = np.clip(x2 - x1, 0, None) * np.clip(y2 - y1, 0, None)
    area_a = (a[:, 2] - a[:, 0]) * (a[:, 3] - a[:, 1])
    area_b = (b[:, 2] - b[:, 0]) * (b[:, 3] - b[:, 1])
    return np.asarray(inter / np.maximum(area_a[:, None] + area_b[None, :] - inter, 1e-9), dtype=np.float64)


class MeanAveragePrecision:
    """COCO-style mAP over frames: update(pred, truth) per frame, compute() at the end."""

    thresholds = np.linspace(0.5, 0.95, 10)

    def __init__(self, num_classes: int) -> None:
        self.num_classes = num_classes
        self.reset()

    def reset(self) -> None:
        self._scores: list[list[float]] = [[] for _ in range(self.num_classes)]
        self._hits: list[list[npt.NDArray[np.bool_]]] = [[] for _ in range(self.num_classes)]
        self._truths = np.zeros(self.num_classes, dtype=np.int64)

    def update(self, pred: Detections, truth_xyxy: npt.ArrayLike, truth_class: npt.ArrayLike) -> None:
        truth_xyxy = np.asarray(truth_xyxy, dtype=np.float64).reshape(-1, 4)
        truth_class = np.asarray(truth_class, dtype=np.int64).reshape(-1)
        for cls in range(self.num_classes):
            p = pred[pred.class_id == cls]
            t = truth_xyxy[truth_class == cls]
            self._truths[cls] += len(t)
            order = np.argsort(-p.confidence, kind="stable")
            ious = iou_matrix(p.xyxy[order], t) if len(t) and len(p) else np.zeros((len(p), len(t)))
            for k in range(len(order)):
                hits = np.zeros(len(self.thresholds), dtype=bool)
                self._scores[cls].append(float(p.confidence[order[k]]))
                self._hits[cls].append(hits)
            for j, threshold in enumerate(self.thresholds):
                taken = np.zeros(len(t), dtype=bool)
                start = len(self._hits[cls]) - len(order)
                for k in range(len(order)):
                    if not len(t):
                        break
                    candidates = np.where(~taken, ious[k], -1.0)
                    best = int(candidates.argmax())
                    if candidates[best] >= threshold:
                        taken[best] = True
                        self._hits[cls][start + k][j] = True

    def compute(self) -> tuple[float, float, FloatArray]:
        """(mAP50, mAP50-95, per-class AP50) over classes that have truth (NaN for those that have none)."""
        ap = np.full((self.num_classes, len(self.thresholds)), np.nan)
        for cls in range(self.num_classes):
            if self._truths[cls] == 0:
                continue
            if not self._scores[cls]:
                ap[cls] = 0.0
                continue
            order = np.argsort(-np.asarray(self._scores[cls]), kind="stable")
            hits = np.asarray(self._hits[cls])[order]
            for j in range(len(self.thresholds)):
                tp = np.cumsum(hits[:, j])
                fp = np.cumsum(~hits[:, j])
                recall = tp / self._truths[cls]
                precision = tp / np.maximum(tp + fp, 1e-9)
                envelope = np.maximum.accumulate(precision[::-1])[::-1]
                points = np.linspace(0, 1, 101)
                index = np.searchsorted(recall, points, side="left")
                ap[cls, j] = np.mean([envelope[i] if i < len(envelope) else 0.0 for i in index])
        valid = ~np.isnan(ap[:, 0])
        if not valid.any():
            return float("nan"), float("nan"), ap[:, 0]
        return float(ap[valid, 0].mean()), float(ap[valid].mean()), ap[:, 0]
