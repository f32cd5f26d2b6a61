"""Chip racks: painted into the static table, where the layout says, in the chips' colours, never labelled."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from floorman.core.chips import ChipSet
from floorman.core.geometry import apply_homography
from floorman.datasets.random_scene import SceneStyle, random_sample, random_scene, random_scene_with_focus
from floorman.datasets.render import Renderer
from floorman.datasets.render_rack import rack_size_mm, rack_texture
from floorman.datasets.scene import ChipRack, DetectorClass, RackRow
from tests.datasets.test_render import down_camera, empty_scene

RED = (200, 30, 40)
WHITE = (245, 245, 245)


def red_rack(*, count: int = 20, x: float = 0.0, y: float = 0.0, angle: float = 0.0) -> ChipRack:
    return ChipRack(x=x, y=y, angle_deg=angle, rows=(RackRow(colour=RED, spot_colour=WHITE, count=count),) * 5)


def test_rack_texture_shows_the_chips_and_their_spots() -> None:
    texture = rack_texture(red_rack(), px_per_mm=4.0)
    width, depth = rack_size_mm(red_rack())
    assert texture.shape[:2] == (round(depth * 4.0), round(width * 4.0))
    b, g, r = (texture[..., k].astype(int) for k in range(3))
    reddish = (r > 2 * g) & (r > 2 * b) & (r > 90)
    whitish = (r > 180) & (g > 180) & (b > 180)
    assert reddish.mean() > 0.3 and 0.01 < whitish.mean() < 0.3
    empty = rack_texture(red_rack(count=0), px_per_mm=4.0)
    e_r, e_g = empty[..., 2].astype(int), empty[..., 1].astype(int)
    assert not np.any((e_r > 2 * e_g) & (e_r > 90))


def test_rack_is_drawn_where_it_lies_and_is_not_an_object() -> None:
    camera = down_camera(size=(640, 480), height=700.0, target=(0.0, 0.0))
    scene = empty_scene()
    bare = Renderer(camera).render(scene, rng=np.random.default_rng(0))
    scene.appearance = replace(scene.appearance, racks=(red_rack(x=0.0, y=0.0, angle=30.0),))
    result = Renderer(camera).render(scene, rng=np.random.default_rng(0))
    assert result.objects == [] and not result.instance_mask.any()
    points = apply_homography(camera.table_homography(), np.array([[0.0, 0.0], [250.0, 160.0]])).round().astype(int)
    (u0, v0), (u1, v1) = points[0], points[1]
    centre = result.image[v0 - 20:v0 + 20, u0 - 20:u0 + 20].reshape(-1, 3).astype(int)
    assert np.mean((centre[:, 2] > 2 * centre[:, 1]) & (centre[:, 2] > 80)) > 0.2
    assert np.abs(result.image[v1, u1].astype(int) - bare.image[v1, u1].astype(int)).max() < 8


@pytest.mark.parametrize("seed", [1, 2, 3, 4, 5, 6])
def test_casino_racks_sit_in_the_dealer_tray_and_leave_the_objects_alone(seed: int) -> None:
    scene = random_scene(np.random.default_rng(seed), style=SceneStyle.CASINO)
    tray = scene.layout.zone("dealer_tray").points
    for rack in scene.appearance.racks:
        assert tray[:, 0].min() <= rack.x <= tray[:, 0].max() and tray[:, 1].min() <= rack.y <= tray[:, 1].max()
        assert rack_size_mm(rack)[0] <= np.ptp(tray[:, 0]) and all(0 <= row.count <= 20 for row in rack.rows)
        colours = {d.rgb for d in ChipSet.default().denominations}
        assert all(row.colour in colours for row in rack.rows)
    # The racks come from a child generator: the objects are those of the scene drawn without them.
    again, _, _ = random_scene_with_focus(np.random.default_rng(seed), style=SceneStyle.CASINO)
    assert again.cards == scene.cards and again.chips == scene.chips and again.lighting == scene.lighting


def test_some_scenes_of_each_style_have_a_rack() -> None:
    for style in SceneStyle:
        racks = [bool(random_scene(np.random.default_rng(s), style=style).appearance.racks) for s in range(40)]
        assert 0.2 < np.mean(racks) < 0.95, style


def test_a_home_scenes_rack_can_be_asked_for_or_left_out_without_changing_the_rest() -> None:
    """`home_rack` (the held-out photographs have a rack at the side: `benchmarks/photo_labels.py --rack always`):
    True puts one in every home scene, False in none, and the cards, chips and light are those drawn without it."""
    for seed in range(12):
        drawn, _, focus = random_scene_with_focus(np.random.default_rng(seed), style=SceneStyle.HOME)
        always, _, focus_always = random_scene_with_focus(np.random.default_rng(seed), style=SceneStyle.HOME,
                                                          home_rack=True)
        never, _, _ = random_scene_with_focus(np.random.default_rng(seed), style=SceneStyle.HOME, home_rack=False)
        assert len(always.appearance.racks) == 1 and never.appearance.racks == ()
        for scene in (always, never):
            assert scene.cards == drawn.cards and scene.chips == drawn.chips and scene.lighting == drawn.lighting
        assert focus_always == focus
        if drawn.appearance.racks:
            assert always.appearance.racks == drawn.appearance.racks


def test_a_home_scene_may_have_a_dealer_button_and_is_otherwise_the_same() -> None:
    """`home_button` (training data for a detector that must tell a plain white chip from the button): a home scene
    gets a 50-75 mm button near its cards, drawn apart from everything else; at 0 nothing changes, and casino scenes
    never change."""
    for seed in range(16):
        plain, _, focus = random_scene_with_focus(np.random.default_rng(seed), style=SceneStyle.HOME, home_rack=True)
        button, _, focus_b = random_scene_with_focus(np.random.default_rng(seed), style=SceneStyle.HOME,
                                                     home_rack=True, home_button=1.0)
        none, _, _ = random_scene_with_focus(np.random.default_rng(seed), style=SceneStyle.HOME, home_rack=True,
                                             home_button=0.0)
        assert plain.buttons == none.buttons == []
        assert len(button.buttons) == 1 and 50.0 <= button.buttons[0].diameter_mm <= 75.0
        assert (button.cards, button.chips, button.hands, button.lighting, button.appearance, focus_b) == (
            plain.cards, plain.chips, plain.hands, plain.lighting, plain.appearance, focus)
        casino = random_scene_with_focus(np.random.default_rng(seed), style=SceneStyle.CASINO, home_button=1.0)[0]
        assert casino == random_scene_with_focus(np.random.default_rng(seed), style=SceneStyle.CASINO)[0]
    with pytest.raises(ValueError, match="home_button"):
        random_scene_with_focus(np.random.default_rng(0), home_button=1.5)


def test_a_home_button_is_rendered_and_labelled() -> None:
    scene, camera = random_sample(np.random.default_rng(3), size=(900, 600), style=SceneStyle.HOME, home_button=1.0)
    result = Renderer(camera).render(scene, rng=np.random.default_rng(0))
    buttons = [o for o in result.objects if o.cls == DetectorClass.DEALER_BUTTON and o.visible_fraction > 0.0]
    assert len(buttons) == 1
