"""Training patches for the chip offset net (`floorman.vision.chips_cnn`), cut from simulator renders.

Each frame is drawn as `benchmarks/chips.py` draws its own (`random_sample` on `image_rng(seed, index)`, mixed
frame sizes, camera effects on). Every chip object at least MIN_VISIBLE in sight gives patches cut as the
recogniser cuts them (`patch_matrix`: `core.stack_patch.patch_matrix`, which `chips_cnn.patch_geometry` uses too,
here on the simulator's camera, as the models layer does not import vision; the spec travels in the model's
metadata): on its mask's box, and on that box with its sides moved as a detector's
are (JITTERS of them, each side off by a normal spread of JITTER_SHARE of the box's width, at least 1 px, times
0.5-1.5), and, given `chip_boxes` (a detector's chip boxes of a frame), on the box matched to it at IoU >= 0.5. The
targets: the top disc's offset over the base along the patch's up direction (patch px) for the object's true chip
count and base, and the base's position in the patch.

Patches are cached on disk in chunks of CHUNK frames (`chunk_SEED_START.npz`; `chunk_SEED_START_detector.npz` with
a detector's boxes too), so a build resumes and training reads them back without rendering again.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

from floorman.core import stack_patch
from floorman.core.stack_patch import PatchSpec
from floorman.datasets.camera import Camera
from floorman.datasets.effects import Effects
from floorman.datasets.random_scene import random_sample
from floorman.datasets.render import ObjectTruth, Renderer
from floorman.datasets.render_dataset import TRAINING_OPTIONS, image_rng
from floorman.datasets.scene import DetectorClass

logger = logging.getLogger(__name__)

CHUNK = 50  # frames per cache file
MIN_VISIBLE = 0.9  # the benchmark's chips (`benchmarks/chips.py --min-visible`)
JITTERS = 3
JITTER_SHARE = 0.06
MATCH_IOU = 0.5

Image = npt.NDArray[np.uint8]
FloatArray = npt.NDArray[np.float32]
Box = tuple[float, float, float, float]
ChipBoxes = Callable[[Image], npt.NDArray[np.float64]]  # a frame's chip boxes (N, 4) xyxy: a detector's


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


def _project(camera: Camera, points: npt.ArrayLike) -> npt.NDArray[np.float64]:
    pixels, _ = camera.project(np.asarray(points, dtype=np.float64).reshape(-1, 3))
    return np.asarray(pixels, dtype=np.float64)


def patch_matrix(camera: Camera, box: Box, *, diameter_mm: float, spec: PatchSpec) -> npt.NDArray[np.float64]:
    """2x3: patch px <- image px (`core.stack_patch.patch_matrix`) on the simulator's camera."""
    centre = np.array([(box[0] + box[2]) / 2.0, (box[1] + box[3]) / 2.0, 1.0])
    ground = np.linalg.solve(camera.table_homography(), centre)
    ground_mm = (float(ground[0] / ground[2]), float(ground[1] / ground[2]))
    matrix, _ = stack_patch.patch_matrix(lambda points: _project(camera, points), (float(centre[0]), float(centre[1])),
                                         ground_mm, diameter_mm=diameter_mm, spec=spec)
    return matrix


def targets(camera: Camera, matrix: npt.NDArray[np.float64], stack: ObjectTruth, *,
            thickness_mm: float) -> tuple[float, tuple[float, float]]:
    """The top disc's offset over the base (patch px, up) of `stack` in the patch of `matrix`, and its base there."""
    if not stack.chips:
        raise ValueError(f"expected a chip stack with chips, got object {stack.id} with {stack.chips}")
    x, y = stack.position_mm
    ends = _project(camera, [[x, y, 0.0], [x, y, len(stack.chips) * thickness_mm]]) @ matrix[:, :2].T + matrix[:, 2]
    return float(ends[0, 1] - ends[1, 1]), (float(ends[0, 0]), float(ends[0, 1]))


def jittered(box: Box, rng: np.random.Generator) -> Box | None:
    """`box` with its sides moved as a detector's are (None when it comes out empty)."""
    spread = max(1.0, JITTER_SHARE * (box[2] - box[0])) * float(rng.uniform(0.5, 1.5))
    moved = np.asarray(box, dtype=np.float64) + rng.normal(0.0, spread, 4)
    if moved[2] - moved[0] < 2.0 or moved[3] - moved[1] < 2.0:
        return None
    return float(moved[0]), float(moved[1]), float(moved[2]), float(moved[3])


