"""The renderer: labels and truth must match the rendered pixels."""

from __future__ import annotations

import math
from dataclasses import replace

import cv2
import numpy as np
import pytest

from floorman.core.cards import Card
from floorman.core.chips import ChipSet
from floorman.core.geometry import apply_homography
from floorman.core.layout import TableLayout
from floorman.datasets import render as render_module
from floorman.datasets import render_objects
from floorman.datasets.camera import Camera
from floorman.datasets.effects import Effects
from floorman.datasets.random_scene import SceneStyle, random_camera, random_sample, random_scene
from floorman.datasets.render import ObjectTruth, Renderer, RenderResult
from floorman.datasets.render_draw import Canvas
from floorman.datasets.render_hands import hand_centre
from floorman.datasets.render_objects import Drawn, draw_chip_stack
from floorman.datasets.render_zones import zone_names_at
from floorman.datasets.scene import (
    CardObject,
    ChipStack,
    DetectorClass,
    HandObject,
    HandPose,
    Lighting,
    Scene,
)
from floorman.datasets.textures import BACK_DESIGNS, card_face
from floorman.datasets.yolo import is_labelled, yolo_labels

LAYOUT = TableLayout.default()
CHIPS = ChipSet.default()
FLAT_LIGHT = Lighting(colour_temperature_k=4500.0, intensity=1.0, gradient_strength=0.0, glare=(),
                      shadow_strength=0.0)


def empty_scene() -> Scene:
    return Scene(layout=LAYOUT, chipset=CHIPS, lighting=FLAT_LIGHT)


def down_camera(*, size: tuple[int, int] = (480, 320), height: float = 900.0, roll: float = 0.0,
                target: tuple[float, float] = (0.0, 0.0)) -> Camera:
    return Camera.look_at(eye=(target[0], target[1], height), target=(target[0], target[1], 0.0), size=size,
                          hfov_deg=40.0, roll_deg=roll)


def truth_by_id(result: RenderResult) -> dict[int, ObjectTruth]:
    return {obj.id: obj for obj in result.objects}


def mask_box(mask: np.ndarray, object_id: int) -> tuple[int, int, int, int] | None:
    ys, xs = np.nonzero(mask == object_id)
    if xs.size == 0:
        return None
    return int(xs.min()), int(ys.min()), int(xs.max()) + 1, int(ys.max()) + 1


def test_straight_down_camera_puts_a_card_where_the_homography_says() -> None:
    camera = down_camera(roll=23.0)
    scene = empty_scene()
    points = [(-60.0, 40.0), (75.0, -30.0)]
    scene.cards = [CardObject(id=i + 1, card=Card.parse("7C"), face_up=True, x=x, y=y, angle_deg=31.0 * i)
                   for i, (x, y) in enumerate(points)]
    result = Renderer(camera).render(scene, rng=np.random.default_rng(0))
    expected = apply_homography(camera.table_homography(), np.asarray(points))
    for i in range(len(points)):
        ys, xs = np.nonzero(result.instance_mask == i + 1)
        centroid = np.array([xs.mean(), ys.mean()])
        assert np.linalg.norm(centroid - expected[i]) < 0.5


def test_every_label_is_the_box_of_its_pixels() -> None:
    checked = 0
    for seed in range(4):
        rng = np.random.default_rng(seed)
        scene, camera = random_sample(rng, size=(320, 224))
        result = Renderer(camera).render(scene, effects=Effects.random(rng), rng=rng)
        labels = yolo_labels(result)
        labelled = [obj for obj in result.objects if is_labelled(obj)]
        assert len(labels) == len(labelled)
        for label, obj in zip(labels, labelled, strict=True):
            box = mask_box(result.instance_mask, obj.id)
            assert box is not None
            x0 = (label.cx - label.w / 2) * 320
            y0 = (label.cy - label.h / 2) * 224
            x1 = (label.cx + label.w / 2) * 320
            y1 = (label.cy + label.h / 2) * 224
            assert np.allclose((x0, y0, x1, y1), box, atol=1.0), (obj, box)
            assert label.cls == int(obj.cls)
            checked += 1
        for obj in result.objects:  # nothing hidden gets a label, and visible pixels are counted right
            visible = int(np.count_nonzero(result.instance_mask == obj.id))
            assert (visible == 0) == (obj.box == (0.0, 0.0, 0.0, 0.0))
    assert checked > 10


