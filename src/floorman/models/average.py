"""`floorman models average`: two detector checkpoints fine-tuned from the same start, their weights averaged.

A network fine-tuned on new data (another club's chips, say) learns it and forgets some of what it knew (the rare
classes: `club27` lost the dealer button's AP50 0.998 -> 0.959 in an hour on the CPU). The average of its weights and
its starting point's, `(1 - share) * base + share * tuned` tensor by tensor, often keeps both (WiSE-FT: Wortsman et
al., "Robust fine-tuning of zero-shot models", 2022): both lie in one basin of the loss. Batch norms' running
statistics are averaged like the weights; integer buffers (a norm's batch count) are the tuned checkpoint's. The
checkpoint written is the tuned one's, its network replaced (the EMA's when it holds one, as Ultralytics saves
`best.pt`), so `floorman models export --weights OUT` takes it as it is.

Needs the `train` extra (torch and Ultralytics, to unpickle the networks).
"""

from __future__ import annotations

import copy
import importlib
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from floorman.core.errors import ConfigError
from floorman.models.yolo_env import load_ultralytics

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class AverageResult:
    out: Path
    averaged: int  # floating-point tensors averaged
    kept: int  # integer tensors taken from the tuned checkpoint


def _network(checkpoint: Any, path: Path) -> Any:
    """The checkpoint's network (its EMA when it holds one), in fp32."""
    if not isinstance(checkpoint, dict) or (checkpoint.get("ema") or checkpoint.get("model")) is None:
        raise ConfigError(f"expected an Ultralytics checkpoint (a dict with 'model' or 'ema') in {path}, got "
                          f"{type(checkpoint).__name__}", source=str(path), field="checkpoint")
    return (checkpoint.get("ema") or checkpoint["model"]).float()


def average_checkpoints(base: Path, tuned: Path, *, share: float, out: Path) -> AverageResult:
    """Write `out`: `tuned`'s checkpoint with its network's weights `(1 - share) * base + share * tuned`. Refuses
    (ConfigError naming the file and tensor) networks whose tensors differ in name or shape; `out` is written whole
    or not at all."""
    if not 0.0 <= share <= 1.0:
        raise ConfigError(f"expected a share from 0 to 1, got {share}", field="--share")
    for path in (base, tuned):
        if not path.is_file():
            raise ConfigError(f"expected a checkpoint (.pt) at {path}, got no such file", source=str(path),
                              field="checkpoint")
    load_ultralytics()  # the checkpoints pickle Ultralytics' classes
    torch = importlib.import_module("torch")
    checkpoints = [torch.load(str(path), map_location="cpu", weights_only=False) for path in (base, tuned)]
    first, second = (_network(c, p).state_dict() for c, p in zip(checkpoints, (base, tuned), strict=True))
    if first.keys() != second.keys():
        missing = sorted(first.keys() ^ second.keys())[0]
        raise ConfigError(f"expected networks of one architecture, got tensor {missing!r} in only one of {base} and "
                          f"{tuned}", source=str(tuned), field="checkpoint")
    mixed, averaged, kept = {}, 0, 0
    for name, value in second.items():
        if first[name].shape != value.shape:
            raise ConfigError(f"expected networks of one architecture, got tensor {name!r} of shape "
                              f"{tuple(first[name].shape)} in {base} and {tuple(value.shape)} in {tuned}",
                              source=str(tuned), field="checkpoint")
        if value.dtype.is_floating_point:
            mixed[name] = (1.0 - share) * first[name] + share * value
            averaged += 1
        else:
            mixed[name] = value
            kept += 1
    checkpoint = dict(checkpoints[1])
    network = copy.deepcopy(_network(checkpoint, tuned))
    network.load_state_dict(mixed)
    checkpoint.update(model=network.half(), ema=None, optimizer=None, updates=None, epoch=-1,
                      floorman_averaged=f"{1.0 - share:g} x {base} + {share:g} x {tuned}")
    out.parent.mkdir(parents=True, exist_ok=True)
    partial = out.with_name(out.name + ".partial")
    torch.save(checkpoint, str(partial))
    partial.replace(out)
    logger.info("averaged %d tensors (%d kept) into %s", averaged, kept, out)
    return AverageResult(out=out, averaged=averaged, kept=kept)
