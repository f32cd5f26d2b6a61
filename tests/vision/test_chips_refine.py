"""A stack's count from a detector's loose box: the silhouette fitted to the image's edges places the top disc and
the base to a fraction of a pixel, where the box alone is off by its sides' error."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from floorman.vision.chips import REFINED_BOX_SCALE, ChipRecogniser
from floorman.vision.chips_box import detector_sigma_px
from floorman.vision.chips_geometry import StackFit, fit_stack
from floorman.vision.chips_refine import (
    _NORMALS,
    _RAYS,
    Silhouette,
    _edges,
    _Outline,
    count_from_silhouette,
    refine_silhouette,
)
from tests.vision.test_chips import CHIPSET, Rendered, exact_table_camera, render_chips, tilted_camera
from tests.vision.test_chips_count import mask_box

RADIUS, THICKNESS = CHIPSET.diameter_mm / 2.0, CHIPSET.thickness_mm
STACKS: list[tuple[int, ...]] = [(100,) * 2, (1000,) * 5, (5000,) * 8, (25,) * 11, (100,) * 15]
# A detector's box error (px per side: x1, y1, x2, y2), about its measured spread of 2 px.
LOOSE = ((2.0, -2.0, -2.0, 2.0), (-2.0, 2.0, 2.0, -2.0), (2.0, 2.0, -2.0, -2.0), (-2.0, -2.0, 2.0, 2.0),
         (2.0, -2.0, 2.0, -2.0))


@pytest.fixture(scope="module")
def rendered() -> Rendered:
    return render_chips(STACKS, camera=tilted_camera(tilt_deg=20.0, size=(960, 640)), seed=94303)


def loose_box(box: tuple[float, float, float, float], index: int) -> tuple[float, float, float, float]:
    shift = LOOSE[index % len(LOOSE)]
    x1, y1, x2, y2 = (float(v) + s for v, s in zip(box, shift, strict=True))
    return x1, y1, x2, y2


def true_offset(rendered: Rendered, box: tuple[float, float, float, float], count: int) -> np.ndarray:
    """The top disc's centre minus the base's in the image, for the stack whose box this is."""
    model = exact_table_camera(rendered.camera)
    fit = fit_stack(model, box, diameter_mm=CHIPSET.diameter_mm, thickness_mm=THICKNESS)
    base = np.array([[fit.base_mm[0], fit.base_mm[1], 0.0], [fit.base_mm[0], fit.base_mm[1], count * THICKNESS]])
    uv = rendered.camera.project(base)[0]
    result: np.ndarray = uv[1] - uv[0]
    return result


def test_the_silhouette_places_the_top_over_the_base_finer_than_a_loose_box(rendered: Rendered) -> None:
    model = exact_table_camera(rendered.camera)
    refined_errors, box_errors = [], []
    for index, truth in enumerate(rendered.chips):
        assert truth.chips is not None
        loose = fit_stack(model, loose_box(truth.box, index), diameter_mm=CHIPSET.diameter_mm, thickness_mm=THICKNESS,
                          box_sigma_px=1.0)
        silhouette = refine_silhouette(rendered.image, model, loose, radius_mm=RADIUS, thickness_mm=THICKNESS)
        assert isinstance(silhouette, Silhouette)
        expected = true_offset(rendered, truth.box, len(truth.chips))
        refined_errors.append(float(np.linalg.norm(silhouette.top_px - silhouette.base_px - expected)))
        top = model.project(np.array([[*loose.base_mm, loose.count * THICKNESS]]))[0]
        base = model.project(np.array([[*loose.base_mm, 0.0]]))[0]
        box_errors.append(float(np.linalg.norm(top - base - expected)))
        assert np.all(np.linalg.eigvalsh(silhouette.offset_cov) > 0)
    assert len(refined_errors) == len(STACKS)
    assert max(refined_errors) < 1.3, refined_errors  # about a chip's step here (1.5 px)
    assert np.mean(refined_errors) < 0.5 * np.mean(box_errors), (refined_errors, box_errors)


def test_loose_boxes_are_counted_from_the_silhouette(rendered: Rendered) -> None:
    model = exact_table_camera(rendered.camera)
    # the geometry alone (no learned offset: it would count the box's reading too)
    refined = ChipRecogniser(CHIPSET, camera=model, offset_net=None)
    boxed = ChipRecogniser(CHIPSET, camera=model, refine=False, offset_net=None)
    right = {"refined": 0, "box": 0}
    box_misses = []
    for index, truth in enumerate(rendered.chips):
        assert truth.chips is not None
        box = loose_box(truth.box, index)
        reading = refined.read(rendered.image, box)
        right["refined"] += reading.count == len(truth.chips)
        from_box = boxed.read(rendered.image, box)
        right["box"] += from_box.count == len(truth.chips)
        box_misses.append(abs(from_box.count - len(truth.chips)))
        assert abs(reading.count - len(truth.chips)) <= 1, (truth.chips, reading)
        if reading.count_confidence >= 0.8:
            assert reading.count == len(truth.chips), (truth.chips, reading)
    assert right["refined"] >= 3
    assert right["refined"] > right["box"], right
    assert max(box_misses) >= 2  # the loose box alone is off by chips


def test_a_blank_felt_has_no_silhouette() -> None:
    camera = tilted_camera(tilt_deg=20.0, size=(960, 640))
    model = exact_table_camera(camera)
    felt = np.full((640, 960, 3), (40, 110, 30), dtype=np.uint8)
    fit = StackFit(base_mm=(0.0, 0.0), count=5, count_confidence=0.1, px_per_chip=1.0, residual_px=1.0)
    assert refine_silhouette(felt, model, fit, radius_mm=RADIUS, thickness_mm=THICKNESS) is None
    off_image = StackFit(base_mm=(5000.0, 0.0), count=5, count_confidence=0.1, px_per_chip=1.0, residual_px=1.0)
    assert refine_silhouette(felt, model, off_image, radius_mm=RADIUS, thickness_mm=THICKNESS) is None


def test_a_tight_offset_gives_a_sure_count_and_a_loose_one_does_not() -> None:
    model = exact_table_camera(tilted_camera(tilt_deg=35.0, size=(960, 640)))
    base_mm = np.array([30.0, -20.0])
    uv = model.project(np.array([[*base_mm, 0.0], [*base_mm, 3 * THICKNESS]]))

    def silhouette(sd_px: float) -> Silhouette:
        return Silhouette(base_px=uv[0], top_px=uv[1], offset_cov=np.eye(2) * sd_px**2, edges=60, sigma_px=0.5)

    tight = count_from_silhouette(model, silhouette(0.1), thickness_mm=THICKNESS, max_count=30)
    loose = count_from_silhouette(model, silhouette(3.0), thickness_mm=THICKNESS, max_count=30)
    assert tight.count == 3 and tight.count_confidence > 0.8
    assert tight.base_mm == pytest.approx((30.0, -20.0), abs=0.1)
    assert loose.count_confidence < 0.5
    assert tight.px_per_chip > 0.5


def test_on_a_dark_felt_a_short_offset_may_be_a_hidden_side() -> None:
    """A stack's shaded side can vanish into a dark felt, its base's arc then found at the top's rim: a single chip
    measured there is a less sure count than on a lighter felt."""
    model = exact_table_camera(tilted_camera(tilt_deg=20.0, size=(960, 640)))
    base_mm = np.array([30.0, -20.0])
    uv = model.project(np.array([[*base_mm, 0.0], [*base_mm, THICKNESS]]))

    def single(felt_level: float) -> StackFit:
        silhouette = Silhouette(base_px=uv[0], top_px=uv[1], offset_cov=np.eye(2) * 0.4**2, edges=60, sigma_px=0.4,
                                felt_level=felt_level)
        return count_from_silhouette(model, silhouette, thickness_mm=THICKNESS, max_count=30)

    light, dark = single(120.0), single(30.0)
    assert light.count == dark.count == 1
    assert light.count_confidence > 0.9
    assert dark.count_confidence < light.count_confidence - 0.1, (light, dark)


def test_a_silhouette_that_misses_the_side_is_held_back_by_the_box() -> None:
    """On a dark felt the side may vanish, the silhouette then measuring a single chip's offset; the detector's box
    (its sides taken as off by REFINED_BOX_SCALE times the detector's spread) still spans the whole stack and keeps that
    from a trusted count."""
    camera = tilted_camera(tilt_deg=20.0, size=(1280, 720), hfov=60.0)
    model = exact_table_camera(camera)
    base_mm = np.array([30.0, -20.0])
    uv = model.project(np.array([[*base_mm, 0.0], [*base_mm, THICKNESS]]))
    hidden = Silhouette(base_px=uv[0], top_px=uv[1], offset_cov=np.eye(2) * 0.4**2, edges=60, sigma_px=0.4,
                        felt_level=30.0)
    box = mask_box(camera, base=(30.0, -20.0), count=12)
    sigma = REFINED_BOX_SCALE * detector_sigma_px((1280, 720))
    evidence = fit_stack(model, box, diameter_mm=CHIPSET.diameter_mm, thickness_mm=THICKNESS,
                         box_sigma_px=sigma).log_likelihood
    alone = count_from_silhouette(model, hidden, thickness_mm=THICKNESS, max_count=30)
    checked = count_from_silhouette(model, hidden, thickness_mm=THICKNESS, max_count=30, box=evidence)
    assert alone.count == 1 and alone.count_confidence > 0.5
    assert checked.count_confidence < 0.5, checked


def test_each_rays_edge_is_found_to_a_fraction_of_a_pixel_and_not_against_a_shadow() -> None:
    """`chips_refine._edges` on a chip drawn 8x finer and shrunk (anti-aliased) on the felt: every ray from its
    centre finds the rim within 0.25 px, except where the felt outside is in the chip's shadow (no stack edge is
    told against a shadow: that edge may be the shadow's)."""
    scale, radius, centre = 8, 30.3, np.array([80.0, 60.0])
    felt, chip, shade = (40, 110, 30), (30, 30, 170), (24, 66, 18)
    big = np.full((120 * scale, 160 * scale, 3), felt, dtype=np.uint8)
    big[:, 100 * scale:] = shade  # the felt darkened right of x = 100, where the chip's right side ends (110.3)
    cv2.circle(big, (int((centre[0] + 0.5) * scale - 0.5), int((centre[1] + 0.5) * scale - 0.5)),
               int(radius * scale), chip, thickness=-1, lineType=cv2.LINE_8)
    image = cv2.resize(big, (160, 120), interpolation=cv2.INTER_AREA)
    angles = np.arange(_RAYS) * 2.0 * np.pi / _RAYS
    normals = np.arange(_NORMALS) * 2.0 * np.pi / _NORMALS
    circle = np.eye(2) * radius
    outline = _Outline(base_shape=circle, top_shape=circle, origin=centre,
                       rays=np.stack([np.cos(angles), np.sin(angles)], axis=1),
                       normals=np.stack([np.cos(normals), np.sin(normals)], axis=1))
    found, colour = _edges(image, outline, np.full(_RAYS, radius + 2.0), window=7.0)
    np.testing.assert_allclose(colour, felt, atol=2.0)
    rim = centre[0] + np.cos(angles) * radius
    shaded, clear = rim > 103.0, rim < 96.0  # rays whose rim has the shadow outside, and those with felt
    assert shaded.sum() >= 8 and np.isnan(found[shaded]).all()
    np.testing.assert_allclose(found[clear], radius, atol=0.25)
