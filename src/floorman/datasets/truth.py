"""Scenario ground truth on disk: `truth.jsonl` (events, then expected alerts) and `frames.jsonl` (objects).

`truth.jsonl` holds one JSON object per line: first every event in `seq` order (seq 0, 1, 2, ...; `t` never
decreases), then the expected alerts ordered by `t_start`. Each line decodes with
`floorman.core.alerts.TRUTH_ADAPTER`. `frames.jsonl` holds one line per frame: the frame number, its time and
the rendered objects (`FrameTruth`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from types import TracebackType
from typing import IO

from floorman.core.alerts import ExpectedAlert
from floorman.core.events import EventBase
from floorman.core.frame_truth import FRAMES_FILE, FrameTruth, ObjectRecord, read_frames
from floorman.core.jsonl import read_truth
from floorman.datasets.render import ObjectTruth

TRUTH_FILE = "truth.jsonl"
__all__ = ["FRAMES_FILE", "TRUTH_FILE", "FrameTruth", "FramesWriter", "ObjectRecord", "object_record", "read_frames",
           "read_truth", "visible_objects", "write_truth"]


def write_truth(path: Path, *, events: Sequence[EventBase], expected: Sequence[ExpectedAlert]) -> int:
    """Write events (seq order) then expected alerts (by t_start); returns the number of lines."""
    lines = [e.model_dump_json() for e in sorted(events, key=lambda e: e.seq)]
    lines += [a.model_dump_json() for a in sorted(expected, key=lambda a: (a.t_start, a.rule.value))]
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return len(lines)


def object_record(obj: ObjectTruth) -> ObjectRecord:
    """The frames.jsonl record of one rendered object."""
    x1, y1, x2, y2 = obj.box
    return ObjectRecord(id=obj.id, cls=obj.cls.label, box=(round(x1, 1), round(y1, 1), round(x2, 1), round(y2, 1)),
                        visible_fraction=round(min(1.0, max(0.0, obj.visible_fraction)), 4),
                        position_mm=(round(obj.position_mm[0], 1), round(obj.position_mm[1], 1)), zone=obj.zone,
                        card=obj.card, face_up=obj.face_up, chips=obj.chips, count=obj.count)


def visible_objects(objects: Iterable[ObjectTruth]) -> list[ObjectTruth]:
    """The objects with at least one visible pixel (the renderer also reports fully hidden ones)."""
    return [o for o in objects if o.box[2] > o.box[0] and o.box[3] > o.box[1]]


class FramesWriter:
    """Appends one FrameTruth per line to frames.jsonl."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._file: IO[str] = path.open("w", encoding="utf-8")
        self.count = 0

    def write(self, *, frame: int, t: float, objects: Iterable[ObjectTruth]) -> None:
        records = tuple(object_record(o) for o in visible_objects(objects))
        self._file.write(FrameTruth(frame=frame, t=round(t, 4), objects=records).model_dump_json() + "\n")
        self.count += 1

    def close(self) -> None:
        self._file.close()

    def __enter__(self) -> FramesWriter:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()
