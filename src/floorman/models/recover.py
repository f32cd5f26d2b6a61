"""A trainable Ultralytics checkpoint rebuilt from an exported ONNX detector (`floorman models recover`).

The export folds each convolution's batch norm into the convolution (weight W, bias b): the ONNX file holds
the trained network but no checkpoint to fine-tune. Training checkpoints live outside git (under runs/) and a
fresh checkout has none, so the shipped detector could only be retrained from scratch. This module builds the
model YAML's network, copies every convolution's tensors from the ONNX initializers (Ultralytics' export keeps
the torch parameter names: `model.2.cv1.conv.weight`), and gives each folded batch norm back statistics that
leave the function unchanged: with z = W x its pre-norm output, mean m and variance v of z over calibration
images, the norm is set to running mean m, running variance v, weight sqrt(v + eps) and bias b + m, so that in
eval mode BN(z) = z + b exactly, and in train mode (batch statistics close to m, v) nearly so. Fine-tuning then
starts from the shipped network, not from a network whose norms rescale every channel to unit variance.

The checkpoint is checked before it is written: the rebuilt network as saved and ONNX Runtime read the same
images, and the largest difference of the box coordinates (input px) and of the class scores is reported (and
must stay under `max_box_px` / `max_score`). It is saved in fp32, not fp16 as Ultralytics saves its own: the new
statistics rounded to fp16 no longer cancel exactly and, over 88 convolutions, moved boxes by up to 1.1 px.
"""

from __future__ import annotations

import datetime
import importlib
import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import numpy.typing as npt
import onnx
from onnx import numpy_helper
from pydantic import BaseModel, ConfigDict, Field

from floorman.core.errors import FloormanError
from floorman.models.crops import scaled_level
from floorman.models.export import letterbox_tensor
from floorman.models.registry import LEVELS_KEY, model_info
from floorman.models.train import TrainConfig
from floorman.models.yolo_env import load_ultralytics

logger = logging.getLogger(__name__)

FloatArray = npt.NDArray[np.float64]
OVERLAP: float = TrainConfig.model_fields["overlap"].default  # the windows' overlap the recipe trains with


class RecoverError(FloormanError):
    """An ONNX detector could not be turned back into a checkpoint."""


class RecoverConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    onnx_path: Path = Field(description="The fp32 ONNX detector (Ultralytics export) to rebuild.")
    out: Path = Field(description="Where the checkpoint (.pt) is written.")
    images: tuple[Path, ...] = Field(min_length=1, description="Calibration images (rendered frames, cut into the "
                                     "detector's pyramid windows, or training windows, fed whole) the batch norms' "
                                     "statistics are measured on and the check is run on.")
    model: str = Field(default="yolo11n.yaml", description="Ultralytics model YAML the ONNX was trained from.")
    batch: int = Field(default=16, ge=1, description="Images run together.")
    threads: int | None = Field(default=None, ge=1, description="CPU threads for torch (None: every core).")
    max_box_px: float = Field(default=0.5, gt=0, description="Largest box coordinate difference (input px) "
                              "between the checkpoint and the ONNX file accepted.")
    max_score: float = Field(default=0.01, gt=0, description="Largest class score difference accepted.")