def test_face_up_card_pixels_show_its_face() -> None:
    camera = Camera.look_at(eye=(0.0, -500.0, 700.0), target=(0.0, 0.0, 0.0), size=(480, 360), hfov_deg=35.0)
    scene = empty_scene()
    scene.cards = [CardObject(id=5, card=Card.parse("QH"), face_up=True, x=10.0, y=5.0, angle_deg=57.0)]
    result = Renderer(camera).render(scene, rng=np.random.default_rng(0))
    truth = truth_by_id(result)[5]
    assert truth.corners_px is not None
    # Rectify the rendered card back to the upright card frame and compare with the face texture.
    ppm = 4.0
    w, h = scene.cards[0].size_mm
    size = (round(w * ppm), round(h * ppm))
    src = np.asarray(truth.corners_px, dtype=np.float32)
    dst = np.array([[0, 0], [size[0], 0], [size[0], size[1]], [0, size[1]]], dtype=np.float32)
    rectified = cv2.warpPerspective(result.image, cv2.getPerspectiveTransform(src, dst), size)
    inner = (slice(12, size[1] - 12), slice(12, size[0] - 12))

    def correlation(card: str) -> float:
        face = card_face(Card.parse(card), design=0, px_per_mm=ppm)[:, :, :3]
        face = cv2.resize(face, size, interpolation=cv2.INTER_AREA)
        a = cv2.cvtColor(rectified, cv2.COLOR_BGR2GRAY)[inner].astype(np.float64).ravel()
        b = cv2.cvtColor(face, cv2.COLOR_BGR2GRAY)[inner].astype(np.float64).ravel()
        return float(np.corrcoef(a, b)[0, 1])

    right = correlation("QH")
    assert right > 0.85
    assert right > correlation("3S") + 0.2
    # The texture's top-left corner (the index) is the truth's first corner.
    flipped = cv2.flip(rectified, 1)
    face = cv2.resize(card_face(Card.parse("QH"), design=0, px_per_mm=ppm)[:, :, :3], size)
    assert np.abs(rectified[inner].astype(int) - face[inner]).mean() < np.abs(flipped[inner].astype(int)
                                                                               - face[inner]).mean()


def test_a_card_under_another_card_is_hidden_and_unlabelled() -> None:
    scene = empty_scene()
    scene.cards = [CardObject(id=1, card=Card.parse("AS"), face_up=True, x=0.0, y=0.0, angle_deg=10.0),
                   CardObject(id=2, card=Card.parse("KD"), face_up=False, x=0.0, y=0.0, angle_deg=10.0, z=0.3),
                   CardObject(id=3, card=Card.parse("2C"), face_up=True, x=90.0, y=0.0)]
    result = Renderer(down_camera()).render(scene, rng=np.random.default_rng(0))
    truth = truth_by_id(result)
    assert truth[1].visible_fraction < 0.02
    assert not is_labelled(truth[1])
    assert truth[1].card == "AS"
    assert truth[2].visible_fraction > 0.98 and is_labelled(truth[2])
    assert truth[2].cls == DetectorClass.CARD_BACK and truth[2].card == "KD"
    assert len(yolo_labels(result)) == 2


def test_a_chip_under_a_hand_is_hidden() -> None:
    hand = HandObject(id=9, elbow=(-380.0, 0.0, 220.0), wrist=(-120.0, 0.0, 70.0), pose=HandPose.FLAT)
    x, y = hand_centre(hand)
    scene = empty_scene()
    scene.chips = [ChipStack(id=4, x=x, y=y, chips=(100,)), ChipStack(id=5, x=x + 150.0, y=y + 80.0, chips=(25,))]
    scene.hands = [hand]
    result = Renderer(down_camera(target=(x - 120.0, y), height=1200.0)).render(scene, rng=np.random.default_rng(0))
    truth = truth_by_id(result)
    assert truth[4].visible_fraction < 0.05 and not is_labelled(truth[4])
    assert truth[5].visible_fraction > 0.95 and is_labelled(truth[5])
    assert truth[9].cls == DetectorClass.HAND and is_labelled(truth[9])
    # The upper arm, drawn past the elbow and off the image, is not part of the hand object.
    assert truth[9].visible_fraction > 0.85


def test_an_object_half_off_the_image_counts_as_half_visible() -> None:
    camera = down_camera()
    scene = empty_scene()
    # Put a card's centre on the image's left edge.
    edge_mm = apply_homography(np.linalg.inv(camera.table_homography()), np.array([[0.0, 160.0]]))[0]
    scene.cards = [CardObject(id=1, card=Card.parse("9S"), face_up=True, x=float(edge_mm[0]), y=float(edge_mm[1]),
                              angle_deg=0.0)]
    result = Renderer(camera).render(scene, rng=np.random.default_rng(0))
    assert result.objects[0].visible_fraction == pytest.approx(0.5, abs=0.05)


