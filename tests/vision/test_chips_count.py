"""A stack's count and how sure it is: the count's confidence is the posterior of the chosen count given the box,
so it must be low where the stack's side does not show and match how often counts are right."""

from __future__ import annotations

import numpy as np
import pytest

from floorman.datasets.camera import Camera
from floorman.vision.chips import ChipRecogniser
from floorman.vision.chips_geometry import (
    BOX_SIGMA_PX,
    TableCamera,
    count_choice,
    count_posterior,
    count_prior,
    fit_stack,
    solve_box,
)
from tests.vision.test_chips import CHIPSET, exact_table_camera, render_chips, tilted_camera

RADIUS, THICKNESS = CHIPSET.diameter_mm / 2.0, CHIPSET.thickness_mm


def mask_box(camera: Camera, *, base: tuple[float, float], count: int,
             lean: tuple[float, float] = (0.0, 0.0)) -> tuple[float, float, float, float]:
    """The box an instance mask gives a stack: its outline's extent rounded to whole pixels (x2, y2 exclusive)."""
    angles = np.linspace(0.0, 2.0 * np.pi, 240, endpoint=False)
    ring = RADIUS * np.stack([np.cos(angles), np.sin(angles)], axis=1)
    bottom = np.hstack([ring + base, np.zeros((len(ring), 1))])
    top = np.hstack([ring + np.add(base, lean), np.full((len(ring), 1), count * THICKNESS)])
    uv = camera.project(np.vstack([bottom, top]))[0]
    low, high = np.round(uv.min(axis=0)), np.round(uv.max(axis=0))
    return float(low[0]), float(low[1]), float(high[0]) + 1.0, float(high[1]) + 1.0


def straight_down(height: float = 1400.0, *, hfov: float = 60.0) -> Camera:
    return Camera.look_at(eye=(0.0, 0.0, height), target=(0.0, 0.0, 0.0), size=(1280, 720), hfov_deg=hfov)


def test_a_stack_straight_under_the_camera_gets_no_trusted_count() -> None:
    camera = straight_down()
    model = exact_table_camera(camera, height_mm=1400.0)
    fit = fit_stack(model, mask_box(camera, base=(3.0, -2.0), count=12), diameter_mm=39.0, thickness_mm=THICKNESS)
    assert fit.px_per_chip < 0.3
    assert fit.count_confidence < 0.2


def test_a_short_stack_whose_side_shows_gets_a_trusted_count() -> None:
    camera = tilted_camera(tilt_deg=30.0, size=(1280, 960))
    model = exact_table_camera(camera)
    fit = fit_stack(model, mask_box(camera, base=(60.0, 40.0), count=3), diameter_mm=39.0, thickness_mm=THICKNESS)
    assert fit.count == 3
    assert fit.px_per_chip > 2.0 and fit.count_confidence > 0.8


def test_a_looser_box_makes_the_count_less_sure() -> None:
    camera = tilted_camera(tilt_deg=20.0, size=(1280, 960))
    model = exact_table_camera(camera)
    box = mask_box(camera, base=(-80.0, 30.0), count=6)
    tight = fit_stack(model, box, diameter_mm=39.0, thickness_mm=THICKNESS, box_sigma_px=BOX_SIGMA_PX)
    loose = fit_stack(model, box, diameter_mm=39.0, thickness_mm=THICKNESS, box_sigma_px=2.0)
    assert loose.count_confidence < tight.count_confidence
    with pytest.raises(ValueError, match="box_sigma_px"):
        fit_stack(model, box, diameter_mm=39.0, thickness_mm=THICKNESS, box_sigma_px=0.0)


