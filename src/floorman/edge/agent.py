"""The edge agent: one camera of one table, from frames to the event bus.

`EdgeConfig` holds what `floorman edge` is given; `build_agent` checks every file (layout, calibration, model,
frames) with errors naming the file and field, and wires source -> state builder -> deriver -> publisher.
The state builder is the ONNX detector (run only where the frame changed, `floorman.edge.gate`) mapped through
the calibration, or, with `truth`, the simulator's per-frame truth (`frames.jsonl`) replayed in step with the
video.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from floorman.core.chips import ChipSet
from floorman.core.errors import ConfigError
from floorman.core.layout import TableLayout, bundled_layout_names
from floorman.edge.builders import FusedStateBuilder, StateBuilder, TruthStateBuilder, VisionStateBuilder
from floorman.edge.bus import PublisherKey
from floorman.edge.derive import DeriveConfig, EventDeriver
from floorman.edge.evidence import EvidenceBuffer
from floorman.edge.gate import ChangeGatedDetector
from floorman.edge.pipeline import EdgePipeline, PipelineSettings
from floorman.edge.publisher import EventPublisher, Health, PublisherSecurity
from floorman.edge.sources import FrameSource, ViewsSource, open_source
from floorman.edge.spool import Spool
from floorman.vision.calibration import MAX_CAMERA_HEIGHT_MM, Calibration, load_calibration
from floorman.vision.detector import OnnxDetector, OnnxDetectorConfig

logger = logging.getLogger(__name__)

DEFAULT_MODEL = Path(__file__).resolve().parents[1] / "models" / "weights" / "detector_int8.onnx"


class PerceptionConfig(BaseModel):
    """What turns one camera's frames into table states (`build_state_builder`): vision, or simulator truth."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    camera_id: str = Field(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9_.-]+$", description="Camera id.")
    calibration: Path | None = Field(default=None, description="Camera calibration YAML (needed for vision).")
    model: Path | None = Field(default=None, description="ONNX detector; default: the shipped INT8 model.")
    chipset: Path | None = Field(default=None, description="The club's chip set YAML; default: the bundled one.")
    camera_height_mm: float | None = Field(default=None, gt=0, le=MAX_CAMERA_HEIGHT_MM,
                                           description="Camera height above the felt.")
    truth: Path | None = Field(default=None, description="Simulator frames.jsonl: truth, not vision.")
    change_threshold: int = Field(default=12, ge=0, lt=256, description="Grey-level change that wakes the "
                                  "detector; 0 runs it on every whole frame.")
    threads: int = Field(default=1, ge=1, description="ONNX Runtime threads.")


class ViewConfig(BaseModel):
    """Another camera of the same table (`--view SRC CALIB`): its frames are read in step with the first's and
    its table states fused with them (`FusedStateBuilder`)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    source: str = Field(description="Video file, stream URL, camera index or image folder.")
    calibration: Path = Field(description="This camera's calibration YAML (its camera height, if measured, kept "
                              "in it: `floorman calibrate --camera-height`).")


class EdgeConfig(BaseModel):
    """Everything one edge agent needs."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    table_id: str = Field(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9_.-]+$", description="Table id.")
    camera_id: str = Field(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9_.-]+$", description="Camera id.")
    source: str = Field(description="Video file, stream URL, camera index or image folder.")
    layout: str = Field(description="Table layout YAML, or a bundled layout name.")
    calibration: Path | None = Field(default=None, description="Camera calibration YAML (needed for vision).")
    model: Path | None = Field(default=None, description="ONNX detector; default: the shipped INT8 model.")
    chipset: Path | None = Field(default=None, description="The club's chip set YAML (`floorman chips calibrate`); "
                                 "default: the bundled one.")
    camera_height_mm: float | None = Field(default=None, gt=0, le=MAX_CAMERA_HEIGHT_MM,
                                           description="Camera height above the felt, for stack counts under a "
                                           "camera looking straight down.")
    truth: Path | None = Field(default=None, description="Simulator frames.jsonl: derive from truth, not vision.")
    connect: str = Field(description="Broker frontend to connect to.")
    replay_bind: str = Field(default="tcp://*:*", description="Where to answer replay and evidence requests.")
    advertise: str | None = Field(default=None, description="Replay endpoint announced in heartbeats.")
    spool: str = Field(default=":memory:", description="SQLite spool file of published events.")
    spool_max_events: int = Field(default=100_000, ge=1, description="Events kept per publisher.")
    loop: bool = Field(default=False, description="Loop a video file or image folder.")
    realtime: bool = Field(default=True, description="Play files at their recorded speed (else as fast as possible).")
    fps: float = Field(default=30.0, gt=0, description="Frame rate of an image folder.")
    change_threshold: int = Field(default=12, ge=0, lt=256, description="Grey-level change (0..255) that counts "
                                  "a pixel as changed and wakes the detector there; 0 runs it on every whole frame.")
    evidence_mb: float = Field(default=64.0, gt=0, description="Evidence buffer size, MiB.")
    evidence_s: float = Field(default=120.0, gt=0, description="Evidence kept at most this long, seconds.")
    heartbeat_s: float = Field(default=1.0, gt=0, description="Seconds between heartbeats.")
    threads: int = Field(default=1, ge=1, description="ONNX Runtime threads.")
    derive: DeriveConfig = Field(default_factory=DeriveConfig, description="Event derivation settings.")
    views: list[ViewConfig] = Field(default_factory=list, description="The table's other cameras, fused with this "
                                    "one in table mm (vision only).")


