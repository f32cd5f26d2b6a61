"""Training samples for the learned box-side reader (`floorman.vision.chips_box_net`), cut from simulator renders on
the shipped detector's chip boxes.

Frame `index` of a seed is drawn from `image_rng(seed, index)` as one of three kinds in turn (KINDS): a casino scene
at 3840x2160 with the seats' stacks laid out side by side as the scenario videos lay them (`seat_chips`), a random
training-style scene at 3840x2160, and a random scene of mixed frame sizes (`--size mixed` of `floorman datasets
render`): the frames `benchmarks/chips.py` measures on, with seeds of their own. The detector's chip boxes (`ChipBoxes`,
passed in by the `floorman` command: the models layer does not import vision) are matched to the stacks at least
MIN_VISIBLE in sight (IoU >= MIN_IOU with the true box, from the instance mask); each side of a matched box not on
the frame's border gives a strip (`core.chip_box_strips.side_strip`), its scalars (the stack's growth direction as
the render's camera projects it) and the true side's offset outwards of the detector's.

Samples are cached on disk in chunks of CHUNK frames (`boxes_SEED_START.npz`), so a build resumes and training reads
them back without rendering again.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np
import numpy.typing as npt

from floorman.core.chip_box_strips import OUTWARD, SCALARS, STRIP_ALONG, STRIP_DEPTH_PX, side_strip, strip_scalars
from floorman.core.stack_patch import growth_direction
from floorman.datasets.effects import Effects
from floorman.datasets.random_scene import SceneStyle, random_sample
from floorman.datasets.render import Renderer
from floorman.datasets.render_dataset import TRAINING_OPTIONS, image_rng
from floorman.datasets.scene import DetectorClass
from floorman.datasets.seat_chips import seat_chips
from floorman.models.chips_data import ChipBoxes, box_iou
from floorman.models.small_net import SmallNetConfig

logger = logging.getLogger(__name__)

DEFAULT_OUT = Path(__file__).resolve().parents[1] / "vision" / "data" / "chip_boxes.onnx"
CHUNK = 50  # frames per cache file
MIN_VISIBLE = 0.9  # the benchmark's chips (`benchmarks/chips.py --min-visible`): a covered stack's box is its part
MIN_IOU = 0.5  # the benchmark's match of a detector box to a stack


@dataclass(frozen=True)
class FrameKind:
    """How a frame is drawn: its size (None: mixed sizes) and whether the seats' stacks are laid out."""

    size: tuple[int, int] | None
    seats: bool


KINDS = (FrameKind((3840, 2160), True), FrameKind((3840, 2160), False), FrameKind(None, False))

BoxesFactory = Callable[[], ChipBoxes]  # builds the detector's box finder (once per process)
_FIELDS = ("strip", "scalars", "offset", "frame")


@dataclass(frozen=True)
class Sides:
    """Box sides, one row each: strip (N, STRIP_ALONG, 2 * STRIP_DEPTH_PX, 3) uint8, scalars (N, SCALARS), offset
    (N,: the true side outwards of the detector's, px), frame (N,: the frame index it was cut from)."""

    strip: npt.NDArray[np.uint8]
    scalars: npt.NDArray[np.float32]
    offset: npt.NDArray[np.float32]
    frame: npt.NDArray[np.int64]

    def __len__(self) -> int:
        return int(self.offset.shape[0])

    @classmethod
    def empty(cls) -> Sides:
        return cls(np.zeros((0, STRIP_ALONG, 2 * STRIP_DEPTH_PX, 3), np.uint8), np.zeros((0, SCALARS), np.float32),
                   np.zeros(0, np.float32), np.zeros(0, np.int64))

    @classmethod
    def concat(cls, parts: Sequence[Sides]) -> Sides:
        parts = [p for p in parts if len(p)]
        if not parts:
            return cls.empty()
        return cls(*(np.concatenate([getattr(p, name) for p in parts]) for name in _FIELDS))


@dataclass(frozen=True, kw_only=True)
class BoxTrainConfig(SmallNetConfig):
    """The shipped recipe's settings (see CHIP_BOXES_MODEL_CARD.md)."""

    cache: Path = Path("/tmp/floorman_boxes")
    seed: int = 60100
    frames: int = 1500
    epochs: int = 12
    out: Path = DEFAULT_OUT

    def chunk(self) -> int:
        return CHUNK


