"""The edge's stages, each a thread, joined by bounded queues: capture -> analyse (build state, derive events,
keep evidence) -> publish.

When analysis is slower than the camera, the capture stage drops the oldest waiting frame and counts it (a live
source, or a file played at its recorded speed); a file read as fast as possible waits for the analysis
instead. Events are never dropped: the publish queue is bounded, and a full one holds the analysis back (which
then drops frames). A source that fails or stalls is closed and opened again with exponential backoff, and the
camera reads offline once no frame came for `stall_s`. `health()` says what the next heartbeat reports.
"""

from __future__ import annotations

import logging
import queue
import statistics
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

from floorman.core.errors import CameraError
from floorman.core.events import CameraStatus, EventBase
from floorman.edge.builders import StateBuilder, ViewsStateBuilder
from floorman.edge.derive import EventDeriver
from floorman.edge.evidence import EvidenceBuffer, encode_jpeg
from floorman.edge.publisher import Health
from floorman.edge.sources import Frame, FrameSource, ViewsSource

logger = logging.getLogger(__name__)


class _End:
    """Put in a queue after the last item."""


END: Final = _End()


@dataclass(frozen=True)
class PipelineSettings:
    """How the stages run."""

    realtime: bool = True  # a file is played at its recorded speed (dropping frames when behind)
    queue_size: int = 2  # frames waiting for the analysis
    event_queue_size: int = 10_000  # events waiting for the publisher
    stall_s: float = 2.0  # no frame for this long: the camera is offline
    backoff_s: float = 0.5  # first wait before reopening a failed source
    max_backoff_s: float = 5.0
    evidence_interval_s: float = 0.25  # evidence JPEG at least this often (and of every frame with events)
    evidence_quality: int = 80
    health_interval_s: float = 0.5

    def __post_init__(self) -> None:
        if self.queue_size < 1 or self.event_queue_size < 1:
            raise ValueError(f"expected queue sizes >= 1, got {self.queue_size}, {self.event_queue_size}")
        if min(self.stall_s, self.backoff_s, self.max_backoff_s, self.health_interval_s) <= 0:
            raise ValueError("expected stall_s, backoff_s, max_backoff_s and health_interval_s > 0")


@dataclass
class PipelineStats:
    """Counters since the pipeline started."""

    captured: int = 0
    analysed: int = 0
    dropped: int = 0
    events: int = 0
    reconnects: int = 0
    evidence_frames: int = 0


