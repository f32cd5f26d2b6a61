"""Other clubs' chips (`chip_designs.club_chipset`) and the training-scene option that plays with them."""

from __future__ import annotations

import argparse
import dataclasses
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from floorman.core.chips import ChipSet
from floorman.datasets import chip_designs
from floorman.datasets.chip_designs import club_chipset
from floorman.datasets.random_scene import SceneStyle, random_sample, random_scene
from floorman.datasets.render import Renderer
from floorman.datasets.render_cli import register_render
from floorman.datasets.render_dataset import DatasetSpec, render_dataset
from floorman.datasets.scene import DetectorClass
from floorman.vision.detect_cli import colour_name

BASE = ChipSet.default()


def spots_show(colour: tuple[int, int, int], spots: tuple[int, int, int]) -> bool:
    return max(abs(a - b) for a, b in zip(colour, spots, strict=True)) > 40


def test_a_club_set_keeps_values_names_sizes_and_each_colour_word() -> None:
    rng = np.random.default_rng(3)
    kept = drawn = 0
    plain_white = spotted_white = 0
    spot_counts = set()
    for _ in range(400):
        club = club_chipset(rng, BASE)
        assert club.values == BASE.values and club.diameter_mm == BASE.diameter_mm
        assert [d.label for d in club.denominations] == [d.label for d in BASE.denominations]
        assert len({d.colour for d in club.denominations}) == len(club.denominations)
        for ours, theirs in zip(BASE.denominations, club.denominations, strict=True):
            drawn += 1
            kept += colour_name(theirs.rgb) == colour_name(ours.rgb)
            spot_counts.add(theirs.edge_spots)
            if ours.value == 25 and theirs.edge_spots:
                if spots_show(theirs.rgb, theirs.edge_rgb):
                    spotted_white += 1
                else:
                    plain_white += 1
    assert kept / drawn >= 0.99  # a red stays a red (a light blue may be named grey: 11 in 10,000)
    assert plain_white > 0 and spotted_white > 0  # white chips with white spots, as the photographs have
    assert spot_counts == {0, 4, 6, 8}


def test_club_sets_differ_from_draw_to_draw_and_from_the_base() -> None:
    rng = np.random.default_rng(4)
    first, second = club_chipset(rng, BASE), club_chipset(rng, BASE)
    assert first != second
    assert all(a.colour != b.colour for a, b in zip(BASE.denominations, first.denominations, strict=True))


def test_white_spots_change_the_spots_only() -> None:
    """The issue's photographs' chips: every spot white, the rest as drawn without."""
    changed = 0
    for seed in range(40):
        drawn = club_chipset(np.random.default_rng(seed), BASE)
        white = club_chipset(np.random.default_rng(seed), BASE, white_spots=True)
        for a, b in zip(drawn.denominations, white.denominations, strict=True):
            assert (a.colour, a.edge_spots, a.inlay_colour) == (b.colour, b.edge_spots, b.inlay_colour)
            assert min(b.edge_rgb) >= 226 and max(b.edge_rgb) - min(b.edge_rgb) <= 6
            changed += a.edge_colour != b.edge_colour
    assert changed > 0
    scene = random_scene(np.random.default_rng(5), style=SceneStyle.HOME, chip_designs=1.0, white_spots=True)
    assert all(min(d.edge_rgb) >= 226 for d in scene.chipset.denominations)


def test_draws_that_keep_colliding_are_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    grey = lambda _rng, d, **_: d.model_copy(update={"colour": "#808080"})  # noqa: E731 - every draw the same grey
    monkeypatch.setattr(chip_designs, "_club_denomination", grey)
    with pytest.raises(ValueError, match="too close to draw distinct shades"):
        club_chipset(np.random.default_rng(0), BASE)


