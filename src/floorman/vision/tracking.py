"""Tracking across frames in table millimetres, with supervision's ByteTrack (not a tracker of our own).

Each detection is tracked as a square footprint round its table-mm position (its class's typical size), so
association works the same whatever the camera's scale or angle, and two cameras on one table could share
tracks. One ByteTrack per class keeps a chip from inheriting a card's track; ids are unique across classes.
Detections without table positions (no calibration) are tracked on their pixel boxes. supervision is imported
when the first tracker is built (it takes about a second), not when this module is.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from floorman.vision.detections import Detections

if TYPE_CHECKING:
    from supervision.tracker.byte_tracker.core import ByteTrack

# Footprint side in mm per detector class name: card, chip, button, hand.
DEFAULT_FOOTPRINT_MM: Mapping[str, float] = {"card_face": 90.0, "card_back": 90.0, "chip": 40.0,
                                             "dealer_button": 65.0, "hand": 160.0}


class TrackerConfig(BaseModel):
    """ByteTrack settings (supervision's names and defaults, frame rate the analysed frames' rate)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    track_activation_threshold: float = Field(default=0.25, ge=0.0, le=1.0,
                                              description="Minimum detection score that starts a track.")
    lost_track_buffer: int = Field(default=30, ge=1, description="Frames a lost track is kept (at 30 fps).")
    minimum_matching_threshold: float = Field(default=0.8, gt=0.0, le=1.0,
                                              description="ByteTrack's association threshold (1 - IoU cost).")
    frame_rate: int = Field(default=30, ge=1, description="Analysed frames per second.")
    footprint_mm: dict[str, float] = Field(default_factory=lambda: dict(DEFAULT_FOOTPRINT_MM),
                                           description="Square footprint side in mm per class name.")


class TableTracker:
    """`update(detections) -> detections` with `tracker_id` set (-1 where ByteTrack did not confirm a track)."""

    def __init__(self, names: Mapping[int, str], *, config: TrackerConfig | None = None) -> None:
        self.names = dict(names)
        self.config = config or TrackerConfig()
        self._trackers: dict[int, ByteTrack] = {}
        self._ids: dict[tuple[int, int], int] = {}

    def _tracker(self, class_id: int) -> ByteTrack:
        tracker = self._trackers.get(class_id)
        if tracker is None:
            from supervision.tracker.byte_tracker.core import ByteTrack

            c = self.config
            tracker = ByteTrack(track_activation_threshold=c.track_activation_threshold,
                                lost_track_buffer=c.lost_track_buffer,
                                minimum_matching_threshold=c.minimum_matching_threshold, frame_rate=c.frame_rate)
            self._trackers[class_id] = tracker
        return tracker

    def footprints(self, detections: Detections) -> np.ndarray[tuple[int, int], np.dtype[np.float32]]:
        """(N, 4) boxes to track: squares round xy_mm (mm), or the pixel boxes when there are no positions."""
        if detections.xy_mm is None:
            return detections.xyxy.copy()
        sides = np.array([self.config.footprint_mm.get(self.names.get(int(c), ""), 60.0)
                          for c in detections.class_id], dtype=np.float32)
        half = sides[:, None] / 2.0
        result = np.hstack([detections.xy_mm - half, detections.xy_mm + half]).astype(np.float32)
        return result

    def update(self, detections: Detections) -> Detections:
        """Assign tracker ids; every class's tracker advances one frame, also when it sees nothing."""
        import supervision as sv

        boxes = self.footprints(detections)
        ids = np.full(len(detections), -1, dtype=np.int64)
        classes = set(self._trackers) | {int(c) for c in detections.class_id}
        for class_id in sorted(classes):
            index = np.flatnonzero(detections.class_id == class_id)
            tracked = self._tracker(class_id).update_with_detections(sv.Detections(
                xyxy=boxes[index].astype(np.float64).reshape(-1, 4),
                confidence=detections.confidence[index].astype(np.float64),
                class_id=np.full(len(index), class_id, dtype=int), data={"index": index}))
            if tracked.tracker_id is None:
                continue
            for local, track in zip(tracked.data.get("index", np.zeros(0, dtype=np.int64)), tracked.tracker_id,
                                    strict=True):
                ids[int(local)] = self._global_id(class_id, int(track))
        return Detections(xyxy=detections.xyxy, confidence=detections.confidence, class_id=detections.class_id,
                          tracker_id=ids, xy_mm=detections.xy_mm, data=dict(detections.data))

    def _global_id(self, class_id: int, track: int) -> int:
        key = (class_id, track)
        if key not in self._ids:
            self._ids[key] = len(self._ids) + 1
        return self._ids[key]

    def reset(self) -> None:
        for tracker in self._trackers.values():
            tracker.reset()
        self._ids.clear()
