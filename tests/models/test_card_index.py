"""The index reader's recipe (`floorman models train-cards --patch index`): its patch is the card's top-left corner,
each card gives one of each index corner, labelled with the card only where its index shows."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import pytest

from floorman.core.card_patch import INDEX_REGION, WHOLE_CARD, PatchSpec, decode_region
from floorman.core.cards import Card
from floorman.core.chips import ChipSet
from floorman.core.layout import TableLayout
from floorman.datasets.camera import Camera
from floorman.datasets.render import Renderer
from floorman.datasets.scene import CardObject, Scene
from floorman.models import cards_data
from floorman.models.cards_data import build_composites, composite_samples, frame_samples, index_visible, load_cache
from floorman.vision.cards_cnn import CardClassifier, PatchModel, Probabilities, fuse

INDEX = PatchSpec(width=40, height=56, region=INDEX_REGION)


def test_a_region_fills_the_patch_and_bad_regions_are_refused() -> None:
    card = np.array([[10, 20], [73.5, 20], [73.5, 108.9], [10, 108.9]], np.float64)  # 63.5 x 88.9 px, upright
    target = INDEX.target()
    matrix = cv2.getPerspectiveTransform(card.astype(np.float32), target.astype(np.float32))
    corner = np.array([[[10 + 0.3 * 63.5, 20 + 0.3 * 88.9]]], np.float64)  # the region's bottom-right corner
    assert np.allclose(cv2.perspectiveTransform(corner, matrix)[0, 0], (80.0, 112.0), atol=1e-3)  # 40x56, x2
    assert np.allclose(PatchSpec().target(), [[0, 0], [128, 0], [128, 176], [0, 176]])
    assert PatchSpec().tag == "" and INDEX.tag == "_p40x56x2_r0-0-0.3-0.3"
    assert decode_region(INDEX.encode_region()) == INDEX_REGION and PatchSpec().whole_card
    for region in ((0.0, 0.0, 0.0, 0.3), (0.5, 0.0, 0.4, 0.3), (0.0, -0.1, 0.3, 0.3), (0.0, 0.0, 1.2, 1.0)):
        with pytest.raises(ValueError, match="region within the card"):
            PatchSpec(region=region)
    with pytest.raises(ValueError, match="expected a card region 'x0,y0,x1,y1', got '0,0,1'"):
        decode_region("0,0,1")


def _frame(*, covered: bool) -> tuple[Scene, Camera]:
    """A queen of hearts face up, and, when `covered`, a face-down card over its top-left index."""
    scene = Scene(layout=TableLayout.default(), chipset=ChipSet.default())
    scene.cards.append(CardObject(id=1, card=Card.parse("QH"), face_up=True, x=0.0, y=0.0, angle_deg=0.0))
    if covered:  # its centre 50 mm left of and 70 mm beyond hers: over her top-left corner (in the image) only
        scene.cards.append(CardObject(id=2, card=Card.parse("5S"), face_up=False, x=-50.0, y=70.0, z=0.5))
    camera = Camera.look_at(eye=(0.0, 0.0, 500.0), target=(0.0, 0.0, 0.0), size=(480, 360), hfov_deg=50.0)
    return scene, camera


def test_each_index_corner_is_a_patch_labelled_only_where_its_index_shows() -> None:
    scene, camera = _frame(covered=False)
    result = Renderer(camera).render(scene, rng=np.random.default_rng(0))
    samples = frame_samples(result, np.random.default_rng(1), spec=INDEX)
    faces = samples.rank >= 0
    assert samples.patches.shape[1:] == (56, 40, 3)
    assert faces.sum() == 4  # two jittered outlines, each at two corners
    assert set(samples.rank[faces].tolist()) == {10} and set(samples.suit[faces].tolist()) == {1}
    scene, camera = _frame(covered=True)
    result = Renderer(camera).render(scene, rng=np.random.default_rng(0))
    queen = next(o for o in result.objects if o.card == "QH")
    corners = np.asarray(queen.corners_px, np.float32)
    visible = [index_visible(result.instance_mask != queen.id, np.roll(corners, -turn, axis=0)) for turn in (0, 2)]
    assert visible[0] < 0.5 and visible[1] == 1.0  # her top-left index under the card, the other one clear
    samples = frame_samples(result, np.random.default_rng(1), spec=INDEX)
    assert samples.rank.tolist()[:4] == [-1, 10, -1, 10]  # per outline: the covered corner, then the clear one


def test_index_composites_are_two_corners_and_cached_apart(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("floorman.models.cards_data.COMPOSITE_CHUNK", 10)
    rng = np.random.default_rng(4)
    drawn = [composite_samples(rng, spec=INDEX) for _ in range(40)]
    assert all(len(pair) == 2 and pair[0][0].shape == (56, 40, 3) for pair in drawn)
    labels = [label for pair in drawn for _, label, _ in pair]
    assert -1 in labels and sum(label >= 0 for label in labels) > 50  # a cover hides an index now and then
    paths = build_composites(tmp_path, seed=3, count=10, spec=INDEX)
    assert [p.name for p in paths] == ["composite_p40x56x2_r0-0-0.3-0.3_3_0000.npz"]
    assert len(load_cache(paths, spec=INDEX)) == 20
    assert cards_data.chunk_path(tmp_path, seed=7, start=25, spec=INDEX).name == (
        "chunk_7_p40x56x2_r0-0-0.3-0.3_0000025.npz")
    whole = composite_samples(np.random.default_rng(4), spec=PatchSpec())
    assert len(whole) == 1 and whole[0][0].shape == (88, 64, 3)


def test_the_index_reader_is_exported_with_its_region_and_read_at_both_corners(tmp_path: Path) -> None:
    torch = pytest.importorskip("torch")
    cards_train = pytest.importorskip("floorman.models.cards_train")
    assert cards_train.CardTrainConfig(patch="index").spec == INDEX
    assert cards_train.CardTrainConfig(patch="index").out_path.name == "card_index.onnx"
    with pytest.raises(ValueError, match="expected patch card or index, got 'corner'"):
        cards_train.CardTrainConfig(patch="corner")
    torch.manual_seed(0)
    path = cards_train.export_onnx(cards_train.CardNet(INDEX), tmp_path / "index.onnx", spec=INDEX)
    model = PatchModel(path, what="card index reader")
    assert model.spec == INDEX
    image = np.zeros((300, 300, 3), np.uint8)
    image[50:60, 50:60] = 255  # a mark at the top-left corner of the outline below, none at the bottom-right
    outline = np.array([[50, 50], [113.5, 50], [113.5, 138.9], [50, 138.9]], np.float32)
    assert model.patch(image, outline)[:10, :10].mean() > 200 and model.patch(image, outline)[40:, 30:].max() == 0
    found = model.probabilities(image, [outline, outline])
    assert found.rank.shape == (2, 13) and found.suit.shape == (2, 4) and found.face.shape == (2,)
    assert np.allclose(found.rank.sum(axis=1), 1.0, atol=1e-5)
    whole = cards_train.export_onnx(cards_train.CardNet(PatchSpec()), tmp_path / "card.onnx", spec=PatchSpec())
    assert PatchModel(whole).spec.region == WHOLE_CARD
    reader = CardClassifier(whole, index=path)
    assert reader.index is not None and len(reader.read(image, [outline])) == 1
    with pytest.raises(Exception, match="expected the card index reader"):
        CardClassifier(whole, index=tmp_path / "none.onnx")


def _probabilities(rank: list[float], suit: list[float], face: float) -> Probabilities:
    return Probabilities(rank=np.array([rank], np.float32), suit=np.array([suit], np.float32),
                         face=np.array([face], np.float32))


def test_fusion_follows_a_sure_index_and_ignores_a_hidden_one() -> None:
    ranks = 13 * [0.0]
    card = _probabilities([*ranks[:9], 0.1, 0.6, 0.3, 0.0], [0.97, 0.01, 0.01, 0.01], 0.95)  # Q over K
    index = _probabilities([*ranks[:9], 0.02, 0.03, 0.95, 0.0], [0.9, 0.04, 0.03, 0.03], 0.9)  # K
    fused = fuse(card, index)
    assert int(fused.rank.argmax()) == 11 and int(fused.suit.argmax()) == 0  # the king, of spades
    assert np.isclose(float(fused.face[0]), 0.95) and np.allclose(fused.rank.sum(), 1.0)
    hidden = fuse(card, _probabilities(index.rank[0].tolist(), index.suit[0].tolist(), 0.0))
    assert np.allclose(hidden.rank, card.rank / card.rank.sum(), atol=1e-4)  # no index shows: the classifier's
    agreeing = fuse(card, _probabilities([*ranks[:9], 0.05, 0.9, 0.05, 0.0], [0.97, 0.01, 0.01, 0.01], 1.0))
    assert float(agreeing.rank.max()) > 0.95  # both say queen: surer than either
