"""What the small nets' recipes share (`train-chip-sides`, `train-chip-boxes`): their settings, the command-line
options that set them, and (`small_net_train`, which imports torch) the training loop and the ONNX export.

A small net's recipe renders frames of one seed into a cache of chunks, holds the last frames out for the figures it
prints, trains in whole passes over the rest with AdamW and a one-cycle learning rate, and writes an ONNX model the
chip recogniser loads. This module imports neither torch nor the simulator, so the `floorman` command can register
the recipes' options without them.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TypeVar

from floorman.core.errors import ConfigError


def check_split(frames: int, val_frames: int, *, chunk: int) -> None:
    """ValueError unless `frames` renders hold `val_frames` held-out ones after the others, both whole chunks of a
    cache (`chunk` frames each), as the recipes' settings must (`train-chips` too)."""
    if frames <= val_frames or val_frames < 0:
        raise ValueError(f"expected frames > val_frames >= 0, got {frames} and {val_frames}")
    if frames % chunk or val_frames % chunk:
        raise ValueError(f"expected frames and val_frames multiples of {chunk} (the cache's chunks), got {frames} "
                         f"and {val_frames}")


@dataclass(frozen=True, kw_only=True)
class SmallNetConfig:
    """A small net's recipe settings; each recipe's subclass gives its cache, seed, frames, epochs and output."""

    cache: Path
    seed: int
    frames: int
    val_frames: int = 100  # the last frames of the seed, held out for the figures printed
    epochs: int
    batch: int = 256
    lr: float = 3e-3
    weight_decay: float = 1e-4
    threads: int = 1
    workers: int = 1  # processes rendering the cache
    train_seed: int = 0
    out: Path

    def chunk(self) -> int:
        """Frames per cache file (the recipe's data module's CHUNK)."""
        raise NotImplementedError

    def first_val_chunk(self) -> int:
        """The index of the first held-out chunk (the chunks come in frame order)."""
        return (self.frames - self.val_frames) // self.chunk()

    def __post_init__(self) -> None:
        check_split(self.frames, self.val_frames, chunk=self.chunk())
        if self.epochs < 1 or self.lr <= 0 or self.batch < 1 or self.threads < 1 or self.workers < 1:
            raise ValueError(f"expected positive epochs, lr, batch, threads and workers, got {self.epochs}, "
                             f"{self.lr}, {self.batch}, {self.threads}, {self.workers}")


Config = TypeVar("Config", bound=SmallNetConfig)

# The options `add_arguments` registers, by the config field each sets.
_OPTIONS = ("cache", "seed", "frames", "val_frames", "epochs", "lr", "threads", "workers", "train_seed", "out")


def add_arguments(parser: argparse.ArgumentParser, defaults: SmallNetConfig, *, figures: str, samples: str,
                  out: str) -> None:
    """Register the options a small net's recipe shares, with `defaults`' values."""
    parser.add_argument("--cache", type=Path, default=defaults.cache, help="samples cache folder")
    parser.add_argument("--seed", type=int, default=defaults.seed, help="render seed (never a test seed)")
    parser.add_argument("--frames", type=int, default=defaults.frames, help="frames to render (a multiple of 50); "
                        "the last --val-frames held out")
    parser.add_argument("--val-frames", type=int, default=defaults.val_frames, help=f"held-out frames for the "
                        f"{figures}")
    parser.add_argument("--epochs", type=int, default=defaults.epochs, help=f"passes over the training {samples}")
    parser.add_argument("--lr", type=float, default=defaults.lr, help="peak learning rate (AdamW, one cycle)")
    parser.add_argument("--threads", type=int, default=defaults.threads, help="torch CPU threads")
    parser.add_argument("--workers", type=int, default=defaults.workers, help="processes rendering the cache")
    parser.add_argument("--train-seed", type=int, default=defaults.train_seed, help="seed of the batches and init")
    parser.add_argument("--out", type=Path, help=f"ONNX output (default: the shipped {out})")


def config_from(args: argparse.Namespace, defaults: Config, *, command: str) -> Config:
    """`defaults` with the options `add_arguments` registered, as parsed; a ConfigError naming `command` when they
    do not hold (`--out` left out keeps the shipped path)."""
    given = {name: getattr(args, name) for name in _OPTIONS if getattr(args, name) is not None}
    try:
        return replace(defaults, **given)
    except ValueError as exc:
        raise ConfigError(str(exc), field=command) from None
