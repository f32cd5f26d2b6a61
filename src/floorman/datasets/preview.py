"""An annotated preview of a bundled scenario: truth boxes and labels, the layout's zones projected onto the
image, and a caption band with the latest truth events and the expected alerts in force."""

from __future__ import annotations

import logging
import time
from collections import deque
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np
import numpy.typing as npt

from floorman.core.alerts import ExpectedAlert
from floorman.core.events import EventBase
from floorman.datasets.camera import Camera
from floorman.datasets.render import ObjectTruth
from floorman.datasets.scenario import FPS, load_scenario
from floorman.datasets.scene import DetectorClass
from floorman.datasets.timeline import Timeline, compile_timeline
from floorman.datasets.truth import visible_objects
from floorman.datasets.video import VideoWriter

logger = logging.getLogger(__name__)

DEFAULT_PREVIEW = "string_bet_01"
PREVIEW_FILE = "preview.mp4"
Image = npt.NDArray[np.uint8]

_COLOURS: dict[DetectorClass, tuple[int, int, int]] = {  # BGR
    DetectorClass.CARD_FACE: (255, 255, 255), DetectorClass.CARD_BACK: (255, 160, 60),
    DetectorClass.CHIP: (0, 220, 255), DetectorClass.DEALER_BUTTON: (255, 0, 255), DetectorClass.HAND: (80, 255, 80),
}
_FONT = cv2.FONT_HERSHEY_SIMPLEX


@dataclass(frozen=True)
class PreviewRun:
    name: str
    path: Path
    frames: int
    events: int
    expected_alerts: int
    seconds: float
    size: tuple[int, int]


def describe(event: EventBase) -> str:
    """A short caption of an event."""
    skip = {"type", "schema_version", "table_id", "camera_id", "seq", "t", "frame", "confidence"}
    data = event.model_dump(mode="json", exclude=skip)
    parts = []
    for key, value in data.items():
        if value in (None, (), [], "nothing"):
            continue
        if key == "chips":
            value = "+".join(f"{c['count']}x{c['denom']}" for c in value)
        elif isinstance(value, float):
            value = f"{value:.2f}"
        parts.append(f"{key}={value}")
    kind = str(getattr(event, "type", "event"))
    return f"{event.t:6.2f}s {kind} " + " ".join(parts)


class ZoneOverlay:
    """The layout's zones projected once through the camera, drawn on every frame."""

    def __init__(self, timeline: Timeline, camera: Camera) -> None:
        layout = timeline.loaded.layout
        self.polys: list[tuple[str, npt.NDArray[np.int32], tuple[float, float]]] = []
        for zone in layout.all_zones:
            pts = _project(camera, zone.points)
            self.polys.append((zone.name, pts, tuple(pts.mean(axis=0))))
        self.outline = _project(camera, layout.outline_points)
        self.bet_lines = [_project(camera, np.asarray(seat.bet_line, dtype=np.float64)) for seat in layout.seats]
        self.scale = camera.width / 1280.0

    def draw(self, image: Image) -> None:
        cv2.polylines(image, [self.outline], True, (200, 200, 200), 1, cv2.LINE_AA)
        for line in self.bet_lines:
            cv2.polylines(image, [line], False, (0, 170, 255), 1, cv2.LINE_AA)
        for name, pts, (cx, cy) in self.polys:
            cv2.polylines(image, [pts], True, (150, 150, 150), 1, cv2.LINE_AA)
            cv2.putText(image, name, (int(cx) - 18, int(cy)), _FONT, 0.33 * max(self.scale, 0.6), (210, 210, 210),
                        1, cv2.LINE_AA)


def _project(camera: Camera, points: npt.NDArray[np.float64]) -> npt.NDArray[np.int32]:
    xyz = np.column_stack([points, np.zeros(len(points))])
    uv, _ = camera.project(xyz)
    return np.round(uv).astype(np.int32)


def label_of(obj: ObjectTruth) -> str:
    if obj.cls in (DetectorClass.CARD_FACE, DetectorClass.CARD_BACK) and obj.card:
        return f"{obj.cls.label} {obj.card}"
    if obj.cls == DetectorClass.CHIP and obj.chips:
        return f"chip {sum(obj.chips)} ({len(obj.chips)})"
    return obj.cls.label


def annotate_objects(image: Image, objects: list[ObjectTruth], *, scale: float) -> None:
    for obj in visible_objects(objects):
        x1, y1, x2, y2 = (round(v) for v in obj.box)
        colour = _COLOURS[obj.cls]
        cv2.rectangle(image, (x1, y1), (x2 - 1, y2 - 1), colour, 1)
        cv2.putText(image, label_of(obj), (x1, max(10, y1 - 3)), _FONT, 0.35 * max(scale, 0.6), colour, 1,
                    cv2.LINE_AA)


def caption_band(width: int, height: int, *, recent: list[str], active: list[ExpectedAlert], t: float) -> Image:
    band = np.full((height, width, 3), 24, dtype=np.uint8)
    line = max(12, height // 7)
    size = line / 40.0
    alerts = "   ".join(f"EXPECTED {a.rule.value} {a.rule.slug}{f' seat {a.seat}' if a.seat else ''} "
                        f"[{a.t_start:.1f}-{a.t_end:.1f} s]" for a in active[:2])
    cv2.putText(band, f"t = {t:6.2f} s", (8, line), _FONT, size, (255, 255, 255), 1, cv2.LINE_AA)
    cv2.putText(band, alerts, (8 + int(230 * size), line), _FONT, size, (70, 70, 255), 1, cv2.LINE_AA)
    chars = int(width / (14 * size))
    for i, text in enumerate(recent[-5:]):
        cv2.putText(band, text[:chars], (8, line * (i + 2)), _FONT, size, (220, 220, 220), 1, cv2.LINE_AA)
    return band


def write_preview(out_dir: Path, *, scenario: str = DEFAULT_PREVIEW, size: tuple[int, int] | None = None,
                  ) -> PreviewRun:
    """Render `scenario` annotated to out_dir/preview.mp4."""
    from floorman.datasets.scenario_render import render_frames

    started = time.perf_counter()
    timeline = compile_timeline(load_scenario(scenario))
    width, height = size or (960, 540)
    band_h = (height // 4) // 2 * 2
    camera = timeline.camera((width, height))
    overlay = ZoneOverlay(timeline, camera)
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / PREVIEW_FILE
    events = list(timeline.events)
    recent: deque[str] = deque(maxlen=5)
    cursor = 0
    with VideoWriter(path, size=(width, height + band_h), fps=FPS) as video:
        for frame, result in render_frames(timeline, size=(width, height)):
            while cursor < len(events) and events[cursor].frame <= frame:
                recent.append(describe(events[cursor]))
                cursor += 1
            t = frame / FPS
            image = result.image.copy()
            overlay.draw(image)
            annotate_objects(image, result.objects, scale=overlay.scale)
            active = [a for a in timeline.expected if a.t_start <= t <= a.t_end]
            band = caption_band(width, band_h, recent=list(recent), active=active, t=t)
            video.write(np.vstack([image, band]))
    seconds = time.perf_counter() - started
    return PreviewRun(name=timeline.spec.name, path=path, frames=timeline.n_frames, events=len(events),
                      expected_alerts=len(timeline.expected), seconds=seconds, size=(width, height + band_h))
