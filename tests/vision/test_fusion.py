from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from floorman.core.chips import ChipSet
from floorman.core.layout import TableLayout
from floorman.core.table_state import SeenButton, SeenCard, SeenChips, SeenHand, TableState
from floorman.datasets.camera import Camera
from floorman.datasets.render import Renderer
from floorman.datasets.scene import ChipStack, DetectorClass, Lighting, Scene
from floorman.evaluation.states import state_from_dict, stored_dict
from floorman.vision.calibration import PointPair, calibrate_from_points
from floorman.vision.detections import Detections
from floorman.vision.fusion import FusionSettings, fuse_stacks, fuse_states, top_height
from floorman.vision.table_state import TableStateBuilder

CHIPSET = ChipSet.default()
COUNTS = 30
FACING = [(0.0, -900.0, 1700.0), (0.0, 900.0, 1700.0)]  # two cameras' lenses, facing each other over the table


def _likelihood(*likely: int) -> tuple[float, ...]:
    """Counts `likely` about equally likely, the others 12 log units less."""
    return tuple(0.0 if n in likely else -12.0 for n in range(1, COUNTS + 1))


def _stack(x: float, y: float, values: tuple[int, ...], confidence: float, *, likely: tuple[int, ...] = (),
           values_confidence: float = 0.9, zone: str | None = "bet_3") -> SeenChips:
    return SeenChips(box=(0.0, 0.0, 10.0, 10.0), confidence=0.9, position_mm=(x, y), zone=zone,
                     denominations=values, denomination_confidence=values_confidence, count_confidence=confidence,
                     count_log_likelihood=_likelihood(*likely) if likely else ())


def _state(camera: str, chips: tuple[SeenChips, ...] = (), cards: tuple[SeenCard, ...] = (),
           hands: tuple[SeenHand, ...] = (), button: SeenButton | None = None) -> TableState:
    return TableState(frame=7, t=1.5, camera_id=camera, cards=cards, chips=chips, hands=hands, button=button,
                      size=(1920, 1080), extra={"detect_ms": 10.0})


def test_one_stack_read_by_two_cameras_gets_the_count_both_leave_likely() -> None:
    a = _stack(100.0, 50.0, (100, 100, 100), 0.5, likely=(3, 4))  # the side barely shows: 3 or 4
    b = _stack(104.0, 47.0, (25, 100, 100, 100, 100), 0.5, likely=(4, 5))  # 4 or 5
    fused = fuse_stacks([a, b])
    assert fused.count == 4 and fused.count_confidence > 0.9
    assert fused.denominations == (100, 100, 100, 100) and fused.denomination_confidence == 0.0  # read by neither
    c = _stack(98.0, 52.0, (500, 100, 100, 100), 0.4, likely=(4,), values_confidence=0.7)
    fused = fuse_stacks([a, b, c])
    assert fused.denominations == (500, 100, 100, 100) and fused.denomination_confidence == 0.7
    assert fused.position_mm == (98.0, 52.0)  # the foot of the reading whose values are kept


def test_readings_without_likelihoods_give_the_surest_count() -> None:
    a = _stack(0.0, 0.0, (100, 100), 0.3)
    b = _stack(3.0, 0.0, (100, 100, 100), 0.85)
    assert fuse_stacks([a, b]) == b
    with pytest.raises(ValueError, match="at least one reading"):
        fuse_stacks([])