class EdgePipeline:
    """Capture, analysis and publish threads around one source, one state builder and one deriver."""

    def __init__(self, source: FrameSource, *, builder: StateBuilder, deriver: EventDeriver,
                 sink: Callable[[EventBase], object], evidence: EvidenceBuffer | None = None,
                 settings: PipelineSettings | None = None,
                 on_health: Callable[[Health], None] | None = None) -> None:
        if isinstance(source, ViewsSource) and not isinstance(builder, ViewsStateBuilder):
            raise ValueError(f"{source.name}: several cameras need a builder of their views (FusedStateBuilder)")
        self.source = source
        self.builder = builder
        self.deriver = deriver
        self.sink = sink
        self.evidence = evidence
        self.settings = settings or PipelineSettings()
        self.on_health = on_health
        self.stats = PipelineStats()
        self.drop = source.live or self.settings.realtime
        self.media_time = 0.0  # time of the last analysed frame: the heartbeat's clock
        self._frames: queue.Queue[Frame | _End] = queue.Queue(maxsize=self.settings.queue_size)
        self._events: queue.Queue[EventBase | _End] = queue.Queue(maxsize=self.settings.event_queue_size)
        self._stop = threading.Event()
        self._done = threading.Event()
        self._camera_ok = False
        self._last_frame_at = time.monotonic()
        self._latencies: deque[float] = deque(maxlen=10_000)  # since the last health reading (bounded)
        self._window = (time.monotonic(), 0, 0)  # (when, analysed, dropped) at the last health reading
        self._lock = threading.Lock()
        self._threads: list[threading.Thread] = []

    # -- control ---------------------------------------------------------------------------------------------

    def start(self) -> EdgePipeline:
        if self._threads:
            raise RuntimeError("the pipeline is already running")
        for name, target in (("capture", self._capture), ("analyse", self._analyse), ("publish", self._publish),
                             ("health", self._monitor)):
            thread = threading.Thread(target=target, name=f"floorman-edge-{name}", daemon=True)
            self._threads.append(thread)
            thread.start()
        return self

    def stop(self, timeout: float = 5.0) -> None:
        """Stop every stage (events already derived are still published)."""
        self._stop.set()
        for thread in self._threads:
            thread.join(timeout)
        self.source.close()

    def wait(self, timeout: float | None = None) -> bool:
        """Wait until a file source was fully analysed and published; True when it was."""
        return self._done.wait(timeout)

    @property
    def finished(self) -> bool:
        return self._done.is_set()

    # -- stages ----------------------------------------------------------------------------------------------

    def _capture(self) -> None:
        settings = self.settings
        backoff = settings.backoff_s
        opened = False
        pace: tuple[float, float] | None = None  # (wall clock, media time) of the first frame since opening
        while not self._stop.is_set():
            if not opened:
                try:
                    self.source.open()
                except CameraError as exc:
                    self._camera_ok = False
                    self.stats.reconnects += 1
                    logger.warning("camera %s: %s; retrying in %.1f s", self.source.name, exc, backoff)
                    self._stop.wait(backoff)
                    backoff = min(2 * backoff, settings.max_backoff_s)
                    continue
                opened, pace, backoff = True, None, settings.backoff_s
            try:
                frame = self.source.read()
            except CameraError as exc:
                logger.warning("camera %s: %s", self.source.name, exc)
                frame = None
            if frame is None:
                self.source.close()
                opened = False
                if not self.source.live:
                    logger.info("source %s ended", self.source.name)
                    self._put_frame(END)
                    return
                self._camera_ok = False
                logger.warning("camera %s stopped sending frames; reconnecting in %.1f s", self.source.name, backoff)
                self._stop.wait(backoff)
                backoff = min(2 * backoff, settings.max_backoff_s)
                continue
            self._camera_ok = True
            self._last_frame_at = time.monotonic()
            self.stats.captured += 1
            if settings.realtime and not self.source.live:
                pace = pace or (time.monotonic(), frame.t)
                delay = pace[0] + (frame.t - pace[1]) - time.monotonic()
                if delay > 0:
                    self._stop.wait(delay)
            self._put_frame(frame)

    def _put_frame(self, item: Frame | _End) -> None:
        """Queue a frame; when the queue is full, drop the oldest waiting frame (live or paced sources) or wait
        (a file read as fast as possible, and the end marker)."""
        dropping = self.drop and not isinstance(item, _End)
        while not self._stop.is_set():
            try:
                if dropping:
                    self._frames.put_nowait(item)
                else:
                    self._frames.put(item, timeout=0.1)
                return
            except queue.Full:
                if dropping:
                    try:
                        self._frames.get_nowait()
                        self.stats.dropped += 1
                    except queue.Empty:
                        pass

    def _analyse(self) -> None:
        last_evidence = -1e9
        while not self._stop.is_set():
            try:
                item = self._frames.get(timeout=0.1)
            except queue.Empty:
                continue
            if isinstance(item, _End):
                self._put_event(END)
                return
            if item.views and isinstance(self.builder, ViewsStateBuilder):  # a ViewsSource's: every camera's
                state = self.builder.build_views((item.image, *item.views), item.number, item.t)
            else:
                state = self.builder.build(item.image, item.number, item.t)
            events = self.deriver.update(state)
            if self.evidence is not None and (events or item.t - last_evidence >= self.settings.evidence_interval_s):
                self.evidence.add(item.number, item.t, encode_jpeg(item.image, quality=self.settings.evidence_quality))
                self.stats.evidence_frames += 1
                last_evidence = item.t
            for event in events:
                self._put_event(event)
            self.media_time = max(self.media_time, item.t)
            self.stats.analysed += 1
            with self._lock:
                self._latencies.append(time.monotonic() - item.captured_at)

    def _put_event(self, item: EventBase | _End) -> None:
        while not self._stop.is_set():
            try:
                self._events.put(item, timeout=0.1)
                return
            except queue.Full:
                continue

    def _publish(self) -> None:
        while True:
            try:
                item = self._events.get(timeout=0.1)
            except queue.Empty:
                if self._stop.is_set():
                    return
                continue
            if isinstance(item, _End):
                self._done.set()
                return
            try:
                self.sink(item)
                self.stats.events += 1
            except (ValueError, RuntimeError) as exc:
                logger.error("could not publish a %s event: %s", type(item).__name__, exc)

    def _monitor(self) -> None:
        while not self._stop.wait(self.settings.health_interval_s):
            if self.on_health is not None:
                self.on_health(self.health())

    # -- health ----------------------------------------------------------------------------------------------

    def camera_status(self) -> CameraStatus:
        stalled = time.monotonic() - self._last_frame_at > self.settings.stall_s
        if not self._camera_ok or (stalled and not self._done.is_set()) or self._done.is_set():
            return CameraStatus.OFFLINE
        return CameraStatus.ONLINE

    def health(self) -> Health:
        """fps and median latency since the last call, frames dropped since start, camera status."""
        now = time.monotonic()
        when, analysed, dropped = self._window
        self._window = (now, self.stats.analysed, self.stats.dropped)
        with self._lock:
            latencies = list(self._latencies)
            self._latencies.clear()
        elapsed = max(now - when, 1e-6)
        fps = (self.stats.analysed - analysed) / elapsed
        status = self.camera_status()
        recent_drops = self.stats.dropped - dropped
        if status is CameraStatus.ONLINE and recent_drops > (self.stats.analysed - analysed):
            status = CameraStatus.DEGRADED  # more frames dropped than analysed
        latency = statistics.median(latencies) * 1000.0 if latencies else 0.0
        return Health(status=status, fps=round(fps, 2), latency_ms=round(latency, 1),
                      frames_dropped=self.stats.dropped)
