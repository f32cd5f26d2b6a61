"""Detector benchmark: accuracy on a rendered test set and latency against the Ultralytics predictor.

    .venv/bin/python benchmarks/detector.py --data DIR [--weights best.pt] [--threads 1]

Accuracy: the full `OnnxDetector.detect` path (pyramid windows, NMS, merging) on every whole frame of the
rendered dataset DIR (use a seed never used for training), scored against its YOLO labels with COCO-style
AP (101-point interpolation, class mean) at IoU 0.5 and averaged over IoU 0.50:0.95. Also the agreement of
INT8 with fp32 (fraction of fp32 detections matched by an INT8 one of the same class at IoU >= 0.5).

Latency: one network window at the model's input size, on `--threads` threads: ONNX Runtime fp32, ONNX
Runtime INT8, and the Ultralytics predictor (PyTorch) on the same weights when --weights is given, all in
this run; plus the whole-frame `detect` time per frame size, and the whole detect + recognise step (card
reader on every card_face box, chip recogniser on every chip box, uncalibrated) per 1280x720 frame.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from collections.abc import Callable
from pathlib import Path

import cv2
import numpy as np

from floorman.core.chips import ChipSet
from floorman.vision.chips import ChipRecogniser
from floorman.vision.detect_cli import read_cards, read_chips
from floorman.vision.detections import Detections
from floorman.vision.detector import OnnxDetector, OnnxDetectorConfig, letterbox, to_tensor
from floorman.vision.metrics import MeanAveragePrecision, iou_matrix

WEIGHTS = Path(__file__).resolve().parents[1] / "src" / "floorman" / "models" / "weights"
IMAGE_SUFFIXES = (".jpg", ".jpeg", ".png")
CHIPS = ChipRecogniser(ChipSet.default())


def load_truth(image: Path, shape: tuple[int, int]) -> tuple[np.ndarray, np.ndarray]:
    label = image.parents[2] / "labels" / image.parent.name / f"{image.stem}.txt"
    height, width = shape
    rows = [line.split() for line in label.read_text().splitlines() if line.strip()] if label.is_file() else []
    if not rows:
        return np.zeros((0, 4)), np.zeros(0, dtype=np.int64)
    v = np.asarray(rows, dtype=np.float64)
    cx, cy, w, h = v[:, 1] * width, v[:, 2] * height, v[:, 3] * width, v[:, 4] * height
    return np.stack([cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2], axis=1), v[:, 0].astype(np.int64)


def agreement(reference: Detections, other: Detections) -> tuple[int, int]:
    matched = 0
    for cls in np.unique(reference.class_id):
        a, b = reference[reference.class_id == cls], other[other.class_id == cls]
        if len(b):
            matched += int((iou_matrix(a.xyxy, b.xyxy).max(axis=1) >= 0.5).sum())
    return matched, len(reference)


def accuracy(args: argparse.Namespace, models: dict[str, Path]) -> None:
    images = sorted(p for p in args.data.glob("images/*/*") if p.suffix.lower() in IMAGE_SUFFIXES)[: args.limit]
    detectors = {name: OnnxDetector(OnnxDetectorConfig(model=path, conf=args.conf, threads=args.threads))
                 for name, path in models.items()}
    metrics = {name: MeanAveragePrecision(len(d.names)) for name, d in detectors.items()}
    agree = [0, 0]
    times: dict[str, list[float]] = {name: [] for name in detectors}
    for path in images:
        frame = np.asarray(cv2.imread(str(path)), dtype=np.uint8)
        truth_xyxy, truth_class = load_truth(path, frame.shape[:2])
        found = {}
        for name, detector in detectors.items():
            start = time.perf_counter()
            found[name] = detector.detect(frame)
            times[name].append(time.perf_counter() - start)
            metrics[name].update(found[name], truth_xyxy, truth_class)
        if "fp32" in found and "int8" in found:
            high = found["fp32"][found["fp32"].confidence >= 0.25]
            m, n = agreement(high, found["int8"][found["int8"].confidence >= 0.25])
            agree[0] += m
            agree[1] += n
    names = next(iter(detectors.values())).names
    print(f"\naccuracy on {len(images)} whole frames of {args.data} (conf >= {args.conf}):")
    print(f"{'model':<6} {'mAP50':>7} {'mAP50-95':>9}  per-class AP50 ({', '.join(names.values())})  ms/frame")
    for name, metric in metrics.items():
        m50, m5095, per_class = metric.compute()
        classes = " ".join("  -  " if np.isnan(v) else f"{v:.3f}" for v in per_class)
        print(f"{name:<6} {m50:7.3f} {m5095:9.3f}  {classes}  {1000 * statistics.mean(times[name]):.0f}")
    if agree[1]:
        print(f"int8/fp32 detection agreement (conf >= 0.25, IoU >= 0.5): {agree[0] / agree[1]:.3f} "
              f"({agree[0]}/{agree[1]})")


def timed(run: Callable[[], object], *, repeats: int) -> float:
    for _ in range(3):
        run()
    samples = []
    for _ in range(repeats):
        start = time.perf_counter()
        run()
        samples.append(time.perf_counter() - start)
    return 1000 * statistics.median(samples)


def latency(args: argparse.Namespace, models: dict[str, Path]) -> None:
    images = sorted(p for p in args.data.glob("images/*/*") if p.suffix.lower() in IMAGE_SUFFIXES)
    frame = np.asarray(cv2.imread(str(images[0])), dtype=np.uint8)
    rows: list[tuple[str, float]] = []
    imgsz = 0
    frames: list[tuple[str, float]] = []
    for name, path in models.items():
        detector = OnnxDetector(OnnxDetectorConfig(model=path, threads=args.threads, levels=()))
        imgsz = detector.imgsz
        window = frame[: detector.imgsz, : detector.imgsz]
        tensor = to_tensor(letterbox(window, detector.imgsz)[0])
        rows.append((f"onnxruntime {name} (session.run)", timed(
            lambda d=detector, t=tensor: d.session.run(None, {d.input_name: t}), repeats=args.repeats)))
        rows.append((f"onnxruntime {name} (detect: pre + run + post)", timed(
            lambda d=detector, w=window: d.detect(w), repeats=args.repeats)))
        pyramid = OnnxDetector(OnnxDetectorConfig(model=path, threads=args.threads))
        for size in ((1280, 720), (3000, 2000)):
            big = cv2.resize(frame, size)
            frames.append((f"{name} detect() {size[0]}x{size[1]}, levels {pyramid.levels}",
                           timed(lambda d=pyramid, f=big: d.detect(f), repeats=max(3, args.repeats // 5))))
        hd = cv2.resize(frame, (1280, 720))
        frames.append((f"{name} detect + recognise 1280x720 ({recognised(pyramid, hd)})",
                       timed(lambda d=pyramid, f=hd: recognise(d, f), repeats=max(3, args.repeats // 5))))
    if args.weights is not None:
        rows.append(("ultralytics predictor (PyTorch)", ultralytics_latency(args, frame=frame, imgsz=imgsz)))
    print(f"\nlatency of one {imgsz}x{imgsz} window, {args.threads} thread(s), median of {args.repeats}:")
    reference = next((ms for label, ms in rows if label.startswith("ultralytics")), None)
    for label, ms in rows:
        ratio = f"{reference / ms:5.2f}x" if reference else ""
        print(f"  {label:<46} {ms:8.1f} ms  {ratio}")
    print("whole frames through the pyramid (median):")
    for label, ms in frames:
        print(f"  {label:<46} {ms:8.1f} ms")


def recognise(detector: OnnxDetector, frame: np.ndarray) -> tuple[list[tuple[str | None, float | None]], dict]:
    """The whole per-frame step of `floorman detect`: detect, then read every face-up card and chip box."""
    detections = detector.detect(frame)
    cards = read_cards(frame, detections, names=detector.names)
    return cards, read_chips(frame, detections, names=detector.names, recogniser=CHIPS)


def recognised(detector: OnnxDetector, frame: np.ndarray) -> str:
    cards, chips = recognise(detector, frame)
    return f"{sum(1 for identity, _ in cards if identity)} cards read, {len(chips)} chip boxes"


def ultralytics_latency(args: argparse.Namespace, *, frame: np.ndarray, imgsz: int) -> float:
    from floorman.models.yolo_env import load_ultralytics

    # Ultralytics sets torch's threads to its NUM_THREADS again when it predicts: give it the same count, or it runs
    # on every core (and beside any other busy process, OpenMP's spinning threads slow it tenfold or more).
    ultralytics = load_ultralytics(threads=args.threads)
    model = ultralytics.YOLO(str(args.weights))
    window = frame[:imgsz, :imgsz]
    return timed(lambda: model.predict(window, imgsz=imgsz, device="cpu", verbose=False), repeats=args.repeats)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, required=True, help="rendered YOLO dataset (test seed)")
    parser.add_argument("--fp32", type=Path, default=WEIGHTS / "detector.onnx")
    parser.add_argument("--int8", type=Path, default=WEIGHTS / "detector_int8.onnx")
    parser.add_argument("--weights", type=Path, help="the .pt the ONNX files were exported from")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--conf", type=float, default=0.001, help="confidence floor for mAP (default 0.001)")
    parser.add_argument("--limit", type=int, help="at most this many test frames")
    parser.add_argument("--repeats", type=int, default=30)
    parser.add_argument("--skip-accuracy", action="store_true")
    args = parser.parse_args()
    os.environ.setdefault("OMP_NUM_THREADS", str(args.threads))
    models = {name: path for name, path in (("fp32", args.fp32), ("int8", args.int8)) if path.is_file()}
    latency(args, models)
    if not args.skip_accuracy:
        accuracy(args, models)


if __name__ == "__main__":
    main()