def test_states_fuse_by_place_on_the_felt() -> None:
    near_a = _stack(0.0, 0.0, (100, 100), 0.5, likely=(2, 3))
    beside_a = _stack(41.0, 0.0, (25,), 0.9, likely=(1,))  # the next stack, side by side
    alone_a = _stack(-500.0, 200.0, (5000,), 0.9, likely=(1,), zone="pot")
    near_b = _stack(6.0, 3.0, (100, 100, 100), 0.6, likely=(3,))
    beside_b = _stack(45.0, -2.0, (25,), 0.9, likely=(1,))
    card_a = SeenCard(face_up=True, box=(0, 0, 9, 9), confidence=0.9, position_mm=(300.0, 0.0), identity="10H",
                      identity_confidence=0.6)
    card_b = SeenCard(face_up=True, box=(0, 0, 9, 9), confidence=0.9, position_mm=(305.0, 4.0), identity="10H",
                      identity_confidence=0.95)
    other_b = SeenCard(face_up=True, box=(0, 0, 9, 9), confidence=0.9, position_mm=(330.0, 0.0), identity="9H",
                       identity_confidence=0.9)  # the next card, overlapping: 30 mm off
    misread_b = SeenCard(face_up=True, box=(0, 0, 9, 9), confidence=0.9, position_mm=(-200.0, 5.0), identity="6S",
                         identity_confidence=0.4)
    read_a = SeenCard(face_up=True, box=(0, 0, 9, 9), confidence=0.9, position_mm=(-205.0, 0.0), identity="4S",
                      identity_confidence=0.8)
    back_b = SeenCard(face_up=False, box=(0, 0, 9, 9), confidence=0.9, position_mm=(-205.0, 0.0))
    hand_a = SeenHand(box=(0, 0, 9, 9), confidence=0.6, position_mm=(0.0, -400.0))
    hand_b = SeenHand(box=(0, 0, 9, 9), confidence=0.8, position_mm=(50.0, -420.0))
    button = SeenButton(box=(0, 0, 9, 9), confidence=0.7, position_mm=(200.0, -300.0))
    fused = fuse_states([
        _state("cam0", chips=(near_a, beside_a, alone_a), cards=(card_a, read_a), hands=(hand_a,)),
        _state("cam1", chips=(beside_b, near_b), cards=(card_b, other_b, misread_b, back_b), hands=(hand_b,),
               button=button)])
    assert fused.camera_id == "cam0+cam1" and fused.frame == 7 and fused.t == 1.5
    assert sorted(s.count for s in fused.chips) == [1, 1, 3]
    assert fused.zone_values() == {"bet_3": 325, "pot": 5000}
    assert sorted((c.identity or "-", c.identity_confidence) for c in fused.cards) == [
        ("-", 0.0), ("10H", 0.95), ("4S", 0.8), ("9H", 0.9)]  # the face-down card at the 4S's place stays apart
    assert fused.hands == (hand_b,) and fused.button == button
    assert fused.extra == {"cam0.detect_ms": 10.0, "cam1.detect_ms": 10.0}


def test_a_card_one_camera_alone_boxes_unsurely_is_left_out() -> None:
    def card(x: float, confidence: float) -> SeenCard:
        return SeenCard(face_up=False, box=(0, 0, 9, 9), confidence=confidence, position_mm=(x, 0.0))

    seen_by_both, sure_alone, unsure_alone = card(0.0, 0.3), card(200.0, 0.7), card(400.0, 0.3)
    states = [_state("cam0", cards=(seen_by_both, sure_alone, unsure_alone)), _state("cam1", cards=(card(5.0, 0.9),))]
    assert sorted(c.position_mm for c in fuse_states(states).cards) == [(5.0, 0.0), (200.0, 0.0)]
    kept = fuse_states(states, settings=FusionSettings(lone_card_confidence=0.0)).cards
    assert sorted(c.position_mm for c in kept) == [(5.0, 0.0), (200.0, 0.0), (400.0, 0.0)]
    alone = fuse_states(states[:1]).cards  # one camera: nothing to leave out
    assert alone == (seen_by_both, sure_alone, unsure_alone)


def test_one_camera_s_two_stacks_are_never_one() -> None:
    a = _stack(0.0, 0.0, (100,), 0.9, likely=(1,))
    b = _stack(12.0, 0.0, (100,), 0.9, likely=(1,))  # within reach of a, but the same camera's: another stack
    c = _stack(10.0, 0.0, (100,), 0.95, likely=(1,), values_confidence=0.95)
    fused = fuse_states([_state("cam0", chips=(a, b)), _state("cam1", chips=(c,))])
    assert len(fused.chips) == 2  # c joined b, the nearer, and its surer values are kept
    assert sorted(s.position_mm for s in fused.chips) == [(0.0, 0.0), (10.0, 0.0)]


