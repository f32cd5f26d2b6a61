"""Cut a YOLO dataset of whole frames into the windows the detector sees at inference.

The detector (`floorman.vision.detector`) looks at each frame through a pyramid: for each level L, the frame
is resized so its long side is L pixels and cut into overlapping square tiles of the network input size
(one letterboxed window when it fits). The training set is made of exactly those windows, labels clipped to
each window. A box that keeps less than `min_visible` of its area inside a window is dropped from it (at
inference, such fragments are merged into the whole seen by a neighbouring tile or a coarser level). Most
empty windows are skipped: one in `empty_every` is kept as a negative example.
"""

from __future__ import annotations

import logging
import math
import multiprocessing
import shutil
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import numpy.typing as npt
import yaml

from floorman.core.errors import ConfigError, FloormanError
from floorman.core.geometry import tile_origins

logger = logging.getLogger(__name__)

IMAGE_SUFFIXES = (".jpg", ".jpeg", ".png", ".bmp")
SPLITS = ("train", "val", "test")
MIN_SIDE_PX = 4.0  # labels thinner than this at a level are left to the finer level


@dataclass(frozen=True)
class CropSpec:
    """Pyramid levels (long side in px), window side (the network input) and overlap; label and negative rules."""

    levels: tuple[int, ...]
    window: int
    overlap: float = 0.25
    min_visible: float = 0.4
    empty_every: int = 4

    def __post_init__(self) -> None:
        if not self.levels or min(self.levels) < 32:
            raise ValueError(f"expected pyramid levels of at least 32 px, got {self.levels}")
        if self.window < 32:
            raise ValueError(f"expected a window of at least 32 px, got {self.window}")
        if not 0.0 <= self.overlap < 0.9:
            raise ValueError(f"expected an overlap in [0, 0.9), got {self.overlap}")
        if not 0.0 < self.min_visible <= 1.0:
            raise ValueError(f"expected min_visible in (0, 1], got {self.min_visible}")
        if self.empty_every < 1:
            raise ValueError(f"expected empty_every >= 1, got {self.empty_every}")


