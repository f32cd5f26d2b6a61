"""One accelerator session's detector run: render, cut, train, export, measure — in one process.

    python3 scripts/device_train.py --out DIR [--count 3000] [--seed 1] [--hours 0.09 | --budget-s 540]
                                    [--weights last.pt] [--no-export] [--no-measure] [--device 0]

Written for the device machine (`scripts/device_train.sh` sets it up): it imports the library modules it needs
directly, not `floorman.cli`, whose other commands need packages that machine lacks (pyzmq, PyAV). Runs the
same recipe on a CPU with small numbers (`--count 12 --test-count 4 --hours 0.005 --device cpu`), which is how
it is checked without an accelerator. Every step's time goes to DIR/device_log.txt; DIR receives best.pt,
last.pt, results.csv and train_log.txt, then (unless --no-export / --no-measure) detector.onnx,
detector_int8.onnx and metrics.txt (the mAP table of benchmarks/detector.py on a fresh test render, seed
20261129): at most 8 files, the device tool's limit.

--budget-s sets the training time box from what is left of the whole script's budget once rendering and
cutting are done (minus --setup-s for Ultralytics' caching and --reserve-s for the final validation and
copies), so a slow render shortens training instead of overrunning the device call. --weights fine-tunes an
earlier checkpoint instead of training from the model YAML: the shipped detector's is rebuilt here, on the CPU, by
`floorman models recover` (10.7 MB; carry it).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import shutil
import sys
import time
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "src"), str(ROOT)]

from floorman.datasets.render_dataset import DatasetSpec, render_dataset  # noqa: E402
from floorman.models.train import TrainConfig, prepare_data, train_detector  # noqa: E402

TEST_SEED = 20261129


@contextlib.contextmanager
def step(log: Path, name: str) -> Iterator[None]:
    start = time.perf_counter()
    sys.stdout.write(f"== {name}\n")
    sys.stdout.flush()
    yield
    line = f"{name}: {time.perf_counter() - start:.1f} s\n"
    sys.stdout.write(line)
    with log.open("a", encoding="utf-8") as f:
        f.write(line)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, required=True, help="where the results go")
    parser.add_argument("--work", type=Path, default=ROOT / "runs" / "device", help="renders and runs")
    parser.add_argument("--count", type=int, default=3000, help="training frames to render")
    parser.add_argument("--seed", type=int, default=1, help="the training render's seed (1: session 4's)")
    parser.add_argument("--test-count", type=int, default=150, help="test frames (seed 20261129)")
    parser.add_argument("--hours", type=float, default=0.08, help="training time box")
    parser.add_argument("--model", default="yolo11n.yaml", help="Ultralytics model YAML")
    parser.add_argument("--batch", type=int, default=128)
    parser.add_argument("--device", default="auto", help="auto, cpu or a CUDA index")
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1, help="render/cut/loader processes")
    parser.add_argument("--name", default="device")
    parser.add_argument("--budget-s", type=float, default=None, help="whole-script seconds; sets the time box")
    parser.add_argument("--setup-s", type=float, default=60.0, help="budgeted for Ultralytics' setup and caching")
    parser.add_argument("--reserve-s", type=float, default=25.0, help="budgeted for the final validation")
    parser.add_argument("--weights", type=Path, default=None, help="fine-tune this checkpoint")
    parser.add_argument("--optimizer", default="auto")
    parser.add_argument("--lr0", type=float, default=None)
    parser.add_argument("--lrf", type=float, default=None)
    parser.add_argument("--warmup", type=float, default=1.0, help="warm-up epochs")
    parser.add_argument("--hsv-v", type=float, default=0.4, help="brightness augmentation (0.6: overexposed photos)")
    parser.add_argument("--chip-designs", type=float, default=0.0, help="share of training frames played with another "
                        "club's chips (`floorman datasets render --chip-designs`; 0.6: plain white chips found)")
    parser.add_argument("--home-button", type=float, default=0.0, help="share of home training frames with a dealer "
                        "button (`floorman datasets render --home-button`: the button told from a plain white chip)")
    parser.add_argument("--no-export", action="store_true", help="stop after training (export elsewhere)")
    parser.add_argument("--no-measure", action="store_true", help="skip the test render and the mAP table")
    args = parser.parse_args()
    started = time.perf_counter()
    args.out.mkdir(parents=True, exist_ok=True)
    log = args.out / "device_log.txt"
    workers = max(1, args.workers)
    designs = f"_designs{args.chip_designs:g}" if args.chip_designs else ""
    designs += f"_button{args.home_button:g}" if args.home_button else ""
    render = args.work / f"render_s{args.seed}_{args.count}{designs}"
    with step(log, f"render {args.count} training frames"):
        if not (render / "data.yaml").is_file():
            render_dataset(DatasetSpec(out=render, count=args.count, seed=args.seed, workers=workers, progress=False,
                                       chip_designs=args.chip_designs, home_button=args.home_button))
    config = TrainConfig(data=render, levels=(320, 960), imgsz=320, model=args.model, epochs=300,
                         time_hours=args.hours, batch=args.batch, device=args.device, loader_workers=min(workers, 16),
                         prep_workers=workers, runs_dir=args.work, name=args.name, resume=False, cache=True,
                         warmup_epochs=args.warmup, close_mosaic=0, balance=0.5, coarse_repeat=3,
                         weights=args.weights, optimizer=args.optimizer, lr0=args.lr0, lrf=args.lrf, hsv_v=args.hsv_v)
    with step(log, "cut into windows"):
        prepare_data(config)
    if args.budget_s is not None:
        left = args.budget_s - (time.perf_counter() - started) - args.setup_s - args.reserve_s
        if left < 30:
            raise SystemExit(f"--budget-s {args.budget_s}: only {left:.0f} s left for training after rendering")
        config = config.model_copy(update={"time_hours": left / 3600})
    with step(log, f"train ({config.time_hours:.4f} h box)"):
        best = train_detector(config)
    for source in (best, best.parent / "last.pt", best.parents[1] / "results.csv"):
        if source.is_file():
            shutil.copy(source, args.out / source.name)
    if args.no_export:
        return 0
    from floorman.models.export import ExportConfig, calibration_images, export_detector

    windows = args.work / args.name / "windows_320_320_960" / "images"
    with step(log, "export fp32 + int8"):
        images = calibration_images(windows / "val", count=64)
        export_detector(ExportConfig(weights=best, out_dir=args.out, name="detector", imgsz=320, levels=(320, 960),
                                     calibration_images=images, calibration_count=64, int8=True))
    if args.no_measure:
        return 0
    test = args.work / f"test_s{TEST_SEED}_{args.test_count}"
    with step(log, f"render {args.test_count} test frames"):
        if not (test / "data.yaml").is_file():
            render_dataset(DatasetSpec(out=test, count=args.test_count, seed=TEST_SEED, workers=workers,
                                       val_fraction=0.0, progress=False))
    with step(log, "measure"):
        from benchmarks import detector as bench

        sys.argv = ["detector.py", "--data", str(test), "--fp32", str(args.out / "detector.onnx"), "--int8",
                    str(args.out / "detector_int8.onnx"), "--threads", str(min(workers, 8)), "--repeats", "5"]
        captured = io.StringIO()
        with contextlib.redirect_stdout(captured):
            bench.main()
        (args.out / "metrics.txt").write_text(captured.getvalue(), encoding="utf-8")
        sys.stdout.write(captured.getvalue())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
