"""A detector's chip box with its sides found again in the image (`chips_box`)."""

from __future__ import annotations

import numpy as np
import pytest

from floorman.vision.chips import DETECTOR_BOX_SIGMA_PX, ChipRecogniser
from floorman.vision.chips_box import (
    EDGE_TO_SIDE_PX,
    detector_sigma_px,
    felt_colour,
    measure_sides,
    refine_box,
    row_edges,
)
from floorman.vision.chips_geometry import count_posterior, fit_stack, solve_box, stack_outline
from tests.vision.test_chips import CHIPSET, Rendered, exact_table_camera, render_chips, tilted_camera
from tests.vision.test_chips_count import mask_box
from tests.vision.test_chips_refine import LOOSE, STACKS

RADIUS, THICKNESS = CHIPSET.diameter_mm / 2.0, CHIPSET.thickness_mm
FELT = np.array([40.0, 110.0, 30.0])
CHIP = np.array([200.0, 60.0, 40.0])


@pytest.fixture(scope="module")
def rendered() -> Rendered:
    return render_chips(STACKS, camera=tilted_camera(tilt_deg=20.0, size=(960, 640)), seed=94303)


@pytest.mark.parametrize("edge", [3.0, 3.3, 4.5, 4.8, 5.49])
def test_row_edges_find_an_antialiased_edge_to_a_fraction_of_a_pixel(edge: float) -> None:
    """A chip colour up to `edge` (pixel-centre coordinates: pixel i spans i - 0.5 .. i + 0.5), felt beyond, the
    edge pixel a mix of both by its cover."""
    cover = np.clip(edge - (np.arange(12) - 0.5), 0.0, 1.0)
    row = cover[:, None] * CHIP + (1.0 - cover[:, None]) * FELT
    found = row_edges(row[None, :, :], FELT)
    assert found[0] == pytest.approx(edge, abs=0.02)


def test_row_edges_refuse_a_row_that_ends_on_no_felt() -> None:
    row = np.tile(CHIP, (12, 1))
    row[:4] = FELT
    assert np.isnan(row_edges(row[None, :, :], FELT)[0])


def test_refined_sides_lie_nearer_the_mask_box_than_a_loose_detector_box(rendered: Rendered) -> None:
    model = exact_table_camera(rendered.camera)
    sigma = detector_sigma_px((960, 640))
    loose_errors, refined_errors, found = [], [], 0
    for index, truth in enumerate(rendered.chips):
        shift = LOOSE[index % len(LOOSE)]  # 1 px a side, about the detector's spread here
        x1, y1, x2, y2 = (float(v) + s / 2.0 for v, s in zip(truth.box, shift, strict=True))
        box = (x1, y1, x2, y2)
        fit = fit_stack(model, box, diameter_mm=CHIPSET.diameter_mm, thickness_mm=THICKNESS, box_sigma_px=sigma)
        outline = stack_outline(model, fit, radius_mm=RADIUS, thickness_mm=THICKNESS)
        refined = refine_box(rendered.image, box, outline=outline, detector_sigma=sigma)
        found += refined.found
        loose_errors.extend(abs(a - b) for a, b in zip(box, truth.box, strict=True))
        refined_errors.extend(abs(a - b) for a, b in zip(refined.box, truth.box, strict=True))
        assert all(0 < s <= sigma for s in refined.sigma_px)
    assert found >= 3 * len(rendered.chips)  # most sides show felt beyond them here
    assert np.mean(refined_errors) < 0.7 * np.mean(loose_errors), (refined_errors, loose_errors)


def test_the_sides_of_an_exact_box_are_found_where_the_mask_puts_them(rendered: Rendered) -> None:
    model = exact_table_camera(rendered.camera)
    errors = []
    for truth in rendered.chips:
        fit = fit_stack(model, truth.box, diameter_mm=CHIPSET.diameter_mm, thickness_mm=THICKNESS)
        edges = measure_sides(rendered.image, truth.box,
                              outline=stack_outline(model, fit, radius_mm=RADIUS, thickness_mm=THICKNESS))
        errors.extend(edge + offset - side for edge, offset, side in zip(edges, EDGE_TO_SIDE_PX, truth.box,
                                                                          strict=True) if edge is not None)
    assert len(errors) >= 3 * len(rendered.chips)
    assert float(np.median(np.abs(errors))) < 0.6, errors