def test_with_the_cameras_places_feet_apart_along_their_lines_of_sight_are_one_stack() -> None:
    # Cameras facing each other over y = -900 and y = +900. A read the stack at (0, 0) too tall: its foot slid 30 mm
    # toward A. B's neighbour stands 42 mm to the side, across both lines of sight.
    a = _stack(0.0, -30.0, (100,) * 9, 0.4, likely=(8, 9))
    b = _stack(1.0, 4.0, (100,) * 7, 0.5, likely=(7, 8))
    beside = _stack(43.0, 2.0, (25,), 0.9, likely=(1,))
    states = [_state("cam0", chips=(a,)), _state("cam1", chips=(b, beside))]
    assert len(fuse_states(states).chips) == 3  # 34 mm apart: two stacks without the cameras' places
    fused = fuse_states(states, eyes=FACING)
    assert sorted(s.count for s in fused.chips) == [1, 8]
    raised_a = SeenHand(box=(0, 0, 9, 9), confidence=0.7, position_mm=(300.0, -60.0))  # a hand 100 mm up
    raised_b = SeenHand(box=(0, 0, 9, 9), confidence=0.8, position_mm=(305.0, 50.0))
    hands = [_state("cam0", hands=(raised_a,)), _state("cam1", hands=(raised_b,))]
    assert len(fuse_states(hands).hands) == 2 and fuse_states(hands, eyes=FACING).hands == (raised_b,)
    far = _stack(0.0, -60.0, (100,) * 9, 0.4, likely=(9,))  # 64 mm along: more than a count can slide a foot
    assert len(fuse_states([_state("cam0", chips=(far,)), states[1]], eyes=FACING).chips) == 3
    with pytest.raises(ValueError, match=r"one camera place per state \(2\), got 1"):
        fuse_states(states, eyes=[(0.0, -900.0, 1700.0)])


def test_a_count_no_camera_read_lies_where_the_nearest_count_put_its_foot() -> None:
    # A tall stack of 5000s at (0, 472): camera A boxed its top disc alone, read one chip (0.87 sure), its foot slid
    # 37 mm along A's line of sight; B read 13. Both leave 14 likeliest: the foot is B's, the count nearer.
    top_only = replace(_stack(-2.0, 509.0, (5000,), 0.87, likely=(1, 14)), zone="stack_5")
    side = replace(_stack(0.0, 472.0, (5000,) * 13, 0.4, likely=(13, 14)), zone="stack_5")
    fused = fuse_states([_state("cam0", chips=(top_only,)), _state("cam1", chips=(side,))], eyes=FACING)
    assert [(s.count, s.position_mm, s.denomination_confidence) for s in fused.chips] == [(14, (0.0, 472.0), 0.0)]


def _on_felt(point: tuple[float, float, float], eye: tuple[float, float, float]) -> tuple[float, float]:
    """Where the ray from `eye` through `point` meets the felt."""
    s = eye[2] / (eye[2] - point[2])
    return eye[0] + s * (point[0] - eye[0]), eye[1] + s * (point[1] - eye[1])


def test_two_cameras_rays_through_a_top_cross_at_its_height() -> None:
    top = (100.0, 50.0, 33.0)
    height = top_height([(_on_felt(top, eye), eye) for eye in FACING])
    assert height is not None and height[0] == pytest.approx(33.0) and height[1] == pytest.approx(0.0, abs=1e-9)
    missed = top_height([(_on_felt(top, FACING[0]), FACING[0]), ((_on_felt(top, FACING[1])[0] + 4.0, 50.0),
                                                                  FACING[1])])
    assert missed is not None and missed[1] > 1.0  # rays 4 mm apart across their lines: they do not cross
    assert top_height([(_on_felt(top, FACING[0]), FACING[0])] * 2) is None  # one place twice: no crossing


def test_a_triangulated_top_settles_a_count_both_cameras_leave_open() -> None:
    chips = CHIPSET.thickness_mm * 10  # a 10-stack's top
    views = []
    for eye in FACING:
        foot = (0.0, 0.0)
        views.append(replace(_stack(*foot, (100,) * 9, 0.5, likely=(9, 10)),
                             top_mm=_on_felt((0.0, 0.0, chips), eye)))
    assert fuse_stacks(views).count_confidence <= 0.5  # the cameras' evidence alone: 9 or 10
    fused = fuse_stacks(views, eyes=FACING, thickness_mm=CHIPSET.thickness_mm)
    assert fused.count == 10 and fused.count_confidence > 0.9
    # A top fitted to the wrong edges (its height says 20 chips) does not outvote both cameras' sure 3.
    wrong = [replace(_stack(0.0, 0.0, (100,) * 3, 0.9, likely=(3,)), top_mm=_on_felt((0.0, 0.0, 2 * chips), eye))
             for eye in FACING]
    assert fuse_stacks(wrong, eyes=FACING, thickness_mm=CHIPSET.thickness_mm).count == 3


