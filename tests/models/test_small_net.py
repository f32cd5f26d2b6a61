"""The small nets' shared recipe settings and options (`models.small_net`) and training loop (`small_net_train`)."""

from __future__ import annotations

import argparse

import numpy as np
import pytest

from floorman.core.errors import ConfigError
from floorman.models import chip_boxes_data, chip_sides_data
from floorman.models.chip_boxes_data import BoxTrainConfig
from floorman.models.chip_sides_data import SideTrainConfig
from floorman.models.small_net import SmallNetConfig, add_arguments, config_from

CONFIGS = [BoxTrainConfig, SideTrainConfig]


@pytest.mark.parametrize("config", CONFIGS)
def test_a_recipes_settings_are_checked(config: type[SmallNetConfig]) -> None:
    config()  # the shipped recipe's own settings hold
    with pytest.raises(ValueError, match="multiples of 50"):
        config(frames=120, val_frames=20)
    with pytest.raises(ValueError, match="frames > val_frames"):
        config(frames=100, val_frames=100)
    for bad in ({"epochs": 0}, {"lr": 0.0}, {"batch": 0}, {"threads": 0}, {"workers": 0}):
        with pytest.raises(ValueError, match="positive epochs"):
            config(**bad)


def test_the_held_out_chunks_follow_the_training_ones(monkeypatch: pytest.MonkeyPatch) -> None:
    assert BoxTrainConfig(frames=1500, val_frames=100).first_val_chunk() == 28
    monkeypatch.setattr(chip_sides_data, "CHUNK", 2)  # a recipe's chunk is its data module's, read when checked
    assert SideTrainConfig(frames=8, val_frames=2).first_val_chunk() == 3


def parser_for(defaults: SmallNetConfig) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser()
    add_arguments(parser, defaults, figures="figures printed", samples="sides", out="vision/data/x.onnx")
    return parser


def test_the_options_parsed_are_the_settings_the_rest_the_recipes_own() -> None:
    defaults = BoxTrainConfig()
    args = parser_for(defaults).parse_args(["--frames", "200", "--val-frames", "50", "--epochs", "3", "--lr",
                                            "0.01", "--threads", "2", "--train-seed", "7"])
    config = config_from(args, defaults, command="train-chip-boxes")
    assert type(config) is BoxTrainConfig
    assert (config.frames, config.val_frames, config.epochs, config.lr, config.threads, config.train_seed) == \
        (200, 50, 3, 0.01, 2, 7)
    assert (config.seed, config.cache, config.out, config.batch) == \
        (60100, defaults.cache, chip_boxes_data.DEFAULT_OUT, 256)  # --out left out: the shipped path


@pytest.mark.parametrize(("argv", "match"), [(["--frames", "120"], "multiples of 50"),
                                             (["--epochs", "0"], "positive epochs"),
                                             (["--frames", "100", "--val-frames", "100"], "frames > val_frames")])
def test_bad_options_are_a_config_error_naming_the_command(argv: list[str], match: str) -> None:
    args = parser_for(SideTrainConfig()).parse_args(argv)
    with pytest.raises(ConfigError, match=f"train-chip-sides.*{match}"):
        config_from(args, SideTrainConfig(), command="train-chip-sides")


@pytest.mark.train
def test_the_loop_draws_augmentation_from_its_generator_and_learns() -> None:
    torch = pytest.importorskip("torch")
    small_net_train = pytest.importorskip("floorman.models.small_net_train")
    rng = np.random.default_rng(0)
    inputs = torch.from_numpy(rng.normal(size=(256, 4)).astype(np.float32))
    targets = inputs @ torch.tensor([1.0, -2.0, 0.5, 3.0])
    config = BoxTrainConfig(epochs=30, batch=32, lr=0.1, threads=1)

    def trained() -> tuple[float, list[float]]:
        torch.manual_seed(0)
        net = torch.nn.Linear(4, 1)
        flips: list[float] = []

        def batch_loss(index: object, generator: object) -> object:
            flips.append(float(torch.rand(1, generator=generator)))
            return ((net(inputs[index])[:, 0] - targets[index]) ** 2).mean()

        small_net_train.fit(net, len(inputs), batch_loss, config=config)
        with torch.no_grad():
            return float(((net(inputs)[:, 0] - targets) ** 2).mean()), flips

    error, flips = trained()
    assert error < 0.01 * float((targets ** 2).mean())  # a linear target, learnt
    assert len(flips) == 30 * 8 and len(set(flips)) == len(flips)
    assert trained() == (error, flips)  # the order and the draws come from `train_seed` alone