def test_an_assumed_camera_height_is_flagged_and_widens_the_count() -> None:
    """Straight down, the felt's homography does not fix the camera's height: a tall stack's count then holds
    only as far as every plausible height agrees on it; a measured height gives it back."""
    camera = straight_down(1000.0, hfov=70.0)
    assumed = exact_table_camera(camera)
    measured = exact_table_camera(camera, height_mm=1000.0)
    assert assumed.height_assumed and not measured.height_assumed
    assert [round(float(c.eye[2])) for c in assumed.at_heights([1100.0, 1700.0])] == [1100, 1700]
    box = mask_box(camera, base=(420.0, 230.0), count=15)
    recogniser = ChipRecogniser(CHIPSET, camera=assumed, box_sigma_px=BOX_SIGMA_PX)
    guessed = fit_stack(assumed, box, diameter_mm=39.0, thickness_mm=THICKNESS, alternatives=recogniser.alternatives)
    known = fit_stack(measured, box, diameter_mm=39.0, thickness_mm=THICKNESS)
    assert len(recogniser.alternatives) > 3
    assert known.count == 15
    assert guessed.count_confidence < 0.5 <= known.count_confidence


def test_count_confidence_is_calibrated_on_rounded_boxes() -> None:
    """Random stacks (1-20 chips, leaning like real ones) under random cameras: the mean confidence matches the
    share of exact counts, and confident counts are right."""
    rng = np.random.default_rng(94301)
    confidences, exact = [], []
    for _ in range(120):
        tilt = float(rng.uniform(0.0, 30.0))
        camera = tilted_camera(tilt_deg=tilt, size=(1280, 720), hfov=float(rng.uniform(40.0, 70.0)))
        model = exact_table_camera(camera, height_mm=float(camera.eye[2])) if tilt < 5.0 else exact_table_camera(camera)
        count = int(rng.integers(1, 21))
        lean = rng.normal(0.0, 0.8, size=2) * min(1.0, (count - 1) / 4.0)
        base = (float(rng.uniform(-300.0, 300.0)), float(rng.uniform(-150.0, 150.0)))
        box = mask_box(camera, base=base, count=count, lean=(float(lean[0]), float(lean[1])))
        fit = fit_stack(model, box, diameter_mm=39.0, thickness_mm=THICKNESS)
        confidences.append(fit.count_confidence)
        exact.append(fit.count == count)
    conf, right = np.array(confidences), np.array(exact)
    assert abs(conf.mean() - right.mean()) < 0.1, (conf.mean(), right.mean())
    assert right[conf >= 0.8].mean() >= 0.85
    assert 0.2 < (conf >= 0.5).mean() < 0.95


def test_rendered_stacks_carry_their_count_confidence() -> None:
    """Rendered stacks under a 30 degree camera, read from their mask boxes: confident counts are right."""
    stacks: list[tuple[int, ...]] = [(100,), (500,) * 3, (1000,) * 6, (25,) * 9, (5000,) * 14]
    rendered = render_chips(stacks, camera=tilted_camera(tilt_deg=30.0), seed=94302)
    recogniser = ChipRecogniser(CHIPSET, camera=exact_table_camera(rendered.camera), box_sigma_px=BOX_SIGMA_PX)
    assert not recogniser.alternatives
    readings = [(truth, recogniser.read(rendered.image, truth.box)) for truth in rendered.chips]
    assert len(readings) == len(stacks)
    for truth, reading in readings:
        assert truth.chips is not None
        if reading.count_confidence >= 0.8:
            assert reading.count == len(truth.chips), (truth.chips, reading)
    assert sum(r.count_confidence >= 0.5 for _, r in readings) >= 3


def test_detector_boxes_are_taken_as_looser_than_mask_boxes() -> None:
    camera = exact_table_camera(tilted_camera(tilt_deg=30.0))
    assert ChipRecogniser(CHIPSET, camera=camera).box_sigma_px > BOX_SIGMA_PX
    with pytest.raises(ValueError, match="box_sigma_px"):
        ChipRecogniser(CHIPSET, camera=camera, box_sigma_px=-1.0)


def test_table_camera_keeps_its_height_flag() -> None:
    tilted = exact_table_camera(tilted_camera(tilt_deg=30.0))
    assert tilted.focal_from_homography and not tilted.height_assumed
    assert TableCamera(tilted.projection, tilted.image_size, True).height_assumed is False


