"""The card classifier (ONNX) on cards drawn by the simulator's textures: any design, any rotation, small."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import pytest

from floorman.core.cards import Rank
from floorman.core.errors import ConfigError
from floorman.datasets.textures import N_DECK_DESIGNS
from floorman.vision.cards import order_corners, recognise_card
from floorman.vision.cards_cnn import INDEX_PATH, MODEL_PATH, CardClassifier, PatchModel, default_classifier
from tests.vision.test_cards import place_card, table


def test_the_shipped_model_declares_its_patch_and_classes() -> None:
    net = CardClassifier()
    assert (net.width, net.height, net.supersample) == (64, 88, 2)
    assert len(net.ranks) == 13 and net.suits == ("S", "H", "D", "C")
    assert MODEL_PATH.stat().st_size < 5_000_000
    assert net.index is not None and (net.index.spec.width, net.index.spec.height) == (40, 56)  # fused in
    assert CardClassifier(index=None).index is None


@pytest.mark.parametrize("design", range(N_DECK_DESIGNS))
def test_reads_every_design_upright_and_upside_down(design: int) -> None:
    net = default_classifier()
    assert net is not None
    for card, angle in (("KD", 0.0), ("4C", 180.0), ("10S", 71.0)):
        image = table(seed=design)
        _, corners = place_card(image, card, design=design, angle_deg=angle)
        (reading,) = net.read(image, [order_corners(corners.astype(np.float32))])
        assert reading.card == card, (design, angle)
        assert 0.5 < reading.confidence <= 1.0


@pytest.mark.parametrize(("card", "design"), [("7H", 0), ("JS", 2), ("3D", 4)])
def test_reads_a_small_card_from_its_box(card: str, design: int) -> None:
    """A card about 75 px wide (1.2 px/mm): its index is a few pixels tall."""
    image = table(size=200, seed=7)
    box, _ = place_card(image, card, design=design, angle_deg=-25.0, px_per_mm=1.2)
    assert recognise_card(image, box=box).card == card


def test_a_patch_of_felt_is_not_a_face() -> None:
    net = default_classifier()
    assert net is not None
    image = table(seed=9)
    (reading,) = net.read(image, [np.array([[100, 100], [163, 100], [163, 188], [100, 188]], np.float32)])
    assert reading.face < 0.5


def test_missing_or_undeclared_models_raise_config_errors(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="expected the card classifier"):
        CardClassifier(tmp_path / "none.onnx")
    onnx = pytest.importorskip("onnx")
    helper = onnx.helper
    graph = helper.make_graph([helper.make_node("Identity", ["patch"], ["rank"])], "bare",
                              [helper.make_tensor_value_info("patch", onnx.TensorProto.FLOAT, [1, 3, 88, 64])],
                              [helper.make_tensor_value_info("rank", onnx.TensorProto.FLOAT, [1, 3, 88, 64])])
    path = tmp_path / "bare.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), str(path))
    with pytest.raises(ConfigError, match="floorman_patch"):
        CardClassifier(path)


@pytest.mark.parametrize("design", range(N_DECK_DESIGNS))
def test_the_index_reader_reads_courts_at_either_corner_and_knows_a_covered_one(design: int) -> None:
    """Court cards drawn with another court's figure: only the index tells the rank. At 1.4 px/mm (a card ~89 px
    wide) each index corner alone reads it; a corner under a felt-coloured patch shows no index."""
    reader = PatchModel(INDEX_PATH, what="card index reader")
    assert reader.spec.region != (0.0, 0.0, 1.0, 1.0) and INDEX_PATH.stat().st_size < 2_000_000
    for card, figure, angle in (("KH", Rank.QUEEN, 20.0), ("QS", Rank.JACK, 160.0), ("JD", Rank.KING, 285.0)):
        image = table(seed=design, size=260)
        _, corners = place_card(image, card, design=design, angle_deg=angle, px_per_mm=1.4, figure=figure)
        outline = order_corners(corners.astype(np.float32))
        for turn in (0, 2):
            found = reader.probabilities(image, [np.roll(outline, -turn, axis=0)])
            turned = np.roll(outline, -turn, axis=0)
            one = reader.session.run(None, {"patch": reader.patch(image, turned)[None].transpose(0, 3, 1, 2)
                                            .astype(np.float32)})
            assert reader.ranks[int(np.argmax(one[0][0]))] == card[:-1], (design, card, turn)
            assert float(one[2][0]) > 0.5
            assert reader.ranks[int(found.rank[0].argmax())] == card[:-1]
        hidden = outline[0] + 0.15 * (outline[2] - outline[0])  # a blob over the top-left index only
        cv2.circle(image, (round(float(hidden[0])), round(float(hidden[1]))), 14, (36, 110, 40), thickness=-1)
        top_left = reader.session.run(None, {"patch": reader.patch(image, outline)[None].transpose(0, 3, 1, 2)
                                             .astype(np.float32)})
        assert float(top_left[2][0]) < 0.5, (design, card)
        assert reader.ranks[int(reader.probabilities(image, [outline]).rank[0].argmax())] == card[:-1]


def test_outlines_narrower_than_the_index_gate_are_read_by_the_classifier_alone() -> None:
    fused, alone = CardClassifier(), CardClassifier(index=None)
    for px_per_mm, same in ((0.5, True), (1.4, False)):  # a card 32 px wide, then 89 px
        image = table(seed=3, size=200)
        _, corners = place_card(image, "QC", design=1, angle_deg=30.0, px_per_mm=px_per_mm)
        outline = [order_corners(corners.astype(np.float32))]
        (first,), (second,) = fused.read(image, outline), alone.read(image, outline)
        assert (first.confidence == second.confidence) is same, px_per_mm