def test_a_blank_felt_gives_the_detectors_box_back() -> None:
    model = exact_table_camera(tilted_camera(tilt_deg=20.0, size=(960, 640)))
    felt = np.full((640, 960, 3), FELT.astype(np.uint8), dtype=np.uint8)
    box = (400.0, 300.0, 440.0, 345.0)
    fit = fit_stack(model, box, diameter_mm=CHIPSET.diameter_mm, thickness_mm=THICKNESS)
    refined = refine_box(felt, box, outline=stack_outline(model, fit, radius_mm=RADIUS, thickness_mm=THICKNESS),
                         detector_sigma=1.0)
    assert refined.found == 0
    assert refined.box == box and refined.sigma_px == (1.0,) * 4
    assert felt_colour(felt, box) == pytest.approx(FELT)


def test_a_box_at_the_border_has_no_side_found_there(rendered: Rendered) -> None:
    outline = np.array([[0.0, 10.0], [20.0, 10.0], [20.0, 30.0], [0.0, 30.0]])
    sides = measure_sides(rendered.image, (0.0, 10.0, 21.0, 31.0), outline=outline)
    assert sides[0] is None
    past = measure_sides(rendered.image, (-3.0, -4.0, 21.0, 31.0), outline=outline)  # a box reaching out of the image
    assert past[0] is None and past[1] is None


def test_the_detectors_spread_grows_with_the_frame() -> None:
    assert detector_sigma_px((1280, 720)) < detector_sigma_px((1920, 1080)) < detector_sigma_px((3840, 2160))
    assert detector_sigma_px((720, 1280)) == detector_sigma_px((1280, 720))
    with pytest.raises(ValueError, match="detector_sigma"):
        refine_box(np.zeros((10, 10, 3), dtype=np.uint8), (1.0, 1.0, 5.0, 5.0), outline=np.zeros((4, 2)),
                   detector_sigma=0.0)


def test_box_evidence_takes_a_spread_per_side() -> None:
    camera = tilted_camera(tilt_deg=20.0, size=(960, 640))
    model = exact_table_camera(camera)
    solution = solve_box(model, mask_box(camera, base=(30.0, -20.0), count=6), diameter_mm=CHIPSET.diameter_mm,
                         thickness_mm=THICKNESS)
    assert np.allclose(solution.log_likelihood(1.0), solution.log_likelihood([1.0] * 4))
    tight, loose = (count_posterior(solution.log_likelihood(sigma)[0])
                    for sigma in ([0.5] * 4, [0.5, 9.0, 0.5, 9.0]))
    assert np.argmax(tight) == 5
    assert loose.max() < tight.max() - 0.05  # sides taken as far off tell the counts apart less
    with pytest.raises(ValueError, match="box_sigma_px"):
        solution.log_likelihood([1.0, 0.0, 1.0, 1.0])


@pytest.mark.parametrize("box_net", [None, "default"])
def test_a_detector_box_is_solved_on_its_sides_found_again(rendered: Rendered, box_net: str | None) -> None:
    """The recogniser reads a detector's box (off by 1 px a side) on its sides as `refine_box` finds them: from the
    detector's sides, or (the shipped box-side reader) from the sides the reader puts them at."""
    model = exact_table_camera(rendered.camera)
    recogniser = ChipRecogniser(CHIPSET, camera=model, box_net=None if box_net is None else "default")
    assert (recogniser.box_net is None) == (box_net is None)
    moved = 0
    for index, truth in enumerate(rendered.chips):
        shift = LOOSE[index % len(LOOSE)]
        x1, y1, x2, y2 = (float(v) + s / 2.0 for v, s in zip(truth.box, shift, strict=True))
        evidence = recogniser.evidence(rendered.image, (x1, y1, x2, y2))
        assert evidence.solution is not None and evidence.box == (x1, y1, x2, y2)
        fit = fit_stack(model, (x1, y1, x2, y2), diameter_mm=CHIPSET.diameter_mm, thickness_mm=THICKNESS,
                        box_sigma_px=DETECTOR_BOX_SIGMA_PX, log_prior=recogniser.log_prior)
        refined = refine_box(rendered.image, (x1, y1, x2, y2),
                             outline=stack_outline(model, fit, radius_mm=RADIUS, thickness_mm=THICKNESS),
                             detector_sigma=detector_sigma_px((960, 640)),
                             learned=None if recogniser.box_net is None
                             else recogniser.box_net.sides(rendered.image, (x1, y1, x2, y2), model))
        solved = {name: solve_box(model, box, diameter_mm=CHIPSET.diameter_mm, thickness_mm=THICKNESS).centres[0]
                  for name, box in (("given", (x1, y1, x2, y2)), ("refined", refined.box))}
        assert np.allclose(evidence.solution.centres[0], solved["refined"])
        moved += not np.allclose(solved["given"], solved["refined"])
    assert moved == len(rendered.chips)
