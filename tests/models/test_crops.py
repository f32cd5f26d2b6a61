from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pytest
import yaml

from floorman.core.errors import ConfigError, FloormanError
from floorman.models.crops import (
    Balance,
    CropSpec,
    crop_dataset,
    crop_labels,
    level_windows,
    read_labels,
    repeat_factors,
    tile_origins,
    write_balanced,
)
from tests.models.toy_data import make_toy_dataset


def test_tile_origins_cover_the_length_with_overlap() -> None:
    assert tile_origins(200, tile=320, overlap=0.2) == [0]
    origins = tile_origins(960, tile=320, overlap=0.2)
    assert origins[0] == 0 and origins[-1] == 640
    assert all(0 < b - a <= 256 for a, b in itertools.pairwise(origins))


def test_level_windows_scale_the_long_side() -> None:
    scale, windows = level_windows(1920, 1080, level=960, window=320, overlap=0.2)
    assert scale == pytest.approx(0.5)
    assert max(w[2] for w in windows) == 960 and max(w[3] for w in windows) == 540
    assert all(w[2] - w[0] == 320 and w[3] - w[1] == 320 for w in windows)
    scale, windows = level_windows(1920, 1080, level=320, window=320, overlap=0.2)
    assert windows == [(0, 0, 320, 180)]


def test_crop_labels_clip_and_drop_small_fragments() -> None:
    classes = np.array([2, 0, 4])
    boxes = np.array([[10, 10, 30, 30], [90, 10, 130, 50], [0, 0, 2, 50]], dtype=np.float64)
    lines = crop_labels(classes, boxes, window=(0, 0, 100, 100), min_visible=0.4)
    # the chip is whole; the card keeps 10 of 40 px (25 %) and is dropped; the hand is 2 px thin: dropped
    assert lines == ["2 0.200000 0.200000 0.200000 0.200000"]
    lines = crop_labels(classes[1:2], boxes[1:2], window=(100, 0, 200, 100), min_visible=0.4)
    assert lines == ["0 0.150000 0.300000 0.300000 0.400000"]


def test_read_labels_rejects_bad_lines(tmp_path: Path) -> None:
    path = tmp_path / "a.txt"
    path.write_text("1 0.5 0.5 0.2\n")
    with pytest.raises(ConfigError, match="expected 5 numbers per line, got 4"):
        read_labels(path, width=100, height=100)
    classes, boxes = read_labels(tmp_path / "missing.txt", width=10, height=10)
    assert classes.shape == (0,) and boxes.shape == (0, 4)


def test_crop_dataset_writes_windows_of_every_level(tmp_path: Path) -> None:
    source = make_toy_dataset(tmp_path / "toy", count=4, size=(320, 240))
    data_yaml = crop_dataset(source, tmp_path / "windows", spec=CropSpec(levels=(160, 320), window=160))
    data = yaml.safe_load(data_yaml.read_text())
    assert data["names"][2] == "chip" and data["train"] == "images/train"
    images = sorted((tmp_path / "windows" / "images" / "train").iterdir())
    assert any("_160_" in p.name for p in images) and any("_320_" in p.name for p in images)
    labels = tmp_path / "windows" / "labels" / "train"
    assert all((labels / f"{p.stem}.txt").is_file() for p in images)
    with pytest.raises(ValueError, match="expected pyramid levels of at least 32 px"):
        CropSpec(levels=(), window=160)


def test_a_window_opencv_cannot_write_is_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # OpenCV tells a failed write (a full disk) by its return value only: training on the windows that were written
    # would silently leave the rest out.
    import cv2

    source = make_toy_dataset(tmp_path / "toy", count=1, size=(320, 240))
    monkeypatch.setattr(cv2, "imwrite", lambda *_args, **_kwargs: False)
    with pytest.raises(FloormanError, match=r"windows/images/train/.*\.jpg: could not write the training window"):
        crop_dataset(source, tmp_path / "windows", spec=CropSpec(levels=(160,), window=160))


def test_crop_dataset_output_does_not_depend_on_workers(tmp_path: Path) -> None:
    source = make_toy_dataset(tmp_path / "toy", count=6, size=(320, 240))
    spec = CropSpec(levels=(160, 320), window=160)
    trees = []
    for workers in (1, 2):
        out = tmp_path / f"w{workers}"
        crop_dataset(source, out, spec=spec, workers=workers)
        trees.append({str(p.relative_to(out)): p.read_bytes() for p in sorted(out.rglob("*"))
                      if p.is_file() and p.name != "data.yaml"})
    assert trees[0] == trees[1] and len(trees[0]) > 12
    with pytest.raises(ValueError, match="workers: expected at least 1"):
        crop_dataset(source, tmp_path / "w0", spec=spec, workers=0)


def test_repeat_factors_list_rare_classes_and_whole_frames_more_often() -> None:
    # class 0 in every window, class 3 in one window of ten: sqrt(0.5 * 10 / 1) = 2.24 -> listed twice
    classes = {f"f{i}_960_0_0": {0} for i in range(9)} | {"f9_960_0_0": {0, 3}}
    factors = repeat_factors(classes, balance=Balance(threshold=0.5), coarse=set())
    assert factors["f9_960_0_0"] == 2 and all(factors[f"f{i}_960_0_0"] == 1 for i in range(9))
    coarse = repeat_factors(classes | {"f0_320_0_0": set()}, balance=Balance(threshold=0.5, coarse_repeat=3),
                            coarse={"f0_320_0_0"})
    assert coarse["f0_320_0_0"] == 3
    with pytest.raises(ValueError, match="expected a repeat threshold in"):
        Balance(threshold=0.0)


def test_write_balanced_lists_windows_and_keeps_validation(tmp_path: Path) -> None:
    source = make_toy_dataset(tmp_path / "toy", count=8, size=(320, 240))
    data_yaml = crop_dataset(source, tmp_path / "windows", spec=CropSpec(levels=(160, 320), window=160))
    balanced = write_balanced(data_yaml, balance=Balance(threshold=1.0, coarse_repeat=4), coarsest_level=160)
    data = yaml.safe_load(balanced.read_text())
    assert data["val"] == "images/val" and data["names"][2] == "chip"
    listed = Path(data["train"]).read_text().splitlines()
    images = sorted((tmp_path / "windows" / "images" / "train").iterdir())
    assert set(listed) == {str(p.resolve()) for p in images}
    whole = [p for p in images if p.stem.split("_")[-3] == "160"]
    assert whole and all(listed.count(str(p.resolve())) >= 4 for p in whole)
    assert len(listed) > len(images)