def test_the_count_prior_favours_a_single_chip_and_stops_near_a_standard_stack() -> None:
    prior = np.exp(count_prior(30, single_share=0.1, usual_max=20, beyond_share=0.02))
    assert prior.sum() == pytest.approx(1.0)
    assert prior[0] == pytest.approx(0.1)
    np.testing.assert_allclose(prior[1:20], 0.88 / 19)
    np.testing.assert_allclose(prior[20:], 0.002)
    assert np.exp(count_prior(12, single_share=0.3, usual_max=20, beyond_share=0.02)).sum() == pytest.approx(1.0)
    with pytest.raises(ValueError, match="single_share"):
        count_prior(30, single_share=0.9, usual_max=20, beyond_share=0.2)
    with pytest.raises(ValueError, match="log-prior"):
        count_posterior(np.zeros(30), (0.0,) * 12)


def test_with_no_side_showing_the_prior_picks_a_single_chip_but_does_not_trust_it() -> None:
    """Straight under the camera a box tells no count: under the flat prior any count is about as good, under the
    recogniser's a single chip is the likeliest; its confidence stays what the evidence alone gives it."""
    camera = straight_down()
    model = exact_table_camera(camera, height_mm=1400.0)
    box = mask_box(camera, base=(40.0, 30.0), count=12)
    recogniser = ChipRecogniser(CHIPSET, camera=model)
    flat = fit_stack(model, box, diameter_mm=39.0, thickness_mm=THICKNESS, box_sigma_px=2.0)
    fit = fit_stack(model, box, diameter_mm=39.0, thickness_mm=THICKNESS, box_sigma_px=2.0,
                    log_prior=recogniser.log_prior)
    evidence = np.array(flat.log_likelihood)
    assert flat.count != 1 and flat.count_confidence < 0.1
    assert fit.count == 1
    assert fit.log_likelihood == flat.log_likelihood  # the evidence alone, whatever the prior
    assert fit.count_confidence == pytest.approx(count_posterior(evidence)[0])
    assert fit.count_confidence < count_posterior(evidence, recogniser.log_prior)[0]
    with pytest.raises(ValueError, match="log-prior"):
        ChipRecogniser(CHIPSET, camera=model, log_prior=(0.0,) * 5)


def test_a_count_the_evidence_trusts_keeps_its_confidence_under_the_prior() -> None:
    evidence = np.full(30, -50.0)
    evidence[5] = 0.0  # six chips, clearly
    prior = ChipRecogniser(CHIPSET).log_prior
    best, confidence = count_choice(evidence, prior)
    assert best == 5 and confidence > 0.99
    best, confidence = count_choice(np.zeros(30), prior)  # no evidence: a single chip, not trusted
    assert best == 0 and confidence == pytest.approx(1.0 / 30)


def test_the_camera_models_solved_together_give_each_ones_own_solution() -> None:
    """`solve_box` solves a box for the camera and its other heights at once (one projection per model); each
    model's bases, box residuals and lean are what solving for it alone gives, and at the true count the camera's own
    model fits the mask box to its pixel rounding, the base within half a millimetre."""
    camera = tilted_camera(tilt_deg=30.0, size=(3840, 2160))
    model = exact_table_camera(camera)
    others = model.at_heights([1000.0, 1800.0])
    box = mask_box(camera, base=(60.0, -40.0), count=9)
    together = solve_box(model, box, diameter_mm=CHIPSET.diameter_mm, thickness_mm=THICKNESS, alternatives=others)
    for index, alone in enumerate((model, *others)):
        one = solve_box(alone, box, diameter_mm=CHIPSET.diameter_mm, thickness_mm=THICKNESS)
        np.testing.assert_allclose(together.centres[index], one.centres[0], atol=1e-6)
        np.testing.assert_allclose(together.residuals[index], one.residuals[0], atol=1e-6)
        np.testing.assert_allclose(together.lean_px[index], one.lean_px[0], atol=1e-9)
    assert np.abs(together.residuals[0, 8]).max() < 0.6  # the mask box rounds each side to the pixel
    np.testing.assert_allclose(together.centres[0, 8], (60.0, -40.0), atol=0.5)
