"""The small nets' training loop and ONNX export (`train-chip-sides`, `train-chip-boxes`; torch, the `train` extra).

Each recipe gives its net, the number of training samples and a function that returns one batch's loss from the
batch's sample indices (drawing any augmentation from the generator it is handed); `fit` runs the passes, and
`export_onnx` writes the net with the metadata entry its vision reader checks.
"""

from __future__ import annotations

import logging
import time
import warnings
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import torch
from torch import nn

from floorman.models.small_net import SmallNetConfig

logger = logging.getLogger(__name__)

BatchLoss = Callable[[torch.Tensor, torch.Generator], torch.Tensor]  # (sample indices, generator) -> mean loss


def start(config: SmallNetConfig) -> None:
    """Set torch's threads and seed as the recipe's settings say (before the net is built)."""
    torch.set_num_threads(config.threads)
    torch.manual_seed(config.train_seed)


def fit(net: nn.Module, samples: int, batch_loss: BatchLoss, *, config: SmallNetConfig) -> None:
    """Train `net` for `config.epochs` shuffled passes over `samples` samples in batches of `config.batch`: AdamW
    (`config.weight_decay`) and a one-cycle learning rate peaking at `config.lr`, the order drawn from
    `config.train_seed`."""
    generator = torch.Generator().manual_seed(config.train_seed)
    steps = config.epochs * ((samples + config.batch - 1) // config.batch)
    optimiser = torch.optim.AdamW(net.parameters(), lr=config.lr, weight_decay=config.weight_decay)
    schedule = torch.optim.lr_scheduler.OneCycleLR(optimiser, config.lr, total_steps=steps)
    for epoch in range(config.epochs):
        started, total = time.perf_counter(), 0.0
        net.train()
        order = torch.randperm(samples, generator=generator)
        for first in range(0, samples, config.batch):
            index = order[first:first + config.batch]
            loss = batch_loss(index, generator)
            optimiser.zero_grad()
            torch.autograd.backward(loss)
            optimiser.step()
            schedule.step()
            total += loss.item() * len(index)
        logger.info("epoch %d: loss %.4f (%.0f s)", epoch, total / samples, time.perf_counter() - started)


def export_onnx(net: nn.Module, path: Path, dummy: tuple[torch.Tensor, ...], *, inputs: Sequence[str],
                outputs: Sequence[str], dynamic_axes: Mapping[str, Mapping[int, str]],
                metadata: tuple[str, str]) -> Path:
    """Write `net` as ONNX (opset 17, traced on `dummy`) with the metadata entry (key, value) its reader checks."""
    import onnx  # export tooling of the `train` extra

    path.parent.mkdir(parents=True, exist_ok=True)
    with warnings.catch_warnings():  # the TorchScript exporter is deprecated but needs no onnxscript
        warnings.simplefilter("ignore", DeprecationWarning)
        torch.onnx.export(net.eval(), dummy, str(path), input_names=list(inputs), output_names=list(outputs),
                          opset_version=17, dynamo=False,
                          dynamic_axes={name: dict(axes) for name, axes in dynamic_axes.items()})
    model = onnx.load(str(path))
    entry = model.metadata_props.add()
    entry.key, entry.value = metadata
    onnx.save(model, str(path))
    return path
