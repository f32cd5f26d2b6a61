"""`floorman models train-chip-sides`: train the learned side reader on rendered stacks and export it to ONNX.

The network (`SideNet`, about 12 k parameters) scores one candidate denomination of one lower chip at a time from
`core.chip_sides.side_features`: three 1-D convolutions over the rim's angles (the samples against the candidate's
body and spots), their mean and max over the angles that lie in the image, and a small head that adds the
candidate's own colours, the side's pixels per chip and the light. A chip's candidates are scored alike and
softmaxed (cross-entropy on the true denomination), so a club's chip set is an input, not a class list. Trained on
one CPU thread with AdamW and a one-cycle learning rate, in whole passes over the cache (`chip_sides_data`); the
last --val-frames frames are held out for the accuracy printed.

The ONNX model takes `per_angle` (n, d, PER_ANGLE, angles) and `per_candidate` (n, d, PER_CANDIDATE) and gives
`scores` (n, d); it carries `core.chip_sides.FEATURES_KEY`, which `floorman.vision.chips_side_net` checks.
"""

from __future__ import annotations

import logging
from pathlib import Path

import torch
from torch import nn

from floorman.core.chip_sides import FEATURES_KEY, FEATURES_VERSION, PER_ANGLE, PER_CANDIDATE, side_features
from floorman.models import small_net_train
from floorman.models.chip_sides_data import Chips, SideSampler, SideTrainConfig, build_cache, load_cache

logger = logging.getLogger(__name__)


class SideNet(nn.Module):
    """(n, d, PER_ANGLE, angles), (n, d, PER_CANDIDATE) -> (n, d) scores of each chip's candidates."""

    def __init__(self, width: int = 32) -> None:
        super().__init__()
        self.conv = nn.Sequential(nn.Conv1d(PER_ANGLE, width, 3, padding=1), nn.ReLU(),
                                  nn.Conv1d(width, width, 3, padding=1), nn.ReLU(),
                                  nn.Conv1d(width, width, 3, padding=1), nn.ReLU())
        self.head = nn.Sequential(nn.Linear(2 * width + PER_CANDIDATE, 64), nn.ReLU(), nn.Linear(64, 1))

    def forward(self, per_angle: torch.Tensor, per_candidate: torch.Tensor) -> torch.Tensor:
        n, d, features, angles = per_angle.shape
        flat = per_angle.reshape(n * d, features, angles)
        seen = flat[:, -1:, :]  # the last feature: the sample lies in the image
        hidden = self.conv(flat)
        mean = (hidden * seen).sum(-1) / seen.sum(-1).clamp(min=1.0)
        peak = (hidden * seen - 1e4 * (1.0 - seen)).max(-1).values.clamp(min=-10.0)
        joined = torch.cat([mean, peak, per_candidate.reshape(n * d, -1)], 1)
        scores: torch.Tensor = self.head(joined).reshape(n, d)
        return scores


def tensors(chips: Chips) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """The net's inputs and the true candidate of each chip."""
    per, candidate = side_features(chips.rim, chips.valid, chips.illuminant, chips.px_per_chip, chips.bodies,
                                   chips.spots, chips.spot_counts)
    return torch.from_numpy(per), torch.from_numpy(candidate), torch.from_numpy(chips.truth)


def fit(net: SideNet, train: Chips, *, config: SideTrainConfig) -> None:
    """Train for `config.epochs` passes over `train`."""
    if not len(train):
        raise ValueError("expected training chips, got none (no stacks of two chips or more read right?)")
    per, candidate, truth = tensors(train)
    loss_of = nn.CrossEntropyLoss()

    def batch_loss(index: torch.Tensor, _generator: torch.Generator) -> torch.Tensor:  # no augmentation
        loss: torch.Tensor = loss_of(net(per[index], candidate[index]), truth[index])
        return loss

    small_net_train.fit(net, len(train), batch_loss, config=config)


def accuracy(net: SideNet, chips: Chips, *, batch: int = 2048) -> float:
    """The share of `chips` whose true denomination the net scores highest."""
    if not len(chips):
        return float("nan")
    per, candidate, truth = tensors(chips)
    net.eval()
    with torch.no_grad():
        best = torch.cat([net(per[i:i + batch], candidate[i:i + batch]).argmax(1) for i in range(0, len(chips), batch)])
    return float((best == truth).float().mean())


def export_onnx(net: SideNet, path: Path) -> Path:
    """Write the network as ONNX (chips and candidates dynamic) with its features' version."""
    dummy = (torch.zeros(2, 5, PER_ANGLE, 29), torch.zeros(2, 5, PER_CANDIDATE))
    return small_net_train.export_onnx(net, path, dummy, inputs=("per_angle", "per_candidate"), outputs=("scores",),
                                       dynamic_axes={"per_angle": {0: "n", 1: "d", 3: "angles"},
                                                     "per_candidate": {0: "n", 1: "d"}, "scores": {0: "n", 1: "d"}},
                                       metadata=(FEATURES_KEY, FEATURES_VERSION))


def train_chip_sides(config: SideTrainConfig, *, sampler: SideSampler) -> tuple[Path, float, int]:
    """Render (or reuse) the cache, train, export the ONNX model; its path, held-out accuracy and chips held out."""
    small_net_train.start(config)
    paths = build_cache(config.cache, seed=config.seed, frames=config.frames, sampler=sampler, workers=config.workers)
    train, val = load_cache(paths[:config.first_val_chunk()]), load_cache(paths[config.first_val_chunk():])
    logger.info("training on %d chips, validating on %d", len(train), len(val))
    net = SideNet()
    fit(net, train, config=config)
    held_out = accuracy(net, val)
    logger.info("held-out accuracy %.4f on %d chips", held_out, len(val))
    return export_onnx(net, config.out), held_out, len(val)