def read_labels(path: Path, *, width: int, height: int) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float64]]:
    """YOLO label file -> (class ids (N,), xyxy pixel boxes (N, 4)); a missing file means no objects."""
    if not path.is_file():
        return np.zeros(0, dtype=np.int64), np.zeros((0, 4), dtype=np.float64)
    rows = [line.split() for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    if not rows:
        return np.zeros(0, dtype=np.int64), np.zeros((0, 4), dtype=np.float64)
    values = np.asarray(rows, dtype=np.float64)
    if values.shape[1] != 5:
        raise ConfigError(f"expected 5 numbers per line, got {values.shape[1]}", source=str(path))
    cx, cy, w, h = values[:, 1] * width, values[:, 2] * height, values[:, 3] * width, values[:, 4] * height
    boxes = np.stack([cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2], axis=1)
    return values[:, 0].astype(np.int64), boxes


def crop_labels(
    classes: npt.NDArray[np.int64], boxes: npt.NDArray[np.float64], *, window: tuple[int, int, int, int],
    min_visible: float,
) -> list[str]:
    """YOLO label lines for the boxes that keep at least `min_visible` of their area in window (x0, y0, x1, y1)."""
    x0, y0, x1, y1 = window
    clipped = np.stack([np.clip(boxes[:, 0], x0, x1), np.clip(boxes[:, 1], y0, y1),
                        np.clip(boxes[:, 2], x0, x1), np.clip(boxes[:, 3], y0, y1)], axis=1)
    area = np.maximum(boxes[:, 2] - boxes[:, 0], 0) * np.maximum(boxes[:, 3] - boxes[:, 1], 0)
    kept_area = np.maximum(clipped[:, 2] - clipped[:, 0], 0) * np.maximum(clipped[:, 3] - clipped[:, 1], 0)
    side = np.minimum(clipped[:, 2] - clipped[:, 0], clipped[:, 3] - clipped[:, 1])
    keep = (area > 0) & (kept_area >= min_visible * np.maximum(area, 1e-9)) & (side >= MIN_SIDE_PX)
    w, h = float(x1 - x0), float(y1 - y0)
    lines = []
    for cls, box in zip(classes[keep], clipped[keep], strict=True):
        cx, cy = ((box[0] + box[2]) / 2 - x0) / w, ((box[1] + box[3]) / 2 - y0) / h
        bw, bh = (box[2] - box[0]) / w, (box[3] - box[1]) / h
        lines.append(f"{int(cls)} {cx:.6f} {cy:.6f} {bw:.6f} {bh:.6f}")
    return lines


def load_data_yaml(dataset: Path) -> dict[str, Any]:
    path = dataset / "data.yaml"
    if not path.is_file():
        raise ConfigError("expected a YOLO dataset with data.yaml, got no such file", source=str(path))
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    if not isinstance(data, dict) or "names" not in data:
        raise ConfigError("expected a mapping with 'names'", source=str(path), field="names")
    return data


def class_names(dataset: Path) -> list[str]:
    names = load_data_yaml(dataset)["names"]
    if isinstance(names, dict):
        return [str(names[key]) for key in sorted(names)]
    return [str(name) for name in names]


def level_windows(width: int, height: int, *, level: int, window: int, overlap: float,
                  ) -> tuple[float, list[tuple[int, int, int, int]]]:
    """Scale of the frame at this pyramid level and its windows (x0, y0, x1, y1) in scaled pixels."""
    scale = level / max(width, height)
    scaled_w, scaled_h = max(1, round(width * scale)), max(1, round(height * scale))
    windows = [(x, y, min(x + window, scaled_w), min(y + window, scaled_h))
               for y in tile_origins(scaled_h, tile=window, overlap=overlap)
               for x in tile_origins(scaled_w, tile=window, overlap=overlap)]
    return scale, windows


def scaled_level(image: npt.NDArray[np.uint8], *, level: int, window: int, overlap: float,
                 ) -> tuple[float, npt.NDArray[np.uint8], list[tuple[int, int, int, int]]]:
    """The image resized to one pyramid level, its scale and its windows there (`level_windows`)."""
    height, width = image.shape[:2]
    scale, windows = level_windows(width, height, level=level, window=window, overlap=overlap)
    size = (max(1, round(width * scale)), max(1, round(height * scale)))
    scaled = cv2.resize(image, size, interpolation=cv2.INTER_AREA if scale < 1 else cv2.INTER_LINEAR)
    return scale, np.asarray(scaled, dtype=np.uint8), windows


def _crop_image(image_path: Path, label_path: Path, *, spec: CropSpec, out_images: Path, out_labels: Path) -> int:
    read = cv2.imread(str(image_path), cv2.IMREAD_COLOR)
    if read is None:
        raise ConfigError("not a readable image", source=str(image_path))
    image = np.asarray(read, dtype=np.uint8)
    height, width = image.shape[:2]
    classes, boxes = read_labels(label_path, width=width, height=height)
    written = 0
    for level in spec.levels:
        scale, scaled, windows = scaled_level(image, level=level, window=spec.window, overlap=spec.overlap)
        for index, window in enumerate(windows):
            lines = crop_labels(classes, boxes * scale, window=window, min_visible=spec.min_visible)
            if not lines and (len(windows) == 1 or index % spec.empty_every != 0):
                continue
            stem = f"{image_path.stem}_{level}_{window[0]}_{window[1]}"
            path = out_images / f"{stem}.jpg"
            if not cv2.imwrite(str(path), scaled[window[1]:window[3], window[0]:window[2]],
                               [cv2.IMWRITE_JPEG_QUALITY, 95]):  # OpenCV says so by its return value only
                raise FloormanError(f"{path}: could not write the training window (a full disk?)")
            (out_labels / f"{stem}.txt").write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")
            written += 1
    return written


def _crop_one(image_path: Path, *, labels: Path, spec: CropSpec, out_images: Path, out_labels: Path) -> int:
    return _crop_image(image_path, labels / f"{image_path.stem}.txt", spec=spec, out_images=out_images,
                       out_labels=out_labels)


def _worker_init() -> None:
    cv2.setNumThreads(1)


def crop_dataset(source: Path, dest: Path, *, spec: CropSpec, workers: int = 1) -> Path:
    """Write the windowed copy of `source` (a YOLO dataset) to `dest` with `workers` processes; returns
    dest/data.yaml. The output does not depend on `workers`."""
    if workers < 1:
        raise ValueError(f"workers: expected at least 1, got {workers}")
    names = class_names(source)
    if dest.exists():
        shutil.rmtree(dest)
    splits: dict[str, str] = {}
    for split in SPLITS:
        images = source / "images" / split
        if not images.is_dir() or not any(p.suffix.lower() in IMAGE_SUFFIXES for p in images.iterdir()):
            continue
        out_images, out_labels = dest / "images" / split, dest / "labels" / split
        out_images.mkdir(parents=True)
        out_labels.mkdir(parents=True)
        paths = sorted(p for p in images.iterdir() if p.suffix.lower() in IMAGE_SUFFIXES)
        one = partial(_crop_one, labels=source / "labels" / split, spec=spec, out_images=out_images,
                      out_labels=out_labels)
        if workers == 1:
            count = sum(one(path) for path in paths)
        else:
            with multiprocessing.get_context("spawn").Pool(workers, initializer=_worker_init) as pool:
                count = sum(pool.imap_unordered(one, paths, chunksize=4))
        splits[split] = f"images/{split}"
        logger.info("cut %s/%s into %d windows (levels %s, window %d)", source, split, count, spec.levels,
                    spec.window)
    if "train" not in splits:
        raise ConfigError("expected an images/train folder, got none", source=str(source))
    data = {"path": str(dest.resolve()), **splits, "names": dict(enumerate(names))}
    if "val" not in data:
        data["val"] = data["train"]
    out = dest / "data.yaml"
    out.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return out


@dataclass(frozen=True)
class Balance:
    """Repeat-factor sampling of the training windows (LVIS, Gupta et al. 2019): a window is listed
    round(max over its classes of sqrt(threshold / f_c)) times, f_c the share of windows holding class c, so
    rare classes (the dealer button, hands) are seen more often; windows of the coarsest level (whole frames:
    hands, whole-table context) are listed `coarse_repeat` times at least."""

    threshold: float = 0.5
    coarse_repeat: int = 1

    def __post_init__(self) -> None:
        if not 0.0 < self.threshold <= 1.0:
            raise ValueError(f"expected a repeat threshold in (0, 1], got {self.threshold}")
        if self.coarse_repeat < 1:
            raise ValueError(f"expected coarse_repeat >= 1, got {self.coarse_repeat}")

    @property
    def tag(self) -> str:
        return f"balanced_t{self.threshold:g}_c{self.coarse_repeat}"


def window_classes(labels: Path) -> dict[str, set[int]]:
    """Window stem -> the class ids its label file holds (empty for a negative window)."""
    found: dict[str, set[int]] = {}
    for path in sorted(labels.glob("*.txt")):
        found[path.stem] = {int(line.split()[0]) for line in path.read_text(encoding="utf-8").splitlines()
                            if line.strip()}
    return found


def repeat_factors(classes: dict[str, set[int]], *, balance: Balance, coarse: set[str]) -> dict[str, int]:
    """How many times each window is listed (see `Balance`)."""
    if not classes:
        return {}
    holding: dict[int, int] = {}
    for ids in classes.values():
        for class_id in ids:
            holding[class_id] = holding.get(class_id, 0) + 1
    class_repeat = {c: max(1.0, math.sqrt(balance.threshold * len(classes) / n)) for c, n in holding.items()}
    factors = {}
    for stem, ids in classes.items():
        repeat = max((class_repeat[c] for c in ids), default=1.0)
        factors[stem] = max(int(repeat + 0.5), balance.coarse_repeat if stem in coarse else 1)
    return factors


def write_balanced(data_yaml: Path, *, balance: Balance, coarsest_level: int) -> Path:
    """Next to a windowed dataset's data.yaml, write the balanced training list (absolute image paths, one
    per repeat) and a data yaml training on it; returns that yaml. Validation is left as it is."""
    data = yaml.safe_load(data_yaml.read_text(encoding="utf-8"))
    root = Path(data["path"])
    images = root / data["train"]
    paths = {p.stem: p for p in sorted(images.iterdir()) if p.suffix.lower() in IMAGE_SUFFIXES}
    classes = window_classes(root / "labels" / Path(data["train"]).name)
    classes = {stem: classes.get(stem, set()) for stem in paths}
    coarse = {stem for stem in paths if stem.split("_")[-3] == str(coarsest_level)}
    factors = repeat_factors(classes, balance=balance, coarse=coarse)
    listing = root / f"train_{balance.tag}.txt"
    listing.write_text("".join(f"{paths[stem].resolve()}\n" * factors[stem] for stem in paths), encoding="utf-8")
    out = root / f"data_{balance.tag}.yaml"
    out.write_text(yaml.safe_dump({**data, "train": str(listing.resolve())}, sort_keys=False), encoding="utf-8")
    logger.info("balanced training list %s: %d windows listed %d times", listing, len(paths),
                sum(factors.values()))
    return out