def frame_sides(seed: int, index: int, *, chip_boxes: ChipBoxes) -> Sides:
    """The box sides of frame `index` of `seed` (its kind: KINDS[index % len(KINDS)])."""
    kind = KINDS[index % len(KINDS)]
    rng = image_rng(seed, index)
    scene, camera = random_sample(rng, size=kind.size, style=SceneStyle.CASINO if kind.seats else None)
    if kind.seats:
        scene.chips = seat_chips(scene, rng)
    result = Renderer(camera, options=TRAINING_OPTIONS).render(scene, effects=Effects.random(rng), rng=rng)
    truths = np.array([o.box for o in result.objects if o.cls == DetectorClass.CHIP and o.chips
                       and o.visible_fraction >= MIN_VISIBLE and o.box[2] > o.box[0] and o.box[3] > o.box[1]],
                      dtype=np.float64).reshape(-1, 4)
    found = np.asarray(chip_boxes(result.image), dtype=np.float64).reshape(-1, 4)
    if not len(truths) or not len(found):
        return Sides.empty()
    height, width = result.image.shape[:2]
    to_table = np.linalg.inv(camera.table_homography())
    strips, scalars, offsets = [], [], []
    for row in found:
        box = (float(row[0]), float(row[1]), float(row[2]), float(row[3]))
        overlaps = box_iou(box, truths)
        true = truths[int(np.argmax(overlaps))]
        if overlaps.max() < MIN_IOU or not (row[2] > row[0] and row[3] > row[1]):
            continue
        centre = to_table @ np.array([(box[0] + box[2]) / 2.0, (box[1] + box[3]) / 2.0, 1.0])
        growth = growth_direction(lambda p: camera.project(p)[0], (float(centre[0] / centre[2]),
                                                                   float(centre[1] / centre[2])))
        for side in range(4):
            if true[side] <= 1.0 or (side == 2 and true[2] >= width - 1) or (side == 3 and true[3] >= height - 1):
                continue  # cut by the frame: the border, not the stack
            strips.append(side_strip(result.image, box, side))
            scalars.append(strip_scalars(box, side, growth))
            offsets.append(OUTWARD[side] * (true[side] - box[side]))
    if not offsets:
        return Sides.empty()
    return Sides(np.stack(strips), np.stack(scalars).astype(np.float32), np.array(offsets, np.float32),
                 np.full(len(offsets), index, np.int64))


@lru_cache(maxsize=1)
def _boxes(factory: BoxesFactory) -> ChipBoxes:
    return factory()  # one detector per process


def _chunk(cache: Path, seed: int, start: int, frames: int, factory: BoxesFactory) -> Path:
    path = cache / f"boxes_{seed}_{start}.npz"
    if path.is_file():
        return path
    chip_boxes = _boxes(factory)
    stop = min(frames, start + CHUNK)
    sides = Sides.concat([frame_sides(seed, i, chip_boxes=chip_boxes) for i in range(start, stop)])
    partial = path.with_suffix(".part.npz")
    np.savez_compressed(partial, **{name: getattr(sides, name) for name in _FIELDS})
    partial.replace(path)  # a chunk cut short by a stop is not taken for a whole one
    logger.info("box sides: frames %d-%d of seed %d, %d sides", start, stop - 1, seed, len(sides))
    return path


def build_cache(cache: Path, *, seed: int, frames: int, boxes: BoxesFactory, workers: int = 1) -> list[Path]:
    """Render frames 0..frames-1 of `seed` into chunk files under `cache` (kept ones reused; `workers` processes,
    each with its own detector from `boxes`), in frame order; their paths."""
    cache.mkdir(parents=True, exist_ok=True)
    starts = list(range(0, frames, CHUNK))
    if workers <= 1:
        return [_chunk(cache, seed, start, frames, boxes) for start in starts]
    with ProcessPoolExecutor(max_workers=workers) as pool:
        return list(pool.map(_chunk, [cache] * len(starts), [seed] * len(starts), starts, [frames] * len(starts),
                             [boxes] * len(starts)))


def load_cache(paths: Sequence[Path]) -> Sides:
    """The box sides of chunk files (`build_cache`)."""
    parts = []
    for path in paths:
        try:
            with np.load(path) as data:
                sides = Sides(*(data[name] for name in _FIELDS))
        except (KeyError, ValueError, OSError) as exc:
            raise ValueError(f"{path}: expected a box sides chunk ({', '.join(_FIELDS)}), got {exc} "
                             "(delete it to cut it again)") from None
        shape = (STRIP_ALONG, 2 * STRIP_DEPTH_PX, 3)
        if sides.strip.shape[1:] != shape:
            raise ValueError(f"{path}: field strip: expected strips of shape {shape} (`core.chip_box_strips`), got "
                             f"{sides.strip.shape[1:]}: cut with other strips (delete it to cut it again)")
        parts.append(sides)
    return Sides.concat(parts)
