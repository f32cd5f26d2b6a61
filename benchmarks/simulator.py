"""Simulator throughput: training images/s and video frames/s at 1280x720, against the DESIGN.md targets.

    .venv/bin/python benchmarks/simulator.py [--images 60] [--dataset-images 200] [--frames 150] [--workers 2]

- training images: random scenes and cameras (`random_sample`), `Effects.random`, rendered and written as
  JPEG with their YOLO labels and JSON sidecar: in this process (`render_image`) once the texture caches are
  warm (the steady state of a long run), and through `render_dataset` with --workers processes (the
  `floorman datasets render` path end to end, including process start-up and cold texture caches).
- video frames: one fixed scene and camera (the empty-table layer cached by the Renderer), a hand reaching
  across the table and back, no camera effects.
"""

from __future__ import annotations

import argparse
import math
import os
import resource
import tempfile
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

from floorman.datasets.camera import Camera
from floorman.datasets.random_scene import SceneStyle, random_scene
from floorman.datasets.render import Renderer
from floorman.datasets.render_dataset import DatasetSpec, ImageJob, prepare_out, render_dataset, render_image
from floorman.datasets.scene import HandObject

SIZE = (1280, 720)
TARGET_IMAGES = 10.0
TARGET_FRAMES = 15.0


def cpu_seconds() -> float:
    """CPU time of this process and its finished children (worker processes)."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


Rates = tuple[float, float]  # (per wall second, per CPU second)


def training_images_per_second(count: int, *, seed: int) -> Rates:
    with tempfile.TemporaryDirectory() as tmp:
        spec = DatasetSpec(out=Path(tmp), count=count, seed=seed, size=SIZE, progress=False)
        prepare_out(spec.out, overwrite=True)
        # A first pass over the same images fills the texture caches (card faces and backs cost 10-140 ms each
        # to draw the first time): the timed pass is the steady state of a long dataset run.
        for index in range(count):
            render_image(ImageJob(index=index, split="train", spec=spec))
        start, cpu = time.perf_counter(), cpu_seconds()
        for index in range(count):
            render_image(ImageJob(index=index, split="train", spec=spec))
        return count / (time.perf_counter() - start), count / (cpu_seconds() - cpu)


def dataset_images_per_second(count: int, *, seed: int, workers: int) -> Rates:
    with tempfile.TemporaryDirectory() as tmp:
        start, cpu = time.perf_counter(), cpu_seconds()
        render_dataset(DatasetSpec(out=Path(tmp) / "ds", count=count, seed=seed, size=SIZE, workers=workers,
                                   progress=False))
        return count / (time.perf_counter() - start), count / (cpu_seconds() - cpu)


def video_frames_per_second(frames: int, *, seed: int) -> Rates:
    rng = np.random.default_rng(seed)
    scene = random_scene(rng, style=SceneStyle.CASINO)
    scene.hands = []
    camera = Camera.look_at(eye=(0.0, -250.0, 1500.0), target=(0.0, 0.0, 0.0), size=SIZE, hfov_deg=75.0)
    renderer = Renderer(camera)
    seat = scene.layout.seat(3)
    sx, sy = seat.position
    base = HandObject(id=10_000, elbow=(sx * 1.15, sy * 1.15, 260.0), wrist=(sx * 0.8, sy * 0.8, 90.0), seat=3)
    renderer.render(scene, rng=rng)  # caches the empty table
    start, cpu = time.perf_counter(), cpu_seconds()
    for frame in range(frames):
        reach = 0.5 - 0.5 * math.cos(2.0 * math.pi * frame / 60.0)  # in and out every two seconds
        wx, wy = sx * (0.8 - 0.45 * reach), sy * (0.8 - 0.45 * reach)
        scene.hands = [replace(base, wrist=(wx, wy, 90.0 - 30.0 * reach))]
        renderer.render(scene, rng=rng)
    return frames / (time.perf_counter() - start), frames / (cpu_seconds() - cpu)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--images", type=int, default=60, help="training images to time")
    parser.add_argument("--frames", type=int, default=150, help="video frames to time")
    parser.add_argument("--dataset-images", type=int, default=200,
                        help="images for the dataset command (each worker first fills its texture caches)")
    parser.add_argument("--workers", type=int, default=2, help="worker processes for the dataset command")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rows = [
        ("training images/s, 1 process, texture caches warm", training_images_per_second(args.images, seed=args.seed),
         TARGET_IMAGES),
        (f"training images/s, datasets render --workers {args.workers} ({args.dataset_images} images)",
         dataset_images_per_second(args.dataset_images, seed=args.seed, workers=args.workers), TARGET_IMAGES),
        ("video frames/s, fixed camera, moving hand", video_frames_per_second(args.frames, seed=args.seed),
         TARGET_FRAMES),
    ]
    load = os.getloadavg()[0]
    print(f"simulator throughput at {SIZE[0]}x{SIZE[1]} on {os.cpu_count()} CPUs (load average {load:.1f})")
    print("per CPU-s: the rate per second of CPU time the run used (what one idle core would give)")
    print(f"{'measure':<56} {'per wall-s':>10} {'per CPU-s':>10} {'target':>7}  ok")
    for name, (wall, cpu), target in rows:
        print(f"{name:<56} {wall:10.1f} {cpu:10.1f} {target:7.1f}  {'yes' if wall >= target else 'NO'}")


if __name__ == "__main__":
    main()