class RecoverResult(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    out: Path
    convolutions: int = Field(description="Convolutions whose tensors came from the ONNX file.")
    norms: int = Field(description="Batch norms given statistics.")
    images: int = Field(description="Images given.")
    windows: int = Field(description="Network inputs (windows) the statistics and the check ran on.")
    box_px: float = Field(description="Largest box coordinate difference, checkpoint vs ONNX (input px).")
    score: float = Field(description="Largest class score difference, checkpoint vs ONNX.")


def onnx_tensors(model: onnx.ModelProto) -> dict[str, FloatArray]:
    return {item.name: numpy_helper.to_array(item) for item in model.graph.initializer}


def _set(parameter: Any, tensors: dict[str, FloatArray], name: str, *, source: Path) -> None:
    """Copy the ONNX tensor `name` into `parameter`, or say which tensor is missing or of another shape."""
    torch = importlib.import_module("torch")
    if name not in tensors:
        raise RecoverError(f"{source}: expected the tensor {name}, got no such tensor")
    value = tensors[name]
    if tuple(parameter.shape) != value.shape:
        raise RecoverError(f"{source}: tensor {name} has shape {value.shape}, the model YAML's "
                           f"{tuple(parameter.shape)} (another model size or class count?)")
    with torch.no_grad():
        parameter.copy_(torch.from_numpy(np.array(value, dtype=np.float32)))


def load_tensors(network: Any, tensors: dict[str, FloatArray], *, source: Path) -> tuple[list[tuple[str, Any]], int]:
    """Copy the ONNX convolutions into `network`; returns the (name, Conv block) pairs whose norm was folded and
    the number of convolutions filled. Norms start as the identity plus the folded bias (exact in eval mode)."""
    torch = importlib.import_module("torch")
    nn = torch.nn
    used: set[str] = set()
    folded: list[tuple[str, Any]] = []
    filled = 0
    for name, module in network.named_modules():
        conv = getattr(module, "conv", None)
        norm = getattr(module, "bn", None)
        if isinstance(conv, nn.Conv2d) and isinstance(norm, nn.BatchNorm2d):
            weight, bias = f"{name}.conv.weight", f"{name}.conv.bias"
            _set(conv.weight, tensors, weight, source=source)
            _set(norm.bias, tensors, bias, source=source)
            with torch.no_grad():
                norm.running_mean.zero_()
                norm.running_var.fill_(1.0)
                norm.weight.fill_(float(np.sqrt(1.0 + norm.eps)))
            used |= {weight, bias}
            folded.append((name, module))
            filled += 1
    done = {id(block.conv) for _, block in folded}
    for name, module in network.named_modules():
        if not isinstance(module, nn.Conv2d) or id(module) in done:
            continue
        _set(module.weight, tensors, f"{name}.weight", source=source)
        used.add(f"{name}.weight")
        if module.bias is not None:
            _set(module.bias, tensors, f"{name}.bias", source=source)
            used.add(f"{name}.bias")
        filled += 1
    unused = sorted(key for key, value in tensors.items() if value.ndim == 4 and key not in used)
    if unused:
        raise RecoverError(f"{source}: convolution weights the model YAML has no place for: {', '.join(unused[:5])}")
    return folded, filled


def windows(image: npt.NDArray[np.uint8], *, imgsz: int, levels: Sequence[int]) -> list[npt.NDArray[np.uint8]]:
    """The image as the detector sees it: whole when it fits the network input (a training window), else cut
    into its pyramid windows (`crops.scaled_level`, the levels the ONNX file declares)."""
    height, width = image.shape[:2]
    if max(height, width) <= imgsz:
        return [image]
    cuts: list[npt.NDArray[np.uint8]] = []
    for level in levels:
        _, scaled, boxes = scaled_level(image, level=level, window=imgsz, overlap=OVERLAP)
        cuts += [scaled[y0:y1, x0:x1] for x0, y0, x1, y1 in boxes]
    return cuts


def _batches(images: Sequence[Path], *, imgsz: int, levels: Sequence[int], batch: int,
             ) -> list[npt.NDArray[np.float32]]:
    tensors = []
    for path in images:
        read = cv2.imread(str(path), cv2.IMREAD_COLOR)
        if read is None:
            raise RecoverError(f"{path}: not a readable calibration image")
        image = np.asarray(read, dtype=np.uint8)
        tensors += [letterbox_tensor(cut, imgsz) for cut in windows(image, imgsz=imgsz, levels=levels)]
    return [np.concatenate(tensors[i:i + batch]) for i in range(0, len(tensors), batch)]


def measure_norms(network: Any, folded: list[tuple[str, Any]], batches: list[npt.NDArray[np.float32]]) -> None:
    """Set each folded norm's statistics from its convolution's outputs over the batches (see the module doc)."""
    torch = importlib.import_module("torch")
    sums: dict[str, list[Any]] = {name: [0.0, 0.0, 0] for name, _ in folded}

    def hook(name: str) -> Any:
        def record(_module: Any, _inputs: Any, output: Any) -> None:
            values = output.detach().double().transpose(0, 1).reshape(output.shape[1], -1)
            entry = sums[name]
            entry[0] = entry[0] + values.sum(dim=1)
            entry[1] = entry[1] + (values * values).sum(dim=1)
            entry[2] += values.shape[1]
        return record

    handles = [block.conv.register_forward_hook(hook(name)) for name, block in folded]
    try:
        network.eval()
        with torch.no_grad():
            for tensor in batches:
                network(torch.from_numpy(tensor))
    finally:
        for handle in handles:
            handle.remove()
    with torch.no_grad():
        for name, block in folded:
            total, squares, count = sums[name]
            mean = total / count
            var = (squares / count - mean * mean).clamp(min=0.0)
            norm = block.bn
            norm.bias.add_(mean.float())
            norm.running_mean.copy_(mean.float())
            norm.running_var.copy_(var.float())
            norm.weight.copy_(torch.sqrt(var + norm.eps).float())


def compare(network: Any, onnx_path: Path, batches: list[npt.NDArray[np.float32]]) -> tuple[float, float]:
    """Largest box (px) and score difference between the network (eval, fp32) and ONNX Runtime."""
    torch = importlib.import_module("torch")
    ort = importlib.import_module("onnxruntime")
    session = ort.InferenceSession(str(onnx_path), providers=["CPUExecutionProvider"])
    name = session.get_inputs()[0].name
    box_px = score = 0.0
    network.eval()
    with torch.no_grad():
        for tensor in batches:
            output = network(torch.from_numpy(tensor))
            mine = (output[0] if isinstance(output, (list, tuple)) else output).numpy()
            theirs = np.concatenate([session.run(None, {name: tensor[i:i + 1]})[0] for i in range(len(tensor))])
            if mine.shape != theirs.shape:
                raise RecoverError(f"{onnx_path}: output shape {theirs.shape}, the rebuilt network's {mine.shape}")
            box_px = max(box_px, float(np.abs(mine[:, :4] - theirs[:, :4]).max()))
            score = max(score, float(np.abs(mine[:, 4:] - theirs[:, 4:]).max()))
    return box_px, score


def recover_checkpoint(config: RecoverConfig) -> RecoverResult:
    if not config.onnx_path.is_file():
        raise RecoverError(f"--onnx: expected an ONNX detector file, got {config.onnx_path} (no such file)")
    info = model_info(config.onnx_path)
    batches = _batches(config.images, imgsz=info.imgsz, levels=info.levels or (info.imgsz,), batch=config.batch)
    ultralytics = load_ultralytics(threads=config.threads)
    torch = importlib.import_module("torch")
    tasks = importlib.import_module("ultralytics.nn.tasks")
    graph = onnx.load(str(config.onnx_path))
    network = tasks.DetectionModel(cfg=config.model, nc=len(info.names), verbose=False)
    network.names = dict(enumerate(info.names))
    folded, filled = load_tensors(network, onnx_tensors(graph), source=config.onnx_path)
    measure_norms(network, folded, batches)
    for parameter in network.parameters():  # saved in fp32: halved, the norms' new statistics move boxes ~1 px
        parameter.requires_grad = False
    checkpoint = {
        "date": datetime.datetime.now(datetime.UTC).isoformat(), "version": ultralytics.__version__,
        "license": "AGPL-3.0 License (https://ultralytics.com/license)", "docs": "https://docs.ultralytics.com",
        "epoch": -1, "best_fitness": None, "model": network, "ema": None, "updates": None, "optimizer": None,
        "train_args": {"task": "detect", "imgsz": info.imgsz, "data": None, "model": config.model},
        "train_metrics": None, "train_results": None,
        "floorman_recovered_from": str(config.onnx_path), LEVELS_KEY: ",".join(str(level) for level in info.levels),
    }
    box_px, score = compare(network, config.onnx_path, batches)
    if box_px > config.max_box_px or score > config.max_score:
        raise RecoverError(f"{config.onnx_path}: the rebuilt network differs from the ONNX file by up to "
                           f"{box_px:.3f} px in a box and {score:.4f} in a score (at most {config.max_box_px} px "
                           f"and {config.max_score} accepted): not written to {config.out}")
    config.out.parent.mkdir(parents=True, exist_ok=True)
    partial = config.out.with_name(config.out.name + ".partial")
    torch.save(checkpoint, str(partial))
    partial.replace(config.out)
    count = sum(len(tensor) for tensor in batches)
    logger.info("recovered %s from %s: %d convolutions, %d norms, %d windows", config.out, config.onnx_path,
                filled, len(folded), count)
    return RecoverResult(out=config.out, convolutions=filled, norms=len(folded), images=len(config.images),
                         windows=count, box_px=box_px, score=score)
