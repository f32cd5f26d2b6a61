"""`floorman models train-chip-boxes`: train the learned box-side reader on the shipped detector's chip boxes over
rendered frames, and export it to ONNX.

The network (`BoxNet`, about 81 k parameters) reads one side's strip (`core.chip_box_strips`: rows along the side,
columns outwards, one per image pixel): four 3x3 convolutions with the rows pooled by two twice and then averaged,
which leaves a profile across the side at the image's own pixels; two 1-D convolutions over it; a head that adds
the strip's scalars (where the stack grows, the side's length) and gives the true side's offset outwards of the
detector's (px) and the log of its spread. Trained with the Gaussian negative log-likelihood (targets clipped to
CLIP_PX: a side farther off lies past the strip), AdamW and a one-cycle learning rate, the strips flipped along the
side half the time; the last --val-frames frames are held out for the figures printed.

The ONNX model takes `strip` (n, 3, STRIP_ALONG, 2 * STRIP_DEPTH_PX) in [0, 1] and `scalars` (n, SCALARS) and
gives `offset` (n, 2); it carries `core.chip_box_strips.STRIPS_KEY`, which `floorman.vision.chips_box_net` checks.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
from torch import nn

from floorman.core.chip_box_strips import SCALARS, STRIP_ALONG, STRIP_DEPTH_PX, STRIPS_KEY, strips_spec
from floorman.models import small_net_train
from floorman.models.chip_boxes_data import BoxesFactory, BoxTrainConfig, Sides, build_cache, load_cache

logger = logging.getLogger(__name__)

CLIP_PX = 20.0
_LOG_SIGMA = (-3.0, 4.0)  # the spread's log is kept in this range in the loss


class BoxNet(nn.Module):
    """(n, 3, STRIP_ALONG, 2 * STRIP_DEPTH_PX), (n, SCALARS) -> (n, 2): the side's offset (px) and log spread."""

    def __init__(self, width: int = 32) -> None:
        super().__init__()
        self.strip = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.ReLU(), nn.Conv2d(16, width, 3, padding=1),
                                   nn.ReLU(), nn.MaxPool2d((2, 1)), nn.Conv2d(width, width, 3, padding=1), nn.ReLU(),
                                   nn.MaxPool2d((2, 1)), nn.Conv2d(width, width, 3, padding=1), nn.ReLU())
        self.profile = nn.Sequential(nn.Conv1d(width, width, 5, padding=2), nn.ReLU(),
                                     nn.Conv1d(width, 16, 5, padding=2), nn.ReLU())
        self.head = nn.Sequential(nn.Linear(16 * 2 * STRIP_DEPTH_PX + SCALARS, 64), nn.ReLU(), nn.Linear(64, 2))

    def forward(self, strip: torch.Tensor, scalars: torch.Tensor) -> torch.Tensor:
        profile = self.profile(self.strip(strip).mean(2)).flatten(1)
        out: torch.Tensor = self.head(torch.cat([profile, scalars], 1))
        return out


def gaussian_nll(out: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    """Mean negative log-likelihood (up to a constant) of `target` under the net's offsets and spreads."""
    log_sigma = out[:, 1].clamp(*_LOG_SIGMA)
    return (0.5 * ((target - out[:, 0]) / log_sigma.exp()) ** 2 + log_sigma).mean()


def tensors(sides: Sides) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """The net's inputs and the clipped targets."""
    strips = torch.from_numpy(np.ascontiguousarray(sides.strip.transpose(0, 3, 1, 2))).float() / 255.0
    targets = torch.from_numpy(np.clip(sides.offset, -CLIP_PX, CLIP_PX).astype(np.float32))
    return strips, torch.from_numpy(sides.scalars.astype(np.float32)), targets


@dataclass(frozen=True)
class HeldOut:
    """Mean absolute error of the sides (px) as the net and as the detector put them, and the share over 2 px."""

    sides: int
    net_mae: float
    box_mae: float
    net_over_2px: float
    box_over_2px: float


def fit(net: BoxNet, train: Sides, *, config: BoxTrainConfig) -> None:
    """Train for `config.epochs` passes over `train`, each strip flipped along its side half the time."""
    if not len(train):
        raise ValueError("expected training sides, got none (no chip box matched a stack in sight?)")
    strips, scalars, targets = tensors(train)

    def batch_loss(index: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
        batch = strips[index]
        flip = torch.rand(len(index), 1, 1, 1, generator=generator) < 0.5
        batch = torch.where(flip, batch.flip(2), batch)  # a side read from either end
        return gaussian_nll(net(batch, scalars[index]), targets[index])

    small_net_train.fit(net, len(train), batch_loss, config=config)


def held_out(net: BoxNet, sides: Sides, *, batch: int = 2048) -> HeldOut:
    """The net's and the detector's side errors on `sides`."""
    if not len(sides):
        return HeldOut(0, float("nan"), float("nan"), float("nan"), float("nan"))
    strips, scalars, targets = tensors(sides)
    net.eval()
    with torch.no_grad():
        offsets = torch.cat([net(strips[i:i + batch], scalars[i:i + batch])[:, 0]
                             for i in range(0, len(sides), batch)])
    net_error = (offsets - targets).abs()
    box_error = targets.abs()
    return HeldOut(len(sides), float(net_error.mean()), float(box_error.mean()),
                   float((net_error > 2.0).float().mean()), float((box_error > 2.0).float().mean()))


def export_onnx(net: BoxNet, path: Path) -> Path:
    """Write the network as ONNX (the batch dynamic) with its strips' spec."""
    dummy = (torch.zeros(4, 3, STRIP_ALONG, 2 * STRIP_DEPTH_PX), torch.zeros(4, SCALARS))
    return small_net_train.export_onnx(net, path, dummy, inputs=("strip", "scalars"), outputs=("offset",),
                                       dynamic_axes={"strip": {0: "n"}, "scalars": {0: "n"}, "offset": {0: "n"}},
                                       metadata=(STRIPS_KEY, strips_spec()))


def train_chip_boxes(config: BoxTrainConfig, *, boxes: BoxesFactory) -> tuple[Path, HeldOut]:
    """Render (or reuse) the cache, train, export the ONNX model; its path and the held-out figures."""
    small_net_train.start(config)
    paths = build_cache(config.cache, seed=config.seed, frames=config.frames, boxes=boxes,
                        workers=config.workers)
    train, val = load_cache(paths[:config.first_val_chunk()]), load_cache(paths[config.first_val_chunk():])
    logger.info("training on %d sides, validating on %d", len(train), len(val))
    net = BoxNet()
    fit(net, train, config=config)
    figures = held_out(net, val)
    logger.info("held-out sides: mean error %.2f px (the detector's %.2f), over 2 px %.1f %% (%.1f %%) of %d",
                figures.net_mae, figures.box_mae, 100 * figures.net_over_2px, 100 * figures.box_over_2px,
                figures.sides)
    return export_onnx(net, config.out), figures
