"""The card classifier's recipe: patches from renders and composites, the network, the ONNX export."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import pytest

from floorman.core.cards import Card, Rank
from floorman.core.chips import ChipSet
from floorman.core.errors import ConfigError
from floorman.core.layout import TableLayout
from floorman.datasets.camera import Camera
from floorman.datasets.render import Renderer
from floorman.datasets.scene import CardObject, Scene
from floorman.models import cards_data
from floorman.models.cards_data import (
    CHIP_TO_CARD,
    PatchSpec,
    build_composites,
    composite_sample,
    frame_samples,
    load_cache,
    random_chip,
)
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
    with_chips = build_composites(tmp_path, seed=3, count=4, spec=PatchSpec(), chips=True)
    assert [p.name for p in with_chips] == ["composite_chips_3_0000.npz"]  # its own cache, never mixed up
    assert not np.array_equal(load_cache(with_chips, spec=PatchSpec()).patches, samples.patches[:4])


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


def test_a_random_chip_is_a_disc_of_the_asked_size() -> None:
    rng = np.random.default_rng(4)
    chips = [random_chip(rng, diameter_px=40.0) for _ in range(12)]
    for chip in chips:
        assert chip.shape == (40, 40, 4) and chip.dtype == np.uint8
        assert chip[20, 20, 3] == 255 and chip[0, 0, 3] == 0  # opaque at the centre, clear at the corner
        assert abs(float((chip[..., 3] > 127).mean()) - np.pi / 4) < 0.05
    assert len({tuple(int(v) for v in chip[20, 4, :3]) for chip in chips}) > 3  # the colours vary


def test_a_composite_chip_lies_over_the_card() -> None:
    width = 120.0
    corners = np.array([[100, 80], [220, 80], [220, 248], [100, 248]], np.float32)  # a card 120 x 168 px
    for seed in range(6):
        canvas = np.full((400, 400, 3), (40, 110, 40), np.uint8)
        cv2.fillConvexPoly(canvas, corners.astype(np.int32), (250, 250, 250))
        before = canvas.copy()
        cards_data._chip_on(canvas, np.random.default_rng(seed), corners=corners, width_px=width)
        ys, xs = np.nonzero(np.abs(canvas.astype(int) - before).max(axis=2) > 60)
        centre = np.array([xs.mean(), ys.mean()])
        assert (corners.min(axis=0) - 10 <= centre).all() and (centre <= corners.max(axis=0) + 10).all()
        assert 0.8 * CHIP_TO_CARD * width <= xs.max() - xs.min() <= 1.4 * CHIP_TO_CARD * width


@pytest.mark.train
def test_chips_lie_on_the_asked_share_of_patches_at_a_chips_size() -> None:
    spec = PatchSpec()
    white = torch.full((200, 3, spec.height, spec.width), 255.0)
    bank = cards_train.chip_bank(np.random.default_rng(0), count=8)
    assert bank.shape == (8, 4, 48, 48) and float(bank[:, 3].max()) == 1.0
    bank[:, :3] = 0.0  # black chips: the covered pixels show where they lie
    out = cards_train._lay_chips(white, torch.Generator().manual_seed(1), chips=bank, share=0.5)
    covered = (out < 128.0).all(dim=1).float().mean(dim=(1, 2))
    with_chip = covered > 0.0
    assert 70 <= int(with_chip.sum()) <= 130
    disc = np.pi / 4 * (spec.width * CHIP_TO_CARD) ** 2 / (spec.width * spec.height)  # a whole chip's share
    assert 0.5 * disc < float(covered[with_chip].max()) < 1.15**2 * disc + 0.03  # up to 15 % wider, a rim of pixels
    assert float(covered[~with_chip].max()) == 0.0


def test_train_cards_takes_the_chip_options_and_names_a_bad_share(capsys: pytest.CaptureFixture[str]) -> None:
    from floorman.cli import build_parser

    args = build_parser().parse_args(["models", "train-cards", "--chip-share", "0.3", "--composite-chips"])
    assert (args.chip_share, args.composite_chips) == (0.3, True)
    assert build_parser().parse_args(["models", "train-cards"]).chip_share == 0.0
    with pytest.raises(SystemExit):
        build_parser().parse_args(["models", "train-cards", "--chip-share", "1.5"])
    assert "--chip-share: expected a number from 0 to 1, got '1.5'" in capsys.readouterr().err


def _trained_looking_net(spec: PatchSpec, seed: int) -> torch.nn.Module:
    """A CardNet whose batch norms hold statistics and scales other than their defaults (as after training)."""
    torch.manual_seed(seed)
    net = cards_train.CardNet(spec)
    with torch.no_grad():
        for norm in (m for m in net.features if isinstance(m, torch.nn.BatchNorm2d)):
            norm.running_mean.normal_(0.0, 0.5)
            norm.running_var.uniform_(0.5, 2.0)
            norm.weight.uniform_(0.5, 1.5)
            norm.bias.normal_(0.0, 0.3)
    return net.eval()


@pytest.mark.train
def test_an_exported_net_loads_back_computing_the_same(tmp_path: Path) -> None:
    spec = PatchSpec()
    net = _trained_looking_net(spec, 0)
    path = cards_train.export_onnx(net, tmp_path / "cards.onnx", spec=spec)
    patches = torch.rand(24, 3, spec.height, spec.width, generator=torch.Generator().manual_seed(1)) * 255.0
    loaded = cards_train.CardNet(spec)
    cards_train.load_onnx_weights(loaded, path, patches=patches)
    with torch.no_grad():
        for want, got in zip(net(patches), loaded.eval()(patches), strict=True):
            assert torch.allclose(want, got, atol=1e-4, rtol=1e-4)
        # the norms hold the statistics of these patches: training mode (dropout aside) normalises them alike
        for model, alike in ((loaded, True), (net, False)):
            want = model.eval()(patches)[0]
            model.train()
            model.hidden.eval()
            assert torch.allclose(model(patches)[0], want, atol=1e-3, rtol=1e-3) == alike


@pytest.mark.train
def test_loading_a_model_of_another_shape_names_the_file(tmp_path: Path) -> None:
    small = PatchSpec(width=32, height=48)
    path = cards_train.export_onnx(_trained_looking_net(small, 2), tmp_path / "small.onnx", spec=small)
    spec = PatchSpec()
    with pytest.raises(ConfigError, match=r"small\.onnx.*expected an exported CardNet"):
        cards_train.load_onnx_weights(cards_train.CardNet(spec), path,
                                      patches=torch.zeros(2, 3, spec.height, spec.width))


@pytest.mark.train
def test_shrinking_blurs_the_asked_share_of_patches_to_a_small_cards_pixels() -> None:
    spec = PatchSpec()
    ys, xs = torch.meshgrid(torch.arange(spec.height), torch.arange(spec.width), indexing="ij")
    stripes = ((xs + ys) % 2 * 255.0).float().expand(200, 3, spec.height, spec.width)  # 1-px detail
    out = cards_train._shrink(stripes, torch.Generator().manual_seed(0), share=0.5)
    changed = (out - stripes).abs().amax(dim=(1, 2, 3)) > 1.0
    assert 70 <= int(changed.sum()) <= 130
    assert float(out[changed].std()) < 0.5 * float(stripes.std())  # the pixel-wide stripes averaged away
    assert torch.equal(out[~changed], stripes[~changed])
    assert torch.equal(cards_train._shrink(stripes, torch.Generator().manual_seed(0), share=0.0), stripes)
    plain = torch.full((4, 3, spec.height, spec.width), 200.0)  # a flat patch stays flat
    assert torch.allclose(cards_train._shrink(plain, torch.Generator().manual_seed(3), share=1.0), plain)


@pytest.mark.train
def test_foreshortening_blurs_one_axis_of_the_asked_share_more_than_the_other() -> None:
    spec = PatchSpec()
    ys, xs = torch.meshgrid(torch.arange(spec.height), torch.arange(spec.width), indexing="ij")
    rows = ((ys // 3) % 2 * 255.0).float().expand(100, 3, spec.height, spec.width)  # 3-px bands down the patch
    columns = ((xs // 3) % 2 * 255.0).float().expand(100, 3, spec.height, spec.width)  # and across it
    kept = []
    for seed in range(12):  # one axis and one size per batch: rows and columns go through together
        out = cards_train._foreshorten(torch.cat([rows, columns]), torch.Generator().manual_seed(seed), share=0.5)
        changed = (out - torch.cat([rows, columns])).abs().amax(dim=(1, 2, 3)) > 1.0
        assert 70 <= int(changed.sum()) <= 130
        assert torch.equal(out[:100][~changed[:100]], rows[~changed[:100]])
        across_rows = float(out[:100][changed[:100]].std() / rows.std())
        kept.append(across_rows / float(out[100:][changed[100:]].std() / columns.std()))
    # across the bands of the axis shrunk more, less is left of them: both axes were the one, in turn
    assert min(kept) < 0.8 and max(kept) > 1.25
    plain = torch.full((4, 3, spec.height, spec.width), 200.0)
    assert torch.allclose(cards_train._foreshorten(plain, torch.Generator().manual_seed(3), share=1.0), plain)
    with pytest.raises(ValueError, match=r"expected slant_share from 0 to 1, got -0\.1"):
        cards_train.CardTrainConfig(slant_share=-0.1)


@pytest.mark.train
def test_defocus_blurs_the_asked_share_of_patches_as_a_gaussian_of_a_few_pixels() -> None:
    spec = PatchSpec()
    edge = (torch.arange(spec.width) >= spec.width // 2).float().mul(255.0).expand(200, 3, spec.height, spec.width)
    for seed in range(6):
        out = cards_train._defocus(edge, torch.Generator().manual_seed(seed), share=0.5)
        changed = (out - edge).abs().amax(dim=(1, 2, 3)) > 1.0
        assert 70 <= int(changed.sum()) <= 130
        assert torch.equal(out[~changed], edge[~changed])
        row = out[changed][0, 0, 0]
        # a step through a Gaussian of sigma s rises from 16 % to 84 % over 2 s pixels
        rise = int(((row > 0.16 * 255.0) & (row < 0.84 * 255.0)).sum())
        low, high = cards_train.DEFOCUS_SIGMAS
        assert 2 * low - 1 <= rise <= 2 * high + 1
        assert torch.allclose(out[changed].mean(), edge.mean(), atol=0.5)  # blurred, not darkened
    assert torch.equal(cards_train._defocus(edge, torch.Generator().manual_seed(0), share=0.0), edge)
    with pytest.raises(ValueError, match=r"expected defocus_share from 0 to 1, got 1\.5"):
        cards_train.CardTrainConfig(defocus_share=1.5)


def test_train_cards_takes_a_starting_model_and_a_learning_rate(tmp_path: Path) -> None:
    from floorman.cli import build_parser

    args = build_parser().parse_args(["models", "train-cards", "--init", str(tmp_path / "a.onnx"), "--lr", "3e-4",
                                      "--small-share", "0.2", "--slant-share", "0.3"])
    assert (args.init, args.lr, args.small_share, args.slant_share) == (tmp_path / "a.onnx", 3e-4, 0.2, 0.3)
    defaults = build_parser().parse_args(["models", "train-cards"])
    assert (defaults.init, defaults.lr, defaults.small_share, defaults.slant_share) == (None, 3e-3, 0.0, 0.0)
    assert cards_train.CardTrainConfig().init is None  # the shipped recipe trains from scratch
    with pytest.raises(ValueError, match=r"expected small_share from 0 to 1, got 1\.5"):
        cards_train.CardTrainConfig(small_share=1.5)


def test_composites_of_small_cards_are_blurrier_and_cached_apart(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    spec = PatchSpec()

    def detail(widths: tuple[float, float]) -> float:
        rng = np.random.default_rng(7)  # the same cards, designs and covers at both sizes
        patches = [composite_sample(rng, spec=spec, widths=widths)[0] for _ in range(6)]
        return float(np.mean([cv2.Laplacian(cv2.cvtColor(p, cv2.COLOR_BGR2GRAY), cv2.CV_64F).var() for p in patches]))

    assert detail((40.0, 40.0)) < 0.5 * detail((200.0, 200.0))
    monkeypatch.setattr("floorman.models.cards_data.COMPOSITE_CHUNK", 2)
    small = build_composites(tmp_path, seed=3, count=2, spec=spec, chips=True, widths=(36.0, 80.0))
    usual = build_composites(tmp_path, seed=3, count=2, spec=spec, chips=True)
    assert [p.name for p in small + usual] == ["composite_chips_w36-80_3_0000.npz", "composite_chips_3_0000.npz"]


def test_composites_and_renders_with_any_court_figure_or_suit_shape_are_cached_apart(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    drawn: list[tuple[Card, Rank | None]] = []
    face = cards_data.card_face

    shapes: list[int] = []

    def recorded(card: Card, *, design: int, px_per_mm: float, figure: Rank | None = None,
                 suit_shape: int = 0) -> np.ndarray:
        drawn.append((card, figure))
        shapes.append(suit_shape)
        return face(card, design=design, px_per_mm=px_per_mm, figure=figure, suit_shape=suit_shape)

    monkeypatch.setattr("floorman.models.cards_data.card_face", recorded)
    monkeypatch.setattr("floorman.models.cards_data.COMPOSITE_CHUNK", 40)
    own = build_composites(tmp_path, seed=3, count=40, spec=PatchSpec())
    assert all(figure is None for _, figure in drawn)
    drawn.clear()
    anyfig = build_composites(tmp_path, seed=3, count=40, spec=PatchSpec(), figures="any")
    assert [p.name for p in own + anyfig] == ["composite_3_0000.npz", "composite_anyfig_3_0000.npz"]
    figures = [(card.rank, figure) for card, figure in drawn if figure is not None]  # (a cover keeps its own)
    assert figures and all(rank.is_court and figure.is_court for rank, figure in figures)
    assert any(rank is not figure for rank, figure in figures)  # figures that tell nothing of the rank
    assert cards_data.chunk_path(tmp_path, seed=7, start=25, figures="any").name == "chunk_7_anyfig_0000025.npz"
    assert cards_data.chunk_path(tmp_path, seed=7, start=25).name == "chunk_7_0000025.npz"
    with pytest.raises(ValueError, match="court figures: expected own or any, got 'shifted'"):
        build_composites(tmp_path, seed=3, count=1, spec=PatchSpec(), figures="shifted")
    with pytest.raises(ValueError, match="expected court figures own or any, got 'mine'"):
        cards_train.CardTrainConfig(court_figures="mine")
    assert cards_train.CardTrainConfig().court_figures == "any"  # the shipped recipe since session 17
    from floorman.cli import build_parser

    assert build_parser().parse_args(["models", "train-cards"]).court_figures == "any"

    shapes.clear()
    anysuit = build_composites(tmp_path, seed=3, count=40, spec=PatchSpec(), figures="any", suits="any")
    assert anysuit[0].name == "composite_anyfig_anysuit_3_0000.npz"
    assert len(set(shapes)) > 5 and 0 in shapes  # the card's shape drawn; a cover card keeps ours
    assert cards_data.chunk_path(tmp_path, seed=7, start=25, figures="any", suits="any").name == (
        "chunk_7_anyfig_anysuit_0000025.npz")
    with pytest.raises(ValueError, match="suit shapes: expected one of own, any, got 'mine'"):
        build_composites(tmp_path, seed=3, count=1, spec=PatchSpec(), suits="mine")
    with pytest.raises(ValueError, match="expected suit shapes own or any, got 'mine'"):
        cards_train.CardTrainConfig(suit_shapes="mine")
    assert cards_train.CardTrainConfig().suit_shapes == "any"  # the shipped recipe since session 18
    assert build_parser().parse_args(["models", "train-cards"]).suit_shapes == "any"


def test_tilted_frames_come_from_tilted_casino_cameras_into_cache_files_of_their_own(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cameras: list[tuple[object, float]] = []
    drawn = cards_data.random_sample

    def recorded(rng: np.random.Generator, **kwargs: object) -> tuple[Scene, Camera]:
        scene, camera = drawn(rng, **kwargs)  # type: ignore[arg-type]
        cameras.append((kwargs.get("style"), camera.tilt_deg))
        return scene, camera

    monkeypatch.setattr("floorman.models.cards_data.random_sample", recorded)
    paths = cards_data.build_cache(tmp_path, seed=5, frames=2, spec=PatchSpec(), figures="any", suits="any",
                                   tilt=(50.0, 50.0))
    assert [p.name for p in paths] == ["chunk_5_anyfig_anysuit_tilt50-50_0000000.npz"]
    assert [style for style, _ in cameras] == ["casino", "casino"]
    assert all(abs(tilt - 50.0) < 0.5 for _, tilt in cameras)
    cameras.clear()
    cards_data.render_frame(5, 0, spec=PatchSpec())  # without a tilt: the frame as `datasets render` draws it
    assert cameras == [(None, pytest.approx(cameras[0][1]))] and cameras[0][1] <= 35.5

    from floorman.cli import build_parser

    args = build_parser().parse_args(["models", "train-cards", "--tilted-frames", "300", "--tilt", "40-55"])
    assert (args.tilted_frames, args.tilted_seed, args.tilt) == (300, 7300, (40.0, 55.0))
    defaults = build_parser().parse_args(["models", "train-cards"])
    assert defaults.tilted_frames == 0 == cards_train.CardTrainConfig().tilted_frames  # off in the shipped recipe
    with pytest.raises(ValueError, match=r"a tilt range within \(0\.0, 75\.0\) degrees, got 10 and \(50\.0, 80\.0\)"):
        cards_train.CardTrainConfig(tilted_frames=10, tilt=(50.0, 80.0))
    with pytest.raises(SystemExit):
        build_parser().parse_args(["models", "train-cards", "--tilt", "55-40"])
