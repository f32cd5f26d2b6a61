"""YOLO export and `floorman datasets render`."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest
import yaml

from floorman.cli import main
from floorman.core.cards import Rank
from floorman.datasets.random_scene import random_sample
from floorman.datasets.render import ObjectTruth
from floorman.datasets.render_cli import parse_size
from floorman.datasets.render_dataset import DatasetSpec, render_dataset, val_indices
from floorman.datasets.scene import N_SUIT_SHAPES, DetectorClass, with_court_figures, with_suit_shapes
from floorman.datasets.yolo import is_labelled, yolo_label


def truth(*, box: tuple[float, float, float, float], fraction: float = 1.0) -> ObjectTruth:
    return ObjectTruth(id=1, cls=DetectorClass.CHIP, box=box, full_box=box, visible_fraction=fraction,
                       position_mm=(0.0, 0.0), zone=None)


def test_label_is_normalised_centre_and_size() -> None:
    label = yolo_label(truth(box=(10.0, 20.0, 50.0, 40.0)), width=200, height=100)
    assert (label.cls, label.cx, label.cy, label.w, label.h) == (2, 0.15, 0.3, 0.2, 0.2)
    assert label.line() == "2 0.150000 0.300000 0.200000 0.200000"


@pytest.mark.parametrize(
    ("box", "fraction", "expected"),
    [
        ((0.0, 0.0, 10.0, 10.0), 1.0, True),
        ((0.0, 0.0, 10.0, 10.0), 0.2, True),
        ((0.0, 0.0, 10.0, 10.0), 0.19, False),
        ((0.0, 0.0, 3.0, 10.0), 1.0, False),
        ((0.0, 0.0, 10.0, 3.0), 1.0, False),
        ((0.0, 0.0, 4.0, 4.0), 1.0, True),
    ],
)
def test_small_or_hidden_objects_are_not_labelled(box: tuple[float, float, float, float], fraction: float,
                                                  expected: bool) -> None:
    assert is_labelled(truth(box=box, fraction=fraction)) is expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [("1280x720", (1280, 720)), ("640X480", (640, 480)), (" 320 x 240 ", (320, 240))],
)
def test_parse_size(text: str, expected: tuple[int, int]) -> None:
    assert parse_size(text) == expected


def test_val_split_is_seeded_and_sized() -> None:
    first = val_indices(count=50, seed=3, val_fraction=0.2)
    assert len(first) == 10 and first == val_indices(count=50, seed=3, val_fraction=0.2)
    assert first != val_indices(count=50, seed=4, val_fraction=0.2)


def read_tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and p.name != "data.yaml"}


def test_cli_writes_a_consistent_dataset(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "ds"
    code = main(["datasets", "render", "--count", "4", "--seed", "5", "--out", str(out), "--size", "192x128",
                 "--val-fraction", "0.25", "--no-progress"])
    assert code == 0
    assert "wrote 4 images (3 train, 1 val)" in capsys.readouterr().out
    data = yaml.safe_load((out / "data.yaml").read_text())
    assert data["nc"] == 5 and data["names"] == [c.label for c in DetectorClass]
    assert Path(data["path"]) == out.resolve() and data["train"] == "images/train" and data["val"] == "images/val"
    images = sorted(out.glob("images/*/*.jpg"))
    assert len(images) == 4
    for image in images:
        split, name = image.parent.name, image.stem
        lines = (out / "labels" / split / f"{name}.txt").read_text().splitlines()
        meta = json.loads((out / "meta" / split / f"{name}.json").read_text())
        labelled = [o for o in meta["objects"] if o["labelled"]]
        assert len(lines) == len(labelled)
        for line, obj in zip(lines, labelled, strict=True):
            cls, cx, cy, w, h = line.split()
            assert int(cls) == obj["cls_index"]
            x0, y0, x1, y1 = obj["box"]
            assert float(cx) == pytest.approx((x0 + x1) / 2 / 192, abs=1e-5)
            assert float(h) == pytest.approx((y1 - y0) / 128, abs=1e-5)
            assert 0 <= float(cx) <= 1 and 0 <= float(cy) <= 1 and 0 < float(w) <= 1
        assert meta["camera"]["width"] == 192 and len(meta["camera"]["homography"]) == 3
        for obj in meta["objects"]:
            assert obj["occluded_fraction"] == pytest.approx(1.0 - obj["visible_fraction"])
            if obj["cls"] in ("card_face", "card_back") and obj["count"] is None:
                assert obj["card"] and len(obj["corners_px"]) == 4 and obj["index_regions_px"]
            if obj["cls"] == "chip":
                assert obj["count"] == len(obj["chips"]) >= 1


def test_home_style_renders_photo_like_scenes(tmp_path: Path) -> None:
    out = tmp_path / "home"
    assert main(["datasets", "render", "--count", "3", "--seed", "8", "--out", str(out), "--size", "300x200",
                 "--style", "home", "--val-fraction", "0", "--no-progress"]) == 0
    for sidecar in sorted(out.glob("meta/train/*.json")):
        meta = json.loads(sidecar.read_text())
        assert meta["camera"]["width"] == 300
        assert meta["surface"] == "wood"
        cards = [o for o in meta["objects"] if o["cls"] in ("card_face", "card_back") and o["count"] is None]
        assert cards, "a home scene always has cards"


def test_camera_tilt_draws_casino_cameras_in_the_range_asked(tmp_path: Path) -> None:
    out = tmp_path / "tilted"
    assert main(["datasets", "render", "--count", "4", "--seed", "8", "--out", str(out), "--size", "320x180",
                 "--style", "casino", "--camera-tilt", "45-55", "--val-fraction", "0", "--no-progress"]) == 0
    for sidecar in sorted(out.glob("meta/train/*.json")):
        rotation = np.array(json.loads(sidecar.read_text())["camera"]["rotation"])
        forward = rotation[2]  # the optical axis in table coordinates
        assert 45.0 - 1e-6 <= float(np.degrees(np.arccos(-forward[2]))) <= 55.0 + 1e-6
    with pytest.raises(ValueError, match="camera tilt: expected MIN-MAX degrees"):
        DatasetSpec(out=tmp_path, count=1, seed=1, camera_tilt=(20.0, 10.0))


def test_court_figures_shifted_or_drawn_and_nothing_else_changed() -> None:
    scene, _ = random_sample(np.random.default_rng(4))
    assert with_court_figures(scene, "own") is scene
    shifted = with_court_figures(scene, "shifted")
    drawn = with_court_figures(scene, "any", np.random.default_rng(1))
    after = {Rank.JACK: Rank.QUEEN, Rank.QUEEN: Rank.KING, Rank.KING: Rank.JACK}
    courts = 0
    for before, moved, any_ in zip(scene.cards, shifted.cards, drawn.cards, strict=True):
        assert before.figure is None
        if before.card.rank.is_court:
            courts += 1
            assert moved.figure is after[before.card.rank]
            assert any_.figure in after
        else:
            assert moved == before == any_
        assert (moved.card, moved.x, moved.design) == (before.card, before.x, before.design)
    assert courts > 0, "seed 4's scene should hold a court card"
    with pytest.raises(ValueError, match="expected one of own, shifted, any, got 'mixed'"):
        with_court_figures(scene, "mixed")
    with pytest.raises(ValueError, match="expected a random generator"):
        with_court_figures(scene, "any")


def test_suit_shapes_drawn_per_card_and_nothing_else_changed() -> None:
    scene, _ = random_sample(np.random.default_rng(4))
    assert with_suit_shapes(scene, "own") is scene
    drawn = with_suit_shapes(scene, "any", np.random.default_rng(1))
    assert all(card.suit_shape == 0 for card in scene.cards)
    assert all(1 <= card.suit_shape <= N_SUIT_SHAPES for card in drawn.cards)
    assert len({card.suit_shape for card in drawn.cards}) > 1
    for before, after in zip(scene.cards, drawn.cards, strict=True):
        assert replace(after, suit_shape=0) == before
    assert (drawn.chips, drawn.decks, drawn.hands) == (scene.chips, scene.decks, scene.hands)
    with pytest.raises(ValueError, match="suit shapes: expected one of own, any, got 'shifted'"):
        with_suit_shapes(scene, "shifted")
    with pytest.raises(ValueError, match="expected a random generator"):
        with_suit_shapes(scene, "any")


def _render_twice(tmp_path: Path, flag: str, values: tuple[str, str], *,
                  size: str) -> tuple[dict[str, Any], np.ndarray, np.ndarray]:
    """Seed 1's home frame rendered with `flag` at each of `values`: the (shared) sidecar, the pixels where the
    two images differ by more than 40 levels, and an empty region of the same shape."""
    for value in values:
        assert main(["datasets", "render", "--count", "1", "--seed", "1", "--out", str(tmp_path / value), "--size",
                     size, "--style", "home", "--val-fraction", "0", "--no-progress", flag, value]) == 0
    sidecar = next((tmp_path / values[0]).glob("meta/train/*.json"))
    assert sidecar.read_text() == (tmp_path / values[1] / sidecar.relative_to(tmp_path / values[0])).read_text()
    meta = json.loads(sidecar.read_text())
    first, second = (cv2.imread(str(tmp_path / value / meta["image"])).astype(int) for value in values)
    differ = np.abs(first - second).max(axis=-1) > 40
    return meta, differ, np.zeros(differ.shape, bool)


def _boxes(region: np.ndarray, meta: dict[str, Any], keep: Callable[[dict[str, Any]], bool]) -> None:
    for obj in meta["objects"]:
        if keep(obj):
            x0, y0, x1, y1 = (round(v) for v in obj["box"])
            region[max(0, y0 - 2) : y1 + 2, max(0, x0 - 2) : x1 + 2] = True


def test_render_with_other_suit_shapes_changes_only_face_up_cards_pixels(tmp_path: Path) -> None:
    meta, differ, faces = _render_twice(tmp_path, "--suit-shapes", ("own", "any"), size="1600x1000")
    _boxes(faces, meta, lambda obj: obj["cls"] == "card_face")
    assert not differ[~faces].any()
    assert differ[faces].sum() > 100


def test_render_with_shifted_figures_changes_only_the_court_cards_pixels(tmp_path: Path) -> None:
    meta, differ, courts = _render_twice(tmp_path, "--court-figures", ("own", "shifted"), size="640x400")
    _boxes(courts, meta, lambda obj: obj["cls"] == "card_face" and bool(obj.get("card")) and obj["card"][0] in "JQK")
    assert not differ[~courts].any()
    assert differ[courts].sum() > 100, "seed 1's home scene shows three court cards face up"


@pytest.mark.slow
def test_output_does_not_depend_on_workers(tmp_path: Path) -> None:
    trees = []
    for workers in (1, 2):
        out = tmp_path / f"w{workers}"
        render_dataset(DatasetSpec(out=out, count=4, seed=9, size=(160, 112), workers=workers, progress=False))
        trees.append(read_tree(out))
    assert trees[0] == trees[1]
    assert len(trees[0]) == 12


def test_different_seeds_differ(tmp_path: Path) -> None:
    trees = []
    for seed in (1, 2):
        out = tmp_path / f"s{seed}"
        render_dataset(DatasetSpec(out=out, count=1, seed=seed, size=(128, 96), val_fraction=0.0, progress=False))
        trees.append(read_tree(out))
    assert trees[0].keys() == trees[1].keys()
    assert trees[0] != trees[1]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--size", "big"], "expected WxH"),
        (["--size", "10x10000"], "within 16..8192"),
        (["--count", "0"], "expected a positive integer"),
        (["--workers", "-1"], "expected a positive integer"),
        (["--val-fraction", "1.5"], "expected a number in [0, 1)"),
        (["--seed", "x"], "expected a non-negative integer"),
        (["--style", "beach"], "invalid choice: 'beach'"),
        (["--camera-tilt", "low"], "expected MIN-MAX degrees such as 35-55, got 'low'"),
        (["--camera-tilt", "55-35"], "expected MIN-MAX degrees with 0 <= MIN <= MAX <= 75, got '55-35'"),
        (["--camera-tilt", "30-80"], "expected MIN-MAX degrees with 0 <= MIN <= MAX <= 75, got '30-80'"),
    ],
)
def test_bad_arguments_are_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str],
                                   message: str) -> None:
    base = {"--count": "1", "--seed": "1", "--out": str(tmp_path / "x")}
    for flag, value in zip(args[::2], args[1::2], strict=True):
        base[flag] = value
    with pytest.raises(SystemExit) as exc:
        main(["datasets", "render", *[item for pair in base.items() for item in pair]])
    assert exc.value.code == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "x").exists()


def test_a_non_empty_out_dir_is_refused_and_kept(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "notes.txt").write_text("mine")
    code = main(["datasets", "render", "--count", "1", "--seed", "1", "--out", str(tmp_path), "--no-progress"])
    assert code == 2
    assert "not empty" in capsys.readouterr().err
    assert (tmp_path / "notes.txt").read_text() == "mine"
    assert not (tmp_path / "images").exists()
    code = main(["datasets", "render", "--count", "1", "--seed", "1", "--out", str(tmp_path), "--size", "96x64",
                 "--overwrite", "--no-progress"])
    assert code == 0
    assert (tmp_path / "notes.txt").read_text() == "mine"
    assert len(list(tmp_path.glob("images/*/*.jpg"))) == 1


def test_spec_validates_its_arguments(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="expected at least 1 image"):
        DatasetSpec(out=tmp_path, count=0, seed=1)
    with pytest.raises(ValueError, match=r"expected a number in \[0, 1\)"):
        DatasetSpec(out=tmp_path, count=1, seed=1, val_fraction=1.0)
    assert np.isfinite(DatasetSpec(out=tmp_path, count=1, seed=1).val_fraction)
