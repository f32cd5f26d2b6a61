"""The learned box-side reader: a detector's chip box's sides read again at the image's own pixels."""

from __future__ import annotations

import numpy as np
import pytest

from floorman.core.chip_box_strips import STRIP_ALONG, STRIP_DEPTH_PX
from floorman.vision.chips_box import LOOSE_SIDE_SIGMA_PX, refine_box
from floorman.vision.chips_box_net import MAX_SHIFT_PX, MODEL_PATH, ChipBoxNet, LearnedSides, default_box_net
from floorman.vision.chips_geometry import TableCamera


def shipped() -> ChipBoxNet:
    net = default_box_net()
    assert net is not None, f"the shipped box-side reader {MODEL_PATH} is missing"
    return net


def test_the_reader_reads_any_number_of_strips() -> None:
    net = shipped()
    offsets, sigmas = net.offsets([], [])
    assert offsets.shape == sigmas.shape == (0,)
    strips = [np.full((STRIP_ALONG, 2 * STRIP_DEPTH_PX, 3), 90, np.uint8)] * 3
    offsets, sigmas = net.offsets(strips, [np.zeros(2, np.float32)] * 3)
    assert offsets.shape == sigmas.shape == (3,) and (sigmas > 0).all()
    with pytest.raises(ValueError, match="as many scalars"):
        net.offsets(strips, [np.zeros(2, np.float32)])


def test_learned_sides_replace_the_detectors_where_surer_and_edges_still_average_in() -> None:
    image = np.full((120, 160, 3), 60, np.uint8)  # no edges: only the box and the learned sides
    outline = np.array([[40.0, 30.0], [100.0, 30.0], [100.0, 80.0], [40.0, 80.0]])
    box = (40.0, 30.0, 100.0, 80.0)
    learned = LearnedSides((38.0, 30.5, 101.0, 80.0), (0.5, 0.5, 3.0, 0.5))
    refined = refine_box(image, box, outline=outline, detector_sigma=1.7, learned=learned)
    assert refined.box[0] == pytest.approx(38.0) and refined.sigma_px[0] == pytest.approx(0.5)
    assert refined.box[1] == pytest.approx(30.5)
    assert refined.box[2] == pytest.approx(100.0) and refined.sigma_px[2] == pytest.approx(1.7)  # less sure: kept
    assert refine_box(image, box, outline=outline, detector_sigma=1.7).box == box
    # a side read LOOSE_SIDE_SIGMA_PX or more off (the box cut there): the detector's place, the reader's spread
    cut = LearnedSides((38.0, 30.5, 101.0, 96.0), (0.5, 0.5, 3.0, LOOSE_SIDE_SIGMA_PX + 5.0))
    refined = refine_box(image, box, outline=outline, detector_sigma=1.7, learned=cut)
    assert refined.box[3] == pytest.approx(80.0) and refined.sigma_px[3] == pytest.approx(LOOSE_SIDE_SIGMA_PX + 5.0)


def test_on_rendered_seats_the_learned_sides_lie_nearer_the_true_ones_than_the_detectors() -> None:
    from floorman.datasets.effects import Effects
    from floorman.datasets.random_scene import SceneStyle, random_sample
    from floorman.datasets.render import Renderer
    from floorman.datasets.render_dataset import TRAINING_OPTIONS
    from floorman.datasets.scene import DetectorClass
    from floorman.datasets.seat_chips import seat_chips
    from floorman.vision.detect_cli import default_model
    from floorman.vision.detector import OnnxDetectorConfig, box_iou, create_detector

    detector = create_detector(OnnxDetectorConfig(model=default_model()))
    net = shipped()
    detector_errors: list[float] = []
    learned_errors: list[float] = []
    for frame in range(6):  # frames until 30 stacks in sight were boxed (a frame's may lie under hands and cards)
        rng = np.random.default_rng(np.random.SeedSequence(60901, spawn_key=(frame,)))  # this test's seed alone
        scene, camera = random_sample(rng, size=(3840, 2160), style=SceneStyle.CASINO)
        scene.chips = seat_chips(scene, rng)
        result = Renderer(camera, options=TRAINING_OPTIONS).render(scene, effects=Effects.random(rng), rng=rng)
        truth = np.array([o.box for o in result.objects if o.cls == DetectorClass.CHIP and o.chips
                          and o.visible_fraction >= 0.9], dtype=np.float64).reshape(-1, 4)
        found = detector.detect(result.image)
        boxes = np.asarray(found.xyxy[found.class_id == DetectorClass.CHIP.value], dtype=np.float64)
        table = TableCamera.from_homography(camera.table_homography(), image_size=(camera.width, camera.height),
                                            height_mm=float(camera.eye[2]))
        for box in boxes if len(truth) else ():
            overlap = box_iou(box, truth)[0]
            if overlap.max() < 0.5:
                continue
            true = truth[int(np.argmax(overlap))]
            learned = net.sides(result.image, (box[0], box[1], box[2], box[3]), table)
            assert all(abs(a - b) <= MAX_SHIFT_PX + 1e-6 for a, b in zip(learned.box, box, strict=True))
            detector_errors.extend(np.abs(box - true).tolist())
            learned_errors.extend(np.abs(np.array(learned.box) - true).tolist())
        if len(detector_errors) >= 4 * 30:
            break
    assert len(detector_errors) >= 4 * 30
    assert np.mean(learned_errors) < 0.9 * np.mean(detector_errors)
    assert np.mean(np.array(learned_errors) > 2.0) < np.mean(np.array(detector_errors) > 2.0)