def test_refused_inputs_name_what_is_wrong() -> None:
    with pytest.raises(ValueError, match="at least one camera"):
        fuse_states([])
    with pytest.raises(ValueError, match=r"one state per camera, got cameras \['cam0', 'cam0'\]"):
        fuse_states([_state("cam0"), _state("cam0")])
    with pytest.raises(ValueError, match="same_stack_mm > 0, got -1"):
        FusionSettings(same_stack_mm=-1.0)
    with pytest.raises(ValueError, match=r"lone_card_confidence in \[0, 1\], got 1.5"):
        FusionSettings(lone_card_confidence=1.5)


def test_states_files_leave_the_likelihoods_out() -> None:
    state = _state("cam0", chips=(_stack(0.0, 0.0, (100,), 0.9, likely=(1,)),))
    data = stored_dict(state)
    assert "count_log_likelihood" not in data["chips"][0]
    assert state_from_dict(data).chips[0] == _stack(0.0, 0.0, (100,), 0.9)


class _Names:
    def __init__(self) -> None:
        self.names = {c.value: c.label for c in DetectorClass}

    def detect(self, frame: np.ndarray) -> Detections:
        raise NotImplementedError


def _view(scene: Scene, camera: Camera, name: str) -> TableState:
    """`camera`'s state of `scene` (truth boxes, exact calibration, camera height given)."""
    result = Renderer(camera).render(scene, rng=np.random.default_rng(25001))
    corners = np.array([[-300.0, -200.0], [300.0, -200.0], [300.0, 200.0], [-300.0, 200.0]])
    pixels, _ = camera.project(np.hstack([corners, np.zeros((4, 1))]))
    calibration = calibrate_from_points(
        [PointPair(pixel=(float(u), float(v)), table_mm=(float(x), float(y)))
         for (u, v), (x, y) in zip(pixels, corners, strict=True)], layout=scene.layout,
        image_size=(camera.width, camera.height))
    chips = sorted((o for o in result.objects if o.cls == DetectorClass.CHIP), key=lambda o: o.id)
    detections = Detections(xyxy=np.array([o.box for o in chips], dtype=np.float32),
                            confidence=np.ones(len(chips), dtype=np.float32),
                            class_id=np.full(len(chips), DetectorClass.CHIP.value, dtype=np.int64))
    builder = TableStateBuilder(_Names(), scene.layout, calibration, CHIPSET, None, None, camera_id=name,
                                camera_height_mm=float(camera.eye[2]))
    return builder.state_from(result.image, detections, frame_no=0, t=0.0)


def test_a_stack_under_one_camera_is_counted_from_the_other_s_view() -> None:
    scene = Scene(layout=TableLayout.default(), chipset=CHIPSET,
                  lighting=Lighting(colour_temperature_k=4500.0, shadow_strength=0.3))
    stacks = [(0.0, 0.0, (100,) * 7), (150.0, 60.0, (500,) * 4), (-120.0, -80.0, (25,))]
    for i, (x, y, chips) in enumerate(stacks):
        scene.chips.append(ChipStack(id=i + 1, x=x, y=y, chips=chips, angle_deg=31.0 * i))
    above = Camera.look_at(eye=(0.0, 0.0, 1200.0), target=(0.0, 0.0, 0.0), size=(1920, 1080), hfov_deg=40.0)
    aside = Camera.look_at(eye=(0.0, 800.0, 1200.0), target=(0.0, 0.0, 0.0), size=(1920, 1080), hfov_deg=40.0)
    top, side = _view(scene, above, "above"), _view(scene, aside, "aside")
    under = min(top.chips, key=lambda s: np.hypot(*(s.position_mm or (1e9, 1e9))))
    assert under.count != 7 or under.count_confidence < 0.5  # straight above it: no side, no sure count
    fused = fuse_states([top, side])
    assert len(fused.chips) == 3
    assert sorted(s.denominations for s in fused.chips) == sorted(chips for _, _, chips in stacks)
    seven = next(s for s in fused.chips if s.count == 7)
    assert seven.count_confidence >= 0.8
