"""Edge agent speed and memory: analysed frames/s of a 1280x720 scenario video on one core, against the
Ultralytics predictor on the same video and weights in the same run; and RSS over a looping run.

    .venv/bin/python benchmarks/edge.py                      # speed (renders string_bet_01 if --video is not given)
    .venv/bin/python benchmarks/edge.py --minutes 10         # memory over a 10-minute looping run first

The edge runs its real pipeline (capture thread decoding the file, analysis thread: change-gated ONNX detector
-> calibration -> TableState -> event derivation -> evidence JPEGs, publish thread) with the file read as fast
as possible, pinned to one core (ONNX Runtime and OpenCV one thread each). The Ultralytics predictor runs the
.pt the ONNX model was exported from, on every frame, torch on one thread, same core; its imgsz is the
detector's fine pyramid level (960: what finds chips and cards) and its native 320.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import cv2
import numpy as np

from floorman.core.events import EventBase
from floorman.datasets.scenario import load_scenario
from floorman.datasets.timeline import compile_timeline
from floorman.edge.builders import VisionStateBuilder
from floorman.edge.derive import EventDeriver
from floorman.edge.evidence import EvidenceBuffer
from floorman.edge.gate import ChangeGatedDetector
from floorman.edge.pipeline import EdgePipeline, PipelineSettings
from floorman.edge.sources import CaptureSource, Frame
from floorman.vision.calibration import Calibration, PointPair, calibrate_from_points
from floorman.vision.detector import OnnxDetector, OnnxDetectorConfig

ROOT = Path(__file__).resolve().parents[1]
WEIGHTS = ROOT / "src" / "floorman" / "models" / "weights"
PT = ROOT / "runs" / "detector" / "n320b" / "weights" / "best.pt"
EVIDENCE_MB = 32


def scenario_video(name: str, video: Path | None) -> Path:
    if video is not None:
        return video
    out = Path(tempfile.gettempdir()) / f"floorman-bench-edge-{name}"
    if not (out / "video.mp4").is_file():
        subprocess.run([sys.executable, "-m", "floorman.cli", "datasets", "scenario", name, "--out", str(out),
                        "--overwrite"], check=True)
    return out / "video.mp4"


def scenario_calibration(name: str, size: tuple[int, int]) -> Calibration:
    """The scenario camera's exact calibration (from its own homography), fitted on the table's corners."""
    loaded = load_scenario(name)
    camera = compile_timeline(loaded).camera(size)
    to_pixels = camera.table_homography()
    table = [(-1100.0, -550.0), (1100.0, -550.0), (1100.0, 550.0), (-1100.0, 550.0), (0.0, 0.0)]
    pairs = []
    for x, y in table:
        u, v, w = to_pixels @ np.array([x, y, 1.0])
        pairs.append(PointPair(pixel=(float(u / w), float(v / w)), table_mm=(x, y)))
    return calibrate_from_points(pairs, layout=loaded.layout, image_size=size, camera_id="bench")


def run_edge(video: Path, *, name: str, model: Path, gate: bool, limit: int | None,
             loop: bool = False, stop: threading.Event | None = None) -> tuple[EdgePipeline, float, object]:
    loaded = load_scenario(name)
    capture = cv2.VideoCapture(str(video))
    size = (int(capture.get(cv2.CAP_PROP_FRAME_WIDTH)), int(capture.get(cv2.CAP_PROP_FRAME_HEIGHT)))
    capture.release()
    onnx = OnnxDetector(OnnxDetectorConfig(model=model, threads=1))
    detector = ChangeGatedDetector(onnx) if gate else onnx
    builder = VisionStateBuilder(detector, calibration=scenario_calibration(name, size), layout=loaded.layout,
                                 camera_id="bench")
    events: list[EventBase] = []
    source = LimitedSource(CaptureSource(str(video), name=str(video), live=False, loop=loop), limit=limit)
    pipeline = EdgePipeline(source, builder=builder, deriver=EventDeriver(loaded.layout, table_id="bench",
                                                                          camera_id="bench"),
                            sink=events.append, evidence=EvidenceBuffer(max_bytes=EVIDENCE_MB * 1024 * 1024),
                            settings=PipelineSettings(realtime=False))
    started = time.perf_counter()
    pipeline.start()
    while not pipeline.wait(0.2):
        if stop is not None and stop.is_set():
            break
    elapsed = time.perf_counter() - started
    pipeline.stop()
    return pipeline, elapsed, detector


class LimitedSource:
    """At most `limit` frames of a source."""

    def __init__(self, inner: CaptureSource, *, limit: int | None) -> None:
        self.inner = inner
        self.limit = limit
        self.name = inner.name
        self.live = inner.live
        self.count = 0

    def open(self) -> None:
        self.inner.open()

    def read(self) -> Frame | None:
        if self.limit is not None and self.count >= self.limit:
            return None
        self.count += 1
        return self.inner.read()

    def close(self) -> None:
        self.inner.close()


def ultralytics_fps(video: Path, *, weights: Path, imgsz: int, limit: int) -> float:
    from floorman.models.yolo_env import load_ultralytics

    os.environ.setdefault("YOLO_OFFLINE", "1")
    os.environ.setdefault("YOLO_CONFIG_DIR", str(ROOT / ".yolo"))
    ultralytics = load_ultralytics(threads=1)
    model = ultralytics.YOLO(str(weights))
    capture = cv2.VideoCapture(str(video))
    frames = 0
    ok, frame = capture.read()
    model.predict(frame, imgsz=imgsz, device="cpu", verbose=False)  # warm-up
    started = time.perf_counter()
    while ok and frames < limit:
        model.predict(frame, imgsz=imgsz, device="cpu", verbose=False)
        frames += 1
        ok, frame = capture.read()
    capture.release()
    return frames / (time.perf_counter() - started)


def rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def memory(video: Path, *, name: str, model: Path, minutes: float) -> None:
    stop = threading.Event()
    samples: list[tuple[float, float]] = []
    holder: list[EdgePipeline] = []
    started = time.monotonic()

    def run() -> None:
        pipeline, _, _ = run_edge(video, name=name, model=model, gate=True, limit=None, loop=True, stop=stop)
        holder.append(pipeline)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    while time.monotonic() - started < minutes * 60:
        time.sleep(5)
        samples.append(((time.monotonic() - started) / 60, rss_mb()))
    stop.set()
    thread.join(30)
    half = [s for s in samples if s[0] >= minutes / 2]
    slope = np.polyfit([s[0] for s in half], [s[1] for s in half], 1)[0] if len(half) > 2 else float("nan")
    stats = holder[0].stats if holder else None
    print(f"\nmemory over a {minutes:g}-minute looping run (RSS sampled every 5 s; the evidence buffer fills to "
          f"its {EVIDENCE_MB} MiB bound in the first minutes):")
    print("  minute: " + "  ".join(f"{m:.0f}: {mb:.0f} MB" for m, mb in samples if abs(m - round(m)) < 0.05))
    print(f"  max {max(s[1] for s in samples):.1f} MB, last {samples[-1][1]:.1f} MB, slope over the second half "
          f"{slope:+.2f} MB/min")
    if stats is not None:
        print(f"  frames analysed {stats.analysed}, events {stats.events}, evidence JPEGs {stats.evidence_frames}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scenario", default="string_bet_01", help="bundled scenario whose video is measured")
    parser.add_argument("--video", type=Path, help="its rendered video.mp4 (default: render it)")
    parser.add_argument("--model", type=Path, default=WEIGHTS / "detector_int8.onnx")
    parser.add_argument("--weights", type=Path, default=PT, help="the .pt for the Ultralytics predictor")
    parser.add_argument("--frames", type=int, default=None, help="at most this many frames for the edge")
    parser.add_argument("--peer-frames", type=int, default=90, help="frames for the Ultralytics predictor")
    parser.add_argument("--ungated-frames", type=int, default=45, help="frames for the edge with no gate")
    parser.add_argument("--core", type=int, default=0, help="the CPU core everything is pinned to")
    parser.add_argument("--minutes", type=float, default=0.0, help="also check memory over a looping run")
    parser.add_argument("--no-speed", action="store_true", help="only the memory check")
    args = parser.parse_args()
    os.sched_setaffinity(0, {args.core})
    cv2.setNumThreads(1)
    video = scenario_video(args.scenario, args.video)
    if args.minutes > 0:  # first, before torch is loaded into this process
        memory(video, name=args.scenario, model=args.model, minutes=args.minutes)
    if args.no_speed:
        return
    rows: list[tuple[str, float, str]] = []
    pipeline, elapsed, detector = run_edge(video, name=args.scenario, model=args.model, gate=True,
                                           limit=args.frames)
    gate = detector.stats if isinstance(detector, ChangeGatedDetector) else None
    detail = "" if gate is None else (f"{gate.skipped} skipped, {gate.regions} regions, {gate.full} whole frames; "
                                      f"{pipeline.stats.events} events")
    rows.append((f"edge, change-gated ({args.model.name})", pipeline.stats.analysed / elapsed, detail))
    plain, plain_s, _ = run_edge(video, name=args.scenario, model=args.model, gate=False, limit=args.ungated_frames)
    rows.append(("edge, detector on every whole frame", plain.stats.analysed / plain_s, "pyramid every frame"))
    if args.weights.is_file():
        for imgsz in (960, 320):
            rows.append((f"ultralytics predictor imgsz {imgsz} (.pt)",
                         ultralytics_fps(video, weights=args.weights, imgsz=imgsz, limit=args.peer_frames),
                         f"{args.peer_frames} frames"))
    else:
        print(f"no Ultralytics weights at {args.weights}: peer column skipped")
    peer = next((fps for label, fps, _ in rows if "imgsz 960" in label), None)
    print(f"\n{video} ({pipeline.stats.analysed} frames), one core (#{args.core}); target >= 15 frames/s and "
          ">= 3x the Ultralytics predictor")
    for label, fps, note in rows:
        ratio = f"{fps / peer:5.2f}x" if peer else "   - "
        print(f"  {label:<44} {fps:7.1f} frames/s  {ratio}  {note}")


if __name__ == "__main__":
    main()
