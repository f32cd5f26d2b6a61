"""State builders: detector boxes mapped to table mm and zones; simulator truth frames read back."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from floorman.core.errors import ConfigError
from floorman.core.events import Heartbeat, encode_event, event_topic
from floorman.core.frame_truth import read_frames
from floorman.core.layout import TableLayout
from floorman.edge.builders import TruthStateBuilder, VisionStateBuilder
from floorman.edge.subscriber import EventSubscriber
from floorman.vision.calibration import Calibration, PointPair, calibrate_from_points
from floorman.vision.detections import Detections
from tests.edge.derive_helpers import centre

LAYOUT = TableLayout.default()
NAMES = {0: "card_face", 1: "card_back", 2: "chip", 3: "dealer_button", 4: "hand"}


class FixedDetector:
    """Answers the same boxes for every frame."""

    names = NAMES

    def __init__(self, boxes: list[tuple[float, float, float, float]], classes: list[int]) -> None:
        self.found = Detections(xyxy=np.array(boxes, dtype=np.float32), confidence=np.full(len(boxes), 0.9),
                                class_id=np.array(classes))
        self.seen: list[tuple[int, ...]] = []

    def detect(self, frame: np.ndarray) -> Detections:
        self.seen.append(frame.shape)
        return self.found


def top_down_calibration() -> Calibration:
    """1 px = 2 mm, the table centre at pixel (640, 360), y up on the table and down in the image."""
    pairs = [PointPair(pixel=(640 + x / 2, 360 - y / 2), table_mm=(x, y))
             for x, y in ((-1000, -500), (1000, -500), (1000, 500), (-1000, 500))]
    return calibrate_from_points(pairs, layout=LAYOUT, image_size=(1280, 720))


def pixel_box(point: tuple[float, float], half: float = 10.0) -> tuple[float, float, float, float]:
    u, v = 640 + point[0] / 2, 360 - point[1] / 2
    return u - half, v - half, u + half, v + half


def test_boxes_are_placed_in_table_mm_and_zones() -> None:
    stack, hole = centre("stack_3"), centre("hole_3")
    detector = FixedDetector([pixel_box(stack), pixel_box(hole), pixel_box((0.0, 0.0), 40)], [2, 1, 4])
    builder = VisionStateBuilder(detector, calibration=top_down_calibration(), layout=LAYOUT, camera_id="c1")
    state = builder.build(np.zeros((720, 1280, 3), dtype=np.uint8), 7, 0.25)
    assert (state.frame, state.t, state.size) == (7, 0.25, (1280, 720))
    assert [c.zone for c in state.chips] == ["stack_3"]
    assert state.chips[0].position_mm == pytest.approx(stack, abs=40.0)  # the fitted foot of the stack
    assert [(c.zone, c.face_up) for c in state.cards] == [("hole_3", False)]
    assert len(state.hands) == 1 and state.button is None


def test_a_frame_of_another_size_is_analysed_at_the_calibrations_size() -> None:
    stack = centre("stack_5")
    detector = FixedDetector([pixel_box(stack)], [2])  # boxes in the calibration's 1280x720 pixels
    builder = VisionStateBuilder(detector, calibration=top_down_calibration(), layout=LAYOUT, camera_id="c1")
    state = builder.build(np.zeros((360, 640, 3), dtype=np.uint8), 0, 0.0)
    assert detector.seen == [(720, 1280, 3)]
    assert state.chips[0].zone == "stack_5" and state.size == (1280, 720)


def test_truth_frames_are_read_back_and_bad_lines_named(tmp_path: Path) -> None:
    good = tmp_path / "frames.jsonl"
    good.write_text('{"frame":0,"t":0.0,"objects":[{"id":3,"cls":"chip","box":[0,0,1,1],"visible_fraction":0.5,'
                    '"position_mm":[1.0,2.0],"zone":"pot","chips":[100,25],"count":2}]}\n', encoding="utf-8")
    builder = TruthStateBuilder.load(good, camera_id="c1")
    state = builder.build(np.zeros((2, 2, 3), dtype=np.uint8), 1, 0.5)  # a looping source wraps around
    assert state.chip_value("pot") == 125 and state.chips[0].track_id == 3 and state.frame == 1
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"frame":0,"t":0.0,"objects":[]}\n{"frame":1,"t":"soon","objects":[]}\n', encoding="utf-8")
    with pytest.raises(ConfigError, match=r"bad.jsonl: field 't': line 2"):
        read_frames(bad)


def test_a_heartbeat_announcing_a_bad_replay_endpoint_is_counted_not_followed() -> None:
    beat = Heartbeat(table_id="t1", camera_id="c1", seq=0, t=0.0, frame=0, status="online", fps=1.0,
                     latency_ms=1.0, frames_dropped=0, replay_endpoint="not an endpoint", epoch=5)
    sub = EventSubscriber("tcp://127.0.0.1:1")
    delivered = sub.handle_message([event_topic("t1", "heartbeat").encode(), encode_event(beat)])
    assert [e.seq for e in delivered] == [0]
    assert sub.stats.malformed == 1 and sub.stats.discovered == 0
