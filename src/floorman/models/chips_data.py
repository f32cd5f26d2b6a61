"""Training patches for the chip offset net (`floorman.vision.chips_cnn`), cut from simulator renders.

Each frame is drawn as `benchmarks/chips.py` draws its own (`random_sample` on `image_rng(seed, index)`, mixed
frame sizes, camera effects on) and calibrated exactly with the camera's height given. Every chip object at least
MIN_VISIBLE in sight gives patches cut as the recogniser cuts them (`chips_cnn.patch_geometry`): on its mask's
box, on that box with its sides moved as a detector's are (JITTERS of them, each side off by a normal spread of
JITTER_SHARE of the box's width, at least 1 px, times 0.5-1.5), and on the shipped detector's box matched to it at
IoU >= 0.5 (when a detector is given). The targets: the top disc's offset over the base along the patch's up
direction (patch px) for the object's true chip count and base, and the base's position in the patch.

Patches are cached on disk in chunks of CHUNK frames (`chunk_SEED_START.npz`), so a build resumes and training
reads them back without rendering again.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import numpy as np
import numpy.typing as npt

from floorman.core.layout import TableLayout
from floorman.datasets.camera import Camera
from floorman.datasets.effects import Effects
from floorman.datasets.random_scene import random_sample
from floorman.datasets.render import ObjectTruth, Renderer
from floorman.datasets.render_dataset import TRAINING_OPTIONS, image_rng
from floorman.datasets.scene import DetectorClass
from floorman.vision.calibration import Calibration, PointPair, calibrate_from_points
from floorman.vision.chips_cnn import PatchSpec, cut_patch, patch_geometry
from floorman.vision.chips_geometry import Box, TableCamera
from floorman.vision.detections import Detections
from floorman.vision.detector import box_iou
from floorman.vision.table_state import table_camera

logger = logging.getLogger(__name__)

CHUNK = 50  # frames per cache file
MIN_VISIBLE = 0.9  # the benchmark's chips (`benchmarks/chips.py --min-visible`)
JITTERS = 2
JITTER_SHARE = 0.06
MATCH_IOU = 0.5

Image = npt.NDArray[np.uint8]
FloatArray = npt.NDArray[np.float32]


class BoxDetector(Protocol):
    def detect(self, frame: Image) -> Detections: ...


@dataclass(frozen=True)
class Samples:
    """Patches (N, H, W, 3) BGR uint8 with their targets: the top's offset over the base (N,) and the base (N, 2),
    patch px; the chip count (N,), the box's kind (N,: 0 mask, 1 jittered, 2 detector) and the frame's long side."""

    patches: Image
    offset: FloatArray
    base: FloatArray
    count: npt.NDArray[np.int64]
    kind: npt.NDArray[np.int64]
    frame_size: npt.NDArray[np.int64]

    def __len__(self) -> int:
        return int(self.patches.shape[0])

    @classmethod
    def concat(cls, parts: list[Samples], *, spec: PatchSpec) -> Samples:
        if not parts:
            return cls(np.zeros((0, spec.height, spec.width, 3), np.uint8), np.zeros(0, np.float32),
                       np.zeros((0, 2), np.float32), np.zeros(0, np.int64), np.zeros(0, np.int64),
                       np.zeros(0, np.int64))
        return cls(*(np.concatenate([getattr(p, name) for p in parts]) for name in
                     ("patches", "offset", "base", "count", "kind", "frame_size")))


def exact_calibration(camera: Camera, layout: TableLayout) -> Calibration:
    """The calibration `floorman calibrate` gives on a well-marked table: four felt points projected by `camera`."""
    corners = np.array([[-600.0, -300.0], [600.0, -300.0], [600.0, 300.0], [-600.0, 300.0]])
    pixels, _ = camera.project(np.hstack([corners, np.zeros((4, 1))]))
    pairs = [PointPair(pixel=(float(u), float(v)), table_mm=(float(x), float(y)))
             for (u, v), (x, y) in zip(pixels, corners, strict=True)]
    return calibrate_from_points(pairs, layout=layout, image_size=(camera.width, camera.height))


def targets(camera: TableCamera, box: Box, stack: ObjectTruth, *, diameter_mm: float, thickness_mm: float,
            spec: PatchSpec) -> tuple[float, tuple[float, float]]:
    """The top disc's offset over the base (patch px, up) of `stack` in `box`'s patch, and its base in the patch."""
    if not stack.chips:
        raise ValueError(f"expected a chip stack with chips, got object {stack.id} with {stack.chips}")
    geometry = patch_geometry(camera, box, diameter_mm=diameter_mm, spec=spec)
    x, y = stack.position_mm
    ends = geometry.to_patch(camera.project(np.array([[x, y, 0.0], [x, y, len(stack.chips) * thickness_mm]])))
    return float(ends[0, 1] - ends[1, 1]), (float(ends[0, 0]), float(ends[0, 1]))


def jittered(box: Box, rng: np.random.Generator) -> Box | None:
    """`box` with its sides moved as a detector's are (None when it comes out empty)."""
    spread = max(1.0, JITTER_SHARE * (box[2] - box[0])) * float(rng.uniform(0.5, 1.5))
    moved = np.asarray(box, dtype=np.float64) + rng.normal(0.0, spread, 4)
    if moved[2] - moved[0] < 2.0 or moved[3] - moved[1] < 2.0:
        return None
    return float(moved[0]), float(moved[1]), float(moved[2]), float(moved[3])


