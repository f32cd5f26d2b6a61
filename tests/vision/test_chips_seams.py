"""A stack's count from the periodic seams of its side."""

from __future__ import annotations

import numpy as np
import pytest

from floorman.vision.chips_seams import seam_log_evidence, side_spectrum
from tests.vision.test_chips import CHIPSET, exact_table_camera, render_chips, tilted_camera

RADIUS = CHIPSET.diameter_mm / 2.0


@pytest.mark.parametrize("count", [6, 11, 17])
def test_the_side_of_n_chips_shows_n_cycles(count: int) -> None:
    # One-colour stacks, sides of ~4 px per chip; base and top centres where the camera puts them.
    camera = tilted_camera(size=(1920, 1440))
    rendered = render_chips([(500,) * count, (1000,) * count], camera=camera, seed=count)
    model = exact_table_camera(camera)
    assert len(rendered.chips) == 2
    for obj in rendered.chips:
        x, y = obj.position_mm
        base_px, top_px = model.project(np.array([[x, y, 0.0], [x, y, count * CHIPSET.thickness_mm]]))
        power = side_spectrum(rendered.image, model, base_px=base_px, top_px=top_px, radius_mm=RADIUS, max_count=30)
        assert power is not None
        near = np.arange(count - 3, count + 4)
        assert near[np.argmax(power[near - 1])] == count
        evidence = seam_log_evidence(rendered.image, model, base_px=base_px, top_px=top_px, radius_mm=RADIUS,
                                     max_count=30)
        assert evidence is not None and evidence.shape == (30,)
        assert evidence[count - 1] > max(evidence[count - 2], evidence[count])


def test_a_band_too_short_for_seams_gives_no_evidence() -> None:
    camera = tilted_camera(size=(640, 480))
    rendered = render_chips([(100,)], camera=camera, seed=1)
    model = exact_table_camera(camera)
    base_px = np.array([320.0, 240.0])
    assert seam_log_evidence(rendered.image, model, base_px=base_px, top_px=base_px + 1.0, radius_mm=RADIUS,
                             max_count=30) is None
