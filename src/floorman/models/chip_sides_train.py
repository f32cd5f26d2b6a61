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
import time
import warnings
from pathlib import Path

import torch
from torch import nn

from floorman.core.chip_sides import FEATURES_KEY, FEATURES_VERSION, PER_ANGLE, PER_CANDIDATE, side_features
from floorman.models.chip_sides_data import CHUNK, Chips, SideSampler, SideTrainConfig, build_cache, load_cache

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
    generator = torch.Generator().manual_seed(config.train_seed)
    steps = config.epochs * ((len(train) + config.batch - 1) // config.batch)
    optimiser = torch.optim.AdamW(net.parameters(), lr=config.lr, weight_decay=config.weight_decay)
    schedule = torch.optim.lr_scheduler.OneCycleLR(optimiser, config.lr, total_steps=steps)
    loss_of = nn.CrossEntropyLoss()
    for epoch in range(config.epochs):
        started, total = time.perf_counter(), 0.0
        net.train()
        order = torch.randperm(len(train), generator=generator)
        for first in range(0, len(train), config.batch):
            index = order[first:first + config.batch]
            loss = loss_of(net(per[index], candidate[index]), truth[index])
            optimiser.zero_grad()
            loss.backward()
            optimiser.step()
            schedule.step()
            total += loss.item() * len(index)
        logger.info("epoch %d: loss %.4f (%.0f s)", epoch, total / len(train), time.perf_counter() - started)


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
    import onnx  # export tooling of the `train` extra

    path.parent.mkdir(parents=True, exist_ok=True)
    dummy = (torch.zeros(2, 5, PER_ANGLE, 29), torch.zeros(2, 5, PER_CANDIDATE))
    with warnings.catch_warnings():  # the TorchScript exporter is deprecated but needs no onnxscript
        warnings.simplefilter("ignore", DeprecationWarning)
        torch.onnx.export(net.eval(), dummy, str(path), input_names=["per_angle", "per_candidate"],
                          output_names=["scores"], opset_version=17, dynamo=False,
                          dynamic_axes={"per_angle": {0: "n", 1: "d", 3: "angles"}, "per_candidate": {0: "n", 1: "d"},
                                        "scores": {0: "n", 1: "d"}})
    model = onnx.load(str(path))
    entry = model.metadata_props.add()
    entry.key, entry.value = FEATURES_KEY, FEATURES_VERSION
    onnx.save(model, str(path))
    return path


def train_chip_sides(config: SideTrainConfig, *, sampler: SideSampler) -> tuple[Path, float, int]:
    """Render (or reuse) the cache, train, export the ONNX model; its path, held-out accuracy and chips held out."""
    torch.set_num_threads(config.threads)
    torch.manual_seed(config.train_seed)
    paths = build_cache(config.cache, seed=config.seed, frames=config.frames, sampler=sampler, workers=config.workers)
    first_val = (config.frames - config.val_frames) // CHUNK  # the chunks come in frame order
    train, val = load_cache(paths[:first_val]), load_cache(paths[first_val:])
    logger.info("training on %d chips, validating on %d", len(train), len(val))
    net = SideNet()
    fit(net, train, config=config)
    held_out = accuracy(net, val)
    logger.info("held-out accuracy %.4f on %d chips", held_out, len(val))
    return export_onnx(net, config.out), held_out, len(val)
