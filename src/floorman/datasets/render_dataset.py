"""Writing a YOLO detection dataset of random scenes: images, labels, sidecars and `data.yaml`.

Image `i` is drawn from `np.random.SeedSequence(seed, spawn_key=(i,))` alone, so the output is the same
byte for byte whatever the number of worker processes. Which images go to `val` is drawn from the seed.
"""

from __future__ import annotations

import logging
import multiprocessing
import sys
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path

import cv2
import numpy as np
from tqdm import tqdm

from floorman.core.errors import FloormanError
from floorman.datasets.effects import Effects
from floorman.datasets.random_scene import TILT_LIMITS_DEG, SceneStyle, Tilt, random_sample, tilt_in_limits
from floorman.datasets.render import Renderer, RenderOptions
from floorman.datasets.scene import COURT_FIGURE_MODES, check_suit_shapes, with_court_figures, with_suit_shapes
from floorman.datasets.yolo import image_meta, labels_text, write_data_yaml, yolo_labels

logger = logging.getLogger(__name__)

SPLITS = ("train", "val")
JPEG_QUALITY = 95
# One camera per image: a smaller top-down table raster (1.5x the image's pixels) keeps each new camera cheap.
TRAINING_OPTIONS = RenderOptions(table_pixels_factor=1.5)


@dataclass(frozen=True, slots=True)
class DatasetSpec:
    out: Path
    count: int
    seed: int
    size: tuple[int, int] | None = None
    workers: int = 1
    val_fraction: float = 0.1
    overwrite: bool = False
    progress: bool = True
    style: SceneStyle | None = None  # None: both styles, home one time in five
    seat_chips: float = 0.0  # chance a casino scene's seats hold their stacks side by side (`seat_chips`)
    court_figures: str = "own"  # the court cards' figures (`scene.with_court_figures`)
    suit_shapes: str = "own"  # the cards' suit symbols (`scene.with_suit_shapes`)
    camera_tilt: Tilt | None = None  # casino cameras' tilt range in degrees (`random_camera`)
    chip_designs: float = 0.0  # chance a scene's chips are another club's design (`chip_designs.club_chipset`)
    home_button: float = 0.0  # chance a home scene has a dealer button among its chips (`random_scene_with_focus`)
    white_spots: bool = False  # another club's chips (`chip_designs`) with white edge spots only (`club_chipset`)

    def __post_init__(self) -> None:
        if self.count < 1:
            raise ValueError(f"count: expected at least 1 image, got {self.count}")
        if self.workers < 1:
            raise ValueError(f"workers: expected at least 1, got {self.workers}")
        if not 0.0 <= self.val_fraction < 1.0:
            raise ValueError(f"val fraction: expected a number in [0, 1), got {self.val_fraction}")
        if self.seed < 0:
            raise ValueError(f"seed: expected a non-negative integer, got {self.seed}")
        if not 0.0 <= self.seat_chips <= 1.0:
            raise ValueError(f"seat chips: expected a probability in [0, 1], got {self.seat_chips}")
        if not 0.0 <= self.chip_designs <= 1.0:
            raise ValueError(f"chip designs: expected a probability in [0, 1], got {self.chip_designs}")
        if not 0.0 <= self.home_button <= 1.0:
            raise ValueError(f"home button: expected a probability in [0, 1], got {self.home_button}")
        if self.court_figures not in COURT_FIGURE_MODES:
            raise ValueError(f"court figures: expected one of {', '.join(COURT_FIGURE_MODES)}, got "
                             f"{self.court_figures!r}")
        check_suit_shapes(self.suit_shapes)
        if self.camera_tilt is not None:
            low, high = self.camera_tilt
            if not tilt_in_limits(self.camera_tilt):
                raise ValueError(f"camera tilt: expected MIN-MAX degrees with {TILT_LIMITS_DEG[0]:g} <= MIN <= MAX <= "
                                 f"{TILT_LIMITS_DEG[1]:g}, got {low:g}-{high:g}")


@dataclass(frozen=True, slots=True)
class ImageJob:
    index: int
    split: str
    spec: DatasetSpec


@dataclass(frozen=True, slots=True)
class ImageDone:
    index: int
    split: str
    labels: int
    objects: int


@dataclass(frozen=True, slots=True)
class DatasetSummary:
    out: Path
    train: int
    val: int
    labels: int


def image_name(index: int) -> str:
    return f"{index:07d}"