def test_a_tilted_camera_sees_the_side_of_a_stack() -> None:
    scene = empty_scene()
    scene.chips = [ChipStack(id=1, x=0.0, y=0.0, chips=(500,) * 20), ChipStack(id=2, x=120.0, y=0.0, chips=(500,))]
    tilted = Camera.look_at(eye=(60.0, -700.0, 1000.0), target=(60.0, 0.0, 0.0), size=(480, 360), hfov_deg=30.0)
    down = down_camera(target=(60.0, 0.0))
    heights = {}
    for name, camera in (("tilted", tilted), ("down", down)):
        truth = truth_by_id(Renderer(camera).render(scene, rng=np.random.default_rng(0)))
        heights[name] = [(truth[i].box[3] - truth[i].box[1]) / (truth[i].box[2] - truth[i].box[0]) for i in (1, 2)]
    assert heights["tilted"][0] > heights["tilted"][1] * 1.4  # the tall stack's side shows
    assert heights["down"][0] == pytest.approx(heights["down"][1], abs=0.15)


def test_effects_change_pixels_never_the_mask() -> None:
    rng = np.random.default_rng(3)
    scene = random_scene(rng, style=SceneStyle.CASINO)
    camera = random_camera(scene.layout, rng, size=(320, 240))
    renderer = Renderer(camera)
    plain = renderer.render(scene, rng=np.random.default_rng(1))
    same = renderer.render(scene, effects=Effects(), rng=np.random.default_rng(2))
    effects = Effects(colour_temperature_k=3200.0, intensity=1.2, gradient_strength=0.3, focus_blur_sigma_px=1.5,
                      motion_blur_px=5.0, noise_sigma=4.0, shot_noise=0.5, jpeg_quality=60)
    changed = renderer.render(scene, effects=effects, rng=np.random.default_rng(1))
    assert np.array_equal(plain.image, same.image)
    assert np.array_equal(plain.instance_mask, changed.instance_mask)
    assert plain.objects == changed.objects
    assert np.abs(plain.image.astype(int) - changed.image).mean() > 5.0


def test_same_seed_same_image() -> None:
    images = []
    for _ in range(2):
        rng = np.random.default_rng(11)
        scene, camera = random_sample(rng, size=(256, 192))
        result = Renderer(camera).render(scene, effects=Effects.random(rng), rng=rng)
        images.append((result.image, yolo_labels(result)))
    assert np.array_equal(images[0][0], images[1][0])
    assert images[0][1] == images[1][1]


def test_home_style_matches_the_held_out_photos() -> None:
    """Straight down, close (a card 150-250 px wide at 3000 px), light wood, loose single chips."""
    for seed in range(3):
        rng = np.random.default_rng(seed)
        scene = random_scene(rng, style=SceneStyle.HOME)
        assert scene.appearance.surface == "wood"
        assert all(stack.count <= 3 for stack in scene.chips)
        for card in scene.cards:  # red or pink backs, like the photographed decks
            r, _, b = BACK_DESIGNS[card.back].ink_rgb
            assert r > 140 and r > b + 20
    rng = np.random.default_rng(5)
    for _ in range(20):
        scene, camera = random_sample(rng)
        if camera.width == 3000 and scene.appearance.surface == "wood" and camera.tilt_deg < 4.0:
            width_px = scene.cards[0].size_mm[0] * camera.pixels_per_mm(scene.cards[0].x, scene.cards[0].y)
            assert 140.0 < width_px < 260.0
            return
    pytest.fail("no home-style sample in 20 draws")


def test_random_camera_stays_within_the_brief() -> None:
    rng = np.random.default_rng(0)
    for _ in range(30):
        camera = random_camera(LAYOUT, rng)
        assert camera.tilt_deg <= 35.5
        assert 1000.0 <= camera.eye[2] <= 1800.0
        assert camera.width <= 3840 and camera.height <= 3840
        assert not math.isnan(camera.fx)


