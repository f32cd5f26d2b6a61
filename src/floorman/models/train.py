"""The detector's training recipe: render (or take) a synthetic dataset, window it, train a YOLO from scratch.

Offline by construction (`yolo_env.load_ultralytics`): the model is built from a YAML (no .pt download), no
hub, no fonts fetched. Runs on a CUDA GPU unchanged when one is present (`device="auto"`). Checkpoints live
under `runs_dir/name/weights`; a second call with the same name resumes from `last.pt`.
"""

from __future__ import annotations

import importlib
import logging
import subprocess
import sys
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from floorman.core.errors import FloormanError
from floorman.models.crops import Balance, CropSpec, crop_dataset, write_balanced
from floorman.models.yolo_env import cuda_available, load_ultralytics

logger = logging.getLogger(__name__)


class TrainingError(FloormanError):
    """Training could not start or finish."""


class RenderSpec(BaseModel):
    """How to render the synthetic dataset when none is given (`floorman datasets render`)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    count: int = Field(default=800, ge=1, description="Number of rendered frames.")
    seed: int = Field(default=1, description="Scene seed; the test set must use another one.")
    size: tuple[int, int] = Field(default=(1280, 720), description="Frame width and height in pixels.")
    workers: int = Field(default=2, ge=1, description="Render processes.")


class TrainConfig(BaseModel):
    """Everything `train_detector` needs; defaults are the shipped recipe."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    data: Path | None = Field(default=None, description="Existing YOLO dataset folder (with data.yaml); "
                              "None renders one under runs_dir/name/data.")
    render: RenderSpec = Field(default_factory=RenderSpec, description="Rendering settings when data is None.")
    levels: tuple[int, ...] = Field(default=(320, 960), min_length=1, description="Pyramid levels: long "
                                    "side in px the frame is resized to before cutting imgsz windows.")
    overlap: float = Field(default=0.2, ge=0.0, lt=0.9, description="Overlap between neighbouring windows.")
    model: str = Field(default="yolo11n.yaml", description="Ultralytics model YAML (trained from scratch).")
    weights: Path | None = Field(default=None, description="Start from this checkpoint (.pt, e.g. an earlier "
                                 "run's last.pt) instead of the YAML: fine-tuning, a new optimizer.")
    freeze: int | None = Field(default=None, ge=1, description="Keep the first N layers of `weights` as they "
                               "are (10: yolo11n's backbone) and train the rest: a cheaper fine-tune.")
    optimizer: str = Field(default="auto", description="Ultralytics optimizer: auto, AdamW, SGD, ...")
    lr0: float | None = Field(default=None, gt=0, description="Initial learning rate (None: the optimizer's).")
    lrf: float | None = Field(default=None, gt=0, le=1, description="Final learning rate as a fraction of lr0.")
    threads: int | None = Field(default=None, ge=1, description="CPU threads for torch (None: every core).")
    imgsz: int = Field(default=320, ge=32, description="Network input size in pixels (multiple of 32).")
    epochs: int = Field(default=30, ge=1, description="Epochs (ignored when time_hours is set).")
    time_hours: float | None = Field(default=None, gt=0, description="Train for this long instead of epochs.")
    batch: int = Field(default=16, ge=1, description="Batch size.")
    device: str = Field(default="auto", description="'auto' (CUDA when present, else CPU), 'cpu' or '0'.")
    loader_workers: int = Field(default=2, ge=0, description="Data-loader worker processes.")
    prep_workers: int = Field(default=2, ge=1, description="Processes cutting the frames into windows.")
    runs_dir: Path = Field(default=Path("runs/detector"), description="Where runs and checkpoints go.")
    name: str = Field(default="train", min_length=1, description="Run name (resume key).")
    seed: int = Field(default=0, description="Training seed.")
    patience: int = Field(default=100, ge=0, description="Early-stopping patience in epochs.")
    mosaic: float = Field(default=0.0, ge=0.0, le=1.0, description="Mosaic probability (0: windows are "
                          "already at the inference scale; a mosaic would halve it).")
    warmup_epochs: float = Field(default=1.0, ge=0, description="Learning-rate warm-up epochs.")
    close_mosaic: int = Field(default=10, ge=0, description="Turn mosaic off for the last N epochs.")
    resume: bool = Field(default=True, description="Resume from runs_dir/name/weights/last.pt when it exists.")
    cache: bool = Field(default=True, description="Cache decoded training images in RAM.")
    balance: float | None = Field(default=None, gt=0, le=1, description="Repeat-factor sampling threshold "
                                  "(rare classes' windows listed more often; None: each window once).")
    coarse_repeat: int = Field(default=1, ge=1, description="With balance: list each window of the coarsest "
                               "level (whole frames) at least this many times.")
    hsv_v: float = Field(default=0.4, ge=0.0, lt=1.0, description="Brightness augmentation: each window's value "
                         "channel scaled by a gain drawn in 1 +- hsv_v, clipped at 255 (Ultralytics' default 0.4 "
                         "reaches x1.4; an overexposed photo, x1.6 in benchmarks/photo_effects.py, needs 0.6).")