def val_indices(*, count: int, seed: int, val_fraction: float) -> set[int]:
    """Which images form the validation split (a seeded draw of round(count * fraction) indices)."""
    n_val = round(count * val_fraction)
    order = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(2**31,))).permutation(count)
    return {int(i) for i in order[:n_val]}


def image_rng(seed: int, index: int) -> np.random.Generator:
    return np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(index,)))


def render_image(job: ImageJob) -> ImageDone:
    """Render image `job.index` and write its image, label file and sidecar."""
    spec = job.spec
    rng = image_rng(spec.seed, job.index)
    scene, camera = random_sample(rng, size=spec.size, style=spec.style, seat_chips=spec.seat_chips,
                                  tilt_deg=spec.camera_tilt, chip_designs=spec.chip_designs,
                                  home_button=spec.home_button, white_spots=spec.white_spots)
    # Figures drawn apart from the scene's generator: the same seed gives the same frames but for the figures.
    scene = with_court_figures(scene, spec.court_figures, np.random.default_rng([spec.seed, job.index, 13]))
    scene = with_suit_shapes(scene, spec.suit_shapes, np.random.default_rng([spec.seed, job.index, 17]))
    effects = Effects.random(rng)
    # The effects' JPEG re-compression is the file's own encoding: one encode instead of encode-decode-encode.
    in_render = replace(effects, jpeg_quality=None)
    result = Renderer(camera, options=TRAINING_OPTIONS).render(scene, effects=in_render, rng=rng)
    name = image_name(job.index)
    image_rel = f"images/{job.split}/{name}.jpg"
    quality = effects.jpeg_quality or JPEG_QUALITY
    ok, encoded = cv2.imencode(".jpg", result.image, [cv2.IMWRITE_JPEG_QUALITY, quality])
    if not ok:
        raise FloormanError(f"could not encode image {image_rel}")
    (spec.out / image_rel).write_bytes(encoded.tobytes())
    labels = yolo_labels(result)
    (spec.out / "labels" / job.split / f"{name}.txt").write_text(labels_text(labels), encoding="utf-8")
    meta = image_meta(result, image=image_rel, seed=spec.seed, index=job.index, scene=scene, camera=camera,
                      effects=effects)
    (spec.out / "meta" / job.split / f"{name}.json").write_text(meta.model_dump_json(), encoding="utf-8")
    return ImageDone(index=job.index, split=job.split, labels=len(labels), objects=len(result.objects))


def prepare_out(out: Path, *, overwrite: bool) -> None:
    """Create the dataset folders; refuse a non-empty folder unless `overwrite` (which deletes nothing)."""
    if out.exists() and not out.is_dir():
        raise FloormanError(f"--out: {out} exists and is not a directory")
    if out.exists() and any(out.iterdir()) and not overwrite:
        raise FloormanError(f"--out: {out} is not empty; choose a new directory or pass --overwrite "
                            "(files with the same names are replaced, nothing else is deleted)")
    for kind in ("images", "labels", "meta"):
        for split in SPLITS:
            (out / kind / split).mkdir(parents=True, exist_ok=True)


def _worker_init() -> None:
    cv2.setNumThreads(1)


def _jobs(spec: DatasetSpec) -> Iterator[ImageJob]:
    val = val_indices(count=spec.count, seed=spec.seed, val_fraction=spec.val_fraction)
    for index in range(spec.count):
        yield ImageJob(index=index, split="val" if index in val else "train", spec=spec)


def render_dataset(spec: DatasetSpec) -> DatasetSummary:
    prepare_out(spec.out, overwrite=spec.overwrite)
    done: list[ImageDone] = []
    bar = tqdm(total=spec.count, file=sys.stderr, unit="img", disable=not spec.progress, desc="render")
    try:
        if spec.workers == 1:
            for job in _jobs(spec):
                done.append(render_image(job))
                bar.update(1)
        else:
            context = multiprocessing.get_context("spawn")
            with context.Pool(spec.workers, initializer=_worker_init) as pool:
                for result in pool.imap_unordered(render_image, _jobs(spec), chunksize=2):
                    done.append(result)
                    bar.update(1)
    finally:
        bar.close()
    write_data_yaml(spec.out)
    summary = DatasetSummary(out=spec.out, train=sum(d.split == "train" for d in done),
                             val=sum(d.split == "val" for d in done), labels=sum(d.labels for d in done))
    logger.debug("wrote %d images (%d train, %d val) with %d labels to %s", len(done), summary.train, summary.val,
                summary.labels, spec.out)
    return summary