def frame_samples(seed: int, index: int, *, spec: PatchSpec, detector: BoxDetector | None) -> Samples:
    """The patches of frame `index` of `seed`."""
    rng = image_rng(seed, index)
    scene, camera = random_sample(rng, size=None)
    result = Renderer(camera, options=TRAINING_OPTIONS).render(scene, effects=Effects.random(rng), rng=rng)
    jitter = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(index, 1)))
    stacks = [o for o in result.objects if o.cls == DetectorClass.CHIP and o.chips and o.box[2] > o.box[0]
              and o.box[3] > o.box[1] and o.visible_fraction >= MIN_VISIBLE]
    if not stacks:
        return Samples.concat([], spec=spec)
    table = table_camera(exact_calibration(camera, scene.layout), camera_height_mm=float(camera.eye[2]))
    boxes: list[tuple[ObjectTruth, Box, int]] = []
    for stack in stacks:
        boxes.append((stack, stack.box, 0))
        boxes += [(stack, b, 1) for b in (jittered(stack.box, jitter) for _ in range(JITTERS)) if b is not None]
    if detector is not None:
        found = detector.detect(result.image)
        chips = np.asarray(found.xyxy[found.class_id == DetectorClass.CHIP.value], dtype=np.float32).reshape(-1, 4)
        for stack in stacks:
            overlaps = box_iou(np.asarray(stack.box, dtype=np.float32), chips)[0] if len(chips) else np.zeros(0)
            if overlaps.size and float(overlaps.max()) >= MATCH_IOU:
                b = chips[int(np.argmax(overlaps))]
                boxes.append((stack, (float(b[0]), float(b[1]), float(b[2]), float(b[3])), 2))
    chipset = scene.chipset
    patches, offsets, bases = [], [], []
    for stack, box, _ in boxes:
        geometry = patch_geometry(table, box, diameter_mm=chipset.diameter_mm, spec=spec)
        patches.append(cut_patch(result.image, geometry, spec=spec))
        offset, base = targets(table, box, stack, diameter_mm=chipset.diameter_mm,
                               thickness_mm=chipset.thickness_mm, spec=spec)
        offsets.append(offset)
        bases.append(base)
    size = max(camera.width, camera.height)
    return Samples(np.stack(patches), np.asarray(offsets, np.float32), np.asarray(bases, np.float32),
                   np.asarray([len(s.chips or ()) for s, _, _ in boxes], np.int64),
                   np.asarray([k for _, _, k in boxes], np.int64), np.full(len(boxes), size, np.int64))


def build_cache(cache: Path, *, seed: int, frames: int, spec: PatchSpec,
                detector: BoxDetector | None) -> list[Path]:
    """Render frames 0..frames-1 of `seed` into chunk files under `cache` (kept ones reused); their paths."""
    cache.mkdir(parents=True, exist_ok=True)
    paths = []
    for start in range(0, frames, CHUNK):
        path = cache / f"chunk_{seed}_{start}.npz"
        paths.append(path)
        if path.is_file():
            continue
        parts = [frame_samples(seed, i, spec=spec, detector=detector) for i in range(start, min(frames, start + CHUNK))]
        samples = Samples.concat(parts, spec=spec)
        np.savez_compressed(path, **{name: getattr(samples, name) for name in
                                     ("patches", "offset", "base", "count", "kind", "frame_size")})
        logger.info("chips patches: frames %d-%d of seed %d, %d patches", start, start + len(parts) - 1, seed,
                    len(samples))
    return paths


def load_cache(paths: list[Path], *, spec: PatchSpec) -> Samples:
    """The samples of chunk files (`build_cache`)."""
    parts = []
    for path in paths:
        with np.load(path) as data:
            parts.append(Samples(data["patches"], data["offset"], data["base"], data["count"], data["kind"],
                                 data["frame_size"]))
        if parts[-1].patches.shape[1:] != (spec.height, spec.width, 3):
            raise ValueError(f"{path}: expected patches of {spec.height}x{spec.width}, got "
                             f"{parts[-1].patches.shape[1:]} (another patch spec: delete the cache)")
    return Samples.concat(parts, spec=spec)
