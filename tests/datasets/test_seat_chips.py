"""Seats' stacks side by side (`seat_chips`) and the training-scene option that lays them out."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
import pytest

from floorman.core.chips import ChipSet
from floorman.core.layout import TableLayout
from floorman.datasets.camera import Camera
from floorman.datasets.random_scene import DARK_FELT_RGB, SceneStyle, random_sample, random_scene
from floorman.datasets.render import Renderer
from floorman.datasets.render_cli import register_render
from floorman.datasets.render_dataset import DatasetSpec, render_dataset
from floorman.datasets.scene import DetectorClass, Lighting, Scene
from floorman.datasets.seat_chips import FIRST_SEAT_ID, TOUCHING_MM, off_seats, seat_chips, touching

LAYOUT = TableLayout.default()
CHIPS = ChipSet.default()


def centre_distances(xy: np.ndarray) -> np.ndarray:
    distance = np.hypot(*(xy[:, None, :] - xy[None, :, :]).transpose(2, 0, 1))
    np.fill_diagonal(distance, np.inf)
    return distance


def same_camera(a: Camera, b: Camera) -> bool:
    return bool((a.width, a.height, a.fx, a.fy, a.cx, a.cy) == (b.width, b.height, b.fx, b.fy, b.cx, b.cy)
                and np.array_equal(a.rotation, b.rotation) and np.array_equal(a.translation, b.translation))


def test_seat_chips_puts_each_seats_stacks_side_by_side() -> None:
    touching = 0
    for seed in range(5):
        scene = Scene(layout=LAYOUT, chipset=CHIPS)
        stacks = seat_chips(scene, np.random.default_rng(seed))
        assert stacks and all(1 <= s.count <= 20 for s in stacks)
        assert len({s.id for s in stacks}) == len(stacks)
        zones = LAYOUT.zone_names_at(np.array([(s.x, s.y) for s in stacks]))
        for seat in LAYOUT.seat_numbers:
            mine = [s for s, z in zip(stacks, zones, strict=True) if z == f"stack_{seat}"]
            assert len({s.chips[0] for s in mine}) == len(mine)  # one stack per denomination
            if len(mine) > 1:
                distance = centre_distances(np.array([(s.x, s.y) for s in mine]))
                assert distance.min(axis=1).max() < TOUCHING_MM  # each touches a neighbour
                assert distance.min() > CHIPS.diameter_mm - 1.0  # never inside one another
                touching += len(mine)
    assert touching > 20


def test_the_option_lays_out_the_seats_and_keeps_the_rest_of_the_scene() -> None:
    laid = 0
    dark = 0
    for seed in range(12):
        plain = random_scene(np.random.default_rng(seed), style=SceneStyle.CASINO)
        seats = random_scene(np.random.default_rng(seed), style=SceneStyle.CASINO, seat_chips=1.0)
        assert seats.cards == plain.cards and seats.hands == plain.hands and seats.buttons == plain.buttons
        assert seats.lighting == plain.lighting
        assert seats.appearance.racks == plain.appearance.racks
        kept = off_seats(plain)
        assert seats.chips[:len(kept)] == kept  # the pot's stacks and loose chips stay
        on_seats = seats.chips[len(kept):]
        assert on_seats and all(s.id >= FIRST_SEAT_ID for s in on_seats)
        assert off_seats(seats) == kept
        laid += 1
        if seats.appearance != plain.appearance:
            assert seats.appearance.colour in DARK_FELT_RGB and seats.appearance.surface == "felt"
            dark += 1
    assert laid == 12
    assert 0 < dark < 12


def test_the_option_at_zero_draws_nothing_and_changes_nothing() -> None:
    for seed in range(6):
        before, before_camera = random_sample(np.random.default_rng(seed))
        after, after_camera = random_sample(np.random.default_rng(seed), seat_chips=0.0)
        assert before == after
        assert same_camera(before_camera, after_camera)
        # At any chance the main stream is untouched: the camera drawn after the scene is the same one.
        rng = np.random.default_rng(seed)
        with_seats, camera = random_sample(rng, style=SceneStyle.CASINO, seat_chips=1.0)
        plain_rng = np.random.default_rng(seed)
        plain, plain_camera = random_sample(plain_rng, style=SceneStyle.CASINO)
        assert same_camera(camera, plain_camera)
        assert rng.random() == plain_rng.random()
        assert with_seats.chips != plain.chips


def test_touching_flags_the_stacks_with_a_neighbour_within_reach() -> None:
    slots = [(0.0, 0.0), (42.0, 0.0), (84.0, 30.0), (300.0, 300.0)]  # a row of two, one 51.6 mm off, one alone
    assert touching(slots) == [True, True, False, False]
    assert touching(slots, mm=52.0) == [True, True, True, False]
    assert touching(slots[:1]) == [False] and touching([]) == []
    rng = np.random.default_rng(7)
    scene = random_scene(rng, layout=LAYOUT, chipset=CHIPS, style=SceneStyle.CASINO)
    scene.chips = seat_chips(scene, rng)
    flags = touching([(s.x, s.y) for s in scene.chips])
    assert sum(flags) >= len(flags) // 2  # seats' stacks sit side by side
    with pytest.raises(ValueError, match="expected a distance > 0 mm, got 0"):
        touching(slots, mm=0.0)


def test_home_scenes_never_take_the_option() -> None:
    for seed in range(3):
        plain = random_scene(np.random.default_rng(seed), style=SceneStyle.HOME)
        assert random_scene(np.random.default_rng(seed), style=SceneStyle.HOME, seat_chips=1.0) == plain


def test_touching_stacks_render_as_one_box_each() -> None:
    scene = Scene(layout=LAYOUT, chipset=CHIPS, lighting=Lighting(gradient_strength=0.0, glare=(),
                                                                   shadow_strength=0.0))
    scene.chips = seat_chips(scene, np.random.default_rng(3))
    zones = LAYOUT.zone_names_at(np.array([(s.x, s.y) for s in scene.chips]))
    zone = max((z for z in zones if z is not None and z.startswith("stack_")), key=zones.count)
    mine = {s.id for s, z in zip(scene.chips, zones, strict=True) if z == zone}
    assert len(mine) >= 3
    cx, cy = LAYOUT.zone(zone).points.mean(axis=0)
    camera = Camera.look_at(eye=(cx, cy, 700.0), target=(cx, cy, 0.0), size=(320, 240), hfov_deg=30.0)
    result = Renderer(camera).render(scene, rng=np.random.default_rng(0))
    boxes = {o.id: o.box for o in result.objects if o.id in mine and o.cls == DetectorClass.CHIP}
    assert set(boxes) == mine
    xyxy = np.array(list(boxes.values()))
    gaps = [max(max(a[0], b[0]) - min(a[2], b[2]), max(a[1], b[1]) - min(a[3], b[3]))
            for i, a in enumerate(xyxy) for b in xyxy[i + 1:]]
    assert min(gaps) < 2.0  # neighbours' boxes meet (or overlap where a side shows)


def test_bad_chances_are_refused() -> None:
    with pytest.raises(ValueError, match="expected a probability"):
        random_scene(np.random.default_rng(0), seat_chips=1.5)
    with pytest.raises(ValueError, match="expected a probability"):
        DatasetSpec(out=Path("/nonexistent"), count=1, seed=0, seat_chips=-0.1)
    parser = argparse.ArgumentParser()
    register_render(parser.add_subparsers())
    args = parser.parse_args(["render", "--count", "2", "--seed", "1", "--out", "x", "--seat-chips", "0.5"])
    assert args.seat_chips == 0.5
    assert parser.parse_args(["render", "--count", "2", "--seed", "1", "--out", "x"]).seat_chips == 0.0
    with pytest.raises(SystemExit):
        parser.parse_args(["render", "--count", "2", "--seed", "1", "--out", "x", "--seat-chips", "2"])


def test_a_rendered_dataset_with_the_option_labels_the_seats_stacks(tmp_path: Path) -> None:
    spec = DatasetSpec(out=tmp_path / "seats", count=2, seed=4, size=(320, 240), style=SceneStyle.CASINO,
                       seat_chips=1.0, val_fraction=0.0, progress=False)
    summary = render_dataset(spec)
    assert summary.train == 2
    seat_labels = 0
    for meta_file in sorted((spec.out / "meta" / "train").glob("*.json")):
        meta = json.loads(meta_file.read_text(encoding="utf-8"))
        chips = [o for o in meta["objects"] if o["cls"] == DetectorClass.CHIP.label]
        assert chips and all(o["id"] >= FIRST_SEAT_ID for o in chips if o["zone"] and o["zone"].startswith("stack_"))
        seat_labels += sum(o["labelled"] and o["id"] >= FIRST_SEAT_ID for o in chips)
    assert seat_labels > 0
