"""The card classifier's recipe: patches from renders and composites, the network, the ONNX export."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from floorman.core.cards import Card
from floorman.core.chips import ChipSet
from floorman.core.layout import TableLayout
from floorman.datasets.camera import Camera
from floorman.datasets.render import Renderer
from floorman.datasets.scene import CardObject, Scene
from floorman.models.cards_data import PatchSpec, build_composites, composite_sample, frame_samples, load_cache
from floorman.vision.cards_cnn import CardClassifier

torch = pytest.importorskip("torch")
cards_train = pytest.importorskip("floorman.models.cards_train")


def _scene() -> tuple[Scene, Camera]:
    scene = Scene(layout=TableLayout.default(), chipset=ChipSet.default())
    scene.cards += [CardObject(id=1, card=Card.parse("QH"), face_up=True, x=0.0, y=0.0, angle_deg=30.0),
                    CardObject(id=2, card=Card.parse("5S"), face_up=False, x=120.0, y=0.0)]
    camera = Camera.look_at(eye=(0.0, 0.0, 600.0), target=(0.0, 0.0, 0.0), size=(480, 320), hfov_deg=50.0)
    return scene, camera


def test_a_rendered_frame_gives_face_views_and_negatives() -> None:
    scene, camera = _scene()
    result = Renderer(camera).render(scene, rng=np.random.default_rng(0))
    samples = frame_samples(result, np.random.default_rng(1), spec=PatchSpec())
    assert samples.patches.shape[1:] == (88, 64, 3)
    faces = samples.rank >= 0
    assert faces.sum() == 3  # three views of the queen of hearts
    assert set(samples.rank[faces].tolist()) == {10} and set(samples.suit[faces].tolist()) == {1}
    assert (samples.suit[~faces] == -1).all()


def test_composites_are_cached_in_chunks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("floorman.models.cards_data.COMPOSITE_CHUNK", 4)
    paths = build_composites(tmp_path, seed=3, count=6, spec=PatchSpec())
    assert [p.name for p in paths] == ["composite_3_0000.npz", "composite_3_0001.npz"]
    samples = load_cache(paths, spec=PatchSpec())
    assert len(samples) == 8 and samples.is_face.all()
    again = load_cache(build_composites(tmp_path, seed=3, count=6, spec=PatchSpec()), spec=PatchSpec())
    assert np.array_equal(again.patches, samples.patches)
    patch, rank, suit = composite_sample(np.random.default_rng(5), spec=PatchSpec(width=32, height=44))
    assert patch.shape == (44, 32, 3) and 0 <= rank < 13 and 0 <= suit < 4


@pytest.mark.train
def test_a_trained_net_exports_to_a_model_the_reader_loads(tmp_path: Path) -> None:
    spec = PatchSpec()
    rng = np.random.default_rng(0)
    patches, _, _ = zip(*(composite_sample(rng, spec=spec) for _ in range(16)), strict=True)
    net = cards_train.CardNet(spec)
    batch = cards_train.augment(torch.from_numpy(np.stack(patches).transpose(0, 3, 1, 2)).float(),
                                torch.Generator().manual_seed(0))
    assert batch.shape == (16, 3, 88, 64) and float(batch.min()) >= 0.0 and float(batch.max()) <= 255.0
    rank, suit, face = net(batch)
    assert rank.shape == (16, 13) and suit.shape == (16, 4) and face.shape == (16,)
    path = cards_train.export_onnx(net, tmp_path / "cards.onnx", spec=spec)
    reader = CardClassifier(path)
    image = np.ascontiguousarray(patches[0])
    (reading,) = reader.read(image, [np.array([[0, 0], [64, 0], [64, 88], [0, 88]], np.float32)])
    assert 0.0 <= reading.confidence <= reading.face <= 1.0
    assert reading.card[-1] in "SHDC"
