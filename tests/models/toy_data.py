"""A toy YOLO dataset drawn with OpenCV (rectangles and discs on felt), for the training tests."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import yaml

NAMES = ["card_face", "card_back", "chip", "dealer_button", "hand"]


def _draw(rng: np.random.Generator, *, width: int, height: int) -> tuple[np.ndarray, list[str]]:
    image = np.zeros((height, width, 3), dtype=np.uint8)
    image[:] = (60, 110 + int(rng.integers(-10, 10)), 40)
    lines = []
    for _ in range(int(rng.integers(2, 6))):
        cls = int(rng.integers(0, 3))
        cx, cy = float(rng.uniform(30, width - 30)), float(rng.uniform(30, height - 30))
        if cls == 2:
            r = float(rng.uniform(8, 14))
            cv2.circle(image, (round(cx), round(cy)), round(r), (30, 30, 200), -1)
            w = h = 2 * r
        else:
            w, h = float(rng.uniform(22, 30)), float(rng.uniform(32, 42))
            colour = (240, 240, 240) if cls == 0 else (150, 40, 40)
            cv2.rectangle(image, (round(cx - w / 2), round(cy - h / 2)), (round(cx + w / 2), round(cy + h / 2)),
                          colour, -1)
        lines.append(f"{cls} {cx / width:.6f} {cy / height:.6f} {w / width:.6f} {h / height:.6f}")
    return image, lines


def make_toy_dataset(root: Path, *, count: int = 12, size: tuple[int, int] = (320, 240), seed: int = 0) -> Path:
    """Write a YOLO dataset (train = val) under root; returns root."""
    rng = np.random.default_rng(seed)
    for split in ("train", "val"):
        (root / "images" / split).mkdir(parents=True, exist_ok=True)
        (root / "labels" / split).mkdir(parents=True, exist_ok=True)
    for i in range(count):
        image, lines = _draw(rng, width=size[0], height=size[1])
        split = "val" if i % 4 == 3 else "train"
        cv2.imwrite(str(root / "images" / split / f"toy_{i:03d}.png"), image)
        (root / "labels" / split / f"toy_{i:03d}.txt").write_text("".join(f"{x}\n" for x in lines))
    data = {"path": str(root.resolve()), "train": "images/train", "val": "images/val",
            "names": dict(enumerate(NAMES))}
    (root / "data.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
    return root
