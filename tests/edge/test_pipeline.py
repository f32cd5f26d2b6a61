"""The edge's stages: bounded queues that drop and count when analysis is slow, reconnection, camera health."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import cv2
import numpy as np
import pytest

from floorman.core.errors import CameraError, ConfigError
from floorman.core.events import CameraStatus, EventBase
from floorman.core.table_state import TableState
from floorman.edge.derive import EventDeriver
from floorman.edge.evidence import EvidenceBuffer
from floorman.edge.pipeline import EdgePipeline, PipelineSettings
from floorman.edge.sources import CaptureSource, Frame, ImageFolderSource, open_source
from tests.edge.derive_helpers import LAYOUT, Scene, chips

IMAGE = np.zeros((36, 64, 3), dtype=np.uint8)


class SceneBuilder:
    """A state builder that shows a stack in stack_1 from the start and a bet in bet_1 from frame 10."""

    def __init__(self, delay: float = 0.0) -> None:
        self.delay = delay
        self.calls = 0

    def build(self, frame_bgr: np.ndarray, frame_no: int, t: float) -> TableState:
        del frame_bgr
        self.calls += 1
        if self.delay:
            time.sleep(self.delay)
        scene = Scene(chips={1: chips("stack_1", [100] * 5, track=1)})
        if frame_no >= 10:
            scene.chips[2] = chips("bet_1", [100], track=2)
        return TableState(frame=frame_no, t=t, chips=tuple(scene.chips.values()))


class FakeCamera:
    """A live source: `good` frames, then a broken stream (None), then `failures` failed opens, then frames."""

    live = True
    name = "fake camera"

    def __init__(self, *, good: int, failures: int, period: float = 0.002) -> None:
        self.good = good
        self.failures = failures
        self.period = period
        self.number = 0
        self.opens = 0
        self.broken = False

    def open(self) -> None:
        self.opens += 1
        if self.broken and self.failures > 0:
            self.failures -= 1
            raise CameraError("fake camera: connection refused")

    def read(self) -> Frame | None:
        time.sleep(self.period)
        if self.number == self.good and not self.broken:
            self.broken = True
            return None
        self.number += 1
        return Frame(number=self.number, t=time.time(), image=IMAGE, captured_at=time.monotonic())

    def close(self) -> None:
        pass


def write_folder(folder: Path, count: int) -> Path:
    folder.mkdir()
    for i in range(count):
        cv2.imwrite(str(folder / f"{i:04d}.png"), IMAGE)
    return folder


def collecting() -> tuple[list[EventBase], EventDeriver]:
    return [], EventDeriver(LAYOUT, table_id="t1", camera_id="c1")


def test_a_folder_read_as_fast_as_possible_is_analysed_whole(tmp_path: Path) -> None:
    events, deriver = collecting()
    evidence = EvidenceBuffer()
    pipeline = EdgePipeline(ImageFolderSource(write_folder(tmp_path / "f", 30)), builder=SceneBuilder(),
                            deriver=deriver, sink=events.append, evidence=evidence,
                            settings=PipelineSettings(realtime=False, evidence_interval_s=0.1)).start()
    try:
        assert pipeline.wait(10)
    finally:
        pipeline.stop()
    assert (pipeline.stats.captured, pipeline.stats.analysed, pipeline.stats.dropped) == (30, 30, 0)
    assert [e.model_dump()["zone"] for e in events] == ["stack_1", "bet_1"]
    assert 3 <= len(evidence) <= 30 and evidence.get(29) is not None
    assert pipeline.health().status is CameraStatus.OFFLINE  # the file is over


def test_analysis_slower_than_the_camera_drops_frames_counts_them_and_stays_bounded() -> None:
    events, deriver = collecting()
    camera = FakeCamera(good=10_000, failures=0, period=0.001)
    builder = SceneBuilder(delay=0.02)
    pipeline = EdgePipeline(camera, builder=builder, deriver=deriver, sink=events.append,
                            settings=PipelineSettings(queue_size=2)).start()
    try:
        time.sleep(1.0)
        health = pipeline.health()
        waiting = pipeline._frames.qsize()
    finally:
        pipeline.stop()
    assert pipeline.stats.dropped > pipeline.stats.analysed > 10
    assert health.frames_dropped > 0 and health.status is CameraStatus.DEGRADED
    assert waiting <= 2
    unaccounted = pipeline.stats.captured - pipeline.stats.analysed - pipeline.stats.dropped - pipeline._frames.qsize()
    assert unaccounted in (0, 1)  # at most the frame the analysis held when it stopped


def test_a_broken_stream_reads_offline_within_5_s_then_reconnects_with_backoff() -> None:
    events, deriver = collecting()
    camera = FakeCamera(good=20, failures=2)
    statuses: list[tuple[float, CameraStatus]] = []
    started = time.monotonic()
    pipeline = EdgePipeline(camera, builder=SceneBuilder(), deriver=deriver, sink=events.append,
                            settings=PipelineSettings(health_interval_s=0.1),
                            on_health=lambda h: statuses.append((time.monotonic() - started, h.status)))
    pipeline.start()
    try:
        deadline = time.monotonic() + 8
        while time.monotonic() < deadline and not (
                any(s is CameraStatus.OFFLINE for _, s in statuses) and statuses[-1][1] is CameraStatus.ONLINE):
            time.sleep(0.05)
    finally:
        pipeline.stop()
    broke_at = next(t for t, s in statuses if s is CameraStatus.ONLINE)
    offline_at = next(t for t, s in statuses if s is CameraStatus.OFFLINE)
    assert offline_at - broke_at < 5.0
    assert statuses[-1][1] is CameraStatus.ONLINE  # back after two failed opens
    assert pipeline.stats.reconnects == 2 and camera.opens == 4


def test_sources_are_chosen_from_the_spec_and_bad_ones_named(tmp_path: Path) -> None:
    assert isinstance(open_source("0"), CaptureSource) and open_source("0").live
    assert open_source("rtsp://10.0.0.5:554/cam").live
    assert isinstance(open_source(str(write_folder(tmp_path / "imgs", 2))), ImageFolderSource)
    with pytest.raises(ConfigError, match=r"--source.*no such file"):
        open_source(str(tmp_path / "missing.mp4"))
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(CameraError, match="no images"):
        open_source(str(empty)).open()


def test_a_video_file_loops_on_its_own_clock(tmp_path: Path) -> None:
    path = tmp_path / "clip.avi"
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter.fourcc(*"MJPG"), 10.0, (64, 36))
    for _ in range(5):
        writer.write(IMAGE)
    writer.release()
    source = open_source(str(path), loop=True)
    source.open()
    frames = [source.read() for _ in range(12)]
    source.close()
    times = [f.t for f in frames if f is not None]
    assert len(times) == 12 and times == sorted(times)
    assert times[5] == pytest.approx(0.5) and [f.number for f in frames if f] == list(range(12))


def test_stop_is_prompt_even_while_the_publisher_is_slow() -> None:
    events: list[EventBase] = []
    release = threading.Event()

    def slow_sink(event: EventBase) -> None:
        release.wait(0.2)
        events.append(event)

    camera = FakeCamera(good=10_000, failures=0)
    pipeline = EdgePipeline(camera, builder=SceneBuilder(), deriver=EventDeriver(LAYOUT, table_id="t1",
                                                                                 camera_id="c1"),
                            sink=slow_sink).start()
    time.sleep(0.3)
    began = time.monotonic()
    pipeline.stop()
    assert time.monotonic() - began < 3.0