def box_iou(box: Box, boxes: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """IoU of one box (xyxy) against boxes (N, 4)."""
    x1, y1 = np.maximum(box[0], boxes[:, 0]), np.maximum(box[1], boxes[:, 1])
    x2, y2 = np.minimum(box[2], boxes[:, 2]), np.minimum(box[3], boxes[:, 3])
    inter = np.clip(x2 - x1, 0.0, None) * np.clip(y2 - y1, 0.0, None)
    area = (box[2] - box[0]) * (box[3] - box[1])
    areas = (boxes[:, 2] - boxes[:, 0]) * (boxes[:, 3] - boxes[:, 1])
    result: npt.NDArray[np.float64] = inter / np.maximum(area + areas - inter, 1e-9)
    return result


def frame_samples(seed: int, index: int, *, spec: PatchSpec, chip_boxes: ChipBoxes | None = None) -> Samples:
    """The patches of frame `index` of `seed` (`chip_boxes`: a detector's boxes, matched to the stacks)."""
    rng = image_rng(seed, index)
    scene, camera = random_sample(rng, size=None)
    result = Renderer(camera, options=TRAINING_OPTIONS).render(scene, effects=Effects.random(rng), rng=rng)
    jitter = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(index, 1)))
    stacks = [o for o in result.objects if o.cls == DetectorClass.CHIP and o.chips and o.box[2] > o.box[0]
              and o.box[3] > o.box[1] and o.visible_fraction >= MIN_VISIBLE]
    if not stacks:
        return Samples.concat([], spec=spec)
    boxes: list[tuple[ObjectTruth, Box, int]] = []
    for stack in stacks:
        boxes.append((stack, stack.box, 0))
        boxes += [(stack, b, 1) for b in (jittered(stack.box, jitter) for _ in range(JITTERS)) if b is not None]
    if chip_boxes is not None:
        found = np.asarray(chip_boxes(result.image), dtype=np.float64).reshape(-1, 4)
        for stack in stacks:
            overlaps = box_iou(stack.box, found) if len(found) else np.zeros(0)
            if overlaps.size and float(overlaps.max()) >= MATCH_IOU:
                b = found[int(np.argmax(overlaps))]
                boxes.append((stack, (float(b[0]), float(b[1]), float(b[2]), float(b[3])), 2))
    chipset = scene.chipset
    patches, offsets, bases = [], [], []
    for stack, box, _ in boxes:
        matrix = patch_matrix(camera, box, diameter_mm=chipset.diameter_mm, spec=spec)
        patches.append(stack_patch.cut_patch(result.image, matrix, spec=spec))
        offset, base = targets(camera, matrix, stack, thickness_mm=chipset.thickness_mm)
        offsets.append(offset)
        bases.append(base)
    size = max(camera.width, camera.height)
    return Samples(np.stack(patches), np.asarray(offsets, np.float32), np.asarray(bases, np.float32),
                   np.asarray([len(s.chips or ()) for s, _, _ in boxes], np.int64),
                   np.asarray([k for _, _, k in boxes], np.int64), np.full(len(boxes), size, np.int64))


def build_cache(cache: Path, *, seed: int, frames: int, spec: PatchSpec,
                chip_boxes: ChipBoxes | None = None) -> list[Path]:
    """Render frames 0..frames-1 of `seed` into chunk files under `cache` (kept ones reused), in frame order; their
    paths. Chunks cut on `chip_boxes` too are named apart (`_detector`), so neither kind is taken for the other."""
    cache.mkdir(parents=True, exist_ok=True)
    paths = []
    suffix = "" if chip_boxes is None else "_detector"
    for start in range(0, frames, CHUNK):
        path = cache / f"chunk_{seed}_{start}{suffix}.npz"
        paths.append(path)
        if path.is_file():
            continue
        parts = [frame_samples(seed, i, spec=spec, chip_boxes=chip_boxes)
                 for i in range(start, min(frames, start + CHUNK))]
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
