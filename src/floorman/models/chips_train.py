"""`floorman models train-chips`: train the chip offset net on rendered stack patches and export it to ONNX.

The network (`OffsetNet`, about 0.23 M parameters) reads a stack's patch (`core.stack_patch.PatchSpec`: the box's
neighbourhood turned so the stack grows up, a chip 28 px across, BGR 0..255) and gives the top disc's offset over
the base along the patch's up direction (patch px) with the log of its spread (trained on the Gaussian negative
log-likelihood), and the base's position in the patch (an auxiliary target, Huber). Training draws each batch from
the patch cache (`chips_data`) with augmentation: the patch mirrored left-right (the base's x with it), exposure,
white balance and noise. Runs on one CPU thread by default.

The ONNX model carries its patch geometry as metadata (`floorman_patch`: "48,96,28.0,2"), which
`floorman.vision.chips_cnn` reads, so training and inference cut patches alike (`chips_data.patch_matrix` and
`chips_cnn.patch_geometry` are `core.stack_patch.patch_matrix` on the simulator's camera and on a calibration's: a
test holds them together).
"""

from __future__ import annotations

import logging
import math
import time
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
from torch import nn
from torch.nn import functional

from floorman.core.stack_patch import PatchSpec
from floorman.models.chips_data import CHUNK, ChipBoxes, Samples, build_cache, load_cache
from floorman.models.small_net import check_split

logger = logging.getLogger(__name__)

PATCH_KEY = "floorman_patch"  # as `floorman.vision.chips_cnn` reads it
DEFAULT_OUT = Path(__file__).resolve().parents[1] / "vision" / "data" / "chip_offsets.onnx"
OFFSET_UNIT = 10.0  # the net's outputs are in this many patch px
LOG_SIGMA_RANGE = (-5.0, 3.0)  # its log-spread (in OFFSET_UNIT) is clamped to this
AUX_WEIGHT = 0.3  # the base position's loss beside the offset's
_WARMUP = 200  # steps of a linear warm-up before the cosine


@dataclass(frozen=True)
class ChipTrainConfig:
    """The shipped recipe's settings (see CHIPS_MODEL_CARD.md)."""

    cache: Path = Path("/tmp/floorman_chips")
    seed: int = 8100
    frames: int = 1200
    val_frames: int = 50  # the last frames of the seed, held out for the validation figure
    minutes: float = 25.0
    steps: int | None = None  # a fixed number of steps instead of minutes (reproducible on any machine)
    batch: int = 64
    lr: float = 3e-3
    weight_decay: float = 1e-4
    threads: int = 1
    train_seed: int = 0
    init: Path | None = None  # start from this exported net (`load_exported`), its batch norms frozen
    out: Path = DEFAULT_OUT

    def __post_init__(self) -> None:
        check_split(self.frames, self.val_frames, chunk=CHUNK)
        if (self.minutes <= 0 or self.lr <= 0 or self.batch < 1 or self.threads < 1
                or (self.steps is not None and self.steps < 1)):
            raise ValueError(f"expected positive minutes, lr, batch, threads and steps, got {self.minutes}, "
                             f"{self.lr}, {self.batch}, {self.threads}, {self.steps}")


