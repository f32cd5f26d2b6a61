"""A frame's stacks read together: where the camera's height was assumed, they tell it (`ChipRecogniser.read_frame`,
`frame_heights`), and a box's evidence at any sigma comes from one solve (`solve_box`)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from floorman.vision.chips import HEIGHT_VETO, HOLD_COLOUR, ChipRecogniser, frame_heights
from floorman.vision.chips_colour import ColourMatch
from floorman.vision.chips_geometry import (
    BOX_SIGMA_PX,
    HOLD_SHARE,
    count_choice,
    count_posterior,
    fit_stack,
    marginalise,
    solve_box,
)
from floorman.vision.detect_cli import read_chips
from floorman.vision.detections import Detections
from tests.vision.test_chips import CHIPSET, exact_table_camera
from tests.vision.test_chips_count import THICKNESS, mask_box, straight_down

STACKS = (((420.0, 230.0), 15), ((-400.0, 210.0), 9), ((380.0, -220.0), 12), ((-360.0, -240.0), 6),
          ((560.0, 120.0), 18))


def test_the_frames_stacks_tell_an_assumed_camera_height() -> None:
    """Straight down at 1000 mm, the calibration assumes 1400 mm: read alone, tall stacks far from the centre are
    counted over every plausible height; read together, the frame's stacks agree on one and every count is right,
    no surer than read alone."""
    camera = straight_down(1000.0, hfov=70.0)
    assumed = exact_table_camera(camera)
    recogniser = ChipRecogniser(CHIPSET, camera=assumed, box_sigma_px=BOX_SIGMA_PX, refine=False)
    boxes = [mask_box(camera, base=base, count=count) for base, count in STACKS]
    image = np.full((camera.height, camera.width, 3), 60, dtype=np.uint8)
    alone = [recogniser.read(image, box) for box in boxes]
    together = recogniser.read_frame(image, boxes)
    assert [r.count for r in together] == [count for _, count in STACKS]
    assert [r.count for r in alone] != [count for _, count in STACKS]
    for lone, read in zip(alone, together, strict=True):
        if lone.count == read.count:
            assert read.count_confidence <= lone.count_confidence + 1e-9
    off = ChipRecogniser(CHIPSET, camera=assumed, box_sigma_px=BOX_SIGMA_PX, refine=False, height_from_frame=False)
    assert [r.count for r in off.read_frame(image, boxes)] == [r.count for r in alone]
    evidence = [recogniser.evidence(image, box) for box in boxes]
    weights = frame_heights([e.log_likelihood for e in evidence], log_prior=recogniser.log_prior)
    heights = [float(assumed.eye[2])] + [float(c.eye[2]) for c in recogniser.alternatives]
    votes = [round(heights[int(np.argmax(w))]) for w in weights if w is not None]
    assert len(votes) == len(boxes) and votes.count(1000) >= len(votes) - 1


def test_stacks_at_rest_count_in_the_frames_height() -> None:
    """A stack read after the others (their evidence given as context) is read as it is with them."""
    camera = straight_down(1000.0, hfov=70.0)
    recogniser = ChipRecogniser(CHIPSET, camera=exact_table_camera(camera), box_sigma_px=BOX_SIGMA_PX, refine=False)
    boxes = [mask_box(camera, base=base, count=count) for base, count in STACKS]
    image = np.full((camera.height, camera.width, 3), 60, dtype=np.uint8)
    context = [recogniser.evidence(image, box) for box in boxes[1:]]
    late = recogniser.read_frame(image, boxes[:1], context=context)[0]
    assert late == recogniser.read_frame(image, boxes)[0]


def test_frame_heights_leave_a_stacks_own_evidence_out_and_cap_each_say() -> None:
    prior = np.zeros(3)
    likes_second = np.array([[-9.0, -9.0, -9.0], [0.0, 0.0, 0.0]])  # (models, counts)
    likes_first = np.array([[0.0, 0.0, 0.0], [-50.0, -50.0, -50.0]])
    weights = frame_heights([likes_second, likes_second, likes_first], log_prior=prior)
    first, second, third = (np.asarray(w) for w in weights)
    assert first[1] - first[0] == pytest.approx(0.0)  # the other two say as much each way (9 and 50, capped)
    assert np.array_equal(first, second)
    assert third[1] - third[0] == pytest.approx(2 * HEIGHT_VETO)
    assert frame_heights([likes_second[:1], None], log_prior=prior) == [None, None]  # one model: nothing to weigh
    assert frame_heights([None, None]) == [None, None]


def test_a_box_solved_once_gives_its_evidence_at_any_sigma() -> None:
    camera = straight_down(1200.0, hfov=70.0)
    model = exact_table_camera(camera)
    box = mask_box(camera, base=(400.0, 200.0), count=7)
    alternatives = model.at_heights([1000.0, 1800.0])
    solution = solve_box(model, box, diameter_mm=39.0, thickness_mm=THICKNESS, alternatives=alternatives)
    for sigma in (BOX_SIGMA_PX, 2.0):
        fit = fit_stack(model, box, diameter_mm=39.0, thickness_mm=THICKNESS, box_sigma_px=sigma,
                        alternatives=alternatives)
        logs = solution.log_likelihood(sigma)
        assert logs.shape == (3, 30)
        assert np.allclose(marginalise(logs), fit.log_likelihood)
        assert solution.fit(logs) == fit
    with pytest.raises(ValueError, match="box_sigma_px"):
        solution.log_likelihood(0.0)
    with pytest.raises(ValueError, match="expected 3 model weights, got 2"):
        marginalise(solution.log_likelihood(1.0), np.zeros(2))


def test_floorman_detect_reads_a_frames_chip_boxes_together() -> None:
    camera = straight_down(1000.0, hfov=70.0)
    recogniser = ChipRecogniser(CHIPSET, camera=exact_table_camera(camera), box_sigma_px=BOX_SIGMA_PX, refine=False)
    boxes = [mask_box(camera, base=base, count=count) for base, count in STACKS]
    image = np.full((camera.height, camera.width, 3), 60, dtype=np.uint8)
    xyxy = np.array([boxes[0], (10.0, 10.0, 60.0, 90.0), *boxes[1:], (5.0, 5.0, 6.0, 6.0)], dtype=np.float32)
    class_id = np.array([2, 0] + [2] * (len(boxes) - 1) + [2])
    detections = Detections(xyxy=xyxy, confidence=np.ones(len(xyxy), dtype=np.float32), class_id=class_id)
    readings = read_chips(image, detections, names={0: "card_face", 2: "chip"}, recogniser=recogniser)
    assert sorted(readings) == [0, *range(2, len(boxes) + 1)]  # not the card, not the 1-pixel box
    expected = recogniser.read_frame(image, [tuple(float(v) for v in xyxy[i]) for i in sorted(readings)])
    assert [readings[i] for i in sorted(readings)] == expected
    assert [readings[i].count for i in sorted(readings)] == [count for _, count in STACKS]


def test_a_previous_count_stays_while_the_evidence_leaves_it_open() -> None:
    logs = np.log(np.array([0.05, 0.5, 0.3, 0.15]))  # counts 1..4
    assert count_choice(logs) == (1, pytest.approx(0.5))
    assert count_choice(logs, previous=2) == (2, pytest.approx(0.3))  # 0.3 >= HOLD_SHARE * 0.5: it stays
    assert count_choice(logs, previous=0)[0] == 1  # 0.05 < HOLD_SHARE * 0.5: the evidence decides
    assert count_choice(logs, previous=9)[0] == 1  # no such count


def test_a_stack_read_again_keeps_its_previous_count_where_the_evidence_leaves_it_open() -> None:
    camera = straight_down(1400.0, hfov=70.0)
    recogniser = ChipRecogniser(CHIPSET, camera=exact_table_camera(camera), box_sigma_px=BOX_SIGMA_PX, refine=False)
    image = np.full((camera.height, camera.width, 3), 60, dtype=np.uint8)
    evidence = recogniser.evidence(image, mask_box(camera, base=(60.0, 40.0), count=8))  # near the centre: unsure
    first = recogniser.read_evidence(image, [evidence])[0]
    assert evidence.log_likelihood is not None
    posterior = count_posterior(marginalise(evidence.log_likelihood), recogniser.log_prior)
    held = [k + 1 for k in range(len(posterior)) if HOLD_SHARE * posterior.max() <= posterior[k]]
    dropped = [k + 1 for k in range(len(posterior)) if posterior[k] < HOLD_SHARE * posterior.max()]
    assert len(held) >= 2 and dropped
    for count in (*held, dropped[0]):
        previous = replace(first, denominations=(first.top,) * count)
        again = recogniser.read_evidence(image, [evidence], previous=[previous])[0]
        assert again.count == (count if count in held else first.count)
        assert again.count_confidence <= first.count_confidence + 1e-9
    assert recogniser.read_evidence(image, [evidence], previous=[None]) == [first]
    with pytest.raises(ValueError, match="one previous reading"):
        recogniser.read_evidence(image, [evidence], previous=[])


def test_a_stack_read_again_keeps_its_last_top_value_where_the_colours_leave_it_open(
        monkeypatch: pytest.MonkeyPatch) -> None:
    camera = straight_down(1400.0, hfov=70.0)
    recogniser = ChipRecogniser(CHIPSET, camera=exact_table_camera(camera), box_sigma_px=BOX_SIGMA_PX, refine=False)
    image = np.full((camera.height, camera.width, 3), 60, dtype=np.uint8)
    evidence = recogniser.evidence(image, mask_box(camera, base=(300.0, 200.0), count=1))
    errors = {25: 0.10, 100: 0.10 + HOLD_COLOUR / 2.0, 500: 0.5, 1000: 0.6, 5000: 0.7}
    match = ColourMatch(value=25, confidence=0.2, error=0.10, illuminant=np.ones(3), errors=errors)

    def matched(*_: object, **__: object) -> ColourMatch:
        return match

    monkeypatch.setattr(recogniser, "_match", matched)
    first = recogniser.read_evidence(image, [evidence])[0]
    assert first.denominations == (25,)
    for last, expected in ((100, 100), (500, 25)):
        previous = replace(first, denominations=(last,))
        assert recogniser.read_evidence(image, [evidence], previous=[previous])[0].top == expected
