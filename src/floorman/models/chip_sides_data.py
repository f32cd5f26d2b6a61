"""Training samples for the learned side reader (`floorman.vision.chips_side_net`), cut from simulator renders.

Frame `index` of a seed is drawn from `image_rng(seed, index)` as one of four kinds in turn (KINDS): a random
training-style scene at 3840x2160 with our chips, the same with another club's design half the time
(`chip_designs`), a casino scene with the seats' stacks laid out side by side as the scenario videos lay them
(`seat_chips`), and a random scene of mixed frame sizes (`--size mixed` of `floorman datasets render`) with other
clubs' designs a third of the time: the frames `benchmarks/chips.py` measures on, with seeds of their own.
Every chip stack of two chips or more at least MIN_VISIBLE in sight is read on its true box by the `SideSampler`
the `floorman` command passes in (`chips_side_net.side_samples`: the models layer does not import vision), which
keeps the rims of the stacks whose count it read right, each lower chip with its true denomination.

Samples are cached on disk in chunks of CHUNK frames (`sides_SEED_START.npz`), so a build resumes and training reads
them back without rendering again.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

from floorman.core.chip_sides import RIM_ANGLES_DEG, SideSample
from floorman.core.chips import ChipSet
from floorman.datasets.effects import Effects
from floorman.datasets.random_scene import SceneStyle, random_sample
from floorman.datasets.render import Renderer
from floorman.datasets.render_dataset import TRAINING_OPTIONS, image_rng
from floorman.datasets.scene import DetectorClass
from floorman.datasets.seat_chips import seat_chips
from floorman.models.small_net import SmallNetConfig

logger = logging.getLogger(__name__)

DEFAULT_OUT = Path(__file__).resolve().parents[1] / "vision" / "data" / "chip_sides.onnx"
CHUNK = 50  # frames per cache file
MIN_VISIBLE = 0.9  # the benchmark's chips (`benchmarks/chips.py --min-visible`)


@dataclass(frozen=True)
class FrameKind:
    """How a frame is drawn: its size (None: mixed sizes), casino seats' stacks, another club's chips' chance."""

    size: tuple[int, int] | None
    seats: bool
    chip_designs: float


KINDS = (FrameKind((3840, 2160), False, 0.0), FrameKind((3840, 2160), False, 0.5), FrameKind((3840, 2160), True, 0.0),
         FrameKind(None, False, 0.3))

Image = npt.NDArray[np.uint8]
Box = tuple[float, float, float, float]
# (image, chip set, homography table mm -> px, camera height mm, stacks: true box and values bottom to top) ->
# the frame's samples (`floorman.vision.chips_side_net.side_samples`)
SideSampler = Callable[..., list[SideSample]]
_FIELDS = ("rim", "valid", "illuminant", "px_per_chip", "truth", "stack", "lean", "bodies", "spots", "spot_counts")


@dataclass(frozen=True)
class Chips:
    """Lower chips, one row each: rim (N, A, 3), valid (N, A), illuminant (N, 3), px_per_chip (N,), truth (N,),
    stack (N,: the side they were read on, numbered within the cache), lean (N,), and their chip set's nominal
    bodies and spots (N, D, 3) and spot counts (N, D)."""

    rim: npt.NDArray[np.float32]
    valid: npt.NDArray[np.bool_]
    illuminant: npt.NDArray[np.float32]
    px_per_chip: npt.NDArray[np.float32]
    truth: npt.NDArray[np.int64]
    stack: npt.NDArray[np.int64]
    lean: npt.NDArray[np.bool_]
    bodies: npt.NDArray[np.float32]
    spots: npt.NDArray[np.float32]
    spot_counts: npt.NDArray[np.float32]

    def __len__(self) -> int:
        return int(self.truth.shape[0])

    @classmethod
    def from_samples(cls, samples: Sequence[SideSample], *, first_stack: int = 0) -> Chips:
        rows = [(s, k) for s in samples for k in range(len(s.truth))]
        if not rows:
            return cls.empty()
        return cls(rim=np.stack([s.rim[k] for s, k in rows]).astype(np.float32),
                   valid=np.stack([s.valid[k] for s, k in rows]).astype(bool),
                   illuminant=np.stack([s.illuminant for s, _ in rows]).astype(np.float32),
                   px_per_chip=np.array([s.px_per_chip for s, _ in rows], np.float32),
                   truth=np.array([s.truth[k] for s, k in rows], np.int64),
                   stack=np.array([first_stack + i for i, s in enumerate(samples) for _ in s.truth], np.int64),
                   lean=np.array([s.lean for s, _ in rows], bool),
                   bodies=np.stack([s.bodies for s, _ in rows]).astype(np.float32),
                   spots=np.stack([s.spots for s, _ in rows]).astype(np.float32),
                   spot_counts=np.stack([s.spot_counts for s, _ in rows]).astype(np.float32))

    @classmethod
    def empty(cls) -> Chips:
        angles = len(RIM_ANGLES_DEG)
        return cls(np.zeros((0, angles, 3), np.float32), np.zeros((0, angles), bool), np.zeros((0, 3), np.float32),
                   np.zeros(0, np.float32), np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, bool),
                   np.zeros((0, 5, 3), np.float32), np.zeros((0, 5, 3), np.float32), np.zeros((0, 5), np.float32))

    @classmethod
    def concat(cls, parts: Sequence[Chips]) -> Chips:
        parts = [p for p in parts if len(p)]
        if not parts:
            return cls.empty()
        shapes = {p.bodies.shape[1] for p in parts}
        if len(shapes) > 1:
            raise ValueError(f"expected chip sets of one number of denominations, got {sorted(shapes)}")
        offsets = np.cumsum([0] + [int(p.stack.max()) + 1 for p in parts[:-1]])
        return cls(*(np.concatenate([getattr(p, name) + (o if name == "stack" else 0) for p, o in
                                     zip(parts, offsets, strict=True)]) for name in _FIELDS))