def load_layout(spec: str) -> TableLayout:
    if spec in bundled_layout_names():
        return TableLayout.bundled(spec)
    path = Path(spec)
    if not path.is_file():
        raise ConfigError(f"no such layout file, and not a bundled layout {bundled_layout_names()}: {spec}",
                          field="--layout")
    return TableLayout.load(path)


def perception(config: EdgeConfig) -> PerceptionConfig:
    """The perception part of an edge's settings."""
    return PerceptionConfig(camera_id=config.camera_id, calibration=config.calibration, model=config.model,
                            chipset=config.chipset, camera_height_mm=config.camera_height_mm, truth=config.truth,
                            change_threshold=config.change_threshold, threads=config.threads)


def build_state_builder(config: PerceptionConfig, *, layout: TableLayout,
                        views: Sequence[ViewConfig] = ()) -> StateBuilder:
    """The state builder of the edge's camera, or, with `views`, of all its cameras fused."""
    if config.truth is not None:
        if views:
            raise ConfigError("--view fuses cameras' vision: simulator truth (--truth) is one camera's",
                              field="--view")
        return TruthStateBuilder.load(config.truth, camera_id=config.camera_id)
    if config.calibration is None:
        raise ConfigError("vision needs the camera's calibration (or --truth FRAMES to replay simulator truth)",
                          field="--calib")
    calibration = load_calibration(config.calibration, layout=layout)
    model = config.model or DEFAULT_MODEL
    if not model.is_file():
        raise ConfigError(f"no such ONNX model: {model}", field="--model")
    onnx = OnnxDetector(OnnxDetectorConfig(model=model, threads=config.threads))
    chipset = None
    if config.chipset is not None:
        if not config.chipset.is_file():
            raise ConfigError(f"no such chip set file: {config.chipset}", field="--chipset")
        chipset = ChipSet.load(config.chipset)

    def camera(calibration: Calibration, camera_id: str, height_mm: float | None, *,
               track: bool) -> VisionStateBuilder:
        # one change gate per camera (its own last frame); the ONNX session is shared (one analysis thread)
        detector = ChangeGatedDetector(onnx, threshold=config.change_threshold) if config.change_threshold > 0 \
            else onnx
        return VisionStateBuilder(detector, calibration=calibration, layout=layout, camera_id=camera_id,
                                  chipset=chipset, camera_height_mm=height_mm, track=track)

    if not views:
        return camera(calibration, config.camera_id, config.camera_height_mm, track=True)
    builders = [camera(calibration, config.camera_id, config.camera_height_mm, track=False)]
    for number, view in enumerate(views, start=1):
        builders.append(camera(load_calibration(view.calibration, layout=layout, field="--view"),
                               f"{config.camera_id}.{number}", None, track=False))
    return FusedStateBuilder(builders, camera_id=config.camera_id, chipset=chipset)


@dataclass
class EdgeAgent:
    """A wired edge: start, wait, stop."""

    config: EdgeConfig
    publisher: EventPublisher
    pipeline: EdgePipeline
    spool: Spool
    evidence: EvidenceBuffer

    def start(self) -> EdgeAgent:
        self.publisher.start()
        self.pipeline.start()
        logger.info("edge %s/%s: %s -> %s (replays and evidence on %s)", self.config.table_id,
                    self.config.camera_id, self.config.source, self.config.connect, self.publisher.advertised)
        return self

    def run(self, stop: threading.Event) -> None:
        """Until `stop` is set, or a file source (not looping) was fully published."""
        while not stop.is_set() and not self.pipeline.wait(0.2):
            pass

    def stop(self) -> None:
        self.pipeline.stop()
        self.publisher.health = self.pipeline.health()
        self.publisher.heartbeat()  # the last word: offline once the camera stopped
        self.publisher.stop()
        self.spool.close()


def build_agent(config: EdgeConfig, *, security: PublisherSecurity | None = None) -> EdgeAgent:
    """Check the files and wire the stages (nothing runs until `start`)."""
    layout = load_layout(config.layout)
    builder = build_state_builder(perception(config), layout=layout, views=config.views)
    source: FrameSource = open_source(config.source, loop=config.loop, fps=config.fps)
    if config.views:
        source = ViewsSource([source, *(open_source(v.source, loop=config.loop, fps=config.fps, field="--view")
                                        for v in config.views)])
    deriver = EventDeriver(layout, table_id=config.table_id, camera_id=config.camera_id, config=config.derive)
    spool = Spool(config.spool, max_events=config.spool_max_events)
    evidence = EvidenceBuffer(max_bytes=int(config.evidence_mb * 1024 * 1024), max_age_s=config.evidence_s)
    holder: list[EdgePipeline] = []
    publisher = EventPublisher(PublisherKey(config.table_id, config.camera_id), broker=config.connect,
                               replay=config.replay_bind, spool=spool, security=security,
                               heartbeat_interval=config.heartbeat_s, advertise=config.advertise, evidence=evidence,
                               clock=lambda: holder[0].media_time if holder else 0.0)

    def on_health(health: Health) -> None:
        publisher.health = health

    pipeline = EdgePipeline(source, builder=builder, deriver=deriver, sink=publisher.publish, evidence=evidence,
                            settings=PipelineSettings(realtime=config.realtime), on_health=on_health)
    holder.append(pipeline)
    return EdgeAgent(config=config, publisher=publisher, pipeline=pipeline, spool=spool, evidence=evidence)
