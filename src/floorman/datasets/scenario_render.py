"""Run a scenario: compile it, write its truth, render its frames to video.mp4 and frames.jsonl."""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path

import cv2
import numpy as np

from floorman.core.errors import FloormanError
from floorman.datasets.effects import Effects
from floorman.datasets.render import Renderer, RenderResult
from floorman.datasets.scenario import FPS, load_scenario
from floorman.datasets.scene import Scene
from floorman.datasets.timeline import Timeline, compile_timeline
from floorman.datasets.truth import FRAMES_FILE, TRUTH_FILE, FramesWriter, write_truth
from floorman.datasets.video import VideoWriter

logger = logging.getLogger(__name__)

VIDEO_FILE = "video.mp4"
SPEC_FILE = "scenario.yaml"
CALIBRATION_FILE = "calibration.png"
OUTPUTS = (VIDEO_FILE, TRUTH_FILE, FRAMES_FILE, SPEC_FILE, CALIBRATION_FILE)


@dataclass(frozen=True)
class ScenarioRun:
    """What a run wrote."""

    name: str
    out_dir: Path
    frames: int
    events: int
    expected_alerts: int
    seconds: float
    size: tuple[int, int]
    rendered: bool
    codec: str | None


def parse_size(text: str) -> tuple[int, int]:
    """``"1280x720"`` to (1280, 720); ValueError otherwise."""
    parts = text.lower().split("x")
    if len(parts) != 2 or not all(p.isdigit() for p in parts):
        raise ValueError(f"expected a size as WIDTHxHEIGHT such as 1280x720, got {text!r}")
    width, height = int(parts[0]), int(parts[1])
    if not (16 <= width <= 8192 and 16 <= height <= 8192) or width % 2 or height % 2:
        raise ValueError(f"expected even sizes within 16..8192, got {text!r}")
    return width, height


def prepare_out_dir(out_dir: Path, *, overwrite: bool) -> None:
    """Create the folder; refuse a non-empty one unless `overwrite` (then only our files are replaced)."""
    if out_dir.exists() and not out_dir.is_dir():
        raise FloormanError(f"{out_dir}: exists and is not a folder")
    if out_dir.is_dir() and any(out_dir.iterdir()) and not overwrite:
        raise FloormanError(f"{out_dir}: the folder is not empty; pass --overwrite to replace its scenario files")
    out_dir.mkdir(parents=True, exist_ok=True)


def scenario_effects(timeline: Timeline) -> Effects | None:
    spec = timeline.spec.effects
    return None if spec is None else Effects(**spec.model_dump())


def render_frames(timeline: Timeline, *, size: tuple[int, int] | None = None,
                  frames: range | None = None) -> Iterator[tuple[int, RenderResult]]:
    """Render the timeline's frames in order with the scenario's fixed camera and effects."""
    renderer = Renderer(timeline.camera(size))
    effects = scenario_effects(timeline)
    rng = np.random.default_rng(timeline.spec.seed + 7919)
    for frame in frames if frames is not None else range(timeline.n_frames):
        yield frame, renderer.render(timeline.scene_at(frame), effects=effects, rng=rng)


def write_calibration_frame(timeline: Timeline, path: Path, *, size: tuple[int, int]) -> None:
    """The scenario camera's view of the empty table with the layout's ArUco markers laid on it: what a club
    shoots once to calibrate the camera (`floorman calibrate`) before the markers are taken away."""
    empty = timeline.scene_at(0)
    bare = Scene(layout=empty.layout, chipset=empty.chipset, lighting=empty.lighting,
                 appearance=replace(empty.appearance, markers=True))
    image = Renderer(timeline.camera(size)).render(bare, rng=np.random.default_rng(timeline.spec.seed)).image
    if not cv2.imwrite(str(path), image):
        raise FloormanError(f"could not write {path}")


def run_scenario(name_or_path: str | Path, out_dir: Path, *, size: tuple[int, int] | None = None,
                 truth_only: bool = False, overwrite: bool = False) -> ScenarioRun:
    """Write truth.jsonl and a copy of the spec, and unless `truth_only` video.mp4, frames.jsonl and
    calibration.png (the camera's view of the empty table with the calibration markers)."""
    started = time.perf_counter()
    loaded = load_scenario(name_or_path)
    timeline = compile_timeline(loaded)
    prepare_out_dir(out_dir, overwrite=overwrite)
    (out_dir / SPEC_FILE).write_text(loaded.text, encoding="utf-8")
    write_truth(out_dir / TRUTH_FILE, events=timeline.events, expected=timeline.expected)
    width, height = size or loaded.spec.camera.size
    codec: str | None = None
    if truth_only:
        for stale in (VIDEO_FILE, FRAMES_FILE, CALIBRATION_FILE):  # an earlier render no longer matches this truth
            (out_dir / stale).unlink(missing_ok=True)
    else:
        with VideoWriter(out_dir / VIDEO_FILE, size=(width, height), fps=FPS) as video, \
                FramesWriter(out_dir / FRAMES_FILE) as frames_out:
            for frame, result in render_frames(timeline, size=(width, height)):
                video.write(result.image)
                frames_out.write(frame=frame, t=frame / FPS, objects=result.objects)
            codec = video.codec
        write_calibration_frame(timeline, out_dir / CALIBRATION_FILE, size=(width, height))
    seconds = time.perf_counter() - started
    logger.debug("%s: %d frames in %.1f s", loaded.spec.name, timeline.n_frames, seconds)
    return ScenarioRun(name=loaded.spec.name, out_dir=out_dir, frames=timeline.n_frames,
                       events=len(timeline.events), expected_alerts=len(timeline.expected), seconds=seconds,
                       size=(width, height), rendered=not truth_only, codec=codec)
