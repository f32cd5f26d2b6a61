"""A stack's count from the seams of its side."""

from __future__ import annotations

import numpy as np
import pytest

from floorman.core.layout import TableLayout
from floorman.datasets.camera import Camera
from floorman.datasets.render import Renderer
from floorman.datasets.scene import ChipStack, DetectorClass, Lighting, Scene
from floorman.vision.chips_geometry import side_points
from floorman.vision.chips_seams import seam_log_evidence, side_lines
from tests.vision.test_chips import CHIPSET, exact_table_camera, render_chips, tilted_camera

RADIUS = CHIPSET.diameter_mm / 2.0


@pytest.mark.parametrize("count", [6, 11, 17])
def test_the_side_of_n_chips_is_read_as_n_chips(count: int) -> None:
    # One-colour stacks, sides of ~4 px per chip; base and top centres where the camera puts them.
    camera = tilted_camera(size=(1920, 1440))
    rendered = render_chips([(500,) * count, (1000,) * count], camera=camera, seed=count)
    model = exact_table_camera(camera)
    assert len(rendered.chips) == 2
    for obj in rendered.chips:
        x, y = obj.position_mm
        base_px, top_px = model.project(np.array([[x, y, 0.0], [x, y, count * CHIPSET.thickness_mm]]))
        evidence = seam_log_evidence(rendered.image, model, base_px=base_px, top_px=top_px, radius_mm=RADIUS,
                                     max_count=30)
        assert evidence is not None and evidence.shape == (30,)
        assert int(np.argmax(evidence)) + 1 == count
        assert evidence[count - 1] - max(evidence[count - 2], evidence[count]) > 2.0


def test_the_front_of_a_side_rises_as_its_rim_does() -> None:
    # Straight down, a stack 320 mm from the camera's foot: the side facing the camera (towards the foot) rises
    # less in the image than the stack's centre.
    camera = Camera.look_at(eye=(0.0, 0.0, 1200.0), target=(0.0, 1.0, 0.0), size=(3840, 2160), hfov_deg=60.0)
    model = exact_table_camera(camera, height_mm=1200.0)
    height = 12 * CHIPSET.thickness_mm
    base_px, top_px = model.project(np.array([[320.0, 0.0, 0.0], [320.0, 0.0, height]]))
    starts, ends = side_lines(model, base_px=base_px, top_px=top_px, radius_mm=RADIUS)
    rims = side_points(model, np.array([320.0, 0.0]), radius_mm=RADIUS, angles_deg=(0.0,), heights_mm=(0.0, height))
    front = model.project(rims[:, 0, :])
    np.testing.assert_allclose(starts[4], front[0], atol=0.05)
    np.testing.assert_allclose(ends[4], front[1], atol=0.05)
    assert np.linalg.norm(ends[4] - starts[4]) < 0.96 * np.linalg.norm(top_px - base_px)


def test_a_stack_leaning_along_the_view_is_counted_by_its_seams() -> None:
    # 12 chips far from the foot of a straight-down 4K camera, the top 2 mm further out than the base: the centres'
    # offset is as long as ~12.5 chips' would be. The seams tell 12.
    camera = Camera.look_at(eye=(0.0, 0.0, 1200.0), target=(0.0, 1.0, 0.0), size=(3840, 2160), hfov_deg=50.0)
    model = exact_table_camera(camera, height_mm=1200.0)
    scene = Scene(layout=TableLayout.default(), chipset=CHIPSET,
                  lighting=Lighting(colour_temperature_k=4500.0, shadow_strength=0.3))
    count, lean = 12, (2.0, 0.0)
    scene.chips.append(ChipStack(id=1, x=360.0, y=0.0, chips=(100,) * count, lean_mm=lean))
    result = Renderer(camera).render(scene, rng=np.random.default_rng(3))
    assert any(o.cls == DetectorClass.CHIP for o in result.objects)
    base_px, top_px = model.project(np.array([[360.0, 0.0, 0.0],
                                              [360.0 + lean[0], lean[1], count * CHIPSET.thickness_mm]]))
    evidence = seam_log_evidence(result.image, model, base_px=base_px, top_px=top_px, radius_mm=RADIUS, max_count=30)
    assert evidence is not None
    assert int(np.argmax(evidence)) + 1 == count


def test_a_band_too_short_for_seams_gives_no_evidence() -> None:
    camera = tilted_camera(size=(640, 480))
    rendered = render_chips([(100,)], camera=camera, seed=1)
    model = exact_table_camera(camera)
    base_px = np.array([320.0, 240.0])
    assert seam_log_evidence(rendered.image, model, base_px=base_px, top_px=base_px + 1.0, radius_mm=RADIUS,
                             max_count=30) is None
