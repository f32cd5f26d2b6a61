"""The learned side reader's recipe: samples from renders, the cache, training, the ONNX export the reader loads."""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pytest

from floorman.cli import main
from floorman.core.chip_sides import RIM_ANGLES_DEG, SIDE_SHADE, SideSample, chipset_colours
from floorman.core.chips import ChipSet
from floorman.core.errors import ConfigError
from floorman.models import chip_sides_data
from floorman.models import cli as models_cli
from floorman.models.chip_sides_data import KINDS, Chips, SideTrainConfig, build_cache, frame_samples, load_cache
from floorman.vision.chips_side_net import ChipSideNet, side_samples

torch = pytest.importorskip("torch")
chip_sides_train = pytest.importorskip("floorman.models.chip_sides_train")

SEED = 59050  # a training-style seed (never a benchmark's)
CHIPSET = ChipSet.default()


def toy_sampler(image: np.ndarray, chipset: ChipSet, *, homography: np.ndarray, camera_height_mm: float,
                stacks: list[tuple[tuple[float, ...], tuple[int, ...]]]) -> list[SideSample]:
    """Each stack's lower chips as plain rims of their body's colour under a light drawn from the image, noisy (the
    camera is not needed for that)."""
    del homography, camera_height_mm
    rng = np.random.default_rng(int(image.sum()) % 1000)
    bodies, spots, counts = chipset_colours(chipset)
    values = [d.value for d in chipset.denominations]
    samples = []
    for _, chips in stacks:
        truth = np.array([values.index(v) for v in chips[:-1]], dtype=np.int64)
        light = rng.uniform(0.6, 1.2, 3).astype(np.float32)
        rim = bodies[truth][:, None, :] * SIDE_SHADE * light + rng.normal(0, 12, (len(truth), len(RIM_ANGLES_DEG), 3))
        samples.append(SideSample(rim=np.clip(rim, 0, 255).astype(np.float32),
                                  valid=np.ones((len(truth), len(RIM_ANGLES_DEG)), dtype=bool), illuminant=light,
                                  px_per_chip=3.0, truth=truth, bodies=bodies, spots=spots, spot_counts=counts,
                                  lean=False))
    return samples


def test_a_rendered_frame_gives_the_lower_chips_of_its_stacks_read_right() -> None:
    samples = next(s for s in (frame_samples(SEED, i, sampler=side_samples) for i in range(0, 8, len(KINDS))) if s)
    chips = Chips.from_samples(samples)
    assert len(chips) == sum(len(s.truth) for s in samples) > 0
    assert chips.rim.shape[1:] == (len(RIM_ANGLES_DEG), 3) and chips.bodies.shape[1:] == (5, 3)
    assert set(chips.truth.tolist()) <= set(range(5))
    assert (chips.px_per_chip >= 1.0).all()


def test_samples_are_cached_in_chunks_and_read_back(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(chip_sides_data, "CHUNK", 2)
    calls: list[int] = []

    def counted(*args: object, **kwargs: object) -> list[SideSample]:
        calls.append(1)
        return toy_sampler(*args, **kwargs)  # type: ignore[arg-type]

    paths = build_cache(tmp_path, seed=SEED, frames=4, sampler=counted)
    assert [p.name for p in paths] == [f"sides_{SEED}_0.npz", f"sides_{SEED}_2.npz"]
    first = load_cache(paths)
    rendered = len(calls)
    assert len(first) > 0 and first.stack.max() + 1 >= 2
    assert build_cache(tmp_path, seed=SEED, frames=4, sampler=counted) == paths and len(calls) == rendered  # reused
    (tmp_path / "bad.npz").write_bytes(b"not a chunk")
    with pytest.raises(ValueError, match=r"bad\.npz"):
        load_cache([tmp_path / "bad.npz"])


def test_the_recipe_needs_the_side_sampler() -> None:
    with pytest.raises(ConfigError, match="side_sampler"):
        models_cli.run_train_chip_sides(argparse.Namespace(), side_sampler=None)


@pytest.mark.train
def test_the_recipe_trains_a_reader_the_recogniser_loads(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(chip_sides_data, "CHUNK", 2)
    out = tmp_path / "sides.onnx"
    config = SideTrainConfig(cache=tmp_path / "cache", seed=SEED, frames=8, val_frames=2, epochs=12, lr=1e-2, out=out)
    path, held_out, chips = chip_sides_train.train_chip_sides(config, sampler=toy_sampler)
    assert path == out and chips > 0
    assert held_out > 0.6  # plain noisy rims of five colours: far above chance (0.2)
    net = ChipSideNet(out)
    light = np.array([0.9, 0.9, 0.9])
    bodies, _, _ = chipset_colours(CHIPSET)
    rim = np.tile(bodies[2] * SIDE_SHADE * light, (2, len(RIM_ANGLES_DEG), 1))
    evidence = net.log_evidence(rim, np.ones(rim.shape[:2], bool), illuminant=light, px_per_chip=3.0, chipset=CHIPSET)
    assert evidence.shape == (2, 5) and (evidence.argmax(axis=1) == 2).all()


@pytest.mark.train
def test_floorman_models_train_chip_sides_renders_reads_and_writes_the_model(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(chip_sides_data, "CHUNK", 2)
    out = tmp_path / "sides.onnx"
    assert main(["models", "train-chip-sides", "--cache", str(tmp_path / "cache"), "--seed", str(SEED), "--frames",
                 "4", "--val-frames", "2", "--epochs", "1", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert f"wrote {out}" in printed and "held-out accuracy" in printed
    assert ChipSideNet(out).session is not None
