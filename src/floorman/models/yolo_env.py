"""Make Ultralytics safe to import here: offline, no settings sync, fonts on disk, all CPU cores.

Nothing happens at import time of this module. `load_ultralytics()` sets the environment (only where it is
unset), copies matplotlib's DejaVuSans as the Arial fonts Ultralytics would otherwise download, imports
Ultralytics, switches off every sync/logging integration and sets the thread counts. Any network attempt made
after it fails within a few seconds (a default socket timeout) instead of hanging.
"""

from __future__ import annotations

import importlib
import logging
import os
import shutil
import socket
from pathlib import Path
from types import ModuleType

from floorman.core.errors import FloormanError

logger = logging.getLogger(__name__)

SOCKET_TIMEOUT_S = 5.0
_FONT_NAMES = ("Arial.ttf", "Arial.Unicode.ttf")
_INTEGRATIONS_OFF = {
    "sync": False, "hub": False, "clearml": False, "comet": False, "dvc": False, "mlflow": False,
    "raytune": False, "wandb": False, "tensorboard": False, "vscode_msg": False, "openvino_msg": False,
}


class TrainingUnavailableError(FloormanError):
    """The `train` extra (torch + Ultralytics) is not installed."""


def default_config_dir() -> Path:
    """`$YOLO_CONFIG_DIR`, else `.yolo` in the working directory (the Makefile exports the same)."""
    configured = os.environ.get("YOLO_CONFIG_DIR")
    return Path(configured) if configured else Path.cwd() / ".yolo"


def install_fonts(config_dir: Path) -> None:
    """Copy matplotlib's DejaVuSans.ttf into `config_dir` as Arial.ttf and Arial.Unicode.ttf."""
    config_dir.mkdir(parents=True, exist_ok=True)
    missing = [name for name in _FONT_NAMES if not (config_dir / name).is_file()]
    if not missing:
        return
    try:
        matplotlib = importlib.import_module("matplotlib")
    except ImportError:
        raise TrainingUnavailableError("matplotlib (an Ultralytics dependency) is not installed") from None
    source = Path(str(matplotlib.get_data_path())) / "fonts" / "ttf" / "DejaVuSans.ttf"
    if not source.is_file():
        raise TrainingUnavailableError(f"expected matplotlib's font at {source}, got no such file")
    for name in missing:
        shutil.copyfile(source, config_dir / name)
        logger.debug("copied %s to %s", source, config_dir / name)


def thread_count() -> int:
    return max(1, os.cpu_count() or 1)


def load_ultralytics(config_dir: Path | None = None, *, threads: int | None = None) -> ModuleType:
    """Import Ultralytics offline and quiet; returns the `ultralytics` module.

    `threads` sets torch's CPU threads (default: every core; Ultralytics' own default leaves one idle)."""
    os.environ.setdefault("YOLO_OFFLINE", "1")
    directory = config_dir if config_dir is not None else default_config_dir()
    os.environ.setdefault("YOLO_CONFIG_DIR", str(directory))
    directory = Path(os.environ["YOLO_CONFIG_DIR"])
    install_fonts(directory)
    if socket.getdefaulttimeout() is None:
        socket.setdefaulttimeout(SOCKET_TIMEOUT_S)
    try:
        ultralytics = importlib.import_module("ultralytics")
        torch_utils = importlib.import_module("ultralytics.utils.torch_utils")
        torch = importlib.import_module("torch")
    except ImportError as exc:
        raise TrainingUnavailableError(
            f"training needs the 'train' extra (torch, ultralytics): pip install -e '.[train]' ({exc})"
        ) from None
    known = set(ultralytics.settings.keys())
    ultralytics.settings.update({key: value for key, value in _INTEGRATIONS_OFF.items() if key in known})
    if threads is not None and threads < 1:
        raise ValueError(f"expected threads >= 1, got {threads}")
    threads = threads or thread_count()
    setattr(torch_utils, "NUM_THREADS", threads)  # noqa: B010 (untyped module attribute)
    setattr(importlib.import_module("ultralytics.utils"), "NUM_THREADS", threads)  # noqa: B010
    torch.set_num_threads(threads)
    logger.debug("ultralytics %s ready: offline, config %s, %d threads", ultralytics.__version__, directory, threads)
    return ultralytics


def cuda_available() -> bool:
    """True when torch sees a CUDA device (the recipe then trains there unchanged)."""
    try:
        torch = importlib.import_module("torch")
    except ImportError:
        return False
    return bool(torch.cuda.is_available())