@dataclass(frozen=True, kw_only=True)
class SideTrainConfig(SmallNetConfig):
    """The shipped recipe's settings (see CHIP_SIDES_MODEL_CARD.md)."""

    cache: Path = Path("/tmp/floorman_sides")
    seed: int = 59100
    frames: int = 1600
    epochs: int = 16
    out: Path = DEFAULT_OUT

    def chunk(self) -> int:
        return CHUNK


def frame_samples(seed: int, index: int, *, sampler: SideSampler) -> list[SideSample]:
    """The side samples of frame `index` of `seed` (its kind: KINDS[index % len(KINDS)])."""
    kind = KINDS[index % len(KINDS)]
    rng = image_rng(seed, index)
    scene, camera = random_sample(rng, size=kind.size, style=SceneStyle.CASINO if kind.seats else None,
                                  chip_designs=kind.chip_designs)
    if kind.seats:
        scene.chips = seat_chips(scene, rng)
    result = Renderer(camera, options=TRAINING_OPTIONS).render(scene, effects=Effects.random(rng), rng=rng)
    stacks = [(o.box, tuple(o.chips)) for o in result.objects
              if o.cls == DetectorClass.CHIP and o.chips and len(o.chips) >= 2 and o.box[2] > o.box[0]
              and o.box[3] > o.box[1] and o.visible_fraction >= MIN_VISIBLE]
    if not stacks:
        return []
    chipset: ChipSet = scene.chipset
    return sampler(result.image, chipset, homography=camera.table_homography(), camera_height_mm=float(camera.eye[2]),
                   stacks=stacks)


def _chunk(cache: Path, seed: int, start: int, frames: int, sampler: SideSampler) -> Path:
    path = cache / f"sides_{seed}_{start}.npz"
    if path.is_file():
        return path
    samples = [s for i in range(start, min(frames, start + CHUNK)) for s in frame_samples(seed, i, sampler=sampler)]
    chips = Chips.from_samples(samples)
    partial = path.with_suffix(".part.npz")
    np.savez_compressed(partial, **{name: getattr(chips, name) for name in _FIELDS})
    partial.replace(path)  # a chunk cut short by a stop is not taken for a whole one
    logger.info("side samples: frames %d-%d of seed %d, %d chips on %d sides", start,
                min(frames, start + CHUNK) - 1, seed, len(chips), len(samples))
    return path


def build_cache(cache: Path, *, seed: int, frames: int, sampler: SideSampler, workers: int = 1) -> list[Path]:
    """Render frames 0..frames-1 of `seed` into chunk files under `cache` (kept ones reused; `workers` processes),
    in frame order; their paths."""
    cache.mkdir(parents=True, exist_ok=True)
    starts = list(range(0, frames, CHUNK))
    if workers <= 1:
        return [_chunk(cache, seed, start, frames, sampler) for start in starts]
    with ProcessPoolExecutor(max_workers=workers) as pool:
        return list(pool.map(_chunk, [cache] * len(starts), [seed] * len(starts), starts, [frames] * len(starts),
                             [sampler] * len(starts)))


def load_cache(paths: Sequence[Path]) -> Chips:
    """The lower chips of chunk files (`build_cache`)."""
    parts = []
    for path in paths:
        try:
            with np.load(path) as data:
                parts.append(Chips(*(data[name] for name in _FIELDS)))
        except (KeyError, ValueError, OSError) as exc:
            raise ValueError(f"{path}: expected a side samples chunk ({', '.join(_FIELDS)}), got {exc} "
                             "(delete it to cut it again)") from None
    return Chips.concat(parts)