def test_cached_still_layer_renders_the_same_as_a_fresh_renderer(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(8)
    scene = random_scene(rng, style=SceneStyle.CASINO)
    camera = random_camera(scene.layout, rng, size=(320, 240))
    hand = HandObject(id=999, elbow=(0.0, -900.0, 260.0), wrist=(0.0, -500.0, 80.0))
    stack = ChipStack(id=998, x=40.0, y=-200.0, chips=(100, 100, 500))
    calls: list[int] = []

    def counting(canvas: Canvas, camera: Camera, stack: ChipStack, *, chipset: ChipSet,
                 lighting: Lighting) -> Drawn | None:
        calls.append(1)
        return draw_chip_stack(canvas, camera, stack, chipset=chipset, lighting=lighting)

    monkeypatch.setattr(render_module, "draw_chip_stack", counting)
    renderer = Renderer(camera)
    drawn_per_frame = []
    for frame in range(6):
        scene.hands = [replace(hand, wrist=(10.0 * frame, -500.0 + 40.0 * frame, 80.0))]
        scene.chips = [*[c for c in scene.chips if c.id != 998], replace(stack, x=40.0 + 30.0 * (frame == 3))]
        calls.clear()
        cached = renderer.render(scene, rng=np.random.default_rng(frame))
        drawn_per_frame.append(len(calls))
        fresh = Renderer(camera).render(scene, rng=np.random.default_rng(frame))
        assert np.array_equal(cached.image, fresh.image)
        assert np.array_equal(cached.instance_mask, fresh.instance_mask)
        assert cached.objects == fresh.objects
    # Frames 2 and 5 reuse the still layer (no stack redrawn); frame 3 moved a stack, frame 4 moved it back.
    assert drawn_per_frame[2] == drawn_per_frame[5] == 0
    assert drawn_per_frame[3] == drawn_per_frame[4] == len(scene.chips)


def test_zone_lookup_agrees_with_the_layout() -> None:
    points = np.random.default_rng(0).uniform((-1400.0, -750.0), (1400.0, 750.0), size=(400, 2))
    expected = LAYOUT.zone_names_at(points)
    assert zone_names_at(LAYOUT, [(float(x), float(y)) for x, y in points]) == expected
    assert len({name for name in expected if name}) > 20


def _spot_classes(image: np.ndarray, camera: Camera, points: np.ndarray) -> np.ndarray:
    """Whether each table point (N, 3) shows a white edge spot (brighter than the middle of the samples' range)."""
    px, _ = camera.project(points)
    grey = cv2.cvtColor(image, cv2.COLOR_BGR2GRAY).astype(np.float64)
    rows, cols = np.rint(px[:, 1]).astype(int), np.rint(px[:, 0]).astype(int)
    values = grey[rows, cols]
    return values > (values.min() + values.max()) / 2.0


def _facing_angles(camera: Camera, centre: tuple[float, float], *, count: int) -> np.ndarray:
    """Table angles round a stack on the side facing the camera (within 60 degrees of it)."""
    facing = math.atan2(camera.eye[1] - centre[1], camera.eye[0] - centre[0])
    return facing + np.radians(np.linspace(-60.0, 60.0, count))


def test_a_chips_edge_spots_run_from_its_top_down_its_side() -> None:
    # A chip turned half a spot period: the top face's spots and the side's must still meet (until session 45 the
    # side was drawn unturned, its spots between the top's).
    scene = empty_scene()
    scene.chips = [ChipStack(id=1, x=0.0, y=0.0, chips=(500,), angle_deg=22.5)]
    camera = Camera.look_at(eye=(0.0, -250.0, 300.0), target=(0.0, 0.0, 0.0), size=(800, 600), hfov_deg=30.0)
    image = Renderer(camera).render(scene, rng=np.random.default_rng(0)).image
    r, t = CHIPS.diameter_mm / 2.0, CHIPS.thickness_mm
    angles = _facing_angles(camera, (0.0, 0.0), count=61)
    rim = np.stack([0.9 * r * np.cos(angles), 0.9 * r * np.sin(angles), np.full_like(angles, t)], axis=1)
    side = np.stack([r * np.cos(angles), r * np.sin(angles), np.full_like(angles, t / 2.0)], axis=1)
    top_spots, side_spots = _spot_classes(image, camera, rim), _spot_classes(image, camera, side)
    assert 0.2 < top_spots.mean() < 0.8  # spots and body both sampled
    assert np.mean(top_spots == side_spots) >= 0.85


def test_a_stacks_chips_lie_at_their_own_turns() -> None:
    # Chips stacked at random turns: their edge spots do not line up into stripes down the side.
    stack = ChipStack(id=7, x=0.0, y=0.0, chips=(500,) * 8, angle_deg=10.0)
    turns = render_objects.chip_turns_deg(stack)
    assert turns[0] == 10.0 and len(set(np.round(turns % 360.0, 3))) == 8
    assert np.array_equal(turns, render_objects.chip_turns_deg(replace(stack, x=50.0)))  # the same in every frame
    scene = empty_scene()
    scene.chips = [stack]
    camera = Camera.look_at(eye=(0.0, -250.0, 300.0), target=(0.0, 0.0, 10.0), size=(800, 600), hfov_deg=30.0)
    image = Renderer(camera).render(scene, rng=np.random.default_rng(0)).image
    r, t = CHIPS.diameter_mm / 2.0, CHIPS.thickness_mm
    angles = _facing_angles(camera, (0.0, 0.0), count=25)
    columns = np.array([[[r * math.cos(a), r * math.sin(a), (k + 0.5) * t] for k in range(8)] for a in angles])
    spots = _spot_classes(image, camera, columns.reshape(-1, 3)).reshape(len(angles), 8)  # one threshold for all
    assert 0.2 < spots.mean() < 0.8
    mixed = np.sum((spots.sum(axis=1) > 0) & (spots.sum(axis=1) < 8))  # angles where some chips show a spot, not all
    assert mixed >= len(angles) // 2