def resolve_device(device: str) -> str:
    if device == "auto":
        return "0" if cuda_available() else "cpu"
    return device


def render_dataset(spec: RenderSpec, out: Path) -> Path:
    """Render a dataset with `floorman datasets render` in a child process; returns the dataset folder."""
    if (out / "data.yaml").is_file():
        logger.info("using the dataset already rendered in %s", out)
        return out
    command = [sys.executable, "-m", "floorman.cli", "datasets", "render", "--count", str(spec.count),
               "--seed", str(spec.seed), "--out", str(out), "--size", f"{spec.size[0]}x{spec.size[1]}",
               "--workers", str(spec.workers)]
    logger.info("rendering: %s", " ".join(command))
    completed = subprocess.run(command, check=False)
    if completed.returncode != 0:
        raise TrainingError(f"rendering failed with exit status {completed.returncode}: {' '.join(command)}")
    return out


def prepare_data(config: TrainConfig) -> Path:
    """The data.yaml Ultralytics trains on: the (rendered) dataset cut into the detector's pyramid windows."""
    run = config.runs_dir / config.name
    source = config.data if config.data is not None else render_dataset(config.render, run / "data")
    windows = run / f"windows_{config.imgsz}_{'_'.join(str(level) for level in config.levels)}"
    data_yaml = windows / "data.yaml"
    if not data_yaml.is_file():
        spec = CropSpec(levels=config.levels, window=config.imgsz, overlap=config.overlap)
        data_yaml = crop_dataset(source, windows, spec=spec, workers=config.prep_workers)
    if config.balance is None:
        return data_yaml
    balance = Balance(threshold=config.balance, coarse_repeat=config.coarse_repeat)
    return write_balanced(data_yaml, balance=balance, coarsest_level=min(config.levels))


def train_arguments(config: TrainConfig, *, data_yaml: Path) -> dict[str, Any]:
    """Ultralytics' train() keywords. On an accelerator mixed precision is bf16: Ultralytics' fp16 self-check
    downloads yolo26n.pt (offline it waits on the network), and bf16 needs neither that check nor a grad scaler."""
    device = resolve_device(config.device)
    arguments: dict[str, Any] = {
        "data": str(data_yaml), "imgsz": config.imgsz, "epochs": config.epochs, "batch": config.batch,
        "device": device, "workers": config.loader_workers, "project": str(config.runs_dir.resolve()),
        "name": config.name, "exist_ok": True, "seed": config.seed, "deterministic": False,
        "patience": config.patience, "close_mosaic": config.close_mosaic,
        "warmup_epochs": config.warmup_epochs, "mosaic": config.mosaic, "pretrained": False,
        "amp": "bf16" if device != "cpu" else False, "plots": False,
        "cache": "ram" if config.cache else False, "flipud": 0.5, "verbose": False, "optimizer": config.optimizer,
        "hsv_v": config.hsv_v,
    }
    if config.lr0 is not None:
        arguments["lr0"] = config.lr0
    if config.lrf is not None:
        arguments["lrf"] = config.lrf
    if config.time_hours is not None:
        arguments["time"] = config.time_hours
    if config.freeze is not None:
        arguments["freeze"] = config.freeze
    return arguments


def best_weights(config: TrainConfig) -> Path:
    return config.runs_dir / config.name / "weights" / "best.pt"


def resumable(checkpoint: Path) -> bool:
    """True while a run is unfinished: Ultralytics strips the optimizer state from last.pt when it ends."""
    torch = importlib.import_module("torch")
    state = torch.load(str(checkpoint), map_location="cpu", weights_only=False)
    return isinstance(state, dict) and state.get("optimizer") is not None


def train_detector(config: TrainConfig) -> Path:
    """Train (or resume) and return the best checkpoint."""
    if config.freeze is not None and config.weights is None:
        raise TrainingError(f"--freeze {config.freeze}: expected --weights to freeze layers of, got none")
    ultralytics = load_ultralytics(threads=config.threads)
    last = config.runs_dir / config.name / "weights" / "last.pt"
    if config.resume and last.is_file() and not resumable(last):
        logger.info("run %s already finished; keeping its checkpoints", last.parent.parent)
    elif config.resume and last.is_file():
        logger.info("resuming from %s", last)
        ultralytics.YOLO(str(last)).train(resume=True)
    else:
        data_yaml = prepare_data(config)
        arguments = train_arguments(config, data_yaml=data_yaml)
        start = config.model
        if config.weights is not None:
            if not config.weights.is_file():
                raise TrainingError(f"--weights: expected a checkpoint file, got {config.weights} (no such file)")
            start = str(config.weights)
            arguments["pretrained"] = True
        logger.info("training %s on %s: %s", start, data_yaml, arguments)
        ultralytics.YOLO(start).train(**arguments)
    best = best_weights(config)
    if not best.is_file():
        raise TrainingError(f"expected the best checkpoint at {best}, got no such file")
    return best