class OffsetNet(nn.Module):
    """Patch (N, 3, H, W) BGR 0..255 -> (N, 4): offset, log-spread (OFFSET_UNIT), base x, y (from the centre)."""

    def __init__(self, spec: PatchSpec | None = None) -> None:
        super().__init__()
        spec = spec or PatchSpec()

        def conv(cin: int, cout: int, *, stride: int = 1) -> list[nn.Module]:
            return [nn.Conv2d(cin, cout, 3, stride, 1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(inplace=True)]

        self.features = nn.Sequential(*conv(3, 16), *conv(16, 24, stride=2), *conv(24, 24), *conv(24, 32, stride=2),
                                      *conv(32, 32), *conv(32, 48, stride=2), *conv(48, 48))
        cells = math.ceil(spec.height / 8) * math.ceil(spec.width / 8)
        self.head = nn.Sequential(nn.Flatten(), nn.Linear(48 * cells, 48), nn.ReLU(inplace=True), nn.Linear(48, 4))

    def forward(self, patch: torch.Tensor) -> torch.Tensor:
        out: torch.Tensor = self.head(self.features(patch / 255.0 - 0.5))
        return out


class _Exported(nn.Module):
    """The net with its offset and spread in patch px: (N, 2) offset, log-spread."""

    def __init__(self, net: OffsetNet) -> None:
        super().__init__()
        self.net = net

    def forward(self, patch: torch.Tensor) -> torch.Tensor:
        out = self.net(patch)
        low, high = LOG_SIGMA_RANGE
        return torch.stack([out[:, 0] * OFFSET_UNIT, out[:, 1].clamp(low, high) + math.log(OFFSET_UNIT)], dim=1)


def load_exported(net: OffsetNet, path: Path) -> OffsetNet:
    """`net` with the weights of an exported ONNX net (`export_onnx`): the exporter folded each batch norm into its
    convolution, so each norm is set to pass its input through plus the folded bias (exact in eval mode; fine-tuning
    keeps the norms frozen, `_freeze_norms`)."""
    import onnx  # export tooling of the `train` extra
    from google.protobuf.message import DecodeError  # type: ignore[import-untyped]
    from onnx import numpy_helper

    try:
        model = onnx.load(str(path))
    except (OSError, DecodeError) as exc:
        raise ValueError(f"{path}: cannot read an ONNX chip offset net: {exc}") from None
    weights = {i.name: numpy_helper.to_array(i) for i in model.graph.initializer}
    convs = [node.input[1:] for node in model.graph.node if node.op_type == "Conv"]
    layers = [m for m in net.features if isinstance(m, nn.Conv2d)]
    norms = [m for m in net.features if isinstance(m, nn.BatchNorm2d)]
    if len(convs) != len(layers) or any(len(c) != 2 for c in convs):
        raise ValueError(f"{path}: expected {len(layers)} convolutions with folded biases, got {len(convs)}")
    with torch.no_grad():
        for (weight, bias), conv, norm in zip(convs, layers, norms, strict=True):
            _copy(conv.weight, weights.get(weight), path=path, name=weight)
            norm.reset_parameters()
            if norm.running_var is not None:  # the net's norms track statistics
                norm.running_var.fill_(1.0 - norm.eps)
            _copy(norm.bias, weights.get(bias), path=path, name=bias)
        for name, parameter in net.head.named_parameters():  # kept by their names (`_Exported` wraps as `net`)
            _copy(parameter, weights.get(f"net.head.{name}"), path=path, name=f"net.head.{name}")
    return net


def _copy(target: torch.Tensor, value: np.ndarray | None, *, path: Path, name: str) -> None:
    if value is None or tuple(value.shape) != tuple(target.shape):
        shape = None if value is None else tuple(value.shape)
        raise ValueError(f"{path}: expected {name} of shape {tuple(target.shape)}, got {shape}")
    target.copy_(torch.from_numpy(np.array(value, dtype=np.float32)))


def _freeze_norms(net: OffsetNet) -> None:
    """Batch norms in eval mode (their statistics kept), the rest training."""
    for module in net.modules():
        if isinstance(module, nn.BatchNorm2d):
            module.eval()


def augment(batch: torch.Tensor, base: torch.Tensor, rng: np.random.Generator, generator: torch.Generator, *,
            width: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Mirrored left-right (the base's x too), exposure, white balance and noise; (patches, bases)."""
    n = batch.shape[0]
    flip = torch.from_numpy(rng.random(n) < 0.5)
    batch, base = batch.clone(), base.clone()
    batch[flip] = batch[flip].flip(3)
    base[flip, 0] = width - base[flip, 0]
    gain = torch.from_numpy(rng.uniform(0.75, 1.25, (n, 1, 1, 1)).astype(np.float32))
    bias = torch.from_numpy(rng.uniform(-20.0, 20.0, (n, 3, 1, 1)).astype(np.float32))
    noise = torch.randn(batch.shape, generator=generator) * float(rng.uniform(0.0, 4.0))
    return (batch * gain + bias + noise).clamp(0.0, 255.0), base


def _loss(net: OffsetNet, batch: torch.Tensor, offset: torch.Tensor, base: torch.Tensor, *,
          spec: PatchSpec) -> tuple[torch.Tensor, torch.Tensor]:
    """The loss and the batch's mean absolute offset error (patch px)."""
    out = net(batch)
    log_sigma = out[:, 1].clamp(*LOG_SIGMA_RANGE)
    target = offset / OFFSET_UNIT
    nll = (0.5 * ((out[:, 0] - target) / log_sigma.exp()) ** 2 + log_sigma).mean()
    centre = torch.tensor([spec.width / 2.0, spec.height / 2.0])
    aux = functional.smooth_l1_loss(out[:, 2:], (base - centre) / OFFSET_UNIT)
    return nll + AUX_WEIGHT * aux, (out[:, 0] - target).abs().mean() * OFFSET_UNIT


def _tensor(patches: np.ndarray) -> torch.Tensor:
    return torch.from_numpy(np.ascontiguousarray(patches.transpose(0, 3, 1, 2))).float()


def fit(net: OffsetNet, train: Samples, *, config: ChipTrainConfig, spec: PatchSpec) -> int:
    """Train for `config.steps` steps or `config.minutes`; the steps taken."""
    if not len(train):
        raise ValueError("expected training patches, got none (no chip stacks rendered?)")
    rng = np.random.default_rng(config.train_seed)
    generator = torch.Generator().manual_seed(config.train_seed)
    optimiser = torch.optim.AdamW(net.parameters(), lr=config.lr, weight_decay=config.weight_decay)
    patches = torch.from_numpy(np.ascontiguousarray(train.patches.transpose(0, 3, 1, 2)))
    offsets, bases = torch.from_numpy(train.offset), torch.from_numpy(train.base)
    started = time.perf_counter()
    budget = config.minutes * 60.0
    step = 0
    errors: list[float] = []
    net.train()
    if config.init is not None:
        _freeze_norms(net)
    while True:
        elapsed = time.perf_counter() - started
        progress = step / config.steps if config.steps is not None else elapsed / budget
        if progress >= 1.0:
            break
        lr = config.lr * min(1.0, (step + 1) / _WARMUP) * 0.5 * (1.0 + math.cos(math.pi * progress))
        for group in optimiser.param_groups:
            group["lr"] = lr
        index = torch.from_numpy(rng.integers(0, len(train), config.batch))
        batch, base = augment(patches[index].float(), bases[index], rng, generator, width=spec.width)
        loss, error = _loss(net, batch, offsets[index], base, spec=spec)
        optimiser.zero_grad()
        loss.backward()  # type: ignore[no-untyped-call]
        optimiser.step()
        errors.append(error.item())
        step += 1
        if step % 500 == 0:
            logger.info("step %d (%.0f s): lr %.5f, mean offset error %.2f px", step, elapsed, lr,
                        float(np.mean(errors[-500:])))
    return step


def evaluate(net: OffsetNet, samples: Samples, *, batch: int = 512) -> float:
    """The median absolute offset error (patch px) on `samples`."""
    net.eval()
    with torch.no_grad():
        out = torch.cat([net(_tensor(samples.patches[i:i + batch])) for i in range(0, len(samples), batch)])
    return float(np.median(np.abs(out[:, 0].numpy() * OFFSET_UNIT - samples.offset))) if len(samples) else math.nan


def export_onnx(net: OffsetNet, path: Path, *, spec: PatchSpec) -> Path:
    """Write the network as ONNX (offset and log-spread in patch px; batch dimension dynamic) with its patch
    geometry."""
    import onnx  # export tooling of the `train` extra

    path.parent.mkdir(parents=True, exist_ok=True)
    dummy = torch.zeros(1, 3, spec.height, spec.width)
    with warnings.catch_warnings():  # the TorchScript exporter is deprecated but needs no onnxscript
        warnings.simplefilter("ignore", DeprecationWarning)
        torch.onnx.export(_Exported(net.eval()), (dummy,), str(path), input_names=["patch"], output_names=["offset"],
                          dynamic_axes={"patch": {0: "n"}, "offset": {0: "n"}}, opset_version=17, dynamo=False)
    net.eval()
    model = onnx.load(str(path))
    entry = model.metadata_props.add()
    entry.key, entry.value = PATCH_KEY, spec.encode()
    onnx.save(model, str(path))
    return path


def train_chips(config: ChipTrainConfig, *, chip_boxes: ChipBoxes | None = None) -> tuple[Path, float]:
    """Render (or reuse) the patch cache, train, report the held-out median offset error, export the ONNX model
    (`chip_boxes`: a detector's boxes of a frame, for patches on them too: `train-chips --detector-boxes`)."""
    torch.set_num_threads(config.threads)
    torch.manual_seed(config.train_seed)
    spec = PatchSpec()
    paths = build_cache(config.cache, seed=config.seed, frames=config.frames, spec=spec, chip_boxes=chip_boxes)
    first_val = (config.frames - config.val_frames) // CHUNK  # the chunks come in frame order
    train = load_cache(paths[:first_val], spec=spec)
    val = load_cache(paths[first_val:], spec=spec)
    logger.info("training on %d patches, validating on %d", len(train), len(val))
    net = OffsetNet(spec)
    if config.init is not None:
        load_exported(net, config.init)
        logger.info("from %s: held-out median offset error %.2f px before training", config.init,
                    evaluate(net, val))
    steps = fit(net, train, config=config, spec=spec)
    error = evaluate(net, val)
    logger.info("%d steps; held-out median offset error %.2f px on %d patches", steps, error, len(val))
    return export_onnx(net, config.out, spec=spec), error