def test_the_scene_option_changes_the_chips_only() -> None:
    changed = 0
    for seed in range(8):
        plain = random_scene(np.random.default_rng(seed), style=SceneStyle.HOME)
        club = random_scene(np.random.default_rng(seed), style=SceneStyle.HOME, chip_designs=1.0)
        assert club.cards == plain.cards and club.chips == plain.chips and club.hands == plain.hands
        assert club.lighting == plain.lighting
        assert club.chipset.values == plain.chipset.values
        changed += club.chipset != plain.chipset
        assert all(row.colour in {d.rgb for d in club.chipset.denominations}
                   for rack in club.appearance.racks for row in rack.rows)  # a rack holds the club's chips
    assert changed == 8
    for seed in range(4):  # at 0 nothing is drawn: every seed renders as before
        before, _ = random_sample(np.random.default_rng(seed))
        after, _ = random_sample(np.random.default_rng(seed), chip_designs=0.0)
        assert before == after


def test_a_club_scene_renders_its_chips_anew_and_the_rest_as_before() -> None:
    plain, camera = random_sample(np.random.default_rng(11), size=(900, 600), style=SceneStyle.HOME)
    club, _ = random_sample(np.random.default_rng(11), size=(900, 600), style=SceneStyle.HOME, chip_designs=1.0)
    for scene in (plain, club):
        scene.appearance = dataclasses.replace(scene.appearance, racks=())  # racks come from another generator
    images = [Renderer(camera).render(scene, rng=np.random.default_rng(0)) for scene in (plain, club)]
    chips = [o for o in images[0].objects if o.cls == DetectorClass.CHIP and o.visible_fraction > 0.9]
    assert chips
    on_chips = np.zeros(images[0].image.shape[:2], dtype=bool)
    for chip in chips:
        x1, y1, x2, y2 = (round(v) for v in chip.box)
        on_chips[max(y1 - 3, 0):y2 + 3, max(x1 - 3, 0):x2 + 3] = True
    difference = np.abs(images[0].image.astype(int) - images[1].image.astype(int)).max(axis=2)
    assert float(difference[~on_chips].mean()) < 0.5  # cards, table, hands: the same pixels
    for chip in chips:
        x1, y1, x2, y2 = (round(v) for v in chip.box)
        assert float(difference[y1:y2, x1:x2].mean()) > 8.0  # each chip drawn in the club's colours


def render_args(*extra: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    register_render(parser.add_subparsers())
    return parser.parse_args(["render", "--count", "2", "--seed", "1", "--out", "x", *extra])


@pytest.mark.parametrize(("call", "message"), [
    (lambda: random_scene(np.random.default_rng(0), chip_designs=1.5), "chip_designs: expected a probability"),
    (lambda: DatasetSpec(out=Path("/nonexistent"), count=1, seed=0, chip_designs=-0.1),
     "chip designs: expected a probability"),
])
def test_bad_chances_are_refused(call: Callable[[], object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        call()


def test_the_render_command_takes_the_chance() -> None:
    assert render_args("--chip-designs", "0.5").chip_designs == 0.5
    assert render_args().chip_designs == 0.0
    with pytest.raises(SystemExit):
        render_args("--chip-designs", "2")


def test_floorman_datasets_render_gives_other_clubs_white_spots_on_request(tmp_path: Path) -> None:
    """`floorman datasets render --chip-designs P --white-spots` (training data for the held-out photographs' chips,
    a white chip plain): the flag reaches the renderer (frames differ from those without it when the scene plays with
    another club's chips) and changes nothing without `--chip-designs`."""
    parser = argparse.ArgumentParser()
    register_render(parser.add_subparsers())
    base = ["render", "--count", "1", "--seed", "5", "--out", "x"]
    assert parser.parse_args([*base, "--white-spots"]).white_spots is True
    assert parser.parse_args(base).white_spots is False

    def frames(name: str, **options: object) -> list[bytes]:
        spec = DatasetSpec(out=tmp_path / name, count=3, seed=1, size=(320, 240), style=SceneStyle.HOME,
                           val_fraction=0.0, progress=False, **options)  # type: ignore[arg-type]
        render_dataset(spec)
        return [path.read_bytes() for path in sorted((spec.out / "images" / "train").glob("*.jpg"))]

    drawn, white = frames("clubs", chip_designs=1.0), frames("spots", chip_designs=1.0, white_spots=True)
    assert len(drawn) == 3 and drawn != white  # a seed whose clubs' spots are not all white already
    assert frames("ours", chip_designs=0.0) == frames("ours_spots", chip_designs=0.0, white_spots=True)
